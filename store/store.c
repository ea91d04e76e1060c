/* store: the SQLite results database (schema: docs/results-schema.md).
 *
 * Invariants: every statement the run loop uses is prepared once at open and
 * reset after each use; every value comes in through a bound parameter; a
 * measurement that does not apply (NaN) is stored as NULL, never as a number.
 * The schema is created with IF NOT EXISTS so that opening an existing database
 * is harmless; schema_version says which layout a file holds. */
#include "store.h"
#include "store_cols.h"
#include "store_internal.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The tables from store_cols.c, and the indexes. */
static char *schema_sql(void)
{
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);");
    for (int t = 0; t < STORE_NTABLES; t++)
        store_cols_create_sql(&store_tables[t], &b);
    sb_puts(&b, "CREATE INDEX IF NOT EXISTS cases_spec ON cases(spec_name);"
                "CREATE INDEX IF NOT EXISTS cases_run ON cases(run_id);");
    return sb_take(&b);
}

enum {
    ST_RUN, ST_END_RUN, ST_VAR_INSERT, ST_VAR_FIND, ST_CASE, ST_HAS, ST_FORGET,
    ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_COUNTERS, ST_DROP_VARS, ST_DROP_RUN, ST_COUNT
};

/* The inserts (ST_RUN, ST_VAR_INSERT, ST_CASE) come from store_cols.c. */
static const char *const stmt_sql[ST_COUNT] = {
    [ST_END_RUN] = "UPDATE runs SET wall_s = ?, profile_json = ? WHERE id = ?",
    [ST_VAR_FIND] = "SELECT id FROM variants WHERE run_id = ? AND source_hash = ?",
    [ST_HAS] = "SELECT 1 FROM cases WHERE key = ? LIMIT 1",
    [ST_FORGET] = "DELETE FROM cases WHERE key = ?",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_COUNTERS] = "UPDATE cases SET l2_atom_requests = ?, l2_red_requests = ?, dram_read_bytes = ?,"
                    " dram_write_bytes = ?, counters_json = ? WHERE run_id = ? AND key = ?",
    /* Only a run without cases: a case's variant_id points at its run's variants. */
    [ST_DROP_VARS] = "DELETE FROM variants WHERE run_id = ?1 AND NOT EXISTS"
                     " (SELECT 1 FROM cases WHERE run_id = ?1)",
    [ST_DROP_RUN] = "DELETE FROM runs WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM cases WHERE run_id = ?1)",
};

struct Store {
    sqlite3 *db;
    char *path;
    int wal;            /* this open switched the file to WAL */
    sqlite3_stmt *st[ST_COUNT];
};

int store_fail(Store *s, KvxError *err, const char *what)
{
    kvx_error_set(err, KVX_EIO, NULL, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
    return -1;
}

int store_exec(Store *s, const char *sql, KvxError *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "%s: %s", s->path, msg ? msg : "sqlite error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int store_column_exists(Store *s, const char *table, const char *column)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                           -1, &q, NULL))
        return -1;
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, column, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) > 0 : -1;
    sqlite3_finalize(q);
    return rc;
}

/* Bring a file of layout version up to STORE_SCHEMA_VERSION: every column
 * added since (store_cols.c's `since`), one ALTER each, NULL for the old rows.
 * A table the file lacked has just been created whole.  0 or -1. */
static int migrate(Store *s, int version, KvxError *err)
{
    for (int t = 0; t < STORE_NTABLES; t++)
        for (int i = 0; i < store_tables[t].ncols; i++) {
            const StoreCol *c = &store_tables[t].cols[i];
            if (c->since <= version)
                continue;
            int exists = store_column_exists(s, store_tables[t].name, c->name);
            if (exists < 0)
                return store_fail(s, err, "reading a table's columns");
            char sql[160];
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", store_tables[t].name,
                     c->name, c->type);
            if (!exists && store_exec(s, sql, err))
                return -1;
        }
    /* Until schema 6 the counters were the four fixed columns only: copied
     * into counters_json under their metrics' names, so counter.NAME reads them. */
    if (version >= 4 && version < 6 &&
        store_exec(s, "UPDATE cases SET counters_json = json_object("
                      "'lts__t_requests_srcunit_tex_op_atom.sum', l2_atom_requests,"
                      " 'lts__t_requests_srcunit_tex_op_red.sum', l2_red_requests,"
                      " 'dram__bytes_read.sum', dram_read_bytes, 'dram__bytes_write.sum', dram_write_bytes)"
                      " WHERE counters_json IS NULL AND coalesce(l2_atom_requests, l2_red_requests,"
                      " dram_read_bytes, dram_write_bytes) IS NOT NULL", err))
        return -1;
    char sql[96];
    snprintf(sql, sizeof sql, "UPDATE schema_version SET version = %d", STORE_SCHEMA_VERSION);
    return store_exec(s, sql, err);
}

/* Check or write schema_version.  A database written by a newer kvx is
 * refused rather than silently misread. */
static int check_version(Store *s, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT max(version) FROM schema_version", -1, &q, NULL))
        return store_fail(s, err, "reading schema_version");
    int rc = sqlite3_step(q);
    int have = rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL;
    int version = have ? sqlite3_column_int(q, 0) : 0;
    sqlite3_finalize(q);
    if (rc != SQLITE_ROW)
        return store_fail(s, err, "reading schema_version");
    if (have && version > STORE_SCHEMA_VERSION) {
        kvx_error_set(err, KVX_EINPUT, NULL,
                      "%s: results schema %d is newer than this kvx understands (%d)",
                      s->path, version, STORE_SCHEMA_VERSION);
        return -1;
    }
    if (!have) {
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO schema_version (version) VALUES (%d)",
                 STORE_SCHEMA_VERSION);
        return store_exec(s, sql, err);
    }
    return version < STORE_SCHEMA_VERSION ? migrate(s, version, err) : 0;
}

/* A file that holds tables but no schema_version, which every kvx layout
 * has (another application's SQLite database, given to --db by mistake), is
 * refused before anything changes it: the WAL pragma below would switch its
 * journal mode for good.  0 or -1. */
static int check_foreign(Store *s, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*), coalesce(sum(name = 'schema_version'), 0),"
                           " group_concat(name, ', ') FROM sqlite_master WHERE type = 'table' AND"
                           " name NOT LIKE 'sqlite_%'", -1, &q, NULL) != SQLITE_OK)
        return store_fail(s, err, "reading its tables");
    int rc = sqlite3_step(q) == SQLITE_ROW ? 0 : store_fail(s, err, "reading its tables");
    if (rc == 0 && sqlite3_column_int(q, 0) > 0 && sqlite3_column_int(q, 1) == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: not a kvx results database (it holds other tables: %.200s);"
                      " left as it was", s->path, (const char *)sqlite3_column_text(q, 2));
        rc = -1;
    }
    sqlite3_finalize(q);
    return rc;
}

/* "INSERT INTO t (lead..., the columns a row binds) VALUES (?, ...)", malloc'd. */
static char *insert_sql(const StoreTable *t, const char *lead, int nlead)
{
    StrBuf b, v;
    sb_init(&b);
    sb_init(&v);
    sb_printf(&b, "INSERT%s INTO %s (%s", t == &store_tables[STORE_T_VARIANTS] ? " OR IGNORE" : "",
              t->name, lead);
    for (int i = 0; i < nlead; i++)
        sb_puts(&v, i ? ",?" : "?");
    for (int i = 0; i < t->ncols; i++)
        if (t->cols[i].bind != SCOL_NONE) {
            sb_printf(&b, "%s%s", sb_str(&v)[0] ? ", " : "", t->cols[i].name);
            sb_puts(&v, sb_str(&v)[0] ? ",?" : "?");
        }
    sb_printf(&b, ") VALUES (%s)", sb_str(&v));
    sb_free(&v);
    return sb_take(&b);
}

static int prepare(Store *s, int i)
{
    char *gen = i == ST_RUN ? insert_sql(&store_tables[STORE_T_RUNS], "", 0)
              : i == ST_VAR_INSERT ? insert_sql(&store_tables[STORE_T_VARIANTS], "run_id", 1)
              : i == ST_CASE ? insert_sql(&store_tables[STORE_T_CASES], "run_id, variant_id", 2)
              : NULL;
    int rc = sqlite3_prepare_v2(s->db, gen ? gen : stmt_sql[i], -1, &s->st[i], NULL);
    free(gen);
    return rc;
}

/* WAL, then the schema and its version, in one immediate transaction.  0, or
 * -1 with err; the busy timeout covers ordinary waits. */
static int schema_once(Store *s, KvxError *err)
{
    /* synchronous=NORMAL: in WAL mode a commit then writes the log without an
     * fsync, which cost more than a small kernel's measurement per case; a
     * power loss may drop the last cases, which a resumed run measures again,
     * and never corrupts the file. */
    if (store_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", err))
        return -1;
    s->wal = 1;
    char *schema = schema_sql();
    int bad = store_exec(s, "BEGIN IMMEDIATE", err) || store_exec(s, schema, err);
    free(schema);
    if (!bad && !check_version(s, err) && !store_exec(s, "COMMIT", err))
        return 0;
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* schema_once, again while another process holds the file in a way SQLite
 * does not wait for (busy at once: a journal-mode switch of a run closing as
 * this one opens, a lock upgrade that could deadlock), for up to 10 s. */
static int open_schema(Store *s, KvxError *err)
{
    for (int tries = 0;; tries++) {
        if (schema_once(s, err) == 0)
            return 0;
        int code = sqlite3_errcode(s->db) & 0xff;
        if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || tries == 200)
            return -1;
        kvx_error_clear(err);
        struct timespec pause = {0, 50 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

Store *store_open(const char *path, KvxError *err)
{
    Store *s = mem_calloc(1, sizeof *s);
    s->path = mem_strdup(path);
    /* As a URI, so that `kvx merge` can attach its inputs read-only (a URI
     * of theirs); the path itself is read as a path. */
    char *uri = store_uri(path, "");
    int rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc) {
        kvx_error_set(err, KVX_EIO, NULL, "%s: cannot open results database: %s", path,
                      s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    /* Several kvx processes (shards on one host, a `kvx table` during a run)
     * may share a file: wait for a lock instead of failing at once. */
    sqlite3_busy_timeout(s->db, 10000);
    if (check_foreign(s, err))
        goto fail;
    if (open_schema(s, err))
        goto fail;
    for (int i = 0; i < ST_COUNT; i++)
        if (prepare(s, i)) {
            store_fail(s, err, "preparing statements");
            goto fail;
        }
    return s;
fail:
    store_close(s);
    return NULL;
}

void store_close(Store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    /* WAL only while kvx writes: a finished file in rollback mode lets pandas
     * or sqlite3 read it without leaving -wal and -shm beside it, and from a
     * read-only share.  The switch needs the file to itself, so while another
     * connection (a second run, a reader during the run) has it open it fails
     * at once, without waiting, and the last to close switches it. */
    if (s->wal) {
        sqlite3_busy_timeout(s->db, 0);
        sqlite3_exec(s->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    }
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

struct sqlite3 *store_db(Store *s) { return s->db; }

char *store_uri(const char *path, const char *query)
{
    if (!strcmp(path, ":memory:"))
        return mem_strdup(path);
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, path[0] == '/' ? "file://" : "file:");
    for (const char *p = path; *p; p++)
        if (*p == '?' || *p == '#' || *p == '%' || (unsigned char)*p < 0x21)
            sb_printf(&b, "%%%02X", (unsigned char)*p);
        else
            sb_putc(&b, *p);
    sb_puts(&b, query);
    return sb_take(&b);
}

char *store_read_uri(const char *path)
{
    StrBuf wal;
    sb_init(&wal);
    sb_printf(&wal, "%s-wal", path);
    int writer = access(sb_str(&wal), F_OK) == 0;
    sb_free(&wal);
    return store_uri(path, writer ? "?mode=ro" : "?mode=ro&immutable=1");
}

Store *store_wrap(sqlite3 *db, const char *path)
{
    Store *s = mem_calloc(1, sizeof *s);
    s->db = db;
    s->path = mem_strdup(path);
    return s;
}

/* ---- binding helpers: NULL strings and NaN numbers become SQL NULL ------- */

static void bind_text(sqlite3_stmt *q, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(q, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(q, i);
}

static void bind_real(sqlite3_stmt *q, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(q, i);
    else
        sqlite3_bind_double(q, i, v);
}

static void bind_int(sqlite3_stmt *q, int i, int64_t v) { sqlite3_bind_int64(q, i, v); }

/* Bind t's columns from row (a RunEnv, VariantRow or CaseRow), by the name
 * and offset store_cols.c gives each, from parameter i on. */
static void bind_row(sqlite3_stmt *q, int i, const StoreTable *t, const void *row)
{
    const char *base = row;
    for (int k = 0; k < t->ncols; k++) {
        const StoreCol *c = &t->cols[k];
        const void *f = base + c->off;
        int v;
        switch (c->bind) {
        case SCOL_NONE:
            continue;
        case SCOL_TEXT:
            bind_text(q, i, *(const char *const *)f ? *(const char *const *)f : c->dflt);
            break;
        case SCOL_REAL:
            bind_real(q, i, *(const double *)f);
            break;
        case SCOL_INT:
            bind_int(q, i, *(const int *)f);
            break;
        case SCOL_I64:
            bind_int(q, i, *(const int64_t *)f);
            break;
        case SCOL_MHZ:
        case SCOL_TRI:
            v = *(const int *)f;
            if (c->bind == SCOL_MHZ ? v > 0 : v >= 0)
                bind_int(q, i, v);
            else
                sqlite3_bind_null(q, i);
            break;
        }
        i++;
    }
}

/* Step a statement that returns no row, then reset it.  0 or -1. */
static int step_done(Store *s, sqlite3_stmt *q, KvxError *err, const char *what)
{
    int rc = sqlite3_step(q);
    int ok = rc == SQLITE_DONE;
    if (!ok)
        store_fail(s, err, what);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return ok ? 0 : -1;
}

int store_begin_run(Store *s, const RunEnv *e, int64_t *run_id, KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_RUN];
    bind_row(q, 1, &store_tables[STORE_T_RUNS], e);
    if (step_done(s, q, err, "recording the run"))
        return -1;
    *run_id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_end_run(Store *s, int64_t run_id, double wall_s, const char *profile_json,
                  KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_END_RUN];
    bind_real(q, 1, wall_s);
    bind_text(q, 2, profile_json);
    bind_int(q, 3, run_id);
    return step_done(s, q, err, "closing the run");
}

int store_put_counters(Store *s, int64_t run_id, const char *key, const char *json, const double fixed[4],
                       KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_COUNTERS];
    for (int k = 0; k < 4; k++)
        bind_real(q, k + 1, fixed[k]);
    bind_text(q, 5, json);
    bind_int(q, 6, run_id);
    bind_text(q, 7, key);
    return step_done(s, q, err, "storing a case's counters");
}

int store_put_variant(Store *s, int64_t run_id, const VariantRow *v, int64_t *variant_id,
                      KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_VAR_INSERT];
    bind_int(q, 1, run_id);
    bind_row(q, 2, &store_tables[STORE_T_VARIANTS], v);
    if (step_done(s, q, err, "recording a variant"))
        return -1;
    q = s->st[ST_VAR_FIND];
    bind_int(q, 1, run_id);
    bind_text(q, 2, v->source_hash);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        *variant_id = sqlite3_column_int64(q, 0);
    else
        store_fail(s, err, "finding a variant");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* CaseRow's value fields (core/values.h) unknown: NaN, 0 (MHZ, INT), -1 (TRI). */
#define INIT_REAL(n) c->n = NAN;
#define INIT_INT(n)
#define INIT_MHZ(n)
#define INIT_TRI(n) c->n = -1;
#define INIT_TIMED(n, type) INIT_##type(n)
#define INIT_RES INIT_TIMED
#define INIT_ROW INIT_TIMED
#define INIT_LATER(n, type)
#define INIT_VAR(n, type)
#define INIT_SQL(n, type)
void store_case_init(CaseRow *c)
{
    memset(c, 0, sizeof *c);
#define X(n, from, type, since, tab, unit, imp, doc, meaning) INIT_##from(n, type)
    KVX_VALUES(X)
#undef X
}

/* Insert one case inside the caller's transaction.  0 or -1. */
static int insert_case(Store *s, int64_t run_id, int64_t variant_id, const CaseRow *c,
                       KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_CASE];
    bind_int(q, 1, run_id);
    if (variant_id > 0)
        bind_int(q, 2, variant_id);
    else
        sqlite3_bind_null(q, 2);
    bind_row(q, 3, &store_tables[STORE_T_CASES], c);
    int rc = sqlite3_step(q), dup = 0;
    if (rc != SQLITE_DONE) {
        /* The key is the only unique column but the id. */
        dup = sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE;
        if (dup)
            kvx_error_set(err, KVX_EIO, NULL, "%s: case key %.16s... is already stored",
                          s->path, c->key ? c->key : "");
        else
            store_fail(s, err, "storing a case");
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc == SQLITE_DONE ? 0 : dup ? 1 : -1;
}

int store_put_cases(Store *s, int64_t run_id, int64_t variant_id, const CaseRow *c, int n,
                    KvxError *err)
{
    /* Inside the caller's transaction (an import: its run row and its cases
     * are one), the cases join it, and the caller commits or rolls back. */
    int own = sqlite3_get_autocommit(s->db);
    if (own && step_done(s, s->st[ST_BEGIN], err, "starting a case transaction"))
        return -1;
    for (int i = 0; i < n; i++)
        if (insert_case(s, run_id, variant_id, &c[i], err)) {
            if (own)
                step_done(s, s->st[ST_ROLLBACK], NULL, "rollback");
            return -1;
        }
    return own ? step_done(s, s->st[ST_COMMIT], err, "committing cases") : 0;
}

int store_put_case(Store *s, int64_t run_id, int64_t variant_id, const CaseRow *c,
                   KvxError *err)
{
    /* Two runs of one spec on one database (unsharded, side by side) measure
     * the same cases: the first to commit a key keeps it, and the other's
     * result is dropped here rather than ending that run.  The insert itself
     * decides, inside the write lock, so no check before it can race. */
    if (step_done(s, s->st[ST_BEGIN], err, "starting a case transaction"))
        return -1;
    KvxError dup_err = {0};
    int rc = insert_case(s, run_id, variant_id, c, &dup_err);
    if (rc) {
        step_done(s, s->st[ST_ROLLBACK], NULL, "rollback");
        if (rc < 0)
            *err = dup_err;
        else
            kvx_error_clear(&dup_err);
        return rc;
    }
    return step_done(s, s->st[ST_COMMIT], err, "committing cases");
}

int store_has_case(Store *s, const char *key, KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_HAS];
    bind_text(q, 1, key);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return store_fail(s, err, "looking up a case");
}

int store_forget_case(Store *s, const char *key, KvxError *err)
{
    sqlite3_stmt *q = s->st[ST_FORGET];
    bind_text(q, 1, key);
    return step_done(s, q, err, "forgetting a case");
}

int store_run_beside(Store *s, int64_t run_id, const char *spec_name, KvxError *err)
{
    /* A run killed outright never records its end: recent activity tells a
     * live one (a stale one costs only the order of the cases). */
    static const char sql[] =
        "SELECT count(*) FROM runs r WHERE r.id < ?1 AND r.spec_name = ?2 AND r.kind = 'run' AND"
        " r.wall_s IS NULL AND (r.started_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-600 seconds')"
        " OR EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id AND"
        " c.stored_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-600 seconds')))";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return store_fail(s, err, "looking for other runs");
    bind_int(q, 1, run_id);
    bind_text(q, 2, spec_name);
    int rc = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) > 0 : store_fail(s, err, "looking for other runs");
    sqlite3_finalize(q);
    return rc;
}

int store_drop_empty_run(Store *s, int64_t run_id, KvxError *err)
{
    if (step_done(s, s->st[ST_BEGIN], err, "starting a transaction"))
        return -1;
    bind_int(s->st[ST_DROP_VARS], 1, run_id);
    bind_int(s->st[ST_DROP_RUN], 1, run_id);
    if (step_done(s, s->st[ST_DROP_VARS], err, "removing an empty run's variants") ||
        step_done(s, s->st[ST_DROP_RUN], err, "removing an empty run")) {
        step_done(s, s->st[ST_ROLLBACK], NULL, "rollback");
        return -1;
    }
    int dropped = sqlite3_changes(s->db) > 0;
    return step_done(s, s->st[ST_COMMIT], err, "removing an empty run") ? -1 : dropped;
}

void store_case_key(const char *const *parts, char hex[65]) { sha256_hex_parts(parts, hex); }

int store_case_costs(Store *s, const char *spec_name, StoreCostFn each, void *ctx, KvxError *err)
{
    /* Oldest first, so that a caller keeping the last row of a source and
     * point keeps the newest measurement. */
    static const char sql[] =
        "SELECT v.source_hash, c.axes, coalesce(c.t_measure_ms, c.median_ms * c.samples)"
        " + coalesce(c.t_input_ms, 0) + coalesce(c.t_verify_ms, 0)"
        " FROM cases c JOIN variants v ON v.id = c.variant_id"
        " WHERE c.spec_name = ? AND c.samples > 0 AND c.median_ms IS NOT NULL ORDER BY c.id";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return store_fail(s, err, "reading stored case times");
    bind_text(q, 1, spec_name);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *hash = (const char *)sqlite3_column_text(q, 0);
        const char *axes = (const char *)sqlite3_column_text(q, 1);
        if (hash && axes && sqlite3_column_type(q, 2) != SQLITE_NULL)
            each(ctx, hash, axes, sqlite3_column_double(q, 2));
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, "reading stored case times");
}
