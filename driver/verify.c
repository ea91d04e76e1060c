/* verify: host references for the built-in workload families and the
 * comparison of a variant's output with them (semantics in verify.h).
 *
 * Integer references are computed modulo 2^64 and stored wrapped to the output
 * type: masked to its width and sign-extended when it is signed, so that
 * exp->u[j] read as int64 is the value itself.  The reference's arithmetic
 * follows the output type, not the input's: an integer output gets integer
 * arithmetic (float inputs are then an argument error), a float output gets
 * double arithmetic with compensated (Neumaier) sums, so that 2^28 terms keep
 * the reference well inside the f64 tolerance.
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
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 i128;

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
static uint64_t wrap(const ElemType *t, uint64_t v)
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

/* keys[i] for i < n, checked against [0, k). */
static int key_at(Call *c, const RefArg *keys, uint64_t i, uint64_t k, uint64_t *out)
{
    uint64_t key = load_u(keys->t, keys->data, i);
    if (ival(keys->t, key) < 0 || ival(keys->t, key) >= (i128)k)
        return fail(c, "key[%llu] = %lld is outside 0..%llu", (unsigned long long)i,
                    (long long)key, (unsigned long long)(k - 1));
    *out = key;
    return 0;
}

/* ---- comparisons (count_below, count_if) --------------------------------------- */

typedef enum { CMP_LT, CMP_LE, CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_COUNT } CmpOp;
static const char *const cmp_names[CMP_COUNT] = {"<", "<=", "==", "!=", ">", ">="};

static int cmp_holds(CmpOp op, int c) /* c = sign of (e - v) */
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

/* Elements e of buf with `e op v`.  Integer elements are compared with v
 * exactly: a float threshold becomes the integer one that selects the same
 * integers (e < 2.5 is e < 3), so nothing is lost to double rounding. */
static uint64_t count_cmp(const RefArg *buf, CmpOp op, Value v)
{
    uint64_t n = 0;
    const ElemType *t = buf->t;
    if (t->is_float) {
        double x = val_num(v);
        for (uint64_t i = 0; i < buf->count; i++) {
            double e = load_f(t, buf->data, i);
            int hit;
            switch (op) { /* IEEE: every comparison with NaN is false but != */
            case CMP_LT: hit = e < x; break;
            case CMP_LE: hit = e <= x; break;
            case CMP_EQ: hit = e == x; break;
            case CMP_NE: hit = e != x; break;
            case CMP_GT: hit = e > x; break;
            default: hit = e >= x; break;
            }
            n += hit;
        }
        return n;
    }
    i128 thr;
    if (v.kind == VAL_FLOAT) {
        double d = v.d;
        if (d != d)
            return op == CMP_NE ? buf->count : 0;
        int integral = d == floor(d);
        if (!integral && (op == CMP_EQ || op == CMP_NE))
            return op == CMP_NE ? buf->count : 0;
        if (op == CMP_LT || op == CMP_GE)
            d = ceil(d);
        else if (op == CMP_LE || op == CMP_GT)
            d = floor(d);
        d = d > 0x1p100 ? 0x1p100 : d < -0x1p100 ? -0x1p100 : d;
        thr = (i128)d;
    } else {
        thr = v.i;
    }
    for (uint64_t i = 0; i < buf->count; i++) {
        i128 e = ival(t, load_u(t, buf->data, i));
        n += cmp_holds(op, (e > thr) - (e < thr));
    }
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
    uint64_t n = count_cmp(&c->a[0], CMP_LT, c->a[1].v);
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
    uint64_t n = count_cmp(&c->a[0], (CmpOp)k, c->a[2].v);
    return expect_counts(c, &n, 1);
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
    uint64_t *cnt = xcalloc(k, sizeof *cnt);
    RefArg one = *buf;
    for (uint64_t i = 0; i < buf->count; i++) {
        uint64_t key;
        if (key_at(c, keys, i, k, &key) < 0) {
            free(cnt);
            return -1;
        }
        /* one element at a time through the same exact comparison */
        one.data = (const char *)buf->data + i * (uint64_t)buf->t->size;
        one.count = 1;
        cnt[key] += count_cmp(&one, CMP_LT, c->a[1].v);
    }
    int rc = expect_counts(c, cnt, k);
    free(cnt);
    return rc;
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
    i128 width = (span + (i128)bins - 1) / (i128)bins;
    const RefArg *b = &c->a[0];
    uint64_t *cnt = xcalloc(bins, sizeof *cnt);
    for (uint64_t i = 0; i < b->count; i++) {
        if (b->t->is_float) {
            double v = load_f(b->t, b->data, i);
            if (v >= (double)lo && v <= (double)hi) /* NaN fails both */
                cnt[(uint64_t)floor((v - (double)lo) / (double)width)]++;
        } else {
            i128 v = ival(b->t, load_u(b->t, b->data, i));
            if (v >= lo && v <= hi)
                cnt[(uint64_t)((v - lo) / width)]++;
        }
    }
    int rc = expect_counts(c, cnt, bins);
    free(cnt);
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

static int ref_sum(Call *c)
{
    if (arg_buf(c, 0, "buffer") < 0 || int_inputs(c, 0) < 0 || expect_init(c, 1, c->out->is_float) < 0)
        return -1;
    const RefArg *b = &c->a[0];
    if (c->out->is_float) {
        Acc a = {0, 0};
        for (uint64_t i = 0; i < b->count; i++)
            acc_add(&a, load_f(b->t, b->data, i));
        c->exp->f[0] = acc_get(&a);
    } else {
        uint64_t s = 0;
        for (uint64_t i = 0; i < b->count; i++)
            s += load_u(b->t, b->data, i);
        c->exp->u[0] = wrap(c->out, s);
    }
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
    if (c->out->is_float) {
        Acc a = {0, 0};
        for (uint64_t i = 0; i < x->count; i++)
            acc_add(&a, load_f(x->t, x->data, i) * load_f(y->t, y->data, i));
        c->exp->f[0] = acc_get(&a);
    } else {
        uint64_t s = 0;
        for (uint64_t i = 0; i < x->count; i++)
            s += load_u(x->t, x->data, i) * load_u(y->t, y->data, i);
        c->exp->u[0] = wrap(c->out, s);
    }
    return 0;
}

/* Scatter-add of n rows of w values: row key(i) += vals[i*w .. i*w+w). */
static int scatter_add(Call *c, const RefArg *keys, const RefArg *vals, uint64_t n,
                       uint64_t rows, uint64_t w)
{
    if (rows > UINT64_MAX / w)
        return fail(c, "rows * width overflows");
    if (expect_init(c, rows * w, c->out->is_float) < 0)
        return -1;
    Acc *acc = c->out->is_float ? xcalloc(rows * w, sizeof *acc) : NULL;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r;
        if (key_at(c, keys, i, rows, &r) < 0) {
            free(acc);
            verify_expected_free(c->exp);
            return -1;
        }
        for (uint64_t j = 0; j < w; j++) {
            if (acc)
                acc_add(&acc[r * w + j], load_f(vals->t, vals->data, i * w + j));
            else
                c->exp->u[r * w + j] += load_u(vals->t, vals->data, i * w + j);
        }
    }
    for (uint64_t j = 0; j < rows * w; j++) {
        if (acc)
            c->exp->f[j] = acc_get(&acc[j]);
        else
            c->exp->u[j] = wrap(c->out, c->exp->u[j]);
    }
    free(acc);
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

static double fold_f(RedOp op, double r, double v)
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
static uint64_t fold_u(const ElemType *t, RedOp op, uint64_t r, uint64_t v)
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
    if (is_float) {
        double r0 = val_num(init);
        if (op == RED_ADD || op == RED_SUB) {
            Acc *acc = xcalloc(k, sizeof *acc);
            for (uint64_t j = 0; j < k; j++)
                acc[j].s = r0;
            for (uint64_t i = 0, j = 0; i < b->count; i++, j = j + 1 == k ? 0 : j + 1) {
                double v = load_f(b->t, b->data, i);
                acc_add(&acc[j], op == RED_ADD ? v : -v);
            }
            for (uint64_t j = 0; j < k; j++)
                c->exp->f[j] = acc_get(&acc[j]);
            free(acc);
        } else {
            for (uint64_t j = 0; j < k; j++)
                c->exp->f[j] = r0;
            for (uint64_t i = 0, j = 0; i < b->count; i++, j = j + 1 == k ? 0 : j + 1)
                c->exp->f[j] = fold_f((RedOp)op, c->exp->f[j], load_f(b->t, b->data, i));
        }
    } else {
        for (uint64_t j = 0; j < k; j++)
            c->exp->u[j] = init_u;
        for (uint64_t i = 0, j = 0; i < b->count; i++, j = j + 1 == k ? 0 : j + 1)
            c->exp->u[j] = fold_u(c->out, (RedOp)op, c->exp->u[j], load_u(b->t, b->data, i));
    }
    return 0;
}

/* ---- counters ------------------------------------------------------------------------ */

/* m atomicInc / atomicDec on one address from x with limit lim, in closed form.
 * inc: old >= lim ? 0 : old + 1.  From x <= lim the state walks the cycle
 * 0..lim (length lim + 1): (x + m) mod (lim + 1).  From x > lim the first step
 * gives 0, then m - 1 steps along the cycle.
 * dec: (old == 0 || old > lim) ? lim : old - 1.  From x <= lim: (x - m) mod
 * (lim + 1); from x > lim the first step gives lim, then m - 1 steps down. */
__extension__ typedef unsigned __int128 u128;
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
    memset(exp, 0, sizeof *exp);
    Call c = {name, args, nargs, out_t, out_count, exp, err};
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
