/* fake_kernels: the fake driver's kernels (fake.h): a host stand-in per entry
 * point that the CPU tests run, computing the kernel's real outputs so that the
 * worker's own verification judges them.  A stand-in knows its entry point's
 * parameters, not the template's placeholders: it does what every variant of
 * that kernel computes, over the elements the launch covers (fill and count:
 * one thread an element; the grid-stride kernels: all n).  Every access goes
 * through fake.c's fake_mem(), so a buffer too small for the launch is the illegal
 * address it would be on a GPU.
 *
 * Limits: count's counter is 32-bit (a u64 one reads as its init plus the
 * count while the low word does not carry: the bytes above keep their init);
 * filter_count's counters are as wide as the module's PTX adds
 * (FakeLaunch.counter_bytes); a 64-bit scalar read of a 32-bit argument
 * relies on the worker's zeroed argument slots (CaseLaunch.scalars). */
#include "fake.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t arg_i64(const FakeLaunch *l, int i)
{
    int64_t v;
    memcpy(&v, l->params[i], sizeof v);
    return v;
}

static int32_t arg_i32(const FakeLaunch *l, int i)
{
    int32_t v;
    memcpy(&v, l->params[i], sizeof v);
    return v;
}

/* The host address of n elements of size at pointer argument i, or NULL. */
static void *arg_mem(const FakeLaunch *l, int i, uint64_t n, int size)
{
    CUdeviceptr p;
    memcpy(&p, l->params[i], sizeof p);
    return fake_mem(p, n ? n * (uint64_t)size : 1);
}

static uint64_t threads(const FakeLaunch *l)
{
    return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* fill(const int *in, long long n, unsigned *out): out[i] = 7 (tests/data/specs/fake.cu). */
static int fill(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    uint64_t m = n > 0 ? min_u64((uint64_t)n, threads(l)) : 0;
    const int32_t *in = arg_mem(l, 0, m, 4);
    uint32_t *out = arg_mem(l, 2, m, 4);
    if (!in || !out)
        return -1;
    for (uint64_t i = 0; i < m; i++)
        out[i] = 7u + (uint32_t)(in[i] & 0);
    if (l->mismatch && m)
        out[m - 1] += 1; /* the last: a device comparison must find it in the last chunk */
    return 0;
}

/* out[0] += the elements of in[0, m) below thresh. */
static int count_into(const FakeLaunch *l, int in_arg, uint64_t m, int32_t thresh, int out_arg)
{
    const int32_t *in = arg_mem(l, in_arg, m, 4);
    uint32_t *out = arg_mem(l, out_arg, 1, 4);
    if (!in || !out)
        return -1;
    uint32_t hits = 0;
    for (uint64_t i = 0; i < m; i++)
        hits += in[i] < thresh;
    *out += hits + (l->mismatch ? 1 : 0);
    return 0;
}

/* count(const int *in, long long n, int thresh, unsigned *out), one thread an
 * element (tests/data/specs/tiny.cu, count.cu, refcount.cu). */
static int count(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    return count_into(l, 0, n > 0 ? min_u64((uint64_t)n, threads(l)) : 0, arg_i32(l, 2), 3);
}

/* tiny_count(in, long long n, int thresh, out): `items` elements a thread
 * over a grid that covers n (templates/tiny_count.cu). */
static int tiny_count(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    return count_into(l, 0, n > 0 ? (uint64_t)n : 0, arg_i32(l, 2), 3);
}

/* count_serial(const int *in, int n, int thresh, unsigned *out): one thread
 * in all (tests/data/specs/refcount_ref.cu). */
static int count_serial(const FakeLaunch *l)
{
    int32_t n = arg_i32(l, 1);
    return count_into(l, 0, n > 0 ? (uint64_t)n : 0, arg_i32(l, 2), 3);
}

/* count_u16(const int *in, long long n, int thresh, unsigned short *out):
 * one thread counts all n into a 16-bit counter, which wraps
 * (tests/data/specs/fake_resets.cu: an output reset by a 16-bit memset).
 * The counter is read before the add, so a reset that did not happen shows. */
static int count_u16(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    uint64_t m = n > 0 ? (uint64_t)n : 0;
    int32_t thresh = arg_i32(l, 2);
    const int32_t *in = arg_mem(l, 0, m, 4);
    uint16_t *out = arg_mem(l, 3, 1, 2);
    if (!in || !out)
        return -1;
    uint16_t hits = 0;
    for (uint64_t i = 0; i < m; i++)
        hits = (uint16_t)(hits + (in[i] < thresh));
    *out = (uint16_t)(*out + hits + (l->mismatch ? 1 : 0));
    return 0;
}

/* filter_count(in, const unsigned short *addr, int n, int thresh, out):
 * out[addr[i]] += in[i] < thresh over all n, every strategy's result
 * (templates/filter_count.cu; count_ref of tests/data/specs/count_by_ref.cu).
 * With address=const addr is all zeros, as the spec draws it from [0, 0]. */
static int filter_count(const FakeLaunch *l)
{
    int32_t n = arg_i32(l, 2), thresh = arg_i32(l, 3);
    uint64_t m = n > 0 ? (uint64_t)n : 0;
    const int32_t *in = arg_mem(l, 0, m, 4);
    const uint16_t *addr = arg_mem(l, 1, m, 2);
    if (!in || !addr)
        return -1;
    /* The counters the launch may touch, checked once rather than per hit
     * (the loops are branch-free: a stand-in runs every sample's launch). */
    uint16_t top = 0;
    for (uint64_t i = 0; i < m; i++)
        top = addr[i] > top ? addr[i] : top;
    unsigned char *c = arg_mem(l, 4, m ? (uint64_t)top + 1 : 1, l->counter_bytes);
    if (!c)
        return -1;
    uint64_t *c64 = (uint64_t *)(void *)c;
    uint32_t *c32 = (uint32_t *)(void *)c;
    if (l->counter_bytes == 8)
        for (uint64_t i = 0; i < m; i++)
            c64[addr[i]] += (uint64_t)(in[i] < thresh);
    else
        for (uint64_t i = 0; i < m; i++)
            c32[addr[i]] += (uint32_t)(in[i] < thresh);
    if (l->mismatch)
        c32[0] += 1;
    return 0;
}

/* The counter at c[k], counter_bytes wide. */
static uint64_t counter_get(const FakeLaunch *l, const unsigned char *c, uint64_t k)
{
    if (l->counter_bytes == 8)
        return ((const uint64_t *)(const void *)c)[k];
    return ((const uint32_t *)(const void *)c)[k];
}

static void counter_set(const FakeLaunch *l, unsigned char *c, uint64_t k, uint64_t v)
{
    if (l->counter_bytes == 8)
        ((uint64_t *)(void *)c)[k] = v;
    else
        ((uint32_t *)(void *)c)[k] = (uint32_t)v;
}

/* filter_count_blocks(in, addr, n, thresh, partial), two_pass's first
 * kernel (templates/filter_count.cu): block b writes to partial[b] the hits
 * of its grid-stride share of int4 loads (thread g reads int4s g, g +
 * threads, ...), and of the tail element n4 * 4 + g for g < n % 4.  Every
 * block's count is its own, so a second kernel that drops one is wrong. */
static int filter_count_blocks(const FakeLaunch *l)
{
    int32_t n = arg_i32(l, 2), thresh = arg_i32(l, 3);
    uint64_t m = n > 0 ? (uint64_t)n : 0, grid = l->grid[0], block = l->block[0];
    const int32_t *in = arg_mem(l, 0, m, 4);
    unsigned char *partial = arg_mem(l, 4, grid, l->counter_bytes);
    if (!in || !partial || grid == 0 || block == 0)
        return -1;
    for (uint64_t b = 0; b < grid; b++)
        counter_set(l, partial, b, 0);
    uint64_t n4 = m / 4;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t g = i < n4 * 4 ? i / 4 : i - n4 * 4;
        uint64_t b = (g / block) % grid;
        counter_set(l, partial, b, counter_get(l, partial, b) + (uint64_t)(in[i] < thresh));
    }
    return 0;
}

/* filter_count_sum(partial, nblocks, out): out[0] = the sum of the first
 * nblocks partial counts (a store, not an add). */
static int filter_count_sum(const FakeLaunch *l)
{
    int32_t nb = arg_i32(l, 1);
    uint64_t m = nb > 0 ? (uint64_t)nb : 0;
    const unsigned char *partial = arg_mem(l, 0, m, l->counter_bytes);
    unsigned char *out = arg_mem(l, 2, 1, l->counter_bytes);
    if (!partial || !out)
        return -1;
    uint64_t sum = 0;
    for (uint64_t b = 0; b < m; b++)
        sum += counter_get(l, partial, b);
    counter_set(l, out, 0, sum + (l->mismatch ? 1 : 0));
    return 0;
}

/* histogram.yaml's binnings by bin count (its set: bins): the element size
 * and the counted values LO..HI, `width` to a bin.  The kernels take the
 * count only; the rest is compiled in, so the stand-in knows it from here. */
static const struct {
    int bins, size, lo, hi, width;
} hist_binnings[] = {
    {7, 1, 97, 122, 4},
    {256, 1, 0, 255, 1},
    {4096, 2, 0, 4095, 1},
};

/* histogram_private(in, n, bins, priv), global_private's first kernel
 * (templates/histogram.cu): block b adds each counted value of its
 * grid-stride share (thread g reads g, g + threads, ...) to its copy,
 * priv[b * bins + bin]; the copies start zeroed (a scratch reset). */
static int histogram_private(const FakeLaunch *l)
{
    int32_t n = arg_i32(l, 1), bins = arg_i32(l, 2);
    size_t k = 0, nk = sizeof hist_binnings / sizeof hist_binnings[0];
    while (k < nk && hist_binnings[k].bins != bins)
        k++;
    if (k == nk || n < 0)
        return -1;
    uint64_t m = (uint64_t)n, grid = l->grid[0], block = l->block[0];
    const unsigned char *in = arg_mem(l, 0, m, hist_binnings[k].size);
    uint32_t *priv = arg_mem(l, 3, grid * (uint64_t)bins, 4);
    if (!in || !priv || block == 0)
        return -1;
    for (uint64_t i = 0; i < m; i++) {
        int v = hist_binnings[k].size == 1 ? in[i] : ((const uint16_t *)(const void *)in)[i];
        if (v < hist_binnings[k].lo || v > hist_binnings[k].hi)
            continue;
        uint64_t b = (i / block) % grid;
        priv[b * (uint64_t)bins + (uint64_t)((v - hist_binnings[k].lo) / hist_binnings[k].width)]++;
    }
    return 0;
}

/* histogram_merge(priv, nblocks, bins, hist): hist[b] = the sum of bin b
 * over the first nblocks copies (a store). */
static int histogram_merge(const FakeLaunch *l)
{
    int32_t nb = arg_i32(l, 1), bins = arg_i32(l, 2);
    if (nb < 0 || bins < 0)
        return -1;
    const uint32_t *priv = arg_mem(l, 0, (uint64_t)nb * (uint64_t)bins, 4);
    uint32_t *hist = arg_mem(l, 3, (uint64_t)bins, 4);
    if (!priv || !hist)
        return -1;
    for (int32_t b = 0; b < bins; b++) {
        uint32_t total = 0;
        for (int32_t k = 0; k < nb; k++)
            total += priv[(uint64_t)k * (uint64_t)bins + (uint64_t)b];
        hist[b] = total + (l->mismatch && b == 0 ? 1 : 0);
    }
    return 0;
}

/* kvx_l2_flush(buf, n16, out): reads every 16-byte word (gpu/flush_ptx.h);
 * on the host only whether the buffer is there. */
static int l2_flush(const FakeLaunch *l)
{
    return arg_mem(l, 0, (uint64_t)arg_i64(l, 1), 16) ? 0 : -1;
}

/* compact(in, long long n, int thresh, int *out, unsigned *count) and its
 * reference compact_serial (tests/data/compact.cu): the elements below thresh
 * at slots handed out from *count.  The serial one writes them in index
 * order; the variants, in reverse (an atomic counter fixes no order), so an
 * order-free check is what accepts them.  With kvx_fake_mismatch the first
 * kept element is written as the second's value (one written twice, one not
 * at all, the count right), as the planted dupdrop variant does. */
static int compact_into(const FakeLaunch *l, uint64_t m, int reverse)
{
    int32_t thresh = arg_i32(l, 2);
    const int32_t *in = arg_mem(l, 0, m, 4);
    int32_t *out = arg_mem(l, 3, m, 4);
    uint32_t *count = arg_mem(l, 4, 1, 4);
    if (!in || !out || !count)
        return -1;
    uint64_t first = m, second = m;
    for (uint64_t k = 0; k < m; k++) {
        uint64_t i = reverse ? m - 1 - k : k;
        if (in[i] >= thresh)
            continue;
        int32_t v = in[i];
        if (l->mismatch && first == m)
            first = i;
        else if (l->mismatch && second == m)
            second = i, out[*count - 1] = v;
        out[(*count)++] = v;
    }
    return 0;
}

/* kvx_compare(out, ref, n, stride, code, rtol, norm_ok, chunks) (gpu/devio.cu):
 * the host's twin of the kernel's rule, verify_chunk_host, per chunk.  It
 * exercises the worker's device comparison, not the kernel: the GPU test
 * (tests/test_gpu_devio.c) holds the kernel to the host. */
enum { REF_F64 = 0x100 }; /* gpu/devio.cu's DEVIO_REF_F64: the reference is double */

static int compare(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 2), stride = (uint64_t)arg_i64(l, 3);
    uint32_t code = (uint32_t)arg_i32(l, 4);
    double rtol;
    memcpy(&rtol, l->params[5], sizeof rtol);
    int norm_ok = arg_i32(l, 6) != 0;
    if ((code & 0xff) >= ET_COUNT)
        return -1;
    const ElemType *t = &elem_types[code & 0xff], *rt = code & REF_F64 ? &elem_types[ET_F64] : t;
    uint64_t nch = (n + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    const void *out = arg_mem(l, 0, n, t->size), *ref = arg_mem(l, 1, stride ? n : 1, rt->size);
    VerifyChunk *ch = arg_mem(l, 7, nch, sizeof *ch);
    if (!out || !ref || !ch)
        return -1;
    for (uint64_t c = 0; c < nch; c++) {
        uint64_t e = (c + 1) * VERIFY_CHUNK < n ? (c + 1) * VERIFY_CHUNK : n;
        verify_chunk_host(t, out, rt, ref, stride, c * VERIFY_CHUNK, e, rtol, norm_ok, &ch[c]);
    }
    return 0;
}

/* "WHAT TYPE N" appended to $KVX_FAKE_FILL_LOG, when set (fake.h). */
static void devio_log(const char *what, const char *type, uint64_t n)
{
    const char *path = getenv("KVX_FAKE_FILL_LOG");
    int fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        return;
    char line[96];
    int len = snprintf(line, sizeof line, "%s %s %llu\n", what, type, (unsigned long long)n);
    if (write(fd, line, (size_t)len) != len)
        fprintf(stderr, "kvx fake driver: cannot append to %s\n", path);
    close(fd);
}

/* kvx_fill(out, n, plan) (gpu/devio.cu): the host generator's own loop run
 * from the plan alone (inputs_fill_plan), so the input is the host's bytes
 * and the worker's device path, plan included, is what is exercised; the GPU
 * test (tests/test_gpu_devio.c) holds the kernel's arithmetic to the host. */
static int fill_input(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 1);
    const InputsPlan *dplan = arg_mem(l, 2, 1, sizeof *dplan);
    if (!dplan || dplan->type >= ET_COUNT || dplan->kind >= INIT_COUNT_)
        return -1;
    /* zipf's table, at device addresses: each must be inside an allocation */
    InputsPlan plan = *dplan;
    if (plan.kind == INIT_ZIPF) {
        uint64_t ng = (1ull << plan.zipf_guide_bits) + 1, nc = plan.zipf_n > 1 ? plan.zipf_n - 1 : 1;
        void *cdf = fake_mem(plan.zipf_cdf, nc * 8), *guide = fake_mem(plan.zipf_guide, ng * 4);
        if (!plan.zipf_n || plan.zipf_guide_bits > 16 || !cdf || !guide)
            return -1;
        plan.zipf_cdf = (uint64_t)(uintptr_t)cdf, plan.zipf_guide = (uint64_t)(uintptr_t)guide;
    }
    void *out = arg_mem(l, 0, n, elem_types[plan.type].size);
    if (!out)
        return -1;
    inputs_fill_plan(&plan, out, n);
    devio_log("kvx_fill", elem_types[plan.type].name, n);
    return 0;
}

/* kvx_sort_key, _count, _scan, _scatter (gpu/devio.cu): the order-free
 * check's radix sort, each stand-in doing what its kernel's comment says, on
 * the launch's grid of tiles, so the worker's passes, ping-pong buffers and
 * offsets are exercised; the GPU test (tests/test_gpu_devio.c) holds the
 * kernels to the host's order. */
enum { SORT_TILE = 4096, SORT_BACK = 0x200 }; /* DEVIO_SORT_TILE, DEVIO_SORT_BACK */

static int is_nan_bits(uint64_t b, const ElemType *t)
{
    switch (t->id) {
    case ET_F16: return ((b >> 10) & 31) == 31 && (b & 1023);
    case ET_BF16: return ((b >> 7) & 255) == 255 && (b & 127);
    case ET_F32: return ((b >> 23) & 255) == 255 && (b & 0x7fffff);
    default: return ((b >> 52) & 2047) == 2047 && (b & 0xfffffffffffffull);
    }
}

static uint64_t key_of(uint64_t b, const ElemType *t, int back)
{
    int bits = 8 * t->size;
    uint64_t top = 1ull << (bits - 1), all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (!t->is_float)
        return t->is_signed ? b ^ top : b;
    if (back)
        return b & top ? b & ~top : ~b & all;
    if (is_nan_bits(b, t))
        return all;
    return b & top ? ~b & all : b | top;
}

static int sort_key(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 2);
    uint32_t code = (uint32_t)arg_i32(l, 3);
    if ((code & 0xff) >= ET_COUNT)
        return -1;
    const ElemType *t = &elem_types[code & 0xff];
    int back = (code & SORT_BACK) != 0;
    unsigned char *src = arg_mem(l, 0, n, back ? 8 : t->size), *dst = arg_mem(l, 1, n, back ? t->size : 8);
    if (!src || !dst)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = 0;
        memcpy(&v, src + i * (back ? 8 : t->size), back ? 8 : (size_t)t->size); /* little-endian */
        v = key_of(v, t, back);
        memcpy(dst + i * (back ? t->size : 8), &v, back ? (size_t)t->size : 8);
    }
    if (!back)
        devio_log("kvx_sort", t->name, n);
    return 0;
}

static int sort_count(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 1), tiles = l->grid[0];
    uint32_t shift = (uint32_t)arg_i32(l, 2);
    const uint64_t *keys = arg_mem(l, 0, n, 8);
    uint64_t *counts = arg_mem(l, 3, 256 * tiles, 8);
    if (!keys || !counts || shift > 56 || tiles * SORT_TILE < n)
        return -1;
    memset(counts, 0, 256 * tiles * 8);
    for (uint64_t i = 0; i < n; i++)
        counts[((keys[i] >> shift) & 255) * tiles + i / SORT_TILE]++;
    return 0;
}

static int sort_scan(const FakeLaunch *l)
{
    uint64_t total = (uint64_t)arg_i64(l, 1);
    uint64_t *counts = arg_mem(l, 0, total, 8);
    if (!counts)
        return -1;
    for (uint64_t i = 0, run = 0; i < total; i++) {
        uint64_t c = counts[i];
        counts[i] = run;
        run += c;
    }
    return 0;
}

static int sort_scatter(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 2), tiles = l->grid[0];
    uint32_t shift = (uint32_t)arg_i32(l, 3);
    const uint64_t *src = arg_mem(l, 0, n, 8), *offsets = arg_mem(l, 4, 256 * tiles, 8);
    uint64_t *dst = arg_mem(l, 1, n, 8);
    if (!src || !dst || !offsets || shift > 56 || tiles * SORT_TILE < n)
        return -1;
    for (uint64_t b = 0; b < tiles; b++) {
        uint64_t base[256];
        for (int d = 0; d < 256; d++)
            base[d] = offsets[(uint64_t)d * tiles + b];
        for (uint64_t i = b * SORT_TILE; i < n && i < (b + 1) * SORT_TILE; i++) {
            uint64_t at = base[(src[i] >> shift) & 255]++;
            if (at >= n)
                return -1;
            dst[at] = src[i];
        }
    }
    return 0;
}

/* kvx_mset_hash(a, b, n, code, sums) (gpu/devio.cu): the order-free
 * check's fingerprints, added to sums[0..1] (a's) and sums[2..3] (b's) as
 * the kernel's atomics add them, by the host's twin (verify_mset_host, the
 * same bits): the worker's hash-first path is exercised, and a difference
 * found here sends it to the sort as on a GPU.  The GPU test
 * (tests/test_gpu_devio.c) holds the kernel to the twin. */
static int mset_hash(const FakeLaunch *l)
{
    uint64_t n = (uint64_t)arg_i64(l, 2);
    uint32_t code = (uint32_t)arg_i32(l, 3);
    if ((code & 0xff) >= ET_COUNT)
        return -1;
    const ElemType *t = &elem_types[code & 0xff];
    const void *a = arg_mem(l, 0, n, t->size), *b = arg_mem(l, 1, n, t->size);
    uint64_t *sums = arg_mem(l, 4, 4, 8), ha[2], hb[2];
    if (!a || !b || !sums)
        return -1;
    verify_mset_host(t, a, n, ha);
    verify_mset_host(t, b, n, hb);
    sums[0] += ha[0], sums[1] += ha[1], sums[2] += hb[0], sums[3] += hb[1];
    devio_log("kvx_mset", t->name, n);
    return 0;
}

static int compact(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    return compact_into(l, n > 0 ? min_u64((uint64_t)n, threads(l)) : 0, 1);
}

static int compact_serial(const FakeLaunch *l)
{
    int64_t n = arg_i64(l, 1);
    return compact_into(l, n > 0 ? (uint64_t)n : 0, 0);
}

static const FakeKernel kernels[] = {
    {"compact", "pqioo", compact},
    {"compact_serial", "pqioo", compact_serial},
    {"compact_ref", "pqioo", compact_serial},   /* bench/specs/compact_ref.cu: order is free */
    {"kvx_compare", "ppqqiqio", compare},
    {"kvx_fill", "oqp", fill_input},
    {"kvx_sort_key", "poqi", sort_key},
    {"kvx_sort_count", "pqio", sort_count},
    {"kvx_sort_scan", "oq", sort_scan},
    {"kvx_sort_scatter", "poqip", sort_scatter},
    {"kvx_mset_hash", "ppqio", mset_hash},
    {"fill", "pqo", fill},
    {"count", "pqio", count},
    {"tiny_count", "pqio", tiny_count},
    {"count_serial", "piio", count_serial},
    {"count_u16", "pqio", count_u16},
    {"filter_count", "ppiio", filter_count},
    {"filter_count_blocks", "ppiio", filter_count_blocks},
    {"filter_count_sum", "pio", filter_count_sum},
    {"histogram_private", "piio", histogram_private},
    {"histogram_merge", "piio", histogram_merge},
    {"count_ref", "ppiio", filter_count},
    {"kvx_l2_flush", "pqp", l2_flush},
};

const FakeKernel *fake_kernel_find(const char *name)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i].name, name) == 0)
            return &kernels[i];
    return NULL;
}
