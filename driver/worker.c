/* worker: one GPU's process.  Loads modules, lays out buffers, launches,
 * verifies and times cases sent by the parent (see worker.h for the protocol
 * and the caches).
 *
 * A case goes: module -> limits -> buffers -> one untimed verified launch ->
 * warm-up -> timed samples.  Outputs (checked buffers) are reset to their init
 * before every launch, outside the timed region, by the narrowest memset that
 * writes the init or else a host-to-device copy.  A case whose output differs
 * from the reference is still timed and stored as mismatch: the cost of a
 * wrong-but-fast variant is worth seeing, and the status keeps it out of any
 * "fastest correct" reading.  The worker is single-threaded: one stream, two
 * events, and the primary context current on this thread. */
#include "worker.h"
#include "cudadl.h"
#include "fake.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAG_START 0x54525453u  /* "STRT": a worker's or the probe's first frame */
#define TAG_DEVICE 0x49564544u /* "DEVI" */
#define TAG_COUNT 0x544e4f43u  /* "CONT": the probe's device count */

/* ---- device info ---------------------------------------------------------- */

/* Attributes read into DeviceInfo.  Optional ones read as 0 where a driver does
 * not report them (CUDA 13 deprecates the clock attributes). */
static const struct {
    CUdevice_attribute attr;
    size_t off;
    int wide;       /* int64_t field */
    int optional;
} device_attrs[] = {
#define A(attr, field, wide, opt) {attr, offsetof(DeviceInfo, field), wide, opt}
    A(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, l2_bytes, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, max_threads_block, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, max_block[0], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, max_block[1], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, max_block[2], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, max_grid[0], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, max_grid[1], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, max_grid[2], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, smem_block, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, smem_block_optin, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, smem_sm, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, regs_sm, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, regs_block, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, max_threads_sm, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_WARP_SIZE, warp, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, clock_khz, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, mem_clock_khz, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, bus_width, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, cluster_launch, 0, 1),
#undef A
};

/* Fill d for device ordinal (cuInit done, no context needed).  0 or -1. */
static int device_query(int ordinal, DeviceInfo *d, KvxError *err)
{
    CUdevice dev;
    CUuuid u;
    size_t mem = 0;
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    d->driver_version = cu.driver_version;
    if (CU_CHECK(err, cu.cuDeviceGet(&dev, ordinal)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetName(d->name, (int)sizeof d->name, dev)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetUuid(&u, dev)) < 0 ||
        CU_CHECK(err, cu.cuDeviceTotalMem(&mem, dev)) < 0)
        return -1;
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    if (cu.cuDeviceGetPCIBusId(d->pci_bus, (int)sizeof d->pci_bus, dev) != CUDA_SUCCESS)
        d->pci_bus[0] = 0;
    d->mem_bytes = (int64_t)mem;
    for (size_t i = 0; i < sizeof device_attrs / sizeof device_attrs[0]; i++) {
        int v = 0;
        CUresult r = cu.cuDeviceGetAttribute(&v, device_attrs[i].attr, dev);
        if (r != CUDA_SUCCESS && !device_attrs[i].optional)
            return cudadl_check(r, "cuDeviceGetAttribute", __FILE__, __LINE__, err);
        if (r != CUDA_SUCCESS)
            v = 0;
        char *field = (char *)d + device_attrs[i].off;
        if (device_attrs[i].wide)
            *(int64_t *)(void *)field = v;
        else
            *(int *)(void *)field = v;
    }
    d->peak_gbs = 2.0 * d->mem_clock_khz * 1e3 * (d->bus_width / 8.0) / 1e9;
    return 0;
}

int device_info_write(int fd, const DeviceInfo *d)
{
    return wire_send(fd, TAG_DEVICE, d, (uint32_t)sizeof *d);
}

int device_info_read(int fd, DeviceInfo *d)
{
    if (wire_recv(fd, TAG_DEVICE, d, (uint32_t)sizeof *d) < 0)
        return -1;
    d->name[sizeof d->name - 1] = 0;
    d->uuid[sizeof d->uuid - 1] = 0;
    d->pci_bus[sizeof d->pci_bus - 1] = 0;
    return 0;
}

void device_info_facts(const DeviceInfo *d, DeviceFacts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->arch, sizeof f->arch, "sm_%d%d", d->cc_major % 100, d->cc_minor % 10);
    snprintf(f->name, sizeof f->name, "%.127s", d->name);
    f->cc = d->cc_major * 10 + d->cc_minor;
    f->sm_count = d->sm_count;
    f->l2_bytes = d->l2_bytes;
    f->warp = d->warp;
    f->max_threads = d->max_threads_block;
    f->smem_block = d->smem_block_optin;
    f->smem_sm = d->smem_sm;
    f->regs_sm = d->regs_sm;
    f->max_threads_sm = d->max_threads_sm;
    f->peak_gbs = d->peak_gbs;
    f->mem_bytes = d->mem_bytes;
    f->nominal = 0;
}

/* ---- start frames and the probe -------------------------------------------- */

typedef struct StartFrame {
    int32_t code;           /* 0: started; else a KvxCode, msg says why */
    char msg[1536];
} StartFrame;

static int start_write(int fd, const KvxError *err)
{
    StartFrame s;
    memset(&s, 0, sizeof s);
    if (err && err->code) {
        s.code = err->code;
        memcpy(s.msg, err->msg, sizeof s.msg - 1);
    }
    return wire_send(fd, TAG_START, &s, (uint32_t)sizeof s);
}

/* 0 started, 1 the peer reported a failure (err set), -1 the pipe failed. */
static int start_read(int fd, KvxError *err)
{
    StartFrame s;
    if (wire_recv(fd, TAG_START, &s, (uint32_t)sizeof s) < 0)
        return -1;
    if (s.code == 0)
        return 0;
    s.msg[sizeof s.msg - 1] = 0;
    kvx_error_set(err, s.code, NULL, "%s", s.msg);
    return 1;
}

int worker_start_read(int fd, DeviceInfo *d, KvxError *err)
{
    int rc = start_read(fd, err);
    if (rc == 0 && device_info_read(fd, d) == 0)
        return 0;
    if (rc != 1)
        kvx_error_set(err, KVX_EIO, NULL, "the GPU worker died before reporting its device");
    return -1;
}

int worker_probe_main(int out_fd)
{
    KvxError err = {0};
    int n = 0;
    if (cudadl_load(&err) == 0 && CU_CHECK(&err, cu.cuInit(0)) == 0 &&
        CU_CHECK(&err, cu.cuDeviceGetCount(&n)) == 0 && n == 0)
        kvx_error_set(&err, KVX_EFAIL, NULL, "the CUDA driver reports no GPU");
    /* Query every device before answering, so that a failure is one message. */
    DeviceInfo *all = xcalloc((size_t)(n > 0 ? n : 1), sizeof *all);
    for (int i = 0; !err.code && i < n; i++)
        device_query(i, &all[i], &err);
    int rc = start_write(out_fd, &err);
    if (rc == 0 && !err.code) {
        int32_t count = n;
        rc = wire_send(out_fd, TAG_COUNT, &count, sizeof count);
        for (int i = 0; rc == 0 && i < n; i++)
            rc = device_info_write(out_fd, &all[i]);
    }
    free(all);
    return rc == 0 ? 0 : 1;
}

int worker_probe(DeviceInfo *out, int max, int *n, KvxError *err)
{
    if (fake_gpus() > 0) /* test hook (fake.h): no child, no CUDA */
        return fake_probe(out, max, n, err);
    int p[2];
    *n = 0;
    if (pipe(p) < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "GPU probe: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "GPU probe: fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* exec, not just fork: a process that has run NVRTC (13.0) can no
         * longer hand CUDA to a forked child (cuInit: NOT_INITIALIZED). */
        char fd[16];
        close(p[0]);
        snprintf(fd, sizeof fd, "%d", p[1]);
        execl("/proc/self/exe", "kvx", "__probe", fd, (char *)NULL);
        _exit(127);
    }
    close(p[1]);

    int rc = start_read(p[0], err), ok = 0;
    int32_t count = 0;
    if (rc == 0 && wire_recv(p[0], TAG_COUNT, &count, sizeof count) == 0) {
        DeviceInfo d;
        ok = 1;
        for (int i = 0; i < count && ok; i++) {
            ok = device_info_read(p[0], &d) == 0;
            if (ok && i < max)
                out[i] = d;
        }
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 1)
        return -1;
    if (!ok) {
        if (WIFSIGNALED(status))
            kvx_error_set(err, KVX_EIO, NULL, "the GPU probe process died (signal %d)",
                          WTERMSIG(status));
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            kvx_error_set(err, KVX_EIO, NULL, "GPU probe: cannot run /proc/self/exe __probe");
        else
            kvx_error_set(err, KVX_EIO, NULL, "the GPU probe process ended without an answer");
        return -1;
    }
    *n = count;
    return 0;
}

/* ---- the worker's state ---------------------------------------------------- */

typedef struct Module {
    char path[1024];
    CUmodule mod;
    uint64_t used;          /* clock of the last use, for LRU eviction */
} Module;

/* A generated buffer content: an input, or the init of an output. */
typedef struct HostCopy {
    char key[65];
    void *data;
} HostCopy;

/* An uploaded input; its layout depends on the buffer's offset. */
typedef struct DevCopy {
    char key[65];
    uint64_t offset;
    CUdeviceptr base;
} DevCopy;

typedef struct Baseline {
    char key[65];           /* workload_key; "" = free slot */
    uint64_t stamp;
    void *data[CASE_MAX_BUFS];      /* by buffer index; NULL when not checked */
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
} ExpCache;

typedef struct Worker {
    ExpCache expc[WORKER_MAX_EXPECTED];
    int out_fd;
    DeviceInfo dev;
    CUdevice cudev;
    CUcontext ctx;
    CUstream stream;
    CUevent ev[2];
    CUdeviceptr scratch;    /* L2 flush, 2 x L2 bytes, allocated on first use */
    size_t scratch_bytes;
    unsigned flush_value;
    int threads;            /* for input generation */
    uint64_t clock;
    Module mods[WORKER_MAX_MODULES];
    int nmods;
    /* Inputs of the current workload point: at most one entry per buffer of a
     * case, since entries a case does not use are evicted when it starts. */
    HostCopy hosts[CASE_MAX_BUFS];
    int nhosts;
    DevCopy devs[CASE_MAX_BUFS];
    int ndevs;
    Baseline baselines[WORKER_MAX_BASELINES];
} Worker;

typedef enum { RESET_D8, RESET_D16, RESET_D32, RESET_COPY } ResetKind;

/* How one output is brought back to its init before a launch. */
typedef struct Reset {
    ResetKind kind;
    uint32_t pattern;
    CUdeviceptr ptr;
    uint64_t bytes;
    const void *host;
} Reset;

/* One case being run. */
typedef struct Run {
    CUfunction f;
    CUdeviceptr base[CASE_MAX_BUFS];  /* 256-aligned allocation */
    CUdeviceptr ptr[CASE_MAX_BUFS];   /* base + offset elements: what the kernel gets */
    int owned[CASE_MAX_BUFS];         /* outputs: freed with the run; inputs are cached */
    const void *host[CASE_MAX_BUFS];  /* host content: input, or output init */
    Reset reset[CASE_MAX_BUFS];
    void *out[CASE_MAX_BUFS];         /* downloaded outputs */
    void *argv[CASE_MAX_ARGS];
    uint64_t scalars[CASE_MAX_ARGS];
} Run;

/* ---- results and driver errors ------------------------------------------- */

/* After these the context is unusable: only a new process can use the GPU. */
static const CUresult sticky_errors[] = {
    CUDA_ERROR_ILLEGAL_ADDRESS,      CUDA_ERROR_LAUNCH_FAILED,
    CUDA_ERROR_MISALIGNED_ADDRESS,   CUDA_ERROR_ILLEGAL_INSTRUCTION,
    CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ASSERT,
    CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_PC,
    CUDA_ERROR_LAUNCH_TIMEOUT,       CUDA_ERROR_ECC_UNCORRECTABLE,
    CUDA_ERROR_TENSOR_MEMORY_LEAK,   CUDA_ERROR_CONTEXT_IS_DESTROYED,
    CUDA_ERROR_NVLINK_UNCORRECTABLE, CUDA_ERROR_EXTERNAL_DEVICE,
    CUDA_ERROR_UNKNOWN,
};

static int is_sticky(CUresult r)
{
    for (size_t i = 0; i < sizeof sticky_errors / sizeof sticky_errors[0]; i++)
        if (sticky_errors[i] == r)
            return 1;
    return 0;
}

static void detail_add(CaseResult *res, const char *fmt, ...) KVX_PRINTF(2, 3);
static void detail_add(CaseResult *res, const char *fmt, ...)
{
    size_t len = strlen(res->detail);
    if (len + 3 >= sizeof res->detail)
        return;
    if (len) {
        memcpy(res->detail + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail + len, sizeof res->detail - len, fmt, ap);
    va_end(ap);
}

static int case_fail(CaseResult *res, CaseStatus st, const char *fmt, ...) KVX_PRINTF(3, 4);
static int case_fail(CaseResult *res, CaseStatus st, const char *fmt, ...)
{
    res->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail, sizeof res->detail, fmt, ap);
    va_end(ap);
    return -1;
}

/* Check a driver call made while running a case.  0 on success.  A sticky
 * error, or any error reported by a synchronisation (sync = 1: what failed may
 * be any earlier asynchronous work), is a fault: the result is sent and the
 * process exits.  Other errors make the case a launch_error; -1. */
static int step(Worker *w, CaseResult *res, CUresult r, const char *call, int sync)
{
    if (r == CUDA_SUCCESS)
        return 0;
    int fault = sync || is_sticky(r);
    res->status = fault ? CASE_fault : CASE_launch_error;
    snprintf(res->detail, sizeof res->detail, "%s: %s (%s)", call, cudadl_error_name(r),
             cudadl_error_string(r));
    if (fault) {
        result_write(w->out_fd, res);
        _exit(WORKER_EXIT_FAULT);   /* no teardown of a broken context */
    }
    return -1;
}

/* ---- modules and limits ---------------------------------------------------- */

static int function_get(Worker *w, const CaseDesc *c, CUfunction *f, CaseResult *res)
{
    Module *m = NULL;
    for (int i = 0; i < w->nmods && !m; i++)
        if (strcmp(w->mods[i].path, c->cubin_path) == 0)
            m = &w->mods[i];
    if (!m) {
        size_t len = 0;
        char *image = file_read(c->cubin_path, &len);
        if (!image)
            return case_fail(res, CASE_load_error, "cannot read %s: %s", c->cubin_path,
                             strerror(errno));
        if (w->nmods == WORKER_MAX_MODULES) {
            int lru = 0;
            for (int i = 1; i < w->nmods; i++)
                if (w->mods[i].used < w->mods[lru].used)
                    lru = i;
            cu.cuModuleUnload(w->mods[lru].mod);
            w->mods[lru] = w->mods[--w->nmods];
        }
        CUmodule mod;
        CUresult r = cu.cuModuleLoadData(&mod, image);
        free(image);
        if (r != CUDA_SUCCESS) {
            if (is_sticky(r))
                return step(w, res, r, "cuModuleLoadData", 1);
            return case_fail(res, CASE_load_error, "cuModuleLoadData(%s): %s (%s)",
                             c->cubin_path, cudadl_error_name(r), cudadl_error_string(r));
        }
        m = &w->mods[w->nmods++];
        snprintf(m->path, sizeof m->path, "%s", c->cubin_path);
        m->mod = mod;
    }
    m->used = ++w->clock;
    CUresult r = cu.cuModuleGetFunction(f, m->mod, c->kernel);
    if (r != CUDA_SUCCESS)
        return case_fail(res, CASE_load_error, "kernel '%s' not in %s: %s (%s)", c->kernel,
                         c->cubin_path, cudadl_error_name(r), cudadl_error_string(r));
    return 0;
}

static uint32_t dim1(uint32_t v) { return v ? v : 1; }

static uint64_t cluster_size(const CaseDesc *c)
{
    return (uint64_t)dim1(c->cluster[0]) * dim1(c->cluster[1]) * dim1(c->cluster[2]);
}

/* What the device and the compiled kernel allow: a case past them is skipped
 * with the reason rather than launched into an error.  Raises the kernel's
 * dynamic shared memory limit (and non-portable cluster size) when needed. */
static int limits_check(Worker *w, const CaseDesc *c, CUfunction f, CaseResult *res)
{
    const DeviceInfo *d = &w->dev;
    static const char axis[] = "xyz";
    uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];
    for (int i = 0; i < 3; i++) {
        if (c->grid[i] == 0 || c->block[i] == 0)
            return case_fail(res, CASE_skipped, "empty launch: grid %u x %u x %u, block %u x %u x %u",
                             c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                             c->block[2]);
        if (c->block[i] > (uint32_t)d->max_block[i])
            return case_fail(res, CASE_skipped, "block.%c = %u exceeds the device's %d", axis[i],
                             c->block[i], d->max_block[i]);
        if (c->grid[i] > (uint32_t)d->max_grid[i])
            return case_fail(res, CASE_skipped, "grid.%c = %u exceeds the device's %d", axis[i],
                             c->grid[i], d->max_grid[i]);
    }
    if (threads > (uint64_t)d->max_threads_block)
        return case_fail(res, CASE_skipped, "block of %llu threads exceeds the device's %d",
                         (unsigned long long)threads, d->max_threads_block);

    int regs = 0, fmax = 0, sstatic = 0, dynmax = 0;
    if (step(w, res, cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
             "cuFuncGetAttribute(NUM_REGS)", 0) < 0 ||
        step(w, res, cu.cuFuncGetAttribute(&fmax, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
             "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", 0) < 0 ||
        step(w, res, cu.cuFuncGetAttribute(&sstatic, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
             "cuFuncGetAttribute(SHARED_SIZE_BYTES)", 0) < 0 ||
        step(w, res,
             cu.cuFuncGetAttribute(&dynmax, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f),
             "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", 0) < 0)
        return -1;
    if ((uint64_t)regs * threads > (uint64_t)d->regs_block)
        return case_fail(res, CASE_skipped,
                         "%d registers x %llu threads = %llu exceeds the %d registers per block",
                         regs, (unsigned long long)threads, (unsigned long long)regs * threads,
                         d->regs_block);
    if (threads > (uint64_t)fmax)
        return case_fail(res, CASE_skipped,
                         "block of %llu threads exceeds the %d this kernel can launch "
                         "(%d registers per thread)",
                         (unsigned long long)threads, fmax, regs);
    if ((int64_t)sstatic + c->smem > d->smem_block_optin)
        return case_fail(res, CASE_skipped,
                         "shared memory %d static + %u dynamic bytes exceeds the %lld-byte "
                         "opt-in limit per block",
                         sstatic, c->smem, (long long)d->smem_block_optin);
    /* Past 48 KiB (less the static part) a kernel must opt in. */
    if (c->smem > (uint32_t)dynmax) {
        CUresult r = cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)c->smem);
        if (r != CUDA_SUCCESS)
            return case_fail(res, CASE_skipped, "%u bytes of dynamic shared memory refused: %s",
                             c->smem, cudadl_error_name(r));
    }
    uint64_t cs = cluster_size(c);
    if (cs > 1) {
        if (!d->cluster_launch)
            return case_fail(res, CASE_skipped,
                             "thread-block clusters need sm_90 or later (this GPU is sm_%d%d)",
                             d->cc_major, d->cc_minor);
        for (int i = 0; i < 3; i++)
            if (c->grid[i] % dim1(c->cluster[i]))
                return case_fail(res, CASE_skipped, "grid.%c = %u is not a multiple of cluster.%c = %u",
                                 axis[i], c->grid[i], axis[i], dim1(c->cluster[i]));
        /* 8 blocks is the portable cluster size; larger ones must be allowed. */
        if (cs > 8) {
            CUresult r =
                cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
            if (r != CUDA_SUCCESS)
                return case_fail(res, CASE_skipped, "cluster of %llu blocks refused: %s",
                                 (unsigned long long)cs, cudadl_error_name(r));
        }
    }
    return 0;
}

/* ---- buffers ---------------------------------------------------------------- */

static void buf_key(const CaseBuf *b, char key[65])
{
    if (b->input_key[0])
        memcpy(key, b->input_key, 65);
    else
        inputs_key(&elem_types[b->type], b->count, &b->init, key);
}

/* Drop cached inputs the case does not use: the parent moved to another
 * workload point, and memory must stay bounded. */
static void cache_evict(Worker *w, const CaseDesc *c)
{
    char keys[CASE_MAX_BUFS][65];
    for (int i = 0; i < c->nbufs; i++)
        buf_key(&c->bufs[i], keys[i]);
    for (int h = w->nhosts - 1; h >= 0; h--) {
        int used = 0;
        for (int i = 0; i < c->nbufs && !used; i++)
            used = strcmp(keys[i], w->hosts[h].key) == 0;
        if (!used) {
            free(w->hosts[h].data);
            w->hosts[h] = w->hosts[--w->nhosts];
        }
    }
    for (int v = w->ndevs - 1; v >= 0; v--) {
        int used = 0;
        for (int i = 0; i < c->nbufs && !used; i++)
            used = !c->bufs[i].checked && c->bufs[i].offset == w->devs[v].offset &&
                   strcmp(keys[i], w->devs[v].key) == 0;
        if (!used) {
            cu.cuMemFree(w->devs[v].base);
            w->devs[v] = w->devs[--w->ndevs];
        }
    }
}

/* The host content of a buffer, generated once per key. */
static const void *host_get(Worker *w, const CaseBuf *b, const char *key, CaseResult *res)
{
    for (int h = 0; h < w->nhosts; h++)
        if (strcmp(w->hosts[h].key, key) == 0)
            return w->hosts[h].data;
    KVX_ASSERT(w->nhosts < CASE_MAX_BUFS);
    const ElemType *t = &elem_types[b->type];
    void *data = xmalloc(b->count ? b->count * (uint64_t)t->size : 1);
    KvxError err = {0};
    if (inputs_fill(t, data, b->count, &b->init, w->threads, &err) < 0) {
        free(data);
        case_fail(res, CASE_skipped, "buffer '%s': %s", b->name, err.msg);
        return NULL;
    }
    HostCopy *h = &w->hosts[w->nhosts++];
    memcpy(h->key, key, 65);
    h->data = data;
    return data;
}

static int dev_alloc(Worker *w, const CaseBuf *b, CUdeviceptr *base, CaseResult *res)
{
    uint64_t size = (uint64_t)elem_types[b->type].size;
    uint64_t bytes = ((b->count + b->offset) * size + 255) / 256 * 256;
    CUresult r = cu.cuMemAlloc(base, bytes ? bytes : 256);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return case_fail(res, CASE_skipped, "out of device memory: buffer '%s' needs %llu bytes",
                         b->name, (unsigned long long)bytes);
    return step(w, res, r, "cuMemAlloc", 0);
}

/* Choose the narrowest memset that writes the init, when every element of it
 * is the same; a copy otherwise. */
static void reset_plan(Reset *r, CUdeviceptr ptr, const void *host, int size, uint64_t count)
{
    const unsigned char *p = host;
    memset(r, 0, sizeof *r);
    r->kind = RESET_COPY;
    r->ptr = ptr;
    r->host = host;
    r->bytes = count * (uint64_t)size;
    if (count == 0)
        return; /* nothing to write */
    for (uint64_t i = 1; i < count; i++)
        if (memcmp(p, p + i * (uint64_t)size, (size_t)size) != 0)
            return;
    int all8 = 1, all16 = size % 2 == 0, all32 = size % 4 == 0;
    for (int k = 1; k < size; k++)
        all8 &= p[k] == p[0];
    for (int k = 2; all16 && k < size; k++)
        all16 &= p[k] == p[k % 2];
    for (int k = 4; all32 && k < size; k++)
        all32 &= p[k] == p[k % 4];
    if (all8) {
        r->kind = RESET_D8;
        r->pattern = p[0];
    } else if (all16) {
        uint16_t v;
        memcpy(&v, p, 2);
        r->kind = RESET_D16;
        r->pattern = v;
    } else if (all32) {
        uint32_t v;
        memcpy(&v, p, 4);
        r->kind = RESET_D32;
        r->pattern = v;
    }
}

static CUresult reset_enqueue(Worker *w, const Reset *r)
{
    if (r->bytes == 0)
        return CUDA_SUCCESS;
    switch (r->kind) {
    case RESET_D8: return cu.cuMemsetD8Async(r->ptr, (unsigned char)r->pattern, r->bytes, w->stream);
    case RESET_D16:
        return cu.cuMemsetD16Async(r->ptr, (unsigned short)r->pattern, r->bytes / 2, w->stream);
    case RESET_D32: return cu.cuMemsetD32Async(r->ptr, r->pattern, r->bytes / 4, w->stream);
    case RESET_COPY: return cu.cuMemcpyHtoDAsync(r->ptr, r->host, r->bytes, w->stream);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* Lay out every buffer: inputs from the cache (generated and uploaded on a
 * miss), outputs freshly allocated with their reset planned.  0 or -1. */
static int buffers_prepare(Worker *w, const CaseDesc *c, Run *run, CaseResult *res)
{
    cache_evict(w, c);
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *b = &c->bufs[i];
        int size = elem_types[b->type].size;
        char key[65];
        buf_key(b, key);
        if (!(run->host[i] = host_get(w, b, key, res)))
            return -1;
        if (b->checked) {
            if (dev_alloc(w, b, &run->base[i], res) < 0)
                return -1;
            run->owned[i] = 1;
            run->ptr[i] = run->base[i] + b->offset * (uint64_t)size;
            reset_plan(&run->reset[i], run->ptr[i], run->host[i], size, b->count);
            run->out[i] = xmalloc(b->count ? b->count * (uint64_t)size : 1);
            continue;
        }
        DevCopy *d = NULL;
        for (int v = 0; v < w->ndevs && !d; v++)
            if (w->devs[v].offset == b->offset && strcmp(w->devs[v].key, key) == 0)
                d = &w->devs[v];
        if (!d) {
            CUdeviceptr base;
            if (dev_alloc(w, b, &base, res) < 0)
                return -1;
            KVX_ASSERT(w->ndevs < CASE_MAX_BUFS);
            d = &w->devs[w->ndevs++];
            memcpy(d->key, key, 65);
            d->offset = b->offset;
            d->base = base;
            if (b->count &&
                step(w, res,
                     cu.cuMemcpyHtoDAsync(base + b->offset * (uint64_t)size, run->host[i],
                                          b->count * (uint64_t)size, w->stream),
                     "cuMemcpyHtoDAsync (input)", 0) < 0)
                return -1;
        }
        run->base[i] = d->base;
        run->ptr[i] = d->base + b->offset * (uint64_t)size;
    }
    for (int i = 0; i < c->nargs; i++) {
        const CaseArg *a = &c->args[i];
        if (a->buf >= 0) {
            run->argv[i] = &run->ptr[a->buf];
        } else {
            /* little-endian on both sides: the low bytes are the value */
            memcpy(&run->scalars[i], a->bytes, (size_t)a->size);
            run->argv[i] = &run->scalars[i];
        }
    }
    return step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (upload)", 1);
}

static void run_release(const CaseDesc *c, Run *run)
{
    for (int i = 0; i < c->nbufs; i++) {
        if (run->owned[i])
            cu.cuMemFree(run->base[i]);
        free(run->out[i]);
    }
}

/* ---- launching ------------------------------------------------------------ */

static CUresult launch(Worker *w, const CaseDesc *c, Run *run)
{
    if (cluster_size(c) > 1) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg;
        memset(&attr, 0, sizeof attr);
        memset(&cfg, 0, sizeof cfg);
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = dim1(c->cluster[0]);
        attr.value.clusterDim.y = dim1(c->cluster[1]);
        attr.value.clusterDim.z = dim1(c->cluster[2]);
        cfg.gridDimX = c->grid[0];
        cfg.gridDimY = c->grid[1];
        cfg.gridDimZ = c->grid[2];
        cfg.blockDimX = c->block[0];
        cfg.blockDimY = c->block[1];
        cfg.blockDimZ = c->block[2];
        cfg.sharedMemBytes = c->smem;
        cfg.hStream = w->stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        return cu.cuLaunchKernelEx(&cfg, run->f, run->argv, NULL);
    }
    return cu.cuLaunchKernel(run->f, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                             c->block[2], c->smem, w->stream, run->argv, NULL);
}

/* Reset the outputs, overwrite L2 when flush, launch (between the two events
 * when ms is given) and wait.  0, or -1 with res set; faults do not return. */
static int launch_once(Worker *w, const CaseDesc *c, Run *run, int flush, float *ms,
                       CaseResult *res)
{
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].checked &&
            step(w, res, reset_enqueue(w, &run->reset[i]), "output reset", 0) < 0)
            return -1;
    /* A different byte each time, so that no write can be elided. */
    if (flush && step(w, res,
                      cu.cuMemsetD8Async(w->scratch, (unsigned char)++w->flush_value,
                                         w->scratch_bytes, w->stream),
                      "cuMemsetD8Async (L2 flush)", 0) < 0)
        return -1;
    if (ms && step(w, res, cu.cuEventRecord(w->ev[0], w->stream), "cuEventRecord", 0) < 0)
        return -1;
    if (step(w, res, launch(w, c, run), cluster_size(c) > 1 ? "cuLaunchKernelEx" : "cuLaunchKernel",
             0) < 0)
        return -1;
    if (!ms)
        return step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize", 1);
    if (step(w, res, cu.cuEventRecord(w->ev[1], w->stream), "cuEventRecord", 0) < 0 ||
        step(w, res, cu.cuEventSynchronize(w->ev[1]), "cuEventSynchronize", 1) < 0)
        return -1;
    return step(w, res, cu.cuEventElapsedTime(ms, w->ev[0], w->ev[1]), "cuEventElapsedTime", 1);
}

/* ---- verification -------------------------------------------------------- */

static Baseline *baseline_find(Worker *w, const char *key)
{
    for (int i = 0; i < WORKER_MAX_BASELINES; i++)
        if (w->baselines[i].key[0] && strcmp(w->baselines[i].key, key) == 0)
            return &w->baselines[i];
    return NULL;
}

/* Keep the baseline's outputs under its workload key, replacing the oldest. */
static void baseline_store(Worker *w, const CaseDesc *c, const Run *run)
{
    Baseline *b = baseline_find(w, c->workload_key);
    if (!b) { /* free slots have stamp 0 and go first */
        b = &w->baselines[0];
        for (int i = 1; i < WORKER_MAX_BASELINES; i++)
            if (w->baselines[i].stamp < b->stamp)
                b = &w->baselines[i];
    }
    for (int i = 0; i < CASE_MAX_BUFS; i++)
        free(b->data[i]);
    memset(b, 0, sizeof *b);
    memcpy(b->key, c->workload_key, 65);
    b->stamp = ++w->clock;
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *cb = &c->bufs[i];
        if (!cb->checked)
            continue;
        size_t bytes = cb->count * (uint64_t)elem_types[cb->type].size;
        b->data[i] = xmalloc(bytes ? bytes : 1);
        memcpy(b->data[i], run->out[i], bytes);
        b->type[i] = cb->type;
        b->count[i] = cb->count;
    }
}

/* The reference of one check.  0 (exp is the caller's to free), 2 (exp is
 * borrowed from the worker's cache: do not free), 1 when there is nothing to
 * compare (the baseline's own differential check), -1 with res set. */
static int expected_get(Worker *w, const CaseDesc *c, const CaseCheck *k, const Run *run,
                        Expected *exp, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    if (k->ref[0] == 0) {
        if (verify_constant(k->constant, t, b->count, exp) < 0)
            return case_fail(res, CASE_skipped, "check of '%s': the constant does not fit %s",
                             b->name, t->name);
        return 0;
    }
    if (strcmp(k->ref, "baseline") == 0) {
        if (c->is_baseline)
            return 1;
        Baseline *base = baseline_find(w, c->workload_key);
        if (!base || !base->data[k->buf])
            return case_fail(res, CASE_skipped,
                             "no baseline output for '%s' at this workload point (the baseline "
                             "variant has not run here, or it failed)", b->name);
        if (base->type[k->buf] != b->type || base->count[k->buf] != b->count)
            return case_fail(res, CASE_skipped, "the baseline's '%s' has another type or size",
                             b->name);
        if (verify_from_output(t, base->data[k->buf], b->count, exp) < 0)
            return case_fail(res, CASE_skipped, "the baseline's '%s' cannot be a reference",
                             b->name);
        return 0;
    }
    RefArg args[CASE_MAX_REFARGS];
    memcpy(args, k->args, sizeof args);
    for (int j = 0; j < k->nargs; j++) {
        if (!args[j].is_buf)
            continue;
        const CaseBuf *ab = &c->bufs[k->argbuf[j]];
        args[j].t = &elem_types[ab->type];
        args[j].data = run->host[k->argbuf[j]];
        if (!args[j].count)
            args[j].count = ab->count;
    }
    /* The key: the reference, its inputs (by their generation keys) and scalar
     * arguments, and the output's type and size. */
    Sha256 h;
    sha256_init(&h);
    sha256_update(&h, k->ref, strlen(k->ref) + 1);
    for (int j = 0; j < k->nargs; j++) {
        char text[96];
        if (args[j].is_buf)
            snprintf(text, sizeof text, "b:%s", c->bufs[k->argbuf[j]].input_key);
        else if (args[j].v.kind == VAL_STR)
            snprintf(text, sizeof text, "s:%s", args[j].v.s);
        else
            snprintf(text, sizeof text, "n:%d:%lld:%.17g", args[j].v.kind, (long long)args[j].v.i,
                     args[j].v.d);
        sha256_update(&h, text, strlen(text) + 1);
    }
    char tail[64];
    snprintf(tail, sizeof tail, "%s:%llu", t->name, (unsigned long long)b->count);
    sha256_update(&h, tail, strlen(tail) + 1);
    uint8_t digest[32];
    sha256_final(&h, digest);
    char key[65];
    for (int i = 0; i < 32; i++)
        snprintf(key + 2 * i, 3, "%02x", digest[i]);
    ExpCache *slot = &w->expc[0];
    for (int i = 0; i < WORKER_MAX_EXPECTED; i++) {
        ExpCache *e = &w->expc[i];
        if (e->stamp && strcmp(e->key, key) == 0) {
            e->stamp = ++w->clock;
            *exp = e->exp;
            return 2;
        }
        if (e->stamp < slot->stamp)
            slot = e;
    }
    KvxError err = {0};
    if (verify_reference_threads(k->ref, args, k->nargs, t, b->count, w->threads, exp, &err) < 0)
        return case_fail(res, CASE_skipped, "reference %s for '%s': %s", k->ref, b->name, err.msg);
    if (slot->stamp)
        verify_expected_free(&slot->exp);
    slot->exp = *exp;
    memcpy(slot->key, key, 65);
    slot->stamp = ++w->clock;
    return 2;
}

/* One untimed launch, its outputs downloaded and compared.  0 (status ok or
 * mismatch: the case is then timed), or -1 (launch_error, skipped). */
static int verify_case(Worker *w, const CaseDesc *c, Run *run, CaseResult *res)
{
    double t0 = now_ms();
    if (launch_once(w, c, run, 0, NULL, res) < 0)
        return -1;
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *b = &c->bufs[i];
        if (b->checked && b->count &&
            step(w, res,
                 cu.cuMemcpyDtoH(run->out[i], run->ptr[i],
                                 b->count * (uint64_t)elem_types[b->type].size),
                 "cuMemcpyDtoH", 1) < 0)
            return -1;
    }
    int own_ok = 1;
    for (int i = 0; i < c->nchecks; i++) {
        const CaseCheck *k = &c->checks[i];
        const CaseBuf *b = &c->bufs[k->buf];
        const ElemType *t = &elem_types[b->type];
        Expected exp;
        memset(&exp, 0, sizeof exp);
        int rc = expected_get(w, c, k, run, &exp, res);
        if (rc < 0) {
            verify_expected_free(&exp);
            return -1;
        }
        if (rc == 1)
            continue;
        VerifyReport rep;
        memset(&rep, 0, sizeof rep);
        verify_compare(&exp, t, run->out[k->buf], b->name, k->rtol >= 0 ? k->rtol : t->rtol, &rep);
        if (rc == 0)
            verify_expected_free(&exp);
        if (t->is_float && (isnan(res->rel_err) || rep.rel_err > res->rel_err))
            res->rel_err = rep.rel_err;
        if (!rep.ok) {
            res->status = CASE_mismatch;
            own_ok = 0;
            detail_add(res, "%s (%llu wrong)", rep.first, (unsigned long long)rep.nmismatch);
        }
    }
    /* A baseline that fails its own checks must not become the reference. */
    if (c->is_baseline && own_ok)
        baseline_store(w, c, run);
    if (res->status == CASE_mismatch)
        detail_add(res, "timed anyway");
    res->t_verify_ms = now_ms() - t0;
    return 0;
}

/* ---- measurement ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted x[0..n), linear interpolation between order statistics. */
static double quantile(const double *x, int n, double q)
{
    double h = (n - 1) * q;
    int lo = (int)h;
    if (lo >= n - 1)
        return x[n - 1];
    return x[lo] + (h - lo) * (x[lo + 1] - x[lo]);
}

/* Relative spread (p75 - p25) / median of t[0..n); sorts a copy into tmp. */
static double noise_of(const double *t, int n, double *tmp)
{
    memcpy(tmp, t, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double med = quantile(tmp, n, 0.5);
    return med > 0 ? (quantile(tmp, n, 0.75) - quantile(tmp, n, 0.25)) / med : 0;
}

static void stats_fill(const double *t, int n, double *tmp, CaseResult *res)
{
    res->samples = n;
    if (n == 0)
        return;
    res->noise = noise_of(t, n, tmp); /* leaves tmp sorted */
    res->median_ms = quantile(tmp, n, 0.5);
    res->min_ms = tmp[0];
    res->max_ms = tmp[n - 1];
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    res->mean_ms = sum / n;
    for (int i = 0; i < n; i++)
        ss += (t[i] - res->mean_ms) * (t[i] - res->mean_ms);
    res->stdev_ms = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

/* Warm-up, then samples until the noise target is met after min_samples, or
 * max_samples, or the budget is spent (the budget wins over min_samples). */
static int measure_case(Worker *w, const CaseDesc *c, Run *run, CaseResult *res)
{
    const MeasureSettings *m = &c->measure;
    double t0 = now_ms();
    if (m->flush_l2 && !w->scratch) {
        size_t bytes = (size_t)(w->dev.l2_bytes > 0 ? 2 * w->dev.l2_bytes : 64 << 20);
        CUresult r = cu.cuMemAlloc(&w->scratch, bytes);
        if (r != CUDA_SUCCESS)
            return case_fail(res, CASE_skipped, "L2 flush buffer of %zu bytes: %s", bytes,
                             cudadl_error_name(r));
        w->scratch_bytes = bytes;
    }
    for (int i = 0; i < m->warmup; i++)
        if (launch_once(w, c, run, m->flush_l2, NULL, res) < 0)
            return -1;
    int maxs = m->max_samples > 0 ? m->max_samples : 1;
    int mins = m->min_samples < 1 ? 1 : m->min_samples > maxs ? maxs : m->min_samples;
    double *t = xmalloc((size_t)maxs * sizeof *t), *tmp = xmalloc((size_t)maxs * sizeof *tmp);
    double start = now_ms();
    int n = 0, rc = 0;
    while (n < maxs) {
        float ms = 0;
        if (launch_once(w, c, run, m->flush_l2, &ms, res) < 0) {
            rc = -1;
            break;
        }
        t[n++] = ms;
        /* Sorting on every sample is O(n^2 log n); past 256 samples test every 32nd. */
        if (n >= mins && (n <= 256 || n % 32 == 0) && noise_of(t, n, tmp) <= m->noise)
            break;
        if (m->budget_ms > 0 && now_ms() - start >= m->budget_ms)
            break;
    }
    if (rc == 0)
        stats_fill(t, n, tmp, res);
    free(t);
    free(tmp);
    res->t_measure_ms = now_ms() - t0;
    return rc;
}

/* ---- the case loop ------------------------------------------------------- */

static void run_case(Worker *w, const CaseDesc *c, CaseResult *res)
{
    Run run;
    memset(&run, 0, sizeof run);
    memset(res, 0, sizeof *res);
    res->id = c->id;
    res->status = CASE_ok;
    res->median_ms = res->min_ms = res->max_ms = res->mean_ms = res->stdev_ms = NAN;
    res->noise = res->rel_err = NAN;

    if (function_get(w, c, &run.f, res) < 0 || limits_check(w, c, run.f, res) < 0)
        goto done;
    double t0 = now_ms();
    int rc = buffers_prepare(w, c, &run, res);
    res->t_input_ms = now_ms() - t0;
    if (rc < 0 || verify_case(w, c, &run, res) < 0)
        goto done;
    measure_case(w, c, &run, res);
done:
    run_release(c, &run);
}

static void worker_close(Worker *w)
{
    for (int i = 0; i < w->nhosts; i++)
        free(w->hosts[i].data);
    for (int i = 0; i < WORKER_MAX_BASELINES; i++)
        for (int j = 0; j < CASE_MAX_BUFS; j++)
            free(w->baselines[i].data[j]);
    if (!w->ctx)
        return;
    for (int i = 0; i < w->ndevs; i++)
        cu.cuMemFree(w->devs[i].base);
    for (int i = 0; i < w->nmods; i++)
        cu.cuModuleUnload(w->mods[i].mod);
    if (w->scratch)
        cu.cuMemFree(w->scratch);
    for (int i = 0; i < 2; i++)
        if (w->ev[i])
            cu.cuEventDestroy(w->ev[i]);
    if (w->stream)
        cu.cuStreamDestroy(w->stream);
    cu.cuDevicePrimaryCtxRelease(w->cudev);
}

static int worker_open(Worker *w, int device, KvxError *err)
{
    int n = 0;
    if (cudadl_load(err) < 0 || CU_CHECK(err, cu.cuInit(0)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetCount(&n)) < 0)
        return -1;
    if (device < 0 || device >= n) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no CUDA device %d (this machine has %d)", device, n);
        return -1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    w->threads = cores > 0 ? (int)cores : 1;
    if (device_query(device, &w->dev, err) < 0 ||
        CU_CHECK(err, cu.cuDeviceGet(&w->cudev, device)) < 0 ||
        CU_CHECK(err, cu.cuDevicePrimaryCtxRetain(&w->ctx, w->cudev)) < 0)
        return -1;
    if (CU_CHECK(err, cu.cuCtxSetCurrent(w->ctx)) < 0 ||
        CU_CHECK(err, cu.cuStreamCreate(&w->stream, CU_STREAM_DEFAULT)) < 0 ||
        CU_CHECK(err, cu.cuEventCreate(&w->ev[0], CU_EVENT_DEFAULT)) < 0 ||
        CU_CHECK(err, cu.cuEventCreate(&w->ev[1], CU_EVENT_DEFAULT)) < 0)
        return -1;
    return 0;
}

int worker_main(int device, int in_fd, int out_fd)
{
    KvxError err = {0};
    if (fake_gpus() > 0) {
        /* Test hook (fake.h): the same start frame, then made-up cases. */
        DeviceInfo d;
        if (fake_device(device, &d, &err) < 0) {
            start_write(out_fd, &err);
            return 1;
        }
        if (start_write(out_fd, NULL) < 0 || device_info_write(out_fd, &d) < 0)
            return 1;
        return fake_worker_run(device, in_fd, out_fd);
    }
    Worker *w = xcalloc(1, sizeof *w);
    w->out_fd = out_fd;
    if (worker_open(w, device, &err) < 0) {
        start_write(out_fd, &err);
        worker_close(w);
        free(w);
        return 1;
    }
    int status = 0;
    if (start_write(out_fd, NULL) < 0 || device_info_write(out_fd, &w->dev) < 0)
        status = 1;
    CaseDesc *c = xmalloc(sizeof *c);
    CaseResult res;
    while (status == 0 && case_read(in_fd, c) == 0) {
        run_case(w, c, &res);
        if (result_write(out_fd, &res) < 0)
            break;
    }
    free(c);
    worker_close(w);
    free(w);
    return status;
}
