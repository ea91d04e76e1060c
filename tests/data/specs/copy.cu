{{! copy.cu: out[i] = in[i] by `access` width, one access a thread.  Placeholders: access
      scalar, vec2, vec4   float, float2 and float4 accesses (n a multiple of 4)
      wrong     scalar, but the last element is never written: a planted mismatch }}
extern "C" __global__ void copy(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
{{#if access == "vec2"}}
    if (2 * i < n)
        reinterpret_cast<float2 *>(out)[i] = reinterpret_cast<const float2 *>(in)[i];
{{#elif access == "vec4"}}
    if (4 * i < n)
        reinterpret_cast<float4 *>(out)[i] = reinterpret_cast<const float4 *>(in)[i];
{{#elif access == "wrong"}}
    if (i < n - 1)
        out[i] = in[i];
{{#else}}
    if (i < n)
        out[i] = in[i];
{{/if}}
}
