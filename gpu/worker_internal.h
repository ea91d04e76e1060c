/* worker_internal: what the files of the worker process share, internal to
 * them (worker.h is the public face): the worker's state (WorkerState: the
 * caches of worker.h; CaseLaunch: the case being run), then by file:
 * worker.c runs cases (worker_fail, worker_step, worker_is_sticky: a case's
 * failure reported; worker_function, worker_launch_raw,
 * worker_prepare_launch, worker_enqueue_launch, worker_launch_once: modules,
 * limits, launches; worker_lap: the steps' times); worker_buffers.c lays out
 * their buffers (worker_buffers_prepare, worker_buffers_release,
 * worker_reset_enqueue, worker_host_input); worker_verify.c verifies one
 * (worker_host_refs_start, worker_host_refs_join, worker_host_reads,
 * worker_verify_case, worker_checks_ready, worker_compare_case);
 * worker_time.c times it (worker_flush_prepare, worker_flush_read,
 * worker_time_case); worker_compare.c compares on the device and fills
 * inputs there (worker_compare_device, worker_compare_span,
 * worker_compare_multiset, worker_upload, worker_fill_device,
 * worker_compare_close); worker_ref.c runs reference kernels
 * (worker_reference); worker_device.c describes devices and answers the
 * probe (worker_device_info_query, worker_start_write). */
#ifndef KVX_WORKER_INTERNAL_H
#define KVX_WORKER_INTERNAL_H

#include "worker.h"
#include "cudadl.h"
#include "host/measure_plan.h"
#include "nvml.h"
#include "nvtx.h"

#include <pthread.h>

/* ---- the worker's state ---------------------------------------------------- */

/* A loaded module and its last kernel, with the kernel's attributes: they do
 * not change between cases, and four cuFuncGetAttribute calls per case add up
 * over thousands of cases. */
typedef struct Module {
    char path[1024];
    /* the file's identity: the members of a grouped program have one CUBIN,
     * linked into each entry (compile/jit_group.c), loaded once */
    unsigned long long dev, ino, size;
    long long mtime_ns;
    CUmodule mod;
    uint64_t used;          /* clock of the last use, for LRU eviction */
    char kernel[128];       /* "" until looked up */
    CUfunction fn;
    int regs, max_threads, smem_static, dyn_max;    /* cuFuncGetAttribute */
    int cluster_ok;         /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED was set */
} Module;

/* Inputs kept across workload points, least recently used evicted first once
 * the cache holds more than this many bytes (host and device each), or more
 * entries than WORKER_MAX_INPUTS less one case's buffers.  Contention's inputs
 * at both sizes (480 MB) stay, and groups that alternate sizes do not
 * regenerate them. */
#define WORKER_INPUT_CACHE_BYTES (2ULL << 30)
#define WORKER_MAX_INPUTS (2 * CASE_MAX_BUFS)

/* A generated buffer content: an input, or the init of an output. */
typedef struct HostCopy {
    char key[65];
    void *data;
    uint64_t bytes;
    uint64_t used;          /* clock of the last use */
    int uniform;            /* as an output's init: -1 not yet known, 0 mixed, else the
                             * element size of a value every element repeats */
} HostCopy;

/* An uploaded input; its layout depends on the buffer's offset. */
typedef struct DevCopy {
    char key[65];
    uint64_t offset;
    CUdeviceptr base;       /* at WORKER_BUF_ALIGN */
    CUdeviceptr raw;        /* what cuMemAlloc returned, for cuMemFree */
    uint64_t bytes;
    uint64_t used;
} DevCopy;

/* A device allocation for outputs, kept for the next cases instead of a
 * cuMemAlloc and a cuMemFree per case; an output is reset to its init before
 * every launch, so what a previous case left in it is never seen. */
#define WORKER_MAX_OUTS (2 * CASE_MAX_BUFS)
typedef struct OutBuf {
    CUdeviceptr base;       /* at WORKER_BUF_ALIGN */
    CUdeviceptr raw;        /* what cuMemAlloc returned, for cuMemFree */
    uint64_t bytes;
    int busy;               /* lent to the current case */
} OutBuf;

/* Samples enqueued between two waits at most (three events each). */
#define WORKER_MAX_BATCH 64

/* The baseline variant's outputs, kept on the device: variants compare with
 * them there (worker_compare.c). */
typedef struct Baseline {
    char key[65];           /* workload_key; "" = free slot */
    uint64_t stamp;
    CUdeviceptr dev[CASE_MAX_BUFS]; /* by buffer index; 0 when not checked */
    ElemTypeId type[CASE_MAX_BUFS];
    uint64_t count[CASE_MAX_BUFS];
} Baseline;

/* A computed reference, kept for the next variants of the same workload point:
 * every variant of a point checks against the same host reference, and
 * computing it (a pass over up to 2^28 inputs) would otherwise dominate. */
#define WORKER_MAX_EXPECTED 8
typedef struct ExpCache {
    char key[65];
    uint64_t stamp;
    Expected exp;
    CUdeviceptr dev;        /* EXPECT_VALUES on the device (integers in the output's
                               type, floats as double), uploaded on first use; 0 */
} ExpCache;

/* A reference kernel's checked outputs, by reference key (worker_ref.c),
 * kept on the device where it wrote them. */
#define WORKER_MAX_REFERENCES 4
typedef struct RefCache {
    char key[65];
    uint64_t stamp;                 /* 0: free */
    CUdeviceptr base[CASE_MAX_BUFS];/* by buffer index; 0 when not kept */
    CUdeviceptr ptr[CASE_MAX_BUFS]; /* base + the reference's offset */
} RefCache;

typedef struct WorkerState {
    ExpCache expc[WORKER_MAX_EXPECTED];
    RefCache refs[WORKER_MAX_REFERENCES];
    int out_fd;
    DeviceInfo dev;
    CUdevice cudev;
    CUcontext ctx;
    CUstream stream;
    CUevent ev[2];
    CUevent bev[3 * WORKER_MAX_BATCH];  /* samples: before reset, start, end */
    double *kept;           /* --keep-samples: the case's sample times, ms (nkept of them) */
    int nkept, kept_cap;
    Nvml nvml;
    double lap;             /* wall_now_ms() at the end of the last step (worker_lap) */
    CUdeviceptr scratch;    /* L2 flush, 2 x L2 bytes, allocated on first use */
    size_t scratch_bytes;
    unsigned flush_value;   /* the byte of the next write flush */
    CUmodule flush_mod;     /* the read flush kernel, loaded on first use */
    CUfunction flush_fn;
    CUmodule devio_mod;     /* gpu/devio_ptx.h, loaded on first use */
    CUfunction cmp_fn;      /* its kvx_compare */
    CUdeviceptr chunks;     /* VerifyChunk records of one comparison */
    uint64_t chunks_bytes;
    VerifyChunk *hchunks;   /* their host copy */
    CUdeviceptr cmp_const;  /* 8 bytes: a constant reference */
    CUfunction fill_fn;     /* devio's kvx_fill */
    CUfunction sort_fn[4];  /* devio's kvx_sort_key, _count, _scan, _scatter */
    CUdeviceptr fill_plan;  /* one InputsPlan, allocated on first use */
    CUfunction mset_fn;     /* devio's kvx_mset_hash */
    CUdeviceptr mset_sums;  /* its DEVIO_MSET_SUMS u64 fingerprint sums, allocated on first use */
    int threads;            /* for input generation */
    uint64_t clock;
    uint64_t case_clock;    /* the clock when the current case began: a cached
                             * input used since is the case's own */
    Module mods[WORKER_MAX_MODULES];
    int nmods;
    int max_mods;           /* WORKER_MAX_MODULES, or fewer for a test (worker_open) */
    /* Inputs of the current workload point: at most one entry per buffer of a
     * case, since entries a case does not use are evicted when it starts. */
    HostCopy hosts[WORKER_MAX_INPUTS];
    int nhosts;
    DevCopy devs[WORKER_MAX_INPUTS];
    int ndevs;
    OutBuf outs[WORKER_MAX_OUTS];
    int nouts;
    void *hout[CASE_MAX_BUFS];          /* downloaded outputs, by buffer index */
    uint64_t hout_bytes[CASE_MAX_BUFS];
    Baseline baselines[WORKER_MAX_BASELINES];
} WorkerState;

typedef enum { RESET_D8, RESET_D16, RESET_D32, RESET_COPY } ResetKind;

/* How one output is brought back to its init before a launch. */
typedef struct Reset {
    ResetKind kind;
    uint32_t pattern;
    CUdeviceptr ptr;
    uint64_t bytes;
    const void *host;
} Reset;

/* A host reference computed on a thread of its own while the GPU runs the
 * case (worker_verify.c): started once the inputs exist, joined when the
 * outputs are compared, after the samples. */
typedef struct HostJob {
    char key[65];           /* host_ref_key(); the result goes into WorkerState.expc */
    int check;              /* index into CaseDesc.checks */
    RefArg args[CASE_MAX_REFARGS];
    Expected exp;
    int rc;                 /* verify_reference_threads' */
} HostJob;

typedef struct HostRefs {
    pthread_t tid;
    int started;            /* tid runs the jobs; 0: run them at the join */
    int threads;
    const CaseDesc *c;
    int n;
    HostJob job[CASE_MAX_BUFS];
} HostRefs;

/* One case being run. */
typedef struct CaseLaunch {
    CUfunction f[CASE_MAX_LAUNCHES];  /* by launch: the first, then CaseDesc.next */
    CUdeviceptr base[CASE_MAX_BUFS];  /* 256-aligned allocation */
    CUdeviceptr ptr[CASE_MAX_BUFS];   /* base + offset elements: what the kernel gets */
    int owned[CASE_MAX_BUFS];         /* outputs and scratch: index into WorkerState.outs + 1;
                                         inputs are cached */
    const void *host[CASE_MAX_BUFS];  /* host content: input, or output init */
    Reset reset[CASE_MAX_BUFS];
    void *out[CASE_MAX_BUFS];         /* host copies of outputs (the worker's hout) */
    int downloaded[CASE_MAX_BUFS];    /* out[i] holds the output: a host comparison needed it */
    void *argv[CASE_MAX_LAUNCHES][CASE_MAX_ARGS];
    uint64_t scalars[CASE_MAX_LAUNCHES][CASE_MAX_ARGS];
    const RefCache *ref;              /* the reference's outputs, when the case has one */
    double spent_ms;                  /* of the budget: wall time of the verified launch */
    HostRefs hrefs;                   /* host references not cached: computed aside */
} CaseLaunch;

/* ---- worker.c ------------------------------------------------------------------ */

/* Set res's status and detail (printf-style).  Returns -1, for `return
 * worker_fail(...)`. */
int worker_fail(CaseResult *res, CaseStatus st, const char *fmt, ...) KVX_PRINTF(3, 4);

/* Check a driver call made while running a case.  0 on success.  A sticky
 * error, or any error reported by a synchronisation (sync = 1: what failed may
 * be any earlier asynchronous work), is a fault: the result is sent and the
 * process exits.  Other errors make the case a launch_error; -1. */
int worker_step(WorkerState *w, CaseResult *res, CUresult r, const char *call, int sync);

/* After these the context is unusable: only a new process can use the GPU. */
int worker_is_sticky(CUresult r);

/* The module at cubin_path, loaded once (LRU of WORKER_MAX_MODULES), with
 * kernel as its function (m->fn) and that kernel's attributes.  0, or -1 with
 * res load_error (a fault ends the worker). */
int worker_function(WorkerState *w, const char *cubin_path, const char *kernel, Module **out,
                    CaseResult *res);

/* Enqueue one launch of f on the worker's stream (cuLaunchKernelEx for a
 * cluster of more than one block). */
CUresult worker_launch_raw(WorkerState *w, CUfunction f, const uint32_t grid[3], const uint32_t block[3],
                           const uint32_t cluster[3], uint32_t smem, void **argv);
/* Close a step of the case's profile: the time since the last call goes to
 * res->t_step[step].  Returns wall_now_ms(). */
double worker_lap(WorkerState *w, CaseResult *res, CaseStep step);

/* Enqueue what precedes a launch: the outputs' resets and the L2 flush (mode
 * MEASURE_FLUSH_*).  0, or -1 with res set. */
int worker_prepare_launch(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int flush, CaseResult *res);

/* Enqueue the case's launches, in order.  0, or -1 with res set. */
int worker_enqueue_launch(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res);

/* Reset the outputs, flush L2 (mode MEASURE_FLUSH_* in flush), launch between
 * the two events and wait.  The launch's time goes to *ms when given, else (the
 * verified launch) to res->launch_ms, with its wall time to run->spent_ms and
 * the step verify closed.  0, or -1 with res set; faults do not return. */
int worker_launch_once(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int flush, float *ms,
                       CaseResult *res);

/* ---- worker_buffers.c ---------------------------------------------------------- */

/* Lay out every buffer of c into run (inputs from the cache, outputs in kept
 * allocations with their resets planned, the launch arguments bound); 0, or
 * -1 with res set. */
int worker_buffers_prepare(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res);
/* The case's output allocations back to the kept ones. */
void worker_buffers_release(WorkerState *w, const CaseDesc *c, CaseLaunch *run);

/* Enqueue r (an output's reset: a memset or a copy from its host init) on
 * the worker's stream. */
CUresult worker_reset_enqueue(WorkerState *w, const Reset *r);

/* The host copy of input b (generated once per key, the time to
 * res->host_wait_ms); NULL with res skipped when it cannot be made. */
const void *worker_host_input(WorkerState *w, const CaseBuf *b, CaseResult *res);

/* ---- worker_verify.c ---------------------------------------------------------- */

/* Start computing, on a thread of its own, each host reference of c that the
 * worker has not cached; run's inputs (run->host) must stay until the join.
 * A thread that cannot be created leaves the work to worker_compare_case. */
void worker_host_refs_start(WorkerState *w, const CaseDesc *c, CaseLaunch *run);

/* Wait for the host references started for run, if any (the wait goes to
 * res->host_wait_ms), and cache their results.  Safe to call twice. */
void worker_host_refs_join(WorkerState *w, CaseLaunch *run, CaseResult *res);

/* Whether a host reference of c reads buffer buf: its host copy is then
 * needed; otherwise an input is generated on the device alone. */
int worker_host_reads(const CaseDesc *c, int buf);

/* One untimed launch.  0 (the case is then timed and compared), or -1
 * (launch_error). */
int worker_verify_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res);

/* 0 when every reference the case's checks need will be there after the
 * samples (the baseline's output has been kept), else -1 with res skipped:
 * the case is not timed for nothing. */
int worker_checks_ready(WorkerState *w, const CaseDesc *c, CaseResult *res);

/* The outputs compared with their references, on the device
 * (worker_compare.c; a set reference on the host), after joining the host
 * references: status ok or mismatch, rel_err and the first differing
 * elements; a reference that cannot be computed makes the case skipped and
 * drops its samples.  0, or -1 with res set. */
int worker_compare_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res);

/* ---- worker_time.c ------------------------------------------------------------ */

/* Allocate the flush buffer and load the read flush kernel (mode
 * MEASURE_FLUSH_*) if not yet done.  0, or -1 with res filled (skipped). */
int worker_flush_prepare(WorkerState *w, int mode, CaseResult *res);
/* Enqueue the read flush (prepared) on the worker's stream, with flush_ptx.h's
 * geometry, the one kvx-peers uses.  0, or -1 with res set. */
int worker_flush_read(WorkerState *w, CaseResult *res);

/* Warm-up (measure_plan_warmups), then samples in batches (measure_plan_batch) until
 * the noise target is met after min_samples, or max_samples, or the budget is
 * spent (the budget wins over min_samples); the clocks are read while the first
 * batch runs.  Fills res's statistics, gpu times, clocks and t_measure_ms.  0,
 * or -1 with res set. */
int worker_time_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res);

/* ---- worker_compare.c ---------------------------------------------------------- */

/* Where a check's reference lies: on the device (ptr: elements of type t,
 * stride 1; or one value, stride 0), or only on the host (exp: a host
 * reference other than a list of values). */
typedef struct RefSite {
    CUdeviceptr ptr;
    const ElemType *t;
    uint64_t stride;
    const Expected *exp;
} RefSite;

/* Compare output buffer k->buf of run, on the device, with site (ptr set):
 * only the chunks' figures and the slices that hold the first differing
 * elements cross to the host.  rep as verify_compare fills it.  0, or -1
 * with res set (a fault ends the worker). */
int worker_compare_device(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                          const RefSite *site, double rtol, VerifyReport *rep, CaseResult *res);

/* Compare count elements of type t at out (a prefix of an output, named
 * bufname), on the device, with site (ptr set), in order; as
 * worker_compare_device.  0, or -1 with res set. */
int worker_compare_span(WorkerState *w, CUdeviceptr out, const ElemType *t, uint64_t count, const RefSite *site,
                        double rtol, const char *bufname, VerifyReport *rep, CaseResult *res);

/* Compare count elements of type t at out with count at site (ptr set,
 * stride 1) as multisets, on the device.  Integers: each side's fingerprint
 * (kvx_mset_hash: order-free sums of mixed bits, host/verify.h's
 * verify_mset_host) decides the common ok, with no sort; where they differ,
 * or for floats, both sides are sorted there (kvx_sort_*), then compared in
 * order: integers exactly, floats by the norm-wise tolerance.  A mismatch of
 * integers downloads the two sorted copies and lists the values written more
 * or fewer times than expected (verify_multiset_sorted); of floats, the
 * first differing sorted positions.  0, or -1 with res set. */
int worker_compare_multiset(WorkerState *w, CUdeviceptr out, const ElemType *t, uint64_t count,
                            const RefSite *site, double rtol, const char *bufname, VerifyReport *rep,
                            CaseResult *res);

/* Copy n bytes to a new device allocation *dev (the stream synchronised).
 * 0, or -1 with res set. */
int worker_upload(WorkerState *w, CUdeviceptr *dev, const void *host, uint64_t n, CaseResult *res);

/* Generate count elements of the input plan describes at dst on the device
 * (kvx_fill), enqueued on the stream: the caller waits.  0, or -1 with res
 * set. */
int worker_fill_device(WorkerState *w, const InputsPlan *plan, CUdeviceptr dst, uint64_t count, CaseResult *res);

/* Release what worker_compare.c holds (worker_close). */
void worker_compare_close(WorkerState *w);

/* ---- worker_ref.c -------------------------------------------------------------- */

/* The outputs of c's reference kernel (c->ref), run on run's host contents on
 * a miss.  NULL with res skipped and ref_failed when it could not run (a fault
 * or a timeout ends the worker after sending res). */
const RefCache *worker_reference(WorkerState *w, const CaseDesc *c, const CaseLaunch *run, CaseResult *res);

/* ---- worker_device.c ----------------------------------------------------------- */

/* Fill d for device ordinal (cuInit done, no context needed).  0 or -1 with err. */
int worker_device_info_query(int ordinal, DeviceInfo *d, KvxError *err);

/* Send the start frame: started when err is NULL or clear, else err's code and
 * message (the reason the worker or the probe could not start).  0 or -1. */
int worker_start_write(int fd, const KvxError *err);

#endif
