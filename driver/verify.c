/* verify: host references for the built-in workload families and the
 * comparison of a variant's output with them (semantics in verify.h).
 *
 * Integer references are computed modulo 2^64 and stored wrapped to the output
 * type: masked to its width and sign-extended when it is signed, so that
 * exp->u[j] read as int64 is the value itself.  The reference's arithmetic
 * follows the output type, not the input's: an integer output gets integer
 * arithmetic (float inputs are then an argument error), a float output gets
 * double arithmetic with compensated (Neumaier) sums, so that 2^28 terms keep
 * the reference well inside the f64 tolerance.  References over many inputs
 * run on several threads and give the same bits on any number of them
 * ("chunks and workers" below says how each is split).
 *
 * Float max/min (reduce): kvx's "max"/"min" are IEEE 754-2008 maxNum/minNum,
 * the rule of fmaxf/fminf and of the hardware's float atomic max/min: a NaN
 * operand is ignored when the other is a number, so the fold is NaN only when
 * init and every value are NaN.  "nanmax"/"nanmin" (NaN ignored unless all
 * are NaN) are therefore the same function and kept as numpy-style names.
 * "maximum"/"minimum" are the NaN-propagating IEEE 754-2019 operations (PTX
 * max.NaN, __hmax_nan): NaN when init or any value is NaN.  Signed zeros
 * compare equal, as they do when outputs are checked. */
#include "verify.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static i128 ival(const ElemType *t, uint64_t v) { return t->is_signed ? (i128)(int64_t)v : (i128)v; }

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

static int fail(Call *c, const char *fmt, ...) KVX_PRINTF(2, 3);
static int fail(Call *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kvx_error_set(c->err, KVX_EINPUT, NULL, "%s: %s", c->name, msg);
    return -1;
}

static int arg_int(Call *c, int k, const char *what, int64_t *out)
{
    Value v = c->a[k].v;
    if (!c->a[k].is_buf && (v.kind == VAL_INT || v.kind == VAL_BOOL)) {
        *out = v.i;
        return 0;
    }
    if (!c->a[k].is_buf && v.kind == VAL_FLOAT && v.d == floor(v.d) && fabs(v.d) < 0x1p63) {
        *out = (int64_t)v.d;
        return 0;
    }
    return fail(c, "argument %d (%s) must be an integer", k + 1, what);
}

static int arg_count(Call *c, int k, const char *what, uint64_t *out)
{
    int64_t v;
    if (arg_int(c, k, what, &v) < 0)
        return -1;
    if (v < 1)
        return fail(c, "argument %d (%s) must be >= 1, got %lld", k + 1, what, (long long)v);
    *out = (uint64_t)v;
    return 0;
}

static int arg_buf(Call *c, int k, const char *what)
{
    if (!c->a[k].is_buf || !c->a[k].t)
        return fail(c, "argument %d (%s) must be a buffer", k + 1, what);
    return 0;
}

static int arg_int_buf(Call *c, int k, const char *what)
{
    if (arg_buf(c, k, what) < 0)
        return -1;
    if (c->a[k].t->is_float)
        return fail(c, "argument %d (%s) must be an integer buffer, not %s", k + 1, what,
                    c->a[k].t->name);
    return 0;
}

static const char *arg_str(Call *c, int k)
{
    if (c->a[k].is_buf || c->a[k].v.kind != VAL_STR || !c->a[k].v.s) {
        fail(c, "argument %d must be a string", k + 1);
        return NULL;
    }
    return c->a[k].v.s;
}

/* The result has n elements: the output buffer must hold exactly that many. */
static int expect_init(Call *c, uint64_t n, int is_float)
{
    if (n != c->out_count)
        return fail(c, "the reference has %llu element%s but the output buffer has %llu",
                    (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)c->out_count);
    Expected *e = c->exp;
    memset(e, 0, sizeof *e);
    e->kind = EXPECT_VALUES;
    e->count = n;
    e->is_float = is_float;
    if (is_float)
        e->f = xcalloc(n ? n : 1, sizeof *e->f);
    else
        e->u = xcalloc(n ? n : 1, sizeof *e->u);
    return 0;
}

/* Counts (and other integer results) into the output, whatever its type. */
static int expect_counts(Call *c, const uint64_t *v, uint64_t n)
{
    if (expect_init(c, n, c->out->is_float) < 0)
        return -1;
    for (uint64_t j = 0; j < n; j++) {
        if (c->out->is_float)
            c->exp->f[j] = (double)v[j];
        else
            c->exp->u[j] = wrap(c->out, v[j]);
    }
    return 0;
}

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

/* keys[i] for i < n, checked against [0, k). */
static int key_at(Call *c, const RefArg *keys, uint64_t i, uint64_t k, uint64_t *out)
{
    uint64_t key = load_u(keys->t, keys->data, i);
    if (!key_ok(keys, i, k, out))
        return fail(c, "key[%llu] = %lld is outside 0..%llu", (unsigned long long)i,
                    (long long)key, (unsigned long long)(k - 1));
    *out = key;
    return 0;
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

static uint64_t nchunks_of(uint64_t n) { return n / CHUNK + (n % CHUNK != 0); }

static void chunk_span(uint64_t n, uint64_t ch, uint64_t *b, uint64_t *e)
{
    *b = ch * CHUNK;
    *e = n - *b < CHUNK ? n : *b + CHUNK;
}

/* Range t of [0, n) cut into parts equal ranges. */
static void part_span(uint64_t n, uint64_t parts, uint64_t t, uint64_t *b, uint64_t *e)
{
    *b = (uint64_t)((u128)n * t / parts);
    *e = (uint64_t)((u128)n * (t + 1) / parts);
}

typedef struct Par {
    void (*fn)(void *ctx, int worker, uint64_t task);
    void *ctx;
    uint64_t ntasks;
    atomic_uint_fast64_t next;
} Par;

typedef struct ParArg {
    Par *p;
    int worker;
} ParArg;

static void par_drain(Par *p, int worker)
{
    for (;;) {
        uint64_t t = atomic_fetch_add(&p->next, 1);
        if (t >= p->ntasks)
            return;
        p->fn(p->ctx, worker, t);
    }
}

static void *par_main(void *arg)
{
    ParArg *a = arg;
    par_drain(a->p, a->worker);
    return NULL;
}

/* fn(ctx, worker, task) for every task in [0, ntasks), on up to `workers`
 * threads (the caller's included, as worker 0); worker < workers always, and
 * two tasks of one worker never run at once.  Tasks are claimed in order from
 * a shared counter; a thread that cannot be created only costs speed. */
static void par_for(int workers, uint64_t ntasks, void (*fn)(void *, int, uint64_t), void *ctx)
{
    Par p = {.fn = fn, .ctx = ctx, .ntasks = ntasks};
    atomic_init(&p.next, 0);
    if ((uint64_t)workers > ntasks)
        workers = (int)ntasks;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    pthread_t tid[MAX_WORKERS];
    ParArg args[MAX_WORKERS];
    int started = 0;
    for (int w = 1; w < workers; w++) {
        args[started] = (ParArg){&p, w};
        if (pthread_create(&tid[started], NULL, par_main, &args[started]) == 0)
            started++;
    }
    par_drain(&p, 0);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
}

/* Workers that may each hold `per_worker` bytes of partials, up to the
 * call's threads and the tasks there are; at least one. */
static int workers_for(const Call *c, uint64_t per_worker, uint64_t ntasks)
{
    uint64_t w = (uint64_t)c->threads;
    uint64_t fit = per_worker ? PARTIAL_BYTES / per_worker : w;
    w = w < fit ? w : fit;
    w = w < ntasks ? w : ntasks;
    return w < 1 ? 1 : (int)w;
}

/* Per-worker u64 counters (workers rows of k) summed into row 0: exact in
 * any order. */
static void counters_merge(uint64_t *cnt, int workers, uint64_t k)
{
    for (int w = 1; w < workers; w++)
        for (uint64_t j = 0; j < k; j++)
            cnt[j] += cnt[(uint64_t)w * k + j];
}

/* Slots per chunk for k partials: k rounded up to 8, so that no two chunks'
 * partials share a cache line (a k = 1 fold would otherwise bounce one line
 * between the threads on every element). */
static uint64_t pad_slots(uint64_t k)
{
    return k > UINT64_MAX - 7 ? k : (k + 7) & ~(uint64_t)7;
}

/* The compensated sum of chunk partials p[0], p[stride], ... (nchunks of them)
 * from `start`, in chunk order. */
static double acc_combine(double start, const Acc *p, uint64_t nchunks, uint64_t stride)
{
    Acc t = {start, 0};
    for (uint64_t ch = 0; ch < nchunks; ch++) {
        acc_add(&t, p[ch * stride].s);
        acc_add(&t, p[ch * stride].c);
    }
    return acc_get(&t);
}

/* The first out-of-range key found by any worker (UINT64_MAX: none).  Each
 * worker records the lowest index it saw; a chunk stops at its first. */
typedef struct BadKey {
    uint64_t at[MAX_WORKERS];
} BadKey;

static void bad_init(BadKey *b)
{
    for (int w = 0; w < MAX_WORKERS; w++)
        b->at[w] = UINT64_MAX;
}

static void bad_note(BadKey *b, int w, uint64_t i)
{
    if (i < b->at[w])
        b->at[w] = i;
}

/* 0, or -1 with the message of the lowest bad key (the one a sequential scan
 * would have stopped at). */
static int bad_report(Call *c, const BadKey *b, const RefArg *keys, uint64_t k)
{
    uint64_t first = UINT64_MAX, key;
    for (int w = 0; w < MAX_WORKERS; w++)
        first = b->at[w] < first ? b->at[w] : first;
    return first == UINT64_MAX ? 0 : key_at(c, keys, first, k, &key);
}

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

/* Elements of [b, e) that hold, one loop per element kind. */
static uint64_t cmp_count(const CmpPlan *p, uint64_t b, uint64_t e)
{
    if (p->fixed >= 0)
        return p->fixed ? e - b : 0;
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
    CountCtx x = {&plan, xcalloc(nch ? nch : 1, sizeof *x.part)};
    par_for(workers_for(c, 0, nch), nch, count_chunk, &x);
    for (uint64_t ch = 0; ch < nch; ch++)
        n += x.part[ch];
    free(x.part);
    return n;
}

static int check_threshold(Call *c, int k)
{
    if (c->a[k].is_buf || !val_is_num(c->a[k].v))
        return fail(c, "argument %d (threshold) must be a number", k + 1);
    return 0;
}

static int ref_count_below(Call *c)
{
    if (arg_buf(c, 0, "buffer") < 0 || check_threshold(c, 1) < 0)
        return -1;
    uint64_t n = count_cmp(c, &c->a[0], CMP_LT, c->a[1].v);
    return expect_counts(c, &n, 1);
}

static int ref_count_if(Call *c)
{
    const char *op = NULL;
    if (arg_buf(c, 0, "buffer") < 0 || !(op = arg_str(c, 1)) || check_threshold(c, 2) < 0)
        return -1;
    int k = 0;
    while (k < CMP_COUNT && strcmp(cmp_names[k], op) != 0)
        k++;
    if (k == CMP_COUNT)
        return fail(c, "unknown comparison \"%s\" (expected one of: < <= == != > >=)", op);
    uint64_t n = count_cmp(c, &c->a[0], (CmpOp)k, c->a[2].v);
    return expect_counts(c, &n, 1);
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

static void below_by_chunk(void *ctx, int w, uint64_t ch)
{
    /* locals: the counter stores could alias the context's fields */
    TallyCtx *x = ctx;
    const CmpPlan plan = *x->plan;
    const RefArg keys = *x->keys;
    uint64_t b, e, k = x->k, *cnt = x->cnt + (uint64_t)w * k;
    chunk_span(x->n, ch, &b, &e);
    for (uint64_t i = b; i < e; i++) {
        uint64_t key;
        if (!key_ok(&keys, i, k, &key)) {
            bad_note(&x->bad, w, i);
            return;
        }
        cnt[key] += cmp_at(&plan, i);
    }
}

static int ref_count_below_by(Call *c)
{
    uint64_t k = 0;
    if (arg_buf(c, 0, "buffer") < 0 || check_threshold(c, 1) < 0 ||
        arg_int_buf(c, 2, "keys") < 0 || arg_count(c, 3, "k", &k) < 0)
        return -1;
    const RefArg *buf = &c->a[0], *keys = &c->a[2];
    if (keys->count < buf->count)
        return fail(c, "keys has %llu elements, fewer than the buffer's %llu",
                    (unsigned long long)keys->count, (unsigned long long)buf->count);
    if (k != c->out_count)
        return expect_init(c, k, 0);
    CmpPlan plan;
    cmp_plan(&plan, buf, CMP_LT, c->a[1].v);
    uint64_t nch = nchunks_of(buf->count);
    int workers = workers_for(c, k > PARTIAL_BYTES ? PARTIAL_BYTES : k * 8, nch);
    TallyCtx x = {.n = buf->count, .k = k, .plan = &plan, .keys = keys};
    x.cnt = xcalloc(k * (uint64_t)workers, sizeof *x.cnt);
    bad_init(&x.bad);
    par_for(workers, nch, below_by_chunk, &x);
    counters_merge(x.cnt, workers, k);
    int rc = bad_report(c, &x.bad, keys, k);
    if (rc == 0)
        rc = expect_counts(c, x.cnt, k);
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

static int ref_histogram(Call *c)
{
    uint64_t bins = 0;
    int64_t lo, hi;
    if (arg_buf(c, 0, "buffer") < 0 || arg_count(c, 1, "bins", &bins) < 0 ||
        arg_int(c, 2, "lo", &lo) < 0 || arg_int(c, 3, "hi", &hi) < 0)
        return -1;
    if (lo > hi)
        return fail(c, "lo (%lld) > hi (%lld)", (long long)lo, (long long)hi);
    i128 span = (i128)hi - lo + 1;
    const RefArg *b = &c->a[0];
    uint64_t nch = nchunks_of(b->count);
    int workers = workers_for(c, bins > PARTIAL_BYTES ? PARTIAL_BYTES : bins * 8, nch);
    TallyCtx x = {.n = b->count, .k = bins, .buf = b, .lo = lo, .hi = hi,
                  .width = (span + (i128)bins - 1) / (i128)bins};
    x.cnt = xcalloc(bins * (uint64_t)workers, sizeof *x.cnt);
    par_for(workers, nch, histogram_chunk, &x);
    counters_merge(x.cnt, workers, bins);
    int rc = expect_counts(c, x.cnt, bins);
    free(x.cnt);
    return rc;
}

/* ---- sums ----------------------------------------------------------------------- */

/* Integer outputs take integer inputs only: a float summed into an integer has
 * no single meaning (truncate each term? the sum?). */
static int int_inputs(Call *c, int k)
{
    if (!c->out->is_float && c->a[k].t->is_float)
        return fail(c, "a %s buffer reduced into a %s output: use a float output",
                    c->a[k].t->name, c->out->name);
    return 0;
}

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
        s.f = xcalloc(nch ? nch : 1, sizeof *s.f);
    else
        s.u = xcalloc(nch ? nch : 1, sizeof *s.u);
    par_for(workers_for(c, 0, nch), nch, sum_chunk, &s);
    if (s.is_float) {
        c->exp->f[0] = acc_combine(0, s.f, nch, 1);
    } else {
        uint64_t u = 0;
        for (uint64_t ch = 0; ch < nch; ch++)
            u += s.u[ch];
        c->exp->u[0] = wrap(c->out, u);
    }
    free(s.f);
    free(s.u);
}

static int ref_sum(Call *c)
{
    if (arg_buf(c, 0, "buffer") < 0 || int_inputs(c, 0) < 0 || expect_init(c, 1, c->out->is_float) < 0)
        return -1;
    sum_into(c, &c->a[0], NULL);
    return 0;
}

static int ref_dot(Call *c)
{
    if (arg_buf(c, 0, "a") < 0 || arg_buf(c, 1, "b") < 0 || int_inputs(c, 0) < 0 ||
        int_inputs(c, 1) < 0)
        return -1;
    const RefArg *x = &c->a[0], *y = &c->a[1];
    if (x->count != y->count)
        return fail(c, "a has %llu elements, b %llu", (unsigned long long)x->count,
                    (unsigned long long)y->count);
    if (expect_init(c, 1, c->out->is_float) < 0)
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
        return fail(c, "rows * width overflows");
    uint64_t kw = rows * w, nch = nchunks_of(n);
    if (expect_init(c, kw, c->out->is_float) < 0)
        return -1;
    ScatterCtx x = {.keys = keys, .vals = vals, .n = n, .rows = rows, .w = w};
    bad_init(&x.bad);
    if (!c->out->is_float) {
        int workers = workers_for(c, kw > PARTIAL_BYTES ? PARTIAL_BYTES : kw * 8, nch);
        x.u = xcalloc(kw * (uint64_t)workers, sizeof *x.u);
        par_for(workers, nch, scatter_chunk, &x);
        counters_merge(x.u, workers, kw);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->u[j] = wrap(c->out, x.u[j]);
    } else if (nch <= 1 || kw <= PARTIAL_BYTES / sizeof(Acc) / nch) {
        x.stride = pad_slots(kw);
        x.acc = xcalloc(x.stride * (nch ? nch : 1), sizeof *x.acc);
        par_for(workers_for(c, 0, nch), nch, scatter_chunk, &x);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->f[j] = acc_combine(0, x.acc + j, nch, x.stride);
    } else {
        x.acc = xcalloc(kw, sizeof *x.acc);
        x.nparts = (uint64_t)workers_for(c, 0, rows);
        par_for((int)x.nparts, x.nparts, scatter_owned, &x);
        for (uint64_t j = 0; j < kw; j++)
            c->exp->f[j] = acc_get(&x.acc[j]);
    }
    free(x.u);
    free(x.acc);
    if (bad_report(c, &x.bad, keys, rows) < 0) {
        verify_expected_free(c->exp);
        return -1;
    }
    return 0;
}

static int ref_sum_by(Call *c)
{
    uint64_t k = 0;
    if (arg_buf(c, 0, "vals") < 0 || int_inputs(c, 0) < 0 || arg_int_buf(c, 1, "keys") < 0 ||
        arg_count(c, 2, "k", &k) < 0)
        return -1;
    if (c->a[1].count < c->a[0].count)
        return fail(c, "keys has %llu elements, fewer than vals' %llu",
                    (unsigned long long)c->a[1].count, (unsigned long long)c->a[0].count);
    return scatter_add(c, &c->a[1], &c->a[0], c->a[0].count, k, 1);
}

static int ref_index_add(Call *c)
{
    uint64_t rows = 0, w = 0;
    if (arg_int_buf(c, 0, "idx") < 0 || arg_buf(c, 1, "vals") < 0 || int_inputs(c, 1) < 0 ||
        arg_count(c, 2, "rows", &rows) < 0 || arg_count(c, 3, "w", &w) < 0)
        return -1;
    uint64_t n = c->a[0].count;
    if (n > UINT64_MAX / w || c->a[1].count < n * w)
        return fail(c, "vals has %llu elements, fewer than idx's %llu rows of %llu",
                    (unsigned long long)c->a[1].count, (unsigned long long)n,
                    (unsigned long long)w);
    return scatter_add(c, &c->a[0], &c->a[1], n, rows, w);
}

/* ---- reduce ------------------------------------------------------------------------ */

typedef enum {
    RED_ADD, RED_SUB, RED_AND, RED_OR, RED_XOR, RED_MAX, RED_MIN, RED_NANMAX, RED_NANMIN,
    RED_MAXIMUM, RED_MINIMUM, RED_EXCH, RED_COUNT
} RedOp;

static const struct {
    const char *name;
    int for_int, for_float;
} red_ops[RED_COUNT] = {
    {"add", 1, 1}, {"sub", 1, 1}, {"and", 1, 0}, {"or", 1, 0}, {"xor", 1, 0},
    {"max", 1, 1}, {"min", 1, 1}, {"nanmax", 0, 1}, {"nanmin", 0, 1},
    {"maximum", 0, 1}, {"minimum", 0, 1}, {"exch", 1, 1},
};

static inline double fold_f(RedOp op, double r, double v)
{
    switch (op) {
    case RED_ADD: return r + v;
    case RED_SUB: return r - v;
    case RED_MAX: case RED_NANMAX: return fmax(r, v);    /* maxNum */
    case RED_MIN: case RED_NANMIN: return fmin(r, v);
    case RED_MAXIMUM: return isnan(r) || isnan(v) ? NAN : fmax(r, v);
    case RED_MINIMUM: return isnan(r) || isnan(v) ? NAN : fmin(r, v);
    default: return r;
    }
}

/* Integers in the output type: operands wrapped to it, max/min by its
 * signedness, as the atomic on the output would do. */
static inline uint64_t fold_u(const ElemType *t, RedOp op, uint64_t r, uint64_t v)
{
    v = wrap(t, v);
    switch (op) {
    case RED_ADD: return wrap(t, r + v);
    case RED_SUB: return wrap(t, r - v);
    case RED_AND: return r & v;
    case RED_OR: return r | v;
    case RED_XOR: return r ^ v;
    case RED_MAX: return ival(t, v) > ival(t, r) ? v : r;
    case RED_MIN: return ival(t, v) < ival(t, r) ? v : r;
    default: return r;
    }
}

typedef struct RedCtx {
    const RefArg *b;
    const ElemType *out;
    RedOp op;
    uint64_t n, k, nparts;
    uint64_t stride;    /* per-chunk partials: k, padded */
    double r0;
    uint64_t init_u;
    Acc *acc;           /* float add/sub */
    double *f;          /* other float ops */
    uint64_t *u;        /* integer ops */
} RedCtx;

/* Fold elements [i0, i1) into slots base + j, j from j0 and wrapping at k.
 * One loop per slot kind, on locals. */
static void red_run(const RedCtx *x, RedOp op, uint64_t base, uint64_t j, uint64_t i0,
                    uint64_t i1)
{
    const ElemType *t = x->b->t, *out = x->out;
    const void *data = x->b->data;
    uint64_t k = x->k;
    if (x->acc) {
        Acc *a = x->acc + base;
        double sign = op == RED_ADD ? 1 : -1;
        for (uint64_t i = i0; i < i1; i++, j = j + 1 == k ? 0 : j + 1)
            acc_add(&a[j], sign * load_f(t, data, i));
    } else if (x->f) {
        double *f = x->f + base;
        for (uint64_t i = i0; i < i1; i++, j = j + 1 == k ? 0 : j + 1)
            f[j] = fold_f(op, f[j], load_f(t, data, i));
    } else {
        uint64_t *u = x->u + base;
        for (uint64_t i = i0; i < i1; i++, j = j + 1 == k ? 0 : j + 1)
            u[j] = fold_u(out, op, u[j], load_u(t, data, i));
    }
}

/* Few addresses: chunk ch folds into its own k slots, from the identity of
 * add/sub/xor (an integer sub chunk sums: r - a - b = r - (a + b)) and from
 * init for the idempotent ops. */
static void red_chunk(void *ctx, int w, uint64_t ch)
{
    (void)w;
    const RedCtx *x = ctx;
    RedOp op = x->op == RED_SUB && !x->acc ? RED_ADD : x->op;
    uint64_t b, e, k = x->k, base = ch * x->stride;
    chunk_span(x->n, ch, &b, &e);
    if (x->f)
        for (uint64_t j = 0; j < k; j++)
            x->f[base + j] = x->r0;
    if (x->u && op != RED_ADD && op != RED_XOR)
        for (uint64_t j = 0; j < k; j++)
            x->u[base + j] = x->init_u;
    red_run(x, op, base, b % k, b, e);
}

/* Many addresses: a range of addresses (columns of the n / k rows), each
 * folded in input order as a sequential fold would. */
static void red_columns(void *ctx, int w, uint64_t part)
{
    (void)w;
    const RedCtx *x = ctx;
    uint64_t j0, j1;
    part_span(x->k, x->nparts, part, &j0, &j1);
    for (uint64_t row = 0; row < x->n && j0 < j1; row += x->k)
        if (row + j0 < x->n)
            red_run(x, x->op, 0, j0, row + j0, row + j1 < x->n ? row + j1 : x->n);
}

static void reduce_values(Call *c, RedCtx *x)
{
    uint64_t k = x->k, nch = nchunks_of(x->n);
    int is_float = c->out->is_float, add = is_float && (x->op == RED_ADD || x->op == RED_SUB);
    if (k >= REDUCE_COLUMNS_MIN || nch > PARTIAL_BYTES / sizeof(Acc) / k) {
        if (add) {
            x->acc = xcalloc(k, sizeof *x->acc);
            for (uint64_t j = 0; j < k; j++)
                x->acc[j].s = x->r0;
        } else if (is_float) {
            x->f = c->exp->f;
            for (uint64_t j = 0; j < k; j++)
                x->f[j] = x->r0;
        } else {
            x->u = c->exp->u;
            for (uint64_t j = 0; j < k; j++)
                x->u[j] = x->init_u;
        }
        x->nparts = (uint64_t)workers_for(c, 0, k / 64 ? k / 64 : 1);
        par_for((int)x->nparts, x->nparts, red_columns, x);
        for (uint64_t j = 0; add && j < k; j++)
            c->exp->f[j] = acc_get(&x->acc[j]);
        free(x->acc);
        return;
    }
    x->stride = pad_slots(k);
    uint64_t slots = x->stride * (nch ? nch : 1);
    if (add)
        x->acc = xcalloc(slots, sizeof *x->acc);
    else if (is_float)
        x->f = xcalloc(slots, sizeof *x->f);
    else
        x->u = xcalloc(slots, sizeof *x->u);
    par_for(workers_for(c, 0, nch), nch, red_chunk, x);
    for (uint64_t j = 0; j < k; j++) {
        if (add) {
            c->exp->f[j] = acc_combine(x->r0, x->acc + j, nch, x->stride);
        } else if (is_float) {
            double r = x->r0;
            for (uint64_t ch = 0; ch < nch; ch++)
                r = fold_f(x->op, r, x->f[ch * x->stride + j]);
            c->exp->f[j] = r;
        } else {
            uint64_t r = x->init_u;
            for (uint64_t ch = 0; ch < nch; ch++)
                r = fold_u(c->out, x->op, r, x->u[ch * x->stride + j]);
            c->exp->u[j] = r;
        }
    }
    free(x->acc);
    free(x->f);
    free(x->u);
}

static int ref_reduce(Call *c)
{
    const char *name;
    uint64_t k = 0;
    if (!(name = arg_str(c, 0)) || arg_buf(c, 1, "buffer") < 0 || int_inputs(c, 1) < 0 ||
        arg_count(c, 2, "k", &k) < 0)
        return -1;
    if (c->a[3].is_buf || !val_is_num(c->a[3].v))
        return fail(c, "argument 4 (init) must be a number");
    int op = 0;
    while (op < RED_COUNT && strcmp(red_ops[op].name, name) != 0)
        op++;
    int is_float = c->out->is_float;
    if (op == RED_COUNT || !(is_float ? red_ops[op].for_float : red_ops[op].for_int)) {
        StrBuf names;
        sb_init(&names);
        for (int i = 0; i < RED_COUNT; i++)
            if (is_float ? red_ops[i].for_float : red_ops[i].for_int)
                sb_printf(&names, "%s%s", names.len ? " " : "", red_ops[i].name);
        fail(c, "op \"%s\" is not defined for a %s output (expected one of: %s)", name,
             c->out->name, sb_str(&names));
        sb_free(&names);
        return -1;
    }
    const RefArg *b = &c->a[1];
    Value init = c->a[3].v;
    uint64_t init_u = 0;
    if (!is_float) {
        int64_t iv;
        if (arg_int(c, 3, "init", &iv) < 0)
            return -1;
        init_u = wrap(c->out, (uint64_t)iv);
    }
    if (op == RED_EXCH) {
        /* Any written value or init: the membership test scans a copy of the
         * input at compare time, O(n) time and no set to build. */
        if (expect_init(c, k, is_float) < 0)
            return -1;
        Expected *e = c->exp;
        e->kind = EXPECT_MEMBER;
        free(e->f);
        free(e->u);
        e->f = NULL;
        e->u = NULL;
        size_t bytes = b->count * (size_t)b->t->size;
        e->member_vals = xmalloc(bytes ? bytes : 1);
        memcpy(e->member_vals, b->data, bytes);
        e->member_t = b->t;
        e->member_n = b->count;
        e->member_init_u = init_u;
        e->member_init_f = val_num(init);
        return 0;
    }
    if (expect_init(c, k, is_float) < 0)
        return -1;
    RedCtx x = {.b = b, .out = c->out, .op = (RedOp)op, .n = b->count, .k = k,
                .r0 = is_float ? val_num(init) : 0, .init_u = init_u};
    reduce_values(c, &x);
    return 0;
}

/* ---- counters ------------------------------------------------------------------------ */

/* m atomicInc / atomicDec on one address from x with limit lim, in closed form.
 * inc: old >= lim ? 0 : old + 1.  From x <= lim the state walks the cycle
 * 0..lim (length lim + 1): (x + m) mod (lim + 1).  From x > lim the first step
 * gives 0, then m - 1 steps along the cycle.
 * dec: (old == 0 || old > lim) ? lim : old - 1.  From x <= lim: (x - m) mod
 * (lim + 1); from x > lim the first step gives lim, then m - 1 steps down. */
static uint64_t wrap_steps(int inc, uint64_t x, uint64_t lim, uint64_t m)
{
    if (m == 0)
        return x;
    u128 cyc = (u128)lim + 1;
    if (x > lim) {
        x = inc ? 0 : lim;
        m--;
    }
    u128 mm = (u128)m % cyc;
    if (inc)
        return (uint64_t)(((u128)x + mm) % cyc);
    return (uint64_t)(((u128)x + cyc - mm) % cyc);
}

static int ref_wrap_count(Call *c)
{
    const char *op;
    int64_t n, init, lim;
    uint64_t k = 0;
    if (!(op = arg_str(c, 0)) || arg_int(c, 1, "n", &n) < 0 || arg_count(c, 2, "k", &k) < 0 ||
        arg_int(c, 3, "init", &init) < 0 || arg_int(c, 4, "lim", &lim) < 0)
        return -1;
    int inc = strcmp(op, "inc") == 0;
    if (!inc && strcmp(op, "dec") != 0)
        return fail(c, "op \"%s\" (expected \"inc\" or \"dec\")", op);
    if (n < 0)
        return fail(c, "n must be >= 0, got %lld", (long long)n);
    if (c->out->is_float)
        return fail(c, "atomicInc/atomicDec count in an unsigned integer, not %s", c->out->name);
    /* The hardware compares unsigned in the output's width. */
    const ElemType *ut = &elem_types[c->out->size == 8 ? ET_U64 : c->out->size == 4 ? ET_U32
                                     : c->out->size == 2 ? ET_U16 : ET_U8];
    uint64_t x = wrap(ut, (uint64_t)init), l = wrap(ut, (uint64_t)lim);
    uint64_t *v = xmalloc(k * sizeof *v);
    for (uint64_t j = 0; j < k; j++)
        v[j] = wrap_steps(inc, x, l, (uint64_t)n / k + (j < (uint64_t)n % k));
    int rc = expect_counts(c, v, k);
    free(v);
    return rc;
}

static int ref_tally(Call *c)
{
    int64_t n, init;
    uint64_t k = 0;
    if (arg_int(c, 0, "n", &n) < 0 || arg_count(c, 1, "k", &k) < 0 ||
        arg_int(c, 2, "init", &init) < 0)
        return -1;
    if (n < 0)
        return fail(c, "n must be >= 0, got %lld", (long long)n);
    uint64_t *v = xmalloc(k * sizeof *v);
    for (uint64_t j = 0; j < k; j++)
        v[j] = (uint64_t)init + (uint64_t)n / k + (j < (uint64_t)n % k);
    int rc;
    if (c->out->is_float) { /* init may be negative: convert as signed */
        rc = expect_init(c, k, 1);
        for (uint64_t j = 0; rc == 0 && j < k; j++)
            c->exp->f[j] = (double)(int64_t)v[j];
    } else {
        rc = expect_counts(c, v, k);
    }
    free(v);
    return rc;
}

static int ref_baseline(Call *c)
{
    return fail(c, "the baseline's output is the reference: the runner supplies it "
                   "through verify_from_output");
}

/* The reference functions; gen/expr.c knows the same names and arities. */
static const struct {
    const char *name;
    int nargs;
    int (*fn)(Call *c);
} refs[] = {
    {"count_below", 2, ref_count_below},
    {"count_if", 3, ref_count_if},
    {"count_below_by", 4, ref_count_below_by},
    {"histogram", 4, ref_histogram},
    {"sum", 1, ref_sum},
    {"dot", 2, ref_dot},
    {"sum_by", 3, ref_sum_by},
    {"index_add", 4, ref_index_add},
    {"reduce", 4, ref_reduce},
    {"wrap_count", 5, ref_wrap_count},
    {"tally", 3, ref_tally},
    {"baseline", 0, ref_baseline},
};

int verify_reference(const char *name, const RefArg *args, int nargs,
                     const ElemType *out_t, uint64_t out_count,
                     Expected *exp, KvxError *err)
{
    return verify_reference_threads(name, args, nargs, out_t, out_count, 1, exp, err);
}

int verify_reference_threads(const char *name, const RefArg *args, int nargs,
                             const ElemType *out_t, uint64_t out_count, int threads,
                             Expected *exp, KvxError *err)
{
    memset(exp, 0, sizeof *exp);
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    Call c = {name, args, nargs, out_t, out_count, exp, err, threads};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (strcmp(refs[i].name, name) != 0)
            continue;
        if (nargs != refs[i].nargs)
            return fail(&c, "takes %d argument%s, got %d", refs[i].nargs,
                        refs[i].nargs == 1 ? "" : "s", nargs);
        int rc = refs[i].fn(&c);
        if (rc < 0)
            verify_expected_free(exp);
        return rc;
    }
    kvx_error_set(err, KVX_EINPUT, NULL, "unknown reference function '%s'", name);
    return -1;
}

int verify_constant(Value v, const ElemType *out_t, uint64_t out_count, Expected *exp)
{
    memset(exp, 0, sizeof *exp);
    if (!val_is_num(v) && v.kind != VAL_BOOL)
        return -1;
    exp->kind = EXPECT_VALUES;
    exp->count = out_count;
    exp->is_float = out_t->is_float;
    if (out_t->is_float) {
        exp->f = xmalloc((out_count ? out_count : 1) * sizeof *exp->f);
        double d = v.kind == VAL_FLOAT ? v.d : (double)v.i;
        for (uint64_t j = 0; j < out_count; j++)
            exp->f[j] = d;
        return 0;
    }
    uint64_t u;
    if (v.kind == VAL_FLOAT) {
        /* an integer output equals only an integral constant */
        if (v.d != floor(v.d) || fabs(v.d) >= 0x1p64)
            return -1;
        u = v.d < 0 ? (uint64_t)(int64_t)v.d : (uint64_t)v.d;
    } else {
        u = (uint64_t)v.i;
    }
    exp->u = xmalloc((out_count ? out_count : 1) * sizeof *exp->u);
    u = wrap(out_t, u);
    for (uint64_t j = 0; j < out_count; j++)
        exp->u[j] = u;
    return 0;
}

int verify_from_output(const ElemType *t, const void *data, uint64_t count, Expected *exp)
{
    memset(exp, 0, sizeof *exp);
    exp->kind = EXPECT_VALUES;
    exp->count = count;
    exp->is_float = t->is_float;
    if (t->is_float) {
        exp->f = xmalloc((count ? count : 1) * sizeof *exp->f);
        for (uint64_t j = 0; j < count; j++)
            exp->f[j] = load_f(t, data, j);
    } else {
        exp->u = xmalloc((count ? count : 1) * sizeof *exp->u);
        for (uint64_t j = 0; j < count; j++)
            exp->u[j] = load_u(t, data, j);
    }
    return 0;
}

void verify_expected_free(Expected *exp)
{
    if (!exp)
        return;
    free(exp->f);
    free(exp->u);
    free(exp->set);
    free(exp->member_vals);
    memset(exp, 0, sizeof *exp);
}

/* ---- comparison ---------------------------------------------------------------------- */

/* Shortest decimal that reads back as the same value of type t (of f64 when
 * v lies beyond t's range: a reference of 2^20 for an f16 output prints as
 * 1048576, not as the inf it would round to). */
static void put_float(StrBuf *b, const ElemType *t, double v)
{
    double tmax = t->id == ET_F16 ? 65504.0 : t->id == ET_BF16 ? 0x1.fep127
                : t->id == ET_F32 ? 0x1.fffffep127 : INFINITY;
    if (fabs(v) > tmax)
        t = &elem_types[ET_F64];
    char buf[40];
    if (isnan(v) || isinf(v)) {
        sb_puts(b, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    int maxp = t->id == ET_F64 ? 17 : 9;
    for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        double back = strtod(buf, NULL);
        if (t->id == ET_F64 ? back == v
            : t->id == ET_F32 ? (float)back == (float)v
            : t->id == ET_F16 ? f32_to_f16((float)back) == f32_to_f16((float)v)
            : t->id == ET_BF16 ? f32_to_bf16((float)back) == f32_to_bf16((float)v)
            : back == v)
            break;
    }
    sb_puts(b, buf);
}

static void put_int(StrBuf *b, const ElemType *t, uint64_t v)
{
    if (t->is_signed)
        sb_printf(b, "%lld", (long long)(int64_t)v);
    else
        sb_printf(b, "%llu", (unsigned long long)v);
}

enum { LIST_MAX = 4 };

typedef struct Listing {
    StrBuf sb;
    int listed;
} Listing;

static void list_open(Listing *l, const char *bufname, uint64_t i)
{
    if (l->listed < LIST_MAX)
        sb_printf(&l->sb, "%s%s[%llu]: got ", l->listed ? "; " : "", bufname,
                  (unsigned long long)i);
}

static void list_close(Listing *l, VerifyReport *rep)
{
    if (rep->nmismatch > (uint64_t)l->listed)
        sb_printf(&l->sb, "; ... %llu more", (unsigned long long)(rep->nmismatch - l->listed));
    const char *s = sb_str(&l->sb);
    size_t n = strlen(s);
    if (n >= sizeof rep->first) { /* keep the tail readable when cut */
        n = sizeof rep->first - 4;
        memcpy(rep->first, s, n);
        memcpy(rep->first + n, "...", 4);
    } else {
        memcpy(rep->first, s, n + 1);
    }
    sb_free(&l->sb);
}

static void compare_member(const Expected *exp, const ElemType *t, const void *out,
                           const char *bufname, VerifyReport *rep, Listing *l)
{
    uint64_t k = exp->count;
    unsigned char *found = xcalloc(k ? k : 1, 1);
    /* Init and the written values are compared as the output type holds them:
     * floats rounded to t, integers wrapped. */
    uint8_t scratch[8];
    elem_set_f64(t, scratch, 0, exp->member_init_f);
    double init_f = load_f(t, scratch, 0);
    for (uint64_t j = 0; j < k; j++) {
        double o = t->is_float ? load_f(t, out, j) : 0;
        found[j] = t->is_float ? (o == init_f || (isnan(o) && isnan(init_f)))
                               : load_u(t, out, j) == wrap(t, exp->member_init_u);
    }
    for (uint64_t i = 0, j = 0; i < exp->member_n; i++, j = j + 1 == k ? 0 : j + 1) {
        if (found[j])
            continue;
        if (t->is_float) {
            elem_set_f64(t, scratch, 0, load_f(exp->member_t, exp->member_vals, i));
            double w = load_f(t, scratch, 0), o = load_f(t, out, j);
            found[j] = w == o || (isnan(w) && isnan(o));
        } else {
            found[j] = wrap(t, load_u(exp->member_t, exp->member_vals, i)) == load_u(t, out, j);
        }
    }
    for (uint64_t j = 0; j < k; j++) {
        if (found[j])
            continue;
        list_open(l, bufname, j);
        if (l->listed < LIST_MAX) {
            if (t->is_float)
                put_float(&l->sb, t, load_f(t, out, j));
            else
                put_int(&l->sb, t, load_u(t, out, j));
            sb_puts(&l->sb, ", not one of the values written there or init");
            l->listed++;
        }
        rep->nmismatch++;
    }
    free(found);
    rep->rel_err = rep->nmismatch ? 1 : 0;
}

static void compare_ints(const Expected *exp, const ElemType *t, const void *out,
                         const char *bufname, VerifyReport *rep, Listing *l)
{
    for (uint64_t j = 0; j < exp->count; j++) {
        uint64_t got = load_u(t, out, j), want = wrap(t, exp->u[j]);
        if (got == want)
            continue;
        rep->nmismatch++;
        i128 d = ival(t, got) - ival(t, want);
        double ad = (double)(d < 0 ? -d : d);
        rep->max_abs_err = ad > rep->max_abs_err ? ad : rep->max_abs_err;
        if (l->listed < LIST_MAX) {
            list_open(l, bufname, j);
            put_int(&l->sb, t, got);
            sb_puts(&l->sb, ", expected ");
            put_int(&l->sb, t, want);
            l->listed++;
        }
    }
    rep->rel_err = rep->nmismatch ? 1 : 0;
}

/* Norm-wise: ok when ||out - ref|| <= rtol * ||ref|| (absolute when ref is all
 * zero) and no element is non-finite where ref is finite (or differs from a
 * non-finite ref).  nmismatch counts the non-finite disagreements and, when the
 * norm test fails, the elements whose own error exceeds rtol * |ref| (rtol when
 * ref is 0): those are what the listing shows. */
static void compare_floats(const Expected *exp, const ElemType *t, const void *out,
                           const char *bufname, double rtol, VerifyReport *rep, Listing *l)
{
    long double dd = 0, rr = 0; /* long double: squares of 1e200 stay finite */
    uint64_t nonfinite = 0;
    for (uint64_t j = 0; j < exp->count; j++) {
        double got = load_f(t, out, j), want = exp->f[j];
        if (!isfinite(want) || !isfinite(got)) {
            int same = (isnan(want) && isnan(got)) || got == want;
            nonfinite += !same;
            continue;
        }
        long double d = (long double)got - want;
        dd += d * d;
        rr += (long double)want * want;
        double ad = fabs(got - want);
        rep->max_abs_err = ad > rep->max_abs_err ? ad : rep->max_abs_err;
    }
    double num = sqrtl(dd), den = sqrtl(rr);
    rep->rel_err = den > 0 ? num / den : num;
    if (nonfinite) {
        rep->rel_err = INFINITY;
        rep->max_abs_err = INFINITY;
    }
    int norm_ok = !(rep->rel_err > rtol); /* a NaN error is a failure too */
    for (uint64_t j = 0; j < exp->count; j++) {
        double got = load_f(t, out, j), want = exp->f[j];
        int bad;
        if (!isfinite(want) || !isfinite(got))
            bad = !((isnan(want) && isnan(got)) || got == want);
        else
            bad = !norm_ok && fabs(got - want) > rtol * (want != 0 ? fabs(want) : 1);
        if (!bad)
            continue;
        rep->nmismatch++;
        if (l->listed < LIST_MAX) {
            list_open(l, bufname, j);
            put_float(&l->sb, t, got);
            sb_puts(&l->sb, ", expected ");
            put_float(&l->sb, t, want);
            l->listed++;
        }
    }
    if (!norm_ok && rep->nmismatch == 0)
        rep->nmismatch = exp->count; /* spread thinly: no element stands out */
}

void verify_compare(const Expected *exp, const ElemType *t, const void *out,
                    const char *bufname, double rtol, VerifyReport *rep)
{
    memset(rep, 0, sizeof *rep);
    Listing l = {0};
    sb_init(&l.sb);
    if (exp->kind == EXPECT_MEMBER && exp->member_vals)
        compare_member(exp, t, out, bufname, rep, &l);
    else if (exp->kind == EXPECT_MEMBER) {
        /* one set for every element: a plain membership scan of the set */
        for (uint64_t j = 0; j < exp->count; j++) {
            double o = load_f(t, out, j);
            uint64_t s = 0;
            while (s < exp->nset && !(exp->set[s] == o || (isnan(o) && isnan(exp->set[s]))))
                s++;
            if (s < exp->nset)
                continue;
            rep->nmismatch++;
            if (l.listed < LIST_MAX) {
                list_open(&l, bufname, j);
                put_float(&l.sb, t, o);
                sb_puts(&l.sb, ", not in the expected set");
                l.listed++;
            }
        }
        rep->rel_err = rep->nmismatch ? 1 : 0;
    } else if (exp->is_float)
        compare_floats(exp, t, out, bufname, rtol, rep, &l);
    else
        compare_ints(exp, t, out, bufname, rep, &l);
    rep->ok = rep->nmismatch == 0;
    list_close(&l, rep);
}
