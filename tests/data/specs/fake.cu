{{! fake.cu: for the fake-device supervisor test (tests/test_run_fake.c), never
    run on a GPU.  Placeholders: strategy.  The marker comment below tells the
    fake worker (gpu/fake.h) how the case ends: hang, crash, fault and
    mismatch do so; base and alt are ok.  The kernel only has to compile. }}
// kvx-fake: {{strategy}}
extern "C" __global__ void fill(const int *in, long long n, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 7u + (unsigned int)(in[i] & 0);
}
