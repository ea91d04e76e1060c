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
 * The cache is jit_cache.c's.
 *
 * NVRTC is thread-safe for distinct programs, so jit_compile runs on the pool
 * with no lock of its own; but it runs about one compile at a time per
 * process, so jit_batch.c's jit_compile_all sends each miss to a compile process
 * (jitproc.c) when the binary enabled them. */
#include "jit.h"
#include "core/json.h"
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
            kvx_error_set(err, KVX_ECOMPILE, &(SrcPos){ jit_job_name(job), 0, 0 },    \
                          "%s failed (%s:%d): %s", #call, __FILE__, __LINE__,     \
                          nvrtcGetErrorString(rc_));                              \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

const char *jit_job_name(const JitJob *job)
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
    int *archs = mem_calloc((size_t)n, sizeof *archs);
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
    char *path = mem_alloc(b.len + sizeof "/cuda_fp16.h");
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

/* The next line of *p into line (cut at n - 1 bytes), *p moved past it.
 * 0 at the end of the text. */
static int log_line(const char **p, char *line, size_t n)
{
    if (!**p)
        return 0;
    const char *nl = strchr(*p, '\n');
    size_t len = nl ? (size_t)(nl - *p) : strlen(*p);
    size_t k = len < n - 1 ? len : n - 1;
    memcpy(line, *p, k);
    line[k] = 0;
    *p += len + (nl ? 1 : 0);
    return 1;
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
    for (const char *p = log; log_line(&p, line, sizeof line);) {
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

/* The name between the quotes after `what` on line ("Compiling entry
 * function 'k' for ..."), into name; 0, or -1 when the line has none. */
static int quoted_after(const char *line, const char *what, char *name, size_t cap)
{
    const char *at = strstr(line, what);
    if (!at)
        return -1;
    const char *q = strchr(at + strlen(what), '\'');
    const char *e = q ? strchr(q + 1, '\'') : NULL;
    if (!e || (size_t)(e - q - 1) >= cap)
        return -1;
    memcpy(name, q + 1, (size_t)(e - q - 1));
    name[e - q - 1] = 0;
    return 0;
}

/* One entry function's lines of the log (the lines after its "Compiling entry
 * function" up to the next one): its stack and spills, registers and static
 * shared memory.  Non-inlined device functions' properties fall into the entry
 * compiled before them, each figure the largest, as jit_parse_ptxas does. */
static void kernel_line(const char *line, JitKernelFacts *k)
{
    const char *used = strstr(line, "Used ");
    if (used) {
        keep_max(&k->regs, number_before(used, " registers"));
        keep_max(&k->smem_static, 0);
        keep_max(&k->smem_static, number_before(used, " bytes smem"));
    }
    if (strstr(line, "bytes stack frame")) {
        keep_max(&k->stack, number_before(line, " bytes stack frame"));
        keep_max(&k->spill_stores, number_before(line, " bytes spill stores"));
        keep_max(&k->spill_loads, number_before(line, " bytes spill loads"));
    }
}

int jit_ptxas_kernels(const char *log, JitKernelFacts *out, int max)
{
    int n = 0;
    char line[1024];
    for (const char *p = log ? log : ""; log_line(&p, line, sizeof line);) {
        if (!strstr(line, "ptxas"))
            continue;
        char name[sizeof out->name];
        if (quoted_after(line, "Compiling entry function", name, sizeof name) == 0) {
            if (n == max)
                break;
            out[n] = (JitKernelFacts){.regs = -1, .spill_stores = -1, .spill_loads = -1,
                                      .smem_static = -1, .stack = -1};
            memcpy(out[n++].name, name, sizeof name);
        } else if (n > 0) {
            kernel_line(line, &out[n - 1]);
        }
    }
    return n;
}

void jit_kernels_json(const JitKernelFacts *k, int n, StrBuf *out)
{
    sb_putc(out, '[');
    for (int i = 0; i < n; i++) {
        sb_puts(out, i ? ",{\"kernel\":" : "{\"kernel\":");
        json_put_str(out, k[i].name, JSON_TEXT);
        const int v[] = {k[i].regs, k[i].spill_stores, k[i].spill_loads, k[i].smem_static, k[i].stack};
        static const char *const names[] = {"regs", "spill_stores", "spill_loads", "smem_static", "stack"};
        for (int j = 0; j < 5; j++)
            if (v[j] < 0)
                sb_printf(out, ",\"%s\":null", names[j]);
            else
                sb_printf(out, ",\"%s\":%d", names[j], v[j]);
        sb_putc(out, '}');
    }
    sb_putc(out, ']');
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

/* ---- compile ------------------------------------------------------------------ */

void jit_job_release(JitJob *job)
{
    if (!job)
        return;
    free(job->ptx);
    if (job->cubin_blob)
        jit_blob_unref(job->cubin_blob);
    else
        free(job->cubin);
    job->cubin_blob = NULL;
    job->symbol[0] = 0;
    job->group = 1;
    job->facts_ms = job->fe_ms = job->nvvm_ms = job->ptxas_ms = 0;
    free(job->log);
    free(job->dir);
    free(job->inspect_json);
    free(job->cache_warning);
    free(job->sass);
    job->sass = NULL;
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

int jit_source_includes(const char *source)
{
    for (const char *p = source ? strstr(source, "#include") : NULL; p; p = strstr(p + 1, "#include")) {
        const char *q = p;
        while (q > source && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        if (q == source || q[-1] == '\n')
            return 1;
    }
    return 0;
}

/* ptxas can fail with only its info lines in the log, e.g. over the 48 KB of
 * static shared memory a kernel may declare: a line saying so ends the log. */
static void note_silent_failure(JitJob *job)
{
    jit_parse_ptxas(job->log, job);
    char note[200];
    if (job->smem_static > 48 * 1024)
        snprintf(note, sizeof note, "kvx: %d bytes of static shared memory: more than the"
                 " 48 KB a kernel may declare statically\n", job->smem_static);
    else
        snprintf(note, sizeof note, "kvx: NVRTC reported a failed compile without an error line\n");
    size_t n = strlen(job->log);
    job->log = mem_realloc(job->log, n + strlen(note) + 1);
    memcpy(job->log + n, note, strlen(note) + 1);
}

/* The sum of the durations (µs) of the trace's events named name, in ms. */
static double trace_ms(const char *trace, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name);
    double us = 0;
    for (const char *p = trace; (p = strstr(p, key)); p += strlen(key)) {
        const char *open = p;
        while (open > trace && *open != '{')
            open--;
        const char *dur = strstr(open, "\"dur\":");
        if (dur && dur < strchr(p, '}'))
            us += strtod(dur + 6, NULL);
    }
    return us / 1000;
}

/* NVRTC's own parts from its time trace (--fdevice-time-trace=PATH among
 * opts, written to PATH.json; read and removed): the front end, NVVM (its
 * optimizer and code generator) and ptxas, into job.  A run with --profile
 * asks for it; nothing without the option. */
static void trace_parts(JitJob *job, const char *const *opts, int nopts)
{
    static const char opt[] = "--fdevice-time-trace=";
    for (int i = 0; i < nopts; i++) {
        if (strncmp(opts[i], opt, sizeof opt - 1))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s.json", opts[i] + sizeof opt - 1);
        size_t len = 0;
        char *trace = file_read(path, &len);
        unlink(path);
        if (!trace)
            return;
        job->fe_ms = trace_ms(trace, "CUDA C++ Front-End");
        job->nvvm_ms = trace_ms(trace, "LibNVVM");
        job->ptxas_ms = trace_ms(trace, "Total PTXAS Time");
        free(trace);
    }
}

int jit_nvrtc_compile(JitJob *job, const char *const *opts, int nopts, KvxError *err)
{
    return jit_nvrtc_compile_with(job, 0, NULL, NULL, opts, nopts, err);
}

int jit_nvrtc_compile_with(JitJob *job, int nheaders, const char *const *headers,
                           const char *const *header_names, const char *const *opts, int nopts,
                           KvxError *err)
{
    nvrtcProgram prog = NULL;
    NVRTC_CHECK(nvrtcCreateProgram(&prog, job->source, jit_job_name(job), nheaders, headers,
                                   header_names));
    double t0 = wall_now_ms();
    nvrtcResult rc = nvrtcCompileProgram(prog, nopts, (const char **)opts);
    job->compile_ms = wall_now_ms() - t0;
    trace_parts(job, opts, nopts);
    size_t len = 0;
    NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &len));
    job->log = mem_calloc(len + 1, 1);
    NVRTC_CHECK(nvrtcGetProgramLog(prog, job->log));
    if (rc == NVRTC_ERROR_COMPILATION) {
        job->ok = 0;
        if (!strstr(job->log, "error"))
            note_silent_failure(job);
        jit_log_hint(job);
        nvrtcDestroyProgram(&prog);
        return 0;
    }
    if (rc == NVRTC_ERROR_INVALID_OPTION) {
        /* Every variant would fail the same way: the spec's options are wrong. */
        kvx_error_set(err, KVX_EINPUT, &(SrcPos){ jit_job_name(job), 0, 0 },
                      "NVRTC rejected the compile options (%s)", nvrtcGetErrorString(rc));
        kvx_error_attach_log(err, job->log, strlen(job->log));
        goto fail;
    }
    NVRTC_CHECK(rc);
    NVRTC_CHECK(nvrtcGetPTXSize(prog, &len));
    job->ptx = mem_calloc(len + 1, 1);
    NVRTC_CHECK(nvrtcGetPTX(prog, job->ptx));
    job->ptx_len = strlen(job->ptx);
    /* A virtual arch (compute_XX) has no CUBIN: size 0, left NULL. */
    NVRTC_CHECK(nvrtcGetCUBINSize(prog, &len));
    if (len > 0) {
        job->cubin = mem_alloc(len);
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

/* ---- compile: the cache or the scratch ------------------------------------------- */

int jit_cache_lookup(JitJob *job, const JitOptions *opt, char **dir, int *overwrite)
{
    *dir = NULL;
    *overwrite = 0;
    if (!opt->cache_dir || !opt->use_cache)
        return 0;
    *dir = jit_cache_entry_path(opt->cache_dir, job->key);
    if (jit_cache_load(job, *dir) == 0)
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
        if (jit_cache_store(job, opts, nopts, dir, overwrite, &e) == 0)
            return 0;
        job->cache_warning = mem_strdup(e.msg);
        kvx_error_clear(&e);
    }
    if (!opt->scratch)
        return 0;
    const char *root = jit_scratch_dir(opt->scratch, err);
    if (!root)
        return -1;
    char *sdir = jit_cache_entry_path(root, job->key);
    int rc = jit_cache_store(job, opts, nopts, sdir, 0, err);
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
    job->sass = job->cubin_len && inspect_find_disassembler() ? inspect_disassemble(job->cubin, job->cubin_len, &e)
                                                              : NULL;
    if (!e.code) {
        inspect_job_facts_from(job, job->sass, &b);
        job->inspect_json = sb_take(&b);
    }
    kvx_error_clear(&e);
    sb_free(&b);
}

int jit_keep_fresh(JitJob *job, const JitOptions *opt, const char *const *opts, int nopts,
                   const char *dir, int overwrite, int store, KvxError *err)
{
    if (entry_keep(job, opt, opts, nopts, dir, overwrite, store, err) != 0)
        return -1;
    if (job->inspect_json && job->dir)
        inspect_job_keep(job, job->inspect_json, strlen(job->inspect_json));
    if (job->sass && job->dir)
        inspect_job_keep_sass(job, job->sass);
    return 0;
}

const char **jit_prepare(JitJob *job, const JitOptions *opt, Arena *a, int *nopts)
{
    const char **opts = nvrtc_options(job, opt, opt->cuda_include, a, nopts);
    jit_cache_key(job, opts, *nopts, job->key);
    return opts;
}

int jit_compile(JitJob *job, const JitOptions *opt, KvxError *err)
{
    static const JitOptions defaults = { 0 };
    jit_job_release(job);
    if (!job->source || !job->arch || !job->arch[0] || job->noptions < 0) {
        kvx_error_set(err, KVX_EINTERNAL, &(SrcPos){ jit_job_name(job), 0, 0 },
                      "jit_compile: job without source or arch");
        return -1;
    }
    JitOptions o = opt ? *opt : defaults;
    char *found = o.cuda_include ? NULL : jit_find_cuda_include();
    if (!o.cuda_include)
        o.cuda_include = found;
    Arena *a = arena_new();
    int nopts, overwrite;
    const char **opts = jit_prepare(job, &o, a, &nopts);
    char *dir;
    int rc = 0;
    if (!jit_cache_lookup(job, &o, &dir, &overwrite)) {
        GroupMember m = {.job = job};
        rc = jit_group_compile(&m, 1, opts, nopts, err);
        if (rc == 0)
            rc = jit_keep_fresh(job, &o, opts, nopts, dir, overwrite, 1, err);
    }
    free(dir);
    arena_free(a);
    free(found);
    return rc;
}

char *jit_default_cache_dir(void)
{
    const char *e = getenv("KVX_CACHE_DIR");
    if (e && *e)
        return mem_strdup(e);
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
