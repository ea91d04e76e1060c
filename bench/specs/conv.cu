{{! conv.cu: out[y][x] = sum over i < 15, j < 15 of img[y + i][x + j] * filt[i][j],
    img of (4096 + 14) x (4096 + 14) f32 (the halo included), out 4096 x 4096.
    Placeholders:
      BX, BY    the block is BX x BY threads
      TX, TY    outputs a thread computes: TX along x (BX apart), TY along y (BY apart)
      SMEM      none: every input from global memory (__ldg); tile: the block's
                (BY TY + 14) x (BX TX + 14) inputs in shared memory first;
                tile_pad: the same with one column more (against bank conflicts) }}
#define W 4096
#define H 4096
#define FW 15
#define IW (W + FW - 1)

extern "C" __global__ void __launch_bounds__({{BX * BY}})
conv(const float *__restrict__ img, const float *__restrict__ filt, float *__restrict__ out)
{
    const int x0 = blockIdx.x * {{BX * TX}} + threadIdx.x, y0 = blockIdx.y * {{BY * TY}} + threadIdx.y;
    float acc[{{TY}}][{{TX}}];
#pragma unroll
    for (int ty = 0; ty < {{TY}}; ty++)
#pragma unroll
        for (int tx = 0; tx < {{TX}}; tx++)
            acc[ty][tx] = 0.0f;
{{#if SMEM == "none"}}
    for (int i = 0; i < FW; i++)
        for (int j = 0; j < FW; j++) {
            const float f = __ldg(filt + i * FW + j);
#pragma unroll
            for (int ty = 0; ty < {{TY}}; ty++)
#pragma unroll
                for (int tx = 0; tx < {{TX}}; tx++) {
                    const int x = x0 + tx * {{BX}}, y = y0 + ty * {{BY}};
                    if (x < W && y < H)
                        acc[ty][tx] += __ldg(img + (size_t)(y + i) * IW + x + j) * f;
                }
        }
{{#else}}
    __shared__ float t[{{BY * TY + FW - 1}}][{{BX * TX + FW - 1 + (SMEM == "tile_pad" ? 1 : 0)}}];
    const int bx = blockIdx.x * {{BX * TX}}, by = blockIdx.y * {{BY * TY}};
    for (int k = threadIdx.y * {{BX}} + threadIdx.x; k < {{(BY * TY + 14) * (BX * TX + 14)}}; k += {{BX * BY}}) {
        const int ly = k / {{BX * TX + 14}}, lx = k % {{BX * TX + 14}};
        const int gy = by + ly, gx = bx + lx;
        t[ly][lx] = gx < IW && gy < H + FW - 1 ? __ldg(img + (size_t)gy * IW + gx) : 0.0f;
    }
    __syncthreads();
    for (int i = 0; i < FW; i++)
        for (int j = 0; j < FW; j++) {
            const float f = __ldg(filt + i * FW + j);
#pragma unroll
            for (int ty = 0; ty < {{TY}}; ty++)
#pragma unroll
                for (int tx = 0; tx < {{TX}}; tx++)
                    acc[ty][tx] += t[threadIdx.y + ty * {{BY}} + i][threadIdx.x + tx * {{BX}} + j] * f;
        }
{{/if}}
#pragma unroll
    for (int ty = 0; ty < {{TY}}; ty++)
#pragma unroll
        for (int tx = 0; tx < {{TX}}; tx++) {
            const int x = x0 + tx * {{BX}}, y = y0 + ty * {{BY}};
            if (x < W && y < H)
                out[(size_t)y * W + x] = acc[ty][tx];
        }
}
