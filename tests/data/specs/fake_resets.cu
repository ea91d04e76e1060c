{{! fake_resets.cu: counters that start from a non-zero init, for the reset
    test of tests/test_fake_driver.c (fake_resets.yaml); the fake driver's
    stand-ins (count, count_u16) read the counter before they add, as these
    kernels do.  Placeholders: T (the counter's type). }}
{{#if T == "u16"}}
/* No 16-bit atomicAdd: one thread counts all n. */
extern "C" __global__ void count_u16(const int *in, long long n, int thresh, unsigned short *out)
{
    unsigned short hits = 0;
    for (long long i = 0; i < n; i++)
        hits += in[i] < thresh;
    *out += hits;
}
{{#else}}
extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        atomicAdd(out, ({{ctype(T)}})1);
}
{{/if}}
