/* expr: recursive-descent parser and evaluator of the kvx expression language
 * (grammar and value rules in expr.h).  The lexer is expr_lex.c, the function
 * table and the built-in functions expr_fn.c, values' text forms and the
 * printer expr_text.c; expr_internal.h is what they share.
 *
 * Invariants: a parsed tree only names known functions with a valid argument
 * count; every node carries the position of its token (operators for unary,
 * binary and conditional nodes, the name for calls); values never become
 * inf or NaN (an operation that would make one is an error), so everything
 * val_text prints re-parses.  Recursion is bounded (EXPR_MAX_NEST while parsing,
 * EXPR_MAX_HEIGHT for the tree that eval and print walk), so no input can
 * exhaust the stack.
 *
 * Choices the header leaves open, made here (and, for literals and functions,
 * in expr_lex.c and expr_fn.c):
 *  - `%` is floor modulo, consistent with `//`: a == (a // b) * b + a % b.
 *  - `/` turns its result back into an integer only when both operands are
 *    integers and the division is exact; a float operand keeps it a float. */
#include "expr_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_NEST 200    /* parser recursion: parentheses, unary chains */
#define EXPR_MAX_HEIGHT 1000 /* tree height: long left-associative chains */

/* ---- parser --------------------------------------------------------------- */

static int is_cmp(int op)
{
    return op == OP_EQ || op == OP_NE || op == '<' || op == OP_LE || op == '>' || op == OP_GE;
}

static int at_op(const Parser *p, int op) { return p->tok.kind == T_OP && p->tok.op == op; }

/* A node of height h (1 + its tallest child) at byte off. */
static Expr *node(Parser *p, ExprKind kind, int op, size_t off, int h)
{
    if (h > EXPR_MAX_HEIGHT) {
        expr_lex_fail_at(p, off, "expression too long or nested too deeply (more than %d levels)",
                     EXPR_MAX_HEIGHT);
        return NULL;
    }
    Expr *e = arena_alloc(p->arena, sizeof *e);
    e->kind = kind;
    e->op = op;
    e->pos = expr_lex_pos_at(p, off);
    return e;
}

static int max2(int a, int b) { return a > b ? a : b; }

static Expr *parse_expr(Parser *p, int *h);

static Expr *binary(Parser *p, int op, size_t off, Expr *a, int ha, Expr *b, int hb, int *h)
{
    *h = 1 + max2(ha, hb);
    Expr *e = node(p, EX_BINARY, op, off, *h);
    if (e) {
        e->a = a;
        e->b = b;
    }
    return e;
}

static Expr *parse_call(Parser *p, const Token *name, int *h)
{
    char *fname = arena_strndup(p->arena, p->text + name->off, name->len);
    const FnDef *f = expr_fn_find(fname);
    if (!f) {
        StrBuf sb;
        sb_init(&sb);
        expr_fn_list(&sb);
        expr_lex_fail_at(p, name->off, "unknown function '%s' (expected one of: %s)", fname,
                     sb_str(&sb));
        sb_free(&sb);
        return NULL;
    }
    Expr **args = NULL;
    int n = 0, cap = 0, hmax = 0;
    if (expr_lex(p) < 0) /* past '(' */
        goto fail;
    while (!at_op(p, ')')) {
        if (n > 0) {
            if (!at_op(p, ',')) {
                expr_lex_unexpected(p, "',' or ')'");
                goto fail;
            }
            if (expr_lex(p) < 0)
                goto fail;
        }
        int ha;
        Expr *a = parse_expr(p, &ha);
        if (!a)
            goto fail;
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            args = mem_realloc(args, (size_t)cap * sizeof *args);
        }
        args[n++] = a;
        hmax = max2(hmax, ha);
    }
    if (n < f->min_args || (f->max_args >= 0 && n > f->max_args)) {
        if (f->min_args == f->max_args)
            expr_lex_fail_at(p, name->off, "'%s' takes %d argument%s, got %d", fname, f->min_args,
                         f->min_args == 1 ? "" : "s", n);
        else
            expr_lex_fail_at(p, name->off, "'%s' takes at least %d arguments, got %d", fname, f->min_args, n);
        goto fail;
    }
    *h = 1 + hmax;
    Expr *e = node(p, EX_CALL, 0, name->off, *h);
    if (!e || expr_lex(p) < 0) /* past ')' */
        goto fail;
    e->name = fname;
    e->nargs = n;
    e->args = arena_alloc(p->arena, (size_t)(n ? n : 1) * sizeof *e->args);
    if (n)
        memcpy(e->args, args, (size_t)n * sizeof *args);
    free(args);
    return e;
fail:
    free(args);
    return NULL;
}

static Expr *parse_primary(Parser *p, int *h)
{
    Token t = p->tok;
    Expr *e;
    *h = 1;
    switch (t.kind) {
    case T_NUM:
    case T_STR:
        if (!(e = node(p, EX_LIT, 0, t.off, 1)))
            return NULL;
        e->lit = t.v;
        return expr_lex(p) < 0 ? NULL : e;
    case T_IDENT:
        if (expr_lex(p) < 0)
            return NULL;
        if (at_op(p, '('))
            return parse_call(p, &t, h);
        if (!(e = node(p, EX_IDENT, 0, t.off, 1)))
            return NULL;
        e->name = arena_strndup(p->arena, p->text + t.off, t.len);
        if (strcmp(e->name, "true") == 0 || strcmp(e->name, "false") == 0) {
            e->kind = EX_LIT;
            e->lit = val_bool(e->name[0] == 't');
            e->name = NULL;
        }
        return e;
    case T_OP:
        if (t.op == '(') {
            if (expr_lex(p) < 0 || !(e = parse_expr(p, h)))
                return NULL;
            if (!at_op(p, ')')) {
                SrcPos open = expr_lex_pos_at(p, t.off);
                char what[64];
                snprintf(what, sizeof what, "')' to close the '(' at %d:%d", open.line, open.col);
                expr_lex_unexpected(p, what);
                return NULL;
            }
            return expr_lex(p) < 0 ? NULL : e;
        }
        break;
    default:
        break;
    }
    expr_lex_unexpected(p, "an operand");
    return NULL;
}

static Expr *parse_unary(Parser *p, int *h)
{
    if (++p->nest > EXPR_MAX_NEST) {
        expr_lex_fail_at(p, p->tok.off, "expression nested too deeply (more than %d levels)",
                     EXPR_MAX_NEST);
        return NULL;
    }
    Expr *e = NULL;
    if (at_op(p, '-') || at_op(p, '!') || at_op(p, '+')) {
        Token t = p->tok;
        int ha;
        Expr *a;
        if (expr_lex(p) < 0 || !(a = parse_unary(p, &ha)))
            goto out;
        *h = 1 + ha;
        if ((e = node(p, EX_UNARY, t.op, t.off, *h)))
            e->a = a;
        goto out;
    }
    /* pow := primary ( '^' unary )? */
    int ha, hb;
    Expr *a = parse_primary(p, &ha), *b;
    if (!a)
        goto out;
    *h = ha;
    e = a;
    if (at_op(p, '^')) {
        size_t off = p->tok.off;
        if (expr_lex(p) < 0 || !(b = parse_unary(p, &hb)))
            e = NULL;
        else
            e = binary(p, '^', off, a, ha, b, hb, h);
    }
out:
    p->nest--;
    return e;
}

/* One left-associative level: operand (OP operand)*, OP among ops. */
typedef Expr *(*ParseFn)(Parser *, int *);

static int at_any(const Parser *p, const int *ops)
{
    for (; *ops; ops++)
        if (at_op(p, *ops))
            return 1;
    return 0;
}

static Expr *parse_left(Parser *p, int *h, ParseFn operand, const int *ops)
{
    Expr *e = operand(p, h);
    while (e && at_any(p, ops)) {
        int op = p->tok.op, hb;
        size_t off = p->tok.off;
        Expr *b;
        if (expr_lex(p) < 0 || !(b = operand(p, &hb)))
            return NULL;
        e = binary(p, op, off, e, *h, b, hb, h);
    }
    return e;
}

static const int mul_ops[] = {'*', '/', OP_IDIV, '%', 0};
static const int add_ops[] = {'+', '-', 0};
static const int cmp_ops[] = {OP_EQ, OP_NE, '<', OP_LE, '>', OP_GE, 0};
static const int and_ops[] = {OP_AND, 0};
static const int or_ops[] = {OP_OR, 0};

static Expr *parse_mul(Parser *p, int *h) { return parse_left(p, h, parse_unary, mul_ops); }
static Expr *parse_add(Parser *p, int *h) { return parse_left(p, h, parse_mul, add_ops); }

/* cmp := add ( CMP add )?  -- comparisons do not chain. */
static Expr *parse_cmp(Parser *p, int *h)
{
    Expr *a = parse_add(p, h), *b;
    if (!a || !at_any(p, cmp_ops))
        return a;
    int op = p->tok.op, ha = *h, hb;
    size_t off = p->tok.off;
    if (expr_lex(p) < 0 || !(b = parse_add(p, &hb)))
        return NULL;
    if (at_any(p, cmp_ops)) {
        expr_lex_unexpected(p, "an operator other than a comparison: comparisons do not chain; "
                           "use && or parentheses");
        return NULL;
    }
    return binary(p, op, off, a, ha, b, hb, h);
}

static Expr *parse_and(Parser *p, int *h) { return parse_left(p, h, parse_cmp, and_ops); }
static Expr *parse_or(Parser *p, int *h) { return parse_left(p, h, parse_and, or_ops); }

static Expr *parse_expr(Parser *p, int *h)
{
    if (++p->nest > EXPR_MAX_NEST) {
        expr_lex_fail_at(p, p->tok.off, "expression nested too deeply (more than %d levels)",
                     EXPR_MAX_NEST);
        return NULL;
    }
    Expr *c = parse_or(p, h), *a = NULL, *b = NULL, *e = c;
    if (c && at_op(p, '?')) {
        size_t off = p->tok.off;
        int hc = *h, ha, hb;
        e = NULL;
        if (expr_lex(p) < 0 || !(a = parse_expr(p, &ha)))
            goto out;
        if (!at_op(p, ':')) {
            expr_lex_unexpected(p, "':' of the conditional");
            goto out;
        }
        if (expr_lex(p) < 0 || !(b = parse_expr(p, &hb)))
            goto out;
        *h = 1 + max2(hc, max2(ha, hb));
        if ((e = node(p, EX_COND, '?', off, *h))) {
            e->a = c;
            e->b = a;
            e->c = b;
        }
    }
out:
    p->nest--;
    return e;
}

Expr *expr_parse(Arena *arena, const char *text, const SrcPos *pos, KvxError *err)
{
    Parser p;
    memset(&p, 0, sizeof p);
    p.arena = arena;
    p.text = text;
    p.err = err;
    if (pos) {
        p.base = *pos;
        if (pos->file)
            p.base.file = arena_strdup(arena, pos->file);
    }
    int h;
    if (expr_lex(&p) < 0)
        return NULL;
    Expr *e = parse_expr(&p, &h);
    if (e && p.tok.kind != T_END) {
        expr_lex_unexpected(&p, "an operator or the end of the expression");
        return NULL;
    }
    return e;
}

/* ---- evaluation ----------------------------------------------------------- */

int expr_fail_node(KvxError *err, const Expr *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(err, KVX_EINPUT, &e->pos, fmt, ap);
    va_end(ap);
    return -1;
}

static int need_bool(const Expr *e, Value v, const char *where, KvxError *err)
{
    if (v.kind == VAL_BOOL)
        return 0;
    char buf[64];
    expr_fmt_value(buf, sizeof buf, v);
    return expr_fail_node(err, e, "expected a boolean %s, got %s %s (numbers and strings are not booleans; "
                                  "compare them, e.g. x != 0)", where, expr_kind_name(v), buf);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int ipow(int64_t b, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r))
            return -1;
        e >>= 1;
        if (e && __builtin_mul_overflow(b, b, &b))
            return -1;
    }
    *out = r;
    return 0;
}

/* x op y over 64-bit integers: an overflow is an error, / of integers that
 * do not divide is a float, and so is a negative power.  ta and tb: the
 * operands' text, for messages. */
static int arith_int(const Expr *e, int64_t x, int64_t y, const char *ta, const char *tb,
                     Value *out, KvxError *err)
{
    int op = e->op;
    int64_t r = 0;
    int ovf = 0;
    switch (op) {
    case '+': ovf = __builtin_add_overflow(x, y, &r); break;
    case '-': ovf = __builtin_sub_overflow(x, y, &r); break;
    case '*': ovf = __builtin_mul_overflow(x, y, &r); break;
    case '%': r = floor_mod(x, y); break;
    case OP_IDIV:
    case '/':
        if (x == INT64_MIN && y == -1) {
            ovf = 1;
        } else if (op == OP_IDIV) {
            r = floor_div(x, y);
        } else if (x % y == 0) {
            r = x / y;
        } else {
            *out = val_float((double)x / (double)y);
            return 0;
        }
        break;
    case '^':
        if (y < 0) {
            if (x == 0)
                return expr_fail_node(err, e, "'^': zero to a negative power (%s ^ %s)", ta, tb);
            *out = val_float(pow((double)x, (double)y));
            return 0;
        }
        ovf = ipow(x, y, &r) < 0;
        break;
    }
    if (ovf)
        return expr_fail_node(err, e, "integer overflow: %s %s %s does not fit in 64 bits", ta,
                              expr_op_text(op), tb);
    *out = val_int(r);
    return 0;
}

/* x op y over doubles: a result that is not finite is an error, and so are
 * % and powers without a real result. */
static int arith_float(const Expr *e, double x, double y, const char *ta, const char *tb,
                       Value *out, KvxError *err)
{
    int op = e->op;
    double r = 0;
    switch (op) {
    case '+': r = x + y; break;
    case '-': r = x - y; break;
    case '*': r = x * y; break;
    case '/': r = x / y; break;
    case OP_IDIV: r = floor(x / y); break;
    case '%':
        return expr_fail_node(err, e, "'%%' needs integers, got %s %% %s", ta, tb);
    case '^':
        if (x == 0 && y < 0)
            return expr_fail_node(err, e, "'^': zero to a negative power (%s ^ %s)", ta, tb);
        if (x < 0 && y != floor(y))
            return expr_fail_node(err, e, "'^': negative number to a fractional power (%s ^ %s)", ta, tb);
        r = pow(x, y);
        break;
    }
    if (!isfinite(r))
        return expr_fail_node(err, e, "float overflow: %s %s %s is not finite", ta,
                              expr_op_text(op), tb);
    *out = val_float(r);
    return 0;
}

static int arith(const Expr *e, Value a, Value b, Value *out, KvxError *err)
{
    int op = e->op;
    char ta[64], tb[64];
    expr_fmt_value(ta, sizeof ta, a);
    expr_fmt_value(tb, sizeof tb, b);
    if (!val_is_num(a) || !val_is_num(b))
        return expr_fail_node(err, e, "type mismatch: %s %s %s ('%s' needs numbers)",
                              expr_kind_name(a), expr_op_text(op), expr_kind_name(b),
                              expr_op_text(op));
    int zero = b.kind == VAL_INT ? b.i == 0 : b.d == 0;
    if ((op == '/' || op == OP_IDIV || op == '%') && zero)
        return expr_fail_node(err, e, "'%s' by zero (%s %s %s)", expr_op_text(op), ta,
                              expr_op_text(op), tb);
    if (a.kind == VAL_INT && b.kind == VAL_INT)
        return arith_int(e, a.i, b.i, ta, tb, out, err);
    return arith_float(e, val_num(a), val_num(b), ta, tb, out, err);
}

static int compare(const Expr *e, Value a, Value b, Value *out, KvxError *err)
{
    int op = e->op, c;
    if (a.kind == VAL_INT && b.kind == VAL_INT) {
        c = (a.i > b.i) - (a.i < b.i);
    } else if (val_is_num(a) && val_is_num(b)) {
        double x = val_num(a), y = val_num(b);
        c = (x > y) - (x < y);
    } else if (a.kind == VAL_STR && b.kind == VAL_STR) {
        c = strcmp(a.s, b.s);
        c = (c > 0) - (c < 0);
    } else if (a.kind == VAL_BOOL && b.kind == VAL_BOOL) {
        if (op != OP_EQ && op != OP_NE)
            return expr_fail_node(err, e, "type mismatch: boolean %s boolean (booleans compare with == and != only)",
                                  expr_op_text(op));
        c = (int)(a.i - b.i);
    } else {
        return expr_fail_node(err, e, "type mismatch: %s %s %s", expr_kind_name(a), expr_op_text(op), expr_kind_name(b));
    }
    int r = op == OP_EQ ? c == 0 : op == OP_NE ? c != 0 : op == '<' ? c < 0
          : op == OP_LE ? c <= 0 : op == '>' ? c > 0 : c >= 0;
    *out = val_bool(r);
    return 0;
}

static int eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err);

static int eval_call(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    const FnDef *f = expr_fn_find(e->name);
    KVX_ASSERT(f);
    if (!f->impl)
        return expr_fail_node(err, e, "'%s' is a reference; it belongs in check:", e->name);
    Value small[4], *args = e->nargs <= 4 ? small : mem_alloc((size_t)e->nargs * sizeof *args);
    int rc = 0;
    for (int i = 0; i < e->nargs && rc == 0; i++)
        rc = eval(e->args[i], env, &args[i], err);
    if (rc == 0)
        rc = f->impl(e, args, env, out, err);
    if (args != small)
        free(args);
    return rc;
}

/* A name's value from the environment's lookup (1 found, 0 unknown, -1 an
 * error it set). */
static int eval_ident(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    int r = env && env->lookup ? env->lookup(env->ctx, e->name, out, err) : 0;
    if (r < 0) {
        if (err && !err->code) /* the lookup promised an error; never lose the failure */
            expr_fail_node(err, e, "could not evaluate '%s'", e->name);
        return -1;
    }
    if (r == 0) {
        if (expr_fn_find(e->name))
            return expr_fail_node(err, e, "'%s' is a function; call it as %s(...)", e->name, e->name);
        return expr_fail_node(err, e, "unknown name '%s'", e->name);
    }
    if (out->kind == VAL_NONE)
        return expr_fail_node(err, e, "name '%s' has no value", e->name);
    return 0;
}

/* !a, +a or -a of the operand's value a. */
static int unary(const Expr *e, Value a, Value *out, KvxError *err)
{
    if (e->op == '!') {
        if (need_bool(e->a, a, "after '!'", err) < 0)
            return -1;
        *out = val_bool(!a.i);
        return 0;
    }
    if (!val_is_num(a))
        return expr_fail_node(err, e, "type mismatch: '%s' needs a number, got a %s",
                              expr_op_text(e->op), expr_kind_name(a));
    if (e->op == '+' || a.kind == VAL_FLOAT) {
        *out = e->op == '+' ? a : val_float(-a.d);
        return 0;
    }
    if (a.i == INT64_MIN)
        return expr_fail_node(err, e, "integer overflow: -(%lld) does not fit in 64 bits", (long long)a.i);
    *out = val_int(-a.i);
    return 0;
}

/* a && b, a || b with the left side's value a: false && x and true || x
 * leave x unevaluated. */
static int eval_logic(const Expr *e, const ExprEnv *env, Value a, Value *out, KvxError *err)
{
    const char *where = e->op == OP_AND ? "on the left of '&&'" : "on the left of '||'";
    if (need_bool(e->a, a, where, err) < 0)
        return -1;
    if (a.i == (e->op == OP_OR)) {
        *out = a;
        return 0;
    }
    Value b;
    if (eval(e->b, env, &b, err) < 0)
        return -1;
    where = e->op == OP_AND ? "on the right of '&&'" : "on the right of '||'";
    if (need_bool(e->b, b, where, err) < 0)
        return -1;
    *out = b;
    return 0;
}

static int eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    Value a, b;
    switch (e->kind) {
    case EX_LIT:
        *out = e->lit;
        return 0;
    case EX_IDENT:
        return eval_ident(e, env, out, err);
    case EX_UNARY:
        if (eval(e->a, env, &a, err) < 0)
            return -1;
        return unary(e, a, out, err);
    case EX_BINARY:
        if (eval(e->a, env, &a, err) < 0)
            return -1;
        if (e->op == OP_AND || e->op == OP_OR)
            return eval_logic(e, env, a, out, err);
        if (eval(e->b, env, &b, err) < 0)
            return -1;
        return is_cmp(e->op) ? compare(e, a, b, out, err) : arith(e, a, b, out, err);
    case EX_COND:
        if (eval(e->a, env, &a, err) < 0 || need_bool(e->a, a, "before '?'", err) < 0)
            return -1;
        return eval(a.i ? e->b : e->c, env, out, err);
    case EX_CALL:
        return eval_call(e, env, out, err);
    }
    return expr_fail_node(err, e, "internal error: bad expression node %d", (int)e->kind);
}

int expr_eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    KVX_ASSERT(e && out);
    return eval(e, env, out, err);
}
