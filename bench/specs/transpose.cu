{{! transpose.cu: out = in^T for a rows x cols f32 matrix, the shape a new user
    writes first.  Placeholders:
      strategy  naive       one thread an element: coalesced reads, strided writes
                tiled       a TILE x TILE tile through shared memory, both sides coalesced
                tiled_pad   the same with one column of padding (no bank conflicts)
      TILE      the tile's side (16 or 32); a block is TILE x ROWS threads
      ROWS      rows of threads in a block; each thread moves TILE / ROWS elements }}
extern "C" __global__ void transpose(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
{{#if strategy == "naive"}}
    const int x = blockIdx.x * {{TILE}} + threadIdx.x;
    for (int y = blockIdx.y * {{TILE}} + threadIdx.y; y < blockIdx.y * {{TILE}} + {{TILE}}; y += {{ROWS}})
        if (x < cols && y < rows)
            out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
{{#else}}
{{#if strategy == "tiled_pad"}}
    __shared__ float tile[{{TILE}}][{{TILE}} + 1];
{{#else}}
    __shared__ float tile[{{TILE}}][{{TILE}}];
{{/if}}
    int x = blockIdx.x * {{TILE}} + threadIdx.x;
    int y = blockIdx.y * {{TILE}} + threadIdx.y;
    for (int j = 0; j < {{TILE}}; j += {{ROWS}})
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * {{TILE}} + threadIdx.x;
    y = blockIdx.x * {{TILE}} + threadIdx.y;
    for (int j = 0; j < {{TILE}}; j += {{ROWS}})
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
{{/if}}
}
