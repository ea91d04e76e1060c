{{! copy.cu: out[i] = in[i] by `access` width into an output `misalign`
    elements past its buffer's start, the copy a new user checks with `out: in`.
    Placeholders:
      access  scalar, vec2, vec4   float, float2 and float4 accesses, one a thread
              vec4_loop            float4 accesses on a persistent grid (grid-stride loop) }}
extern "C" __global__ void copy(const float *__restrict__ in, float *__restrict__ out, int n)
{
{{#if access == "vec2"}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i < n)
        reinterpret_cast<float2 *>(out)[i] = reinterpret_cast<const float2 *>(in)[i];
{{#elif access == "vec4"}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i < n)
        reinterpret_cast<float4 *>(out)[i] = reinterpret_cast<const float4 *>(in)[i];
{{#elif access == "vec4_loop"}}
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; 4 * i < n; i += gridDim.x * blockDim.x)
        reinterpret_cast<float4 *>(out)[i] = reinterpret_cast<const float4 *>(in)[i];
{{#else}}
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
{{/if}}
}
