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
 * ("chunks and workers" in verify_internal.h says how each is split).
 *
 * The module is four files:
 *   verify.c           argument checks, the worker pool, the table of
 *                      references and the entry points, the comparison
 *   verify_ref.c       count_below, count_if, count_below_by, histogram, sum,
 *                      dot, sum_by, index_add
 *   verify_reduce.c    reduce, wrap_count, tally
 *   verify_internal.h  what they share: typed access, Call, chunking */
#include "verify_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/pool.h"

/* ---- arguments ---------------------------------------------------------------- */

int verify_ref_fail(Call *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kvx_error_set(c->err, KVX_EINPUT, NULL, "%s: %s", c->name, msg);
    return -1;
}

int verify_ref_arg_int(Call *c, int k, const char *what, int64_t *out)
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
    return verify_ref_fail(c, "argument %d (%s) must be an integer", k + 1, what);
}

int verify_ref_arg_count(Call *c, int k, const char *what, uint64_t *out)
{
    int64_t v = 0; /* verify_ref_arg_int sets it on success; GCC warns otherwise */
    if (verify_ref_arg_int(c, k, what, &v) < 0)
        return -1;
    if (v < 1)
        return verify_ref_fail(c, "argument %d (%s) must be >= 1, got %lld", k + 1, what, (long long)v);
    *out = (uint64_t)v;
    return 0;
}

int verify_ref_arg_buf(Call *c, int k, const char *what)
{
    if (!c->a[k].is_buf || !c->a[k].t)
        return verify_ref_fail(c, "argument %d (%s) must be a buffer", k + 1, what);
    return 0;
}

int verify_ref_arg_int_buf(Call *c, int k, const char *what)
{
    if (verify_ref_arg_buf(c, k, what) < 0)
        return -1;
    if (c->a[k].t->is_float)
        return verify_ref_fail(c, "argument %d (%s) must be an integer buffer, not %s", k + 1, what,
                        c->a[k].t->name);
    return 0;
}

const char *verify_ref_arg_str(Call *c, int k)
{
    if (c->a[k].is_buf || c->a[k].v.kind != VAL_STR || !c->a[k].v.s) {
        verify_ref_fail(c, "argument %d must be a string", k + 1);
        return NULL;
    }
    return c->a[k].v.s;
}

/* The result has n elements: the output buffer must hold exactly that many. */
int verify_ref_expect_init(Call *c, uint64_t n, int is_float)
{
    if (n != c->out_count)
        return verify_ref_fail(c, "the reference has %llu element%s but the output buffer has %llu",
                        (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)c->out_count);
    Expected *e = c->exp;
    memset(e, 0, sizeof *e);
    e->kind = EXPECT_VALUES;
    e->count = n;
    e->is_float = is_float;
    if (is_float)
        e->f = mem_calloc(n ? n : 1, sizeof *e->f);
    else
        e->u = mem_calloc(n ? n : 1, sizeof *e->u);
    return 0;
}

/* Counts (and other integer results) into the output, whatever its type. */
int verify_ref_expect_counts(Call *c, const uint64_t *v, uint64_t n)
{
    if (verify_ref_expect_init(c, n, c->out->is_float) < 0)
        return -1;
    for (uint64_t j = 0; j < n; j++) {
        if (c->out->is_float)
            c->exp->f[j] = (double)v[j];
        else
            c->exp->u[j] = wrap(c->out, v[j]);
    }
    return 0;
}

/* keys[i] for i < n, checked against [0, k). */
int verify_ref_key_at(Call *c, const RefArg *keys, uint64_t i, uint64_t k, uint64_t *out)
{
    uint64_t key = load_u(keys->t, keys->data, i);
    if (!key_ok(keys, i, k, out))
        return verify_ref_fail(c, "key[%llu] = %lld is outside 0..%llu", (unsigned long long)i,
                        (long long)key, (unsigned long long)(k - 1));
    *out = key;
    return 0;
}

/* Integer outputs take integer inputs only: a float summed into an integer has
 * no single meaning (truncate each term? the sum?). */
int verify_ref_int_inputs(Call *c, int k)
{
    if (!c->out->is_float && c->a[k].t->is_float)
        return verify_ref_fail(c, "a %s buffer reduced into a %s output: use a float output",
                        c->a[k].t->name, c->out->name);
    return 0;
}

/* ---- chunks and workers (the plan is in verify_internal.h) --------------------- */

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

void verify_ref_par_for(int workers, uint64_t ntasks, void (*fn)(void *, int, uint64_t), void *ctx)
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

int verify_ref_workers_for(const Call *c, uint64_t per_worker, uint64_t ntasks)
{
    uint64_t w = (uint64_t)c->threads;
    uint64_t fit = per_worker ? PARTIAL_BYTES / per_worker : w;
    w = w < fit ? w : fit;
    w = w < ntasks ? w : ntasks;
    return w < 1 ? 1 : (int)w;
}

void verify_ref_counters_merge(uint64_t *cnt, int workers, uint64_t k)
{
    for (int w = 1; w < workers; w++)
        for (uint64_t j = 0; j < k; j++)
            cnt[j] += cnt[(uint64_t)w * k + j];
}

double verify_ref_acc_combine(double start, const Acc *p, uint64_t nchunks, uint64_t stride)
{
    Acc t = {start, 0};
    for (uint64_t ch = 0; ch < nchunks; ch++) {
        acc_add(&t, p[ch * stride].s);
        acc_add(&t, p[ch * stride].c);
    }
    return acc_get(&t);
}

int verify_ref_bad_report(Call *c, const BadKey *b, const RefArg *keys, uint64_t k)
{
    uint64_t first = UINT64_MAX, key;
    for (int w = 0; w < MAX_WORKERS; w++)
        first = b->at[w] < first ? b->at[w] : first;
    return first == UINT64_MAX ? 0 : verify_ref_key_at(c, keys, first, k, &key);
}

/* ---- the table of references and the entry points ------------------------------ */

/* A part of an input, as it was uploaded: the output must equal it. */
static int ref_slice(Call *c)
{
    uint64_t start = (uint64_t)c->a[1].v.i, count = (uint64_t)c->a[2].v.i;
    const RefArg *b = &c->a[0];
    Expected tmp;
    verify_from_output(b->t, (const char *)b->data + start * (uint64_t)b->t->size, count, &tmp);
    *c->exp = tmp;
    return 0;
}

/* The computations of core/refs.c's table, by name: every row of that table
 * has one here (test_verify checks), and refs_check_args has run first. */
static const struct {
    const char *name;
    int (*fn)(Call *c);
} refs[] = {
    {"count_below", verify_ref_count_below},
    {"count_if", verify_ref_count_if},
    {"count_below_by", verify_ref_count_below_by},
    {"histogram", verify_ref_histogram},
    {"sum", verify_ref_sum},
    {"dot", verify_ref_dot},
    {"sum_by", verify_ref_sum_by},
    {"index_add", verify_ref_index_add},
    {"reduce", verify_ref_reduce},
    {"wrap_count", verify_ref_wrap_count},
    {"tally", verify_ref_tally},
    {"slice", ref_slice},
};

int verify_has_reference(const char *name)
{
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (strcmp(refs[i].name, name) == 0)
            return 1;
    return 0;
}

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
    if (threads <= 0)
        threads = pool_cores();
    Call c = {name, args, nargs, out_t, out_count, exp, err, threads};
    const RefSig *sig = refs_find(name);
    for (size_t i = 0; sig && i < sizeof refs / sizeof refs[0]; i++) {
        if (strcmp(refs[i].name, name) != 0)
            continue;
        if (refs_check_args(sig, args, nargs, out_t, out_count, err) < 0)
            return -1;
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
        exp->f = mem_alloc((out_count ? out_count : 1) * sizeof *exp->f);
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
    exp->u = mem_alloc((out_count ? out_count : 1) * sizeof *exp->u);
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
        exp->f = mem_alloc((count ? count : 1) * sizeof *exp->f);
        for (uint64_t j = 0; j < count; j++)
            exp->f[j] = load_f(t, data, j);
    } else {
        exp->u = mem_alloc((count ? count : 1) * sizeof *exp->u);
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
            : t->id == ET_F16 ? elem_f16_from_f32((float)back) == elem_f16_from_f32((float)v)
            : t->id == ET_BF16 ? elem_bf16_from_f32((float)back) == elem_bf16_from_f32((float)v)
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

void verify_put_elem(StrBuf *b, const ElemType *t, uint64_t u, double f)
{
    if (t->is_float)
        put_float(b, t, f);
    else
        put_int(b, t, u);
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

/* found[j] |= some v[row + j] equals o[j], row by row of k: the written
 * values and the output of one type, compared as numbers (a NaN matches a
 * NaN, and -0 matches 0, for floats). */
#define MEMBER_ROWS(T, EQ)                                                                  \
    do {                                                                                    \
        const T *v = vals, *o = out;                                                        \
        for (uint64_t row = 0; row < n; row += k) {                                         \
            uint64_t m = n - row < k ? n - row : k;                                         \
            for (uint64_t j = 0; j < m; j++)                                                \
                found[j] |= EQ(v[row + j], o[j]);                                           \
        }                                                                                   \
    } while (0)
#define EQ_BITS(a, b) ((a) == (b))
#define EQ_NUM(a, b) ((a) == (b) || ((a) != (a) && (b) != (b)))

/* The scan of compare_member where the written values have the output's own
 * 32- or 64-bit type (atomicExch's case): typed rows, no conversion.  1 done,
 * 0 not such a type. */
static int member_rows_same(const ElemType *t, const void *vals, const void *out, uint64_t n, uint64_t k,
                            unsigned char *found)
{
    if (k == 0)
        return 0;
    if (t->id == ET_F32)
        MEMBER_ROWS(float, EQ_NUM);
    else if (t->id == ET_F64)
        MEMBER_ROWS(double, EQ_NUM);
    else if (!t->is_float && t->size == 4)
        MEMBER_ROWS(uint32_t, EQ_BITS);
    else if (!t->is_float && t->size == 8)
        MEMBER_ROWS(uint64_t, EQ_BITS);
    else
        return 0;
    return 1;
}

static void compare_member(const Expected *exp, const ElemType *t, const void *out,
                           const char *bufname, VerifyReport *rep, Listing *l)
{
    uint64_t k = exp->count;
    unsigned char *found = mem_calloc(k ? k : 1, 1);
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
    int same = exp->member_t->id == t->id &&
               member_rows_same(t, exp->member_vals, out, exp->member_n, k, found);
    for (uint64_t i = 0, j = 0; !same && i < exp->member_n; i++, j = j + 1 == k ? 0 : j + 1) {
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
