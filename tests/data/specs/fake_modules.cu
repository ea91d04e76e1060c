{{! fake_modules.cu: a cubin per value of mod, for the module cache test of
    tests/test_fake_driver.c, which writes the spec (more cubins than a
    worker keeps, WORKER_MAX_MODULES).  kvx_module_MOD makes each cubin an
    image of its own (the fake driver knows a module by its image's hash);
    it is 0, and read so that it stays in the cubin.  Placeholders: mod. }}
__device__ unsigned int kvx_module_{{mod}};

extern "C" __global__ void count(const int *in, long long n, int thresh, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        atomicAdd(out, 1u + kvx_module_{{mod}});
}
