/* expr_fn: the functions of the kvx expression language: the table of names
 * and arities the parser checks calls against (the built-ins, and the host
 * references of core/refs.h, which are parsed but not evaluated), and the
 * built-in functions that eval calls.
 *
 * Choices the header leaves open, made here:
 *  - round() rounds halves away from zero; round/floor/ceil/int return integers.
 *  - ctype/sizeof/is_float take a kvx type name ("u32") or its CUDA spelling
 *    ("unsigned int"), so a `set:` variable may hold either. */
#include "expr_internal.h"

#include "num.h"
#include "refs.h"
#include "elem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- function tables ------------------------------------------------------ */

/* name, min and max argument count (-1: any number) */
#define EXPR_FUNCTIONS(X)                                                      \
    X(ceil_div, 2, 2) X(min, 2, -1) X(max, 2, -1) X(round, 1, 1)               \
    X(floor, 1, 1) X(ceil, 1, 1) X(abs, 1, 1) X(log2, 1, 1) X(pow2, 1, 1)      \
    X(clamp, 3, 3) X(align_up, 2, 2) X(int, 1, 1) X(float, 1, 1) X(str, 1, 1)  \
    X(ctype, 1, 1) X(sizeof, 1, 1) X(is_float, 1, 1) X(hex, 1, 1)

#define DECLARE_FN(name, lo, hi)                                               \
    static int fn_##name(const Expr *, const Value *, const ExprEnv *, Value *, KvxError *);
EXPR_FUNCTIONS(DECLARE_FN)

#define FN_ROW(name, lo, hi) {#name, lo, hi, fn_##name},
#define FN_NAME(name, lo, hi) #name,
static const FnDef functions[] = {EXPR_FUNCTIONS(FN_ROW)};
const char *const expr_function_names[] = {EXPR_FUNCTIONS(FN_NAME) NULL};
#define NFUNCTIONS (int)(sizeof functions / sizeof functions[0])
_Static_assert(sizeof expr_function_names / sizeof expr_function_names[0]
                   == sizeof functions / sizeof functions[0] + 1,
               "expr_function_names and functions[] come from one list");

/* Host references (core/refs.h) parse with any number of arguments: the spec
 * loader checks a call against the reference's signature and names it in the
 * error.  baseline() is the differential check's reference. */
static const FnDef reference_fn = {"reference", 0, -1, NULL};
static const FnDef baseline_fn = {"baseline", 0, 0, NULL};

const FnDef *expr_fn_find(const char *name)
{
    for (int i = 0; i < NFUNCTIONS; i++)
        if (strcmp(functions[i].name, name) == 0)
            return &functions[i];
    if (strcmp(name, "baseline") == 0)
        return &baseline_fn;
    return refs_find(name) ? &reference_fn : NULL;
}

void expr_fn_list(StrBuf *sb)
{
    for (int i = 0; i < NFUNCTIONS; i++)
        sb_printf(sb, "%s, ", functions[i].name);
    for (int i = 0; i < refs_count; i++)
        sb_printf(sb, "%s, ", refs_table[i].name);
    sb_puts(sb, "baseline");
}

int expr_is_reference(const char *name)
{
    const FnDef *f = name ? expr_fn_find(name) : NULL;
    return f && !f->impl;
}

/* ---- functions ------------------------------------------------------------ */

/* double -> int64 when in range (conversions never saturate silently). */
static int to_int(const Expr *e, const char *what, double d, int64_t *out, KvxError *err)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
        char buf[40];
        num_write_double(buf, sizeof buf, d, NUM_SHORTEST);
        return expr_fail_node(err, e, "%s: %s does not fit in a 64-bit integer", what, buf);
    }
    *out = (int64_t)d;
    return 0;
}

static int need_num(const Expr *call, const Value *args, int i, KvxError *err)
{
    if (val_is_num(args[i]))
        return 0;
    char buf[64];
    expr_fmt_value(buf, sizeof buf, args[i]);
    return expr_fail_node(err, call->args[i], "'%s' expects a number for argument %d, got %s %s",
                          call->name, i + 1, expr_kind_name(args[i]), buf);
}

static int need_int(const Expr *call, const Value *args, int i, KvxError *err)
{
    if (args[i].kind == VAL_INT)
        return 0;
    char buf[64];
    expr_fmt_value(buf, sizeof buf, args[i]);
    return expr_fail_node(err, call->args[i], "'%s' expects an integer for argument %d, got %s %s",
                          call->name, i + 1, args[i].kind == VAL_FLOAT ? "float" : expr_kind_name(args[i]), buf);
}

static const ElemType *need_type(const Expr *call, const Value *args, KvxError *err)
{
    char buf[64];
    if (args[0].kind == VAL_STR) {
        const ElemType *t = elem_type_find(args[0].s);
        for (int i = 0; !t && i < ET_COUNT; i++)
            if (strcmp(elem_types[i].ctype, args[0].s) == 0)
                t = &elem_types[i];
        if (t)
            return t;
    }
    expr_fmt_value(buf, sizeof buf, args[0]);
    expr_fail_node(err, call->args[0], "'%s' expects a type name, got %s %s (expected one of: %s)",
                   call->name, expr_kind_name(args[0]), buf, elem_type_names());
    return NULL;
}

static int num_less(Value a, Value b)
{
    if (a.kind == VAL_INT && b.kind == VAL_INT)
        return a.i < b.i;
    return val_num(a) < val_num(b);
}

static int fn_ceil_div(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0 || need_int(c, v, 1, err) < 0)
        return -1;
    int64_t a = v[0].i, b = v[1].i;
    if (b == 0)
        return expr_fail_node(err, c, "'ceil_div' by zero (ceil_div(%lld, 0))", (long long)a);
    if (a == INT64_MIN && b == -1)
        return expr_fail_node(err, c, "integer overflow: ceil_div(%lld, -1)", (long long)a);
    int64_t q = a / b, r = a % b;
    *out = val_int(r != 0 && ((r > 0) == (b > 0)) ? q + 1 : q);
    return 0;
}

static int min_max(const Expr *c, const Value *v, Value *out, KvxError *err, int want_max)
{
    Value best = v[0];
    for (int i = 0; i < c->nargs; i++) {
        if (need_num(c, v, i, err) < 0)
            return -1;
        if (want_max ? num_less(best, v[i]) : num_less(v[i], best))
            best = v[i];
    }
    *out = best;
    return 0;
}

static int fn_min(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return min_max(c, v, out, err, 0);
}

static int fn_max(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return min_max(c, v, out, err, 1);
}

/* round/floor/ceil: integers pass through, floats become integers. */
static int to_int_by(const Expr *c, const Value *v, double (*f)(double), Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    if (v[0].kind == VAL_INT) {
        *out = v[0];
        return 0;
    }
    int64_t i = 0;
    if (to_int(c, c->name, f(v[0].d), &i, err) < 0)
        return -1;
    *out = val_int(i);
    return 0;
}

static int fn_round(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, round, out, err);
}

static int fn_floor(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, floor, out, err);
}

static int fn_ceil(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, ceil, out, err);
}

static int fn_abs(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    if (v[0].kind == VAL_FLOAT) {
        *out = val_float(fabs(v[0].d));
        return 0;
    }
    if (v[0].i == INT64_MIN)
        return expr_fail_node(err, c, "integer overflow: abs(%lld)", (long long)v[0].i);
    *out = val_int(v[0].i < 0 ? -v[0].i : v[0].i);
    return 0;
}

/* Exact integer for powers of two (log2(1024) = 10, log2(0.5) = -1), else a
 * float. */
static int fn_log2(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    double x = val_num(v[0]);
    if (x <= 0) {
        char buf[64];
        expr_fmt_value(buf, sizeof buf, v[0]);
        return expr_fail_node(err, c, "'log2' of a non-positive number (%s)", buf);
    }
    if (v[0].kind == VAL_INT && (v[0].i & (v[0].i - 1)) == 0) {
        *out = val_int(__builtin_ctzll((unsigned long long)v[0].i));
        return 0;
    }
    int ex;
    if (v[0].kind == VAL_FLOAT && frexp(x, &ex) == 0.5) {
        *out = val_int(ex - 1);
        return 0;
    }
    *out = val_float(log2(x));
    return 0;
}

static int fn_pow2(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0)
        return -1;
    int64_t k = v[0].i;
    if (k > 62)
        return expr_fail_node(err, c, "integer overflow: pow2(%lld) does not fit in 64 bits", (long long)k);
    /* pow2 names a size or a count: a fraction would be rounded wherever it
     * lands (a launch, a count), so it is an error; 2^k gives the fraction. */
    if (k < 0)
        return expr_fail_node(err, c, "'pow2' of a negative exponent (pow2(%lld) is not an integer; "
                              "write 2^%lld for the fraction)", (long long)k, (long long)k);
    *out = val_int((int64_t)1 << k);
    return 0;
}

static int fn_clamp(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    for (int i = 0; i < 3; i++)
        if (need_num(c, v, i, err) < 0)
            return -1;
    if (num_less(v[2], v[1])) {
        char lo[64], hi[64];
        expr_fmt_value(lo, sizeof lo, v[1]);
        expr_fmt_value(hi, sizeof hi, v[2]);
        return expr_fail_node(err, c, "'clamp' with lo > hi (%s > %s)", lo, hi);
    }
    *out = num_less(v[0], v[1]) ? v[1] : num_less(v[2], v[0]) ? v[2] : v[0];
    return 0;
}

static int fn_align_up(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0 || need_int(c, v, 1, err) < 0)
        return -1;
    int64_t x = v[0].i, a = v[1].i, r;
    if (a <= 0)
        return expr_fail_node(err, c->args[1], "'align_up' needs a positive alignment, got %lld", (long long)a);
    int64_t rem = floor_mod(x, a);
    if (rem == 0) {
        *out = v[0];
        return 0;
    }
    if (__builtin_add_overflow(x, a - rem, &r))
        return expr_fail_node(err, c, "integer overflow: align_up(%lld, %lld)", (long long)x, (long long)a);
    *out = val_int(r);
    return 0;
}

/* int()/float() of a string read it as a number literal, with an optional sign. */
static int parse_number_text(const Expr *c, const char *s, Value *out, KvxError *err)
{
    const char *q = s, *why = "not a number";
    int neg = 0;
    size_t len = 0;
    if (*q == '-' || *q == '+')
        neg = *q++ == '-';
    if (is_digit(*q) && expr_lex_number(q, &len, out, &why) == 0 && q[len] == 0) {
        if (neg && out->kind == VAL_FLOAT)
            out->d = -out->d;
        else if (neg)
            out->i = -out->i; /* a literal is at most INT64_MAX */
        return 0;
    }
    return expr_fail_node(err, c, "'%s' cannot convert \"%.40s\": %s", c->name, s,
                          is_digit(*q) ? why : "not a number");
}

static int fn_int(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_STR && parse_number_text(c, x.s, &x, err) < 0)
        return -1;
    switch (x.kind) {
    case VAL_INT: *out = x; return 0;
    case VAL_BOOL: *out = val_int(x.i); return 0;
    case VAL_FLOAT: {
        int64_t i = 0;
        if (to_int(c, "int", trunc(x.d), &i, err) < 0)
            return -1;
        *out = val_int(i);
        return 0;
    }
    default: return need_num(c, v, 0, err);
    }
}

static int fn_float(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_STR && parse_number_text(c, x.s, &x, err) < 0)
        return -1;
    if (x.kind == VAL_BOOL) {
        *out = val_float((double)x.i);
        return 0;
    }
    if (!val_is_num(x))
        return need_num(c, v, 0, err);
    /* Above 2^53 not every integer is a double: say so rather than round. */
    if (x.kind == VAL_INT && ((double)x.i >= 0x1p63 || (int64_t)(double)x.i != x.i))
        return expr_fail_node(err, c, "'float' of %lld would round it (a double holds integers "
                              "exactly up to 2^53)", (long long)x.i);
    *out = val_float(val_num(x));
    return 0;
}

static int fn_str(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (v[0].kind == VAL_STR) {
        *out = v[0];
        return 0;
    }
    if (!env || !env->arena)
        return expr_fail_node(err, c, "internal error: 'str' needs an arena in the environment");
    *out = val_str(val_text(env->arena, v[0]));
    return 0;
}

/* hex(x): the text "0x..." of a non-negative integer, for masks in templates. */
static int fn_hex(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_BOOL)
        x = val_int(x.i);
    if (x.kind != VAL_INT || x.i < 0) {
        char buf[64];
        expr_fmt_value(buf, sizeof buf, v[0]);
        return expr_fail_node(err, c, "hex() wants a non-negative integer, not %s", buf);
    }
    if (!env || !env->arena)
        return expr_fail_node(err, c, "internal error: 'hex' needs an arena in the environment");
    *out = val_str(arena_printf(env->arena, "0x%llx", (unsigned long long)x.i));
    return 0;
}

static int fn_ctype(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_str(t->ctype);
    return 0;
}

static int fn_sizeof(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_int(t->size);
    return 0;
}

static int fn_is_float(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_bool(t->is_float);
    return 0;
}
