/* resolve_internal: what resolve/resolve.c shares with resolve_params.c, the
 * reading of a kernel's parameter list; nothing outside resolve/ includes it. */
#ifndef KVX_RESOLVE_INTERNAL_H
#define KVX_RESOLVE_INTERNAL_H

#include "resolve.h"

/* A kernel a launch goes to: its entry point, emitted text and PTX (NULL
 * before compiling). */
typedef struct ResolveKernel {
    const char *name;
    const char *source;
    const char *ptx;
} ResolveKernel;

/* A scalar parameter's C type as the source spells it: which values it holds
 * unchanged. */
typedef struct ParamType {
    int known;          /* 0: a pointer, or a name kvx does not read (a typedef, a struct) */
    int is_float;
    int size;           /* bytes */
    int is_signed;
    int is_bool;
    const ElemType *half;   /* f16 or bf16 for a 16-bit float parameter, else NULL */
    char text[48];      /* "int thresh", for messages */
} ParamType;

typedef struct Params {
    PtxParam p[CASE_MAX_ARGS];
    int is_ptr[CASE_MAX_ARGS];
    ParamType ct[CASE_MAX_ARGS];    /* from the source, when it could be read */
    int n;
    int known_widths;   /* from the PTX; else from the source (count, pointers) */
} Params;

/* The parameters of k: from its PTX when it has one (widths, with the C types
 * read from the source where they can be), else from the source's __global__
 * declaration (count, pointers, C types).  0, or -1 with err at `at` when the
 * entry point is not found. */
int resolve_kernel_params(const ResolveKernel *k, const SrcPos *at, Params *ps, KvxError *err);

#endif
