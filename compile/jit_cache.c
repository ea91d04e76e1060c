/* jit_cache: the compile cache of jit.c (its head states the invariants: an
 * entry complete or absent, published by rename; nothing trusted before its
 * checksum matched; best-effort, a scratch directory when it cannot be
 * written), and the files added to an entry later (jit_cache_put/get). */
#include "jit_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/version.h"
#include "kvx_product.h"

/* ---- cache ------------------------------------------------------------------ */

static void hash_str(Sha256 *h, const char *s)
{
    sha256_update(h, s, strlen(s) + 1);   /* NUL-terminated: no ambiguity */
}

/* Hash one part with its length, so that parts cannot run into each other;
 * an absent part hashes apart from an empty one. */
static void hash_part(Sha256 *h, const void *data, size_t len, int present)
{
    uint64_t n = present ? (uint64_t)len + 1 : 0;
    sha256_update(h, &n, sizeof n);
    if (present && len)
        sha256_update(h, data, len);
}

static void hash_hex(Sha256 *h, char hex[65])
{
    uint8_t d[32];
    sha256_final(h, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* The cache key: what changes a compile's product, never kvx's commit.  The
 * options are the full list passed to NVRTC (kvx's own among them), and
 * KVX_JIT_PRODUCT hashes the files of compile/ that make an entry
 * (cmake/product.cmake), so a kvx built at another commit with the same
 * compile stage finds every entry.  "kvx-jit-3": entries that may be a
 * member of a grouped program (meta.txt's symbol); those of "kvx-jit-1" and
 * "kvx-jit-2" (keyed by the commit) are never looked up. */
void jit_cache_key(const JitJob *job, const char *const *opts, int nopts, char key[65])
{
    int ma = 0, mi = 0;
    jit_nvrtc_version(&ma, &mi);
    char buf[64];
    Sha256 h;
    sha256_init(&h);
    hash_str(&h, "kvx-jit-3");
    hash_str(&h, KVX_JIT_PRODUCT);
    snprintf(buf, sizeof buf, "nvrtc %d.%d", ma, mi);
    hash_str(&h, buf);
    hash_str(&h, job->arch);
    snprintf(buf, sizeof buf, "cccl %d options %d", job->use_cccl ? 1 : 0, nopts);
    hash_str(&h, buf);
    for (int i = 0; i < nopts; i++)
        hash_str(&h, opts[i]);
    hash_str(&h, job->source);
    hash_hex(&h, key);
}

/* ROOT/KE/KEY, malloc'd. */
char *jit_cache_entry_path(const char *root, const char *key)
{
    char sub[3] = { key[0], key[1], 0 };
    char *shard = path_join(root, sub);
    char *dir = path_join(shard, key);
    free(shard);
    return dir;
}

/* Remove dir and what it holds, depth levels of directories down (an entry
 * holds files only: 0; a scratch directory holds KE/KEY/files: 2). */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = path_join(dir, e->d_name);
        if (depth > 0)
            remove_tree(p, depth - 1);  /* a file: opendir and rmdir fail, unlink takes it */
        unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Remove a flat directory (cache entries hold files only). */
static void remove_dir(const char *dir)
{
    remove_tree(dir, 0);
}

static int write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char *path = path_join(dir, name);
    FILE *f = fopen(path, "wb");
    free(path);
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static char *read_entry_file(const char *dir, const char *name, size_t *len)
{
    char *path = path_join(dir, name);
    char *data = file_read(path, len);
    free(path);
    return data;
}

/* meta.txt's fields that come back on a hit; the rest (arch, options, versions)
 * are there for a reader of the cache. */
static const char *meta_get(const char *meta, const char *key, char *val, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = meta; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > klen && !strncmp(p, key, klen) && p[klen] == '=') {
            size_t v = n - klen - 1 < cap - 1 ? n - klen - 1 : cap - 1;
            memcpy(val, p + klen + 1, v);
            val[v] = 0;
            return val;
        }
        p += n + (nl ? 1 : 0);
    }
    return NULL;
}

static int meta_int(const char *meta, const char *key, int *out)
{
    char v[64];
    if (!meta_get(meta, key, v, sizeof v))
        return -1;
    *out = atoi(v);
    return 0;
}

/* meta.txt's figures into job, its ok and cubin fields into *ok and
 * *has_cubin.  0, or -1 when one is missing. */
static int meta_figures(JitJob *job, const char *meta, int *ok, int *has_cubin)
{
    char v[64];
    if (meta_int(meta, "ok", ok) || (*ok != 0 && *ok != 1) || !meta_get(meta, "compile_ms", v, sizeof v)
        || meta_int(meta, "cubin", has_cubin))
        return -1;
    job->compile_ms = strtod(v, NULL);
    static const struct { const char *key; size_t off; } FIGURES[] = {
        { "regs", offsetof(JitJob, regs) },
        { "spill_stores", offsetof(JitJob, spill_stores) },
        { "spill_loads", offsetof(JitJob, spill_loads) },
        { "smem", offsetof(JitJob, smem_static) },
        { "stack", offsetof(JitJob, stack) },
        { "cmem", offsetof(JitJob, cmem) },
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof FIGURES / sizeof *FIGURES; i++)
        bad |= meta_int(meta, FIGURES[i].key, (int *)((char *)job + FIGURES[i].off));
    /* a grouped program's member: what its entry points are called in the CUBIN */
    if (!meta_get(meta, "symbol", job->symbol, sizeof job->symbol) || meta_int(meta, "group", &job->group))
        return -1;
    return bad ? -1 : 0;
}

/* The files of an entry that meta.txt's checksum covers besides meta.txt, in
 * the order they are hashed.  kernel.ptx and kernel.cubin are absent after a
 * failed compile, kernel.cubin for a virtual arch. */
enum { ENTRY_SOURCE, ENTRY_LOG, ENTRY_PTX, ENTRY_CUBIN, NENTRY };
static const char *const ENTRY_FILES[NENTRY] = { "source.cu", "log.txt", "kernel.ptx", "kernel.cubin" };

static int is_entry_file(const char *name)
{
    for (int i = 0; i < NENTRY; i++)
        if (!strcmp(name, ENTRY_FILES[i]))
            return 1;
    return !strcmp(name, "meta.txt");
}

/* The checksum that ends meta.txt: its text before the sum line, then each of
 * ENTRY_FILES (data[i] NULL: absent), so that an edited figure, and a file
 * changed, cut short, added or removed, all make the entry a miss. */
static void entry_sum(const char *meta, size_t meta_len, const void *const data[NENTRY],
                      const size_t len[NENTRY], char hex[65])
{
    Sha256 h;
    sha256_init(&h);
    hash_str(&h, "kvx-entry-2");
    hash_part(&h, meta, meta_len, 1);
    for (int i = 0; i < NENTRY; i++)
        hash_part(&h, data[i], len[i], data[i] != NULL);
    hash_hex(&h, hex);
}

/* "sum=HEX\n", meta.txt's last line. */
#define SUM_LINE (sizeof "sum=\n" - 1 + 64)

/* The offset of meta.txt's sum line, or -1 when its last line is not one. */
static long sum_line(const char *meta, size_t len)
{
    if (len < SUM_LINE + 1)
        return -1;
    const char *s = meta + len - SUM_LINE;
    if (s[-1] != '\n' || strncmp(s, "sum=", 4) != 0 || s[SUM_LINE - 1] != '\n')
        return -1;
    return (long)(s - meta);
}

/* A file of jit_cache_put starts with "kvx-sum HEX\n", HEX covering the
 * entry's checksum, the file's name and the rest of the file: a file edited,
 * renamed, or left from an entry since replaced does not match. */
#define EXTRA_HEAD (sizeof "kvx-sum \n" - 1 + 64)

static void extra_sum(const char *entry, const char *name, const void *body, size_t len, char hex[65])
{
    Sha256 h;
    sha256_init(&h);
    hash_str(&h, "kvx-extra-1");
    hash_str(&h, entry);
    hash_str(&h, name);
    hash_part(&h, body, len, 1);
    hash_hex(&h, hex);
}

static int extra_ok(const char *entry, const char *name, const char *text, size_t len)
{
    char want[65];
    if (len < EXTRA_HEAD || strncmp(text, "kvx-sum ", 8) != 0 || text[EXTRA_HEAD - 1] != '\n')
        return 0;
    extra_sum(entry, name, text + EXTRA_HEAD, len - EXTRA_HEAD, want);
    return memcmp(text + 8, want, 64) == 0;
}

/* An entry as read back: meta.txt and ENTRY_FILES (NULL: absent). */
typedef struct EntryRead {
    char *meta;
    size_t meta_len;
    char *data[NENTRY];
    size_t len[NENTRY];
} EntryRead;

static void entry_read_free(EntryRead *f)
{
    free(f->meta);
    for (int i = 0; i < NENTRY; i++)
        free(f->data[i]);
}

/* Check the entry at dir, read into f, against its checksums: meta.txt's,
 * then each other file's own (names starting with '.' are files being
 * written).  0 with sum set, or -1 with what does not match in *bad
 * (malloc'd). */
static int entry_verify(const char *dir, const EntryRead *f, char sum[65], char **bad)
{
    long at = sum_line(f->meta, f->meta_len);
    if (at >= 0)
        entry_sum(f->meta, (size_t)at, (const void *const *)f->data, f->len, sum);
    if (at < 0 || memcmp(f->meta + at + 4, sum, 64) != 0) {
        *bad = mem_strdup("its files do not match the checksum in meta.txt");
        return -1;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    while (!*bad && d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || is_entry_file(e->d_name))
            continue;
        size_t len = 0;
        char *text = read_entry_file(dir, e->d_name, &len);
        if (!text || !extra_ok(sum, e->d_name, text, len)) {
            StrBuf b;
            sb_init(&b);
            sb_printf(&b, "%s does not match its checksum", e->d_name);
            *bad = sb_take(&b);
        }
        free(text);
    }
    if (d)
        closedir(d);
    return *bad ? -1 : 0;
}

/* Load a complete entry into job.  0 on a hit, -1 when absent or unusable (a
 * file that does not match its checksum says so on stderr: it is compiled
 * again).  meta.txt's figures are trusted only once its checksum matched. */
int jit_cache_load(JitJob *job, const char *dir)
{
    EntryRead f = { 0 };
    char *bad = NULL;
    int rc = -1, ok = -1, has_cubin = 0;
    if (!(f.meta = read_entry_file(dir, "meta.txt", &f.meta_len)))
        goto fail;
    for (int i = 0; i < NENTRY; i++)
        f.data[i] = read_entry_file(dir, ENTRY_FILES[i], &f.len[i]);
    if (entry_verify(dir, &f, job->sum, &bad) != 0) {
        fprintf(stderr, "kvx: cache entry %s is corrupt (%s): compiling %s again\n", dir, bad,
                jit_job_name(job));
        goto fail;
    }
    /* The checksum matched what this kvx wrote: these hold unless kvx is wrong. */
    if (meta_figures(job, f.meta, &ok, &has_cubin) != 0 || !f.data[ENTRY_LOG] ||
        (ok && !f.data[ENTRY_PTX]) || (ok && has_cubin && !f.data[ENTRY_CUBIN]))
        goto fail;
    job->log = f.data[ENTRY_LOG], f.data[ENTRY_LOG] = NULL;
    if (ok) {
        job->ptx = f.data[ENTRY_PTX], job->ptx_len = f.len[ENTRY_PTX], f.data[ENTRY_PTX] = NULL;
        if (has_cubin)
            job->cubin = f.data[ENTRY_CUBIN], job->cubin_len = f.len[ENTRY_CUBIN], f.data[ENTRY_CUBIN] = NULL;
    }
    job->ok = ok;
    job->cached = 1;
    job->dir = mem_strdup(dir);
    rc = 0;
fail:
    if (rc)
        job->sum[0] = 0;
    free(bad);
    entry_read_free(&f);
    return rc;
}

/* The files job's entry holds besides meta.txt, as ENTRY_FILES (NULL: not
 * written). */
static void job_files(const JitJob *job, const void *data[NENTRY], size_t len[NENTRY])
{
    data[ENTRY_SOURCE] = job->source, len[ENTRY_SOURCE] = strlen(job->source);
    data[ENTRY_LOG] = job->log ? job->log : "", len[ENTRY_LOG] = job->log ? strlen(job->log) : 0;
    data[ENTRY_PTX] = job->ptx, len[ENTRY_PTX] = job->ptx ? job->ptx_len : 0;
    data[ENTRY_CUBIN] = job->cubin_len ? job->cubin : NULL, len[ENTRY_CUBIN] = job->cubin_len;
}

/* meta.txt of a cache entry: the compile's facts, the toolchain, the options
 * (one line), the job's name, and last the checksum of all that and of the
 * entry's other files. */
static void entry_meta(const JitJob *job, const char *const *opts, int nopts, StrBuf *meta)
{
    int ma = 0, mi = 0;
    jit_nvrtc_version(&ma, &mi);
    sb_printf(meta, "ok=%d\ncompile_ms=%.3f\nregs=%d\nspill_stores=%d\nspill_loads=%d\n"
              "smem=%d\nstack=%d\ncmem=%d\ncubin=%d\nnvrtc=%d.%d\nkvx=%s\narch=%s\nuse_cccl=%d\n",
              job->ok, job->compile_ms, job->regs, job->spill_stores, job->spill_loads,
              job->smem_static, job->stack, job->cmem, job->cubin_len > 0, ma, mi,
              version_text(), job->arch, job->use_cccl ? 1 : 0);
    sb_puts(meta, "options=");
    for (int i = 0; i < nopts; i++) {
        for (const char *c = opts[i]; *c; c++)
            sb_putc(meta, *c == '\n' ? ' ' : *c);
        sb_putc(meta, i + 1 < nopts ? ' ' : '\n');
    }
    if (nopts == 0)
        sb_putc(meta, '\n');
    sb_printf(meta, "symbol=%s\ngroup=%d\n", job->symbol, job->group > 1 ? job->group : 1);
    sb_puts(meta, "name=");
    for (const char *c = jit_job_name(job); *c; c++)
        sb_putc(meta, *c == '\n' ? ' ' : *c);
    sb_putc(meta, '\n');
    const void *data[NENTRY];
    size_t len[NENTRY];
    job_files(job, data, len);
    char sum[65];
    entry_sum(meta->p, meta->len, data, len, sum);
    sb_printf(meta, "sum=%s\n", sum);
}

/* A grouped program's CUBIN, which its members' entries share: linked to
 * the copy an entry already holds (one file on disk for the program), else
 * written.  0 or -1. */
static int shared_cubin(const JitJob *job, const char *tmp)
{
    JitBlob *b = job->cubin_blob;
    char *path = path_join(tmp, ENTRY_FILES[ENTRY_CUBIN]);
    pthread_mutex_lock(&b->mu);
    int rc = b->path && link(b->path, path) == 0 ? 0 : write_file(tmp, ENTRY_FILES[ENTRY_CUBIN], b->data, b->len);
    pthread_mutex_unlock(&b->mu);
    free(path);
    return rc;
}

/* Once the entry dir is published: the file its members link to. */
static void shared_cubin_kept(const JitJob *job, const char *dir)
{
    JitBlob *b = job->cubin_blob;
    if (!b || !job->cubin_len)
        return;
    pthread_mutex_lock(&b->mu);
    if (!b->path)
        b->path = path_join(dir, ENTRY_FILES[ENTRY_CUBIN]);
    pthread_mutex_unlock(&b->mu);
}

static int entry_write(const JitJob *job, const char *tmp, const StrBuf *meta)
{
    const void *data[NENTRY];
    size_t len[NENTRY];
    job_files(job, data, len);
    for (int i = 0; i < NENTRY; i++) {
        if (!data[i])
            continue;
        if (i == ENTRY_CUBIN && job->cubin_blob ? shared_cubin(job, tmp) : write_file(tmp, ENTRY_FILES[i], data[i], len[i]))
            return -1;
    }
    return write_file(tmp, "meta.txt", meta->p, meta->len);
}

/* Publish the written entry tmp as dir by rename.  An entry already there
 * (another publisher won) stays, unless overwrite: then the old one is moved
 * aside to *old first (rename onto an empty directory replaces it), so that
 * the entry path is never missing a file.  0, or -1 with errno and *why. */
static int entry_publish(const char *parent, const char *tmp, const char *dir, int overwrite,
                         char **old, const char **why)
{
    if (rename(tmp, dir) == 0)
        return 0;
    if (errno != EEXIST && errno != ENOTEMPTY) {
        *why = "cannot publish the cache entry in";
        return -1;
    }
    if (overwrite) {
        *old = path_join(parent, ".old-XXXXXX");
        if (!mkdtemp(*old)) {
            *why = "cannot create a temporary directory in";
            return -1;
        }
        if (rename(dir, *old) != 0 && errno != ENOENT) {
            *why = "cannot replace the cache entry in";
            return -1;
        }
        remove_dir(*old);
        if (rename(tmp, dir) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
            *why = "cannot publish the cache entry in";
            return -1;
        }
    }
    remove_dir(tmp);    /* no-op once renamed; else another publisher won */
    return 0;
}

/* The checksum of the entry published at dir (another publisher's, when it
 * won: the files jit_cache_put adds must be tied to that one) into sum; ""
 * when it cannot be read. */
static void published_sum(const char *dir, char sum[65])
{
    size_t len = 0;
    char *meta = read_entry_file(dir, "meta.txt", &len);
    long at = meta ? sum_line(meta, len) : -1;
    sum[0] = 0;
    if (at >= 0) {
        memcpy(sum, meta + at + 4, 64);
        sum[64] = 0;
    }
    free(meta);
}

/* Another process published dir first, from a program grouped otherwise:
 * the CUBIN there names job's entry points by that entry's symbol, so job
 * takes its symbol, group and CUBIN (the PTX, log, figures and SASS are the
 * member's own, the same by either program).  0, or -1 when the entry cannot
 * be read. */
static int adopt_published(JitJob *job, const char *dir)
{
    size_t meta_len = 0, len = 0;
    char *meta = read_entry_file(dir, "meta.txt", &meta_len);
    char *cubin = job->cubin_len ? read_entry_file(dir, ENTRY_FILES[ENTRY_CUBIN], &len) : NULL;
    char symbol[sizeof job->symbol];
    int group = 1, rc = -1;
    if (meta && meta_get(meta, "symbol", symbol, sizeof symbol) && !meta_int(meta, "group", &group) &&
        (!job->cubin_len || cubin)) {
        if (job->cubin_blob)
            jit_blob_unref(job->cubin_blob);
        else
            free(job->cubin);
        job->cubin_blob = NULL;
        job->cubin = cubin, job->cubin_len = len, cubin = NULL;
        memcpy(job->symbol, symbol, sizeof symbol);
        job->group = group;
        rc = 0;
    }
    free(cubin);
    free(meta);
    return rc;
}

/* Write job's outputs as the entry `dir`.  overwrite: replace an existing entry
 * (one that does not match its checksum); otherwise an entry published first
 * by another process wins, being the same compile.  0 or -1 with err. */
int jit_cache_store(JitJob *job, const char *const *opts, int nopts, const char *dir,
                    int overwrite, KvxError *err)
{
    char *parent = path_dir(dir);
    char *tmp = NULL, *old = NULL;
    StrBuf meta;
    sb_init(&meta);
    const char *why = "";
    int rc = -1;
    if (file_mkdir_p(parent) != 0) {
        why = "cannot create";
        goto fail;
    }
    tmp = path_join(parent, ".tmp-XXXXXX");
    if (!mkdtemp(tmp)) {
        why = "cannot create a temporary directory in";
        goto fail;
    }
    entry_meta(job, opts, nopts, &meta);
    why = "cannot write the cache entry in";
    if (entry_write(job, tmp, &meta) || entry_publish(parent, tmp, dir, overwrite, &old, &why))
        goto fail;
    published_sum(dir, job->sum);
    /* only a CUBIN of ours: another process may have published this key first,
     * from another program */
    if (!strncmp(meta.p + meta.len - SUM_LINE + 4, job->sum, 64))
        shared_cubin_kept(job, dir);
    else if (adopt_published(job, dir) != 0) {
        why = "cannot read the entry another process published in";
        job->sum[0] = 0;
        goto fail;
    }
    job->dir = mem_strdup(dir);
    rc = 0;
fail:
    if (rc) {
        kvx_error_set(err, KVX_EIO, &(SrcPos){ jit_job_name(job), 0, 0 }, "%s %s: %s", why, parent,
                      strerror(errno));
        if (tmp)
            remove_dir(tmp);
        if (old)
            remove_dir(old);
    }
    sb_free(&meta);
    free(old);
    free(tmp);
    free(parent);
    return rc;
}

/* ---- scratch --------------------------------------------------------------------- */

struct JitScratch {
    pthread_mutex_t mu;         /* the compile threads make dir once */
    char *dir;                  /* NULL until first used */
};

JitScratch *jit_scratch_new(void)
{
    JitScratch *s = mem_calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void jit_scratch_free(JitScratch *s)
{
    if (!s)
        return;
    if (s->dir)
        remove_tree(s->dir, 2);
    free(s->dir);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The scratch directory, made on first use; NULL with err when it cannot be. */
const char *jit_scratch_dir(JitScratch *s, KvxError *err)
{
    pthread_mutex_lock(&s->mu);
    if (!s->dir) {
        const char *t = getenv("TMPDIR");
        char *dir = path_join(t && *t ? t : "/tmp", "kvx-scratch-XXXXXX");
        if (mkdtemp(dir))
            s->dir = dir;
        else {
            kvx_error_set(err, KVX_EIO, NULL, "cannot create a scratch directory %s: %s", dir,
                          strerror(errno));
            free(dir);
        }
    }
    const char *dir = s->dir;
    pthread_mutex_unlock(&s->mu);
    return dir;
}

/* ---- files besides the compile's: jit_cache_put, jit_cache_get -------------------- */

int jit_cache_put(const JitJob *job, const char *name, const void *data, size_t len)
{
    KVX_ASSERT(name[0] && name[0] != '.' && !strchr(name, '/') && !is_entry_file(name));
    if (!job->dir || !job->sum[0])
        return -1;
    char hex[65], head[EXTRA_HEAD + 1];
    extra_sum(job->sum, name, data, len, hex);
    snprintf(head, sizeof head, "kvx-sum %s\n", hex);
    /* A name starting with '.' until renamed: jit_cache_load passes over it. */
    StrBuf tmp;
    sb_init(&tmp);
    sb_printf(&tmp, "%s/.%s.tmp.%ld.%lu", job->dir, name, (long)getpid(), (unsigned long)pthread_self());
    char *path = path_join(job->dir, name);
    FILE *f = fopen(sb_str(&tmp), "wb");
    int ok = f && fwrite(head, 1, EXTRA_HEAD, f) == EXTRA_HEAD && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(sb_str(&tmp), path) != 0) {
        unlink(sb_str(&tmp));
        ok = 0;
    }
    free(path);
    sb_free(&tmp);
    return ok ? 0 : -1;
}

char *jit_cache_get(const JitJob *job, const char *name, size_t *len)
{
    if (!job->dir || !job->sum[0])
        return NULL;
    size_t n = 0;
    char *text = read_entry_file(job->dir, name, &n);
    if (!text)
        return NULL;
    if (!extra_ok(job->sum, name, text, n)) {
        fprintf(stderr, "kvx: cache file %s/%s is corrupt (it does not match its checksum): making it "
                "again\n", job->dir, name);
        free(text);
        return NULL;
    }
    memmove(text, text + EXTRA_HEAD, n - EXTRA_HEAD + 1);  /* with file_read's NUL */
    *len = n - EXTRA_HEAD;
    return text;
}
