{{! broken.cu: a counting kernel whose `strategy` axis mixes correct variants with
    variants that fail on purpose, for the supervisor test (tests/test_gpu_run.c).
    Placeholders: strategy
      naive, warp, block   correct: count in[i] < thresh into out[0]
      oob                  writes far out of bounds (address 16): illegal address
      spin                 waits for a flag nobody sets: killed at the timeout
      trap                 __trap(): the context is lost
      misaligned           a 16-byte vector load 4 bytes past alignment
      wrong                counts one too many: mismatch
      too_big              correct code, but __launch_bounds__(128) and launched with 256
                           threads a block: only the compiled kernel says it cannot run }}
extern "C" __global__ void {{#if strategy == "too_big"}}__launch_bounds__(128) {{/if}}count(const int *in, long long n, int thresh, const int *flag,
                                 unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    unsigned int mask = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, (unsigned int)__popc(mask));
{{#elif strategy == "block"}}
    __shared__ unsigned int hits;
    if (threadIdx.x == 0)
        hits = 0;
    __syncthreads();
    if (hit)
        atomicAdd(&hits, 1u);
    __syncthreads();
    if (threadIdx.x == 0 && hits)
        atomicAdd(out, hits);
{{#else}}
    if (hit)
        atomicAdd(out, 1u);
{{/if}}
{{#if strategy == "oob"}}
    /* An index far out of bounds, down to address 16: nothing maps the first page.
     * (A large positive index is not certain to fault: with HMM or ATS the GPU may
     * reach the host's memory.) */
    if (i == 0)
        *(volatile unsigned int *)(out - ((unsigned long long)out - 16) / sizeof *out) = 1;
{{#elif strategy == "spin"}}
    /* flag is 0 and nothing writes it: this never returns. */
    if (i == 0)
        while (*(volatile const int *)flag == 0) {
        }
{{#elif strategy == "trap"}}
    if (i == 0)
        __trap();
{{#elif strategy == "misaligned"}}
    /* in is 256-byte aligned, so in + 1 is 4 bytes past a 16-byte boundary. */
    if (i == 0) {
        int4 v = *reinterpret_cast<const int4 *>(in + 1);
        if (v.x + v.y + v.z + v.w == -1)
            atomicAdd(out, 1u);
    }
{{#elif strategy == "wrong"}}
    if (i == 0)
        atomicAdd(out, 1u);
{{/if}}
}
