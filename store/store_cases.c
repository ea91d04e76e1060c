/* store_cases: the case set's queries (store_cases.h).  Each is one SELECT
 * over cases c, runs r and variants v whose variable parts are bound
 * parameters: the selection, JSON paths, a condition's literals.  Axis names
 * reach SQL only as bound JSON paths; value names as their column from
 * core/values.h's table (store_cols.c's store_value_sql). */
#include "store_cases.h"
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* SQL text and its bound parameters. */
typedef struct Sql {
    StrBuf text;
    Value *params;
    int nparams, cap;
} Sql;

/* A "?" into q's text and v as its parameter. */
static void param(Sql *q, Value v)
{
    if (q->nparams == q->cap)
        q->params = mem_realloc(q->params, sizeof *q->params * (size_t)(q->cap = q->cap ? 2 * q->cap : 16));
    q->params[q->nparams++] = v;
    sb_puts(&q->text, "?");
}

/* The rows of q, which is freed. */
static StoreRows *run(Store *db, Sql *q, KvxError *err)
{
    StoreRows *r = store_rows(db, sb_str(&q->text), q->params, q->nparams, err);
    sb_free(&q->text);
    free(q->params);
    return r;
}

/* " c.spec_name = ? [AND (c.run_id = ? [OR r.kind = 'reference'])]
 * [AND r.kind = 'reference' AND r.name = ?]" */
static void selection(Sql *q, const StoreSel *sel)
{
    sb_puts(&q->text, " c.spec_name = ");
    param(q, val_str(sel->spec ? sel->spec : ""));
    if (sel->run_id) {
        sb_puts(&q->text, " AND (c.run_id = ");
        param(q, val_int(sel->run_id));
        sb_puts(&q->text, sel->with_refs ? " OR r.kind = 'reference')" : ")");
    }
    if (sel->ref_name) {
        sb_puts(&q->text, " AND r.kind = 'reference' AND r.name = ");
        param(q, val_str(sel->ref_name));
    }
}

/* The JSON of column col of the runs holding selected cases, by run. */
static StoreRows *runs_json(Store *db, const StoreSel *sel, const char *col, const char *extra,
                            KvxError *err)
{
    Sql q = {0};
    sb_printf(&q.text, "SELECT a.key, %s FROM runs r, json_each(r.%s) a%s WHERE json_valid(r.%s) AND"
                       " EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id AND",
              extra, col, strcmp(col, "axes_json") ? "" : ", json_each(a.value) v", col);
    selection(&q, sel);
    sb_puts(&q.text, strcmp(col, "axes_json") ? ") ORDER BY r.id, a.id" : ") ORDER BY r.id, a.id, v.id");
    return run(db, &q, err);
}

StoreRows *store_cases_declared(Store *db, const StoreSel *sel, KvxError *err)
{
    return runs_json(db, sel, "axes_json", "v.type, v.atom", err);
}

StoreRows *store_cases_baseline(Store *db, const StoreSel *sel, KvxError *err)
{
    return runs_json(db, sel, "baseline_json", "a.type, a.atom, r.id", err);
}

StoreRows *store_cases_axes(Store *db, const StoreSel *sel, KvxError *err)
{
    Sql q = {0};
    sb_puts(&q.text, "SELECT c.id, j.key, j.type, j.atom FROM cases c JOIN runs r ON r.id ="
                     " c.run_id, json_each(c.axes) j WHERE");
    selection(&q, sel);
    sb_puts(&q.text, " ORDER BY c.id, j.id");
    return run(db, &q, err);
}

/* The value shown, as an SQL expression; its paths' text in a. */
static void show_sql(Sql *q, const StoreShow *show, Arena *a)
{
    switch (show->kind) {
    case STORE_SHOW_VALUE:
        sb_puts(&q->text, store_value_sql(show->value));
        return;
    case STORE_SHOW_INSPECT:
        /* The keys' dots are JSON paths (ptx.atom); ncu's metric names hold dots
         * of their own, so a counter's is quoted. */
        sb_puts(&q->text, "json_extract(v.inspect_json, ");
        param(q, val_str(arena_printf(a, "$.%s", show->key)));
        sb_puts(&q->text, ")");
        return;
    case STORE_SHOW_COUNTER:
        sb_puts(&q->text, "json_extract(c.counters_json, ");
        param(q, val_str(arena_printf(a, "$.\"%s\"", show->key)));
        sb_puts(&q->text, ")");
        return;
    case STORE_SHOW_DETAIL:
        sb_puts(&q->text, "c.detail");
        return;
    }
}

static void chain_sql(Sql *q, const StoreCond *c, StoreCondKind kind, Arena *a);

/* Condition c as SQL: comparisons with IS / IS NOT (NULL-safe), literals
 * bound; the paths' text in a, kept until the query is prepared. */
static void cond_sql(Sql *q, const StoreCond *c, Arena *a)
{
    static const struct { int op; const char *sql; } cmps[] = {
        {OP_EQ, "IS"}, {OP_NE, "IS NOT"}, {'<', "<"}, {OP_LE, "<="}, {'>', ">"}, {OP_GE, ">="},
    };
    switch (c->kind) {
    case STORE_COND_AXIS:
        sb_puts(&q->text, "json_extract(c.axes, ");
        param(q, val_str(arena_printf(a, "$.\"%s\"", c->axis)));
        sb_puts(&q->text, ")");
        return;
    case STORE_COND_STATUS:
        sb_puts(&q->text, "c.status");
        return;
    case STORE_COND_VALUE:
        sb_puts(&q->text, store_value_sql(c->value));
        return;
    case STORE_COND_LIT:
        param(q, c->lit);
        return;
    case STORE_COND_NOT:
        sb_puts(&q->text, "(NOT ");
        cond_sql(q, c->a, a);
        sb_puts(&q->text, ")");
        return;
    case STORE_COND_AND:
    case STORE_COND_OR:
        sb_puts(&q->text, "(");
        chain_sql(q, c, c->kind, a);
        sb_puts(&q->text, ")");
        return;
    case STORE_COND_CMP: {
        const char *op = NULL;
        for (size_t i = 0; !op && i < sizeof cmps / sizeof cmps[0]; i++)
            if (cmps[i].op == c->op)
                op = cmps[i].sql;
        KVX_ASSERT(op);
        sb_puts(&q->text, "(");
        cond_sql(q, c->a, a);
        sb_printf(&q->text, " %s ", op);
        cond_sql(q, c->b, a);
        sb_puts(&q->text, ")");
        return;
    }
    }
}

/* The operands of a chain of one kind (a || b || c ...) side by side in one
 * pair of parentheses: nested ones, one a term, overflowed SQLite's parser
 * past some 100 terms. */
static void chain_sql(Sql *q, const StoreCond *c, StoreCondKind kind, Arena *a)
{
    if (c->kind != kind) {
        cond_sql(q, c, a);
        return;
    }
    chain_sql(q, c->a, kind, a);
    sb_puts(&q->text, kind == STORE_COND_AND ? " AND " : " OR ");
    chain_sql(q, c->b, kind, a);
}

StoreRows *store_cases_values(Store *db, const StoreSel *sel, const StoreShow *show,
                              const StoreCond *where, KvxError *err)
{
    Sql q = {0};
    Arena *a = arena_new();
    sb_puts(&q.text, "SELECT c.id, c.run_id, c.status, ");
    show_sql(&q, show, a);
    sb_puts(&q.text, ", c.noise, ");
    if (where)
        cond_sql(&q, where, a);
    else
        sb_puts(&q.text, "1");
    sb_puts(&q.text, " FROM cases c JOIN runs r ON r.id = c.run_id LEFT JOIN variants v ON"
                     " v.id = c.variant_id WHERE");
    selection(&q, sel);
    sb_puts(&q.text, " ORDER BY c.id");
    StoreRows *r = run(db, &q, err);
    arena_free(a);
    return r;
}
