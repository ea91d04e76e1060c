{{! nbody.cu: acc_i = sum over j of m_j d / (|d|^2 + eps)^(3/2), d = p_j - p_i,
    bodies as float4 (x, y, z, mass); acc's w is 0.  Placeholders:
      BLOCK     threads a block
      BPT       bodies a thread accumulates (BLOCK apart)
      SMEM      none: every other body read from global memory; tile: a block's
                worth of bodies staged in shared memory at a time
      UNROLL    how far the loop over the other bodies is unrolled
      RSQRT     rsqrtf, or div_sqrt: 1.0f / sqrtf }}
{{#if RSQRT == "rsqrtf"}}
#define INV_SQRT(x) rsqrtf(x)
{{#else}}
#define INV_SQRT(x) (1.0f / sqrtf(x))
{{/if}}

__device__ __forceinline__ void interact(float4 p, float4 q, float3 &a)
{
    const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    const float r2 = dx * dx + dy * dy + dz * dz + 1e-2f;
    const float inv = INV_SQRT(r2);
    const float s = q.w * inv * inv * inv;
    a.x += dx * s, a.y += dy * s, a.z += dz * s;
}

extern "C" __global__ void __launch_bounds__({{BLOCK}})
nbody(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n)
{
    const int i0 = blockIdx.x * {{BLOCK * BPT}} + threadIdx.x;
    float4 p[{{BPT}}];
    float3 a[{{BPT}}];
#pragma unroll
    for (int b = 0; b < {{BPT}}; b++) {
        const int i = i0 + b * {{BLOCK}};
        p[b] = i < n ? pos[i] : make_float4(0, 0, 0, 0);
        a[b] = make_float3(0, 0, 0);
    }
{{#if SMEM == "tile"}}
    __shared__ float4 t[{{BLOCK}}];
    for (int base = 0; base < n; base += {{BLOCK}}) {
        __syncthreads();
        t[threadIdx.x] = base + threadIdx.x < n ? pos[base + threadIdx.x] : make_float4(0, 0, 0, 0);
        __syncthreads();
        const int m = n - base < {{BLOCK}} ? n - base : {{BLOCK}};
#pragma unroll {{UNROLL}}
        for (int j = 0; j < m; j++) {
            const float4 q = t[j];
#pragma unroll
            for (int b = 0; b < {{BPT}}; b++)
                interact(p[b], q, a[b]);
        }
    }
{{#else}}
#pragma unroll {{UNROLL}}
    for (int j = 0; j < n; j++) {
        const float4 q = __ldg(pos + j);
#pragma unroll
        for (int b = 0; b < {{BPT}}; b++)
            interact(p[b], q, a[b]);
    }
{{/if}}
#pragma unroll
    for (int b = 0; b < {{BPT}}; b++) {
        const int i = i0 + b * {{BLOCK}};
        if (i < n)
            acc[i] = make_float4(a[b].x, a[b].y, a[b].z, 0.0f);
    }
}
