{{! stencil_ref.cu: the reference for stencil.yaml, one thread a cell, its
    sum in the variants' order (c + w + e + n + s), nothing clever.  No
    placeholders. }}
extern "C" __global__ void stencil_ref(const float *in, float *out, int side)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= side || y >= side)
        return;
    const size_t i = (size_t)y * side + x;
    if (x == 0 || y == 0 || x == side - 1 || y == side - 1)
        out[i] = in[i];
    else
        out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - side] + in[i + side]);
}
