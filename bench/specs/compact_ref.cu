{{! compact_ref.cu: the reference for compact.yaml: one atomicAdd per kept
    element, the compaction a reader checks at a glance.  Its order is its own,
    as every variant's: the spec compares the kept elements as a multiset.  In
    a template of its own, so it runs once per workload point.  No
    placeholders. }}
extern "C" __global__ void compact_ref(const int *in, long long n, int thresh, int *out, unsigned int *count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        out[atomicAdd(count, 1u)] = in[i];
}
