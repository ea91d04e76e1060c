{{! half_atomics.cu (specs/half_atomics.yaml) }}
{{! Placeholders: elem (code axis: element type, via ctype(elem)), packing }}
{{! (code axis), per (let: values per atomic instruction), PAIR and ZERO (set: }}
{{! the 32-bit pair type and the zero of elem). }}
/* half_atomics: scatter-add n values into a table of rows x w elements.
 *
 * Value e (0 <= e < n) belongs to update u = e / w and column c = e % w, and is
 * added to table[idx[u] * w + c]: one address (every idx 0), a spread of rows,
 * or an embedding-backward table with duplicate rows, as the spec chooses.
 * Thread t adds {{per}} consecutive value(s) from e = t * {{per}} with one atomic
 * instruction; they lie in one row because w is a multiple of {{per}}.  table may
 * start one element past an aligned boundary (the spec's offset axis): the pair
 * and vector forms need it aligned to their width, scalar and pairing do not.
 *
 * Entry: half_atomics(vals[n], idx[n / w], table[len], natom = n / {{per}}, w, len). */
{{#if elem == "f16"}}
#include <cuda_fp16.h>
{{#elif elem == "bf16"}}
#include <cuda_bf16.h>
{{/if}}

typedef {{ctype(elem)}} T;
{{#if packing == "pair" || packing == "pairing"}}
typedef {{PAIR}} T2;
{{/if}}
{{#if packing == "pairing"}}

{{#include "pieces/h16_pairing.cuh"}}
{{#elif packing != "scalar" && packing != "pair" && elem != "f32"}}

{{#include "pieces/h16_vec.cuh"}}
{{/if}}

extern "C" __global__ void half_atomics(const T *__restrict__ vals, const int *__restrict__ idx,
                                        T *table, unsigned natom, unsigned w, unsigned len)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= natom)
        return;
    const unsigned e = t * {{per}}u;
    const unsigned off = (unsigned)idx[e / w] * w + e % w;
{{#if packing == "scalar"}}
    atomicAdd(table + off, vals[e]);
{{#elif packing == "pair"}}
    /* Two values, one 32-bit atomic; the pair is atomic per lane only. */
    T2 v;
    v.x = vals[e];
    v.y = vals[e + 1];
    atomicAdd(reinterpret_cast<T2 *>(table + off), v);
{{#elif packing == "pairing"}}
    h16_add_paired(table, off, len, vals[e]);
{{#elif elem == "f32" && packing == "vec2"}}
    /* sm_90: atomicAdd(float2 *), one 8-byte vector reduction. */
    atomicAdd(reinterpret_cast<float2 *>(table + off), make_float2(vals[e], vals[e + 1]));
{{#elif elem == "f32"}}
    /* sm_90: atomicAdd(float4 *), one 16-byte vector reduction. */
    atomicAdd(reinterpret_cast<float4 *>(table + off),
              make_float4(vals[e], vals[e + 1], vals[e + 2], vals[e + 3]));
{{#else}}
    h16_red_v{{per}}(table + off, vals + e);
{{/if}}
}
