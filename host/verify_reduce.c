/* verify_reduce: the host references for atomic read-modify-write families:
 * reduce (the fold of an atomic op over addresses i % k) and the closed forms
 * of wrap_count (atomicInc/atomicDec) and tally.  Each is a ref_NAME(Call *)
 * of the table in verify.c; semantics in verify.h.
 *
 * Float max/min (reduce): kvx's "max"/"min" are IEEE 754-2008 maxNum/minNum,
 * the rule of fmaxf/fminf and of the hardware's float atomic max/min: a NaN
 * operand is ignored when the other is a number, so the fold is NaN only when
 * init and every value are NaN.  "nanmax"/"nanmin" (NaN ignored unless all
 * are NaN) are therefore the same function and kept as numpy-style names.
 * "maximum"/"minimum" are the NaN-propagating IEEE 754-2019 operations (PTX
 * max.NaN, __hmax_nan): NaN when init or any value is NaN.  Signed zeros
 * compare equal, as they do when outputs are checked. */
#include "verify_internal.h"

#include <stdlib.h>

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
            x->acc = mem_calloc(k, sizeof *x->acc);
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
        x->nparts = (uint64_t)verify_ref_workers_for(c, 0, k / 64 ? k / 64 : 1);
        verify_ref_par_for((int)x->nparts, x->nparts, red_columns, x);
        for (uint64_t j = 0; add && j < k; j++)
            c->exp->f[j] = acc_get(&x->acc[j]);
        free(x->acc);
        return;
    }
    x->stride = pad_slots(k);
    uint64_t slots = x->stride * (nch ? nch : 1);
    if (add)
        x->acc = mem_calloc(slots, sizeof *x->acc);
    else if (is_float)
        x->f = mem_calloc(slots, sizeof *x->f);
    else
        x->u = mem_calloc(slots, sizeof *x->u);
    verify_ref_par_for(verify_ref_workers_for(c, 0, nch), nch, red_chunk, x);
    for (uint64_t j = 0; j < k; j++) {
        if (add) {
            c->exp->f[j] = verify_ref_acc_combine(x->r0, x->acc + j, nch, x->stride);
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

int verify_ref_reduce(Call *c)
{
    const char *name;
    uint64_t k = 0;
    if (!(name = verify_ref_arg_str(c, 0)) || verify_ref_arg_buf(c, 1, "buffer") < 0 ||
        verify_ref_int_inputs(c, 1) < 0 || verify_ref_arg_count(c, 2, "k", &k) < 0)
        return -1;
    if (c->a[3].is_buf || !val_is_num(c->a[3].v))
        return verify_ref_fail(c, "argument 4 (init) must be a number");
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
        verify_ref_fail(c, "op \"%s\" is not defined for a %s output (expected one of: %s)", name,
                 c->out->name, sb_str(&names));
        sb_free(&names);
        return -1;
    }
    const RefArg *b = &c->a[1];
    Value init = c->a[3].v;
    uint64_t init_u = 0;
    if (!is_float) {
        int64_t iv;
        if (verify_ref_arg_int(c, 3, "init", &iv) < 0)
            return -1;
        init_u = wrap(c->out, (uint64_t)iv);
    }
    if (op == RED_EXCH) {
        /* Any written value or init: the membership test scans a copy of the
         * input at compare time, O(n) time and no set to build. */
        if (verify_ref_expect_init(c, k, is_float) < 0)
            return -1;
        Expected *e = c->exp;
        e->kind = EXPECT_MEMBER;
        free(e->f);
        free(e->u);
        e->f = NULL;
        e->u = NULL;
        size_t bytes = b->count * (size_t)b->t->size;
        e->member_vals = mem_alloc(bytes ? bytes : 1);
        memcpy(e->member_vals, b->data, bytes);
        e->member_t = b->t;
        e->member_n = b->count;
        e->member_init_u = init_u;
        e->member_init_f = val_num(init);
        return 0;
    }
    if (verify_ref_expect_init(c, k, is_float) < 0)
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

int verify_ref_wrap_count(Call *c)
{
    const char *op;
    int64_t n, init, lim;
    uint64_t k = 0;
    if (!(op = verify_ref_arg_str(c, 0)) || verify_ref_arg_int(c, 1, "n", &n) < 0 ||
        verify_ref_arg_count(c, 2, "k", &k) < 0 || verify_ref_arg_int(c, 3, "init", &init) < 0 ||
        verify_ref_arg_int(c, 4, "lim", &lim) < 0)
        return -1;
    int inc = strcmp(op, "inc") == 0;
    if (!inc && strcmp(op, "dec") != 0)
        return verify_ref_fail(c, "op \"%s\" (expected \"inc\" or \"dec\")", op);
    if (n < 0)
        return verify_ref_fail(c, "n must be >= 0, got %lld", (long long)n);
    if (c->out->is_float)
        return verify_ref_fail(c, "atomicInc/atomicDec count in an unsigned integer, not %s",
                        c->out->name);
    /* The hardware compares unsigned in the output's width. */
    const ElemType *ut = &elem_types[c->out->size == 8 ? ET_U64 : c->out->size == 4 ? ET_U32
                                     : c->out->size == 2 ? ET_U16 : ET_U8];
    uint64_t x = wrap(ut, (uint64_t)init), l = wrap(ut, (uint64_t)lim);
    uint64_t *v = mem_alloc(k * sizeof *v);
    for (uint64_t j = 0; j < k; j++)
        v[j] = wrap_steps(inc, x, l, (uint64_t)n / k + (j < (uint64_t)n % k));
    int rc = verify_ref_expect_counts(c, v, k);
    free(v);
    return rc;
}

int verify_ref_tally(Call *c)
{
    int64_t n, init;
    uint64_t k = 0;
    if (verify_ref_arg_int(c, 0, "n", &n) < 0 || verify_ref_arg_count(c, 1, "k", &k) < 0 ||
        verify_ref_arg_int(c, 2, "init", &init) < 0)
        return -1;
    if (n < 0)
        return verify_ref_fail(c, "n must be >= 0, got %lld", (long long)n);
    uint64_t *v = mem_alloc(k * sizeof *v);
    for (uint64_t j = 0; j < k; j++)
        v[j] = (uint64_t)init + (uint64_t)n / k + (j < (uint64_t)n % k);
    int rc;
    if (c->out->is_float) { /* init may be negative: convert as signed */
        rc = verify_ref_expect_init(c, k, 1);
        for (uint64_t j = 0; rc == 0 && j < k; j++)
            c->exp->f[j] = (double)(int64_t)v[j];
    } else {
        rc = verify_ref_expect_counts(c, v, k);
    }
    free(v);
    return rc;
}
