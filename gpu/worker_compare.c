/* worker_compare: an output compared with its reference on the device
 * (issue #24 item 2).  kvx_compare (gpu/devio.cu, loaded from its PTX in
 * gpu/devio_ptx.h) writes one VerifyChunk per VERIFY_CHUNK elements; only
 * those records cross to the host, then, for a mismatch, the slices of output
 * and reference that hold the first differing elements (at most four chunks),
 * which host/verify_device.c names as verify_compare would.  A float output
 * whose norm test fails is counted again with the element rule on (a second
 * launch), as verify_compare's second pass.
 *
 * An order-free check of integers first compares the two sides'
 * fingerprints (kvx_mset_hash: sums of mixed bits, which ignore order): four
 * u64 cross to the host, and equal ones are the ok of the usual case.  Where
 * they differ, and for floats (compared within a tolerance), the output and
 * its reference are sorted on the device (kvx_sort_*: a radix sort, one pass
 * a byte) and the sorted copies compared with kvx_compare; only a mismatch
 * of integers downloads them, to list the values written more or fewer times
 * than expected.
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
_Static_assert(DEVIO_MSET_SALT0 == VERIFY_MSET_SALT0 && DEVIO_MSET_SALT1 == VERIFY_MSET_SALT1,
               "gpu/devio.cu's kvx_mset_hash and host/verify_device.c's twin salt alike");

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
                    "cuModuleGetFunction (kvx_fill)", 0) < 0 ||
        worker_step(w, res, cu.cuModuleGetFunction(&w->mset_fn, w->devio_mod, DEVIO_MSET_KERNEL),
                    "cuModuleGetFunction (kvx_mset_hash)", 0) < 0)
        return -1;
    static const char *const sorts[4] = {DEVIO_SORT_KEY_KERNEL, DEVIO_SORT_COUNT_KERNEL, DEVIO_SORT_SCAN_KERNEL,
                                         DEVIO_SORT_SCATTER_KERNEL};
    for (int i = 0; i < 4; i++)
        if (worker_step(w, res, cu.cuModuleGetFunction(&w->sort_fn[i], w->devio_mod, sorts[i]),
                        "cuModuleGetFunction (kvx_sort)", 0) < 0)
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
    w->hchunks = mem_alloc(bytes);
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
    void *o = mem_alloc((size_t)VERIFY_CHUNK * t->size), *r = mem_alloc((size_t)VERIFY_CHUNK * rsize);
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

int worker_compare_span(WorkerState *w, CUdeviceptr out, const ElemType *t, uint64_t count, const RefSite *site,
                        double rtol, const char *bufname, VerifyReport *rep, CaseResult *res)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    if (count == 0)
        return 0;
    uint64_t nch = (count + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    int norm_ok = 1;
    if (devio_ready(w, nch, res) < 0 || compare_launch(w, out, site, t, count, rtol, 1, res) < 0)
        return -1;
    verify_chunks_report(w->hchunks, nch, t, count, rtol, &norm_ok, rep);
    if (!norm_ok) {
        if (compare_launch(w, out, site, t, count, rtol, 0, res) < 0)
            return -1;
        verify_chunks_report(w->hchunks, nch, t, count, rtol, &norm_ok, rep);
    }
    if (rep->ok)
        return 0;
    if (list_first(w, out, site, t, count, rtol, norm_ok, bufname, rep, res) < 0)
        return -1;
    verify_list_close(rep);
    return 0;
}

int worker_compare_device(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                          const RefSite *site, double rtol, VerifyReport *rep, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    return worker_compare_span(w, run->ptr[k->buf], &elem_types[b->type], b->count, site, rtol, b->name, rep,
                               res);
}

/* ---- the order-free check: fingerprints, else both sides sorted on the device --- */

/* A sort's device scratch: two key arrays (8 bytes an element) and the
 * digit counts of its tiles. */
typedef struct SortBufs {
    CUdeviceptr a, b, counts;
} SortBufs;

/* bytes at *p, or -1 with res: skipped when the device has no room (the
 * check cannot be made; the case is not a fault), else worker_step's. */
static int scratch_alloc(WorkerState *w, CUdeviceptr *p, uint64_t bytes, CaseResult *res)
{
    CUresult r = cu.cuMemAlloc(p, bytes ? bytes : 8);
    if (r == CUDA_SUCCESS)
        return 0;
    *p = 0;
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return worker_fail(res, CASE_skipped, "out of device memory for the order-free check's sort (%llu bytes)",
                           (unsigned long long)bytes);
    return worker_step(w, res, r, "cuMemAlloc (sort)", 0);
}

static void scratch_free(CUdeviceptr p)
{
    if (p)
        cu.cuMemFree(p);
}

static int sort_launch(WorkerState *w, int fn, uint64_t grid, uint32_t block, void **argv, CaseResult *res)
{
    const uint32_t g[3] = {(uint32_t)grid, 1, 1}, b[3] = {block, 1, 1}, one[3] = {1, 1, 1};
    return worker_step(w, res, worker_launch_raw(w, w->sort_fn[fn], g, b, one, 0, argv), "cuLaunchKernel (kvx_sort)",
                       0);
}

/* The n elements of type t at src, sorted into dst (n elements of t), as
 * keys through s: one counting, scanning and scattering pass per byte of t.
 * Enqueued on the stream.  0, or -1 with res set. */
static int sort_device(WorkerState *w, const SortBufs *s, CUdeviceptr src, const ElemType *t, uint64_t n,
                       CUdeviceptr dst, CaseResult *res)
{
    uint64_t tiles = (n + DEVIO_SORT_TILE - 1) / DEVIO_SORT_TILE, total = 256 * tiles;
    uint64_t kgrid = (n + DEVIO_THREADS - 1) / DEVIO_THREADS;
    kgrid = kgrid < 4096 ? kgrid : 4096;
    uint32_t code = (uint32_t)t->id, back = (uint32_t)t->id | DEVIO_SORT_BACK;
    CUdeviceptr from = s->a, to = s->b, counts = s->counts;
    void *ka[] = {&src, &from, &n, &code};
    if (sort_launch(w, 0, kgrid, DEVIO_THREADS, ka, res) < 0)
        return -1;
    for (uint32_t shift = 0; shift < 8u * (uint32_t)t->size; shift += 8) {
        void *ca[] = {&from, &n, &shift, &counts}, *sa[] = {&counts, &total}, *xa[] = {&from, &to, &n, &shift, &counts};
        if (sort_launch(w, 1, tiles, DEVIO_THREADS, ca, res) < 0 || sort_launch(w, 2, 1, 1024, sa, res) < 0 ||
            sort_launch(w, 3, tiles, 32, xa, res) < 0)
            return -1;
        CUdeviceptr x = from;
        from = to, to = x;
    }
    void *ba[] = {&from, &dst, &n, &back};
    return sort_launch(w, 0, kgrid, DEVIO_THREADS, ba, res);
}

/* The values written more or fewer times than expected, from the two sorted
 * copies downloaded: only for a mismatch.  0, or -1 with res set. */
static int list_multiset(WorkerState *w, CUdeviceptr so, CUdeviceptr sr, const ElemType *t, uint64_t n,
                         const char *bufname, VerifyReport *rep, CaseResult *res)
{
    void *got = mem_alloc(n * t->size), *want = mem_alloc(n * t->size);
    int rc = worker_step(w, res, cu.cuMemcpyDtoH(got, so, n * t->size), "cuMemcpyDtoH (sorted output)", 1);
    if (rc == 0)
        rc = worker_step(w, res, cu.cuMemcpyDtoH(want, sr, n * t->size), "cuMemcpyDtoH (sorted reference)", 1);
    if (rc == 0)
        verify_multiset_sorted(t, got, want, n, bufname, rep);
    free(got);
    free(want);
    return rc;
}

/* The order-free check through sorted copies: both sides sorted on the
 * device and compared in order; a mismatch of integers listed from them.
 * count > 0.  0, or -1 with res set. */
static int compare_sorted(WorkerState *w, CUdeviceptr out, const ElemType *t, uint64_t count, const RefSite *site,
                          double rtol, const char *bufname, VerifyReport *rep, CaseResult *res)
{
    const ElemType *rt = site->t;
    uint64_t tiles = (count + DEVIO_SORT_TILE - 1) / DEVIO_SORT_TILE;
    SortBufs s = {0};
    CUdeviceptr so = 0, sr = 0;
    int rc = scratch_alloc(w, &s.a, 8 * count, res) < 0 || scratch_alloc(w, &s.b, 8 * count, res) < 0 ||
             scratch_alloc(w, &s.counts, 8 * 256 * tiles, res) < 0 ||
             scratch_alloc(w, &so, count * t->size, res) < 0 || scratch_alloc(w, &sr, count * rt->size, res) < 0 ||
             sort_device(w, &s, out, t, count, so, res) < 0 || sort_device(w, &s, site->ptr, rt, count, sr, res) < 0
                 ? -1 : 0;
    char name[96];
    snprintf(name, sizeof name, "%s sorted", bufname);
    RefSite sorted = {sr, rt, 1, NULL};
    if (rc == 0)
        rc = worker_compare_span(w, so, t, count, &sorted, rtol, name, rep, res);
    if (rc == 0 && !rep->ok && !t->is_float)
        rc = list_multiset(w, so, sr, t, count, bufname, rep, res);
    scratch_free(sr), scratch_free(so), scratch_free(s.counts), scratch_free(s.b), scratch_free(s.a);
    return rc;
}

/* Whether the n elements of type t at out and at ref have equal
 * fingerprints (kvx_mset_hash, into the worker's kept sums): *same 1 when
 * every sum agrees.  0, or -1 with res set. */
static int mset_same(WorkerState *w, CUdeviceptr out, CUdeviceptr ref, const ElemType *t, uint64_t n, int *same,
                     CaseResult *res)
{
    uint64_t sums[DEVIO_MSET_SUMS];
    *same = 0;
    if (!w->mset_sums &&
        worker_step(w, res, cu.cuMemAlloc(&w->mset_sums, sizeof sums), "cuMemAlloc (fingerprint sums)", 0) < 0)
        return -1;
    /* Grid-stride: 4096 blocks at most, as the fill's; the sums do not depend on the grid. */
    uint64_t blocks = (n + DEVIO_THREADS - 1) / DEVIO_THREADS;
    const uint32_t grid[3] = {(uint32_t)(blocks < 4096 ? blocks : 4096), 1, 1}, block[3] = {DEVIO_THREADS, 1, 1},
                   one[3] = {1, 1, 1};
    uint32_t code = (uint32_t)t->id;
    void *argv[] = {&out, &ref, &n, &code, &w->mset_sums};
    if (worker_step(w, res, cu.cuMemsetD8Async(w->mset_sums, 0, sizeof sums, w->stream),
                    "cuMemsetD8Async (fingerprint sums)", 0) < 0 ||
        worker_step(w, res, worker_launch_raw(w, w->mset_fn, grid, block, one, 0, argv),
                    "cuLaunchKernel (kvx_mset_hash)", 0) < 0 ||
        worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (kvx_mset_hash)", 1) < 0 ||
        worker_step(w, res, cu.cuMemcpyDtoH(sums, w->mset_sums, sizeof sums), "cuMemcpyDtoH (fingerprint sums)",
                    1) < 0)
        return -1;
    *same = sums[0] == sums[2] && sums[1] == sums[3];
    return 0;
}

int worker_compare_multiset(WorkerState *w, CUdeviceptr out, const ElemType *t, uint64_t count,
                            const RefSite *site, double rtol, const char *bufname, VerifyReport *rep,
                            CaseResult *res)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    if (count == 0)
        return 0;
    KVX_ASSERT(site->stride == 1 && (t->is_float || site->t == t));
    if (devio_load(w, res) < 0)
        return -1;
    /* Equal fingerprints: rep stays what an exact integer match reports
     * (ok, no mismatch, rel_err 0), as the sorted path would leave it. */
    int same = 0;
    if (!t->is_float && mset_same(w, out, site->ptr, t, count, &same, res) < 0)
        return -1;
    if (same)
        return 0;
    return compare_sorted(w, out, t, count, site, rtol, bufname, rep, res);
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

/* zipf's table (inputs_table_make) copied to the device, *plan pointed at
 * the copies (in *cdf and *guide, the caller's to free after the fill); the
 * host's time building it to res->host_wait_ms.  0, or -1 with res set. */
static int zipf_table_upload(WorkerState *w, InputsPlan *plan, CUdeviceptr *cdf, CUdeviceptr *guide,
                             CaseResult *res)
{
    InputsTable tab = {0};
    double t0 = wall_now_ms();
    inputs_table_make(plan, w->threads, &tab);
    res->host_wait_ms += wall_now_ms() - t0;
    int rc = worker_upload(w, cdf, tab.cdf, tab.cdf_bytes, res);
    if (rc == 0)
        rc = worker_upload(w, guide, tab.guide, tab.guide_bytes, res);
    inputs_table_free(&tab);
    plan->zipf_cdf = *cdf, plan->zipf_guide = *guide;
    return rc;
}

int worker_fill_device(WorkerState *w, const InputsPlan *plan0, CUdeviceptr dst, uint64_t count, CaseResult *res)
{
    InputsPlan plan = *plan0;
    CUdeviceptr cdf = 0, guide = 0;
    if (devio_load(w, res) < 0 ||
        (!w->fill_plan && worker_step(w, res, cu.cuMemAlloc(&w->fill_plan, sizeof plan), "cuMemAlloc (fill plan)",
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
    int rc = plan.zipf_n ? zipf_table_upload(w, &plan, &cdf, &guide, res) : 0;
    if (rc == 0)
        rc = worker_step(w, res, cu.cuMemcpyHtoDAsync(w->fill_plan, &plan, sizeof plan, w->stream),
                         "cuMemcpyHtoDAsync (fill plan)", 0);
    if (rc == 0)
        rc = worker_step(w, res, worker_launch_raw(w, w->fill_fn, grid, block, one, 0, argv),
                         "cuLaunchKernel (kvx_fill)", 0);
    /* the table is read by the launch: freed after it */
    if (cdf || guide) {
        if (rc == 0)
            rc = worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (kvx_fill)", 1);
        scratch_free(cdf), scratch_free(guide);
    }
    return rc;
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
    if (w->mset_sums)
        cu.cuMemFree(w->mset_sums);
    if (w->devio_mod)
        cu.cuModuleUnload(w->devio_mod);
}
