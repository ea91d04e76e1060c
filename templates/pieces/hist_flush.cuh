{{! hist_flush.cuh: the end of a privatized kernel: wait for the block, then add }}
{{! its shared histogram hist_s (copies sub-histograms of bins) to hist.        }}
{{! Placeholders: bins; copies (private copies per block, 1 = one per block).  }}
    __syncthreads();
    for (int b = threadIdx.x; b < {{bins}}; b += blockDim.x) {
{{#if copies > 1}}
        unsigned total = 0;
#pragma unroll
        for (int c = 0; c < {{copies}}; c++)
            total += hist_s[c][b];
{{#else}}
        const unsigned total = hist_s[b];
{{/if}}
        if (total)      /* skewed inputs leave most bins empty: skip their atomics */
            atomicAdd(&hist[b], total);
    }
