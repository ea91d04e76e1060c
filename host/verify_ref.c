/* verify_ref: the host references that scan their inputs and count or add:
 * count_below, count_if, count_below_by, histogram (comparisons and tallies
 * into k counters) and sum, dot, sum_by, index_add (sums and scatter-adds).
 * Each is a ref_NAME(Call *) of the table in verify.c; semantics in verify.h,
 * how each splits across threads in verify_internal.h ("chunks and workers"). */
#include "verify_internal.h"

#include <stdlib.h>

/* ---- comparisons (count_below, count_if) --------------------------------------- */

typedef enum { CMP_LT, CMP_LE, CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_COUNT } CmpOp;
static const char *const cmp_names[CMP_COUNT] = {"<", "<=", "==", "!=", ">", ">="};

static inline int cmp_holds(CmpOp op, int c) /* c = sign of (e - v) */
{
    switch (op) {
    case CMP_LT: return c < 0;
    case CMP_LE: return c <= 0;
    case CMP_EQ: return c == 0;
    case CMP_NE: return c != 0;
    case CMP_GT: return c > 0;
    default: return c >= 0;
    }
}

/* `e op v` for the elements of one buffer, prepared once.  Integer elements
 * are compared with v exactly: a float threshold becomes the integer one that
 * selects the same integers (e < 2.5 is e < 3), so nothing is lost to double
 * rounding; a threshold no integer can meet (NaN, e == 2.5) makes the answer
 * the same for every element. */
typedef struct CmpPlan {
    const RefArg *buf;
    CmpOp op;
    int fixed;      /* -1: compare each element; 0 or 1: the answer for all */
    double x;       /* float elements */
    i128 thr;       /* integer elements */
} CmpPlan;

static void cmp_plan(CmpPlan *p, const RefArg *buf, CmpOp op, Value v)
{
    memset(p, 0, sizeof *p);
    p->buf = buf;
    p->op = op;
    p->fixed = -1;
    if (buf->t->is_float) {
        p->x = val_num(v);
        return;
    }
    if (v.kind != VAL_FLOAT) {
        p->thr = v.i;
        return;
    }
    double d = v.d;
    if (d != d || (d != floor(d) && (op == CMP_EQ || op == CMP_NE))) {
        p->fixed = op == CMP_NE;
        return;
    }
    if (op == CMP_LT || op == CMP_GE)
        d = ceil(d);
    else if (op == CMP_LE || op == CMP_GT)
        d = floor(d);
    d = d > 0x1p100 ? 0x1p100 : d < -0x1p100 ? -0x1p100 : d;
    p->thr = (i128)d;
}

static inline int cmp_float(CmpOp op, double e, double x)
{
    switch (op) { /* IEEE: every comparison with NaN is false but != */
    case CMP_LT: return e < x;
    case CMP_LE: return e <= x;
    case CMP_EQ: return e == x;
    case CMP_NE: return e != x;
    case CMP_GT: return e > x;
    default: return e >= x;
    }
}

static inline int cmp_at(const CmpPlan *p, uint64_t i)
{
    if (p->fixed >= 0)
        return p->fixed;
    const ElemType *t = p->buf->t;
    if (t->is_float)
        return cmp_float(p->op, load_f(t, p->buf->data, i), p->x);
    i128 e = ival(t, load_u(t, p->buf->data, i));
    return cmp_holds(p->op, (e > p->thr) - (e < p->thr));
}

/* ---- integers of up to 32 bits: `e op thr` as a range, one typed loop ----------
 *
 * The generic loops load each element through its type and compare in
 * 128 bits (2 to 6 ns an element); an element of up to 32 bits compared
 * with an integer threshold holds exactly when it lies in [lo, hi] (or, for
 * !=, outside [thr, thr]), which one typed loop marks a block at a time. */

typedef struct IntRange {
    int64_t lo;
    uint64_t span;      /* hi - lo; the range is empty when empty is set */
    int empty, negate;
} IntRange;

/* Beyond every value of 32 bits, so that thr +- 1 cannot overflow. */
#define RANGE_FAR ((int64_t)1 << 40)

/* Whether p is an integer plan over elements of up to 32 bits, with *r
 * its range. */
static int int_range(const CmpPlan *p, IntRange *r)
{
    const ElemType *t = p->buf->t;
    if (p->fixed >= 0 || t->is_float || t->size > 4)
        return 0;
    int64_t thr = p->thr > RANGE_FAR ? RANGE_FAR : p->thr < -RANGE_FAR ? -RANGE_FAR : (int64_t)p->thr;
    int64_t lo = -RANGE_FAR, hi = RANGE_FAR;
    switch (p->op) {
    case CMP_LT: hi = thr - 1; break;
    case CMP_LE: hi = thr; break;
    case CMP_GT: lo = thr + 1; break;
    case CMP_GE: lo = thr; break;
    default: lo = hi = thr; break; /* == and != */
    }
    r->lo = lo;
    r->empty = lo > hi;
    r->span = r->empty ? 0 : (uint64_t)(hi - lo);
    r->negate = p->op == CMP_NE;
    return 1;
}

#define RANGE_HITS(T)                                                   \
    do {                                                                \
        const T *v = (const T *)data + b;                               \
        for (uint64_t j = 0; j < m; j++)                                \
            hit[j] = (uint64_t)((int64_t)v[j] - r->lo) <= r->span;      \
    } while (0)

/* hit[j] = whether element b + j of data holds, for j < m. */
static void range_hits(const ElemType *t, const void *data, const IntRange *r, uint64_t b, uint64_t m,
                       uint8_t *hit)
{
    if (r->empty) {
        memset(hit, r->negate, m);
        return;
    }
    switch (t->id) {
    case ET_I8: RANGE_HITS(int8_t); break;
    case ET_U8: RANGE_HITS(uint8_t); break;
    case ET_I16: RANGE_HITS(int16_t); break;
    case ET_U16: RANGE_HITS(uint16_t); break;
    case ET_I32: RANGE_HITS(int32_t); break;
    default: RANGE_HITS(uint32_t); break;
    }
    for (uint64_t j = 0; r->negate && j < m; j++)
        hit[j] ^= 1;
}

enum { RANGE_BLOCK = 4096 };

/* Elements of [b, e) of data (type t) that hold, a block of hits at a time. */
static uint64_t range_count(const ElemType *t, const void *data, const IntRange *r, uint64_t b, uint64_t e)
{
    uint8_t hit[RANGE_BLOCK];
    uint64_t n = 0;
    for (uint64_t i = b; i < e; i += RANGE_BLOCK) {
        uint64_t m = e - i < RANGE_BLOCK ? e - i : RANGE_BLOCK;
        range_hits(t, data, r, i, m, hit);
        for (uint64_t j = 0; j < m; j++)
            n += hit[j];
    }
    return n;
}

#define KEYS_LOAD(T)                                                    \
    do {                                                                \
        const T *v = (const T *)keys->data + b;                         \
        for (uint64_t j = 0; j < m; j++) {                              \
            out[j] = (uint32_t)v[j];                                    \
            bad |= (int64_t)v[j] < 0 || (uint64_t)(int64_t)v[j] >= k;   \
        }                                                               \
    } while (0)

/* keys b .. b + m - 1 into out[], when every one lies in [0, k) and the
 * keys have up to 32 bits: 1; else 0 (the generic loop finds the bad one). */
static int keys_load(const RefArg *keys, uint64_t b, uint64_t m, uint64_t k, uint32_t *out)
{
    int bad = 0;
    switch (keys->t->id) {
    case ET_I8: KEYS_LOAD(int8_t); break;
    case ET_U8: KEYS_LOAD(uint8_t); break;
    case ET_I16: KEYS_LOAD(int16_t); break;
    case ET_U16: KEYS_LOAD(uint16_t); break;
    case ET_I32: KEYS_LOAD(int32_t); break;
    case ET_U32: KEYS_LOAD(uint32_t); break;
    default: return 0;
    }
    return !bad;
}

/* Elements of [b, e) that hold, one loop per element kind. */
static uint64_t cmp_count(const CmpPlan *p, uint64_t b, uint64_t e)
{
    if (p->fixed >= 0)
        return p->fixed ? e - b : 0;
    IntRange r;
    if (int_range(p, &r))
        return range_count(p->buf->t, p->buf->data, &r, b, e);
    const ElemType *t = p->buf->t;
    const void *data = p->buf->data;
    CmpOp op = p->op;
    uint64_t n = 0;
    if (t->is_float) {
        double x = p->x;
        for (uint64_t i = b; i < e; i++)
            n += cmp_float(op, load_f(t, data, i), x);
    } else {
        i128 thr = p->thr;
        for (uint64_t i = b; i < e; i++) {
            i128 v = ival(t, load_u(t, data, i));
            n += cmp_holds(op, (v > thr) - (v < thr));
        }
    }
    return n;
}

typedef struct CountCtx {
    const CmpPlan *plan;
    uint64_t *part;     /* per chunk */
} CountCtx;

static void count_chunk(void *ctx, int w, uint64_t ch)
{
    (void)w;
    const CountCtx *x = ctx;
    uint64_t b, e;
    chunk_span(x->plan->buf->count, ch, &b, &e);
    x->part[ch] = cmp_count(x->plan, b, e);
}

/* Elements e of buf with `e op v`. */
static uint64_t count_cmp(Call *c, const RefArg *buf, CmpOp op, Value v)
{
    CmpPlan plan;
    cmp_plan(&plan, buf, op, v);
    uint64_t nch = nchunks_of(buf->count), n = 0;
    CountCtx x = {&plan, mem_calloc(nch ? nch : 1, sizeof *x.part)};
    verify_ref_par_for(verify_ref_workers_for(c, 0, nch), nch, count_chunk, &x);
    for (uint64_t ch = 0; ch < nch; ch++)
        n += x.part[ch];
    free(x.part);
    return n;
}

static int check_threshold(Call *c, int k)
{
    if (c->a[k].is_buf || !val_is_num(c->a[k].v))
        return verify_ref_fail(c, "argument %d (threshold) must be a number", k + 1);
    return 0;
}

int verify_ref_count_below(Call *c)
{
    if (verify_ref_arg_buf(c, 0, "buffer") < 0 || check_threshold(c, 1) < 0)
        return -1;
    uint64_t n = count_cmp(c, &c->a[0], CMP_LT, c->a[1].v);
    return verify_ref_expect_counts(c, &n, 1);
}

int verify_ref_count_if(Call *c)
{
    const char *op = NULL;
    if (verify_ref_arg_buf(c, 0, "buffer") < 0 || !(op = verify_ref_arg_str(c, 1)) || check_threshold(c, 2) < 0)
        return -1;
    int k = 0;
    while (k < CMP_COUNT && strcmp(cmp_names[k], op) != 0)
        k++;
    if (k == CMP_COUNT)
        return verify_ref_fail(c, "unknown comparison \"%s\" (expected one of: < <= == != > >=)", op);
    uint64_t n = count_cmp(c, &c->a[0], (CmpOp)k, c->a[2].v);
    return verify_ref_expect_counts(c, &n, 1);
}

/* count_below_by and histogram: k counters per worker, merged. */
typedef struct TallyCtx {
    uint64_t n, k;
    uint64_t *cnt;          /* workers rows of k */
    const CmpPlan *plan;    /* count_below_by */
    const RefArg *keys;
    BadKey bad;
    const RefArg *buf;      /* histogram */
    int64_t lo, hi;
    i128 width;
} TallyCtx;

/* Elements [b, e) one by one: 0, or -1 at the first bad key (noted). */
static int below_by_each(TallyCtx *x, const CmpPlan *plan, const RefArg *keys, int w, uint64_t b, uint64_t e)
{
    uint64_t k = x->k, *cnt = x->cnt + (uint64_t)w * k;
    for (uint64_t i = b; i < e; i++) {
        uint64_t key;
        if (!key_ok(keys, i, k, &key)) {
            bad_note(&x->bad, w, i);
            return -1;
        }
        cnt[key] += cmp_at(plan, i);
    }
    return 0;
}

/* The tally of one block: keys and hits by typed loops. */
static void below_by_block(uint64_t *cnt, uint64_t k, const uint32_t *key, const uint8_t *hit, uint64_t m)
{
    if (k == 1) { /* one counter: a sum in a register, not a store an element */
        uint64_t sum = 0;
        for (uint64_t j = 0; j < m; j++)
            sum += hit[j];
        cnt[0] += sum;
        return;
    }
    for (uint64_t j = 0; j < m; j++)
        cnt[key[j]] += hit[j];
}

/* A chunk in blocks: keys and hits by typed loops (int_range, keys_load),
 * then the tally; a block with a bad key, or elements or keys the typed
 * loops do not take, goes one by one. */
static void below_by_chunk(void *ctx, int w, uint64_t ch)
{
    /* locals: the counter stores could alias the context's fields */
    TallyCtx *x = ctx;
    const CmpPlan plan = *x->plan;
    const RefArg keys = *x->keys;
    uint64_t b, e;
    chunk_span(x->n, ch, &b, &e);
    IntRange r;
    if (!int_range(&plan, &r)) {
        below_by_each(x, &plan, &keys, w, b, e);
        return;
    }
    uint32_t key[RANGE_BLOCK];
    uint8_t hit[RANGE_BLOCK];
    for (uint64_t i = b; i < e; i += RANGE_BLOCK) {
        uint64_t m = e - i < RANGE_BLOCK ? e - i : RANGE_BLOCK;
        if (!keys_load(&keys, i, m, x->k, key)) {
            if (below_by_each(x, &plan, &keys, w, i, i + m) < 0)
                return;
            continue;
        }
        range_hits(plan.buf->t, plan.buf->data, &r, i, m, hit);
        below_by_block(x->cnt + (uint64_t)w * x->k, x->k, key, hit, m);
    }
}

int verify_ref_count_below_by(Call *c)
{
    uint64_t k = 0;
    if (verify_ref_arg_buf(c, 0, "buffer") < 0 || check_threshold(c, 1) < 0 ||
        verify_ref_arg_int_buf(c, 2, "keys") < 0 || verify_ref_arg_count(c, 3, "k", &k) < 0)
        return -1;
    const RefArg *buf = &c->a[0], *keys = &c->a[2];
    if (keys->count < buf->count)
        return verify_ref_fail(c, "keys has %llu elements, fewer than the buffer's %llu",
                        (unsigned long long)keys->count, (unsigned long long)buf->count);
    if (k != c->out_count)
        return verify_ref_expect_init(c, k, 0);
    CmpPlan plan;
    cmp_plan(&plan, buf, CMP_LT, c->a[1].v);
    uint64_t nch = nchunks_of(buf->count);
    int workers = verify_ref_workers_for(c, k > PARTIAL_BYTES ? PARTIAL_BYTES : k * 8, nch);
    TallyCtx x = {.n = buf->count, .k = k, .plan = &plan, .keys = keys};
    x.cnt = mem_calloc(k * (uint64_t)workers, sizeof *x.cnt);
    bad_init(&x.bad);
    verify_ref_par_for(workers, nch, below_by_chunk, &x);
    verify_ref_counters_merge(x.cnt, workers, k);
    int rc = verify_ref_bad_report(c, &x.bad, keys, k);
    if (rc == 0)
        rc = verify_ref_expect_counts(c, x.cnt, k);
    free(x.cnt);
    return rc;
}

static void histogram_chunk(void *ctx, int w, uint64_t ch)
{
    const TallyCtx *x = ctx;
    const ElemType *t = x->buf->t;
    const void *data = x->buf->data;
    uint64_t b, e, *cnt = x->cnt + (uint64_t)w * x->k;
    chunk_span(x->n, ch, &b, &e);
    if (t->is_float) {
        double lo = (double)x->lo, hi = (double)x->hi, width = (double)x->width;
        for (uint64_t i = b; i < e; i++) {
            double v = load_f(t, data, i);
            if (v >= lo && v <= hi) /* NaN fails both */
                cnt[(uint64_t)floor((v - lo) / width)]++;
        }
        return;
    }
    i128 lo = x->lo, hi = x->hi, width = x->width;
    for (uint64_t i = b; i < e; i++) {
        i128 v = ival(t, load_u(t, data, i));
        if (v >= lo && v <= hi)
            cnt[(uint64_t)((v - lo) / width)]++;
    }
}

int verify_ref_histogram(Call *c)
{
    uint64_t bins = 0;
    int64_t lo, hi;
    if (verify_ref_arg_buf(c, 0, "buffer") < 0 || verify_ref_arg_count(c, 1, "bins", &bins) < 0 ||
        verify_ref_arg_int(c, 2, "lo", &lo) < 0 || verify_ref_arg_int(c, 3, "hi", &hi) < 0)
        return -1;
    if (lo > hi)
        return verify_ref_fail(c, "lo (%lld) > hi (%lld)", (long long)lo, (long long)hi);
    i128 span = (i128)hi - lo + 1;
    const RefArg *b = &c->a[0];
    uint64_t nch = nchunks_of(b->count);
    int workers = verify_ref_workers_for(c, bins > PARTIAL_BYTES ? PARTIAL_BYTES : bins * 8, nch);
    TallyCtx x = {.n = b->count, .k = bins, .buf = b, .lo = lo, .hi = hi,
                  .width = (span + (i128)bins - 1) / (i128)bins};
    x.cnt = mem_calloc(bins * (uint64_t)workers, sizeof *x.cnt);
    verify_ref_par_for(workers, nch, histogram_chunk, &x);
    verify_ref_counters_merge(x.cnt, workers, bins);
    int rc = verify_ref_expect_counts(c, x.cnt, bins);
    free(x.cnt);
    return rc;
}

/* ---- sums ----------------------------------------------------------------------- */

/* sum (y NULL) and dot: one partial per chunk. */
typedef struct SumCtx {
    const RefArg *x, *y;
    int is_float;
    Acc *f;
    uint64_t *u;
} SumCtx;

static void sum_chunk(void *ctx, int w, uint64_t ch)
{
    (void)w;
    SumCtx *s = ctx;
    const RefArg *x = s->x, *y = s->y;
    uint64_t b, e;
    chunk_span(x->count, ch, &b, &e);
    if (s->is_float) {
        Acc a = {0, 0};
        for (uint64_t i = b; i < e; i++)
            acc_add(&a, y ? load_f(x->t, x->data, i) * load_f(y->t, y->data, i)
                          : load_f(x->t, x->data, i));
        s->f[ch] = a;
        return;
    }
    uint64_t u = 0;
    for (uint64_t i = b; i < e; i++)
        u += y ? load_u(x->t, x->data, i) * load_u(y->t, y->data, i) : load_u(x->t, x->data, i);
    s->u[ch] = u;
}

static void sum_into(Call *c, const RefArg *x, const RefArg *y)
{
    uint64_t nch = nchunks_of(x->count);
    SumCtx s = {x, y, c->out->is_float, NULL, NULL};
    if (s.is_float)
        s.f = mem_calloc(nch ? nch : 1, sizeof *s.f);
    else
        s.u = mem_calloc(nch ? nch : 1, sizeof *s.u);
    verify_ref_par_for(verify_ref_workers_for(c, 0, nch), nch, sum_chunk, &s);
    if (s.is_float) {
        c->exp->f[0] = verify_ref_acc_combine(0, s.f, nch, 1);
    } else {
        uint64_t u = 0;
        for (uint64_t ch = 0; ch < nch; ch++)
            u += s.u[ch];
        c->exp->u[0] = wrap(c->out, u);
    }
    free(s.f);
    free(s.u);
}

int verify_ref_sum(Call *c)
{
    if (verify_ref_arg_buf(c, 0, "buffer") < 0 || verify_ref_int_inputs(c, 0) < 0 ||
        verify_ref_expect_init(c, 1, c->out->is_float) < 0)
        return -1;
    sum_into(c, &c->a[0], NULL);
    return 0;
}

int verify_ref_dot(Call *c)
{
    if (verify_ref_arg_buf(c, 0, "a") < 0 || verify_ref_arg_buf(c, 1, "b") < 0 || verify_ref_int_inputs(c, 0) < 0 ||
        verify_ref_int_inputs(c, 1) < 0)
        return -1;
    const RefArg *x = &c->a[0], *y = &c->a[1];
    if (x->count != y->count)
        return verify_ref_fail(c, "a has %llu elements, b %llu", (unsigned long long)x->count,
                        (unsigned long long)y->count);
    if (verify_ref_expect_init(c, 1, c->out->is_float) < 0)
        return -1;
    sum_into(c, x, y);
    return 0;
}

/* Scatter-add of n rows of w values: row key(i) += vals[i*w .. i*w+w).
 * Integer outputs: per-worker counters.  Float outputs: per-chunk partials
 * when nchunks * rows * w of them fit in PARTIAL_BYTES, else each worker owns
 * a range of rows (tasks are row ranges, not chunks). */
typedef struct ScatterCtx {
    const RefArg *keys, *vals;
    uint64_t n, rows, w, nparts;
    uint64_t stride;    /* per-chunk float partials: rows * w, padded */
    uint64_t *u;        /* integers: workers * rows * w */
    Acc *acc;           /* floats: nchunks * stride, or rows * w when owned */
    BadKey bad;
} ScatterCtx;

/* Rows [r0, r1) of elements [b, e) into acc (floats) or u (integers); the
 * lowest bad key noted for worker wk.  Locals throughout: the stores could
 * alias the context's fields. */
static void scatter_range(ScatterCtx *x, int wk, Acc *acc, uint64_t *u, uint64_t b, uint64_t e,
                          uint64_t r0, uint64_t r1)
{
    const RefArg keys = *x->keys;
    const ElemType *vt = x->vals->t;
    const void *vals = x->vals->data;
    uint64_t w = x->w, rows = x->rows;
    for (uint64_t i = b; i < e; i++) {
        uint64_t r;
        if (!key_ok(&keys, i, rows, &r)) {
            bad_note(&x->bad, wk, i);
            return;
        }
        if (r < r0 || r >= r1)
            continue;
        if (acc)
            for (uint64_t j = 0; j < w; j++)
                acc_add(&acc[r * w + j], load_f(vt, vals, i * w + j));
        else
            for (uint64_t j = 0; j < w; j++)
                u[r * w + j] += load_u(vt, vals, i * w + j);
    }
}

static void scatter_chunk(void *ctx, int wk, uint64_t ch)
{
    ScatterCtx *x = ctx;
    uint64_t b, e;
    chunk_span(x->n, ch, &b, &e);
    scatter_range(x, wk, x->acc ? x->acc + ch * x->stride : NULL,
                  x->u ? x->u + (uint64_t)wk * x->rows * x->w : NULL, b, e, 0, x->rows);
}

static void scatter_owned(void *ctx, int wk, uint64_t part)
{
    ScatterCtx *x = ctx;
    uint64_t r0, r1;
    part_span(x->rows, x->nparts, part, &r0, &r1);
    scatter_range(x, wk, x->acc, NULL, 0, x->n, r0, r1);
}

static int scatter_add(Call *c, const RefArg *keys, const RefArg *vals, uint64_t n,
                       uint64_t rows, uint64_t w)
{
    if (rows > UINT64_MAX / w)
        return verify_ref_fail(c, "rows * width overflows");
    uint64_t kw = rows * w, nch = nchunks_of(n);
    if (verify_ref_expect_init(c, kw, c->out->is_float) < 0)
        return -1;
    ScatterCtx x = {.keys = keys, .vals = vals, .n = n, .rows = rows, .w = w};
    bad_init(&x.bad);
    if (!c->out->is_float) {
        int workers = verify_ref_workers_for(c, kw > PARTIAL_BYTES ? PARTIAL_BYTES : kw * 8, nch);
        x.u = mem_calloc(kw * (uint64_t)workers, sizeof *x.u);
        verify_ref_par_for(workers, nch, scatter_chunk, &x);
        verify_ref_counters_merge(x.u, workers, kw);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->u[j] = wrap(c->out, x.u[j]);
    } else if (nch <= 1 || kw <= PARTIAL_BYTES / sizeof(Acc) / nch) {
        x.stride = pad_slots(kw);
        x.acc = mem_calloc(x.stride * (nch ? nch : 1), sizeof *x.acc);
        verify_ref_par_for(verify_ref_workers_for(c, 0, nch), nch, scatter_chunk, &x);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->f[j] = verify_ref_acc_combine(0, x.acc + j, nch, x.stride);
    } else {
        x.acc = mem_calloc(kw, sizeof *x.acc);
        x.nparts = (uint64_t)verify_ref_workers_for(c, 0, rows);
        verify_ref_par_for((int)x.nparts, x.nparts, scatter_owned, &x);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->f[j] = acc_get(&x.acc[j]);
    }
    free(x.u);
    free(x.acc);
    if (verify_ref_bad_report(c, &x.bad, keys, rows) < 0) {
        verify_expected_free(c->exp);
        return -1;
    }
    return 0;
}

int verify_ref_sum_by(Call *c)
{
    uint64_t k = 0;
    if (verify_ref_arg_buf(c, 0, "vals") < 0 || verify_ref_int_inputs(c, 0) < 0 ||
        verify_ref_arg_int_buf(c, 1, "keys") < 0 || verify_ref_arg_count(c, 2, "k", &k) < 0)
        return -1;
    if (c->a[1].count < c->a[0].count)
        return verify_ref_fail(c, "keys has %llu elements, fewer than vals' %llu",
                        (unsigned long long)c->a[1].count, (unsigned long long)c->a[0].count);
    return scatter_add(c, &c->a[1], &c->a[0], c->a[0].count, k, 1);
}

int verify_ref_index_add(Call *c)
{
    uint64_t rows = 0, w = 0;
    if (verify_ref_arg_int_buf(c, 0, "idx") < 0 || verify_ref_arg_buf(c, 1, "vals") < 0 ||
        verify_ref_int_inputs(c, 1) < 0 || verify_ref_arg_count(c, 2, "rows", &rows) < 0 ||
        verify_ref_arg_count(c, 3, "w", &w) < 0)
        return -1;
    uint64_t n = c->a[0].count;
    if (n > UINT64_MAX / w || c->a[1].count < n * w)
        return verify_ref_fail(c, "vals has %llu elements, fewer than idx's %llu rows of %llu",
                        (unsigned long long)c->a[1].count, (unsigned long long)n,
                        (unsigned long long)w);
    return scatter_add(c, &c->a[0], &c->a[1], n, rows, w);
}
