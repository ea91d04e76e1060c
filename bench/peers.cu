/* peers: kvx-peers, the library call a user would otherwise write, timed on
 * exactly kvx's inputs the way kvx times a variant, written as a CSV that
 * `kvx import` reads as a reference (docs/peers.md).
 *
 *   kvx-peers SPEC [--where EXPR] [--out FILE.csv] [settings]   time on the GPU
 *   kvx-peers SPEC --list [--where EXPR] [--arch sm_90]          no GPU: what would run
 *
 * A family of peers stands for each host reference a spec's check may name
 * (the output a peer must reproduce, compared with kvx's own reference):
 *   histogram(in, bins, lo, hi)   cub_even:  cub::DeviceHistogram::HistogramEven,
 *                                            levels lo, lo + width, .. lo + bins * width
 *                                 cub_range: cub::DeviceHistogram::HistogramRange,
 *                                            levels min(lo + b * width, hi + 1)
 *                                 (width = ceil((hi - lo + 1) / bins), histogram()'s);
 *                                 HistogramEven counts values in hi+1 .. upper-1 into
 *                                 the last bin, which histogram() ignores: --list says
 *                                 whether the input has any, verification catches them
 *   count_below(in, thr), count_below_by(in, thr, keys, 1)
 *                                 thrust_count_if: thrust::count_if(in[i] < thr), the
 *                                            count returned to the host (its sync
 *                                            and copy are part of the call)
 *                                 cub_reduce: cub::DeviceReduce::Sum over in[i] < thr
 *                                            as the output's type, into device memory
 * Inputs, points and references come from kvx itself (peer.h); the families
 * only turn a row's check into library arguments.
 *
 * A sample is kvx's (driver/worker_sample.c): the output reset and the L2
 * flush (driver/flush_ptx.h, loaded with cudaLibraryLoadData) outside the
 * timed region, then the call between two events; the call is made once
 * untimed (lazy loading), verified once (no flush), then warmed up and
 * sampled in batches, and the warm-up
 * count, batch sizes, stopping rule and statistics are kvx's own functions
 * over the run's settings.  Temporary storage and levels are allocated and
 * uploaded once per row and peer, outside the timed region; each distinct
 * input (kvx's input key) is generated and uploaded once. */
#include "peer.h"
#include "../driver/flush_ptx.h"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>
#include <thrust/version.h>

#include <cuda_runtime.h>

#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int MAX_BATCH = 64;       /* samples between two waits, as WORKER_MAX_BATCH */

double now_ms()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- CUDA errors: the call, the API's name and text, where ---------------------------- */

std::string cuda_err;   /* the last failure */

bool cuda_fail(const char *call, cudaError_t e, const char *file, int line)
{
    char b[768];
    snprintf(b, sizeof b, "%s: %s (%s) at %s:%d", call, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    cuda_err = b;
    return false;
}

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess)                                                      \
            return cuda_fail(#call, e_, __FILE__, __LINE__);                        \
    } while (0)

/* ---- the families ------------------------------------------------------------------ */

enum class Kind { hist_even, hist_range, thrust_count, cub_reduce };

struct PeerDef {
    const char *name;   /* the row's value of the baseline axis */
    Kind kind;
};

struct Family {
    const char *ref;    /* the check's reference function */
    const char *spec;   /* nullptr: any spec */
    const char *filter; /* the spec's points a peer stands beside; nullptr: all */
    PeerDef peers[2];
};

/* contention: at one counter, address=runtime adds every hit to out[addr[i]]
 * with addr all 0; a library count reads no addr, so the address=const rows
 * stand for both (and the import has no duplicate measurement). */
const Family families[] = {
    {"histogram", nullptr, nullptr, {{"cub_even", Kind::hist_even}, {"cub_range", Kind::hist_range}}},
    {"count_below_by", "contention", "address == \"const\"",
     {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
    {"count_below_by", nullptr, nullptr, {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
    {"count_below", nullptr, nullptr, {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
};

const Family *family_for(const char *ref, const char *spec)
{
    for (const Family &f : families)
        if (!strcmp(f.ref, ref) && (!f.spec || !strcmp(f.spec, spec)))
            return &f;
    return nullptr;
}

/* A row's library arguments, from its check. */
struct RowPlan {
    int row = 0;
    std::string skip;           /* why the row has no peer; "" when it has */
    PeerCheck chk{};
    PeerInput in{};
    /* histogram: histogram()'s bins, and the levels of both calls */
    int64_t lo = 0, hi = 0, bins = 0, width = 0, lower = 0, upper = 0;
    std::vector<long long> levels;  /* HistogramRange: bins + 1 */
    bool narrow = false;        /* levels of the sample type (its own arithmetic width), else int */
    /* counting: in[i] < thr */
    int64_t thr = 0;
};

bool int_arg(const PeerCheck &c, int j, int64_t *v)
{
    if (j >= c.nargs || c.args[j].buf || !c.args[j].is_int)
        return false;
    *v = c.args[j].i;
    return true;
}

int64_t type_max(const PeerInput &in)
{
    if (in.is_float)
        return 0;
    int bits = 8 * in.size - (in.is_signed ? 1 : 0);
    return bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1;
}

/* The row's arguments, or why it has none. */
void row_plan(PeerSet *s, int row, RowPlan &p)
{
    p.row = row;
    peer_check(s, row, &p.chk);
    const PeerCheck &c = p.chk;
    if (c.nargs < 1 || !c.args[0].buf || peer_input(s, row, c.args[0].buf, &p.in) != 0) {
        p.skip = "the check's first argument is not an input buffer";
        return;
    }
    const std::string type = p.in.type, out = c.out_type;
    if (p.in.count > (uint64_t)INT_MAX) {
        p.skip = "more than 2^31 - 1 elements (the calls take an int count)";
        return;
    }
    if (!strcmp(c.ref, "histogram")) {
        if (type != "u8" && type != "u16") {
            p.skip = "histogram input of type " + type + " (the peers take u8 and u16)";
            return;
        }
        if (out != "u32") {
            p.skip = "histogram output of type " + out + " (the peers count in u32)";
            return;
        }
        int_arg(c, 1, &p.bins), int_arg(c, 2, &p.lo), int_arg(c, 3, &p.hi);
        /* histogram(): values lo .. hi in bins of ceil((hi - lo + 1) / bins) (gen/refs.c) */
        p.width = (p.hi - p.lo + 1 + p.bins - 1) / p.bins;
        p.lower = p.lo;
        p.upper = p.lo + p.bins * p.width;
        if (p.lo < 0 || p.upper - 1 > INT_MAX) {
            p.skip = "levels outside 0 .. 2^31 - 1";
            return;
        }
        p.levels.resize(size_t(p.bins) + 1);
        for (int64_t b = 0; b <= p.bins; b++)
            p.levels[size_t(b)] = (long long)std::min(p.lo + b * p.width, p.hi + 1);
        /* Byte samples take CUB's 256-bin path whatever the level type; wider
         * ones bin in the common type of level and sample, 32-bit arithmetic
         * when the levels are of the sample's own type. */
        p.narrow = p.in.size > 1 && p.upper <= type_max(p.in);
        return;
    }
    int64_t k = 1;
    if (!strcmp(c.ref, "count_below_by") && (!int_arg(c, 3, &k) || k != 1)) {
        p.skip = "more than one counter (a library count makes one)";
        return;
    }
    if (type != "i32") {
        p.skip = "count input of type " + type + " (the peers take i32)";
        return;
    }
    if (out != "u32" && out != "u64") {
        p.skip = "count output of type " + out + " (the peers count in u32 and u64)";
        return;
    }
    if (!int_arg(c, 1, &p.thr) || p.thr < INT_MIN || p.thr > INT_MAX) {
        p.skip = "a threshold that is not a 32-bit integer";
        return;
    }
}

std::string levels_text(const RowPlan &p, Kind k)
{
    char b[160];
    if (k == Kind::hist_even) {
        snprintf(b, sizeof b, "even:%lld:%lld:%lld:%s", (long long)p.lower, (long long)p.upper,
                 (long long)p.bins + 1, p.narrow ? p.in.type : "int");
        return b;
    }
    if (k == Kind::hist_range) {
        std::string t = "range:";
        for (size_t i = 0; i < p.levels.size(); i++)
            t += (i ? "," : "") + std::to_string(p.levels[i]);
        return t + ":" + (p.narrow ? p.in.type : "int");
    }
    snprintf(b, sizeof b, "below:%lld:%s", (long long)p.thr, p.chk.out_type);
    return b;
}

/* ---- the host's view of a call: what it would count on this input -------------------- */

template <typename S>
void host_hist(const S *d, uint64_t n, const RowPlan &p, Kind k, std::vector<uint32_t> &h)
{
    h.assign(size_t(p.bins), 0);
    for (uint64_t i = 0; i < n; i++) {
        const int64_t v = d[i];
        if (k == Kind::hist_even) {
            /* CUB's integer even binning: (v - lower) * bins / (upper - lower) */
            if (v >= p.lower && v < p.upper)
                h[size_t((v - p.lower) * p.bins / (p.upper - p.lower))]++;
        } else if (v >= p.levels.front() && v < p.levels.back()) {
            /* CUB's range binning: the last level not above v */
            h[size_t(std::upper_bound(p.levels.begin(), p.levels.end(), (long long)v) - p.levels.begin() - 1)]++;
        }
    }
}

/* What the call would produce here, compared with kvx's reference: "ok" or
 * "mismatch: ...". */
std::string host_check(PeerSet *s, const RowPlan &p, Kind k)
{
    char detail[512] = "";
    int v;
    const uint64_t n = p.in.count;
    if (k == Kind::hist_even || k == Kind::hist_range) {
        std::vector<uint32_t> h;
        if (p.in.size == 1)
            host_hist((const uint8_t *)p.in.data, n, p, k, h);
        else
            host_hist((const uint16_t *)p.in.data, n, p, k, h);
        v = peer_verify(s, p.row, h.data(), detail, sizeof detail);
    } else {
        const int32_t *d = (const int32_t *)p.in.data;
        uint64_t count = 0;
        for (uint64_t i = 0; i < n; i++)
            count += d[i] < p.thr;
        uint64_t out64 = count;
        uint32_t out32 = uint32_t(count);
        v = peer_verify(s, p.row, p.chk.out_size == 4 ? (const void *)&out32 : (const void *)&out64, detail,
                        sizeof detail);
    }
    return v == 1 ? "ok" : std::string("mismatch: ") + detail;
}

/* ---- the GPU ------------------------------------------------------------------------- */

struct Gpu {
    int ordinal = 0;
    PeerDevice dev{};
    cudaStream_t stream = nullptr;
    cudaEvent_t ev[2]{};
    cudaEvent_t bev[3 * MAX_BATCH]{};    /* samples: before the reset, start, end */
    void *scratch = nullptr;             /* the flush's buffer */
    size_t scratch_bytes = 0;
    unsigned flush_value = 0;            /* the byte of the next write flush */
    cudaLibrary_t lib = nullptr;
    cudaKernel_t flush_fn = nullptr;
    /* the input on the device, by kvx's key */
    std::string in_key;
    void *in_base = nullptr, *in_ptr = nullptr;
};

bool attr(int *v, cudaDeviceAttr a, int dev)
{
    /* Clock attributes are optional in CUDA 13 (worker_device.c reads them so). */
    if (cudaDeviceGetAttribute(v, a, dev) != cudaSuccess) {
        *v = 0;
        cudaGetLastError();
    }
    return true;
}

bool gpu_open(Gpu &g, int ordinal)
{
    g.ordinal = ordinal;
    CK(cudaSetDevice(ordinal));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, ordinal));
    PeerDevice &d = g.dev;
    snprintf(d.name, sizeof d.name, "%s", p.name);
    d.cc_major = p.major, d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount, d.warp = p.warpSize;
    d.l2_bytes = p.l2CacheSize, d.mem_bytes = (int64_t)p.totalGlobalMem;
    d.smem_block_optin = (int64_t)p.sharedMemPerBlockOptin, d.smem_sm = (int64_t)p.sharedMemPerMultiprocessor;
    d.max_threads_block = p.maxThreadsPerBlock, d.max_threads_sm = p.maxThreadsPerMultiProcessor;
    d.regs_sm = p.regsPerMultiprocessor;
    attr(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, ordinal);
    attr(&d.bus_width, cudaDevAttrGlobalMemoryBusWidth, ordinal);
    /* A blocking stream, as the worker's (CU_STREAM_DEFAULT). */
    CK(cudaStreamCreate(&g.stream));
    for (cudaEvent_t &e : g.ev)
        CK(cudaEventCreate(&e));
    for (cudaEvent_t &e : g.bev)
        CK(cudaEventCreate(&e));
    return true;
}

/* Enqueue the flush, as worker_prepare_launch does. */
bool flush(Gpu &g, int mode)
{
    if (mode == PEER_FLUSH_WRITE)
        CK(cudaMemsetAsync(g.scratch, (unsigned char)++g.flush_value, g.scratch_bytes, g.stream));
    if (mode == PEER_FLUSH_READ) {
        unsigned long long buf = (unsigned long long)(uintptr_t)g.scratch, n16 = g.scratch_bytes / 16;
        void *args[] = {&buf, &n16, &buf};
        const unsigned blocks = g.dev.sm_count > 0 ? FLUSH_BLOCKS_PER_SM * unsigned(g.dev.sm_count)
                                                   : FLUSH_BLOCKS_DEFAULT;
        CK(cudaLaunchKernel((const void *)g.flush_fn, dim3(blocks), dim3(FLUSH_THREADS), args, 0, g.stream));
    }
    return true;
}

/* The flush's buffer (zeroed once, never written again by the read flush)
 * and kernel, as worker_flush_prepare makes them. */
bool flush_prepare(Gpu &g, int mode)
{
    if (mode == PEER_FLUSH_OFF)
        return true;
    g.scratch_bytes = g.dev.l2_bytes > 0 ? size_t(FLUSH_L2_FACTOR) * size_t(g.dev.l2_bytes) : FLUSH_BYTES_DEFAULT;
    CK(cudaMalloc(&g.scratch, g.scratch_bytes));
    CK(cudaMemsetAsync(g.scratch, 0, g.scratch_bytes, g.stream));
    CK(cudaStreamSynchronize(g.stream));
    if (mode == PEER_FLUSH_READ) {
        CK(cudaLibraryLoadData(&g.lib, flush_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
        CK(cudaLibraryGetKernel(&g.flush_fn, g.lib, FLUSH_KERNEL));
    }
    /* Once now: the PTX is compiled by the driver on first use. */
    if (!flush(g, mode))
        return false;
    CK(cudaStreamSynchronize(g.stream));
    return true;
}

/* The row's input on the device: uploaded when its key is not the one there. */
bool input_upload(Gpu &g, const PeerInput &in)
{
    if (g.in_key == in.key)
        return true;
    if (g.in_base)
        CK(cudaFree(g.in_base));
    g.in_base = nullptr;
    g.in_key.clear();
    /* kvx's layout: a 256-byte aligned allocation, the data offset elements in */
    const size_t bytes = size_t(in.count) * size_t(in.size), off = size_t(in.offset) * size_t(in.size);
    CK(cudaMalloc(&g.in_base, (bytes + off + 255) / 256 * 256));
    g.in_ptr = (char *)g.in_base + off;
    CK(cudaMemcpyAsync(g.in_ptr, in.data, bytes, cudaMemcpyHostToDevice, g.stream));
    CK(cudaStreamSynchronize(g.stream));
    g.in_key = in.key;
    return true;
}

void gpu_close(Gpu &g)
{
    if (g.in_base)
        cudaFree(g.in_base);
    if (g.scratch)
        cudaFree(g.scratch);
    if (g.lib)
        cudaLibraryUnload(g.lib);
    for (cudaEvent_t e : g.ev)
        if (e)
            cudaEventDestroy(e);
    for (cudaEvent_t e : g.bev)
        if (e)
            cudaEventDestroy(e);
    if (g.stream)
        cudaStreamDestroy(g.stream);
}

/* ---- the calls -------------------------------------------------------------------------- */

/* One library call at one row: what is set up once, what precedes every
 * call (outside the timed region) and the call itself. */
struct Call {
    void *out = nullptr;        /* device output, out_bytes */
    size_t out_bytes = 0;
    void *temp = nullptr;       /* library temporary storage */
    size_t temp_bytes = 0;
    virtual ~Call()
    {
        if (out)
            cudaFree(out);
        if (temp)
            cudaFree(temp);
    }
    virtual bool setup(cudaStream_t st) = 0;
    /* The output reset (a memset to the spec's init of 0). */
    virtual bool reset(cudaStream_t st)
    {
        CK(cudaMemsetAsync(out, 0, out_bytes, st));
        return true;
    }
    virtual bool run(cudaStream_t st) = 0;
    /* The output into host (out_bytes), after the call completed. */
    virtual bool result(void *host)
    {
        CK(cudaMemcpy(host, out, out_bytes, cudaMemcpyDeviceToHost));
        return true;
    }
    bool alloc_out(size_t bytes)
    {
        out_bytes = bytes;
        CK(cudaMalloc(&out, bytes));
        return true;
    }
    bool alloc_temp()
    {
        if (temp_bytes)
            CK(cudaMalloc(&temp, temp_bytes));
        return true;
    }
};

template <typename S, typename L>
struct HistEven : Call {
    const S *in;
    int n, num_levels;
    L lower, upper;
    HistEven(const void *d, const RowPlan &p)
        : in((const S *)d), n(int(p.in.count)), num_levels(int(p.bins) + 1), lower(L(p.lower)), upper(L(p.upper)) {}
    bool setup(cudaStream_t st) override
    {
        if (!alloc_out(size_t(num_levels - 1) * sizeof(unsigned)))
            return false;
        CK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, in, (unsigned *)out, num_levels, lower, upper,
                                               n, st));
        return alloc_temp();
    }
    bool run(cudaStream_t st) override
    {
        CK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, (unsigned *)out, num_levels, lower, upper, n,
                                               st));
        return true;
    }
};

template <typename S, typename L>
struct HistRange : Call {
    const S *in;
    int n, num_levels;
    std::vector<L> levels;
    L *d_levels = nullptr;
    HistRange(const void *d, const RowPlan &p)
        : in((const S *)d), n(int(p.in.count)), num_levels(int(p.bins) + 1), levels(p.levels.begin(), p.levels.end()) {}
    ~HistRange() override
    {
        if (d_levels)
            cudaFree(d_levels);
    }
    bool setup(cudaStream_t st) override
    {
        if (!alloc_out(size_t(num_levels - 1) * sizeof(unsigned)))
            return false;
        CK(cudaMalloc(&d_levels, levels.size() * sizeof(L)));
        CK(cudaMemcpyAsync(d_levels, levels.data(), levels.size() * sizeof(L), cudaMemcpyHostToDevice, st));
        CK(cudaStreamSynchronize(st));
        CK(cub::DeviceHistogram::HistogramRange(nullptr, temp_bytes, in, (unsigned *)out, num_levels, d_levels, n,
                                                st));
        return alloc_temp();
    }
    bool run(cudaStream_t st) override
    {
        CK(cub::DeviceHistogram::HistogramRange(temp, temp_bytes, in, (unsigned *)out, num_levels, d_levels, n, st));
        return true;
    }
};

/* in[i] < thr as a count of T: the template's test (filter_count.cu). */
template <typename T>
struct Below {
    int thr;
    __host__ __device__ T operator()(int x) const { return T(x < thr); }
};

struct BelowPred {
    int thr;
    __host__ __device__ bool operator()(int x) const { return x < thr; }
};

/* thrust::count_if: the count comes back to the host, so the call waits for
 * the GPU and copies; its temporary storage is thrust's own, per call. */
struct ThrustCount : Call {
    const int *in;
    int n, thr, out_size;
    long long count = -1;
    ThrustCount(const void *d, const RowPlan &p)
        : in((const int *)d), n(int(p.in.count)), thr(int(p.thr)), out_size(p.chk.out_size) {}
    bool setup(cudaStream_t) override { return true; }
    bool reset(cudaStream_t) override
    {
        count = -1;
        return true;
    }
    bool run(cudaStream_t st) override
    {
        try {
            count = (long long)thrust::count_if(thrust::cuda::par.on(st), thrust::device_pointer_cast(in),
                                                thrust::device_pointer_cast(in) + n, BelowPred{thr});
        } catch (const thrust::system_error &e) {
            cuda_err = std::string("thrust::count_if: ") + e.what();
            return false;
        }
        return true;
    }
    bool result(void *host) override
    {
        if (out_size == 4) {
            uint32_t v = uint32_t(count);
            memcpy(host, &v, 4);
        } else {
            uint64_t v = uint64_t(count);
            memcpy(host, &v, 8);
        }
        return true;
    }
};

template <typename T>
struct CubReduce : Call {
    thrust::transform_iterator<Below<T>, const int *> it;
    int n;
    CubReduce(const void *d, const RowPlan &p)
        : it(thrust::make_transform_iterator((const int *)d, Below<T>{int(p.thr)})), n(int(p.in.count)) {}
    bool setup(cudaStream_t st) override
    {
        if (!alloc_out(sizeof(T)))
            return false;
        CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, it, (T *)out, n, st));
        return alloc_temp();
    }
    bool run(cudaStream_t st) override
    {
        CK(cub::DeviceReduce::Sum(temp, temp_bytes, it, (T *)out, n, st));
        return true;
    }
};

std::unique_ptr<Call> make_call(Kind k, const RowPlan &p, const void *d)
{
    const bool u8 = p.in.size == 1, narrow = p.narrow;
    switch (k) {
    case Kind::hist_even:
        if (u8)
            return std::unique_ptr<Call>(new HistEven<uint8_t, int>(d, p));
        if (narrow)
            return std::unique_ptr<Call>(new HistEven<uint16_t, uint16_t>(d, p));
        return std::unique_ptr<Call>(new HistEven<uint16_t, int>(d, p));
    case Kind::hist_range:
        if (u8)
            return std::unique_ptr<Call>(new HistRange<uint8_t, int>(d, p));
        if (narrow)
            return std::unique_ptr<Call>(new HistRange<uint16_t, uint16_t>(d, p));
        return std::unique_ptr<Call>(new HistRange<uint16_t, int>(d, p));
    case Kind::thrust_count: return std::unique_ptr<Call>(new ThrustCount(d, p));
    case Kind::cub_reduce:
        if (p.chk.out_size == 4)
            return std::unique_ptr<Call>(new CubReduce<uint32_t>(d, p));
        return std::unique_ptr<Call>(new CubReduce<uint64_t>(d, p));
    }
    return nullptr;
}

/* ---- measuring one call: worker_launch_once, worker_verify_case, worker_measure_case ---- */

struct Result {
    std::string status = "ok";  /* ok, mismatch, launch_error */
    std::string detail;
    PeerStats st{0, NAN, NAN, NAN, NAN, NAN, NAN};
    double launch_ms = NAN;
    int warmups = 0;
};

bool sample_batch(Gpu &g, Call &c, int flush_mode, int k)
{
    for (int i = 0; i < k; i++) {
        cudaEvent_t *e = &g.bev[3 * i];
        CK(cudaEventRecord(e[0], g.stream));
        if (!c.reset(g.stream) || !flush(g, flush_mode))
            return false;
        CK(cudaEventRecord(e[1], g.stream));
        if (!c.run(g.stream))
            return false;
        CK(cudaEventRecord(e[2], g.stream));
    }
    return true;
}

bool measure(PeerSet *s, int row, Gpu &g, Call &c, const PeerCheck &chk, Result &r)
{
    PeerMeasure m;
    peer_measure(s, &m);
    if (!c.setup(g.stream))
        return false;
    /* One call untimed first: the library's kernels load on their first
     * launch (lazy loading), as a worker loads a variant's module before its
     * verified launch; the verified call's time then decides the warm-ups as
     * kvx's does. */
    if (!c.reset(g.stream) || !c.run(g.stream))
        return false;
    CK(cudaStreamSynchronize(g.stream));
    /* The verified call: output reset, no flush, between the two events. */
    const double t0 = now_ms();
    float launch = 0;
    if (!c.reset(g.stream))
        return false;
    CK(cudaEventRecord(g.ev[0], g.stream));
    if (!c.run(g.stream))
        return false;
    CK(cudaEventRecord(g.ev[1], g.stream));
    CK(cudaEventSynchronize(g.ev[1]));
    CK(cudaEventElapsedTime(&launch, g.ev[0], g.ev[1]));
    r.launch_ms = launch;
    const double spent = now_ms() - t0;
    std::vector<unsigned char> out(size_t(chk.out_count) * size_t(chk.out_size));
    if (!c.result(out.data()))
        return false;
    char detail[512] = "";
    if (peer_verify(s, row, out.data(), detail, sizeof detail) != 1) {
        r.status = "mismatch";
        r.detail = detail;
    }
    /* Warm-ups, enqueued together, waited for once. */
    r.warmups = peer_warmups(s, launch, spent);
    const double w0 = now_ms();
    for (int i = 0; i < r.warmups; i++)
        if (!c.reset(g.stream) || !flush(g, m.flush_l2) || !c.run(g.stream))
            return false;
    if (r.warmups)
        CK(cudaStreamSynchronize(g.stream));
    const double warm = now_ms() - w0;
    /* Samples in batches, kept as if taken one at a time. */
    double per = r.warmups ? warm / r.warmups : spent, used = spent + warm;
    const int maxs = std::max(m.max_samples, 1);
    std::vector<double> t(size_t(maxs) + 1), tmp(size_t(maxs) + 1);
    int n = 0, k;
    while ((k = peer_batch(s, n, per, used, MAX_BATCH)) > 0) {
        const double b0 = now_ms();
        if (!sample_batch(g, c, m.flush_l2, k))
            return false;
        CK(cudaEventSynchronize(g.bev[3 * k - 1]));
        for (int i = 0; i < k; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, g.bev[3 * i + 1], g.bev[3 * i + 2]));
            t[size_t(n + i)] = ms;
        }
        const double wall = now_ms() - b0;
        per = wall / k;
        used += wall;
        const int stop = peer_stop_at(s, t.data(), n, n + k, tmp.data());
        n = stop ? stop : n + k;
        if (stop)
            break;
    }
    peer_stats(t.data(), n, tmp.data(), &r.st);
    return true;
}

/* ---- options ---------------------------------------------------------------------------- */

struct Opts {
    const char *spec = nullptr, *where = nullptr, *out = nullptr, *arch = nullptr;
    int list = 0, device = 0;
    PeerOptions po{};
    std::string command;
};

void usage(FILE *f)
{
    fputs("usage: kvx-peers SPEC [--where EXPR] [--out FILE.csv] [--device N]\n"
          "                 [--warmup N] [--samples N] [--min-samples N] [--max-samples N]\n"
          "                 [--noise X] [--budget-ms MS] [--flush-l2 read|write|false] [--seed N] [-j N]\n"
          "       kvx-peers SPEC --list [--where EXPR] [--arch sm_90] [--seed N] [-j N]\n"
          "Times the library call that stands beside SPEC's variants (CUB's histograms for\n"
          "histogram(), thrust::count_if and cub::DeviceReduce::Sum for count_below()) on\n"
          "kvx's inputs, verified against kvx's reference, as kvx times a variant; writes a\n"
          "CSV for `kvx import FILE.csv --name NAME --spec SPECNAME` (stdout without --out).\n"
          "Settings default to the spec's measure:.  --samples N takes exactly N samples\n"
          "(within the budget).  --list needs no GPU: each row's levels, input key, input\n"
          "hash and what the call would count on that input, against kvx's reference.\n",
          f);
}

bool parse_num(const char *s, double lo, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno == 0 && std::isfinite(*v) && *v >= lo;
}

bool parse_count(const char *s, long long lo, long long *v)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '+')
        return false;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || errno || x > (unsigned long long)LLONG_MAX)
        return false;
    *v = (long long)x;
    return *v >= lo;
}

std::string shell_quote(const char *a)
{
    if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == strlen(a))
        return a;
    std::string q = "'";
    for (const char *p = a; *p; p++)
        q += *p == '\'' ? std::string("'\\''") : std::string(1, *p);
    return q + "'";
}

int parse_opts(int argc, char **argv, Opts &o)
{
    enum { O_WHERE = 256, O_OUT, O_LIST, O_ARCH, O_DEVICE, O_WARMUP, O_SAMPLES, O_MIN, O_MAX, O_NOISE, O_BUDGET,
           O_FLUSH, O_SEED };
    static const option opts[] = {
        {"where", required_argument, nullptr, O_WHERE},   {"out", required_argument, nullptr, O_OUT},
        {"list", no_argument, nullptr, O_LIST},           {"arch", required_argument, nullptr, O_ARCH},
        {"device", required_argument, nullptr, O_DEVICE}, {"warmup", required_argument, nullptr, O_WARMUP},
        {"samples", required_argument, nullptr, O_SAMPLES}, {"min-samples", required_argument, nullptr, O_MIN},
        {"max-samples", required_argument, nullptr, O_MAX}, {"noise", required_argument, nullptr, O_NOISE},
        {"budget-ms", required_argument, nullptr, O_BUDGET}, {"flush-l2", required_argument, nullptr, O_FLUSH},
        {"seed", required_argument, nullptr, O_SEED},     {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0}};
    PeerOptions &p = o.po;
    p.warmup = p.min_samples = p.max_samples = p.flush_l2 = -1;
    p.noise = p.budget_ms = -1;
    for (int i = 0; i < argc; i++)
        o.command += (i ? " " : "") + shell_quote(i ? argv[i] : "kvx-peers");
    opterr = 0;
    int c, li = -1;
    while ((c = getopt_long(argc, argv, ":j:h", opts, &li)) != -1) {
        long long n = 0;
        double d = 0;
        const char *a = optarg;
        bool ok = true;
        switch (c) {
        case 'h': usage(stdout); exit(0);
        case O_WHERE: o.where = a; break;
        case O_OUT: o.out = a; break;
        case O_LIST: o.list = 1; break;
        case O_ARCH: o.arch = a; break;
        case O_DEVICE: ok = parse_count(a, 0, &n) && n <= INT_MAX, o.device = int(n); break;
        case O_WARMUP: ok = parse_count(a, 0, &n) && n <= INT_MAX, p.warmup = int(n); break;
        case O_SAMPLES:
            ok = parse_count(a, 1, &n) && n <= INT_MAX, p.min_samples = p.max_samples = int(n);
            break;
        case O_MIN: ok = parse_count(a, 1, &n) && n <= INT_MAX, p.min_samples = int(n); break;
        case O_MAX: ok = parse_count(a, 1, &n) && n <= INT_MAX, p.max_samples = int(n); break;
        case O_NOISE: ok = parse_num(a, 0, &d), p.noise = d; break;
        case O_BUDGET: ok = parse_num(a, 0, &d), p.budget_ms = d; break;
        case O_FLUSH:
            p.flush_l2 = !strcmp(a, "read") ? PEER_FLUSH_READ : !strcmp(a, "write") ? PEER_FLUSH_WRITE
                         : !strcmp(a, "false") || !strcmp(a, "off") ? PEER_FLUSH_OFF : -2;
            ok = p.flush_l2 != -2;
            break;
        case O_SEED: ok = parse_count(a, 0, &n), p.seed = uint64_t(n), p.set_seed = 1; break;
        case 'j': ok = parse_count(a, 1, &n) && n <= 4096, p.threads = int(n); break;
        case ':': fprintf(stderr, "kvx-peers: option '%s' needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "kvx-peers: unknown option '%s'\n", argv[optind - 1]); usage(stderr); return 2;
        }
        if (!ok) {
            fprintf(stderr, "kvx-peers: %s%s is '%s' (expected %s)\n", c == 'j' ? "-" : "--",
                    c == 'j' ? "j" : opts[li].name, a,
                    c == O_NOISE || c == O_BUDGET ? "a number >= 0"
                    : c == O_FLUSH               ? "read, write or false"
                    : c == O_WARMUP || c == O_SEED || c == O_DEVICE ? "a whole number >= 0"
                                                                     : "a whole number >= 1");
            return 2;
        }
        li = -1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kvx-peers: expected one SPEC file, got %d arguments\n", argc - optind);
        usage(stderr);
        return 2;
    }
    o.spec = argv[optind];
    o.po.spec_path = o.spec;
    o.po.arch = o.arch;
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

std::string num(double v)
{
    if (std::isnan(v))
        return "";
    char b[40];
    snprintf(b, sizeof b, "%.9g", v);
    return b;
}

std::string utc_now()
{
    char b[32];
    time_t t = time(nullptr);
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    return b;
}

struct Measured {
    int row;
    const PeerDef *peer;
    Result r;
};

/* The CSV: a comment naming the GPU, date, library versions and command;
 * axis columns (the baseline axes carry the peer's name) and kvx import's
 * value columns. */
void write_csv(FILE *f, PeerSet *s, const Gpu &g, const Opts &o, const std::vector<Measured> &ms)
{
    PeerMeasure m;
    peer_measure(s, &m);
    int rt = 0, dv = 0;
    cudaRuntimeGetVersion(&rt);
    if (!o.list)
        cudaDriverGetVersion(&dv);
    const double peak = peer_peak_gbs(&g.dev);
    char gpu[512];
    if (o.list)
        snprintf(gpu, sizeof gpu, "none (--list: not measured; planned for %s)", peer_facts(s));
    else
        snprintf(gpu, sizeof gpu, "%s (sm_%d%d, %d SMs, L2 %.0f MiB, peak %.1f GB/s)", g.dev.name, g.dev.cc_major,
                 g.dev.cc_minor, g.dev.sm_count, g.dev.l2_bytes / 1048576.0, peak);
    fprintf(f, "# kvx-peers: GPU %s; %s; CUB %d.%d.%d (CUB_VERSION %d), Thrust %d.%d.%d; CUDA runtime %d, driver %d; "
            "command: %s\n",
            gpu, utc_now().c_str(), CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, CUB_VERSION,
            THRUST_MAJOR_VERSION, THRUST_MINOR_VERSION, THRUST_SUBMINOR_VERSION, rt, dv, o.command.c_str());
    fprintf(f, "# measure: warmup %d, warmup_ms %g, samples %d..%d, noise %g, budget_ms %g, flush_l2 %s, seed %llu, "
            "sample_batch %d (spec %s, kvx's rules)\n",
            m.warmup, m.warmup_ms, m.min_samples, m.max_samples, m.noise, m.budget_ms,
            m.flush_l2 == PEER_FLUSH_READ ? "read" : m.flush_l2 == PEER_FLUSH_WRITE ? "write" : "false",
            (unsigned long long)m.seed, m.sample_batch, peer_spec_name(s));
    for (int a = 0; a < peer_naxes(s); a++)
        fprintf(f, "%s,", peer_axis_name(s, a));
    fputs("median_ms,min_ms,max_ms,mean_ms,stdev_ms,noise,bytes,atomics,elements,gbs,pct_peak,elems_per_s,"
          "atomics_per_s,status\n",
          f);
    for (const Measured &x : ms) {
        bool named = false;
        for (int a = 0; a < peer_naxes(s); a++) {
            /* The first baseline axis takes the peer's name; any further one keeps the row's value. */
            const bool here = peer_axis_choice(s, a) && !named;
            named |= here;
            fprintf(f, "%s,", here ? x.peer->name : peer_axis_value(s, x.row, a));
        }
        const PeerStats &st = x.r.st;
        const bool timed = st.samples > 0;
        const double sec = st.median_ms / 1e3;
        const double bytes = peer_metric(s, x.row, PEER_BYTES), atomics = peer_metric(s, x.row, PEER_ATOMICS),
                     elems = peer_metric(s, x.row, PEER_ELEMENTS);
        const double gbs = timed ? bytes / sec / 1e9 : NAN;
        fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", num(timed ? st.median_ms : NAN).c_str(),
                num(timed ? st.min_ms : NAN).c_str(), num(timed ? st.max_ms : NAN).c_str(),
                num(timed ? st.mean_ms : NAN).c_str(), num(timed ? st.stdev_ms : NAN).c_str(),
                num(timed ? st.noise : NAN).c_str(), num(bytes).c_str(), num(atomics).c_str(), num(elems).c_str(),
                num(gbs).c_str(), num(timed && peak > 0 ? gbs / peak * 100 : NAN).c_str(),
                num(timed ? elems / sec : NAN).c_str(), num(timed ? atomics / sec : NAN).c_str(), x.r.status.c_str());
    }
}

/* Rows in the order of their inputs' keys (stable), so that rows sharing an
 * input follow each other and it is generated and uploaded once. */
std::vector<int> input_order(const std::vector<RowPlan> &plans)
{
    std::vector<int> order;
    for (const RowPlan &p : plans)
        if (p.skip.empty())
            order.push_back(p.row);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return strcmp(plans[size_t(a)].in.key, plans[size_t(b)].in.key) < 0; });
    return order;
}

/* Rows without a peer: one line with the count and the first. */
void note_skips(const std::vector<RowPlan> &plans, PeerSet *s)
{
    int n = 0;
    const RowPlan *first = nullptr;
    for (const RowPlan &p : plans)
        if (!p.skip.empty())
            first = first ? first : &p, n++;
    if (n)
        fprintf(stderr, "kvx-peers: %d of %zu rows have no peer: %s (first: %s)\n", n, plans.size(),
                first->skip.c_str(), peer_label(s, first->row));
}

/* The CSV a timed run would write, its rows not measured (status skipped): the
 * axis columns and metrics, for checking what `kvx import` makes of them. */
int write_out(PeerSet *s, const Gpu &g, const Opts &o, const std::vector<Measured> &ms)
{
    /* Published by rename: a half-written file is never imported. */
    std::string tmp = o.out ? std::string(o.out) + ".tmp" : "";
    FILE *f = o.out ? fopen(tmp.c_str(), "w") : stdout;
    if (!f) {
        fprintf(stderr, "kvx-peers: cannot write '%s': %s\n", tmp.c_str(), strerror(errno));
        return 3;
    }
    write_csv(f, s, g, o, ms);
    if (o.out && (fclose(f) != 0 || rename(tmp.c_str(), o.out) != 0)) {
        fprintf(stderr, "kvx-peers: cannot write '%s': %s\n", o.out, strerror(errno));
        return 3;
    }
    return 0;
}

int list_rows(PeerSet *s, const Family &fam, std::vector<RowPlan> &plans, const Opts &o)
{
    char err[2048];
    std::vector<std::string> lines(plans.size());
    for (int r : input_order(plans)) {
        RowPlan &p = plans[size_t(r)];
        if (peer_prepare(s, r, err, sizeof err) != 0) {
            fprintf(stderr, "kvx-peers: %s (at %s)\n", err, peer_label(s, r));
            return 2;
        }
        peer_input(s, r, p.in.name, &p.in);
        char hash[32];
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)peer_input_hash(s, r, p.in.name));
        for (const PeerDef &d : fam.peers)
            lines[size_t(r)] += std::to_string(r) + "\t" + peer_label(s, r) + "\t" + d.name + "\t" +
                                levels_text(p, d.kind) + "\t" + p.in.name + "\t" + p.in.type + "\t" +
                                std::to_string(p.in.count) + "\t" + p.in.key + "\t" + hash + "\t" + p.in.init + "\t" +
                                host_check(s, p, d.kind) + "\n";
    }
    printf("# kvx-peers --list %s (%s): %s; check %s; seed %llu\n", o.spec, peer_spec_name(s), peer_facts(s),
           peer_check_ref(s), [&] { PeerMeasure m; peer_measure(s, &m); return (unsigned long long)m.seed; }());
    printf("row\tpoint\tpeer\tlevels\tinput\ttype\tcount\tkey\thash\tinit\thost\n");
    int rows = 0;
    for (const std::string &l : lines)
        if (!l.empty())
            fputs(l.c_str(), stdout), rows++;
    std::vector<std::string> keys;
    for (const RowPlan &p : plans)
        if (p.skip.empty() && std::find(keys.begin(), keys.end(), p.in.key) == keys.end())
            keys.push_back(p.in.key);
    printf("# %d rows, %zu distinct inputs of the calls (%d input buffers generated)\n", rows, keys.size(),
           peer_generated(s));
    if (!o.out)
        return 0;
    std::vector<Measured> ms;
    for (const RowPlan &p : plans)
        for (const PeerDef &d : fam.peers)
            if (p.skip.empty()) {
                ms.push_back(Measured{p.row, &d, Result()});
                ms.back().r.status = "skipped";
            }
    return write_out(s, Gpu(), o, ms);
}

int time_rows(PeerSet *s, const Family &fam, std::vector<RowPlan> &plans, Gpu &g, const Opts &o)
{
    char err[2048];
    PeerMeasure m;
    peer_measure(s, &m);
    if (!flush_prepare(g, m.flush_l2)) {
        fprintf(stderr, "kvx-peers: the L2 flush: %s\n", cuda_err.c_str());
        return 1;
    }
    std::vector<Measured> ms;
    int bad = 0;
    for (int r : input_order(plans)) {
        RowPlan &p = plans[size_t(r)];
        if (peer_prepare(s, r, err, sizeof err) != 0) {
            fprintf(stderr, "kvx-peers: %s (at %s)\n", err, peer_label(s, r));
            return 2;
        }
        peer_input(s, r, p.in.name, &p.in);
        if (!input_upload(g, p.in)) {
            fprintf(stderr, "kvx-peers: input '%s' at %s: %s\n", p.in.name, peer_label(s, r), cuda_err.c_str());
            return 1;
        }
        for (const PeerDef &d : fam.peers) {
            Measured x{r, &d, Result()};
            std::unique_ptr<Call> c = make_call(d.kind, p, g.in_ptr);
            if (!measure(s, r, g, *c, p.chk, x.r)) {
                x.r = Result();
                x.r.status = "launch_error";
                x.r.detail = cuda_err;
                /* A sticky error leaves the context unusable: stop, as a worker
                 * would; another is cleared and the next call goes on. */
                cudaGetLastError();
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    fprintf(stderr, "kvx-peers: %s at %s: %s; the context is lost (%s)\n", d.name, peer_label(s, r),
                            cuda_err.c_str(), cudaGetErrorName(e));
                    return 1;
                }
            }
            bad += x.r.status != "ok";
            fprintf(stderr, "%-16s %-60s %-10s %10.4f ms  %3d samples  noise %-8s%s%s\n", d.name, peer_label(s, r),
                    x.r.status.c_str(), x.r.st.median_ms, x.r.st.samples, num(x.r.st.noise).c_str(),
                    x.r.detail.empty() ? "" : "  ", x.r.detail.c_str());
            ms.push_back(x);
        }
    }
    std::stable_sort(ms.begin(), ms.end(), [](const Measured &a, const Measured &b) { return a.row < b.row; });
    if (int rc = write_out(s, g, o, ms))
        return rc;
    fprintf(stderr, "kvx-peers: %zu calls timed at %zu rows, %d not ok; %d input buffers generated%s%s\n", ms.size(),
            input_order(plans).size(), bad, peer_generated(s), o.out ? "; written to " : "", o.out ? o.out : "");
    return bad ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
    Opts o;
    int rc = parse_opts(argc, argv, o);
    if (rc)
        return rc;
    Gpu g;
    if (!o.list) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n == 0) {
            fprintf(stderr, "kvx-peers: no GPU (%s): timing needs one; --list works without\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "the runtime counts none");
            return 1;
        }
        if (o.device >= n) {
            fprintf(stderr, "kvx-peers: --device %d, but there are %d GPUs\n", o.device, n);
            return 2;
        }
        if (!gpu_open(g, o.device)) {
            fprintf(stderr, "kvx-peers: %s\n", cuda_err.c_str());
            return 1;
        }
        o.po.device = &g.dev;
    }
    char err[2048];
    PeerSet *s = peer_open(&o.po, err, sizeof err);
    if (!s) {
        fprintf(stderr, "kvx-peers: %s\n", err);
        gpu_close(g);
        return 2;
    }
    const Family *fam = family_for(peer_check_ref(s), peer_spec_name(s));
    if (!fam) {
        const char *ref = peer_check_ref(s);
        fprintf(stderr, "kvx-peers: %s: no peer for %s%s%s (peers stand beside histogram(...), count_below(...) "
                "and count_below_by(..., 1))\n", o.spec, *ref ? "a check of '" : "a first check that is no host "
                "reference call", ref, *ref ? "'" : "");
        rc = 2;
    } else if (peer_select(s, o.where, fam->filter, err, sizeof err) < 0) {
        fprintf(stderr, "kvx-peers: %s\n", err);
        rc = 2;
    } else {
        std::vector<RowPlan> plans(size_t(peer_rows(s)));
        for (int r = 0; r < peer_rows(s); r++)
            row_plan(s, r, plans[size_t(r)]);
        note_skips(plans, s);
        if (input_order(plans).empty()) {
            fprintf(stderr, "kvx-peers: no row to measure%s%s%s\n", fam->filter ? " (the peers stand beside the "
                    "points where " : "", fam->filter ? fam->filter : "", fam->filter ? ")" : "");
            rc = 2;
        } else {
            rc = o.list ? list_rows(s, *fam, plans, o) : time_rows(s, *fam, plans, g, o);
        }
    }
    peer_close(s);
    gpu_close(g);
    return rc;
}
