/* util: error slot, arena, string builder, files, SHA-256, clock. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- errors --------------------------------------------------------------- */

void kvx_error_vset(KvxError *e, int code, const SrcPos *pos, const char *fmt, va_list ap)
{
    if (!e || e->code)
        return; /* the first, innermost message is the most precise */
    e->code = code ? code : KVX_EINTERNAL;
    e->file[0] = 0;
    e->line = e->col = 0;
    if (pos && pos->file) {
        snprintf(e->file, sizeof e->file, "%s", pos->file);
        e->line = pos->line;
        e->col = pos->col;
    }
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

void kvx_error_set(KvxError *e, int code, const SrcPos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(e, code, pos, fmt, ap);
    va_end(ap);
}

void kvx_error_attach_log(KvxError *e, const char *log, size_t len)
{
    if (!e || !log)
        return;
    free(e->log);
    e->log = xmalloc(len + 1);
    memcpy(e->log, log, len);
    e->log[len] = 0;
}

void kvx_error_clear(KvxError *e)
{
    if (!e)
        return;
    free(e->log);
    memset(e, 0, sizeof *e);
}

void kvx_error_print(const KvxError *e, FILE *f)
{
    if (!e || !e->code)
        return;
    if (e->file[0]) {
        if (e->line > 0)
            fprintf(f, "%s:%d:%d: %s\n", e->file, e->line, e->col, e->msg);
        else
            fprintf(f, "%s: %s\n", e->file, e->msg);
    } else {
        fprintf(f, "kvx: %s\n", e->msg);
    }
    if (e->log && e->log[0])
        fprintf(f, "%s%s", e->log, e->log[strlen(e->log) - 1] == '\n' ? "" : "\n");
}

_Noreturn void kvx_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: kvx internal error: assertion '%s' failed\n", file, line, expr);
    abort();
}

/* ---- memory --------------------------------------------------------------- */

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "kvx: out of memory (asked for %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

/* ---- arena ---------------------------------------------------------------- */

typedef struct Chunk {
    struct Chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
    Chunk *head;
};

Arena *arena_new(void)
{
    return xcalloc(1, sizeof(Arena));
}

void arena_free(Arena *a)
{
    if (!a)
        return;
    for (Chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    Chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        c = xmalloc(sizeof(Chunk) + cap);
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, aq);
    va_end(aq);
    return p;
}

/* ---- string builder ------------------------------------------------------ */

void sb_init(StrBuf *b) { memset(b, 0, sizeof *b); }

void sb_free(StrBuf *b)
{
    if (!b)
        return;
    free(b->p);
    memset(b, 0, sizeof *b);
}

void sb_reset(StrBuf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = 0;
}

static void grow(StrBuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

void sb_put(StrBuf *b, const char *s, size_t n)
{
    grow(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_putc(StrBuf *b, char c) { sb_put(b, &c, 1); }

void sb_vprintf(StrBuf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    grow(b, (size_t)n);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
    va_end(aq);
    b->len += (size_t)n;
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *sb_str(const StrBuf *b) { return b->p ? b->p : ""; }

char *sb_take(StrBuf *b)
{
    char *p = b->p ? b->p : xstrdup("");
    memset(b, 0, sizeof *b);
    return p;
}

/* A control character (below 0x20, or DEL) starts a new line, moves the
 * cursor or hides what follows on a terminal: text that reaches a line of
 * output must carry none.  lines_ok lets newline and tab through (prose). */
const char *text_control(const char *s, int lines_ok)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 || c == 0x7f) && !(lines_ok && (c == '\n' || c == '\t')))
            return s;
    }
    return NULL;
}

void sb_put_escaped(StrBuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            sb_puts(b, "\\n");
        else if (c == '\t')
            sb_puts(b, "\\t");
        else if (c == '\r')
            sb_puts(b, "\\r");
        else if (c < 0x20 || c == 0x7f)
            sb_printf(b, "\\x%02x", c);
        else
            sb_putc(b, (char)c);
    }
}

/* ---- files ---------------------------------------------------------------- */

char *file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    StrBuf b;
    sb_init(&b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_put(&b, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sb_free(&b);
        errno = EIO;
        return NULL;
    }
    if (len)
        *len = b.len;
    return sb_take(&b);
}

char *file_read_max(const char *path, size_t max, size_t *len)
{
    /* Checked on the open descriptor, not the name, so that a file swapped
     * after the check is still the one judged; opened without blocking, as
     * opening a FIFO with no writer waits forever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        errno = saved;
        return NULL;
    }
    struct stat st;
    int bad = fstat(fileno(f), &st) ? errno
              : S_ISDIR(st.st_mode) ? EISDIR
              : !S_ISREG(st.st_mode) ? EINVAL
              : (uintmax_t)st.st_size > max ? EFBIG : 0;
    StrBuf b;
    sb_init(&b);
    char buf[65536];
    size_t n;
    /* Read at most max + 1 bytes: a file that grows while read is still capped. */
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        sb_put(&b, buf, n);
        bad = b.len > max ? EFBIG : 0;
    }
    if (!bad && ferror(f))
        bad = EIO;
    fclose(f);
    if (bad) {
        sb_free(&b);
        errno = bad;
        return NULL;
    }
    if (len)
        *len = b.len;
    if (!b.p)
        sb_puts(&b, "");
    return sb_take(&b);
}

const char *file_read_why(int errnum, size_t max, char *buf, size_t n)
{
    switch (errnum) {
    case EISDIR: return "it is a directory";
    case EINVAL: return "it is not a regular file";
    case EFBIG: snprintf(buf, n, "it is larger than %zu bytes", max); return buf;
    default: return strerror(errnum);
    }
}

int file_write_atomic(const char *path, const void *data, size_t len)
{
    /* Only a regular file is replaced: renaming over a symbolic link or a
     * device would destroy it (as root, /dev/null). */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    return 0;
}

char *path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    size_t n = (size_t)(slash - path);
    char *d = xmalloc(n + 1);
    memcpy(d, path, n);
    d[n] = 0;
    return d;
}

char *path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0)
        return xstrdup(rel);
    size_t a = strlen(dir), b = strlen(rel);
    char *p = xmalloc(a + b + 2);
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, rel, b + 1);
    return p;
}

int path_exe_at(const char *dir, const char *name, char *out, size_t n)
{
    struct stat st;
    if (!dir || !*dir || (size_t)snprintf(out, n, "%s/%s", dir, name) >= n)
        return 0;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
}

int path_search(const char *name, char *out, size_t n)
{
    for (const char *p = getenv("PATH"); p && *p;) {
        size_t len = strcspn(p, ":");
        char dir[4096];
        if (len < sizeof dir) {
            memcpy(dir, p, len), dir[len] = '\0';
            if (path_exe_at(dir, name, out, n))
                return 1;
        }
        p += len + (p[len] == ':');
    }
    return 0;
}

/* ---- hash tables ----------------------------------------------------------- */

uint64_t hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void hidx_grow(HashIdx *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    HashIdx g = {xmalloc(sizeof(uint64_t) * cap), xmalloc(sizeof(int) * cap), cap, t->n};
    for (size_t i = 0; i < g.cap; i++)
        g.idx[i] = -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->idx[i] < 0)
            continue;
        size_t j = t->hash[i] & (g.cap - 1);
        while (g.idx[j] >= 0)
            j = (j + 1) & (g.cap - 1);
        g.hash[j] = t->hash[i], g.idx[j] = t->idx[i];
    }
    hidx_free(t);
    *t = g;
}

int hidx_add(HashIdx *t, uint64_t h, int idx, int (*same)(int stored, const void *ctx),
             const void *ctx)
{
    if (2 * (t->n + 1) > t->cap)   /* at most half full: short probes */
        hidx_grow(t);
    size_t j = h & (t->cap - 1);
    for (; t->idx[j] >= 0; j = (j + 1) & (t->cap - 1))
        if (t->hash[j] == h && same(t->idx[j], ctx))
            return t->idx[j];
    t->hash[j] = h, t->idx[j] = idx, t->n++;
    return -1;
}

void hidx_free(HashIdx *t)
{
    free(t->hash);
    free(t->idx);
    memset(t, 0, sizeof *t);
}

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(Sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void sha256_init(Sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->nbytes = 0;
    s->nbuf = 0;
}

void sha256_update(Sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->nbytes += n;
    while (n > 0) {
        size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf == 64) {
            sha256_block(s, s->buf);
            s->nbuf = 0;
        }
    }
}

void sha256_final(Sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->nbytes * 8;
    uint8_t pad = 0x80;
    sha256_update(s, &pad, 1);
    pad = 0;
    while (s->nbuf != 56)
        sha256_update(s, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

static void to_hex(const uint8_t d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = 0;
}

void sha256_hex(const void *data, size_t n, char hex[65])
{
    Sha256 s;
    uint8_t d[32];
    sha256_init(&s);
    sha256_update(&s, data, n);
    sha256_final(&s, d);
    to_hex(d, hex);
}

void sha256_hex_parts(const char *const *parts, char hex[65])
{
    Sha256 s;
    uint8_t d[32];
    sha256_init(&s);
    for (int i = 0; parts[i]; i++)
        sha256_update(&s, parts[i], strlen(parts[i]) + 1); /* NUL separates parts */
    sha256_final(&s, d);
    to_hex(d, hex);
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
