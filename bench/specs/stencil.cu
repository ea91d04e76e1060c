{{! stencil.cu: one Jacobi step of a 5-point stencil, out = 0.2 (c + w + e + n + s)
    inside, out = in on the boundary, over a side x side f32 grid.  Placeholders:
      BX, BY    the block is BX x BY threads
      RPT       rows each thread computes, one below the other
      UNROLL    how far the rows' loop is unrolled (#pragma unroll)
      SMEM      none: every load from global memory; tile: the block's
                (BY RPT + 2) x (BX + 2) cells, halo included, in shared memory first
      LDG       plain loads, or __ldg (the read-only path)
      MINB      the blocks an SM must hold (__launch_bounds__' second argument) }}
{{#if LDG == "ldg"}}
#define LOAD(p) __ldg(p)
{{#else}}
#define LOAD(p) (*(p))
{{/if}}

extern "C" __global__ void __launch_bounds__({{BX * BY}}, {{MINB}})
stencil(const float *__restrict__ in, float *__restrict__ out, int side)
{
    const int x = blockIdx.x * {{BX}} + threadIdx.x;
{{#if SMEM == "tile"}}
    __shared__ float t[{{BY * RPT + 2}}][{{BX + 2}}];
    const int bx = blockIdx.x * {{BX}}, by = blockIdx.y * {{BY * RPT}};
    for (int k = threadIdx.y * {{BX}} + threadIdx.x; k < {{(BY * RPT + 2) * (BX + 2)}}; k += {{BX * BY}}) {
        const int ty = k / {{BX + 2}}, tx = k % {{BX + 2}};
        const int gy = by + ty - 1, gx = bx + tx - 1;
        t[ty][tx] = gx >= 0 && gx < side && gy >= 0 && gy < side ? LOAD(in + (size_t)gy * side + gx) : 0.0f;
    }
    __syncthreads();
#pragma unroll {{UNROLL}}
    for (int r = 0; r < {{RPT}}; r++) {
        const int ly = threadIdx.y * {{RPT}} + r + 1, lx = threadIdx.x + 1;
        const int y = by + ly - 1;
        if (x >= side || y >= side)
            continue;
        const size_t i = (size_t)y * side + x;
        if (x == 0 || y == 0 || x == side - 1 || y == side - 1)
            out[i] = t[ly][lx];
        else
            out[i] = 0.2f * (t[ly][lx] + t[ly][lx - 1] + t[ly][lx + 1] + t[ly - 1][lx] + t[ly + 1][lx]);
    }
{{#else}}
    const int y0 = (blockIdx.y * {{BY}} + threadIdx.y) * {{RPT}};
#pragma unroll {{UNROLL}}
    for (int r = 0; r < {{RPT}}; r++) {
        const int y = y0 + r;
        if (x >= side || y >= side)
            continue;
        const size_t i = (size_t)y * side + x;
        if (x == 0 || y == 0 || x == side - 1 || y == side - 1)
            out[i] = LOAD(in + i);
        else
            out[i] = 0.2f * (LOAD(in + i) + LOAD(in + i - 1) + LOAD(in + i + 1) + LOAD(in + i - side) +
                             LOAD(in + i + side));
    }
{{/if}}
}
