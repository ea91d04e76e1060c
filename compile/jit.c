/* jit: the compile stage.  Emitted CUDA sources go through NVRTC for a real
 * architecture (sm_XX), so each compile yields PTX, a CUBIN the worker loads,
 * and ptxas's resource report (registers, spills, shared memory), all kept in a
 * disk cache so that a second run compiles nothing.
 *
 * Invariants:
 * - A cache entry <cache>/<key[0:2]>/<key>/ is complete or absent: it is written
 *   in a private temporary directory (mkdtemp) next to it and published with
 *   rename(2), so a killed kvx or a concurrent kvx never shows a half entry.
 * - The key covers everything that changes the output: source, arch, the full
 *   option list in order, use_cccl, NVRTC's version and kvx's version.
 * - A source that does not compile is a result (ok=0, the log), cached like a
 *   success; only failures outside the source return -1.
 * - Nothing of an entry is trusted before its checksum matched: meta.txt's
 *   last line covers meta.txt and the compile's files, each later file
 *   (jit_cache_put) carries its own, tied to it.
 * - The cache is best-effort: one that cannot be written is a warning, and
 *   the job's files go to the caller's scratch directory instead.
 *
 * NVRTC is thread-safe for distinct programs, so jit_compile runs on the pool
 * with no lock of its own; but it runs about one compile at a time per
 * process, so jit_compile_all sends each miss to a compile process
 * (jitproc.c) when the binary enabled them. */
#include "jit.h"
#include "core/version.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pool.h"
#include "inspect.h"
#include "jit_internal.h"
#include "jitproc.h"

/* A failed NVRTC call names itself, where it was made, and NVRTC's own text. */
#define NVRTC_CHECK(call)                                                         \
    do {                                                                          \
        nvrtcResult rc_ = (call);                                                 \
        if (rc_ != NVRTC_SUCCESS) {                                               \
            kvx_error_set(err, KVX_ECOMPILE, &(SrcPos){ job_name(job), 0, 0 },    \
                          "%s failed (%s:%d): %s", #call, __FILE__, __LINE__,     \
                          nvrtcGetErrorString(rc_));                              \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

static const char *job_name(const JitJob *job)
{
    return job->name && job->name[0] ? job->name : "kernel.cu";
}

/* ---- versions and environment --------------------------------------------- */

int jit_nvrtc_version(int *major, int *minor)
{
    int ma = 0, mi = 0;
    if (nvrtcVersion(&ma, &mi) != NVRTC_SUCCESS)
        return -1;
    if (major)
        *major = ma;
    if (minor)
        *minor = mi;
    return 0;
}

char *jit_supported_archs(void)
{
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0)
        return NULL;
    int *archs = xcalloc((size_t)n, sizeof *archs);
    if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) {
        free(archs);
        return NULL;
    }
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%ssm_%d", i ? "," : "", archs[i]);
    free(archs);
    return sb_take(&b);
}

/* A candidate is the include dir when it holds cuda_fp16.h, the header the
 * templates need it for. */
static char *include_candidate(const char *dir, const char *suffix)
{
    if (!dir || !dir[0])
        return NULL;
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%s%s", dir, suffix);
    char *path = xmalloc(b.len + sizeof "/cuda_fp16.h");
    memcpy(path, b.p, b.len);
    memcpy(path + b.len, "/cuda_fp16.h", sizeof "/cuda_fp16.h");
    int found = access(path, R_OK) == 0;
    free(path);
    if (found)
        return sb_take(&b);
    sb_free(&b);
    return NULL;
}

char *jit_find_cuda_include(void)
{
    char *dir;
    if ((dir = include_candidate(getenv("CUDA_HOME"), "/include")))
        return dir;
    if ((dir = include_candidate(getenv("CUDA_PATH"), "/include")))
        return dir;
#ifdef KVX_CUDA_INCLUDE_DIR
    if ((dir = include_candidate(KVX_CUDA_INCLUDE_DIR, "")))
        return dir;
#endif
    return include_candidate("/usr/local/cuda", "/include");
}

/* ---- ptxas report ---------------------------------------------------------- */

/* The integer just before `what` on this line, or -1. */
static int number_before(const char *line, const char *what)
{
    const char *at = strstr(line, what);
    if (!at)
        return -1;
    const char *p = at;
    while (p > line && p[-1] == ' ')
        p--;
    const char *end = p;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == end)
        return -1;
    long v = strtol(p, NULL, 10);
    return v > INT_MAX ? INT_MAX : (int)v;
}

static void keep_max(int *slot, int v)
{
    if (v > *slot)
        *slot = v;
}

/* NVRTC 13's log, per function:
 *   ptxas info    : Compiling entry function 'k' for 'sm_90'
 *   ptxas info    : Function properties for k
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 72 registers, used 1 barriers, 1024 bytes smem, 374 bytes cmem[0]
 * smem and cmem[0] are printed only when nonzero, and sm_90 does not print
 * cmem[0] at all; so smem is 0 once a "Used" line is seen, cmem stays -1 unless
 * printed.  With several functions (several kernels, or non-inlined device
 * functions with their own stack frames) each figure is the largest seen. */
void jit_parse_ptxas(const char *log, JitJob *job)
{
    job->regs = job->spill_stores = job->spill_loads = -1;
    job->smem_static = job->stack = job->cmem = -1;
    if (!log)
        return;
    char line[1024];
    for (const char *p = log; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t k = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, p, k);
        line[k] = 0;
        p += n + (nl ? 1 : 0);
        if (!strstr(line, "ptxas"))
            continue;
        const char *used = strstr(line, "Used ");
        if (used) {
            keep_max(&job->regs, number_before(used, " registers"));
            keep_max(&job->smem_static, 0);
            keep_max(&job->smem_static, number_before(used, " bytes smem"));
            keep_max(&job->cmem, number_before(used, " bytes cmem[0]"));
        }
        if (strstr(line, "bytes stack frame")) {
            keep_max(&job->stack, number_before(line, " bytes stack frame"));
            keep_max(&job->spill_stores, number_before(line, " bytes spill stores"));
            keep_max(&job->spill_loads, number_before(line, " bytes spill loads"));
        }
    }
}

/* ---- PTX parameter lists ----------------------------------------------------- */

static const struct {
    const char *name;
    int size;
    int is_float;
} PTX_TYPES[] = {
    { ".u8", 1, 0 },  { ".s8", 1, 0 },  { ".b8", 1, 0 },
    { ".u16", 2, 0 }, { ".s16", 2, 0 }, { ".b16", 2, 0 }, { ".f16", 2, 1 },
    { ".u32", 4, 0 }, { ".s32", 4, 0 }, { ".b32", 4, 0 }, { ".f32", 4, 1 },
    { ".u64", 8, 0 }, { ".s64", 8, 0 }, { ".b64", 8, 0 }, { ".f64", 8, 1 },
};

/* One parameter's text, e.g. ".param .align 8 .b8 k_param_0[16]" or
 * ".param .u64 .ptr .global .align 4 k_param_1".  An .align before the type is
 * the parameter's; one after .ptr is the pointee's and is ignored. */
static int parse_param(const char *s, const char *end, PtxParam *out)
{
    int elem = 0, is_float = 0, align = 0, count = 1, align_next = 0, typed = 0;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
            s++;
        const char *t = s;
        while (s < end && !(*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
            s++;
        size_t n = (size_t)(s - t);
        if (n == 0)
            break;
        if (align_next) {
            if (!typed)
                align = atoi(t);
            align_next = 0;
            continue;
        }
        if (n == 6 && !memcmp(t, ".align", 6)) {
            align_next = 1;
            continue;
        }
        if (*t == '.') {
            for (size_t i = 0; !typed && i < sizeof PTX_TYPES / sizeof *PTX_TYPES; i++) {
                if (strlen(PTX_TYPES[i].name) == n && !memcmp(t, PTX_TYPES[i].name, n)) {
                    elem = PTX_TYPES[i].size;
                    is_float = PTX_TYPES[i].is_float;
                    typed = 1;
                }
            }
            continue;   /* .param, .ptr, state spaces */
        }
        const char *br = memchr(t, '[', n);   /* the name, maybe name[16] */
        if (br)
            count = atoi(br + 1);
    }
    if (!typed)
        return -1;
    out->size = elem * count;
    out->is_float = count == 1 ? is_float : 0;
    out->align = align ? align : elem;
    return 0;
}

int jit_ptx_params(const char *ptx, const char *kernel, PtxParam *out, int max)
{
    if (!ptx || !kernel)
        return -1;
    size_t klen = strlen(kernel);
    const char *open = NULL;
    for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
        const char *q = p + 6;
        if (*q != ' ' && *q != '\t')
            continue;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, kernel, klen) != 0)
            continue;
        q += klen;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q == '(') {
            open = q + 1;
            break;
        }
    }
    if (!open)
        return -1;
    const char *close = strchr(open, ')');
    if (!close)
        return -1;
    int count = 0;
    for (const char *s = open; s < close;) {
        const char *comma = memchr(s, ',', (size_t)(close - s));
        const char *e = comma ? comma : close;
        const char *t = s;
        while (t < e && (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r'))
            t++;
        if (t < e) {
            PtxParam prm = { 0, 0, 0 };
            if (parse_param(t, e, &prm) != 0)
                return -1;
            if (count < max)
                out[count] = prm;
            count++;
        }
        s = comma ? comma + 1 : close;
    }
    return count;
}

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

/* The cache key; the options are the full list passed to NVRTC.  "kvx-jit-2":
 * entries whose checksum covers meta.txt, source.cu and the extra files; the
 * entries of "kvx-jit-1" are never looked up. */
static void job_key(const JitJob *job, const char *const *opts, int nopts, char key[65])
{
    int ma = 0, mi = 0;
    jit_nvrtc_version(&ma, &mi);
    char buf[64];
    Sha256 h;
    sha256_init(&h);
    hash_str(&h, "kvx-jit-2");
    hash_str(&h, kvx_version());
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
static char *entry_path(const char *root, const char *key)
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
        *bad = xstrdup("its files do not match the checksum in meta.txt");
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
static int cache_load(JitJob *job, const char *dir)
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
                job_name(job));
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
    job->dir = xstrdup(dir);
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
              kvx_version(), job->arch, job->use_cccl ? 1 : 0);
    sb_puts(meta, "options=");
    for (int i = 0; i < nopts; i++) {
        for (const char *c = opts[i]; *c; c++)
            sb_putc(meta, *c == '\n' ? ' ' : *c);
        sb_putc(meta, i + 1 < nopts ? ' ' : '\n');
    }
    if (nopts == 0)
        sb_putc(meta, '\n');
    sb_puts(meta, "name=");
    for (const char *c = job_name(job); *c; c++)
        sb_putc(meta, *c == '\n' ? ' ' : *c);
    sb_putc(meta, '\n');
    const void *data[NENTRY];
    size_t len[NENTRY];
    job_files(job, data, len);
    char sum[65];
    entry_sum(meta->p, meta->len, data, len, sum);
    sb_printf(meta, "sum=%s\n", sum);
}

static int entry_write(const JitJob *job, const char *tmp, const StrBuf *meta)
{
    const void *data[NENTRY];
    size_t len[NENTRY];
    job_files(job, data, len);
    for (int i = 0; i < NENTRY; i++)
        if (data[i] && write_file(tmp, ENTRY_FILES[i], data[i], len[i]))
            return -1;
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

/* Write job's outputs as the entry `dir`.  overwrite: replace an existing entry
 * (one that does not match its checksum); otherwise an entry published first
 * by another process wins, being the same compile.  0 or -1 with err. */
static int cache_store(JitJob *job, const char *const *opts, int nopts, const char *dir,
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
    job->dir = xstrdup(dir);
    published_sum(dir, job->sum);
    rc = 0;
fail:
    if (rc) {
        kvx_error_set(err, KVX_EIO, &(SrcPos){ job_name(job), 0, 0 }, "%s %s: %s", why, parent,
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

/* ---- compile ------------------------------------------------------------------ */

void jit_job_release(JitJob *job)
{
    if (!job)
        return;
    free(job->ptx);
    free(job->cubin);
    free(job->log);
    free(job->dir);
    free(job->inspect_json);
    free(job->cache_warning);
    job->inspect_json = NULL;
    job->cache_warning = NULL;
    job->sum[0] = 0;
    job->ptx = NULL;
    job->cubin = NULL;
    job->log = NULL;
    job->dir = NULL;
    job->ptx_len = job->cubin_len = 0;
    job->ok = job->cached = job->crashed = 0;
    job->key[0] = 0;
    job->compile_ms = 0;
    job->regs = job->spill_stores = job->spill_loads = -1;
    job->smem_static = job->stack = job->cmem = -1;
}

int jit_nvrtc_compile(JitJob *job, const char *const *opts, int nopts, KvxError *err)
{
    nvrtcProgram prog = NULL;
    NVRTC_CHECK(nvrtcCreateProgram(&prog, job->source, job_name(job), 0, NULL, NULL));
    double t0 = now_ms();
    nvrtcResult rc = nvrtcCompileProgram(prog, nopts, (const char **)opts);
    job->compile_ms = now_ms() - t0;
    size_t len = 0;
    NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &len));
    job->log = xcalloc(len + 1, 1);
    NVRTC_CHECK(nvrtcGetProgramLog(prog, job->log));
    if (rc == NVRTC_ERROR_COMPILATION) {
        job->ok = 0;
        /* ptxas can fail with only its info lines in the log, e.g. over the
         * 48 KB of static shared memory a kernel may declare: say so. */
        if (!strstr(job->log, "error")) {
            jit_parse_ptxas(job->log, job);
            char note[200];
            if (job->smem_static > 48 * 1024)
                snprintf(note, sizeof note, "kvx: %d bytes of static shared memory: more than the"
                         " 48 KB a kernel may declare statically\n", job->smem_static);
            else
                snprintf(note, sizeof note, "kvx: NVRTC reported a failed compile without an"
                         " error line\n");
            size_t n = strlen(job->log);
            job->log = xrealloc(job->log, n + strlen(note) + 1);
            memcpy(job->log + n, note, strlen(note) + 1);
        }
        nvrtcDestroyProgram(&prog);
        return 0;
    }
    if (rc == NVRTC_ERROR_INVALID_OPTION) {
        /* Every variant would fail the same way: the spec's options are wrong. */
        kvx_error_set(err, KVX_EINPUT, &(SrcPos){ job_name(job), 0, 0 },
                      "NVRTC rejected the compile options (%s)", nvrtcGetErrorString(rc));
        kvx_error_attach_log(err, job->log, strlen(job->log));
        goto fail;
    }
    NVRTC_CHECK(rc);
    NVRTC_CHECK(nvrtcGetPTXSize(prog, &len));
    job->ptx = xcalloc(len + 1, 1);
    NVRTC_CHECK(nvrtcGetPTX(prog, job->ptx));
    job->ptx_len = strlen(job->ptx);
    /* A virtual arch (compute_XX) has no CUBIN: size 0, left NULL. */
    NVRTC_CHECK(nvrtcGetCUBINSize(prog, &len));
    if (len > 0) {
        job->cubin = xmalloc(len);
        NVRTC_CHECK(nvrtcGetCUBIN(prog, job->cubin));
        job->cubin_len = len;
    }
    jit_parse_ptxas(job->log, job);
    job->ok = 1;
    nvrtcDestroyProgram(&prog);
    return 0;

fail:
    if (prog)
        nvrtcDestroyProgram(&prog);
    return -1;
}

/* NVRTC's options for job, in a: the arch, C++17, ptxas's report, line info,
 * the CUDA (and CCCL) includes, then the job's own.  *n gets the count. */
static const char **nvrtc_options(const JitJob *job, const JitOptions *opt, const char *inc,
                                  Arena *a, int *n)
{
    const char **opts = arena_alloc(a, sizeof *opts * (size_t)(job->noptions + 8));
    int nopts = 0;
    opts[nopts++] = arena_printf(a, "--gpu-architecture=%s", job->arch);
    opts[nopts++] = "--std=c++17";
    /* -v puts ptxas's resource report in the log; -lineinfo lets PTX/SASS
     * inspection map instructions back to the emitted source.  No
     * -default-device: the emitted source marks __device__ itself, so it also
     * compiles unchanged with nvcc, as users reproduce it. */
    opts[nopts++] = "--ptxas-options=-v";
    opts[nopts++] = "-lineinfo";
    if (inc)
        opts[nopts++] = arena_printf(a, "-I%s", inc);
    if (job->use_cccl) {
        if (opt->cccl_include)
            opts[nopts++] = arena_printf(a, "-I%s", opt->cccl_include);
        else if (inc)
            opts[nopts++] = arena_printf(a, "-I%s/cccl", inc);
    }
    for (int i = 0; i < job->noptions; i++)
        opts[nopts++] = job->options[i];
    *n = nopts;
    return opts;
}

/* ---- scratch --------------------------------------------------------------------- */

struct JitScratch {
    pthread_mutex_t mu;         /* the compile threads make dir once */
    char *dir;                  /* NULL until first used */
};

JitScratch *jit_scratch_new(void)
{
    JitScratch *s = xcalloc(1, sizeof *s);
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
static const char *scratch_dir(JitScratch *s, KvxError *err)
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

/* ---- compile: the cache or the scratch ------------------------------------------- */

/* The job's cache entry, CACHE/KE/KEY, into *dir (malloc'd; NULL without a
 * cache or with --no-cache, which never touches it).  1 when the entry was
 * loaded into job; else 0, with *overwrite saying whether a compile must
 * replace what is there (an entry that does not match its checksum). */
static int cache_lookup(JitJob *job, const JitOptions *opt, char **dir, int *overwrite)
{
    *dir = NULL;
    *overwrite = 0;
    if (!opt->cache_dir || !opt->use_cache)
        return 0;
    *dir = entry_path(opt->cache_dir, job->key);
    if (cache_load(job, *dir) == 0)
        return 1;
    /* Absent, or unusable (edited by hand): compile and replace it. */
    char key[65];
    memcpy(key, job->key, sizeof key);
    jit_job_release(job);
    memcpy(job->key, key, sizeof key);
    struct stat st;
    *overwrite = stat(*dir, &st) == 0;
    return 0;
}

/* Keep a fresh compile's files: as the cache entry dir when store (and dir)
 * allow, else in opt->scratch.  A cache that cannot take them is no
 * failure: job->cache_warning says why, and the scratch takes them.  0, or -1
 * with err when the scratch cannot. */
static int entry_keep(JitJob *job, const JitOptions *opt, const char *const *opts, int nopts,
                      const char *dir, int overwrite, int store, KvxError *err)
{
    if (dir && store) {
        KvxError e = { 0 };
        if (cache_store(job, opts, nopts, dir, overwrite, &e) == 0)
            return 0;
        job->cache_warning = xstrdup(e.msg);
        kvx_error_clear(&e);
    }
    if (!opt->scratch)
        return 0;
    const char *root = scratch_dir(opt->scratch, err);
    if (!root)
        return -1;
    char *sdir = entry_path(root, job->key);
    int rc = cache_store(job, opts, nopts, sdir, 0, err);
    free(sdir);
    return rc;
}

void jit_fresh_facts(JitJob *job)
{
    if (!job->ok || !job->cubin)
        return;
    StrBuf b;
    sb_init(&b);
    KvxError e = { 0 };
    if (inspect_job_facts(job, &b, &e) == 0)
        job->inspect_json = sb_take(&b);
    kvx_error_clear(&e);
    sb_free(&b);
}

/* A compile the cache did not serve: NVRTC and the SASS facts, in a compile
 * process when procs is set.  0, 1 for a job whose child died (a failed
 * compile, not to be kept), or -1 with err. */
static int compile_fresh(JitJob *job, JitProcs *procs, const char *const *opts, int nopts,
                         KvxError *err)
{
    if (procs)
        return jitproc_compile(procs, job, opts, nopts, err);
    if (jit_nvrtc_compile(job, opts, nopts, err) != 0)
        return -1;
    jit_fresh_facts(job);
    return 0;
}

/* The fresh compile's files kept (entry_keep), then its facts beside them,
 * so that a run the cache serves disassembles nothing.  0 or -1 with err. */
static int keep_fresh(JitJob *job, const JitOptions *opt, const char *const *opts, int nopts,
                      const char *dir, int overwrite, int store, KvxError *err)
{
    if (entry_keep(job, opt, opts, nopts, dir, overwrite, store, err) != 0)
        return -1;
    if (job->inspect_json && job->dir)
        inspect_job_keep(job, job->inspect_json, strlen(job->inspect_json));
    return 0;
}

/* jit_compile; store 0: the cache is read but not written (it could not be,
 * for an earlier job of jit_compile_all); procs: the compile processes, or
 * NULL to compile on this thread. */
static int compile_job(JitJob *job, const JitOptions *opt, int store, JitProcs *procs, KvxError *err)
{
    jit_job_release(job);
    if (!job->source || !job->arch || !job->arch[0] || job->noptions < 0) {
        kvx_error_set(err, KVX_EINTERNAL, &(SrcPos){ job_name(job), 0, 0 },
                      "jit_compile: job without source or arch");
        return -1;
    }
    static const JitOptions defaults = { 0 };
    if (!opt)
        opt = &defaults;
    char *found = opt->cuda_include ? NULL : jit_find_cuda_include();
    Arena *a = arena_new();
    int nopts;
    const char **opts = nvrtc_options(job, opt, opt->cuda_include ? opt->cuda_include : found,
                                      a, &nopts);
    job_key(job, opts, nopts, job->key);
    char *dir;
    int overwrite, rc = 0;
    if (!cache_lookup(job, opt, &dir, &overwrite)) {
        rc = compile_fresh(job, procs, opts, nopts, err);
        if (rc == 0)
            rc = keep_fresh(job, opt, opts, nopts, dir, overwrite, store, err);
        else if (rc == 1)
            rc = 0;         /* a dead child: reported, not kept */
    }
    free(dir);
    arena_free(a);
    free(found);
    return rc;
}

int jit_compile(JitJob *job, const JitOptions *opt, KvxError *err)
{
    return compile_job(job, opt, 1, NULL, err);
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
    /* A name starting with '.' until renamed: cache_load passes over it. */
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

/* ---- many jobs ----------------------------------------------------------------- */

typedef struct CompileAll {
    JitJob *jobs;
    const JitOptions *opt;
    void (*on_done)(void *ctx, JitJob *job);
    void *ctx;
    JitProcs *procs;            /* NULL: NVRTC on the pool's threads */
    pthread_mutex_t mu;         /* serialises on_done, the first error and cache_off */
    KvxError first;
    int failed;
    int cache_off;              /* the cache could not be written: read it, write no more */
} CompileAll;

typedef struct CompileTask {
    CompileAll *all;
    int i;
} CompileTask;

static void compile_one(void *arg)
{
    CompileTask *t = arg;
    CompileAll *c = t->all;
    JitJob *job = &c->jobs[t->i];
    KvxError e = { 0 };
    pthread_mutex_lock(&c->mu);
    int store = !c->cache_off;
    pthread_mutex_unlock(&c->mu);
    int rc = compile_job(job, c->opt, store, c->procs, &e);
    if (rc == 0 && c->opt->after)
        c->opt->after(c->opt->after_ctx, job);
    pthread_mutex_lock(&c->mu);
    /* Once a process (kvx compile calls this once per arch), for the first
     * job the cache refused; jobs already compiling may refuse it too. */
    static atomic_int warned;
    if (job->cache_warning && !c->cache_off) {
        c->cache_off = 1;
        if (!atomic_exchange(&warned, 1))
            fprintf(stderr, "kvx: warning: the compile cache cannot be written (%s): compiling without it\n",
                    job->cache_warning);
    }
    if (rc != 0) {
        if (!c->failed) {
            c->first = e;           /* takes the log along */
            e.log = NULL;
        }
        c->failed = 1;
    } else if (c->on_done) {
        c->on_done(c->ctx, &c->jobs[t->i]);
    }
    pthread_mutex_unlock(&c->mu);
    kvx_error_clear(&e);
}

int jit_compile_all(JitJob *jobs, int n, const JitOptions *opt,
                    void (*on_done)(void *ctx, JitJob *job), void *ctx, KvxError *err)
{
    static const JitOptions defaults = { 0 };
    JitOptions o = opt ? *opt : defaults;
    char *found = NULL;
    if (!o.cuda_include)    /* look once, not once per job */
        o.cuda_include = found = jit_find_cuda_include();
    CompileAll c = { .jobs = jobs, .opt = &o, .on_done = on_done, .ctx = ctx };
    pthread_mutex_init(&c.mu, NULL);
    int threads = o.threads > 0 ? o.threads : pool_cores();
    if (threads > n)
        threads = n > 0 ? n : 1;
    /* One compile process per thread, started on a thread's first miss. */
    c.procs = jitproc_enabled() ? jitproc_new(threads) : NULL;
    CompileTask *tasks = xcalloc(n > 0 ? (size_t)n : 1, sizeof *tasks);
    Pool *p = pool_new(threads);
    for (int i = 0; i < n; i++) {
        tasks[i] = (CompileTask){ &c, i };
        pool_submit(p, compile_one, &tasks[i]);
    }
    pool_free(p);
    jitproc_free(c.procs);
    free(tasks);
    pthread_mutex_destroy(&c.mu);
    free(found);
    if (c.failed) {
        if (err && !err->code) {
            kvx_error_clear(err);
            *err = c.first;
        } else {
            kvx_error_clear(&c.first);
        }
        return -1;
    }
    return 0;
}

char *jit_default_cache_dir(void)
{
    const char *e = getenv("KVX_CACHE_DIR");
    if (e && *e)
        return xstrdup(e);
    StrBuf b;
    sb_init(&b);
    if ((e = getenv("XDG_CACHE_HOME")) && *e)
        sb_printf(&b, "%s/kvx", e);
    else if ((e = getenv("HOME")) && *e)
        sb_printf(&b, "%s/.cache/kvx", e);
    else
        sb_puts(&b, ".kvx/cache");
    return sb_take(&b);
}
