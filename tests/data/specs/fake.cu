{{! fake.cu: for the fake-driver supervisor tests (tests/test_run_fake.c,
    test_run_scale.c), never run on a GPU.  Placeholders: strategy.  The
    variable kvx_fake_STRATEGY is an ELF symbol of the cubin that tells the
    fake driver (gpu/fake.h) how the launch ends: hang, crash, fault and
    mismatch do so; every other strategy is the host stand-in's fill. }}
__device__ unsigned int kvx_fake_{{strategy}};  /* 0; read so that it stays in the cubin */

extern "C" __global__ void fill(const int *in, long long n, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 7u + (unsigned int)(in[i] & 0) + kvx_fake_{{strategy}};
}
