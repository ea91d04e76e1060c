/* worker_compare: an output compared with its reference on the device
 * (issue #24 item 2).  kvx_compare (gpu/devio.cu, loaded from its PTX in
 * gpu/devio_ptx.h) writes one VerifyChunk per VERIFY_CHUNK elements; only
 * those records cross to the host, then, for a mismatch, the slices of output
 * and reference that hold the first differing elements (at most four chunks),
 * which host/verify_device.c names as verify_compare would.  A float output
 * whose norm test fails is counted again with the element rule on (a second
 * launch), as verify_compare's second pass.
 *
 * The same module's kvx_fill generates inputs on the device (issue #24 item
 * 1, worker_fill_device): the plan, inputs_plan's, crosses to the device, and
 * no input byte does. */
#include "worker_internal.h"
#include "devio_ptx.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(DEVIO_CHUNK == VERIFY_CHUNK, "gpu/devio.cu and host/verify.h chunk alike");
_Static_assert(sizeof(VerifyChunk) == 40, "gpu/devio.cu's Chunk is 40 bytes");

/* The module, loaded once.  0, or -1 with res skipped (the driver refused
 * the PTX) or set by worker_step. */
static int devio_load(WorkerState *w, CaseResult *res)
{
    if (w->devio_mod)
        return 0;
    CUresult r = cu.cuModuleLoadData(&w->devio_mod, devio_ptx);
    if (r != CUDA_SUCCESS) {
        w->devio_mod = NULL;
        return worker_fail(res, CASE_skipped, "kvx's device code (gpu/devio_ptx.h) did not load: %s (%s)",
                           cudadl_error_name(r), cudadl_error_string(r));
    }
    if (worker_step(w, res, cu.cuModuleGetFunction(&w->cmp_fn, w->devio_mod, DEVIO_COMPARE_KERNEL),
                    "cuModuleGetFunction (kvx_compare)", 0) < 0 ||
        worker_step(w, res, cu.cuModuleGetFunction(&w->fill_fn, w->devio_mod, DEVIO_FILL_KERNEL),
                    "cuModuleGetFunction (kvx_fill)", 0) < 0)
        return -1;
    return 0;
}

/* The module and the records' room for nch chunks.  0, or -1 with res
 * skipped (the driver refused the PTX) or set by worker_step. */
static int devio_ready(WorkerState *w, uint64_t nch, CaseResult *res)
{
    if (devio_load(w, res) < 0)
        return -1;
    uint64_t bytes = nch * sizeof(VerifyChunk);
    if (bytes <= w->chunks_bytes)
        return 0;
    if (w->chunks)
        cu.cuMemFree(w->chunks);
    w->chunks = 0;
    w->chunks_bytes = 0;
    if (worker_step(w, res, cu.cuMemAlloc(&w->chunks, bytes), "cuMemAlloc (compare records)", 0) < 0)
        return -1;
    w->chunks_bytes = bytes;
    free(w->hchunks);
    w->hchunks = xmalloc(bytes);
    return 0;
}

/* One kvx_compare over count elements into w->hchunks.  0, or -1. */
static int compare_launch(WorkerState *w, CUdeviceptr out, const RefSite *site, const ElemType *t, uint64_t count,
                          double rtol, int norm_ok, CaseResult *res)
{
    uint64_t nch = (count + VERIFY_CHUNK - 1) / VERIFY_CHUNK, stride = site->stride;
    uint32_t code = (uint32_t)t->id | (site->t->id == ET_F64 && t->id != ET_F64 ? DEVIO_REF_F64 : 0);
    uint32_t nok = (uint32_t)norm_ok;
    CUdeviceptr ref = site->ptr;
    void *argv[] = {&out, &ref, &count, &stride, &code, &rtol, &nok, &w->chunks};
    const uint32_t grid[3] = {(uint32_t)nch, 1, 1}, block[3] = {DEVIO_THREADS, 1, 1}, one[3] = {1, 1, 1};
    if (worker_step(w, res, worker_launch_raw(w, w->cmp_fn, grid, block, one, 0, argv), "cuLaunchKernel (kvx_compare)",
                    0) < 0 ||
        worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (kvx_compare)", 1) < 0)
        return -1;
    return worker_step(w, res, cu.cuMemcpyDtoH(w->hchunks, w->chunks, nch * sizeof(VerifyChunk)),
                       "cuMemcpyDtoH (compare records)", 1);
}

/* Name the first differing elements: the slices of the first chunks that
 * hold any, downloaded.  0, or -1. */
static int list_first(WorkerState *w, CUdeviceptr out, const RefSite *site, const ElemType *t, uint64_t count,
                      double rtol, int norm_ok, const char *bufname, VerifyReport *rep, CaseResult *res)
{
    uint64_t nch = (count + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    size_t rsize = (size_t)site->t->size;
    void *o = xmalloc((size_t)VERIFY_CHUNK * t->size), *r = xmalloc((size_t)VERIFY_CHUNK * rsize);
    int rc = 0;
    for (uint64_t ch = 0; ch < nch && rep->listed < 4 && rc == 0; ch++) {
        if (!w->hchunks[ch].bad)
            continue;
        uint64_t b = ch * VERIFY_CHUNK, n = count - b < VERIFY_CHUNK ? count - b : VERIFY_CHUNK;
        uint64_t rb = site->stride ? b : 0, rn = site->stride ? n : 1;
        if (worker_step(w, res, cu.cuMemcpyDtoH(o, out + b * t->size, n * t->size), "cuMemcpyDtoH (slice)", 1) < 0 ||
            worker_step(w, res, cu.cuMemcpyDtoH(r, site->ptr + rb * rsize, rn * rsize), "cuMemcpyDtoH (slice)", 1) < 0)
            rc = -1;
        else
            verify_list_slice(t, o, site->t, r, site->stride, b, n, rtol, norm_ok, bufname, rep);
    }
    free(o);
    free(r);
    return rc;
}

int worker_compare_device(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                          const RefSite *site, double rtol, VerifyReport *rep, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    if (b->count == 0)
        return 0;
    uint64_t nch = (b->count + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    int norm_ok = 1;
    if (devio_ready(w, nch, res) < 0 ||
        compare_launch(w, run->ptr[k->buf], site, t, b->count, rtol, 1, res) < 0)
        return -1;
    verify_chunks_report(w->hchunks, nch, t, b->count, rtol, &norm_ok, rep);
    if (!norm_ok) {
        if (compare_launch(w, run->ptr[k->buf], site, t, b->count, rtol, 0, res) < 0)
            return -1;
        verify_chunks_report(w->hchunks, nch, t, b->count, rtol, &norm_ok, rep);
    }
    if (rep->ok)
        return 0;
    if (list_first(w, run->ptr[k->buf], site, t, b->count, rtol, norm_ok, b->name, rep, res) < 0)
        return -1;
    verify_list_close(rep);
    return 0;
}

int worker_upload(WorkerState *w, CUdeviceptr *dev, const void *host, uint64_t n, CaseResult *res)
{
    *dev = 0;
    CUresult r = cu.cuMemAlloc(dev, n ? n : 8);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        *dev = 0;
        return worker_fail(res, CASE_skipped, "out of device memory for a reference of %llu bytes",
                           (unsigned long long)n);
    }
    if (worker_step(w, res, r, "cuMemAlloc (reference)", 0) < 0)
        return -1;
    if (n && worker_step(w, res, cu.cuMemcpyHtoDAsync(*dev, host, n, w->stream), "cuMemcpyHtoDAsync (reference)",
                         0) < 0) {
        cu.cuMemFree(*dev);
        *dev = 0;
        return -1;
    }
    return worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (reference)", 1);
}

int worker_fill_device(WorkerState *w, const InputsPlan *plan, CUdeviceptr dst, uint64_t count, CaseResult *res)
{
    if (devio_load(w, res) < 0 ||
        (!w->fill_plan && worker_step(w, res, cu.cuMemAlloc(&w->fill_plan, sizeof *plan), "cuMemAlloc (fill plan)",
                                      0) < 0))
        return -1;
    /* A grid of at most 4096 blocks strides the rest: the bytes do not depend
     * on the grid, and more blocks than the device holds at once gain nothing. */
    uint64_t blocks = (count + DEVIO_THREADS - 1) / DEVIO_THREADS;
    const uint32_t grid[3] = {(uint32_t)(blocks < 4096 ? blocks : 4096), 1, 1}, block[3] = {DEVIO_THREADS, 1, 1},
                   one[3] = {1, 1, 1};
    void *argv[] = {&dst, &count, &w->fill_plan};
    /* The plan is copied from pageable memory, staged before the call returns:
     * the stream orders the next fill's plan after this launch. */
    if (worker_step(w, res, cu.cuMemcpyHtoDAsync(w->fill_plan, plan, sizeof *plan, w->stream),
                    "cuMemcpyHtoDAsync (fill plan)", 0) < 0)
        return -1;
    return worker_step(w, res, worker_launch_raw(w, w->fill_fn, grid, block, one, 0, argv),
                       "cuLaunchKernel (kvx_fill)", 0);
}

void worker_compare_close(WorkerState *w)
{
    free(w->hchunks);
    w->hchunks = NULL;
    if (!w->ctx)
        return;
    if (w->chunks)
        cu.cuMemFree(w->chunks);
    if (w->cmp_const)
        cu.cuMemFree(w->cmp_const);
    if (w->fill_plan)
        cu.cuMemFree(w->fill_plan);
    if (w->devio_mod)
        cu.cuModuleUnload(w->devio_mod);
}
