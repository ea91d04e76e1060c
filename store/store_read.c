/* store_read: the store's reads for the verbs that only read (table,
 * report, compare, export): opening a database that must exist, read-only,
 * the names of the stored specs, and `kvx export`'s rows, every stored column
 * of a case with its run's and its variant's.  What a verb does with them
 * (formats, tables) is report/'s; the SQL is here.
 *
 * Invariants: a read opens nothing for writing and creates no file beside
 * the database; every value comes in through a bound parameter. */
#include "store.h"
#include "store_internal.h"
#include "store_cols.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- opening --------------------------------------------------------------------- */

/* A database that fails SQLite's quick check is named corrupt, with what the
 * check found: flipped bytes once read as "no cases stored". */
static int check_intact(sqlite3 *db, const char *path, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    const char *what = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : NULL;
    int ok = what && !strcmp(what, "ok");
    /* A database failure, the same class (3) as a corrupt file found by a
     * run or a merge. */
    if (!ok)
        kvx_error_set(err, KVX_EIO, NULL, "%s: the database is corrupt (%s: %s)", path,
                      what ? "quick_check" : sqlite3_errstr(sqlite3_extended_errcode(db)),
                      what ? what : sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return ok ? 0 : -1;
}

/* A kvx database of a schema this kvx reads: one written by a newer kvx is
 * refused, as `kvx run` refuses it, rather than misread.  0 or -1 with err
 * (KVX_EINPUT). */
static int check_schema(sqlite3 *db, const char *path, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    int ok = sqlite3_prepare_v2(db, "SELECT (SELECT max(version) FROM schema_version) FROM cases LIMIT 0",
                                -1, &q, NULL) == SQLITE_OK;
    sqlite3_finalize(q);
    if (!ok) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: not a kvx results database (%s)", path,
                      sqlite3_errmsg(db));
        return -1;
    }
    int version = 0;
    if (sqlite3_prepare_v2(db, "SELECT max(version) FROM schema_version", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        version = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    if (version > STORE_SCHEMA_VERSION) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: results schema %d is newer than this kvx understands (%d)",
                      path, version, STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

Store *store_read_open(const char *path, KvxError *err)
{
    if (access(path, F_OK) != 0) {
        kvx_error_set(err, KVX_EINPUT, NULL,
                      "no results database at '%s' (run `kvx run` first, or pass --db)", path);
        return NULL;
    }
    /* Read verbs write nothing: read-only, and immutable (no -shm or -wal
     * created beside the file, and readable where nothing may be written)
     * unless a write-ahead log is there, which only a locking reader may read:
     * a run in progress, whose pages are not all in the main file yet. */
    char *uri = store_read_uri(path);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "%s: cannot open: %s", path,
                      db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    if (check_intact(db, path, err)) {
        sqlite3_close(db);
        return NULL;
    }
    if (check_schema(db, path, err)) {
        sqlite3_close(db);
        return NULL;
    }
    return store_wrap(db, path);
}


int store_spec_names(Store *st, int64_t run_id, const char *ref_name, Arena *a,
                     const char ***names, int *n, KvxError *err)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    const char *sql = "SELECT DISTINCT c.spec_name FROM cases c JOIN runs r ON r.id = c.run_id"
                      " WHERE (?1 = 0 OR c.run_id = ?1) AND (?2 IS NULL OR (r.kind ="
                      " 'reference' AND r.name = ?2)) ORDER BY c.spec_name";
    *names = NULL, *n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL)) {
        kvx_error_set(err, KVX_EIO, NULL, "listing specs: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(q, 1, run_id);
    if (ref_name)
        sqlite3_bind_text(q, 2, ref_name, -1, SQLITE_TRANSIENT);
    int cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (!name)
            continue;
        if (*n == cap) {
            const char **grown = arena_alloc(a, sizeof *grown * (size_t)(cap = cap ? 2 * cap : 8));
            if (*n)
                memcpy(grown, *names, sizeof *grown * (size_t)*n);
            *names = grown;
        }
        (*names)[(*n)++] = arena_strdup(a, name);
    }
    sqlite3_finalize(q);
    return 0;
}

int store_spec_paths(Store *st, const char *spec_name, Arena *a, const char ***paths, int *n)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    *paths = NULL, *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT r.spec_path FROM runs r WHERE r.kind = 'run' AND"
                           " r.spec_path IS NOT NULL AND EXISTS (SELECT 1 FROM cases c WHERE"
                           " c.run_id = r.id AND c.spec_name = ?1) ORDER BY r.id DESC",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(q, 1, spec_name, -1, SQLITE_TRANSIENT);
    int cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            const char **grown = arena_alloc(a, sizeof *grown * (size_t)(cap = cap ? 2 * cap : 8));
            if (*n)
                memcpy(grown, *paths, sizeof *grown * (size_t)*n);
            *paths = grown;
        }
        (*paths)[(*n)++] = arena_strdup(a, (const char *)sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    return 0;
}

int64_t store_run_buf_align(Store *st, int64_t run_id)
{
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    int64_t align = 0;
    /* A database before schema 2, read as it is, has no devices_json. */
    if (sqlite3_prepare_v2(db, "SELECT CASE WHEN json_valid(devices_json) THEN"
                           " json_extract(devices_json, '$[0].buf_align') END FROM runs"
                           " WHERE id = ?1 AND kind = 'run'",
                           -1, &q, NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT NULL FROM runs WHERE id = ?1 AND kind = 'run'", -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(q, 1, run_id);
    if (sqlite3_step(q) == SQLITE_ROW)
        align = sqlite3_column_type(q, 0) == SQLITE_INTEGER ? sqlite3_column_int64(q, 0) : 0;
    else
        align = -1;
    sqlite3_finalize(q);
    return align;
}

/* ---- rows of a query built elsewhere -------------------------------------------- */

struct StoreRows {
    sqlite3 *db;
    sqlite3_stmt *st;
};

StoreRows *store_rows(Store *s, const char *sql, const Value *params, int nparams, KvxError *err)
{
    sqlite3 *db = store_db(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "results query: %s", sqlite3_errmsg(db));
        return NULL;
    }
    for (int i = 0; i < nparams; i++) {
        Value v = params[i];
        if (v.kind == VAL_STR)
            sqlite3_bind_text(st, i + 1, v.s, -1, SQLITE_TRANSIENT);
        else if (v.kind == VAL_FLOAT)
            sqlite3_bind_double(st, i + 1, v.d);
        else
            sqlite3_bind_int64(st, i + 1, v.i);
    }
    StoreRows *r = mem_calloc(1, sizeof *r);
    r->db = db, r->st = st;
    return r;
}

int store_rows_next(StoreRows *r, const char *what, KvxError *err)
{
    int step = sqlite3_step(r->st);
    if (step == SQLITE_ROW)
        return 1;
    if (step == SQLITE_DONE)
        return 0;
    kvx_error_set(err, KVX_EIO, NULL, "%s: %s", what, sqlite3_errmsg(r->db));
    return -1;
}

StoreType store_rows_type(const StoreRows *r, int i)
{
    switch (sqlite3_column_type(r->st, i)) {
    case SQLITE_INTEGER:
        return STORE_INT;
    case SQLITE_FLOAT:
        return STORE_REAL;
    case SQLITE_NULL:
        return STORE_NULL;
    default:
        return STORE_TEXT;
    }
}

int64_t store_rows_int(const StoreRows *r, int i) { return sqlite3_column_int64(r->st, i); }

double store_rows_double(const StoreRows *r, int i) { return sqlite3_column_double(r->st, i); }

const char *store_rows_text(const StoreRows *r, int i)
{
    return (const char *)sqlite3_column_text(r->st, i);
}

void store_rows_close(StoreRows *r)
{
    if (!r)
        return;
    sqlite3_finalize(r->st);
    free(r);
}

/* ---- export ---------------------------------------------------------------------- */

/* Fixed columns of an exported row, in order: kvx 0.2.0's export, kept as
 * it was for the scripts that read it by position.  Axes follow `spec_name`.
 * Every other stored column follows them in store_cols.c's order (a value
 * added to core/values.h's table comes out there by itself). */
static const char *const export_head[] = {
    "c.id AS case_id", "c.run_id", "r.kind AS run_kind", "r.name AS run_name", "c.spec_name",
};
static const char *const export_tail[] = {
    "c.label", "c.status", "c.detail", "c.median_ms", "c.min_ms", "c.max_ms", "c.mean_ms",
    "c.stdev_ms", "c.noise", "c.samples", "c.rel_err", "c.bytes", "c.atomics", "c.elements",
    "c.gbs", "c.pct_peak", "c.elems_per_s", "c.atomics_per_s", "c.grid_x", "c.grid_y",
    "c.grid_z", "c.block_x", "c.block_y", "c.block_z", "c.smem", "c.cluster_x", "c.cluster_y",
    "c.cluster_z", "c.t_input_ms", "c.t_verify_ms", "c.t_measure_ms", "c.device_uuid",
    "r.gpu_name", "r.gpu_uuid", "r.cc", "r.sm_count", "r.l2_bytes", "r.mem_bytes",
    "r.clock_mhz", "r.mem_clock_mhz", "r.peak_gbs", "r.driver_version", "r.nvrtc_version",
    "r.kvx_version", "r.arch", "r.hostname", "r.started_at", "r.measure_json",
    "v.source_hash", "v.options", "v.compile_ok", "v.compile_ms", "v.regs", "v.spill_stores",
    "v.spill_loads", "v.smem_static", "v.stack", "v.inspect_json", "c.key", "c.stored_at",
};
#define NHEAD ((int)(sizeof export_head / sizeof export_head[0]))
#define NTAIL ((int)(sizeof export_tail / sizeof export_tail[0]))

/* One exported column: its SQL expression, its name in the output, whether
 * it holds JSON (nested as an object in JSON output), and where its
 * json_valid() flag sits in the query (-1: none). */
typedef struct ExportCol {
    const StoreCol *col;        /* the stored column it reads, or NULL */
    const char *expr;
    const char *name;
    int json;
    int valid_at;
} ExportCol;

static const char *col_name(const char *expr)
{
    const char *as = strstr(expr, " AS ");
    return as ? as + 4 : strchr(expr, '.') + 1;
}

/* One `kvx export`: the stored axes (in order of first appearance), the
 * columns (the fixed head, the axes, the fixed tail, then every other stored
 * column) and the query over them. */
struct StoreExport {
    sqlite3 *db;
    const char *spec;           /* NULL: every spec */
    Arena *a;
    sqlite3_stmt *q;
    const char **axes;          /* malloc'd; the strings in a */
    int naxes, cap;
    ExportCol *cols;            /* in a */
    int ncols, nvalid;
    /* The file's own layout: each table's columns, "TABLE.NAME" newline-
     * separated (a file of an older schema lacks the newer ones). */
    StrBuf layout;
};

/* The columns the file's tables have, into x->layout.  0 or -1. */
static int export_layout(StoreExport *x)
{
    sb_putc(&x->layout, '\n');
    if (sqlite3_prepare_v2(x->db, "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p"
                           " WHERE m.type = 'table'", -1, &x->q, NULL))
        return -1;
    while (sqlite3_step(x->q) == SQLITE_ROW)
        sb_printf(&x->layout, "%s.%s\n", (const char *)sqlite3_column_text(x->q, 0),
                  (const char *)sqlite3_column_text(x->q, 1));
    sqlite3_finalize(x->q);
    x->q = NULL;
    return 0;
}

/* Whether the file's table t has column name. */
static int file_has(const StoreExport *x, const StoreTable *t, const char *name)
{
    char key[160];
    snprintf(key, sizeof key, "\n%s.%s\n", t->name, name);
    return strstr(sb_str(&x->layout), key) != NULL;
}

static int export_axes(StoreExport *x)
{
    const char *ax_sql = "SELECT j.key FROM cases c, json_each(c.axes) j"
                         " WHERE ?1 IS NULL OR c.spec_name = ?1"
                         " GROUP BY j.key ORDER BY min(c.id), min(j.id)";
    if (sqlite3_prepare_v2(x->db, ax_sql, -1, &x->q, NULL))
        return -1;
    if (x->spec)
        sqlite3_bind_text(x->q, 1, x->spec, -1, SQLITE_TRANSIENT);
    while (sqlite3_step(x->q) == SQLITE_ROW) {
        if (x->naxes == x->cap)
            x->axes = mem_realloc(x->axes, sizeof *x->axes * (size_t)(x->cap *= 2));
        x->axes[x->naxes++] = arena_strdup(x->a, (const char *)sqlite3_column_text(x->q, 0));
    }
    sqlite3_finalize(x->q);
    x->q = NULL;
    return 0;
}

static const char *const alias_of[STORE_NTABLES] = {
    [STORE_T_RUNS] = "r", [STORE_T_VARIANTS] = "v", [STORE_T_CASES] = "c",
};

/* The stored column an expression "A.name[ AS alias]" reads, or NULL. */
static const StoreCol *expr_col(const char *expr)
{
    for (int t = 0; t < STORE_NTABLES; t++) {
        size_t n = strlen(alias_of[t]);
        if (!strncmp(expr, alias_of[t], n) && expr[n] == '.') {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(expr + n + 1, " "), expr + n + 1);
            return store_col_find(&store_tables[t], name);
        }
    }
    return NULL;
}

static int name_taken(const StoreExport *x, const char *name)
{
    for (int i = 0; i < x->ncols; i++)
        if (!strcmp(x->cols[i].name, name))
            return 1;
    return 0;
}

/* A column of the export; a stored column the file's layout lacks (an older
 * schema) is NULL in every row. */
static void add_col(StoreExport *x, const char *expr, const char *name)
{
    const StoreCol *c = expr_col(expr);
    ExportCol *e = &x->cols[x->ncols++];
    int t = !c ? -1 : expr[0] == 'r' ? STORE_T_RUNS : expr[0] == 'v' ? STORE_T_VARIANTS : STORE_T_CASES;
    e->col = c;
    e->expr = c && !file_has(x, &store_tables[t], c->name) ? "NULL" : expr;
    e->name = name;
    e->json = c && c->json;
    e->valid_at = -1;
}

/* Every stored column the fixed lists leave out, in table order (cases,
 * runs, variants), named as stored or, where the name is taken, run_NAME or
 * variant_NAME; the join keys (runs.id, variants.id, variants.run_id) are
 * case_id's run_id and variant_id already. */
static void add_stored(StoreExport *x)
{
    static const int order[] = {STORE_T_CASES, STORE_T_RUNS, STORE_T_VARIANTS};
    static const char *const prefix[STORE_NTABLES] = {
        [STORE_T_RUNS] = "run_", [STORE_T_VARIANTS] = "variant_", [STORE_T_CASES] = "case_",
    };
    for (int k = 0; k < 3; k++) {
        const StoreTable *t = &store_tables[order[k]];
        for (int i = 0; i < t->ncols; i++) {
            const char *expr = arena_printf(x->a, "%s.%s", alias_of[order[k]], t->cols[i].name);
            int have = !strcmp(expr, "r.id") || !strcmp(expr, "v.id") || !strcmp(expr, "v.run_id");
            for (int j = 0; j < x->ncols && !have; j++)
                have = x->cols[j].col == &t->cols[i];
            if (have)
                continue;
            const char *name = t->cols[i].name;
            add_col(x, expr, name_taken(x, name) ? arena_printf(x->a, "%s%s", prefix[order[k]], name)
                                                 : name);
        }
    }
}

static void export_plan(StoreExport *x)
{
    int cap = NHEAD + x->naxes + NTAIL;
    for (int t = 0; t < STORE_NTABLES; t++)
        cap += store_tables[t].ncols;
    x->cols = arena_alloc(x->a, sizeof *x->cols * (size_t)cap);
    for (int i = 0; i < NHEAD; i++)
        add_col(x, export_head[i], col_name(export_head[i]));
    int first_axis = x->ncols;
    for (int i = 0; i < x->naxes; i++)
        x->cols[x->ncols++] = (ExportCol){NULL, "json_extract(c.axes, ?)", "", 0, -1};
    for (int i = 0; i < NTAIL; i++)
        add_col(x, export_tail[i], col_name(export_tail[i]));
    add_stored(x);
    /* An axis that collides with another column becomes axis.NAME. */
    for (int i = 0; i < x->naxes; i++) {
        ExportCol *e = &x->cols[first_axis + i];
        e->name = name_taken(x, x->axes[i]) ? arena_printf(x->a, "axis.%s", x->axes[i]) : x->axes[i];
    }
    for (int i = 0; i < x->ncols; i++)
        if (x->cols[i].json)
            x->cols[i].valid_at = x->ncols + x->nvalid++;
}

static int export_query(StoreExport *x)
{
    StrBuf sql;
    sb_init(&sql);
    sb_puts(&sql, "SELECT ");
    for (int i = 0; i < x->ncols; i++)
        sb_printf(&sql, "%s%s", i ? ", " : "", x->cols[i].expr);
    for (int i = 0; i < x->ncols; i++)
        if (x->cols[i].json)
            sb_printf(&sql, ", json_valid(%s)", x->cols[i].expr);
    sb_puts(&sql, " FROM cases c JOIN runs r ON r.id = c.run_id LEFT JOIN variants v ON"
                  " v.id = c.variant_id WHERE ? IS NULL OR c.spec_name = ? ORDER BY c.id");
    int rc = sqlite3_prepare_v2(x->db, sb_str(&sql), -1, &x->q, NULL);
    sb_free(&sql);
    if (rc)
        return -1;
    for (int i = 0; i < x->naxes; i++)
        sqlite3_bind_text(x->q, i + 1, arena_printf(x->a, "$.\"%s\"", x->axes[i]), -1,
                          SQLITE_TRANSIENT);
    if (x->spec) {
        sqlite3_bind_text(x->q, x->naxes + 1, x->spec, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(x->q, x->naxes + 2, x->spec, -1, SQLITE_TRANSIENT);
    }
    return 0;
}

StoreExport *store_export_open(Store *st, const char *spec, KvxError *err)
{
    sqlite3 *db = store_db(st);
    StoreExport *x = mem_calloc(1, sizeof *x);
    *x = (StoreExport){.db = db, .spec = spec, .a = arena_new(), .cap = 16};
    x->axes = mem_alloc(sizeof *x->axes * (size_t)x->cap);
    sb_init(&x->layout);
    if (export_layout(x) || export_axes(x))
        goto fail;
    export_plan(x);
    if (export_query(x))
        goto fail;
    return x;
fail:
    kvx_error_set(err, KVX_EIO, NULL, "export: %s", sqlite3_errmsg(db));
    store_export_close(x);
    return NULL;
}

int store_export_ncols(const StoreExport *x) { return x->ncols; }

const char *store_export_name(const StoreExport *x, int i) { return x->cols[i].name; }

int store_export_next(StoreExport *x, StoreCell *cells, KvxError *err)
{
    int step = sqlite3_step(x->q);
    if (step == SQLITE_DONE)
        return 0;
    if (step != SQLITE_ROW) {
        kvx_error_set(err, KVX_EIO, NULL, "export: %s", sqlite3_errmsg(x->db));
        return -1;
    }
    for (int i = 0; i < x->ncols; i++) {
        StoreCell *c = &cells[i];
        memset(c, 0, sizeof *c);
        switch (sqlite3_column_type(x->q, i)) {
        case SQLITE_INTEGER:
            c->type = STORE_INT, c->i = sqlite3_column_int64(x->q, i);
            break;
        case SQLITE_FLOAT:
            c->type = STORE_REAL, c->d = sqlite3_column_double(x->q, i);
            break;
        case SQLITE_NULL:
            c->type = STORE_NULL;
            break;
        default:
            c->type = STORE_TEXT, c->text = (const char *)sqlite3_column_text(x->q, i);
            c->json = x->cols[i].json && sqlite3_column_int(x->q, x->cols[i].valid_at);
        }
    }
    return 1;
}

void store_export_close(StoreExport *x)
{
    if (!x)
        return;
    sqlite3_finalize(x->q);
    free(x->axes);
    sb_free(&x->layout);
    arena_free(x->a);
    free(x);
}
