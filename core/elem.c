/* elem: the element-type table, 16-bit float conversions and typed access.
 *
 * The table is indexed by ElemTypeId (elem_types[t].id == t); a
 * _Static_assert keeps it in step with the enum.  The 16-bit conversions are
 * bit-exact IEEE round-to-nearest-even, so host references and input
 * generators agree with the device's __float2half_rn / __float2bfloat16_rn. */
#include "elem.h"

#include <math.h>
#include <string.h>

const ElemType elem_types[ET_COUNT] = {
    /* id       name    CUDA spelling          size float signed rtol */
    {ET_I8,   "i8",   "signed char",          1, 0, 1, 0},
    {ET_U8,   "u8",   "unsigned char",        1, 0, 0, 0},
    {ET_I16,  "i16",  "short",                2, 0, 1, 0},
    {ET_U16,  "u16",  "unsigned short",       2, 0, 0, 0},
    {ET_I32,  "i32",  "int",                  4, 0, 1, 0},
    {ET_U32,  "u32",  "unsigned int",         4, 0, 0, 0},
    {ET_I64,  "i64",  "long long",            8, 0, 1, 0},
    {ET_U64,  "u64",  "unsigned long long",   8, 0, 0, 0},
    /* 16-bit tolerances: a few ulps of an 11-bit (f16) / 8-bit (bf16) mantissa
     * after the accumulation error of a sum; f32 and f64 likewise. */
    {ET_F16,  "f16",  "__half",               2, 1, 1, 1e-2},
    {ET_BF16, "bf16", "__nv_bfloat16",        2, 1, 1, 2e-2},
    {ET_F32,  "f32",  "float",                4, 1, 1, 1e-5},
    {ET_F64,  "f64",  "double",               8, 1, 1, 1e-12},
};
_Static_assert(sizeof elem_types / sizeof elem_types[0] == ET_COUNT,
               "elem_types must have one row per ElemTypeId");

/* Kept as a literal so that it needs no lazy initialisation (callers run on
 * several threads); test_types checks it against the table. */
static const char type_names[] = "i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64";

const ElemType *elem_type_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < ET_COUNT; i++)
        if (strcmp(elem_types[i].name, name) == 0)
            return &elem_types[i];
    return NULL;
}

const char *elem_type_names(void) { return type_names; }

/* ---- 16-bit floats -------------------------------------------------------- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Shift m right by s (1..31), rounding to nearest, ties to even. */
static uint32_t shift_rne(uint32_t m, int s)
{
    uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return q;
}

uint16_t elem_f16_from_f32(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000) /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
    if (ax >= 0x477ff000) /* >= 65520, halfway past 65504: rounds to inf */
        return (uint16_t)(sign | 0x7c00);
    if (ax >= 0x38800000) /* normal half: rebias 127 -> 15, round 13 bits */
        return (uint16_t)(sign | shift_rne(ax - 0x38000000, 13));
    if (ax <= 0x33000000) /* <= 2^-25: ties to even give zero */
        return sign;
    /* Subnormal half h * 2^-24 from m * 2^(e-150): h = m >> (126 - e);
     * a carry into 0x400 is exactly the smallest normal. */
    int e = (int)(ax >> 23);
    uint32_t m = (ax & 0x7fffff) | 0x800000;
    return (uint16_t)(sign | shift_rne(m, 126 - e));
}

float elem_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return bits_f32(sign | 0x7f800000 | (m << 13));
    if (e != 0)
        return bits_f32(sign | ((e + 112) << 23) | (m << 13));
    if (m == 0)
        return bits_f32(sign);
    /* Subnormal: normalise into a float exponent. */
    e = 113;
    while (!(m & 0x400)) {
        m <<= 1;
        e--;
    }
    return bits_f32(sign | (e << 23) | ((m & 0x3ff) << 13));
}

uint16_t elem_bf16_from_f32(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x0040); /* NaN stays NaN, quiet */
    /* bf16 is the top half of a float: round the low 16 bits away, ties to
     * even; a carry rolls into the exponent and overflows to inf correctly. */
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float elem_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* double -> float rounding to odd: a second rounding of the result to a format
 * at least two bits narrower (f16, bf16) then equals one direct rounding, so
 * elem_set_f64 has no double-rounding error. */
static float f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (isfinite(f) && (double)f != d && !(f32_bits(f) & 1))
        f = nextafterf(f, d > (double)f ? INFINITY : -INFINITY);
    return f;
}

/* ---- scalar conversions ---------------------------------------------------- */

/* double -> int64 toward zero, saturating; NaN -> 0. */
static int64_t f64_to_i64(double d)
{
    if (d != d)
        return 0;
    if (d >= 9223372036854775808.0)
        return INT64_MAX;
    if (d < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* double -> uint64 toward zero, saturating at UINT64_MAX; negative values wrap
 * like the int64 they truncate to; NaN -> 0. */
static uint64_t f64_to_u64(double d)
{
    if (d != d)
        return 0;
    if (d < 0)
        return (uint64_t)f64_to_i64(d);
    if (d >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)d;
}

/* int64 -> float rounding to odd (see f64_to_f32_odd); (double)v would round
 * once already above 2^53. */
static float i64_to_f32_odd(int64_t v)
{
    float f = (float)v;
    int up = 0; /* whether v lies above f; f == 2^63 lies above every v */
    if (f >= -9223372036854775808.0f && f < 9223372036854775808.0f) {
        int64_t g = (int64_t)f;
        if (g == v)
            return f;
        up = v > g;
    }
    if (!(f32_bits(f) & 1))
        f = nextafterf(f, up ? INFINITY : -INFINITY);
    return f;
}

/* ---- typed access --------------------------------------------------------- */

double elem_get_f64(const ElemType *t, const void *base, uint64_t i)
{
    if (!t->is_float)
        return t->is_signed ? (double)elem_get_i64(t, base, i)
                            : (double)elem_get_u64(t, base, i);
    switch (t->id) {
    case ET_F16: { uint16_t h; memcpy(&h, (const char *)base + i * 2, 2); return elem_f16_to_f32(h); }
    case ET_BF16: { uint16_t h; memcpy(&h, (const char *)base + i * 2, 2); return elem_bf16_to_f32(h); }
    case ET_F32: { float f; memcpy(&f, (const char *)base + i * 4, 4); return f; }
    default: { double d; memcpy(&d, (const char *)base + i * 8, 8); return d; }
    }
}

/* Integers: sign- or zero-extended by the type; floats truncated toward zero
 * (saturating, NaN as 0). */
int64_t elem_get_i64(const ElemType *t, const void *base, uint64_t i)
{
    const char *p = (const char *)base + i * (uint64_t)t->size;
    switch (t->id) {
    case ET_I8: { int8_t v; memcpy(&v, p, 1); return v; }
    case ET_U8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case ET_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ET_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ET_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ET_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case ET_I64: case ET_U64: { int64_t v; memcpy(&v, p, 8); return v; }
    default: return f64_to_i64(elem_get_f64(t, base, i));
    }
}

/* Integers as their two's complement bits widened to 64 (an i32 of -1 is
 * UINT64_MAX); floats as f64_to_u64 converts them. */
uint64_t elem_get_u64(const ElemType *t, const void *base, uint64_t i)
{
    if (t->is_float)
        return f64_to_u64(elem_get_f64(t, base, i));
    if (t->id == ET_U64) {
        uint64_t v;
        memcpy(&v, (const char *)base + i * 8, 8);
        return v;
    }
    return (uint64_t)elem_get_i64(t, base, i);
}

/* Floats rounded to nearest even; integers truncated toward zero, saturating
 * at the 64-bit range and then wrapped to the element's width. */
void elem_set_f64(const ElemType *t, void *base, uint64_t i, double v)
{
    char *p = (char *)base + i * (uint64_t)t->size;
    switch (t->id) {
    case ET_F16: { uint16_t h = elem_f16_from_f32(f64_to_f32_odd(v)); memcpy(p, &h, 2); return; }
    case ET_BF16: { uint16_t h = elem_bf16_from_f32(f64_to_f32_odd(v)); memcpy(p, &h, 2); return; }
    case ET_F32: { float f = (float)v; memcpy(p, &f, 4); return; }
    case ET_F64: memcpy(p, &v, 8); return;
    case ET_U64: { uint64_t u = f64_to_u64(v); memcpy(p, &u, 8); return; }
    default: elem_set_i64(t, base, i, f64_to_i64(v)); return;
    }
}

/* Integers wrap to the element's width (two's complement), as a device store
 * of the low bits would; floats are rounded from the exact integer. */
void elem_set_i64(const ElemType *t, void *base, uint64_t i, int64_t v)
{
    char *p = (char *)base + i * (uint64_t)t->size;
    uint64_t u = (uint64_t)v;
    switch (t->size) {
    case 1: if (!t->is_float) { uint8_t b = (uint8_t)u; memcpy(p, &b, 1); return; } break;
    case 2: if (!t->is_float) { uint16_t b = (uint16_t)u; memcpy(p, &b, 2); return; } break;
    case 4: if (!t->is_float) { uint32_t b = (uint32_t)u; memcpy(p, &b, 4); return; } break;
    default: if (!t->is_float) { memcpy(p, &u, 8); return; } break;
    }
    switch (t->id) {
    case ET_F16: { uint16_t h = elem_f16_from_f32(i64_to_f32_odd(v)); memcpy(p, &h, 2); return; }
    case ET_BF16: { uint16_t h = elem_bf16_from_f32(i64_to_f32_odd(v)); memcpy(p, &h, 2); return; }
    case ET_F32: { float f = (float)v; memcpy(p, &f, 4); return; }
    default: { double d = (double)v; memcpy(p, &d, 8); return; }
    }
}
