/* store_report: what `kvx report` reads beside its tables, over the cases
 * of one spec in the measured runs (all of them, or run only_run when it is
 * not 0): the runs' environment, the GPUs of a run over several, the
 * statuses, the throttled and noisy cases, and the workload axes.  Each
 * returns plain values; report/results_report.c writes them.
 *
 * Invariants: read-only; the spec name and run id are bound parameters. */
#include "store.h"
#include "store_internal.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql, const char *spec, int64_t only_run)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(q, 1, spec, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 2, only_run);
    return q;
}

static const char *text(sqlite3_stmt *q, int i, Arena *a)
{
    return arena_strdup(a, (const char *)sqlite3_column_text(q, i));
}

static void run_row(sqlite3_stmt *q, StoreRunInfo *r, Arena *a)
{
    r->id = sqlite3_column_int64(q, 0);
    r->reference = !strcmp((const char *)sqlite3_column_text(q, 1), "reference");
    r->kind = text(q, 1, a), r->name = text(q, 2, a), r->gpu_name = text(q, 3, a);
    r->cc = sqlite3_column_int(q, 4), r->sm_count = sqlite3_column_int(q, 5);
    r->clock_mhz = sqlite3_column_int(q, 6), r->mem_clock_mhz = sqlite3_column_int(q, 7);
    r->peak_gbs = sqlite3_column_double(q, 8), r->driver_version = sqlite3_column_int(q, 9);
    r->nvrtc_version = text(q, 10, a), r->kvx_version = text(q, 11, a), r->arch = text(q, 12, a);
    r->hostname = text(q, 13, a), r->started_at = text(q, 14, a);
    r->wall_s = sqlite3_column_type(q, 15) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 15);
    r->ncases = sqlite3_column_int(q, 16);
    r->measure_json = text(q, 17, a), r->command = text(q, 18, a);
}

int store_report_runs(Store *st, const char *spec, int64_t only_run, Arena *a, StoreRunInfo **runs,
                      int *n, KvxError *err)
{
    sqlite3 *db = store_db(st);
    static const char *const sql =
        "SELECT r.id, r.kind, coalesce(r.name, ''), coalesce(r.gpu_name, '?'), r.cc,"
        " r.sm_count, r.clock_mhz, r.mem_clock_mhz, r.peak_gbs, r.driver_version,"
        " coalesce(r.nvrtc_version, ''), coalesce(r.kvx_version, ''), coalesce(r.arch, ''),"
        " coalesce(r.hostname, ''), coalesce(r.started_at, ''), r.wall_s,"
        " (SELECT count(*) FROM cases c WHERE c.run_id = r.id AND c.spec_name = ?1),"
        " coalesce(r.measure_json, ''), coalesce(r.command, '')"
        " FROM runs r WHERE EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id AND"
        " c.spec_name = ?1) AND (?2 = 0 OR r.id = ?2 OR r.kind = 'reference')"
        " ORDER BY r.kind, r.id";
    sqlite3_stmt *q = prepare(db, sql, spec, only_run);
    *runs = NULL, *n = 0;
    if (!q) {
        kvx_error_set(err, KVX_EIO, NULL, "report: %s", sqlite3_errmsg(db));
        return -1;
    }
    int cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            StoreRunInfo *grown = arena_alloc(a, sizeof *grown * (size_t)(cap = cap ? 2 * cap : 8));
            if (*n)
                memcpy(grown, *runs, sizeof *grown * (size_t)*n);
            *runs = grown;
        }
        run_row(q, &(*runs)[(*n)++], a);
    }
    sqlite3_finalize(q);
    return 0;
}

void store_report_multi_gpu(Store *st, const char *spec, int64_t only_run, StoreMultiGpuFn each,
                            void *ctx)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = prepare(db, "SELECT c.run_id, count(DISTINCT c.device_uuid),"
                              " group_concat(DISTINCT c.device_uuid) FROM cases c JOIN runs r ON"
                              " r.id = c.run_id WHERE c.spec_name = ?1 AND r.kind = 'run' AND"
                              " (?2 = 0 OR r.id = ?2) GROUP BY c.run_id"
                              " HAVING count(DISTINCT c.device_uuid) > 1 ORDER BY c.run_id",
                              spec, only_run);
    while (q && sqlite3_step(q) == SQLITE_ROW)
        each(ctx, sqlite3_column_int64(q, 0), sqlite3_column_int(q, 1),
             (const char *)sqlite3_column_text(q, 2));
    sqlite3_finalize(q);
}

void store_report_statuses(Store *st, const char *spec, int64_t only_run, StoreStatusFn each,
                           void *ctx)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = prepare(db, "SELECT c.status, count(*) FROM cases c JOIN runs r ON r.id ="
                              " c.run_id WHERE c.spec_name = ?1 AND r.kind = 'run' AND"
                              " (?2 = 0 OR r.id = ?2) GROUP BY c.status", spec, only_run);
    while (q && sqlite3_step(q) == SQLITE_ROW)
        each(ctx, (const char *)sqlite3_column_text(q, 0), sqlite3_column_int(q, 1));
    sqlite3_finalize(q);
}

void store_report_throttled(Store *st, const char *spec, int64_t only_run, int *n, int *min_mhz,
                            int *max_mhz)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = prepare(db, "SELECT count(*), min(c.sm_mhz), max(c.sm_max_mhz) FROM cases c JOIN"
                              " runs r ON r.id = c.run_id WHERE c.spec_name = ?1 AND r.kind = 'run' AND"
                              " (?2 = 0 OR r.id = ?2) AND c.throttled = 1", spec, only_run);
    *n = *min_mhz = *max_mhz = 0;
    if (q && sqlite3_step(q) == SQLITE_ROW)
        *n = sqlite3_column_int(q, 0), *min_mhz = sqlite3_column_int(q, 1),
        *max_mhz = sqlite3_column_int(q, 2);
    sqlite3_finalize(q);
}

void store_report_noisy(Store *st, const char *spec, int64_t only_run, int *n, double *max_noise)
{
    sqlite3 *db = store_db(st);
    /* Timed cases whose sampling ended (max_samples or budget) before the
     * spread met the run's noise target. */
    sqlite3_stmt *q = prepare(db, "SELECT count(*), max(c.noise) FROM cases c JOIN runs r ON r.id ="
                              " c.run_id WHERE c.spec_name = ?1 AND r.kind = 'run' AND (?2 = 0 OR"
                              " r.id = ?2) AND c.median_ms IS NOT NULL AND c.noise >"
                              " json_extract(r.measure_json, '$.noise')", spec, only_run);
    *n = 0, *max_noise = 0;
    if (q && sqlite3_step(q) == SQLITE_ROW)
        *n = sqlite3_column_int(q, 0), *max_noise = sqlite3_column_double(q, 1);
    sqlite3_finalize(q);
}

int store_report_workload_axes(Store *st, const char *spec, StoreNameFn each, void *ctx)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = prepare(db, "SELECT j.key FROM cases c JOIN runs r ON r.id = c.run_id,"
                              " json_each(c.workload) j WHERE c.spec_name = ?1 AND r.kind = 'run'"
                              " AND json_valid(c.workload) GROUP BY j.key UNION ALL SELECT NULL"
                              " WHERE EXISTS (SELECT 1 FROM cases c JOIN runs r ON r.id ="
                              " c.run_id WHERE c.spec_name = ?1 AND r.kind = 'run' AND"
                              " json_valid(c.workload))", spec, 0);
    int known = 0;
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (!name)
            known = 1;   /* the marker row: some case stored its workload */
        else
            each(ctx, name);
    }
    sqlite3_finalize(q);
    return known;
}
