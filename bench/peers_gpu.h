/* peers_gpu: the GPU side of kvx-peers (bench/peers.cu): the device, kvx's
 * read L2 flush, the row's input on the device, and one library call timed as
 * a worker times a variant (peers_gpu.cu).  C++ shared by the program's two
 * files, over bench/peer.h; the CUB and Thrust calls live in peers_gpu.cu
 * only. */
#ifndef KVX_PEERS_GPU_H
#define KVX_PEERS_GPU_H

#include "peer.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

constexpr int MAX_BATCH = 64;       /* samples between two waits, as WORKER_MAX_BATCH */

/* The library calls (docs/peers.md). */
enum class Kind { hist_even, hist_range, thrust_count, cub_reduce };

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

/* The device and what stays on it between rows. */
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

/* How a call went: its status, why when not ok, and kvx's statistics. */
struct Result {
    std::string status = "ok";  /* ok, mismatch, launch_error */
    std::string detail;
    PeerStats st{0, NAN, NAN, NAN, NAN, NAN, NAN};
    double launch_ms = NAN;
    int warmups = 0;
};

/* The last CUDA failure: the call, the API's name and text, where. */
extern std::string cuda_err;

/* The device: its facts as kvx's probe has them, a blocking stream, the
 * events.  false with cuda_err. */
bool gpu_open(Gpu &g, int ordinal);
void gpu_close(Gpu &g);

/* The flush's buffer and kernel for mode (PEER_FLUSH_*), run once.  false
 * with cuda_err. */
bool flush_prepare(Gpu &g, int mode);

/* The row's input on the device, uploaded when its key is not the one there.
 * false with cuda_err. */
bool input_upload(Gpu &g, const PeerInput &in);

/* Call k at row r (its input uploaded, the row prepared), timed as
 * worker_time_case times a variant, into res.  false with cuda_err on a
 * CUDA failure (res is then the caller's to mark). */
bool measure_call(PeerSet *s, Gpu &g, Kind k, const RowPlan &p, Result &res);

#endif
