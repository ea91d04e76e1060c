{{! dedisp.cu: out[dm][t] = sum over ch < 1024 of in[ch][t + dm * ch / 64],
    256 measures x 8192 samples, in's rows nin samples long.  Placeholders:
      BX, BY    the block is BX threads along the samples x BY along the measures
      TX, TY    samples (BX apart) and measures (BY apart) a thread computes
      UNROLL    how far the channel loop is unrolled
      LDG       plain loads, or __ldg (the read-only path) }}
{{#if LDG == "ldg"}}
#define LOAD(p) __ldg(p)
{{#else}}
#define LOAD(p) (*(p))
{{/if}}
#define NDM 256
#define NCH 1024
#define NT 8192

extern "C" __global__ void __launch_bounds__({{BX * BY}})
dedisp(const float *__restrict__ in, float *__restrict__ out, int nin)
{
    const int t0 = blockIdx.x * {{BX * TX}} + threadIdx.x, d0 = blockIdx.y * {{BY * TY}} + threadIdx.y;
    float acc[{{TY}}][{{TX}}];
#pragma unroll
    for (int y = 0; y < {{TY}}; y++)
#pragma unroll
        for (int x = 0; x < {{TX}}; x++)
            acc[y][x] = 0.0f;
#pragma unroll {{UNROLL}}
    for (int ch = 0; ch < NCH; ch++) {
        const float *row = in + (size_t)ch * nin;
#pragma unroll
        for (int y = 0; y < {{TY}}; y++) {
            const int dm = d0 + y * {{BY}};
            const int shift = dm * ch / 64;
#pragma unroll
            for (int x = 0; x < {{TX}}; x++) {
                const int t = t0 + x * {{BX}};
                if (t < NT && dm < NDM)
                    acc[y][x] += LOAD(row + t + shift);
            }
        }
    }
#pragma unroll
    for (int y = 0; y < {{TY}}; y++)
#pragma unroll
        for (int x = 0; x < {{TX}}; x++) {
            const int t = t0 + x * {{BX}}, dm = d0 + y * {{BY}};
            if (t < NT && dm < NDM)
                out[(size_t)dm * NT + t] = acc[y][x];
        }
}
