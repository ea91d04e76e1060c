{{! transpose_ref.cu: the reference for transpose.yaml, one thread an element
    and nothing clever: a loop body a reader checks at a glance.  No
    placeholders. }}
extern "C" __global__ void transpose_ref(const float *in, float *out, int rows, int cols)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
