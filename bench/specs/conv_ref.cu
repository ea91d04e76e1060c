{{! conv_ref.cu: the reference for conv.yaml, one thread an output, the
    filter's taps summed in the variants' order (i, then j), nothing clever.
    No placeholders. }}
extern "C" __global__ void conv_ref(const float *img, const float *filt, float *out)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 4096 || y >= 4096)
        return;
    float acc = 0.0f;
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 15; j++)
            acc += img[(size_t)(y + i) * (4096 + 14) + x + j] * filt[i * 15 + j];
    out[(size_t)y * 4096 + x] = acc;
}
