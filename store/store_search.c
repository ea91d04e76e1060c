/* store_search: the reads of a search (store_search.h).  Read-only; the spec
 * name and keys are bound parameters, and a column name is spliced into SQL
 * only after store_objective_dir accepted it. */
#include "store_search.h"
#include "store_internal.h"
#include "core/values.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

int store_objective_dir(const char *column)
{
    int v = column ? values_find(column) : -1;
    return v >= 0 && values_info[v].objective ? values_lower_better(values_info[v].unit) : -1;
}

const char *store_objective_list(void)
{
    static _Thread_local char buf[256];
    size_t at = 0;
    for (int i = 0; i < SPEC_VALUE_COUNT; i++)
        if (values_info[i].objective && at < sizeof buf)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", at ? ", " : "", values_info[i].name);
    return buf;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql, const char *text, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "search: %s", sqlite3_errmsg(db));
        return NULL;
    }
    sqlite3_bind_text(q, 1, text, -1, SQLITE_TRANSIENT);
    return q;
}

static int finish(sqlite3 *db, sqlite3_stmt *q, int step, KvxError *err)
{
    sqlite3_finalize(q);
    if (step == SQLITE_DONE || step == SQLITE_ROW)
        return 0;
    kvx_error_set(err, KVX_EIO, NULL, "search: %s", sqlite3_errmsg(db));
    return -1;
}

static double real_or_nan(sqlite3_stmt *q, int i)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(q, i);
}

int store_search_axes(Store *st, const char *spec, StoreDeclFn each, void *ctx, KvxError *err)
{
    sqlite3 *db = store_db(st);
    static const char *const sql =
        "SELECT a.key, v.value FROM (SELECT r.axes_json FROM runs r WHERE r.kind = 'run' AND"
        " r.axes_json IS NOT NULL AND EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id AND"
        " c.spec_name = ?1) ORDER BY r.id DESC LIMIT 1) t, json_each(t.axes_json) a, json_each(a.value) v"
        " ORDER BY a.id, v.id";
    sqlite3_stmt *q = prepare(db, sql, spec, err);
    if (!q)
        return -1;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW)
        each(ctx, (const char *)sqlite3_column_text(q, 0), (const char *)sqlite3_column_text(q, 1));
    return finish(db, q, step, err);
}

int store_search_cases(Store *st, const char *spec, const char *column, StoreCaseAxisFn each, void *ctx,
                       KvxError *err)
{
    sqlite3 *db = store_db(st);
    if (store_objective_dir(column) < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "'%s' is no objective (expected one of: %s)", column,
                      store_objective_list());
        return -1;
    }
    char sql[768];
    snprintf(sql, sizeof sql,
             "SELECT c.id, c.status, c.%s, j.key, j.value,"
             " json_type(coalesce(c.workload, '{}'), '$.\"' || j.key || '\"') IS NOT NULL"
             " FROM cases c JOIN runs r ON r.id = c.run_id, json_each(c.axes) j"
             " WHERE c.spec_name = ?1 AND r.kind = 'run' ORDER BY c.id, j.id", column);
    sqlite3_stmt *q = prepare(db, sql, spec, err);
    if (!q)
        return -1;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW)
        each(ctx, sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1), real_or_nan(q, 2),
             (const char *)sqlite3_column_text(q, 3), (const char *)sqlite3_column_text(q, 4),
             sqlite3_column_int(q, 5));
    return finish(db, q, step, err);
}

int store_search_case(Store *st, const char *key, const char *column, const StoreSearchId *id, char status[32],
                      double *value, double *cost_ms, int *same, KvxError *err)
{
    sqlite3 *db = store_db(st);
    status[0] = 0;
    *value = *cost_ms = NAN;
    *same = 0;
    if (store_objective_dir(column) < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "'%s' is no objective", column);
        return -1;
    }
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT c.status, c.%s, c.t_input_ms + c.t_verify_ms + c.t_measure_ms,"
             " coalesce(r.search_strategy = ?2 AND r.search_seed = ?3 AND r.search_objective = ?4, 0)"
             " FROM cases c JOIN runs r ON r.id = c.run_id WHERE c.key = ?1", column);
    sqlite3_stmt *q = prepare(db, sql, key, err);
    if (!q)
        return -1;
    sqlite3_bind_text(q, 2, id->strategy, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 3, id->seed, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 4, id->objective, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
        snprintf(status, 32, "%s", (const char *)sqlite3_column_text(q, 0));
        *value = real_or_nan(q, 1);
        *cost_ms = real_or_nan(q, 2);
        *same = sqlite3_column_int(q, 3);
    }
    return finish(db, q, step, err);
}

int store_search_runs(Store *st, const char *spec)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM runs WHERE spec_name = ?1 AND"
                           " search_strategy IS NOT NULL)", -1, &q, NULL) != SQLITE_OK)
        return 0;       /* no search_strategy column: schema 4 or older */
    sqlite3_bind_text(q, 1, spec, -1, SQLITE_TRANSIENT);
    int found = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return found;
}

/* A text column into out[n] ("" when NULL). */
static void text_into(sqlite3_stmt *q, int i, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

int store_search_record_runs(Store *st, const char *spec, StoreRecordRuns *out, KvxError *err)
{
    sqlite3 *db = store_db(st);
    memset(out, 0, sizeof *out);
    static const char *const has_col = "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'search_strategy'";
    static const char *const sql =
        "WITH rr AS (SELECT r.id, r.search_strategy st, r.search_budget b, r.search_seed sd FROM runs r"
        " WHERE r.kind = 'run' AND EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id AND c.spec_name = ?1)),"
        " f AS (SELECT * FROM rr WHERE st IS NOT NULL ORDER BY id LIMIT 1)"
        " SELECT (SELECT count(*) FROM rr WHERE st IS NULL), (SELECT count(*) FROM rr WHERE st IS NOT NULL),"
        " (SELECT min(id) FROM rr WHERE st IS NOT NULL), (SELECT max(id) FROM rr WHERE st IS NOT NULL),"
        " (SELECT st FROM f), (SELECT b FROM f), (SELECT sd FROM f)";
    sqlite3_stmt *q = prepare(db, has_col, spec, err);
    if (!q)
        return -1;
    int searched = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    if (!searched)
        return 0;                       /* schema 6 or older: no search stored */
    if (!(q = prepare(db, sql, spec, err)))
        return -1;
    int step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
        out->nfull = sqlite3_column_int(q, 0), out->nsearch = sqlite3_column_int(q, 1);
        out->first = sqlite3_column_int64(q, 2), out->last = sqlite3_column_int64(q, 3);
        text_into(q, 4, out->strategy, sizeof out->strategy);
        text_into(q, 5, out->budget, sizeof out->budget);
        text_into(q, 6, out->seed, sizeof out->seed);
    }
    return finish(db, q, step, err);
}

void store_search_gpu(Store *st, const char *spec, char *out, size_t n)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    out[0] = 0;
    if (sqlite3_prepare_v2(db, "SELECT coalesce(gpu_name, '') FROM runs r WHERE kind = 'run' AND EXISTS"
                           " (SELECT 1 FROM cases c WHERE c.run_id = r.id AND c.spec_name = ?1)"
                           " ORDER BY id DESC LIMIT 1", -1, &q, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(q, 1, spec, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q) == SQLITE_ROW)
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
}

/* col of table t as the query reads it: NULL where the file's layout lacks it. */
static const char *col_or_null(Store *st, const char *t, const char *col, const char *expr)
{
    return store_column_exists(st, t, col) == 1 ? expr : "NULL";
}

int store_search_facts(Store *st, const char *spec, StoreFactsFn each, void *ctx, KvxError *err)
{
    sqlite3 *db = store_db(st);
    char sql[1024];
    int kern = store_column_exists(st, "variants", "kernels_json") == 1;
    snprintf(sql, sizeof sql,
             "SELECT c.id, coalesce(c.variant_id, 0), c.status, v.compile_ms, c.t_verify_ms,"
             " c.t_input_ms + c.t_measure_ms, c.gbs, %s, %s"
             " FROM cases c JOIN runs r ON r.id = c.run_id LEFT JOIN variants v ON v.id = c.variant_id"
             " WHERE c.spec_name = ?1 AND r.kind = 'run' ORDER BY c.id",
             col_or_null(st, "cases", "samples_json",
                         "CASE WHEN json_valid(c.samples_json) AND json_type(c.samples_json) = 'array'"
                         " THEN c.samples_json END"),
             kern ? "(SELECT group_concat(json_extract(k.value, '$.kernel'), '+') FROM json_each("
                    "CASE WHEN json_valid(v.kernels_json) THEN v.kernels_json ELSE '[]' END) k)"
                  : "NULL");
    sqlite3_stmt *q = prepare(db, sql, spec, err);
    if (!q)
        return -1;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        StoreSearchFacts f = {
            sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), (const char *)sqlite3_column_text(q, 2),
            real_or_nan(q, 3), real_or_nan(q, 4), real_or_nan(q, 5), real_or_nan(q, 6),
            (const char *)sqlite3_column_text(q, 7), (const char *)sqlite3_column_text(q, 8)};
        each(ctx, &f);
    }
    return finish(db, q, step, err);
}

int store_search_counters(Store *st, const char *spec, StoreMetricFn each, void *ctx, KvxError *err)
{
    if (store_column_exists(st, "cases", "counters_json") != 1)
        return 0;       /* a file before schema 6 */
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = prepare(db, "SELECT c.id, j.key, j.value FROM cases c JOIN runs r ON r.id = c.run_id,"
                                  " json_each(CASE WHEN json_valid(c.counters_json) THEN c.counters_json"
                                  " ELSE '{}' END) j WHERE c.spec_name = ?1 AND r.kind = 'run' AND"
                                  " j.type IN ('integer', 'real') ORDER BY c.id, j.id", spec, err);
    if (!q)
        return -1;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW)
        each(ctx, sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1),
             sqlite3_column_double(q, 2));
    return finish(db, q, step, err);
}
