/* verify_internal: what the files of host/verify*.c share; internal to
 * them (host/verify.h is the public face).
 *
 * Typed access to buffers, the Call a reference is computed for, the argument
 * checks and result set-up of verify.c, the chunking that makes a threaded
 * reference bit-identical on any thread count, and the reference functions
 * that verify.c's table dispatches to. */
#ifndef KVX_VERIFY_INTERNAL_H
#define KVX_VERIFY_INTERNAL_H

#include "verify.h"

#include <math.h>
#include <string.h>

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* ---- typed access ------------------------------------------------------------ */

/* Integer element i as its value, sign- or zero-extended to 64 bits. */
static inline uint64_t load_u(const ElemType *t, const void *base, uint64_t i)
{
    const char *p = (const char *)base + i * (uint64_t)t->size;
    switch (t->size) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return t->is_signed ? (uint64_t)(int64_t)(int8_t)v : v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return t->is_signed ? (uint64_t)(int64_t)(int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return t->is_signed ? (uint64_t)(int64_t)(int32_t)v : v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline double load_f(const ElemType *t, const void *base, uint64_t i)
{
    if (!t->is_float)
        return t->is_signed ? (double)(int64_t)load_u(t, base, i) : (double)load_u(t, base, i);
    return elem_get_f64(t, base, i);
}

/* v wrapped to t's width, sign-extended when t is signed. */
static inline uint64_t wrap(const ElemType *t, uint64_t v)
{
    int bits = t->size * 8;
    if (bits == 64)
        return v;
    v &= (1ull << bits) - 1;
    if (t->is_signed && (v >> (bits - 1)))
        v |= ~0ull << bits;
    return v;
}

/* Integer values compare as their mathematical values (i128 holds both int64
 * and uint64). */
static inline i128 ival(const ElemType *t, uint64_t v)
{
    return t->is_signed ? (i128)(int64_t)v : (i128)v;
}

/* Neumaier's compensated sum. */
typedef struct Acc {
    double s, c;
} Acc;

static inline void acc_add(Acc *a, double x)
{
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
}

static inline double acc_get(const Acc *a) { return a->s + a->c; }

/* ---- arguments ---------------------------------------------------------------- */

/* The call being computed: its name, arguments, output and result slot. */
typedef struct Call {
    const char *name;
    const RefArg *a;
    int nargs;
    const ElemType *out;
    uint64_t out_count;
    Expected *exp;
    KvxError *err;
    int threads;            /* >= 1 */
} Call;

/* Argument checks and result set-up (verify.c).  Each returns 0, or -1 with
 * c->err set to "NAME: message" (KVX_EINPUT); nothing is allocated on failure.
 * k is the argument's index (0-based; messages count from 1), what its name
 * in messages. */
int verify_ref_fail(Call *c, const char *fmt, ...) KVX_PRINTF(2, 3);       /* always -1 */
/* An integer scalar (a bool, or an integral float below 2^63, is accepted). */
int verify_ref_arg_int(Call *c, int k, const char *what, int64_t *out);
/* An integer scalar >= 1. */
int verify_ref_arg_count(Call *c, int k, const char *what, uint64_t *out);
/* A buffer (with a type). */
int verify_ref_arg_buf(Call *c, int k, const char *what);
/* A buffer of an integer type. */
int verify_ref_arg_int_buf(Call *c, int k, const char *what);
/* A string scalar; NULL (with c->err set) when it is not. */
const char *verify_ref_arg_str(Call *c, int k);
/* Buffer argument k may feed the output: an integer output takes integer
 * inputs only (a float summed into an integer has no single meaning). */
int verify_ref_int_inputs(Call *c, int k);
/* Set c->exp up as EXPECT_VALUES with n zeroed values (c->exp->f when
 * is_float, else c->exp->u; owned by c->exp).  -1 when n differs from the
 * output buffer's count. */
int verify_ref_expect_init(Call *c, uint64_t n, int is_float);
/* verify_ref_expect_init for the output's type, filled from v[0..n): integer outputs
 * wrapped to their width, float outputs converted. */
int verify_ref_expect_counts(Call *c, const uint64_t *v, uint64_t n);
/* keys[i] as *out when it lies in [0, k); -1 with a message naming i and the
 * key when it does not. */
int verify_ref_key_at(Call *c, const RefArg *keys, uint64_t i, uint64_t k, uint64_t *out);

/* keys[i] as *out when it lies in [0, k); 0 when it does not.  Safe on any
 * thread: nothing is reported. */
static inline int key_ok(const RefArg *keys, uint64_t i, uint64_t k, uint64_t *out)
{
    uint64_t key = load_u(keys->t, keys->data, i);
    if (ival(keys->t, key) < 0 || ival(keys->t, key) >= (i128)k)
        return 0;
    *out = key;
    return 1;
}

/* ---- chunks and workers ------------------------------------------------------------
 *
 * A reference over n inputs is computed on up to c->threads threads.  The
 * input range is cut into chunks of CHUNK elements at fixed offsets, whatever
 * the thread count, and whatever is combined across chunks is combined in
 * chunk order, so every reference is the same bits on 1 thread or 64:
 *
 * - counts and integer results (wrapping arithmetic, and/or/xor/max/min) are
 *   exact in any order: per-chunk partials for scalars and for reduce with
 *   few addresses, per-worker counter arrays for other k-wide results (as
 *   many workers as PARTIAL_BYTES of counters allow, at least one);
 * - float sums (sum, dot; sum_by, index_add and reduce add/sub with few keys)
 *   are compensated sums within each chunk, the chunks' (sum, compensation)
 *   pairs then added in chunk order by the same compensated sum: a chunked
 *   order, not the sequential one.  Its error bound is the sequential
 *   compensated sum's (about one rounding of the result plus n * 2^-106 of
 *   the sum of the terms' magnitudes), far below the error of any f32, f16
 *   or bf16 output compared with it;
 * - k-wide float results with many keys (sum_by and index_add: when k
 *   partials per chunk would not fit in PARTIAL_BYTES; reduce: from
 *   REDUCE_COLUMNS_MIN addresses on, or when they would not fit) are split by
 *   key instead: each worker owns a range of keys and folds their values in
 *   input order, so each key's result is exactly the sequential one.  sum_by
 *   and index_add read all keys once per worker (and a hot key is one
 *   worker's: skewed keys balance poorly); reduce's address i % k lets a
 *   worker read only its own columns.  Integer reduce with many addresses
 *   takes the same path;
 * - float max/min folds with few addresses fold each chunk from init (they are
 *   idempotent, so init may enter more than once) and then the chunks in
 *   order: the NaN rules hold as before (maxNum: NaN only when init and all
 *   values are; maximum: NaN when any is), and the value is the same; only
 *   the sign of a zero result or a NaN's payload may differ from a sequential
 *   fold, and comparisons treat those as equal;
 * - reduce "exch" (a copy of the input), wrap_count and tally (closed forms,
 *   O(k)) stay sequential.
 * Which of these a reference takes depends on its arguments (n, k), never on
 * the thread count. */
enum { CHUNK = 1 << 20, MAX_WORKERS = 64 };
/* Scratch for per-chunk or per-worker partials of a k-wide result. */
#define PARTIAL_BYTES ((uint64_t)64 << 20)
/* reduce with at least this many addresses splits by address (columns). */
enum { REDUCE_COLUMNS_MIN = 1024 };

static inline uint64_t nchunks_of(uint64_t n) { return n / CHUNK + (n % CHUNK != 0); }

static inline void chunk_span(uint64_t n, uint64_t ch, uint64_t *b, uint64_t *e)
{
    *b = ch * CHUNK;
    *e = n - *b < CHUNK ? n : *b + CHUNK;
}

/* Range t of [0, n) cut into parts equal ranges. */
static inline void part_span(uint64_t n, uint64_t parts, uint64_t t, uint64_t *b, uint64_t *e)
{
    *b = (uint64_t)((u128)n * t / parts);
    *e = (uint64_t)((u128)n * (t + 1) / parts);
}

/* fn(ctx, worker, task) for every task in [0, ntasks), on up to `workers`
 * threads (the caller's included, as worker 0); worker < workers always, and
 * two tasks of one worker never run at once.  Tasks are claimed in order from
 * a shared counter; a thread that cannot be created only costs speed. */
void verify_ref_par_for(int workers, uint64_t ntasks, void (*fn)(void *, int, uint64_t), void *ctx);

/* Workers that may each hold `per_worker` bytes of partials, up to the
 * call's threads and the tasks there are; at least one. */
int verify_ref_workers_for(const Call *c, uint64_t per_worker, uint64_t ntasks);

/* Per-worker u64 counters (workers rows of k) summed into row 0: exact in
 * any order. */
void verify_ref_counters_merge(uint64_t *cnt, int workers, uint64_t k);

/* Slots per chunk for k partials: k rounded up to 8, so that no two chunks'
 * partials share a cache line (a k = 1 fold would otherwise bounce one line
 * between the threads on every element). */
static inline uint64_t pad_slots(uint64_t k)
{
    return k > UINT64_MAX - 7 ? k : (k + 7) & ~(uint64_t)7;
}

/* The compensated sum of chunk partials p[0], p[stride], ... (nchunks of them)
 * from `start`, in chunk order. */
double verify_ref_acc_combine(double start, const Acc *p, uint64_t nchunks, uint64_t stride);

/* The first out-of-range key found by any worker (UINT64_MAX: none).  Each
 * worker records the lowest index it saw; a chunk stops at its first. */
typedef struct BadKey {
    uint64_t at[MAX_WORKERS];
} BadKey;

static inline void bad_init(BadKey *b)
{
    for (int w = 0; w < MAX_WORKERS; w++)
        b->at[w] = UINT64_MAX;
}

static inline void bad_note(BadKey *b, int w, uint64_t i)
{
    if (i < b->at[w])
        b->at[w] = i;
}

/* 0, or -1 with the message of the lowest bad key (the one a sequential scan
 * would have stopped at). */
int verify_ref_bad_report(Call *c, const BadKey *b, const RefArg *keys, uint64_t k);

/* ---- the references (verify_ref.c, verify_reduce.c) ---------------------------- */

/* Compute the reference named by c->name into c->exp (verify.h gives each
 * one's meaning); c->nargs is already checked.  0, or -1 with c->err set. */
int verify_ref_count_below(Call *c);
int verify_ref_count_if(Call *c);
int verify_ref_count_below_by(Call *c);
int verify_ref_histogram(Call *c);
int verify_ref_sum(Call *c);
int verify_ref_dot(Call *c);
int verify_ref_sum_by(Call *c);
int verify_ref_index_add(Call *c);
int verify_ref_reduce(Call *c);
int verify_ref_wrap_count(Call *c);
int verify_ref_tally(Call *c);

/* An element as verify_compare names it: integers (u, wrapped) in their
 * type's signedness, floats (f) as the shortest decimal that reads back as
 * the same value of t.  In verify.c. */
void verify_put_elem(StrBuf *b, const ElemType *t, uint64_t u, double f);

#endif
