/* verify: host references for the built-in workload families, and the
 * comparison of a variant's output with them.
 *
 * A check is `BUFFER: REFERENCE` in a spec.  The reference is a call of one of
 * the functions of core/refs.h (their signatures, argument kinds and meanings
 * are that table's, and docs/spec.md lists them), an equal buffer (slice), or a
 * plain scalar expression that every element of the buffer must equal.
 * Integer references are computed in 64 bits and wrapped to the output type;
 * float references in double.  A float result is compared by relative error
 * ||out - ref|| / ||ref|| (2-norm; absolute error when ref is all zero) against
 * a tolerance; a stalled accumulator (a half sum stuck at 32 where 2^20 was
 * expected) is therefore a mismatch with its error shown.
 *
 * The outputs of a reference kernel, or of the baseline variant (differential
 * mode, baseline()), become references through verify_from_output. */
#ifndef KVX_VERIFY_H
#define KVX_VERIFY_H

#include "core/refs.h"
#include "gen/spec.h"

typedef enum { EXPECT_VALUES, EXPECT_MEMBER } ExpectKind;

typedef struct Expected {
    ExpectKind kind;
    uint64_t count;         /* elements of the output checked */
    int is_float;
    double *f;              /* float references, count values */
    uint64_t *u;            /* integer references (two's complement), count */
    /* EXPECT_MEMBER: each output element must be one of set[0..nset) */
    double *set; uint64_t nset;
    /* EXPECT_MEMBER by address (reduce "exch"), used when member_vals is set:
     * element j must equal init or one of member_vals[i] with i % count == j,
     * each converted to the output type.  member_vals is an owned copy of the
     * written values, in type member_t. */
    void *member_vals;
    const ElemType *member_t;
    uint64_t member_n;
    uint64_t member_init_u;     /* integer outputs, wrapped to the output type */
    double member_init_f;       /* float outputs */
} Expected;

/* Compute the reference `name(args)` for an output of type out_t with count
 * elements.  The call is checked against its signature first
 * (refs_check_args).  0 or -1 with err (unknown function, bad argument types, a
 * result whose size differs from the output buffer's count, a key out of
 * range). */
int verify_reference(const char *name, const RefArg *args, int nargs,
                     const ElemType *out_t, uint64_t out_count,
                     Expected *exp, KvxError *err);
/* The same on up to `threads` threads (<= 0: the online cores); the result is
 * the same bits for every thread count (verify_internal.h says how). */
int verify_reference_threads(const char *name, const RefArg *args, int nargs,
                             const ElemType *out_t, uint64_t out_count, int threads,
                             Expected *exp, KvxError *err);
/* 1 when verify_reference computes name (every row of refs_table must). */
int verify_has_reference(const char *name);
/* Every element equal to one scalar. */
int verify_constant(Value v, const ElemType *out_t, uint64_t out_count, Expected *exp);
/* A previously downloaded output (the baseline's) as the reference. */
int verify_from_output(const ElemType *t, const void *data, uint64_t count, Expected *exp);
void verify_expected_free(Expected *exp);

typedef struct VerifyReport {
    int ok;
    uint64_t nmismatch;
    double rel_err;         /* floats: norm-wise relative error; ints: 0 or 1 */
    double max_abs_err;
    char first[512];        /* "out[3]: got 5, expected 7; out[9]: ..." */
    int listed;             /* elements named in first (verify_list_slice) */
} VerifyReport;

/* Compare an output with its reference.  rtol applies to floats only;
 * integers must match exactly. */
void verify_compare(const Expected *exp, const ElemType *t, const void *out,
                    const char *bufname, double rtol, VerifyReport *rep);

/* Compare the first n elements of out with the first n of exp (n <=
 * exp->count): in order as verify_compare, or with order_any as multisets
 * (integers exactly: each value as often as expected, listed as "out: 7
 * written 2 times, expected 1"; floats after sorting both sides, by the
 * norm-wise tolerance, listed by sorted position).  verify_order.c. */
void verify_compare_prefix(const Expected *exp, const ElemType *t, const void *out, uint64_t n,
                           int order_any, const char *bufname, double rtol, VerifyReport *rep);
/* The order-free report of integers (type t) from out's and the reference's
 * first n elements, each side already sorted in ascending order (on the
 * device): what verify_compare_prefix says of them, without sorting.  For the
 * listing only: the device's comparison gives the verdict first. */
void verify_multiset_sorted(const ElemType *t, const void *got, const void *want, uint64_t n, const char *bufname,
                            VerifyReport *rep);
/* The length a prefix check compares: element 0 of data (a scalar output of
 * integer type lt, named lenname).  0 with *n, or -1 with why ("length count =
 * 5000 is past its 4096 elements") when it is negative or above cap, the
 * elements there are: a mismatch, never a read past the buffer. */
int verify_length(const ElemType *lt, const void *data, const char *lenname, uint64_t cap,
                  uint64_t *n, char *why, size_t nwhy);

/* ---- comparisons made on the device (host/verify_device.c) ------------------ */

/* Elements per VerifyChunk: the device's kvx_compare (gpu/devio.cu) writes one
 * per chunk of this many elements. */
#define VERIFY_CHUNK 65536

/* One chunk's figures, as gpu/devio.cu writes them (the same 40 bytes):
 * differing elements (bad), non-finite disagreements among them, and, over
 * the finite pairs, sum (out - ref)^2, sum ref^2 and max |out - ref| in
 * double. */
typedef struct VerifyChunk {
    uint64_t bad, nonfinite;
    double dd, rr, max_abs;
} VerifyChunk;

/* The device's rule for elements [b, e) of out against ref (type ref_t, the
 * output's or f64; stride 1, or 0 for one value), summed into *c in element
 * order: the fake driver's stand-in for kvx_compare. */
void verify_chunk_host(const ElemType *t, const void *out, const ElemType *ref_t, const void *ref,
                       uint64_t stride, uint64_t b, uint64_t e, double rtol, int norm_ok,
                       VerifyChunk *c);

/* The order-free check's fingerprint of n integers of type t (gpu/devio.cu's
 * kvx_mset_hash for one side, bit for bit): each element's bits, zero-
 * extended to 64, through splitmix64's finaliser xor VERIFY_MSET_SALT0 and
 * murmur3's fmix64 xor VERIFY_MSET_SALT1, summed mod 2^64 into sums[0] and
 * sums[1]; the sums do not depend on the elements' order.  Two sides of n
 * elements whose sums agree are called the same multiset.  One value written
 * once in place of another changes both sums, always (the mixers are
 * bijections).  Any other difference leaves a sum unchanged with odds of
 * about 2^-64, both with about 2^-128 (strong mixers, taken as independent),
 * except where every value's count differs by a multiple of 2^k (2^k <= n):
 * then 2^(k-64) a sum, the sums' low k bits being blind to it.  The fake
 * driver's stand-in for the kernel, and what the GPU test holds it to. */
#define VERIFY_MSET_SALT0 0x6b76782d6d736574ull
#define VERIFY_MSET_SALT1 0x2d2d66696e676572ull
void verify_mset_host(const ElemType *t, const void *data, uint64_t n, uint64_t sums[2]);

/* rep's verdict from n chunks of a count-element output: nmismatch, rel_err
 * (floats: the 2-norm relative error in double; integers 0 or 1), ok.  For
 * floats *norm_ok says whether the norm test passed: when it failed, chunks
 * counted with norm_ok = 1 hold only the non-finite disagreements, and the
 * caller counts again with norm_ok = 0 and calls this again. */
void verify_chunks_report(const VerifyChunk *ch, uint64_t n, const ElemType *t, uint64_t count,
                          double rtol, int *norm_ok, VerifyReport *rep);

/* Name in rep->first the differing elements of out[0, n) (elements base.. of
 * buffer bufname) against ref, while fewer than four are named; the same text
 * as verify_compare's. */
void verify_list_slice(const ElemType *t, const void *out, const ElemType *ref_t, const void *ref,
                       uint64_t stride, uint64_t base, uint64_t n, double rtol, int norm_ok,
                       const char *bufname, VerifyReport *rep);

/* End rep->first: "; ... N more" past the named elements. */
void verify_list_close(VerifyReport *rep);

#endif
