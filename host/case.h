/* case: one case (a compiled variant at one workload point) fully resolved by
 * the parent, sent to a worker over a pipe, and the worker's result sent back.
 *
 * Everything the worker needs is in the description: no spec, no expressions.
 * The wire format (case_write/case_read, case_result_write/case_result_read) is a simple
 * length-prefixed binary stream between two processes of the same binary; it is
 * not a file format and carries no version. */
#ifndef KVX_CASE_H
#define KVX_CASE_H

#include "inputs.h"
#include "verify.h"

#define CASE_MAX_BUFS 16
#define CASE_MAX_ARGS 32
#define CASE_MAX_REFARGS 8
#define CASE_MAX_LAUNCHES 4      /* kernels a case launches in sequence (SPEC_MAX_LAUNCHES) */

/* Statuses, in the order they are tabulated.  X(name, meaning) */
#define CASE_STATUSES(X)                                                        \
    X(ok, "verified and measured")                                              \
    X(mismatch, "output differs from the reference")                            \
    X(compile_error, "NVRTC rejected the source")                               \
    X(load_error, "the driver could not load the module or find the kernel")    \
    X(launch_error, "the launch was refused")                                   \
    X(fault, "the kernel faulted (sticky error); the worker was replaced")      \
    X(timeout, "the case ran past its timeout; the worker was killed")          \
    X(skipped, "not run: a limit or precondition failed (see detail)")

typedef enum {
#define X(n, d) CASE_##n,
    CASE_STATUSES(X)
#undef X
    CASE_STATUS_COUNT
} CaseStatus;

extern const char *const case_status_names[CASE_STATUS_COUNT];

/* The steps of a case in a worker, in order, for the per-case profile:
 * X(name, meaning).  Host wall time; the GPU's own time is gpu_ms. */
#define CASE_STEPS(X)                                                           \
    X(send, "writing the previous case's result to the parent")                 \
    X(recv, "waiting for this case and reading it (idle: the parent, compiles)")\
    X(module, "module load (cached per worker) and kernel lookup")              \
    X(limits, "launch limits against the device and the kernel")                \
    X(buffers, "inputs generated and uploaded on a cache miss, outputs laid out")\
    X(ref_kernel, "the reference kernel (run once per reference key)")        \
    X(verify, "the verified launch: output reset, launch, wait")                \
    X(reference, "references: the host's joined (computed aside), uploaded")    \
    X(compare, "outputs compared with their references on the device")          \
    X(warmup, "warm-up launches")                                               \
    X(samples, "timed samples with their resets and flushes, and the waits")    \
    X(clocks, "SM and memory clocks (NVML)")                                    \
    X(stats, "statistics and the rest of the case")

typedef enum {
#define X(n, d) CASE_STEP_##n,
    CASE_STEPS(X)
#undef X
    CASE_STEP_COUNT
} CaseStep;

extern const char *const case_step_names[CASE_STEP_COUNT];
int case_status_find(const char *name);  /* -1 if unknown */

typedef struct CaseBuf {
    char name[64];
    ElemTypeId type;
    uint64_t count;          /* elements */
    uint64_t offset;         /* elements past a 256-byte aligned base */
    InitParams init;
    char input_key[65];      /* inputs_key(): equal keys share one generated input */
    int checked;             /* reset to its init before every launch; verified */
    int scratch;             /* CASE_SCRATCH_*: only the launches read it; never compared */
} CaseBuf;

/* A scratch buffer: RESET is brought back to its init before every launch
 * sequence, as an output is; UNINIT is allocated and never written by kvx. */
enum { CASE_SCRATCH_NO, CASE_SCRATCH_RESET, CASE_SCRATCH_UNINIT };

typedef struct CaseArg {
    int buf;                 /* >= 0: pointer to bufs[buf] (base + offset) */
    int size;                /* scalars: 1, 2, 4 or 8 bytes */
    int align;
    unsigned char bytes[8];  /* scalars, little-endian */
} CaseArg;

typedef struct CaseCheck {
    int buf;                 /* the output buffer checked */
    char ref[32];            /* reference function; "" = constant; "baseline" (the
                                baseline variant's output); "reference" (ref's) */
    RefArg args[CASE_MAX_REFARGS];  /* buffers: is_buf and count; data unset */
    int argbuf[CASE_MAX_REFARGS];   /* buffer index for buffer args, else -1 */
    int nargs;
    Value constant;          /* ref == "": every element equals this */
    char strs[CASE_MAX_REFARGS][16];/* storage for string args (op names) */
    double rtol;
    int order_any;           /* compared as multisets: the order written is free */
    int has_length;          /* only the first L elements are compared, L being the value
                                of bufs[length_buf] (one integer element) after the launch,
                                itself verified first; an L past the buffer is a mismatch */
    int length_buf;
} CaseCheck;

/* A launch of a case after its first (whose fields are CaseDesc's own): an
 * entry point of the same module, run on the same buffers, in order. */
typedef struct CaseKernel {
    char kernel[128];
    int nargs;
    CaseArg args[CASE_MAX_ARGS];
    uint32_t grid[3], block[3], cluster[3];
    uint32_t smem;           /* dynamic shared memory, bytes */
} CaseKernel;

/* A reference kernel's launch: run once on the case's inputs (its own buffer
 * layout) before the case, untimed, its outputs kept by the worker under key
 * for every case that names the same key. */
typedef struct CaseRef {
    int present;
    char key[65];            /* equal keys: equal reference outputs */
    char cubin_path[1024];
    char kernel[128];
    uint64_t offset[CASE_MAX_BUFS];   /* elements past a 256-byte base, per buffer */
    int nargs;
    CaseArg args[CASE_MAX_ARGS];
    uint32_t grid[3], block[3], cluster[3];
    uint32_t smem;
} CaseRef;

typedef struct CaseDesc {
    int64_t id;              /* parent's case number, echoed in the result */
    char cubin_path[1024];
    char kernel[128];
    int nbufs;
    CaseBuf bufs[CASE_MAX_BUFS];
    int nargs;
    CaseArg args[CASE_MAX_ARGS];
    uint32_t grid[3], block[3], cluster[3];
    uint32_t smem;           /* dynamic shared memory, bytes */
    /* The launches after the first, timed with it as one sample. */
    int nnext;
    CaseKernel next[CASE_MAX_LAUNCHES - 1];
    int nchecks;
    CaseCheck checks[CASE_MAX_BUFS];
    MeasureSettings measure;
    /* Differential mode: the baseline variant's output at this workload point is
     * kept by the worker under workload_key; a baseline case stores it, others
     * compare with it (ref "baseline"; a check against baseline() too).
     * is_baseline is set only where some variant compares with the copy. */
    char workload_key[65];
    int is_baseline;
    /* Checks with ref "reference" compare with ref's outputs. */
    CaseRef ref;
    /* What the parent's stdout and the database call it ("strategy=naive
     * n=4096"): the worker's NVTX ranges carry it (gpu/nvtx.h).  Cut at the
     * array's length. */
    char label[256];
    int keep_samples;        /* send every sample's time after the result (case_samples_write) */
    /* Where the parent publishes the host references it computes ahead
     * (host/hostref.h); "": the worker computes them. */
    char hostref_dir[1024];
} CaseDesc;

typedef struct CaseResult {
    int64_t id;
    CaseStatus status;
    char detail[1024];       /* CUDA error name and message, mismatch elements */
    double median_ms, min_ms, max_ms, mean_ms, stdev_ms, noise;
    int samples;
    double rel_err;          /* NaN when no float check */
    double t_input_ms, t_verify_ms, t_measure_ms;
    int ref_ran;             /* the worker ran the reference kernel for this case */
    int ref_failed;          /* it failed: every case of its key is skipped (detail says why) */
    /* Where the worker's time went, ms of host wall time by CASE_STEPS; the
     * steps tile the worker's time from the end of the previous case to the
     * end of this one (send is the previous result's). */
    double t_step[CASE_STEP_COUNT];
    double gpu_ms;           /* kernel time of the samples, summed (events) */
    double prep_gpu_ms;      /* GPU time of their resets and L2 flushes, summed (events) */
    double launch_ms;        /* the verified launch (events); NaN when it did not run */
    /* ms of host wall time the GPU had nothing of this case queued because the
     * worker was generating inputs or waiting for a host reference (computed
     * aside while the GPU runs the case: only what was left after the samples) */
    double host_wait_ms;
    int warmups;             /* warm-up launches done (measure_plan_warmups) */
    int launches;            /* kernel launches in all: verify, warm-ups, samples (batch tails
                                too); each kernel of a launch list counts */
    int sm_mhz, mem_mhz;     /* clocks read after the samples (NVML); 0 = not known */
    int sm_max_mhz, mem_max_mhz;
    int throttled;           /* 1: sm_mhz below CASE_THROTTLE_SHARE of sm_max_mhz */
    /* Scalar outputs after the verified launch, for metrics that read them:
     * bit b of out_known set when out_value[b] is element 0 of checked
     * one-element buffer b (as a double: integers exact up to 2^53). */
    uint32_t out_known;
    double out_value[CASE_MAX_BUFS];
    /* A frame of this many sample times (ms, in the order taken) follows the
     * result (CaseDesc.keep_samples); 0: none. */
    int samples_follow;
} CaseResult;

/* The sample times one result carries at most (--keep-samples): 8 MiB. */
#define CASE_SAMPLES_KEPT_MAX (1 << 20)

#define CASE_THROTTLE_SHARE 0.9

/* Launch i of c (0: the first, from c's own fields; 1..nnext: next[i-1]) into k. */
void case_kernel_at(const CaseDesc *c, int i, CaseKernel *k);

/* Write/read over a file descriptor.  0, or -1 on a short read/write (the peer
 * died): the caller treats that as the worker's death.  case_read also fails on
 * a frame that is not a CaseDesc or whose indices are out of range, and restores
 * what pointers cannot carry: a buffer RefArg's t (from its buffer's type) and
 * string Values (into strs[]); RefArg data is NULL.  A string `constant` is a
 * broken invariant.  The parent should ignore SIGPIPE, so that a write to a dead
 * worker returns -1 instead of killing it. */
int case_write(int fd, const CaseDesc *c);
int case_read(int fd, CaseDesc *c);
int case_result_write(int fd, const CaseResult *r);
int case_result_read(int fd, CaseResult *r);
/* The n sample times after a result whose samples_follow is n (1 ..
 * CASE_SAMPLES_KEPT_MAX).  0 or -1, as above. */
int case_samples_write(int fd, const double *t, int n);
int case_samples_read(int fd, double *t, int n);

/* The framing every message between parent and worker uses (worker.c sends its
 * DeviceInfo with it): a tag, a byte count, the bytes.  Loops over short reads
 * and writes and EINTR.  case_wire_recv fails (-1) on EOF, an error, or a frame whose
 * tag or size differ from the expected ones. */
int case_wire_send(int fd, uint32_t tag, const void *data, uint32_t n);
int case_wire_recv(int fd, uint32_t tag, void *data, uint32_t n);

#endif
