// inspect test kernel: vector float4 atomic add (sm_90+, global memory only).
// Expected: red.global.v4.f32.add / atom.global.v4.f32.add in PTX and a .128
// vector REDG/ATOMG in SASS.  Below sm_90 the kernel falls back to four
// scalar float adds so that every arch compiles.
extern "C" __global__ void vec_f32x4(const float4 *in, int n, float4 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
#if __CUDA_ARCH__ >= 900
    atomicAdd(&out[i & 63], in[i]);
#else
    float4 v = in[i];
    float *o = (float *)&out[i & 63];
    atomicAdd(o + 0, v.x);
    atomicAdd(o + 1, v.y);
    atomicAdd(o + 2, v.z);
    atomicAdd(o + 3, v.w);
#endif
}
