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

/* One buffer's generator as gpu/devio.cu's kvx_fill reads it: the same
 * fields in the same order (its struct FillPlan).  Signed 128-bit
 * values are two words, low first.  text_end[c] is the first 16-bit draw past
 * character c of " abc...z" (the table inputs_fill looks up).  A zipf plan
 * (zipf_n ranks, 0 for other kinds) reads the host's inverse-CDF table at
 * zipf_cdf and its guide at zipf_guide (addresses where the reader finds
 * them: inputs_table_make's on the host, copies on the device). */
typedef struct InputsPlan {
    uint64_t key[2];
    uint64_t ilo[2], ival[2], tmin[2], tmax[2];
    uint64_t range_lo, range_hi, length;
    double value, flo, fhi, fhi_below, fspan, fraction;
    uint32_t kind, type, sat, pad;
    uint32_t text_end[27];
    uint32_t zipf_guide_bits;
    double zipf_s;
    uint64_t zipf_n, zipf_cdf, zipf_guide;
} InputsPlan;

/* The plan of fill(t, count, p) on the device.  1 with *plan set (a zipf
 * plan then needs its table: inputs_table_make); 0 where the device cannot
 * give the host's bytes (zipf past 2^24 ranks: its rejection sampler calls
 * log and exp, whose device versions differ in the last bit; a float zipf
 * with values past 2^53); -1 with err as inputs_fill. */
int inputs_plan(const ElemType *t, uint64_t count, const InitParams *p, InputsPlan *plan, KvxError *err);

/* zipf's inverse-CDF table (the host's, summed in long double), built on
 * threads for a plan with zipf_n > 0, whose zipf_cdf and zipf_guide then
 * point at its arrays; a device caller uploads them and points the plan at
 * its copies.  Freed with inputs_table_free (accepts a zeroed one). */
typedef struct InputsTable {
    uint64_t *cdf;
    uint32_t *guide;
    uint64_t cdf_bytes, guide_bytes;
} InputsTable;
void inputs_table_make(InputsPlan *plan, int threads, InputsTable *tab);
void inputs_table_free(InputsTable *tab);

/* The host's twin of kvx_fill: count elements from plan alone, as the
 * device writes them (the fake driver's stand-in; a test holds it to
 * inputs_fill).  plan is one inputs_plan returned 1 for, with a zipf plan's
 * table at host addresses. */
void inputs_fill_plan(const InputsPlan *plan, void *host, uint64_t count);

/* A short description: "zipf(s=1.2, 0..255)", for plans and stored rows. */
void inputs_describe(const InitParams *p, StrBuf *out);

/* Stable hash of (type, count, params) for reusing an input across variants. */
void inputs_key(const ElemType *t, uint64_t count, const InitParams *p, char hex[65]);

#endif
