{{! h16_vec.cuh: sm_90 vector reductions of 16-bit floats, PER lanes per }}
{{! instruction.  Placeholders: per (let: 2, 4 or 8), elem (f16 or bf16, also }}
{{! the PTX type suffix).  Needs T declared by the including template. }}
/* CUDA C++ has no vector atomicAdd for 16-bit floats, but PTX ISA 8.1 has
 * red.global.add.noftz.v{2,4,8}.{f16,bf16} on sm_90: one instruction adds
 * {{per}} adjacent elements.  The address must be aligned to the vector's size
 * ({{per * 2}} bytes) and lie in global memory.  The values are loaded as 32-bit
 * words and split into 16-bit lanes inside the asm block (lane 0 = low half). */
__device__ __forceinline__ void h16_red_v{{per}}(T *dst, const T *src)
{
    const size_t g = __cvta_generic_to_global(dst);
{{#if per == 2}}
    const unsigned a = *reinterpret_cast<const unsigned *>(src);
    asm volatile("{\n\t"
                 ".reg .b16 l0, l1;\n\t"
                 "mov.b32 {l0, l1}, %1;\n\t"
                 "red.global.add.noftz.v2.{{elem}} [%0], {l0, l1};\n\t"
                 "}"
                 :: "l"(g), "r"(a) : "memory");
{{#elif per == 4}}
    const uint2 a = *reinterpret_cast<const uint2 *>(src);
    asm volatile("{\n\t"
                 ".reg .b16 l0, l1, l2, l3;\n\t"
                 "mov.b32 {l0, l1}, %1;\n\t"
                 "mov.b32 {l2, l3}, %2;\n\t"
                 "red.global.add.noftz.v4.{{elem}} [%0], {l0, l1, l2, l3};\n\t"
                 "}"
                 :: "l"(g), "r"(a.x), "r"(a.y) : "memory");
{{#else}}
    const uint4 a = *reinterpret_cast<const uint4 *>(src);
    asm volatile("{\n\t"
                 ".reg .b16 l0, l1, l2, l3, l4, l5, l6, l7;\n\t"
                 "mov.b32 {l0, l1}, %1;\n\t"
                 "mov.b32 {l2, l3}, %2;\n\t"
                 "mov.b32 {l4, l5}, %3;\n\t"
                 "mov.b32 {l6, l7}, %4;\n\t"
                 "red.global.add.noftz.v8.{{elem}} [%0], {l0, l1, l2, l3, l4, l5, l6, l7};\n\t"
                 "}"
                 :: "l"(g), "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w) : "memory");
{{/if}}
}
