/* refs: the catalogue of host references a `check:` may name: each one's
 * signature, the kind of every argument, the size of its result and what it
 * means.  One table serves three stages, so that they cannot disagree:
 *
 *  - the spec loader checks a call's arity and argument kinds (a buffer where a
 *    buffer is meant, a string op from the allowed set) from the expression
 *    alone (refs_check_call);
 *  - `kvx plan`, `compile` and `run` check every point's call against the
 *    buffers' types and counts and the output it is compared with
 *    (refs_check_args), before anything reaches a GPU;
 *  - host/verify.c computes the reference with the same names and runs the
 *    same point check first; docs/spec.md documents every row (test_verify
 *    fails when a row is missing there).
 *
 * What only the data can tell (a key outside its range) is found when the
 * reference is computed. */
#ifndef KVX_REFS_H
#define KVX_REFS_H

#include "expr.h"
#include "elem.h"

/* One argument of a reference call, evaluated at a case's point. */
typedef struct RefArg {
    int is_buf;
    const ElemType *t;      /* buffers */
    const void *data;       /* host copy of the buffer's input (NULL while validating) */
    uint64_t count;
    Value v;                /* scalars and op strings */
} RefArg;

typedef enum {
    REFP_BUF,       /* a buffer of any element type */
    REFP_INT_BUF,   /* a buffer of an integer type (keys, indices) */
    REFP_NUM,       /* a number */
    REFP_INT,       /* an integer */
    REFP_COUNT,     /* an integer >= 1 */
    REFP_OP         /* a string from `ops` */
} RefParamKind;

typedef struct RefParam {
    const char *name;
    RefParamKind kind;
    int feeds;              /* buffer whose values go into the result: an integer
                               output takes integer inputs only */
    const char *ops;        /* REFP_OP: the accepted strings, space-separated */
} RefParam;

#define REFS_MAX_PARAMS 5

typedef struct RefSig {
    const char *name;
    int nparams;
    RefParam p[REFS_MAX_PARAMS];
    int size_of[2];         /* result elements: the product of these arguments
                               (-1: none), 1 when both are -1 */
    /* Checks between arguments and the output beyond kinds and size: NULL, or
     * 0 / -1 with msg written. */
    int (*extra)(const RefArg *a, const ElemType *out, char *msg, size_t n);
    const char *result;     /* the result's shape, for the docs: "1", "k", "rows * w" */
    const char *types;      /* element types, for the docs */
    const char *meaning;
} RefSig;

extern const RefSig refs_table[];
extern const int refs_count;

/* The entry of name, NULL when it is no reference. */
const RefSig *refs_find(const char *name);

/* "index_add(idx: integer buffer, vals: buffer, rows: integer >= 1, w: integer >= 1)" */
void refs_signature(const RefSig *r, StrBuf *out);

/* Check a call of a reference in a spec: arity and, from the expression
 * alone, which arguments are buffers (is_buffer(ctx, name) says whether an
 * identifier names one) and string ops that are literals.  0, or -1 with err
 * at the offending argument, naming the expected signature. */
int refs_check_call(const Expr *call, int (*is_buffer)(void *ctx, const char *name), void *ctx,
                    KvxError *err);

/* Check a call's arguments at one point against the output it is compared
 * with: kinds, element types, string ops, counts between arguments and the
 * result's size against out_count.  0, or -1 with err ("SIGNATURE: message",
 * no position: the caller adds the check's). */
int refs_check_args(const RefSig *r, const RefArg *a, int nargs, const ElemType *out,
                    uint64_t out_count, KvxError *err);

#endif
