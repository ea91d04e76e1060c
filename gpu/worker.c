/* worker: one GPU's process.  Loads modules, lays out buffers, launches,
 * verifies and times cases sent by the parent (see worker.h for the protocol
 * and the caches).  Each step of a case is timed (worker_lap, CASE_STEPS) so
 * that the run's profile accounts for the worker's whole time.
 *
 * A case goes: module -> limits -> buffers -> one untimed verified launch ->
 * warm-up -> timed samples.  Outputs (checked buffers) are reset to their init
 * before every launch, outside the timed region, by the narrowest memset that
 * writes the init or else a host-to-device copy.  A case whose output differs
 * from the reference is still timed and stored as mismatch: the cost of a
 * wrong-but-fast variant is worth seeing, and the status keeps it out of any
 * "fastest correct" reading.  The worker is single-threaded: one stream, its
 * events, and the primary context current on this thread.  What does not change
 * between cases is kept: modules with their kernel's attributes, inputs (LRU,
 * bounded), output allocations and their host copies.
 *
 * Its helpers: worker_buffers.c (inputs, outputs and their resets),
 * worker_verify.c (the verified launch's check), worker_time.c
 * (warm-up and timed samples), worker_device.c (DeviceInfo, start frames, the
 * probe); worker_internal.h. */
#include "worker_internal.h"
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pool.h"

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

int worker_is_sticky(CUresult r)
{
    for (size_t i = 0; i < sizeof sticky_errors / sizeof sticky_errors[0]; i++)
        if (sticky_errors[i] == r)
            return 1;
    return 0;
}

int worker_fail(CaseResult *res, CaseStatus st, const char *fmt, ...)
{
    res->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail, sizeof res->detail, fmt, ap);
    va_end(ap);
    return -1;
}

int worker_step(WorkerState *w, CaseResult *res, CUresult r, const char *call, int sync)
{
    if (r == CUDA_SUCCESS)
        return 0;
    int fault = sync || worker_is_sticky(r);
    res->status = fault ? CASE_fault : CASE_launch_error;
    snprintf(res->detail, sizeof res->detail, "%s: %s (%s)", call, cudadl_error_name(r),
             cudadl_error_string(r));
    if (fault) {
        case_result_write(w->out_fd, res);
        _exit(WORKER_EXIT_FAULT);   /* no teardown of a broken context */
    }
    return -1;
}

double worker_lap(WorkerState *w, CaseResult *res, CaseStep step)
{
    double now = wall_now_ms();
    res->t_step[step] += now - w->lap;
    w->lap = now;
    return now;
}

/* ---- modules and limits ---------------------------------------------------- */

/* The kernel's attributes, read once per module and kernel. */
static int attrs_read(WorkerState *w, Module *m, CUfunction f, CaseResult *res)
{
    if (worker_step(w, res, cu.cuFuncGetAttribute(&m->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                    "cuFuncGetAttribute(NUM_REGS)", 0) < 0 ||
        worker_step(w, res, cu.cuFuncGetAttribute(&m->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
                    "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", 0) < 0 ||
        worker_step(w, res, cu.cuFuncGetAttribute(&m->smem_static, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                    "cuFuncGetAttribute(SHARED_SIZE_BYTES)", 0) < 0 ||
        worker_step(w, res,
                    cu.cuFuncGetAttribute(&m->dyn_max, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f),
                    "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", 0) < 0)
        return -1;
    return 0;
}

int worker_function(WorkerState *w, const char *cubin_path, const char *kernel, Module **out,
                    CaseResult *res)
{
    Module *m = NULL;
    struct stat st;
    int known = stat(cubin_path, &st) == 0;
    Module id = {.dev = known ? (unsigned long long)st.st_dev : 0, .ino = known ? (unsigned long long)st.st_ino : 0,
                 .size = known ? (unsigned long long)st.st_size : 0,
                 .mtime_ns = known ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0};
    for (int i = 0; i < w->nmods && !m; i++)
        if (strcmp(w->mods[i].path, cubin_path) == 0 ||
            (known && w->mods[i].ino == id.ino && w->mods[i].dev == id.dev && w->mods[i].size == id.size &&
             w->mods[i].mtime_ns == id.mtime_ns))
            m = &w->mods[i];
    if (!m) {
        size_t len = 0;
        char *image = file_read(cubin_path, &len);
        if (!image)
            return worker_fail(res, CASE_load_error, "cannot read %s: %s", cubin_path,
                               strerror(errno));
        if (w->nmods == w->max_mods) {
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
            if (worker_is_sticky(r))
                return worker_step(w, res, r, "cuModuleLoadData", 1);
            return worker_fail(res, CASE_load_error, "cuModuleLoadData(%s): %s (%s)",
                               cubin_path, cudadl_error_name(r), cudadl_error_string(r));
        }
        m = &w->mods[w->nmods++];
        *m = id;
        snprintf(m->path, sizeof m->path, "%s", cubin_path);
        m->mod = mod;
    }
    m->used = ++w->clock;
    *out = m;
    if (m->kernel[0] && strcmp(m->kernel, kernel) == 0)
        return 0;
    m->kernel[0] = 0;
    m->cluster_ok = 0;
    CUresult r = cu.cuModuleGetFunction(&m->fn, m->mod, kernel);
    if (r != CUDA_SUCCESS)
        return worker_fail(res, CASE_load_error, "kernel '%s' not in %s: %s (%s)", kernel,
                           cubin_path, cudadl_error_name(r), cudadl_error_string(r));
    if (attrs_read(w, m, m->fn, res) < 0)
        return -1;
    snprintf(m->kernel, sizeof m->kernel, "%s", kernel);
    return 0;
}

static uint32_t dim1(uint32_t v) { return v ? v : 1; }

static uint64_t cluster_size(const uint32_t cluster[3])
{
    return (uint64_t)dim1(cluster[0]) * dim1(cluster[1]) * dim1(cluster[2]);
}

static const char axis_name[] = "xyz";

/* The launch geometry against the device's limits (grid, block, threads per
 * block): 0, or -1 with res skipped and the reason. */
static int limits_geometry(const DeviceInfo *d, const CaseKernel *c, CaseResult *res)
{
    uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];
    for (int i = 0; i < 3; i++) {
        if (c->grid[i] == 0 || c->block[i] == 0)
            return worker_fail(res, CASE_skipped, "empty launch: grid %u x %u x %u, block %u x %u x %u",
                               c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                               c->block[2]);
        if (c->block[i] > (uint32_t)d->max_block[i])
            return worker_fail(res, CASE_skipped, "block.%c = %u exceeds the device's %d",
                               axis_name[i], c->block[i], d->max_block[i]);
        if (c->grid[i] > (uint32_t)d->max_grid[i])
            return worker_fail(res, CASE_skipped, "grid.%c = %u exceeds the device's %d",
                               axis_name[i], c->grid[i], d->max_grid[i]);
    }
    if (threads > (uint64_t)d->max_threads_block)
        return worker_fail(res, CASE_skipped, "block of %llu threads exceeds the device's %d",
                           (unsigned long long)threads, d->max_threads_block);
    return 0;
}

/* The compiled kernel's registers and shared memory against the block; past
 * 48 KiB of dynamic shared memory (less the static part) the kernel opts in. */
static int limits_kernel(const DeviceInfo *d, const CaseKernel *c, Module *m, CaseResult *res)
{
    uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];
    const int regs = m->regs, fmax = m->max_threads, sstatic = m->smem_static, dynmax = m->dyn_max;
    if ((uint64_t)regs * threads > (uint64_t)d->regs_block)
        return worker_fail(res, CASE_skipped,
                           "%d registers x %llu threads = %llu exceeds the %d registers per block",
                           regs, (unsigned long long)threads, (unsigned long long)regs * threads,
                           d->regs_block);
    if (threads > (uint64_t)fmax)
        return worker_fail(res, CASE_skipped,
                           "block of %llu threads exceeds the %d this kernel can launch "
                           "(%d registers per thread)",
                           (unsigned long long)threads, fmax, regs);
    if ((int64_t)sstatic + c->smem > d->smem_block_optin)
        return worker_fail(res, CASE_skipped,
                           "shared memory %d static + %u dynamic bytes exceeds the %lld-byte "
                           "opt-in limit per block",
                           sstatic, c->smem, (long long)d->smem_block_optin);
    if (c->smem > (uint32_t)dynmax) {
        CUresult r = cu.cuFuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)c->smem);
        if (r != CUDA_SUCCESS)
            return worker_fail(res, CASE_skipped, "%u bytes of dynamic shared memory refused: %s",
                               c->smem, cudadl_error_name(r));
        m->dyn_max = (int)c->smem; /* what the attribute now reads */
    }
    return 0;
}

/* A cluster launch: supported, dividing the grid, and past the portable
 * size of 8 blocks allowed for the kernel. */
static int limits_cluster(const DeviceInfo *d, const CaseKernel *c, Module *m, CaseResult *res)
{
    uint64_t cs = cluster_size(c->cluster);
    if (cs <= 1)
        return 0;
    if (!d->cluster_launch)
        return worker_fail(res, CASE_skipped,
                           "thread-block clusters need sm_90 or later (this GPU is sm_%d%d)",
                           d->cc_major, d->cc_minor);
    for (int i = 0; i < 3; i++)
        if (c->grid[i] % dim1(c->cluster[i]))
            return worker_fail(res, CASE_skipped, "grid.%c = %u is not a multiple of cluster.%c = %u",
                               axis_name[i], c->grid[i], axis_name[i], dim1(c->cluster[i]));
    if (cs > 8 && !m->cluster_ok) {
        CUresult r =
            cu.cuFuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (r != CUDA_SUCCESS)
            return worker_fail(res, CASE_skipped, "cluster of %llu blocks refused: %s",
                               (unsigned long long)cs, cudadl_error_name(r));
        m->cluster_ok = 1;
    }
    return 0;
}

/* What the device and the compiled kernel allow: a case past them is skipped
 * with the reason rather than launched into an error.  Raises the kernel's
 * dynamic shared memory limit (and non-portable cluster size) when needed. */
static int limits_check(WorkerState *w, const CaseKernel *k, Module *m, CaseResult *res)
{
    if (limits_geometry(&w->dev, k, res) || limits_kernel(&w->dev, k, m, res) ||
        limits_cluster(&w->dev, k, m, res))
        return -1;
    return 0;
}

/* Each launch's kernel looked up in the case's module and checked against
 * the limits, into run->f.  A module remembers one kernel's attributes, so
 * a case of several kernels looks each up again: their handles stay valid
 * while the module is loaded, which it is for the whole case.  0, or -1 with
 * res set; a kernel past a limit names itself when the case has several. */
static int functions_get(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    for (int i = 0; i <= c->nnext; i++) {
        CaseKernel k;
        Module *m = NULL;
        case_kernel_at(c, i, &k);
        if (worker_function(w, c->cubin_path, k.kernel, &m, res) < 0)
            return -1;
        if (limits_check(w, &k, m, res) < 0) {
            if (c->nnext) {
                char d[sizeof res->detail];
                memcpy(d, res->detail, sizeof d);
                int n = snprintf(res->detail, sizeof res->detail, "launch %d (%s): ", i + 1, k.kernel);
                if (n > 0 && (size_t)n < sizeof res->detail)
                    memcpy(res->detail + n, d, sizeof res->detail - (size_t)n - 1);
                res->detail[sizeof res->detail - 1] = 0;
            }
            return -1;
        }
        run->f[i] = m->fn;
    }
    return 0;
}

/* ---- launching ------------------------------------------------------------ */

CUresult worker_launch_raw(WorkerState *w, CUfunction f, const uint32_t grid[3], const uint32_t block[3],
                           const uint32_t cluster[3], uint32_t smem, void **argv)
{
    uint64_t cs = (uint64_t)dim1(cluster[0]) * dim1(cluster[1]) * dim1(cluster[2]);
    if (cs > 1) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg;
        memset(&attr, 0, sizeof attr);
        memset(&cfg, 0, sizeof cfg);
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = dim1(cluster[0]);
        attr.value.clusterDim.y = dim1(cluster[1]);
        attr.value.clusterDim.z = dim1(cluster[2]);
        cfg.gridDimX = grid[0];
        cfg.gridDimY = grid[1];
        cfg.gridDimZ = grid[2];
        cfg.blockDimX = block[0];
        cfg.blockDimY = block[1];
        cfg.blockDimZ = block[2];
        cfg.sharedMemBytes = smem;
        cfg.hStream = w->stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        return cu.cuLaunchKernelEx(&cfg, f, argv, NULL);
    }
    return cu.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, w->stream,
                             argv, NULL);
}



int worker_prepare_launch(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int flush, CaseResult *res)
{
    for (int i = 0; i < c->nbufs; i++)
        if ((c->bufs[i].checked || c->bufs[i].scratch == CASE_SCRATCH_RESET) &&
            worker_step(w, res, worker_reset_enqueue(w, &run->reset[i]), "output reset", 0) < 0)
            return -1;
    /* A different byte each time, so that no write can be elided. */
    if (flush == MEASURE_FLUSH_WRITE &&
        worker_step(w, res,
                    cu.cuMemsetD8Async(w->scratch, (unsigned char)++w->flush_value, w->scratch_bytes,
                                       w->stream),
                    "cuMemsetD8Async (L2 flush)", 0) < 0)
        return -1;
    if (flush == MEASURE_FLUSH_READ && worker_flush_read(w, res) < 0)
        return -1;
    return 0;
}

int worker_enqueue_launch(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    for (int i = 0; i <= c->nnext; i++) {
        const CaseKernel *k = i ? &c->next[i - 1] : NULL;
        const uint32_t *grid = k ? k->grid : c->grid, *block = k ? k->block : c->block;
        const uint32_t *cluster = k ? k->cluster : c->cluster;
        CUresult r = worker_launch_raw(w, run->f[i], grid, block, cluster, k ? k->smem : c->smem, run->argv[i]);
        if (worker_step(w, res, r, cluster_size(cluster) > 1 ? "cuLaunchKernelEx" : "cuLaunchKernel", 0) < 0)
            return -1;
    }
    return 0;
}

int worker_launch_once(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int flush, float *ms,
                       CaseResult *res)
{
    double t0 = wall_now_ms();
    float verify_ms = 0;
    float *out = ms ? ms : &verify_ms;
    if (worker_prepare_launch(w, c, run, flush, res) < 0 ||
        worker_step(w, res, cu.cuEventRecord(w->ev[0], w->stream), "cuEventRecord", 0) < 0 ||
        worker_enqueue_launch(w, c, run, res) < 0 ||
        worker_step(w, res, cu.cuEventRecord(w->ev[1], w->stream), "cuEventRecord", 0) < 0 ||
        worker_step(w, res, cu.cuEventSynchronize(w->ev[1]), "cuEventSynchronize", 1) < 0 ||
        worker_step(w, res, cu.cuEventElapsedTime(out, w->ev[0], w->ev[1]), "cuEventElapsedTime", 1) < 0)
        return -1;
    res->launches += 1 + c->nnext;
    if (!ms) {
        /* The verified launch: how slow the kernel is decides the warm-ups. */
        res->launch_ms = verify_ms;
        run->spent_ms = wall_now_ms() - t0;
        worker_lap(w, res, CASE_STEP_verify);
    }
    return 0;
}

/* ---- the case loop ------------------------------------------------------- */

static void result_init(const CaseDesc *c, CaseResult *res)
{
    memset(res, 0, sizeof *res);
    res->id = c->id;
    res->status = CASE_ok;
    res->median_ms = res->min_ms = res->max_ms = res->mean_ms = res->stdev_ms = NAN;
    res->noise = res->rel_err = res->launch_ms = NAN;
}

/* Run c into res.  The send and recv steps are the caller's, already in res. */
static void run_case(WorkerState *w, const CaseDesc *c, CaseResult *res)
{
    CaseLaunch run;
    memset(&run, 0, sizeof run);
    nvtx_push("%s %s", c->kernel, c->label);
    int rc = functions_get(w, c, &run, res);
    worker_lap(w, res, CASE_STEP_module);
    if (rc < 0)
        goto done;
    worker_lap(w, res, CASE_STEP_limits);
    double t0 = wall_now_ms();
    rc = worker_buffers_prepare(w, c, &run, res);
    res->t_input_ms = worker_lap(w, res, CASE_STEP_buffers) - t0;
    if (rc == 0)
        worker_host_refs_start(w, c, &run);
    if (rc < 0 || (c->ref.present && !(run.ref = worker_reference(w, c, &run, res))))
        goto done;
    if (c->ref.present)
        worker_lap(w, res, CASE_STEP_ref_kernel);
    if (worker_verify_case(w, c, &run, res) < 0 || worker_checks_ready(w, c, res) < 0 ||
        worker_time_case(w, c, &run, res) < 0)
        goto done;
    worker_compare_case(w, c, &run, res);
done:
    worker_host_refs_join(w, &run, res);
    worker_buffers_release(w, c, &run);
    worker_lap(w, res, CASE_STEP_stats);
    nvtx_pop();
}

static void worker_close(WorkerState *w)
{
    free(w->kept);
    for (int i = 0; i < w->nhosts; i++)
        free(w->hosts[i].data);
    for (int i = 0; i < WORKER_MAX_EXPECTED; i++)
        if (w->expc[i].stamp)
            verify_expected_free(&w->expc[i].exp);
    for (int i = 0; i < CASE_MAX_BUFS; i++)
        free(w->hout[i]);
    nvml_close(&w->nvml);
    worker_compare_close(w);
    if (!w->ctx)
        return;
    for (int i = 0; i < WORKER_MAX_BASELINES; i++)
        for (int j = 0; j < CASE_MAX_BUFS; j++)
            if (w->baselines[i].dev[j])
                cu.cuMemFree(w->baselines[i].dev[j]);
    for (int i = 0; i < WORKER_MAX_EXPECTED; i++)
        if (w->expc[i].dev)
            cu.cuMemFree(w->expc[i].dev);
    for (int i = 0; i < WORKER_MAX_REFERENCES; i++)
        for (int j = 0; j < CASE_MAX_BUFS; j++)
            if (w->refs[i].base[j])
                cu.cuMemFree(w->refs[i].base[j]);
    for (int i = 0; i < w->ndevs; i++)
        cu.cuMemFree(w->devs[i].raw);
    for (int i = 0; i < w->nouts; i++)
        cu.cuMemFree(w->outs[i].raw);
    for (int i = 0; i < w->nmods; i++)
        cu.cuModuleUnload(w->mods[i].mod);
    if (w->scratch)
        cu.cuMemFree(w->scratch);
    if (w->flush_mod)
        cu.cuModuleUnload(w->flush_mod);
    for (int i = 0; i < 2; i++)
        if (w->ev[i])
            cu.cuEventDestroy(w->ev[i]);
    for (int i = 0; i < 3 * WORKER_MAX_BATCH; i++)
        if (w->bev[i])
            cu.cuEventDestroy(w->bev[i]);
    if (w->stream)
        cu.cuStreamDestroy(w->stream);
    cu.cuDevicePrimaryCtxRelease(w->cudev);
}

static int worker_open(WorkerState *w, int device, KvxError *err)
{
    int n = 0;
    if (cudadl_load(err) < 0 || CU_CHECK(err, cu.cuInit(0)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetCount(&n)) < 0)
        return -1;
    if (device < 0 || device >= n) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no CUDA device %d (this machine has %d)", device, n);
        return -1;
    }
    w->threads = pool_cores();
    /* $KVX_TEST_WORKER_MODULES=N (tests only): a module cache of N < the
     * limit, so that a test evicts without compiling hundreds of cubins. */
    const char *cap = getenv("KVX_TEST_WORKER_MODULES");
    w->max_mods = cap && atoi(cap) > 0 && atoi(cap) < WORKER_MAX_MODULES ? atoi(cap) : WORKER_MAX_MODULES;
    if (worker_device_info_query(device, &w->dev, err) < 0 ||
        CU_CHECK(err, cu.cuDeviceGet(&w->cudev, device)) < 0 ||
        CU_CHECK(err, cu.cuDevicePrimaryCtxRetain(&w->ctx, w->cudev)) < 0)
        return -1;
    if (CU_CHECK(err, cu.cuCtxSetCurrent(w->ctx)) < 0 ||
        CU_CHECK(err, cu.cuStreamCreate(&w->stream, CU_STREAM_DEFAULT)) < 0 ||
        CU_CHECK(err, cu.cuEventCreate(&w->ev[0], CU_EVENT_DEFAULT)) < 0 ||
        CU_CHECK(err, cu.cuEventCreate(&w->ev[1], CU_EVENT_DEFAULT)) < 0)
        return -1;
    for (int i = 0; i < 3 * WORKER_MAX_BATCH; i++)
        if (CU_CHECK(err, cu.cuEventCreate(&w->bev[i], CU_EVENT_DEFAULT)) < 0)
            return -1;
    /* Optional: without NVML the clocks are unknown, and the run says so once. */
    if (nvml_open(&w->nvml, NULL, w->dev.uuid, w->dev.pci_bus) < 0)
        snprintf(w->dev.clocks_note, sizeof w->dev.clocks_note, "%s", w->nvml.note);
    return 0;
}

int worker_main(int device, int in_fd, int out_fd)
{
    KvxError err = {0};
    WorkerState *w = mem_calloc(1, sizeof *w);
    w->out_fd = out_fd;
    if (worker_open(w, device, &err) < 0) {
        worker_start_write(out_fd, &err);
        worker_close(w);
        free(w);
        return 1;
    }
    int status = 0;
    if (worker_start_write(out_fd, NULL) < 0 || worker_device_info_write(out_fd, &w->dev) < 0)
        status = 1;
    CaseDesc *c = mem_alloc(sizeof *c);
    CaseResult res;
    double send_ms = 0;
    w->lap = wall_now_ms();
    while (status == 0 && case_read(in_fd, c) == 0) {
        result_init(c, &res);
        res.t_step[CASE_STEP_send] = send_ms;
        worker_lap(w, &res, CASE_STEP_recv);
        fake_log_case(device, c); /* test hook (fake.h): KVX_FAKE_LOG only */
        w->nkept = 0;
        run_case(w, c, &res);
        res.samples_follow = c->keep_samples ? w->nkept : 0;
        if (case_result_write(out_fd, &res) < 0 ||
            (res.samples_follow && case_samples_write(out_fd, w->kept, w->nkept) < 0))
            break;
        double now = wall_now_ms();
        send_ms = now - w->lap;
        w->lap = now;
    }
    free(c);
    /* The parent's read ends here (the pipe's end, /dev/null in its place):
     * the context's release below is not its wait. */
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0 || dup2(null_fd, out_fd) < 0)
        close(out_fd);
    if (null_fd >= 0)
        close(null_fd);
    worker_close(w);
    free(w);
    return status;
}

/* One launch of c for a profiler: buffers laid out as for a timed case,
 * outputs reset, no flush, no timing, no check.  0, or -1 (reason on stderr). */
static int counters_case(WorkerState *w, int device, const CaseDesc *c)
{
    CaseLaunch run;
    memset(&run, 0, sizeof run);
    CaseResult res;
    result_init(c, &res);
    nvtx_push("%s %s", c->kernel, c->label);
    int rc = functions_get(w, c, &run, &res);
    if (rc == 0) {
        rc = worker_buffers_prepare(w, c, &run, &res);
        if (rc == 0)
            rc = worker_launch_once(w, c, &run, MEASURE_FLUSH_OFF, NULL, &res);
        if (rc == 0)
            fake_log_case(device, c); /* test hook (fake.h): tests/data/ncu/fake_ncu.sh counts launches */
    }
    if (rc < 0)
        fprintf(stderr, "kvx __counters: case %lld: %s: %s\n", (long long)c->id,
                case_status_names[res.status], res.detail);
    worker_buffers_release(w, c, &run);
    nvtx_pop();
    return rc;
}

int worker_counters_main(int device, int cases_fd)
{
    KvxError err = {0};
    WorkerState *w = mem_calloc(1, sizeof *w);
    /* Results go nowhere: a fault still ends the process (worker_step). */
    w->out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int status = 0;
    if (worker_open(w, device, &err) < 0) {
        fprintf(stderr, "kvx __counters: %s\n", err.msg);
        status = 1;
    }
    CaseDesc *c = mem_alloc(sizeof *c);
    while (status == 0 && case_read(cases_fd, c) == 0)
        if (counters_case(w, device, c) < 0)
            status = 3;     /* the rows that follow would no longer match their cases */
    free(c);
    if (w->out_fd >= 0)
        close(w->out_fd);
    worker_close(w);
    free(w);
    kvx_error_clear(&err);
    return status;
}
