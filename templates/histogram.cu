{{! histogram.cu: a histogram of bins counters over n input values (specs/histogram.yaml).  }}
{{! Placeholders:                                                                           }}
{{!   strategy    global smem coarse_contig coarse_interleaved vec16 vec16_runs vec16_warp  }}
{{!               vec16_lanes vec16_reg vec16_reg_rle vec16_values vec16_thread vec16_private }}
{{!               cub_atomic cub_sort                                                       }}
{{!               global_private (histogram_private, then histogram_merge)                  }}
{{!   E           input element type (u8, u16), spelled ctype(E)                            }}
{{!   bins, LO, HI, width, full_range    the binning, through pieces/hist_bin.cuh            }}
{{!   block       threads per block                                                         }}
{{!   coarsen     elements per thread (coarse_contig)                                       }}
{{!   copies      private histograms per block (vec16_warp, vec16_values: one per warp)     }}
{{!   vec         elements per 16-byte load (vec16*)                                        }}
{{!   spill       loads between spills of vec16_reg's packed 8-bit counters                  }}
{{!   cc          target compute capability (__reduce_add_sync from 80)                      }}
{{!   swar        vec16_reg bins four bytes at once (u8 values below 128, width 4, 8, 16)    }}
{{!   swar_shift  log2(width) - 2, for swar                                                  }}
{{!   items       samples per thread per tile (cub_*)                                        }}
{{!   rows        vec16_thread: 128-byte rows of a warp's counters, four bins a row per lane  }}
{{!   private_drain  vec16_private: most loads between emptyings of the 16-bit counters     }}
{{!   resident    blocks per SM a persistent grid keeps resident                            }}
{{! The strategies are a ladder: each adds one idea to one before it (see doc: in the spec).   }}
{{#if strategy == "cub_atomic" || strategy == "cub_sort"}}
#include <cub/block/block_histogram.cuh>

{{/if}}
typedef {{ctype(E)}} Value;

{{#include "pieces/hist_bin.cuh"}}
{{#if strategy == "vec16_reg" || strategy == "vec16_reg_rle" || strategy == "vec16_lanes" || strategy == "vec16_thread" ||
      strategy == "vec16_private"}}

/* Sum of v over the warp, in every lane: a bin's count over the warp's values. */
{{#include "pieces/warp_sum.cuh"}}
{{/if}}

{{#if strategy == "vec16" || strategy == "vec16_warp"}}
/* Counts values into one shared histogram, one atomic each. */
struct Tally {
    unsigned *hist_s;

    __device__ void add(unsigned v)
    {
        const int b = bin_of(v);
        if (b >= 0)
            atomicAdd(&hist_s[b], 1u);
    }
    __device__ void finish() {}
};

{{#elif strategy == "vec16_values"}}
/* Counts byte values, not bins, into the warp's copy of a 256-counter shared
 * histogram, one atomic each; the values are binned once per block at the end.
 * Why: no binning arithmetic per value, and a warp's 32 values spread over as
 * many counters as there are distinct values (31 here), not {{bins + 1}}, so fewer
 * lanes of a warp, and fewer warps, queue on one word. */
struct Tally {
    unsigned *hist_s;

    __device__ void add(unsigned v)
    {
        atomicAdd(&hist_s[v], 1u);
    }
    __device__ void finish() {}
};

{{#elif strategy == "vec16_lanes"}}
/* Counts values into the lane's own copy of the shared histogram, one atomic
 * each.  Bin b of copy l is word b * 32 + l, so the 32 lanes of a warp hit 32
 * different banks whatever bins they count: no bank conflicts, and no two
 * lanes of a warp on one word.  The block's warps share the 32 copies. */
struct Tally {
    unsigned *lane_s;   /* hist_s + lane */

    __device__ void add(unsigned v)
    {
        const int b = bin_of(v);
        if (b >= 0)
            atomicAdd(&lane_s[b * 32], 1u);
    }
    __device__ void finish() {}
};

{{#elif strategy == "vec16_runs"}}
/* Counts values into one shared histogram a run at a time: a thread extends its
 * run while the bin repeats and adds the run's length when the bin changes, so a
 * run of equal values costs one atomic instead of one per value. */
struct Tally {
    unsigned *hist_s;
    int bin = -1;       /* -1: the run holds values that are not counted */
    unsigned len = 0;

    __device__ void add(unsigned v)
    {
        const int b = bin_of(v);
        if (b != bin) {
            if (bin >= 0)
                atomicAdd(&hist_s[bin], len);
            bin = b;
            len = 0;
        }
        len++;
    }
    __device__ void finish()
    {
        if (bin >= 0)
            atomicAdd(&hist_s[bin], len);
    }
};

{{#elif strategy == "vec16_reg" || strategy == "vec16_reg_rle"}}
/* Counts in registers, no atomics while counting.  A load's values go into two
 * 32-bit words of eight 4-bit counters (field b for bin b, field {{bins}} for
 * values not counted, so the add needs no branch), half the values each, so a
 * field reaches at most {{vec // 2}} < 16.  The two words are then widened into
 * 8-bit counters (even: bins 0, 2, 4, 6; odd: bins 1, 3, 5, 7), and every
 * {{spill}} loads ({{spill * vec}} values, so no field passes 255) those are emptied
 * into 32-bit counts.  At the end each warp sums its counts, one reduction per
 * bin, and one lane adds the sums to the block's shared histogram.{{#if strategy == "vec16_reg_rle"}}
 *
 * vec16_reg_rle: a load whose 16 bytes are one value (inside a run, or a
 * single-valued input) is counted with one add per half, 8 in its field,
 * instead of sixteen: low-entropy input costs a compare per load.{{/if}} */
struct Tally {
    unsigned *hist_s;
    unsigned even = 0, odd = 0;
    unsigned count[{{bins}}] = {};  /* indexes known at compile time: registers */
    int loads = 0;

    /* 1 in the 4-bit field of v's bin */
    __device__ static unsigned one(unsigned v)
    {
        const int b = bin_of(v);
        return 1u << 4 * (b >= 0 ? b : {{bins}});
    }
    __device__ void widen(unsigned fields4)
    {
        even += fields4 & 0x0f0f0f0fu;
        odd += fields4 >> 4 & 0x0f0f0f0fu;
    }
{{#if swar}}
    /* The shift of the 4-bit field of each of w's four bytes, in the same byte:
     * 4 * (b - {{LO}}) / {{width}} for {{LO}} <= b <= {{HI}}, else {{4 * bins}}.  All four at once:
     * r = (b | 0x80) - {{LO}} cannot borrow from the next byte, has bit 7 set
     * when b >= {{LO}} (for b < 128), and keeps b - {{LO}} in its low 7 bits. */
    __device__ static unsigned field_shifts(unsigned w)
    {
        const unsigned r = (w | 0x80808080u) - {{hex(LO * 0x01010101)}}u;
        const unsigned d = r & 0x7f7f7f7fu;                             /* b - {{LO}} */
        const unsigned over = d + {{hex((127 - (HI - LO)) * 0x01010101)}}u;           /* bit 7: b > {{HI}} */
        const unsigned ok = r & ~over & ~w & 0x80808080u;             /* bit 7: counted */
        const unsigned keep = (ok >> 7) * 0xffu;                      /* 0xff per counted byte */
        return (d >> {{swar_shift}} & 0x1c1c1c1cu & keep) | ({{hex(4 * bins * 0x01010101)}}u & ~keep);
    }
    __device__ void add_load(uint4 chunk)
    {
{{#if strategy == "vec16_reg_rle"}}
        if (chunk.x == chunk.y && chunk.z == chunk.w && chunk.x == chunk.z &&
            chunk.x == __byte_perm(chunk.x, 0, 0)) {    /* 16 copies of byte 0 */
            const unsigned eight = one(chunk.x & 0xffu) * 8;
            widen(eight);
            widen(eight);
            count_load();
            return;
        }
{{/if}}
        const unsigned words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
        unsigned fields4[2] = {0, 0};
#pragma unroll
        for (int w = 0; w < 4; w++) {
            const unsigned shifts = field_shifts(words[w]);
#pragma unroll
            for (int k = 0; k < 4; k++)     /* byte k of shifts, zero-extended (PRMT) */
                fields4[w / 2] += 1u << __byte_perm(shifts, 0, 0x4440 + k);
        }
{{#else}}
    __device__ void add_load(uint4 chunk)
    {
{{#if strategy == "vec16_reg_rle"}}
        if (chunk.x == chunk.y && chunk.z == chunk.w && chunk.x == chunk.z &&
            chunk.x == __byte_perm(chunk.x, 0, 0)) {    /* 16 copies of byte 0 */
            const unsigned eight = one(chunk.x & 0xffu) * 8;
            widen(eight);
            widen(eight);
            count_load();
            return;
        }
{{/if}}
        const unsigned words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
        unsigned fields4[2] = {0, 0};
#pragma unroll
        for (int w = 0; w < 4; w++)
#pragma unroll
            for (int k = 0; k < {{4 // sizeof(E)}}; k++)       /* little-endian: memory order */
                fields4[w / 2] += one((words[w] >> {{8 * sizeof(E)}} * k) & {{256 ^ sizeof(E) - 1}}u);
{{/if}}
        widen(fields4[0]);
        widen(fields4[1]);
{{#if strategy == "vec16_reg_rle"}}
        count_load();
    }
    __device__ void count_load()     /* after each load's widen: spill before a field passes 255 */
    {
{{/if}}
        if (++loads == {{spill}}) {
            spill();
            loads = 0;
        }
    }
    __device__ void add(unsigned v)     /* one value past the last full load */
    {
        widen(one(v));
    }
    __device__ void spill()
    {
#pragma unroll
        for (int b = 0; b < {{bins}}; b++)
            count[b] += ((b % 2 ? odd : even) >> 8 * (b / 2)) & 0xffu;
        even = odd = 0;
    }
    __device__ void finish()
    {
        spill();
#pragma unroll
        for (int b = 0; b < {{bins}}; b++) {
            const unsigned sum = warp_sum(count[b]);
            if (threadIdx.x % 32 == 0 && sum)
                atomicAdd(&hist_s[b], sum);
        }
    }
};

{{#elif strategy == "vec16_thread"}}
/* Counts into the thread's own 8-bit counters in shared memory, with plain
 * loads and stores: no atomics while counting, and no two threads ever on one
 * counter.  The counter of byte value v is byte (v / 4) * 128 + v % 4 of the
 * lane's column, so the 32 lanes of a warp always hit 32 different banks,
 * whatever values they count.  Why: a shared atomic on 32 different words
 * costs a warp several times a load and a store (vec16 at 256 bins uniform).
 *
 * The counter addresses are computed two at a time, in the 16-bit halves of a
 * word (the counters lie below 64 KB), and counters are emptied before they
 * can wrap, checked once per load, not once per value: the new counts are
 * ORed together and only when one reached 128 does drain() add the counters
 * at 128 or more to the block's wrap_s (rare for spread-out values: every 128
 * values of one value in one thread). */
struct Tally {
    unsigned col2;              /* the lane's column (a shared address), in both halves */
    unsigned *wrap_s;

    /* The shared addresses of the counters of the values in the two halves of
     * h: 32 v - 31 (v % 4) + column = (v / 4) * 128 + v % 4 + column. */
    __device__ unsigned addr2(unsigned h) const
    {
        return h * 32u + col2 - (h & 0x00030003u) * 31u;
    }
    /* Add 1 to the counters at shared addresses a and b (the same counter
     * twice when a == b): both loads first, so that a thread has two counts in
     * flight, not one.  The new counts ORed, 1..144.  Inline PTX: 32-bit
     * shared addresses, no generic-to-shared conversion per value; volatile
     * keeps each pair's stores before the next pair's loads. */
    __device__ static unsigned bump2(unsigned a, unsigned b)
    {
        unsigned x, y;
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(x) : "r"(a));
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(y) : "r"(b));
        x += 1u;
        y += a == b ? 2u : 1u;
        asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(x) : "memory");
        asm volatile("st.shared.u8 [%0], %1;" ::"r"(b), "r"(y) : "memory");
        return x | y;
    }
    __device__ static unsigned count(unsigned a)
    {
        unsigned x;
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(x) : "r"(a));
        return x;
    }
    __device__ static void clear(unsigned a)
    {
        asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(0u) : "memory");
    }
    __device__ void add_load(uint4 chunk)
    {
        const unsigned words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
        unsigned seen = 0;
#pragma unroll
        for (int w = 0; w < 4; w++) {
            const unsigned even = addr2(words[w] & 0x00ff00ffu), odd = addr2(words[w] >> 8 & 0x00ff00ffu);
            seen |= bump2(even & 0xffffu, odd & 0xffffu);
            seen |= bump2(even >> 16, odd >> 16);
        }
        if (seen & 0x80u)
            drain(chunk);
    }
    /* Empty every counter of the load's values that reached 128 into wrap_s:
     * a counter starts a load below 128 and a load adds at most 16, so none
     * passes 255.  A value seen twice is emptied at its first. */
    __device__ void drain(uint4 chunk)
    {
        const unsigned words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll 1
        for (int j = 0; j < 16; j++) {
            const unsigned v = words[j / 4] >> 8 * (j % 4) & 0xffu, a = addr2(v) & 0xffffu;
            const unsigned c = count(a);
            if (c >= 128u) {
                atomicAdd(&wrap_s[v], c);
                clear(a);
            }
        }
    }
    __device__ void add(unsigned v)     /* one value past the last full load */
    {
        const unsigned a = addr2(v) & 0xffffu, c = count(a) + 1u;
        clear(a);
        atomicAdd(&wrap_s[v], c);
    }
    __device__ void finish() {}
};

{{#elif strategy == "vec16_private"}}
/* Counts into the thread's own 16-bit counters in shared memory with shared
 * reductions that return nothing: unlike vec16_thread's load and store, a
 * reduction leaves no dependence for the next value to wait on, and unlike
 * vec16_warp's no two lanes of a warp ever touch one word, so no bank
 * conflicts.  Two warps share each word, the even warp in its low half, the
 * odd one in its high half: value v counts in word v of the lane's column
 * (rows of 32 words), so a value costs a byte picked out, one multiply-add
 * for its address and the reduction, the half being the thread's own constant.
 * 256 counters of 2 bytes make 512 bytes a thread, {{block}} threads in one block an
 * SM, in dynamic shared memory.  Every {{private_drain}} loads or so (at most 65520
 * values, so no half passes 65535 and carries into the other warp's) the thread
 * empties its counters into wrap_s.  Four loads stay in flight while four
 * are counted: with two, {{block // 32}} warps left the SMs waiting on memory
 * (eight measured slower). */
struct Tally {
    unsigned col;               /* shared address of the lane's word in row 0 */
    unsigned *col_p;            /* the same, as a pointer */
    unsigned *wrap_s;
    unsigned inc;               /* 1 (even warp) or 0x10000 (odd warp) */
    int loads = 0;

    __device__ void red(unsigned v)
    {
        asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(v * 128u + col), "r"(inc) : "memory");
    }
    __device__ void add_word(unsigned w)
    {
        red(w & 0xffu);
        red(__byte_perm(w, 0, 0x4441));
        red(__byte_perm(w, 0, 0x4442));
        red(w >> 24);
    }
    __device__ void add_load(uint4 chunk)     /* then counted(): no check per load */
    {
        add_word(chunk.x);
        add_word(chunk.y);
        add_word(chunk.z);
        add_word(chunk.w);
    }
    __device__ void counted(int k)     /* after k loads: empty the counters in time */
    {
        loads += k;
        if (loads > {{private_drain}} - 4) {     /* never past {{private_drain}} */
            drain();
            loads = 0;
        }
    }
    __device__ void add(unsigned v)     /* one value past the last full load */
    {
        red(v);
    }
    /* Out of line: the loop keeps its registers, and runs it once in about
     * {{private_drain}} loads.  The other half of each word is another thread's, counting on:
     * take this thread's half out with an atomic subtraction. */
    __device__ __noinline__ void drain()
    {
        const unsigned shift = inc == 1u ? 0 : 16;
#pragma unroll 1
        for (int r = 0; r < 256; r++) {
            const unsigned mine = col_p[r * 32] >> shift & 0xffffu;
            if (mine) {
                atomicSub(&col_p[r * 32], mine << shift);
                atomicAdd(&wrap_s[r], mine);
            }
        }
    }
    __device__ void finish() {}
};

{{#elif strategy == "cub_atomic" || strategy == "cub_sort"}}
/* CUB's block histogram counts samples that are bin numbers.  Sample {{bins}}
 * is an extra bin for values outside {{LO}}..{{HI}} and for the padding of the
 * last tile; it is not written out. */
{{#if strategy == "cub_atomic"}}
typedef cub::BlockHistogram<unsigned short, {{block}}, {{items}}, {{bins + 1}}, cub::BLOCK_HISTO_ATOMIC>
    BlockHistogram;
{{#else}}
typedef cub::BlockHistogram<unsigned short, {{block}}, {{items}}, {{bins + 1}}, cub::BLOCK_HISTO_SORT>
    BlockHistogram;
{{/if}}

{{/if}}
{{#if strategy == "global"}}
/* One value per thread, one global atomic per counted value (PMPP fig. 9.6). */
{{#elif strategy == "global_private"}}
/* Privatized in global memory (PMPP 9.4): a persistent grid walks the input
 * with a grid-stride loop, each block adding into its own copy of the
 * histogram, priv[blockIdx.x * bins + bin], zeroed before the launch; a
 * hot bin is contended by one block's threads only.  A second kernel adds
 * the copies, with no atomics. */
{{#elif strategy == "smem"}}
/* Privatized: one value per thread into the block's shared histogram, then
 * one global atomic per non-zero bin per block (PMPP fig. 9.10). */
{{#elif strategy == "coarse_contig"}}
/* Privatized and coarsened: each thread counts {{coarsen}} contiguous values
 * (PMPP fig. 9.14), so there are {{coarsen}}x fewer blocks to merge; the
 * warp's loads are {{coarsen}} values apart, not coalesced. */
{{#elif strategy == "coarse_interleaved"}}
/* Privatized and coarsened by a grid-stride loop over a persistent grid:
 * consecutive threads read consecutive values (coalesced), and only
 * {{resident}} blocks per SM merge their histograms. */
{{#elif strategy == "vec16"}}
/* As coarse_interleaved, with 16-byte loads: each load brings {{vec}} values. */
{{#elif strategy == "vec16_runs"}}
/* As vec16, with per-thread run aggregation (Tally): a run of values in one
 * bin is added with one shared atomic. */
{{#elif strategy == "vec16_reg" || strategy == "vec16_reg_rle"}}
/* As vec16, counting in registers (Tally): {{bins}} shared atomics per warp in
 * all, instead of one per value; and two loads in flight per thread, since
 * counting a load takes long enough to leave the memory idle otherwise. */
{{#elif strategy == "vec16_private"}}
/* As vec16_thread, with 16-bit counters added by shared reductions (Tally), 32 KB
 * a warp pair, {{resident * block // 32}} warps an SM. */
{{#elif strategy == "vec16_values"}}
/* As vec16_warp, counting byte values rather than bins (Tally), {{copies}} copies of
 * 256 counters, binned at the end. */
{{#elif strategy == "vec16_thread"}}
/* As vec16, each thread counting into its own 8-bit counters (Tally), {{rows * 128 // 1024}}
 * KB a warp; two loads in flight while two are counted, since {{resident * block // 32}}
 * warps per SM, each waiting on its own loads and stores, cannot keep enough
 * bytes in flight with one.  At the end each warp adds rows of all warps'
 * counters. */
{{#elif strategy == "vec16_lanes"}}
/* As vec16, each lane counting into its own copy of the histogram (Tally), 32
 * copies in {{bins * 128 // 1024}} KB; a warp per bin adds the copies at the end. */
{{#elif strategy == "vec16_warp"}}
/* As vec16, with {{copies}} private histograms per block, warp w counting into
 * copy w % {{copies}}, so fewer warps contend for a hot bin's shared word. */
{{#elif strategy == "cub_atomic"}}
/* cub::BlockHistogram (BLOCK_HISTO_ATOMIC) on a persistent grid: tiles of
 * {{block}} x {{items}} values, loaded striped (coalesced), composited into the
 * block's shared histogram. */
{{#elif strategy == "cub_sort"}}
/* cub::BlockHistogram (BLOCK_HISTO_SORT) on a persistent grid: each tile of
 * {{block}} x {{items}} values is radix-sorted and counted by run boundaries,
 * with no atomics on shared memory, so a hot bin does not serialise. */
{{/if}}
{{#if strategy == "global" || strategy == "smem" || strategy == "coarse_contig"}}
extern "C" __global__ void __launch_bounds__({{block}})
{{#else}}
extern "C" __global__ void __launch_bounds__({{block}}, {{resident}})
{{/if}}
{{#if strategy == "global_private"}}
histogram_private(const Value *__restrict__ in, int n, int bins, unsigned *__restrict__ priv)
{{#else}}
histogram(const Value *__restrict__ in, int n, unsigned *__restrict__ hist)
{{/if}}
{
{{#if strategy == "global"}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int b = bin_of(in[i]);
        if (b >= 0)
            atomicAdd(&hist[b], 1u);
    }
{{#elif strategy == "global_private"}}
    unsigned *mine = priv + (size_t)blockIdx.x * bins;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int b = bin_of(in[i]);
        if (b >= 0)
            atomicAdd(&mine[b], 1u);
    }
{{#elif strategy == "cub_atomic" || strategy == "cub_sort"}}
    __shared__ typename BlockHistogram::TempStorage temp;
    __shared__ unsigned hist_s[{{bins + 1}}];
    BlockHistogram block_histogram(temp);
    block_histogram.InitHistogram(hist_s);
    __syncthreads();
    const int tile = {{block * items}};
    for (int base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
        unsigned short samples[{{items}}];
#pragma unroll
        for (int j = 0; j < {{items}}; j++) {
            const int i = base + j * {{block}} + threadIdx.x;
            const int b = i < n ? bin_of(in[i]) : -1;
            samples[j] = b >= 0 ? b : {{bins}};
        }
        block_histogram.Composite(samples, hist_s);
{{#if strategy == "cub_sort"}}
        __syncthreads();    /* the next tile reuses temp */
{{/if}}
    }
{{#include "pieces/hist_flush.cuh"}}
{{#else}}
{{#if strategy == "vec16_thread"}}
    __shared__ unsigned cnt_s[{{block // 32}}][{{rows}}][32];     /* warp, row, lane: four 8-bit counters */
    __shared__ unsigned hist_s[{{bins + 1}}];                     /* the counters' wraps */
    for (int k = threadIdx.x; k < {{block * rows}}; k += blockDim.x)
        (&cnt_s[0][0][0])[k] = 0;
    for (int b = threadIdx.x; b <= {{bins}}; b += blockDim.x)
        hist_s[b] = 0;
{{#elif strategy == "vec16_private"}}
    extern __shared__ __align__(16) unsigned cnt_d[];      /* [warp pair][256 rows][32 lanes]: two warps' counters */
    __shared__ unsigned hist_s[256];                       /* the drained counts */
    for (int k = threadIdx.x; k < {{block * 128}}; k += blockDim.x)
        cnt_d[k] = 0;
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        hist_s[b] = 0;
{{#elif strategy == "vec16_values"}}
    __shared__ unsigned hist_s[{{copies}}][256];   /* a copy of the value counts per warp */
    __shared__ unsigned bin_s[{{bins}}];
    for (int v = threadIdx.x; v < {{copies * 256}}; v += blockDim.x)
        hist_s[v / 256][v % 256] = 0;
    for (int b = threadIdx.x; b < {{bins}}; b += blockDim.x)
        bin_s[b] = 0;
{{#elif strategy == "vec16_lanes"}}
    __shared__ unsigned hist_s[{{bins * 32}}];     /* bin b of lane l's copy: b * 32 + l */
    for (int b = threadIdx.x; b < {{bins * 32}}; b += blockDim.x)
        hist_s[b] = 0;
{{#elif copies > 1}}
    __shared__ unsigned hist_s[{{copies}}][{{bins}}];
    for (int b = threadIdx.x; b < {{copies * bins}}; b += blockDim.x)
        hist_s[b / {{bins}}][b % {{bins}}] = 0;
{{#else}}
    __shared__ unsigned hist_s[{{bins}}];
    for (int b = threadIdx.x; b < {{bins}}; b += blockDim.x)
        hist_s[b] = 0;
{{/if}}
    __syncthreads();
{{#if strategy == "smem"}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int b = bin_of(in[i]);
        if (b >= 0)
            atomicAdd(&hist_s[b], 1u);
    }
{{#elif strategy == "coarse_contig"}}
    const int start = (blockIdx.x * blockDim.x + threadIdx.x) * {{coarsen}};
    const int end = min(start + {{coarsen}}, n);
    for (int i = start; i < end; i++) {
        const int b = bin_of(in[i]);
        if (b >= 0)
            atomicAdd(&hist_s[b], 1u);
    }
{{#elif strategy == "coarse_interleaved"}}
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int b = bin_of(in[i]);
        if (b >= 0)
            atomicAdd(&hist_s[b], 1u);
    }
{{#else}}
{{#if strategy == "vec16_thread"}}
    const unsigned col = (unsigned)__cvta_generic_to_shared(&cnt_s[threadIdx.x / 32][0][threadIdx.x % 32]);
    if ((unsigned)__cvta_generic_to_shared(cnt_s) + {{block * rows * 4}}u > 0x10000u)
        __trap();   /* the 16-bit halves of addr2 would overflow: never with this layout */
    Tally tally{col | col << 16, hist_s};
{{#elif strategy == "vec16_lanes"}}
    Tally tally{hist_s + threadIdx.x % 32};
{{#elif strategy == "vec16_values"}}
    Tally tally{hist_s[threadIdx.x / 32 % {{copies}}]};
{{#elif strategy == "vec16_private"}}
    unsigned *const mine = &cnt_d[threadIdx.x / 64 * 8192 + threadIdx.x % 32];
    Tally tally{(unsigned)__cvta_generic_to_shared(mine), mine, hist_s, threadIdx.x / 32 % 2 ? 0x10000u : 1u};
{{#elif copies > 1}}
    Tally tally{hist_s[threadIdx.x / 32 % {{copies}}]};
{{#else}}
    Tally tally{hist_s};
{{/if}}
    const uint4 *in16 = reinterpret_cast<const uint4 *>(in);     /* in is 256-byte aligned */
    const int n16 = n / {{vec}};
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
{{#if strategy == "vec16_private"}}
    const int stride = gridDim.x * blockDim.x;
    int i = first;
    if (i + 3 * stride < n16) {     /* the next four loads in flight while four are counted */
        uint4 a = in16[i], b = in16[i + stride], c = in16[i + 2 * stride], d = in16[i + 3 * stride];
        for (; i + 7 * stride < n16; i += 4 * stride) {     /* each reloaded once counted */
            tally.add_load(a);
            a = in16[i + 4 * stride];
            tally.add_load(b);
            b = in16[i + 5 * stride];
            tally.add_load(c);
            c = in16[i + 6 * stride];
            tally.add_load(d);
            d = in16[i + 7 * stride];
            tally.counted(4);
        }
        tally.add_load(a);
        tally.add_load(b);
        tally.add_load(c);
        tally.add_load(d);
        tally.counted(4);
        i += 4 * stride;
    }
    for (; i < n16; i += stride) {
        tally.add_load(in16[i]);
        tally.counted(1);
    }
{{#elif strategy == "vec16_thread"}}
    const int stride = gridDim.x * blockDim.x;
    int i = first;
    if (i + stride < n16) {     /* the next two loads in flight while two are counted */
        uint4 a = in16[i], b = in16[i + stride];
        for (; i + 3 * stride < n16; i += 2 * stride) {
            const uint4 na = in16[i + 2 * stride], nb = in16[i + 3 * stride];
            tally.add_load(a);
            tally.add_load(b);
            a = na;
            b = nb;
        }
        tally.add_load(a);
        tally.add_load(b);
        i += 2 * stride;
    }
    for (; i < n16; i += stride)
        tally.add_load(in16[i]);
{{#elif strategy == "vec16_reg" || strategy == "vec16_reg_rle"}}
    const int stride = gridDim.x * blockDim.x;
    int i = first;
    for (; i + stride < n16; i += 2 * stride) {    /* two loads in flight, then count both */
        const uint4 a = in16[i], b = in16[i + stride];
        tally.add_load(a);
        tally.add_load(b);
    }
    if (i < n16)
        tally.add_load(in16[i]);
{{#else}}
    for (int i = first; i < n16; i += gridDim.x * blockDim.x) {
        const uint4 chunk = in16[i];
        const unsigned words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
        for (int w = 0; w < 4; w++)
#pragma unroll
            for (int k = 0; k < {{4 // sizeof(E)}}; k++)       /* little-endian: memory order */
                tally.add((words[w] >> {{8 * sizeof(E)}} * k) & {{256 ^ sizeof(E) - 1}}u);
    }
{{/if}}
    if (first < n - n16 * {{vec}})      /* the n % {{vec}} values past the last full load */
        tally.add(in[n16 * {{vec}} + first]);
    tally.finish();
{{/if}}
{{#if strategy == "vec16_thread"}}
    __syncthreads();
    /* Warp w adds rows w, w + {{block // 32}}, ...: lane l reads its word of the row in
     * every warp's counters (one word per bank), even and odd bytes widened into
     * 16-bit halves (at most {{block // 32}} x 255 each), and the warp sums them: bins
     * 4r and 4r + 2 in lo, 4r + 1 and 4r + 3 in hi.  Lanes 0..3 add a bin each. */
    for (int r = threadIdx.x / 32; r < {{rows}}; r += {{block // 32}}) {
        unsigned lo = 0, hi = 0;
#pragma unroll
        for (int q = 0; q < {{block // 32}}; q++) {
            const unsigned x = cnt_s[q][r][threadIdx.x % 32];
            lo += x & 0x00ff00ffu;
            hi += x >> 8 & 0x00ff00ffu;
        }
        lo = warp_sum(lo);
        hi = warp_sum(hi);
        const int j = threadIdx.x % 32, b = 4 * r + j;
        if (j < 4 && b < {{bins}}) {
            const unsigned total = ((j % 2 ? hi : lo) >> 16 * (j / 2) & 0xffffu) + hist_s[b];
            if (total)
                atomicAdd(&hist[b], total);
        }
    }
{{#elif strategy == "vec16_private"}}
    __syncthreads();
    /* Warp w adds rows w, w + {{block // 32}}, ...: lane l reads its word of the row in
     * every warp pair's counters and adds both halves (at most {{block // 32}} x 65535 a
     * lane, 32 times that a warp, in 32 bits); row r is value r. */
    for (int r = threadIdx.x / 32; r < 256; r += {{block // 32}}) {
        unsigned sum = 0;
#pragma unroll
        for (int q = 0; q < {{block // 64}}; q++) {
            const unsigned x = cnt_d[q * 8192 + r * 32 + threadIdx.x % 32];
            sum += (x & 0xffffu) + (x >> 16);
        }
        sum = warp_sum(sum);
        if (threadIdx.x % 32 == 0 && sum + hist_s[r])
            atomicAdd(&hist[r], sum + hist_s[r]);
    }
{{#elif strategy == "vec16_values"}}
    __syncthreads();
    /* Bin the value counts: the block's {{bins}} sums in shared memory first, so
     * that the grid's global atomics are {{bins}} a block, not one per value seen. */
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
        unsigned total = 0;
#pragma unroll
        for (int c = 0; c < {{copies}}; c++)
            total += hist_s[c][v];
        const int b = bin_of(v);
        if (b >= 0 && total)
            atomicAdd(&bin_s[b], total);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < {{bins}}; b += blockDim.x)
        if (bin_s[b])
            atomicAdd(&hist[b], bin_s[b]);
{{#elif strategy == "vec16_lanes"}}
    __syncthreads();
    /* A warp per bin: lane l reads copy l (one word per bank), the warp sums. */
    for (int b = threadIdx.x / 32; b < {{bins}}; b += blockDim.x / 32) {
        const unsigned total = warp_sum(hist_s[b * 32 + threadIdx.x % 32]);
        if (threadIdx.x % 32 == 0 && total)
            atomicAdd(&hist[b], total);
    }
{{#else}}
{{#include "pieces/hist_flush.cuh"}}
{{/if}}
{{/if}}
}
{{#if strategy == "global_private"}}

/* The merge: a block per 32 bins, lane l adding bin 32 * blockIdx.x + l of
 * every 32nd copy (a warp reads 32 consecutive bins of a copy, coalesced), the
 * {{merge_block // 32}} warps' sums then added in shared memory: nblocks / {{merge_block // 32}} loads
 * a thread, not nblocks, and no atomics. */
extern "C" __global__ void __launch_bounds__({{merge_block}})
histogram_merge(const unsigned *__restrict__ priv, int nblocks, int bins, unsigned *__restrict__ hist)
{
    __shared__ unsigned sums[{{merge_block // 32}}][33];   /* +1: a column read is conflict-free */
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int b = blockIdx.x * 32 + lane;
    unsigned total = 0;
    if (b < bins)
        for (int k = warp; k < nblocks; k += {{merge_block // 32}})
            total += priv[(size_t)k * bins + b];
    sums[warp][lane] = total;
    __syncthreads();
    if (warp != 0 || b >= bins)
        return;
    for (int w = 1; w < {{merge_block // 32}}; w++)
        total += sums[w][lane];
    hist[b] = total;
}
{{/if}}
