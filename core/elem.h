/* elem: the element types kvx knows, one table for buffers, kernel arguments,
 * tolerances and template helpers (ctype(), sizeof()). */
#ifndef KVX_ELEM_H
#define KVX_ELEM_H

#include <stdint.h>

typedef enum {
    ET_I8, ET_U8, ET_I16, ET_U16, ET_I32, ET_U32, ET_I64, ET_U64,
    ET_F16, ET_BF16, ET_F32, ET_F64,
    ET_COUNT
} ElemTypeId;

typedef struct ElemType {
    ElemTypeId id;
    const char *name;   /* kvx name: "u32" */
    const char *ctype;  /* CUDA C++ spelling: "unsigned int" */
    int size;           /* bytes */
    int is_float;
    int is_signed;
    double rtol;        /* default relative tolerance of a float check */
} ElemType;

extern const ElemType elem_types[ET_COUNT];

/* NULL when name is not a type name. */
const ElemType *elem_type_find(const char *name);
/* Comma-separated list of names, for "expected one of" messages. */
const char *elem_type_names(void);

/* Host conversions for 16-bit floats (round to nearest even). */
uint16_t elem_f16_from_f32(float f);
float elem_f16_to_f32(uint16_t h);
uint16_t elem_bf16_from_f32(float f);
float elem_bf16_to_f32(uint16_t h);

/* Load element i of a typed array as double / int64 / uint64; store likewise. */
double elem_get_f64(const ElemType *t, const void *base, uint64_t i);
int64_t elem_get_i64(const ElemType *t, const void *base, uint64_t i);
uint64_t elem_get_u64(const ElemType *t, const void *base, uint64_t i);
void elem_set_f64(const ElemType *t, void *base, uint64_t i, double v);
void elem_set_i64(const ElemType *t, void *base, uint64_t i, int64_t v);

#endif
