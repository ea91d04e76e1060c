/* results_where: a --where (or a report table's where:) checked over the
 * loaded case set into the store's condition (store/store_cases.h): axes by
 * their stored JSON, status, value names and a spec's let: names, with their
 * types; anything the condition cannot say (a function call, ?:, arithmetic)
 * is an error at its position.  The store writes the SQL.  An `axis ==
 * value` whose value the axis does not have is noted (CaseSet.where_misses)
 * for the message of a --where that matched nothing. */
#include "results_core.h"
#include "host/case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- --where: expression -> the store's condition ---------------------------- */

typedef struct WhereCtx {
    CaseSet *cs;
    KvxError *err;
    const Spec *spec;   /* lends its let: names; NULL for kvx table */
    int depth;          /* let inside let: a cycle guard */
} WhereCtx;

/* Kind of an operand for type checks: 'n' number, 's' string, 'S' status,
 * '?' unknown.  Each builder puts its node into *out (NULL on error). */
static int where_emit(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out);

static StoreCond *node(WhereCtx *w, StoreCondKind kind)
{
    StoreCond *c = arena_alloc(w->cs->arena, sizeof *c);
    memset(c, 0, sizeof *c);
    c->kind = kind;
    return c;
}

static int where_fail(WhereCtx *w, const Expr *e, const char *what)
{
    SrcPos pos = e->pos;
    kvx_error_set(w->err, KVX_EINPUT, &pos,
                  "%s is not allowed in --where (only comparisons, &&, ||, !, axis names,"
                  " status, value names, numbers and strings)", what);
    return -1;
}

static int where_ident(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    CaseSet *cs = w->cs;
    int a = results_caseset_axis(cs, e->name);
    if (a >= 0) {
        StoreCond *c = node(w, STORE_COND_AXIS);
        c->axis = cs->axes[a].name;
        *kind = cs->axes[a].nvals == 0 ? '?' : cs->axes[a].all_num ? 'n' : 's';
        *out = c;
        return 0;
    }
    if (!strcmp(e->name, "status")) {
        *out = node(w, STORE_COND_STATUS);
        *kind = 'S';
        return 0;
    }
    int vi = values_find(e->name);
    if (vi >= 0) {
        StoreCond *c = node(w, STORE_COND_VALUE);
        c->value = vi;
        *kind = 'n';
        *out = c;
        return 0;
    }
    int l = w->spec ? spec_let_find(w->spec, e->name) : -1;
    if (l >= 0 && w->depth < 16) {
        /* A spec's named condition (`persistent`): checked in place, under
         * the same rules as the text around it. */
        w->depth++;
        int rc = where_emit(w, w->spec->lets[l].e, kind, out);
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

/* Whether the axis's values hold lit (a number by value, a string by text). */
static int axis_has(const AxisInfo *ax, Value lit)
{
    double d = lit.kind == VAL_FLOAT ? lit.d : (double)lit.i;
    for (int i = 0; i < ax->nvals; i++) {
        const RVal *v = &ax->vals[i];
        if (lit.kind == VAL_STR ? !v->is_num && !strcmp(v->text, lit.s) : v->is_num && v->num == d)
            return 1;
    }
    return 0;
}

#define WHERE_MISS_LISTED 24    /* values listed in a miss's line; the rest counted */

/* lit as --where would write it: "text", 42, 0.3. */
static void put_lit(StrBuf *b, Value lit)
{
    if (lit.kind == VAL_STR) {
        sb_printf(b, "\"%s\"", lit.s);
    } else if (lit.kind == VAL_FLOAT) {
        char num[40];
        snprintf(num, sizeof num, "%.15g", lit.d);     /* 0.3, not 0.29999999999999999 */
        if (strtod(num, NULL) != lit.d)
            snprintf(num, sizeof num, "%.17g", lit.d);
        sb_puts(b, num);
    } else {
        sb_printf(b, "%lld", (long long)lit.i);
    }
}

/* The axis's values in display order, the first WHERE_MISS_LISTED of them
 * and a count of the rest. */
static void put_values(StrBuf *b, const AxisInfo *ax)
{
    int *by_rank = mem_alloc(sizeof *by_rank * (size_t)ax->nvals);
    for (int i = 0; i < ax->nvals; i++)
        by_rank[ax->vals[i].rank] = i;
    for (int r = 0; r < ax->nvals && r < WHERE_MISS_LISTED; r++) {
        const RVal *v = &ax->vals[by_rank[r]];
        sb_printf(b, v->is_num ? "%s%s" : "%s\"%s\"", r ? ", " : "", v->text);
    }
    if (ax->nvals > WHERE_MISS_LISTED)
        sb_printf(b, ", and %d more", ax->nvals - WHERE_MISS_LISTED);
    free(by_rank);
}

/* `axis == lit` (either way round) whose lit the axis does not have: a line
 * of cs->where_misses at the literal's position, with the axis's values. */
static void note_miss(WhereCtx *w, const Expr *e, const StoreCond *c)
{
    int lit_b = c->a->kind == STORE_COND_AXIS && c->b->kind == STORE_COND_LIT;
    if (e->op != OP_EQ || !(lit_b || (c->b->kind == STORE_COND_AXIS && c->a->kind == STORE_COND_LIT)))
        return;
    CaseSet *cs = w->cs;
    const AxisInfo *ax = &cs->axes[results_caseset_axis(cs, (lit_b ? c->a : c->b)->axis)];
    Value lit = (lit_b ? c->b : c->a)->lit;
    if (ax->nvals == 0 || axis_has(ax, lit))
        return;
    const Expr *at = lit_b ? e->b : e->a;
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%s%s:%d:%d: axis %s has no value ", cs->where_misses ? cs->where_misses : "",
              at->pos.file, at->pos.line, at->pos.col, ax->name);
    put_lit(&b, lit);
    sb_puts(&b, " (its values: ");
    put_values(&b, ax);
    sb_puts(&b, ")\n");
    char *text = sb_take(&b);
    cs->where_misses = arena_strdup(cs->arena, text);
    free(text);
}

static int where_cmp(WhereCtx *w, const Expr *e, const StoreCond **out)
{
    int ka, kb;
    StoreCond *c = node(w, STORE_COND_CMP);
    c->op = e->op;
    if (where_emit(w, e->a, &ka, &c->a) || where_emit(w, e->b, &kb, &c->b))
        return -1;
    *out = c;
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
    note_miss(w, e, c);
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

/* A literal node of v (a boolean is the number 1 or 0). */
static const StoreCond *literal(WhereCtx *w, Value v)
{
    StoreCond *c = node(w, STORE_COND_LIT);
    c->lit = v.kind == VAL_BOOL ? val_int(v.i) : v;
    return c;
}

/* A constant (2^24, 16M, 1e6/4) is a number: evaluated here, its value bound. */
static int where_constant(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    ExprEnv env = {no_names, NULL, w->cs->arena};
    Value v;
    if (expr_eval(e, &env, &v, w->err))
        return -1;
    *kind = v.kind == VAL_STR ? 's' : 'n';
    *out = literal(w, v);
    return 0;
}

static int where_literal(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    if (e->lit.kind == VAL_STR)
        *kind = 's';
    else if (e->lit.kind == VAL_INT || e->lit.kind == VAL_FLOAT || e->lit.kind == VAL_BOOL)
        *kind = 'n';
    else
        return where_fail(w, e, "this literal");
    *out = literal(w, e->lit);
    return 0;
}

/* ! of a condition, or a signed number (a negative number is a number, not
 * arithmetic); other unary operators are refused. */
static int where_unary(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    if (e->op == '!') {
        StoreCond *c = node(w, STORE_COND_NOT);
        int k;
        if (where_emit(w, e->a, &k, &c->a))
            return -1;
        *kind = 'n';
        *out = c;
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
        *out = literal(w, v);
        *kind = 'n';
        return 0;
    }
    return where_fail(w, e, "arithmetic");
}

/* Comparisons and && / ||; arithmetic operators are refused. */
static int where_binary(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    static const int cmps[] = {OP_EQ, OP_NE, '<', OP_LE, '>', OP_GE};
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
        if (e->op == cmps[i]) {
            *kind = 'n';
            return where_cmp(w, e, out);
        }
    if (e->op == OP_AND || e->op == OP_OR) {
        int k;
        StoreCond *c = node(w, e->op == OP_AND ? STORE_COND_AND : STORE_COND_OR);
        if (where_emit(w, e->a, &k, &c->a) || where_emit(w, e->b, &k, &c->b))
            return -1;
        *kind = 'n';
        *out = c;
        return 0;
    }
    char what[48];
    if (e->op < 256)
        snprintf(what, sizeof what, "the operator '%c'", e->op);
    else
        snprintf(what, sizeof what, "the operator '//'");
    return where_fail(w, e, what);
}

static int where_emit(WhereCtx *w, const Expr *e, int *kind, const StoreCond **out)
{
    *kind = '?';
    *out = NULL;
    int nidents = 0;
    expr_visit_idents(e, count_ident, &nidents);
    /* Function calls stay refused, even over constants. */
    if (!nidents && e->kind != EX_LIT && e->kind != EX_CALL)
        return where_constant(w, e, kind, out);
    switch (e->kind) {
    case EX_LIT:
        return where_literal(w, e, kind, out);
    case EX_IDENT:
        return where_ident(w, e, kind, out);
    case EX_UNARY:
        return where_unary(w, e, kind, out);
    case EX_BINARY:
        return where_binary(w, e, kind, out);
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

const StoreCond *results_where_cond(CaseSet *cs, const Spec *spec, const Expr *e, KvxError *err)
{
    WhereCtx w = {cs, err, spec, 0};
    int kind;
    const StoreCond *c;
    return where_emit(&w, e, &kind, &c) ? NULL : c;
}
