/* peers_gpu: the device, the flush, the input, the library calls and their
 * timing for kvx-peers (peers_gpu.h).
 *
 * A sample is kvx's (gpu/worker_time.c): the output reset and the L2
 * flush (gpu/flush_ptx.h, loaded with cudaLibraryLoadData) outside the
 * timed region, then the call between two events.  A call is made once
 * untimed (lazy loading), verified once (no flush), then warmed up and
 * sampled in batches; the warm-up count, batch sizes, stopping rule and
 * statistics are kvx's own functions over the run's settings (peer.h).
 * Temporary storage and levels are allocated and uploaded once per row and
 * call, outside the timed region. */
#include "peers_gpu.h"
#include "gpu/flush_ptx.h"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>

std::string cuda_err;

namespace {

double wall_now_ms()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- CUDA errors: the call, the API's name and text, where ---------------------------- */

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

} // namespace

/* ---- the GPU ------------------------------------------------------------------------- */

static bool attr(int *v, cudaDeviceAttr a, int dev)
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
static bool flush(Gpu &g, int mode)
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

namespace {

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
        } catch (const std::exception &e) { /* thrust::system_error, a failed allocation */
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

/* ---- measuring one call: worker_launch_once, worker_verify_case, worker_time_case ---- */

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
    const double t0 = wall_now_ms();
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
    const double spent = wall_now_ms() - t0;
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
    const double w0 = wall_now_ms();
    for (int i = 0; i < r.warmups; i++)
        if (!c.reset(g.stream) || !flush(g, m.flush_l2) || !c.run(g.stream))
            return false;
    if (r.warmups)
        CK(cudaStreamSynchronize(g.stream));
    const double warm = wall_now_ms() - w0;
    /* Samples in batches, kept as if taken one at a time. */
    double per = r.warmups ? warm / r.warmups : spent, used = spent + warm;
    const int maxs = std::max(m.max_samples, 1);
    std::vector<double> t(size_t(maxs) + 1), tmp(size_t(maxs) + 1);
    int n = 0, k;
    while ((k = peer_batch(s, n, per, used, MAX_BATCH)) > 0) {
        const double b0 = wall_now_ms();
        if (!sample_batch(g, c, m.flush_l2, k))
            return false;
        CK(cudaEventSynchronize(g.bev[3 * k - 1]));
        for (int i = 0; i < k; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, g.bev[3 * i + 1], g.bev[3 * i + 2]));
            t[size_t(n + i)] = ms;
        }
        const double wall = wall_now_ms() - b0;
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


} // namespace

bool measure_call(PeerSet *s, Gpu &g, Kind k, const RowPlan &p, Result &res)
{
    std::unique_ptr<Call> c = make_call(k, p, g.in_ptr);
    return measure(s, p.row, g, *c, p.chk, res);
}
