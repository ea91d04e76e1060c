/* results_where: a --where (or a report table's where:) compiled to SQL over
 * the loaded case set, with every literal a bound parameter: axes by their
 * stored JSON, status, value names and a spec's let: names; anything the SQL
 * cannot say (a function call, ?:) is an error at its position. */
#include "results_core.h"
#include "host/case.h"

#include <stdio.h>
#include <string.h>

/* ---- --where: expression -> SQL with bound parameters ---------------------- */

typedef struct WhereCtx {
    CaseSet *cs;
    Sql *q;
    KvxError *err;
    const Spec *spec;   /* lends its let: names; NULL for kvx table */
    int depth;          /* let inside let: a cycle guard */
} WhereCtx;

/* Kind of an operand for type checks: 'n' number, 's' string, '?' unknown. */
static int where_emit(WhereCtx *w, const Expr *e, int *kind);

static int where_fail(WhereCtx *w, const Expr *e, const char *what)
{
    SrcPos pos = e->pos;
    kvx_error_set(w->err, KVX_EINPUT, &pos,
                  "%s is not allowed in --where (only comparisons, &&, ||, !, axis names,"
                  " status, value names, numbers and strings)", what);
    return -1;
}

static int where_ident(WhereCtx *w, const Expr *e, int *kind)
{
    CaseSet *cs = w->cs;
    int a = results_caseset_axis(cs, e->name);
    if (a >= 0) {
        sb_puts(&w->q->text, "json_extract(c.axes, ");
        results_sql_param(w->q, val_str(arena_printf(cs->arena, "$.\"%s\"", e->name)));
        sb_puts(&w->q->text, ")");
        *kind = cs->axes[a].nvals == 0 ? '?' : cs->axes[a].all_num ? 'n' : 's';
        return 0;
    }
    if (!strcmp(e->name, "status")) {
        sb_puts(&w->q->text, "c.status");
        *kind = 'S';
        return 0;
    }
    int vi = values_find(e->name);
    if (vi >= 0) {
        sb_puts(&w->q->text, store_value_sql(vi));
        *kind = 'n';
        return 0;
    }
    int l = w->spec ? spec_let_find(w->spec, e->name) : -1;
    if (l >= 0 && w->depth < 16) {
        /* A spec's named condition (`persistent`): translated in place, under
         * the same rules as the text around it. */
        w->depth++;
        sb_puts(&w->q->text, "(");
        int rc = where_emit(w, w->spec->lets[l].e, kind);
        sb_puts(&w->q->text, ")");
        w->depth--;
        return rc;
    }
    SrcPos pos = e->pos;
    kvx_error_set(w->err, KVX_EINPUT, &pos,
                  "unknown name '%s' in --where (axes: %s; also status and the value names%s)",
                  e->name, results_caseset_axis_list(cs),
                  w->spec ? ", and the spec's let: names" : "; a spec's let: names need --spec-file");
    return -1;
}

static int where_cmp(WhereCtx *w, const Expr *e, const char *op)
{
    int ka, kb;
    sb_puts(&w->q->text, "(");
    if (where_emit(w, e->a, &ka))
        return -1;
    sb_printf(&w->q->text, " %s ", op);
    if (where_emit(w, e->b, &kb))
        return -1;
    sb_puts(&w->q->text, ")");
    /* The language makes number-vs-string a type error, never false. */
    int na = ka == 'n', nb = kb == 'n';
    int sa = ka == 's' || ka == 'S', sb = kb == 's' || kb == 'S';
    if ((na && sb) || (sa && nb)) {
        SrcPos pos = e->pos;
        kvx_error_set(w->err, KVX_EINPUT, &pos,
                      "--where compares a number with a string");
        return -1;
    }
    /* status is compared with a status name: catch typos. */
    const Expr *lit = ka == 'S' ? e->b : kb == 'S' ? e->a : NULL;
    if (lit && lit->kind == EX_LIT && lit->lit.kind == VAL_STR) {
        int known = 0;
        for (int i = 0; i < CASE_STATUS_COUNT; i++)
            known |= !strcmp(results_status_names[i], lit->lit.s);
        if (!known) {
            SrcPos pos = lit->pos;
            kvx_error_set(w->err, KVX_EINPUT, &pos,
                          "unknown status \"%s\" (expected one of: ok, mismatch, compile_error,"
                          " load_error, launch_error, fault, timeout, skipped)", lit->lit.s);
            return -1;
        }
    }
    return 0;
}

static void count_ident(void *ctx, const Expr *ident)
{
    (void)ident;
    ++*(int *)ctx;
}

static int no_names(void *ctx, const char *name, Value *out, KvxError *err)
{
    return 0;
}

/* A constant (2^24, 16M, 1e6/4) is a number: evaluated here, its value bound. */
static int where_constant(WhereCtx *w, const Expr *e, int *kind)
{
    ExprEnv env = {no_names, NULL, w->cs->arena};
    Value v;
    if (expr_eval(e, &env, &v, w->err))
        return -1;
    *kind = v.kind == VAL_STR ? 's' : 'n';
    results_sql_param(w->q, v.kind == VAL_BOOL ? val_int(v.i) : v);
    return 0;
}

static int where_literal(WhereCtx *w, const Expr *e, int *kind)
{
    if (e->lit.kind == VAL_STR)
        *kind = 's';
    else if (e->lit.kind == VAL_INT || e->lit.kind == VAL_FLOAT || e->lit.kind == VAL_BOOL)
        *kind = 'n';
    else
        return where_fail(w, e, "this literal");
    results_sql_param(w->q, e->lit.kind == VAL_BOOL ? val_int(e->lit.i) : e->lit);
    return 0;
}

/* ! of a condition, or a signed number (a negative number is a number, not
 * arithmetic); other unary operators are refused. */
static int where_unary(WhereCtx *w, const Expr *e, int *kind)
{
    if (e->op == '!') {
        sb_puts(&w->q->text, "(NOT ");
        int k;
        if (where_emit(w, e->a, &k))
            return -1;
        sb_puts(&w->q->text, ")");
        *kind = 'n';
        return 0;
    }
    if ((e->op == '-' || e->op == '+') && e->a->kind == EX_LIT &&
        (e->a->lit.kind == VAL_INT || e->a->lit.kind == VAL_FLOAT)) {
        Value v = e->a->lit;
        if (e->op == '-') {
            if (v.kind == VAL_INT)
                v.i = -v.i;
            else
                v.d = -v.d;
        }
        results_sql_param(w->q, v);
        *kind = 'n';
        return 0;
    }
    return where_fail(w, e, "arithmetic");
}

/* Comparisons and && / ||; arithmetic operators are refused. */
static int where_binary(WhereCtx *w, const Expr *e, int *kind)
{
    static const struct { int op; const char *sql; } cmps[] = {
        {OP_EQ, "IS"}, {OP_NE, "IS NOT"}, {'<', "<"}, {OP_LE, "<="}, {'>', ">"}, {OP_GE, ">="},
    };
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
        if (e->op == cmps[i].op) {
            *kind = 'n';
            return where_cmp(w, e, cmps[i].sql);
        }
    if (e->op == OP_AND || e->op == OP_OR) {
        int k;
        sb_puts(&w->q->text, "(");
        if (where_emit(w, e->a, &k))
            return -1;
        sb_puts(&w->q->text, e->op == OP_AND ? " AND " : " OR ");
        if (where_emit(w, e->b, &k))
            return -1;
        sb_puts(&w->q->text, ")");
        *kind = 'n';
        return 0;
    }
    char what[48];
    if (e->op < 256)
        snprintf(what, sizeof what, "the operator '%c'", e->op);
    else
        snprintf(what, sizeof what, "the operator '//'");
    return where_fail(w, e, what);
}

static int where_emit(WhereCtx *w, const Expr *e, int *kind)
{
    *kind = '?';
    int nidents = 0;
    expr_visit_idents(e, count_ident, &nidents);
    /* Function calls stay refused, even over constants. */
    if (!nidents && e->kind != EX_LIT && e->kind != EX_CALL)
        return where_constant(w, e, kind);
    switch (e->kind) {
    case EX_LIT:
        return where_literal(w, e, kind);
    case EX_IDENT:
        return where_ident(w, e, kind);
    case EX_UNARY:
        return where_unary(w, e, kind);
    case EX_BINARY:
        return where_binary(w, e, kind);
    case EX_COND:
        return where_fail(w, e, "'?:'");
    case EX_CALL: {
        char what[160];
        snprintf(what, sizeof what, "a function call (%s)", e->name);
        return where_fail(w, e, what);
    }
    }
    return where_fail(w, e, "this expression");
}

int results_where_sql(CaseSet *cs, Sql *q, const Spec *spec, const Expr *e, KvxError *err)
{
    WhereCtx w = {cs, q, err, spec, 0};
    int kind;
    return where_emit(&w, e, &kind);
}
