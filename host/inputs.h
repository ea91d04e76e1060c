/* inputs: deterministic host-side generation of buffer contents.
 *
 * Every element is a pure function of (seed, kind, parameters, index): a
 * counter-based generator (splitmix64 of seed ^ stream and the index) rather than
 * a sequential one, so generation splits across threads and gives the same bytes
 * whatever the thread count, and a variant that reads element i sees the same
 * value on every machine.  2^28 four-byte elements take well under a second on
 * a 16-core host. */
#ifndef KVX_INPUTS_H
#define KVX_INPUTS_H

#include "gen/spec.h"

/* An initialiser with its expressions evaluated at one point. */
typedef struct InitParams {
    InitKind kind;
    double value, lo, hi, exponent, fraction;
    int64_t length;
    uint64_t seed;      /* run seed mixed with the buffer's name */
    /* Integers the spec wrote exactly: a double carries only 53 bits, and an
     * all-ones u64 or an i64 extreme must reach the buffer unrounded.  Bit 0:
     * ivalue holds value exactly; bit 1: ilo; bit 2: ihi. */
    unsigned exact;
    int64_t ivalue, ilo, ihi;
} InitParams;

/* The parameter of an initialiser that inputs_check finds wrong. */
typedef enum {
    INPUTS_AT_KIND, INPUTS_AT_VALUE, INPUTS_AT_LO, INPUTS_AT_HI, INPUTS_AT_EXPONENT,
    INPUTS_AT_FRACTION, INPUTS_AT_LENGTH,
} InputsAt;

/* Whether p makes sense for type t: lo <= hi (as the exact integers too, where
 * the spec wrote them), finite bounds, a zipf exponent > 0 over at most 2^53
 * ranks, a hot fraction in [0, 1], a run length >= 1.  0, or -1 with err (no
 * position) and *at naming the parameter.  The one check of both resolve (per
 * point, with the spec position) and inputs_fill (in the worker), so the two
 * cannot disagree. */
int inputs_check(const ElemType *t, const InitParams *p, InputsAt *at, KvxError *err);

/* Fill count elements of type t at host.  Integer kinds round and saturate to
 * the type's range; float kinds round to the type (f16/bf16 round to nearest
 * even).  0, or -1 with err for parameters that make no sense (inputs_check). */
int inputs_fill(const ElemType *t, void *host, uint64_t count, const InitParams *p,
                int threads, KvxError *err);

/* A short description: "zipf(s=1.2, 0..255)", for plans and stored rows. */
void inputs_describe(const InitParams *p, StrBuf *out);

/* Stable hash of (type, count, params) for reusing an input across variants. */
void inputs_key(const ElemType *t, uint64_t count, const InitParams *p, char hex[65]);

#endif
