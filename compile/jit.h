/* jit: NVRTC compilation of emitted sources to PTX and CUBIN, with the ptxas
 * report parsed, a thread pool (each thread with a compile process of its own
 * once jitproc_enable was called: compile/jitproc.h), and a disk cache.
 *
 * The cache key is sha256(source, arch, options, NVRTC version, and a hash of
 * the compile stage's own files: never the commit; jit_cache.c);
 * an entry is a directory <cache>/<key[0:2]>/<key>/ holding source.cu, kernel.ptx,
 * kernel.cubin, log.txt and meta.txt (the parsed report and the compile time),
 * written to a temporary directory and renamed, so a killed compile never leaves
 * a half entry.  meta.txt ends with a checksum of its own text and of every
 * other file of the entry; files added later (jit_cache_put: inspect-KEY.json)
 * carry a checksum tied to it.  An entry that does not match in any file is a
 * miss, with a warning, and is compiled again and replaced.  A failed compile
 * is cached too (status and log), so a second run does not retry what cannot
 * compile unless --no-cache is given.
 *
 * The cache is best-effort: one that cannot be written costs a warning (once
 * a process, from jit_compile_all) and the compiles go on without it. */
#ifndef KVX_JIT_H
#define KVX_JIT_H

#include "core/util.h"

typedef struct JitJob JitJob;
typedef struct JitScratch JitScratch;
typedef struct JitBlob JitBlob;         /* a CUBIN the members of a grouped program share */

typedef struct JitOptions {
    const char *cache_dir;      /* NULL: no cache */
    const char *cuda_include;   /* toolkit include dir, NULL = found by jit_find_cuda */
    const char *cccl_include;   /* include/cccl when the spec asks for it */
    int threads;                /* compile threads (and processes); <=0: pool_cores() */
    int use_cache;              /* 0: compile everything; the cache is neither read nor
                                 * written (--no-cache) */
    /* Where a compile's files go when the cache does not take them (no cache,
     * --no-cache, or one that cannot be written), as entries of the same
     * layout, so that job->dir is always set: a run's workers load
     * kernel.cubin from it.  NULL: job->dir stays NULL then. */
    JitScratch *scratch;
    /* Called on the pool's thread after each successful compile, outside the
     * lock, so that work on the result (disassembly) runs in parallel too. */
    void (*after)(void *ctx, JitJob *job);
    void *after_ctx;
    /* Read (atomically) before each job starts: once non-zero, the jobs not
     * started are skipped (left not ok, no error): compiles ahead that a
     * search no longer wants.  NULL: none. */
    const int *cancel;
    /* Sources a grouped program may hold (compile/jit_group.c): 0, as many as
     * the batch's size and the threads make worth it (jit_batch.c); 1, every
     * source alone; N, at most N. */
    int group;
    /* Where the batch's time goes (--profile), filled by jit_compile_all;
     * NULL: not kept.  With trace, NVRTC also times its own parts. */
    struct JitProfile *profile;
} JitOptions;

/* One compile process's work on a program or a lone source: wall ms since
 * the batch began, and how many sources. */
typedef struct JitSpan {
    double t0, t1;
    int sources;
} JitSpan;

/* A batch's time (jit_compile_all with JitOptions.profile), ms of wall
 * summed over the compile threads unless named so.  The parts tile each
 * fresh compile's thread time: process start, NVRTC (with trace: its front
 * end, optimizer and ptxas), the SASS facts, the pipes and framing (a trip
 * less the child's work), the cache (look-ups and entries written). */
typedef struct JitProfile {
    int trace;                  /* in: NVRTC's parts (--fdevice-time-trace) */
    double t0;                  /* in: the clock spans start from (wall_now_ms); 0: each batch's
                                 * start.  Several batches (a search's rounds and compiles ahead)
                                 * may fill one profile at once. */
    double wall_ms;             /* the batches' walls, start to end, summed */
    int threads, sources, hits, programs;   /* programs: units compiled fresh */
    double start_ms, nvrtc_ms, fe_ms, nvvm_ms, ptxas_ms, facts_ms, ipc_ms, cache_ms;
    JitSpan *spans;             /* one per unit compiled fresh, malloc'd */
    int nspans, cap;
} JitProfile;

/* Free a profile's spans (the struct is the caller's); accepts NULL. */
void jit_profile_free(JitProfile *p);

/* The profile as three lines: the counts and wall; the busy compile
 * processes in each tenth of the compiles' wall and their mean; the
 * seconds of each part. */
void jit_profile_print(const JitProfile *p, FILE *f);

struct JitJob {
    /* in */
    const char *name;           /* for messages: the source's file name */
    const char *source;
    const char *arch;           /* "sm_90" */
    const char *const *options; /* extra NVRTC options from the spec */
    int noptions;
    int use_cccl;
    const char *origins;        /* per line of source, "FILE:LINE" of the template line it
                                   came from or "" (gen/plan.h Source.origins); NULL: none */
    /* set by jit_compile_all: more jobs include the same headers for the same
     * arch than there are compile processes, so a process precompiles them
     * (jitproc.c) for the next one it gets */
    int pch;
    /* out */
    int ok;                     /* 1 compiled; 0 compile error (log says why) */
    int cached;                 /* 1 when served from the cache */
    int crashed;                /* 1 when its compile process died on it (ok 0, the log
                                 * says how; not cached) */
    char key[65];
    char *ptx; size_t ptx_len;          /* malloc'd */
    void *cubin; size_t cubin_len;      /* malloc'd */
    char *log;                          /* NVRTC log, malloc'd, may be "" */
    char *dir;                          /* cache entry dir, malloc'd, or NULL */
    double compile_ms;          /* of the compile that made it (cached: original) */
    int regs;                   /* ptxas report; -1 when absent */
    int spill_stores, spill_loads;      /* bytes */
    int smem_static;            /* bytes */
    int stack;                  /* stack frame, bytes */
    int cmem;                   /* constant bank 0, bytes */
    char *inspect_json;         /* set by an `after` hook (run: inspect_job_json), malloc'd */
    char *sass;                 /* a fresh compile's SASS listing (its own functions), malloc'd,
                                 * kept in its entry for inspect; NULL: none made */
    char *cache_warning;        /* why the cache could not take this compile, malloc'd, or
                                 * NULL; the job is fine (jit_compile_all says it once) */
    char sum[65];               /* the checksum of the entry at dir ("" without one) */
    /* A grouped program's member (compile/jit_group.c): its entry point K is
     * K<symbol> in the CUBIN, which the program's other members share
     * (cubin_blob); "" and 1 for a source compiled alone.  PTX, log, figures
     * and facts are the member's own, with its names as in its source. */
    char symbol[16];
    int group;                  /* sources in the program that made it */
    JitBlob *cubin_blob;        /* non-NULL: cubin points into it (a shared reference) */
    /* where the time went (--profile), ms, a member's share of its program's */
    double facts_ms;            /* the SASS facts: disassembly and reading */
    double fe_ms, nvvm_ms, ptxas_ms;    /* NVRTC's parts, with JitOptions.trace; else 0 */
};

/* NVRTC's version as "13.0", and its supported archs as "sm_75,sm_80,...". */
int jit_nvrtc_version(int *major, int *minor);
char *jit_supported_archs(void);        /* malloc'd, NULL if NVRTC fails */

/* Locate the CUDA toolkit include dir: $CUDA_HOME/include, $CUDA_PATH/include,
 * the dir baked in at build time, /usr/local/cuda/include.  malloc'd or NULL. */
char *jit_find_cuda_include(void);

/* Compile one job (thread-safe).  Returns 0 when the job ran (ok says whether it
 * compiled; a cache that could not take it leaves job->cache_warning), or -1
 * with err when something other than the source failed (NVRTC missing, options
 * rejected, the scratch directory unwritable). */
int jit_compile(JitJob *job, const JitOptions *opt, KvxError *err);

/* Compile n jobs on a pool of opt->threads threads, the cache misses in
 * compile processes when enabled (jitproc.h: a child's death is that job's
 * failed compile, not cached), with the SASS facts of each fresh compile
 * kept in its entry (inspect_job_keep); on_done (may be NULL) is
 * called from the worker thread as each finishes, serialised by a mutex.  The
 * first job whose cache_warning is set prints it on stderr (the first of the
 * process only), and the later jobs write no more to the cache.  Returns 0, or -1 if any job hit a non-source failure
 * (first error in err). */
int jit_compile_all(JitJob *jobs, int n, const JitOptions *opt,
                    void (*on_done)(void *ctx, JitJob *job), void *ctx, KvxError *err);

void jit_job_release(JitJob *job);      /* frees outputs, keeps inputs */

/* A file of the job's cache entry besides the compile's own, such as the SASS
 * facts: kept under name (no '/', not starting with '.') with a checksum tied
 * to the entry's, written under a temporary name and renamed (safe on several
 * threads and processes).  Best-effort: 0, or -1 when the job has no entry or
 * the file cannot be written. */
int jit_cache_put(const JitJob *job, const char *name, const void *data, size_t len);

/* That file back, malloc'd and NUL-terminated, its length in *len; NULL when
 * absent, or when it does not match its checksum (said on stderr: the caller
 * makes it again). */
char *jit_cache_get(const JitJob *job, const char *name, size_t *len);

/* A private directory for JitOptions.scratch, made under $TMPDIR (else /tmp)
 * on first use only: where the cache takes every compile there is none, and
 * a killed run leaves none behind. */
JitScratch *jit_scratch_new(void);

/* Remove the directory, if it was made, with its entries.  Accepts NULL. */
void jit_scratch_free(JitScratch *s);

/* A failed compile's log gets a last line naming the fix where NVRTC could not
 * open a CCCL header (cuda/std/..., cub/, thrust/, cooperative_groups) and
 * the job did not ask for CCCL (`headers: [cccl]`). */
void jit_log_hint(JitJob *job);

/* The warning lines of a log (NVRTC's "NAME(12): warning ...", with the
 * source line and caret that follow, and "ptxas warning"), malloc'd; NULL
 * when there is none. */
char *jit_log_warnings(const char *log);

/* log with each NVRTC line "NAME(N): ..." of job's source prefixed by the
 * template's "FILE:LINE: " where job->origins knows line N; malloc'd (a copy
 * without origins). */
char *jit_log_map(const JitJob *job, const char *log);

/* Parse ptxas -v output ("Used 12 registers, ...") into job's figures. */
void jit_parse_ptxas(const char *log, JitJob *job);

/* One entry function's figures in a ptxas report (-1 when absent). */
#define JIT_MAX_KERNELS 16
typedef struct JitKernelFacts {
    char name[128];
    int regs, spill_stores, spill_loads;    /* registers per thread; spill bytes */
    int smem_static, stack;                 /* bytes */
} JitKernelFacts;

/* Each entry function of a ptxas report, in the report's order (ptxas
 * compiles the last in the source first), at most max: the count. */
int jit_ptxas_kernels(const char *log, JitKernelFacts *out, int max);

/* Those as a JSON array [{"kernel":"k","regs":32,"spill_stores":0,
 * "spill_loads":0,"smem_static":32,"stack":0}, ...] (null for an absent
 * figure), appended to out. */
void jit_kernels_json(const JitKernelFacts *k, int n, StrBuf *out);

/* Parse a kernel's parameter list from PTX: the widths in bytes and whether each
 * is a float (".f32"/".f64").  Returns the count, or -1 if kernel is absent. */
typedef struct PtxParam { int size; int is_float; int align; } PtxParam;
int jit_ptx_params(const char *ptx, const char *kernel, PtxParam *out, int max);

/* The cache folder when none is given: $KVX_CACHE_DIR, $XDG_CACHE_HOME/kvx
 * or ~/.cache/kvx (.kvx/cache without a home); malloc'd. */
char *jit_default_cache_dir(void);

#endif
