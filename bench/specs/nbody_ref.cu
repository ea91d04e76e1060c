{{! nbody_ref.cu: the reference for nbody.yaml, one thread a body, the others
    in j order, 1 / sqrtf, nothing clever.  No placeholders. }}
extern "C" __global__ void nbody_ref(const float4 *pos, float4 *acc, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float4 p = pos[i];
    float ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; j++) {
        const float4 q = pos[j];
        const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        const float r2 = dx * dx + dy * dy + dz * dz + 1e-2f;
        const float inv = 1.0f / sqrtf(r2);
        const float s = q.w * inv * inv * inv;
        ax += dx * s, ay += dy * s, az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
