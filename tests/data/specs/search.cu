{{! search.cu: a small tuning space for the search tests on the fake device
    (tests/test_run_search.c), never run on a GPU.  Placeholders: strategy,
    tile, unroll, vec: each changes the source, so each is a code axis.  The
    variable kvx_fake_STRATEGY tells the fake driver (gpu/fake.h) how the
    launch ends: mismatch writes a wrong value, base the stand-in's fill. }}
__device__ unsigned int kvx_fake_{{strategy}};  /* 0; read so that it stays in the cubin */

#define TILE {{tile}}
#define UNROLL {{unroll}}
#define VEC {{vec}}

extern "C" __global__ void fill(const int *in, long long n, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 7u + (unsigned int)(in[i] & 0) * (TILE + UNROLL + VEC) + kvx_fake_{{strategy}};
}
