/* refs: the catalogue of host references and the checks of a call against it
 * (refs.h says who uses it).  A row's prose is what docs/spec.md shows; keep
 * the two in step (test_verify compares them). */
#include "refs.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- checks between arguments ---------------------------------------------- */

static int at_least(const RefArg *big, uint64_t need, const char *bn, const char *what, char *msg,
                    size_t n)
{
    if (big->count >= need)
        return 0;
    snprintf(msg, n, "%s has %llu elements, fewer than %s (%llu)", bn,
             (unsigned long long)big->count, what, (unsigned long long)need);
    return -1;
}

static int keys_cover_buf(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    return at_least(&a[2], a[0].count, "keys", "the buffer's count", msg, n);
}

static int keys_cover_vals(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    return at_least(&a[1], a[0].count, "keys", "vals' count", msg, n);
}

static int same_count(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    if (a[0].count == a[1].count)
        return 0;
    snprintf(msg, n, "a has %llu elements, b %llu (expected the same count)",
             (unsigned long long)a[0].count, (unsigned long long)a[1].count);
    return -1;
}

static int rows_of_vals(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    uint64_t w = (uint64_t)a[3].v.i, rows = a[0].count;
    if (rows > UINT64_MAX / w) {
        snprintf(msg, n, "idx's count times w overflows");
        return -1;
    }
    return at_least(&a[1], rows * w, "vals", "idx's count times w", msg, n);
}

static int lo_le_hi(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    if (a[2].v.i <= a[3].v.i)
        return 0;
    snprintf(msg, n, "lo (%lld) > hi (%lld)", (long long)a[2].v.i, (long long)a[3].v.i);
    return -1;
}

static int nonneg_n(const RefArg *a, int k, char *msg, size_t n)
{
    if (a[k].v.i >= 0)
        return 0;
    snprintf(msg, n, "n must be >= 0, got %lld", (long long)a[k].v.i);
    return -1;
}

static int wrap_ok(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    if (out->is_float) {
        snprintf(msg, n, "atomicInc/atomicDec count in an unsigned integer, not %s", out->name);
        return -1;
    }
    return nonneg_n(a, 1, msg, n);
}

static int tally_ok(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    (void)out;
    return nonneg_n(a, 0, msg, n);
}

/* reduce's op: the integer ops for an integer output, the float ones for a
 * float output (verify_reduce.c folds them). */
static const char reduce_int_ops[] = "add sub and or xor max min exch";
static const char reduce_float_ops[] = "add sub max min nanmax nanmin maximum minimum exch";

static int word_in(const char *w, const char *list)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && strncmp(p, w, n) == 0)
            return 1;
        p += k + (e != NULL);
    }
    return 0;
}

static int reduce_ok(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    const char *ops = out->is_float ? reduce_float_ops : reduce_int_ops;
    if (word_in(a[0].v.s, ops))
        return 0;
    snprintf(msg, n, "op \"%s\" is not defined for a %s output (expected one of: %s)", a[0].v.s,
             out->name, ops);
    return -1;
}

/* slice: a copy of part of another buffer; element types must agree, since
 * the comparison is exact for integers and by the output type's tolerance
 * for floats. */
static int slice_ok(const RefArg *a, const ElemType *out, char *msg, size_t n)
{
    if (a[0].t != out) {
        snprintf(msg, n, "the buffer is %s but the output is %s (expected the same element type)",
                 a[0].t->name, out->name);
        return -1;
    }
    uint64_t start = (uint64_t)a[1].v.i, count = (uint64_t)a[2].v.i;
    if (a[1].v.i < 0 || start > a[0].count || count > a[0].count - start) {
        snprintf(msg, n, "elements %lld .. %lld lie outside the buffer's %llu", (long long)a[1].v.i,
                 (long long)(a[1].v.i + a[2].v.i - 1), (unsigned long long)a[0].count);
        return -1;
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------------ */

#define BUF(n) {n, REFP_BUF, 0, NULL}
#define FEED(n) {n, REFP_BUF, 1, NULL}
#define KEYS(n) {n, REFP_INT_BUF, 0, NULL}
#define NUM(n) {n, REFP_NUM, 0, NULL}
#define INT(n) {n, REFP_INT, 0, NULL}
#define COUNT(n) {n, REFP_COUNT, 0, NULL}
#define OP(n, ops) {n, REFP_OP, 0, ops}

const RefSig refs_table[] = {
    {"count_below", 2, {BUF("buf"), NUM("thr")}, {-1, -1}, NULL, "1", "any",
     "elements of buf below thr"},
    {"count_if", 3, {BUF("buf"), OP("op", "< <= == != > >="), NUM("v")}, {-1, -1}, NULL, "1",
     "any", "elements e of buf with `e op v`"},
    {"count_below_by", 4, {BUF("buf"), NUM("thr"), KEYS("keys"), COUNT("k")}, {3, -1},
     keys_cover_buf, "k", "keys: integer",
     "k counters: counter keys[i] counts buf[i] < thr; keys[i] must lie in 0 .. k-1"},
    {"histogram", 4, {BUF("buf"), COUNT("bins"), INT("lo"), INT("hi")}, {1, -1}, lo_le_hi, "bins",
     "any", "values in lo .. hi counted in bins of ceil((hi - lo + 1) / bins); others ignored"},
    {"sum", 1, {FEED("buf")}, {-1, -1}, NULL, "1", "integer output: integer buf",
     "the sum of buf (float64, compensated, for float outputs)"},
    {"dot", 2, {FEED("a"), FEED("b")}, {-1, -1}, same_count, "1", "integer output: integer a, b",
     "the sum of a[i] * b[i]"},
    {"sum_by", 3, {FEED("vals"), KEYS("keys"), COUNT("k")}, {2, -1}, keys_cover_vals, "k",
     "keys: integer", "k sums: vals[i] added at keys[i]"},
    {"index_add", 4, {KEYS("idx"), FEED("vals"), COUNT("rows"), COUNT("w")}, {2, 3}, rows_of_vals,
     "rows * w", "idx: integer",
     "scatter-add of rows of w values: row idx[i] += vals[i*w .. i*w + w)"},
    {"reduce", 4,
     {OP("op", "add sub and or xor max min nanmax nanmin maximum minimum exch"), FEED("buf"),
      COUNT("k"), NUM("init")},
     {2, -1}, reduce_ok, "k", "ops by output type",
     "k results: the fold of op over buf[i] with i % k == j, from init"},
    {"wrap_count", 5, {OP("op", "inc dec"), INT("n"), COUNT("k"), INT("init"), INT("lim")}, {2, -1},
     wrap_ok, "k", "unsigned integer output",
     "k results of n atomicInc/atomicDec with wrap limit lim, thread i on address i % k"},
    {"tally", 3, {INT("n"), COUNT("k"), INT("init")}, {1, -1}, tally_ok, "k", "any",
     "k counters: init + the number of i < n with i % k == j"},
    {"slice", 3, {BUF("buf"), INT("start"), COUNT("count")}, {2, -1}, slice_ok, "count",
     "the output's type", "a copy of buf[start .. start + count): the output equals that part of an input"},
};
const int refs_count = (int)(sizeof refs_table / sizeof refs_table[0]);

const RefSig *refs_find(const char *name)
{
    for (int i = 0; name && i < refs_count; i++)
        if (strcmp(refs_table[i].name, name) == 0)
            return &refs_table[i];
    return NULL;
}

static const char *kind_text(RefParamKind k)
{
    switch (k) {
    case REFP_BUF: return "buffer";
    case REFP_INT_BUF: return "integer buffer";
    case REFP_NUM: return "number";
    case REFP_INT: return "integer";
    case REFP_COUNT: return "integer >= 1";
    case REFP_OP: return "string";
    }
    return "?";
}

void refs_signature(const RefSig *r, StrBuf *out)
{
    sb_printf(out, "%s(", r->name);
    for (int i = 0; i < r->nparams; i++)
        sb_printf(out, "%s%s: %s", i ? ", " : "", r->p[i].name, kind_text(r->p[i].kind));
    sb_puts(out, ")");
}

/* ---- checks ---------------------------------------------------------------------- */

/* Every message opens with the signature, so that the expected form is in
 * front of the user whatever went wrong. */
static int fail_sig(KvxError *err, const SrcPos *pos, const RefSig *r, const char *fmt, ...)
    KVX_PRINTF(4, 5);
static int fail_sig(KvxError *err, const SrcPos *pos, const RefSig *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    StrBuf sig;
    sb_init(&sig);
    refs_signature(r, &sig);
    kvx_error_set(err, KVX_EINPUT, pos, "%s: %s", sb_str(&sig), msg);
    sb_free(&sig);
    return -1;
}

static int is_buf_kind(RefParamKind k) { return k == REFP_BUF || k == REFP_INT_BUF; }

int refs_check_call(const Expr *call, int (*is_buffer)(void *ctx, const char *name), void *ctx,
                    KvxError *err)
{
    const RefSig *r = refs_find(call->name);
    KVX_ASSERT(r != NULL);
    if (call->nargs != r->nparams)
        return fail_sig(err, &call->pos, r, "takes %d argument%s, got %d", r->nparams,
                        r->nparams == 1 ? "" : "s", call->nargs);
    for (int i = 0; i < call->nargs; i++) {
        const Expr *x = call->args[i];
        const RefParam *p = &r->p[i];
        int names_buf = x->kind == EX_IDENT && is_buffer(ctx, x->name);
        if (is_buf_kind(p->kind) && !names_buf)
            return fail_sig(err, &x->pos, r, "argument %d (%s) must be a buffer", i + 1, p->name);
        if (!is_buf_kind(p->kind) && names_buf)
            return fail_sig(err, &x->pos, r, "argument %d (%s) is buffer '%s' (expected a %s)",
                            i + 1, p->name, x->name, kind_text(p->kind));
        if (p->kind == REFP_OP && x->kind == EX_LIT && x->lit.kind == VAL_STR &&
            !word_in(x->lit.s, p->ops))
            return fail_sig(err, &x->pos, r, "argument %d (%s) is \"%s\" (expected one of: %s)",
                            i + 1, p->name, x->lit.s, p->ops);
        if (p->kind != REFP_OP && x->kind == EX_LIT && x->lit.kind == VAL_STR)
            return fail_sig(err, &x->pos, r, "argument %d (%s) is a string (expected a %s)", i + 1,
                            p->name, kind_text(p->kind));
    }
    return 0;
}

/* One argument against its parameter: 0, or -1 with msg. */
static int check_param(const RefParam *p, int k, const RefArg *a, const ElemType *out, char *msg,
                       size_t n)
{
    if (is_buf_kind(p->kind)) {
        if (!a->is_buf || !a->t)
            return snprintf(msg, n, "argument %d (%s) must be a buffer", k + 1, p->name), -1;
        if (p->kind == REFP_INT_BUF && a->t->is_float)
            return snprintf(msg, n, "argument %d (%s) must be an integer buffer, not %s", k + 1,
                            p->name, a->t->name), -1;
        if (p->feeds && !out->is_float && a->t->is_float)
            return snprintf(msg, n, "a %s buffer reduced into a %s output: use a float output",
                            a->t->name, out->name), -1;
        return 0;
    }
    Value v = a->v;
    if (a->is_buf)
        return snprintf(msg, n, "argument %d (%s) must be a %s, not a buffer", k + 1, p->name,
                        kind_text(p->kind)), -1;
    if (p->kind == REFP_OP) {
        if (v.kind != VAL_STR || !v.s)
            return snprintf(msg, n, "argument %d (%s) must be a string", k + 1, p->name), -1;
        if (!word_in(v.s, p->ops))
            return snprintf(msg, n, "argument %d (%s) is \"%s\" (expected one of: %s)", k + 1,
                            p->name, v.s, p->ops), -1;
        return 0;
    }
    if (p->kind == REFP_NUM)
        return val_is_num(v) || v.kind == VAL_BOOL
                   ? 0 : (snprintf(msg, n, "argument %d (%s) must be a number", k + 1, p->name), -1);
    if (v.kind != VAL_INT && v.kind != VAL_BOOL)
        return snprintf(msg, n, "argument %d (%s) must be an integer, got %s", k + 1, p->name,
                        v.kind == VAL_FLOAT ? "a float" : "a string"), -1;
    if (p->kind == REFP_COUNT && v.i < 1)
        return snprintf(msg, n, "argument %d (%s) must be >= 1, got %lld", k + 1, p->name,
                        (long long)v.i), -1;
    return 0;
}

int refs_check_args(const RefSig *r, const RefArg *a, int nargs, const ElemType *out,
                    uint64_t out_count, KvxError *err)
{
    char msg[512];
    if (nargs != r->nparams)
        return fail_sig(err, NULL, r, "takes %d argument%s, got %d", r->nparams,
                        r->nparams == 1 ? "" : "s", nargs);
    for (int i = 0; i < nargs; i++)
        if (check_param(&r->p[i], i, &a[i], out, msg, sizeof msg) < 0)
            return fail_sig(err, NULL, r, "%s", msg);
    if (r->extra && r->extra(a, out, msg, sizeof msg) < 0)
        return fail_sig(err, NULL, r, "%s", msg);
    uint64_t size = 1;
    for (int j = 0; j < 2; j++) {
        int k = r->size_of[j];
        if (k < 0)
            continue;
        uint64_t f = (uint64_t)a[k].v.i;
        if (f && size > UINT64_MAX / f)
            return fail_sig(err, NULL, r, "the result's size overflows");
        size *= f;
    }
    if (size != out_count)
        return fail_sig(err, NULL, r, "the reference has %llu element%s but the output buffer has %llu",
                        (unsigned long long)size, size == 1 ? "" : "s",
                        (unsigned long long)out_count);
    return 0;
}
