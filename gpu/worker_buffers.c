/* worker_buffers: a case's buffers in the worker (worker.c's case loop calls
 * it).  Inputs come from a cache keyed by their content (LRU, bounded),
 * generated on the device where it can, else on the host and uploaded;
 * outputs go into kept allocations, each with its reset planned: the
 * narrowest memset that writes its init, or a copy from the init's host
 * copy.  Buffers start at a 2 MiB boundary (alloc_aligned). */
#include "worker_internal.h"

#include <stdlib.h>
#include <string.h>

static void buf_key(const CaseBuf *b, char key[65])
{
    if (b->input_key[0])
        memcpy(key, b->input_key, 65);
    else
        inputs_key(&elem_types[b->type], b->count, &b->init, key);
}

static int key_used(char keys[][65], int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0)
            return 1;
    return 0;
}

/* Make room for the case's inputs: cached inputs it does not use go, least
 * recently used first, while the cache holds more than its bytes or leaves
 * fewer free entries than the case has buffers.  Memory stays bounded; inputs
 * shared by the workload points that follow stay. */
static void cache_evict(WorkerState *w, const CaseDesc *c)
{
    w->case_clock = w->clock;
    char keys[CASE_MAX_BUFS][65];
    for (int i = 0; i < c->nbufs; i++)
        buf_key(&c->bufs[i], keys[i]);
    for (;;) {
        uint64_t bytes = 0;
        int lru = -1;
        for (int h = 0; h < w->nhosts; h++) {
            bytes += w->hosts[h].bytes;
            if (!key_used(keys, c->nbufs, w->hosts[h].key) &&
                (lru < 0 || w->hosts[h].used < w->hosts[lru].used))
                lru = h;
        }
        if (lru < 0 || (bytes <= WORKER_INPUT_CACHE_BYTES && w->nhosts + c->nbufs <= WORKER_MAX_INPUTS))
            break;
        free(w->hosts[lru].data);
        w->hosts[lru] = w->hosts[--w->nhosts];
    }
    for (;;) {
        uint64_t bytes = 0;
        int lru = -1;
        for (int v = 0; v < w->ndevs; v++) {
            bytes += w->devs[v].bytes;
            if (!key_used(keys, c->nbufs, w->devs[v].key) &&
                (lru < 0 || w->devs[v].used < w->devs[lru].used))
                lru = v;
        }
        if (lru < 0 || (bytes <= WORKER_INPUT_CACHE_BYTES && w->ndevs + c->nbufs <= WORKER_MAX_INPUTS))
            break;
        cu.cuMemFree(w->devs[lru].raw);
        w->devs[lru] = w->devs[--w->ndevs];
    }
}

/* The host content of a buffer, generated once per key. */
static const void *host_get(WorkerState *w, const CaseBuf *b, const char *key, CaseResult *res)
{
    for (int h = 0; h < w->nhosts; h++)
        if (strcmp(w->hosts[h].key, key) == 0) {
            w->hosts[h].used = ++w->clock;
            return w->hosts[h].data;
        }
    KVX_ASSERT(w->nhosts < WORKER_MAX_INPUTS);
    const ElemType *t = &elem_types[b->type];
    void *data = mem_alloc(b->count ? b->count * (uint64_t)t->size : 1);
    KvxError err = {0};
    double t0 = wall_now_ms();
    int rc = inputs_fill(t, data, b->count, &b->init, w->threads, &err);
    res->host_wait_ms += wall_now_ms() - t0;
    if (rc < 0) {
        free(data);
        worker_fail(res, CASE_skipped, "buffer '%s': %s", b->name, err.msg);
        return NULL;
    }
    HostCopy *h = &w->hosts[w->nhosts++];
    memcpy(h->key, key, 65);
    h->data = data;
    h->bytes = b->count * (uint64_t)t->size;
    h->used = ++w->clock;
    h->uniform = -1;
    return data;
}

const void *worker_host_input(WorkerState *w, const CaseBuf *b, CaseResult *res)
{
    char key[65];
    buf_key(b, key);
    return host_get(w, b, key, res);
}

/* The host copy that holds data (host_get's). */
static HostCopy *host_copy_of(WorkerState *w, const void *data)
{
    for (int h = 0; h < w->nhosts; h++)
        if (w->hosts[h].data == data)
            return &w->hosts[h];
    KVX_ASSERT(!"an output's init outside the host copies");
    return NULL;
}

static uint64_t alloc_bytes(const CaseBuf *b)
{
    uint64_t bytes = ((b->count + b->offset) * (uint64_t)elem_types[b->type].size + 255) / 256 * 256;
    return bytes ? bytes : 256;
}

/* A case buffer's allocation, its base at WORKER_BUF_ALIGN: the driver places
 * a large allocation at such a boundary, a small one anywhere, which then
 * takes that much more and moves its base up to the boundary.  *raw is what
 * cuMemFree takes. */
static CUresult alloc_aligned(uint64_t bytes, CUdeviceptr *base, CUdeviceptr *raw)
{
    const uint64_t a = WORKER_BUF_ALIGN;
    CUresult r = cu.cuMemAlloc(raw, bytes);
    if (r == CUDA_SUCCESS && (*raw & (a - 1))) {
        cu.cuMemFree(*raw);
        r = cu.cuMemAlloc(raw, bytes + a);
    }
    *base = r == CUDA_SUCCESS ? (*raw + a - 1) / a * a : 0;
    return r;
}

static int dev_alloc(WorkerState *w, const CaseBuf *b, CUdeviceptr *base, CUdeviceptr *raw, CaseResult *res)
{
    uint64_t bytes = alloc_bytes(b);
    CUresult r = alloc_aligned(bytes, base, raw);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        /* Kept output allocations and the cached inputs this case has not
         * taken yet are only a saving: give them back, once (an input this
         * case asks for later is made again). */
        for (int i = w->nouts - 1; i >= 0; i--)
            if (!w->outs[i].busy) {
                cu.cuMemFree(w->outs[i].raw);
                w->outs[i] = w->outs[--w->nouts];
            }
        for (int v = w->ndevs - 1; v >= 0; v--)
            if (w->devs[v].used <= w->case_clock) {
                cu.cuMemFree(w->devs[v].raw);
                w->devs[v] = w->devs[--w->ndevs];
            }
        r = alloc_aligned(bytes, base, raw);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return worker_fail(res, CASE_skipped, "out of device memory: buffer '%s' needs %llu bytes",
                           b->name, (unsigned long long)bytes);
    return worker_step(w, res, r, "cuMemAlloc", 0);
}

/* An output allocation from the kept ones (the smallest that fits), or a new
 * one, which replaces the largest idle one when all entries are taken.
 * Returns its index, or -1 with res set. */
static int out_get(WorkerState *w, const CaseBuf *b, CaseResult *res)
{
    uint64_t bytes = alloc_bytes(b);
    int best = -1, largest = -1;
    for (int i = 0; i < w->nouts; i++) {
        const OutBuf *o = &w->outs[i];
        if (o->busy)
            continue;
        if (o->bytes >= bytes && (best < 0 || o->bytes < w->outs[best].bytes))
            best = i;
        if (largest < 0 || o->bytes > w->outs[largest].bytes)
            largest = i;
    }
    if (best < 0) {
        if (w->nouts == WORKER_MAX_OUTS) {
            KVX_ASSERT(largest >= 0); /* a case holds at most CASE_MAX_BUFS */
            cu.cuMemFree(w->outs[largest].raw);
            w->outs[largest] = w->outs[--w->nouts];
        }
        CUdeviceptr base, raw;
        if (dev_alloc(w, b, &base, &raw, res) < 0)
            return -1;
        best = w->nouts++;
        w->outs[best] = (OutBuf){base, raw, bytes, 0};
    }
    w->outs[best].busy = 1;
    return best;
}

/* The host copy an output is downloaded into, grown as needed and kept. */
static void *hout_get(WorkerState *w, int i, uint64_t bytes)
{
    if (bytes > w->hout_bytes[i] || !w->hout[i]) {
        free(w->hout[i]);
        w->hout[i] = mem_alloc(bytes ? bytes : 1);
        w->hout_bytes[i] = bytes;
    }
    return w->hout[i];
}

/* Whether every element of h (elements of size bytes) is the same value,
 * found once per host copy: a scan of a 256 MB init per case cost 0.1 s, the
 * wall of a bandwidth-bound case many times over.  Comparing the copy with
 * itself one element on is the same test in one pass. */
static int all_same(HostCopy *h, int size)
{
    if (h->uniform < 0) {
        const unsigned char *p = h->data;
        h->uniform = h->bytes <= (uint64_t)size || memcmp(p, p + size, h->bytes - (uint64_t)size) == 0
                         ? size : 0;
    }
    return h->uniform == size;
}

/* The narrowest memset that writes element p everywhere, if any (a copy
 * stays r's kind otherwise). */
static void reset_pattern(Reset *r, const unsigned char *p, int size)
{
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

/* Choose the narrowest memset that writes the init, when every element of it
 * is the same; a copy otherwise.  h NULL: the init is the constant one
 * element elem holds, and a copy is never needed. */
static void reset_plan(Reset *r, CUdeviceptr ptr, HostCopy *h, const unsigned char *elem, int size,
                       uint64_t count)
{
    memset(r, 0, sizeof *r);
    r->kind = RESET_COPY;
    r->ptr = ptr;
    r->host = h ? h->data : NULL;
    r->bytes = count * (uint64_t)size;
    if (count == 0 || (h && !all_same(h, size)))
        return; /* nothing to write, or a copy */
    reset_pattern(r, h ? h->data : elem, size);
    KVX_ASSERT(r->kind != RESET_COPY || h);
}

CUresult worker_reset_enqueue(WorkerState *w, const Reset *r)
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

/* The plan of b's generation on the device: 1 with *plan set, 0 where the
 * host generates it (zipf past 2^24 ranks), or -1 with res skipped (bad parameters). */
static int input_plan(const CaseBuf *b, InputsPlan *plan, CaseResult *res)
{
    KvxError err = {0};
    int rc = inputs_plan(&elem_types[b->type], b->count, &b->init, plan, &err);
    if (rc < 0)
        worker_fail(res, CASE_skipped, "buffer '%s': %s", b->name, err.msg);
    return rc;
}

/* An input's device copy from the cache; on a miss generated on the device,
 * or where the device cannot (or a host reference made the host copy
 * already), generated on the host and uploaded (*uploaded set either way).
 * 0 or -1 with res set. */
static int input_get(WorkerState *w, const CaseBuf *b, const char *key, CaseLaunch *run, int i, int *uploaded,
                     CaseResult *res)
{
    int size = elem_types[b->type].size;
    DevCopy *d = NULL;
    for (int v = 0; v < w->ndevs && !d; v++)
        if (w->devs[v].offset == b->offset && strcmp(w->devs[v].key, key) == 0)
            d = &w->devs[v];
    if (!d) {
        InputsPlan plan;
        int on_dev = run->host[i] ? 0 : input_plan(b, &plan, res);
        CUdeviceptr base, raw;
        if (on_dev < 0 || (!on_dev && !run->host[i] && !(run->host[i] = host_get(w, b, key, res))) ||
            dev_alloc(w, b, &base, &raw, res) < 0)
            return -1;
        KVX_ASSERT(w->ndevs < WORKER_MAX_INPUTS);
        d = &w->devs[w->ndevs++];
        memcpy(d->key, key, 65);
        d->offset = b->offset;
        d->base = base;
        d->raw = raw;
        d->bytes = alloc_bytes(b);
        CUdeviceptr dst = base + b->offset * (uint64_t)size;
        if (b->count && on_dev && worker_fill_device(w, &plan, dst, b->count, res) < 0)
            return -1;
        if (b->count && !on_dev &&
            worker_step(w, res, cu.cuMemcpyHtoDAsync(dst, run->host[i], b->count * (uint64_t)size, w->stream),
                        "cuMemcpyHtoDAsync (input)", 0) < 0)
            return -1;
        *uploaded |= b->count > 0;
    }
    d->used = ++w->clock;
    run->base[i] = d->base;
    run->ptr[i] = d->base + b->offset * (uint64_t)size;
    return 0;
}

static void args_bind(const CaseDesc *c, CaseLaunch *run)
{
    for (int l = 0; l <= c->nnext; l++) {
        const CaseArg *args = l ? c->next[l - 1].args : c->args;
        int nargs = l ? c->next[l - 1].nargs : c->nargs;
        for (int i = 0; i < nargs; i++) {
            const CaseArg *a = &args[i];
            if (a->buf >= 0) {
                run->argv[l][i] = &run->ptr[a->buf];
            } else {
                /* little-endian on both sides: the low bytes are the value */
                memcpy(&run->scalars[l][i], a->bytes, (size_t)a->size);
                run->argv[l][i] = &run->scalars[l][i];
            }
        }
    }
}

/* Whether output i's init is a constant that one element, written to elem,
 * stands for: no host reference reads it, and its element is a memset's
 * (not 8 bytes of two halves, say).  A full host copy of a 256 MB output
 * cost 15 ms.  A reference kernel's outputs then start from the same memset
 * (worker_ref.c). */
static int const_init(const CaseDesc *c, int i, unsigned char elem[16])
{
    const CaseBuf *b = &c->bufs[i];
    const ElemType *t = &elem_types[b->type];
    KvxError err = {0};
    if (b->init.kind != INIT_CONST || worker_host_reads(c, i) || t->size > 16 ||
        inputs_fill(t, elem, 1, &b->init, 1, &err) < 0) {
        kvx_error_clear(&err);
        return 0;
    }
    Reset r = {.kind = RESET_COPY};
    reset_pattern(&r, elem, t->size);
    return r.kind != RESET_COPY;
}

/* Lay out every buffer: inputs from the cache (generated on a miss, on the
 * device where it can), outputs in kept allocations with their reset planned.  0 or -1. */
int worker_buffers_prepare(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    int uploaded = 0;
    cache_evict(w, c);
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *b = &c->bufs[i];
        int size = elem_types[b->type].size;
        char key[65];
        buf_key(b, key);
        /* An input's host copy is made only for a host reference that reads
         * it: the others are generated on the device. */
        if (!b->checked && !b->scratch) {
            if ((worker_host_reads(c, i) && !(run->host[i] = host_get(w, b, key, res))) ||
                input_get(w, b, key, run, i, &uploaded, res) < 0)
                return -1;
            continue;
        }
        /* Outputs and scratch: kept allocations, reset before every launch
         * from their init's host copy (an uninitialised scratch has none;
         * a constant is one element, unless something reads the copy). */
        int uninit = b->scratch == CASE_SCRATCH_UNINIT;
        unsigned char elem[16];
        int one = !uninit && const_init(c, i, elem);
        if (!uninit && !one && !(run->host[i] = host_get(w, b, key, res)))
            return -1;
        int o = out_get(w, b, res);
        if (o < 0)
            return -1;
        run->owned[i] = o + 1;
        run->base[i] = w->outs[o].base;
        run->ptr[i] = run->base[i] + b->offset * (uint64_t)size;
        if (!uninit)
            reset_plan(&run->reset[i], run->ptr[i], one ? NULL : host_copy_of(w, run->host[i]), elem, size,
                       b->count);
        if (b->checked)
            run->out[i] = hout_get(w, i, b->count * (uint64_t)size);
    }
    args_bind(c, run);
    /* The wait makes the upload's time this step's, and its errors this
     * case's; with nothing uploaded there is nothing to wait for. */
    if (!uploaded)
        return 0;
    return worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize (upload)", 1);
}

/* The case's output allocations go back to the kept ones. */
void worker_buffers_release(WorkerState *w, const CaseDesc *c, CaseLaunch *run)
{
    for (int i = 0; i < c->nbufs; i++)
        if (run->owned[i])
            w->outs[run->owned[i] - 1].busy = 0;
}

