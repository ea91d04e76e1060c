{{! count_by_ref.cu: a plain reference kernel for the contention spec: one
    thread per element, one global atomic per hit, at the counter the variant's
    address mode names.  Obviously correct, and slow where hits contend.
    Placeholders: T (the counter type), address (const: out[0]; runtime:
    out[addr[i]]) }}
typedef {{ctype(T)}} Count;

extern "C" __global__ void count_ref(const int *in, const unsigned short *addr, int n, int thresh,
                                     Count *out)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || in[i] >= thresh)
        return;
{{#if address == "runtime"}}
    atomicAdd(&out[addr[i]], Count(1));
{{#else}}
    (void)addr;
    atomicAdd(&out[0], Count(1));
{{/if}}
}
