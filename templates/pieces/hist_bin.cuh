{{! hist_bin.cuh: bin_of(), the bin of one input value as histogram() in verify.h }}
{{! defines it: bin = (v - LO) / width for LO <= v <= HI, else none (-1).       }}
{{! Placeholders: E (input element type), LO, HI (value range), width (values   }}
{{!   per bin), full_range (every value of E is a bin: no range test).           }}
{{#if full_range}}
/* Every {{ctype(E)}} value is its own bin. */
__device__ __forceinline__ int bin_of(unsigned v)
{
    return (int)v;
}
{{#elif LO == 0 && width == 1}}
/* Values 0..{{HI}} are their own bins; larger values are not counted (-1). */
__device__ __forceinline__ int bin_of(unsigned v)
{
    return v <= {{HI}}u ? (int)v : -1;
}
{{#elif width == 1}}
/* Values {{LO}}..{{HI}} map to bins 0..{{HI - LO}}; others are not counted (-1). */
__device__ __forceinline__ int bin_of(unsigned v)
{
    const unsigned d = v - {{LO}}u;     /* values below {{LO}} wrap to large */
    return d <= {{HI - LO}}u ? (int)d : -1;
}
{{#else}}
/* Values {{LO}}..{{HI}}, {{width}} to a bin; others are not counted (-1). */
__device__ __forceinline__ int bin_of(unsigned v)
{
    const unsigned d = v - {{LO}}u;     /* values below {{LO}} wrap to large */
    return d <= {{HI - LO}}u ? (int)(d / {{width}}u) : -1;
}
{{/if}}
