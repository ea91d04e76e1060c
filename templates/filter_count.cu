{{! filter_count.cu: count the elements in[i] < thresh into counters (specs/contention.yaml). }}
{{! Placeholders:                                                                              }}
{{!   strategy   naive warp_ballot warp_cg block_smem block_smem_warp                           }}
{{!              thread_reg thread_reg_v4 thread_reg_v4x4                                       }}
{{!              two_pass (address const: filter_count_blocks, then filter_count_sum)           }}
{{!   T          counter element type (u32, u64), spelled ctype(T)                              }}
{{!   address    const: every hit adds to out[0], an address the compiler sees is warp-uniform; }}
{{!              runtime: a hit adds to out[addr[i]], an index loaded per element              }}
{{!   counters   K, counters in out (block_smem* with runtime addresses: shared array size)     }}
{{!   block      threads per block                                                              }}
{{!   resident   blocks per SM a persistent grid keeps resident (thread_reg*, two_pass)          }}
{{!   sum_block  threads of two_pass's second kernel (a power of two)                          }}
{{!   cc         through pieces/agg_block_sum.cuh                                               }}
{{! The first kernel of every variant takes the same parameters (two_pass: partial for out).   }}
{{#if strategy == "warp_cg"}}
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

{{/if}}
typedef {{ctype(T)}} Count;

{{#if strategy == "thread_reg" || strategy == "thread_reg_v4" || strategy == "thread_reg_v4x4" || strategy == "two_pass"}}
{{#include "pieces/agg_block_sum.cuh"}}

{{/if}}
{{#if strategy == "thread_reg_v4" || strategy == "thread_reg_v4x4" || strategy == "two_pass"}}
{{#include "pieces/agg_count4.cuh"}}

{{/if}}
{{#if strategy == "naive" && address == "const"}}
/* Every hit adds 1 to out[0] with its own global atomic.  The address is the
 * same for every thread and the compiler can see it, so ptxas may aggregate the
 * warp's atomics itself (one RED per warp): compare with address=runtime. */
{{#elif strategy == "naive"}}
/* Every hit adds 1 to out[addr[i]] with its own global atomic.  The index is
 * loaded, so the compiler cannot prove it warp-uniform and does not aggregate. */
{{#elif strategy == "warp_ballot" && address == "const"}}
/* Warp aggregation by hand: the warp ballots its hits and the lowest hitting
 * lane adds their popcount, one global atomic per warp with a hit. */
{{#elif strategy == "warp_ballot"}}
/* Warp aggregation by hand with runtime addresses: the hitting lanes are grouped
 * by counter index with __match_any_sync, and each group's lowest lane adds the
 * group's size, one global atomic per distinct index per warp. */
{{#elif strategy == "warp_cg" && address == "const"}}
/* Warp aggregation with cooperative groups: the lanes that hit form a
 * coalesced group, whose first thread adds its size. */
{{#elif strategy == "warp_cg"}}
/* Warp aggregation with cooperative groups: the coalesced group of hitting
 * lanes is split by counter index (labeled_partition), and each part's first
 * thread adds the part's size. */
{{#elif strategy == "block_smem" && address == "const"}}
/* Block staging: hits add to a shared counter; one global atomic per block. */
{{#elif strategy == "block_smem"}}
/* Block staging: hits add to a shared copy of the {{counters}} counters; the
 * block then adds each non-zero copy to its global counter. */
{{#elif strategy == "block_smem_warp" && address == "const"}}
/* Block staging fed by warp aggregation: each warp adds the popcount of its
 * ballot to a shared counter; one global atomic per block. */
{{#elif strategy == "block_smem_warp"}}
/* Block staging fed by warp aggregation: lanes grouped by counter index
 * (__match_any_sync) add their group size to a shared copy of the {{counters}}
 * counters; the block then adds each non-zero copy to its global counter. */
{{#elif strategy == "thread_reg"}}
/* Register counting on a persistent grid: each thread walks the input with a
 * grid-stride loop and counts in a register; the block sums the counts (warp
 * reductions, then shared memory) and issues one global atomic. */
{{#elif strategy == "thread_reg_v4"}}
/* Register counting with 16-byte loads: as thread_reg, but each load brings
 * four ints (one LDG.128), a quarter of the load instructions. */
{{#elif strategy == "thread_reg_v4x4"}}
/* Register counting with 16-byte loads, four in flight: each iteration issues
 * four independent int4 loads before using any, 64 bytes per thread in flight,
 * to cover memory latency at the read-bandwidth floor. */
{{#elif strategy == "two_pass"}}
/* Two passes, no atomics.  First pass: as thread_reg_v4, each thread counts
 * its grid-stride share of 16-byte loads in a register, and the block sums
 * them; the block writes its count to partial[blockIdx.x] (every block
 * writes, so partial needs no zeroing).  The second kernel adds the partial
 * counts. */
{{/if}}
{{#if strategy == "thread_reg" || strategy == "thread_reg_v4" || strategy == "thread_reg_v4x4" || strategy == "two_pass"}}
extern "C" __global__ void __launch_bounds__({{block}}, {{resident}})
{{#else}}
extern "C" __global__ void __launch_bounds__({{block}})
{{/if}}
{{#if strategy == "two_pass"}}
filter_count_blocks(const int *__restrict__ in, const unsigned short *__restrict__ /* addr: unused */,
                    int n, int thresh, Count *__restrict__ partial)
{{#elif address == "const"}}
filter_count(const int *__restrict__ in, const unsigned short *__restrict__ /* addr: unused */,
             int n, int thresh, Count *__restrict__ out)
{{#else}}
filter_count(const int *__restrict__ in, const unsigned short *__restrict__ addr, int n,
             int thresh, Count *__restrict__ out)
{{/if}}
{
{{#if strategy == "thread_reg"}}
    unsigned count = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        count += in[i] < thresh;
{{#elif strategy == "thread_reg_v4" || strategy == "thread_reg_v4x4" || strategy == "two_pass"}}
    const int4 *in4 = reinterpret_cast<const int4 *>(in);  /* in is 256-byte aligned */
    const int n4 = n / 4;
    const int stride = gridDim.x * blockDim.x;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned count = 0;
    int i = first;
{{#if strategy == "thread_reg_v4x4"}}
    for (; i + 3 * stride < n4; i += 4 * stride) {
        int4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            v[u] = in4[i + u * stride];
#pragma unroll
        for (int u = 0; u < 4; u++)
            count += count_below4(v[u], thresh);
    }
{{/if}}
    for (; i < n4; i += stride)
        count += count_below4(in4[i], thresh);
    if (first < n - n4 * 4)             /* the n % 4 elements past the last int4 */
        count += in[n4 * 4 + first] < thresh;
{{#else}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool hit = i < n && in[i] < thresh;
{{/if}}
{{#if strategy == "naive" && address == "const"}}
    if (hit)
        atomicAdd(&out[0], Count(1));
{{#elif strategy == "naive"}}
    if (hit)
        atomicAdd(&out[addr[i]], Count(1));
{{#elif strategy == "warp_ballot" && address == "const"}}
    /* Every lane takes part (the grid is whole warps), hit or not. */
    const unsigned hits = __ballot_sync(0xffffffffu, hit);
    if (hits != 0 && threadIdx.x % 32 == __ffs(hits) - 1)
        atomicAdd(&out[0], Count(__popc(hits)));
{{#elif strategy == "warp_ballot"}}
    const unsigned hits = __ballot_sync(0xffffffffu, hit);
    if (hit) {
        const unsigned c = addr[i];
        const unsigned peers = __match_any_sync(hits, c);
        if (threadIdx.x % 32 == __ffs(peers) - 1)
            atomicAdd(&out[c], Count(__popc(peers)));
    }
{{#elif strategy == "warp_cg" && address == "const"}}
    if (hit) {
        const cg::coalesced_group active = cg::coalesced_threads();
        if (active.thread_rank() == 0)
            atomicAdd(&out[0], Count(active.size()));
    }
{{#elif strategy == "warp_cg"}}
    if (hit) {
        const unsigned c = addr[i];
        const cg::coalesced_group peers = cg::labeled_partition(cg::coalesced_threads(), c);
        if (peers.thread_rank() == 0)
            atomicAdd(&out[c], Count(peers.size()));
    }
{{#elif (strategy == "block_smem" || strategy == "block_smem_warp") && address == "const"}}
    __shared__ Count block_count;
    if (threadIdx.x == 0)
        block_count = 0;
    __syncthreads();
{{#if strategy == "block_smem"}}
    if (hit)
        atomicAdd(&block_count, Count(1));
{{#else}}
    const unsigned hits = __ballot_sync(0xffffffffu, hit);
    if (hits != 0 && threadIdx.x % 32 == __ffs(hits) - 1)
        atomicAdd(&block_count, Count(__popc(hits)));
{{/if}}
    __syncthreads();
    if (threadIdx.x == 0 && block_count != 0)
        atomicAdd(&out[0], block_count);
{{#elif strategy == "block_smem" || strategy == "block_smem_warp"}}
    __shared__ Count block_counts[{{counters}}];
    for (int c = threadIdx.x; c < {{counters}}; c += blockDim.x)
        block_counts[c] = 0;
    __syncthreads();
{{#if strategy == "block_smem"}}
    if (hit)
        atomicAdd(&block_counts[addr[i]], Count(1));
{{#else}}
    const unsigned hits = __ballot_sync(0xffffffffu, hit);
    if (hit) {
        const unsigned c = addr[i];
        const unsigned peers = __match_any_sync(hits, c);
        if (threadIdx.x % 32 == __ffs(peers) - 1)
            atomicAdd(&block_counts[c], Count(__popc(peers)));
    }
{{/if}}
    __syncthreads();
    for (int c = threadIdx.x; c < {{counters}}; c += blockDim.x)
        if (block_counts[c] != 0)
            atomicAdd(&out[c], block_counts[c]);
{{#elif strategy == "two_pass"}}
    count = block_sum(count);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = count;
{{#else}}
    count = block_sum(count);
    if (threadIdx.x == 0 && count != 0)
        atomicAdd(&out[0], Count(count));
{{/if}}
}
{{#if strategy == "two_pass"}}

/* Second pass, one block: each thread adds a strided share of the nblocks
 * partial counts, then a tree in shared memory adds the threads' sums.  It
 * stores out[0] rather than adding to it: no atomic anywhere. */
extern "C" __global__ void __launch_bounds__({{sum_block}})
filter_count_sum(const Count *__restrict__ partial, int nblocks, Count *__restrict__ out)
{
    __shared__ Count sums[{{sum_block}}];
    Count sum = 0;
    for (int b = threadIdx.x; b < nblocks; b += blockDim.x)
        sum += partial[b];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (int half = {{sum_block // 2}}; half > 0; half /= 2) {
        if (threadIdx.x < half)
            sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = sums[0];
}
{{/if}}
