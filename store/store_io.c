/* store_io: the store's writes from outside a run: `kvx merge` (another
 * database's rows copied in, at the row level), and what `kvx import` needs
 * around store.c's store_put_cases (a transaction of its own, a reference's
 * name, a Kernel Tuner cache file read with SQLite's JSON functions:
 * store_kt_rows).
 *
 * Invariants: a merge of one input is one transaction; merging the same
 * input twice changes nothing; column names in the SQL built here come from
 * our own schema (pragma_table_info of main), never from the input. */
#include "store.h"
#include "store_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- transactions and references ---------------------------------------------- */

int store_begin(Store *s, KvxError *err)
{
    return store_exec(s, "BEGIN IMMEDIATE", err);
}

int store_commit(Store *s, KvxError *err)
{
    return store_exec(s, "COMMIT", err);
}

void store_rollback(Store *s)
{
    if (!sqlite3_get_autocommit(store_db(s)))
        sqlite3_exec(store_db(s), "ROLLBACK", NULL, NULL, NULL);
}

int store_ref_run(Store *s, const char *name, int64_t *run_id, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(store_db(s), "SELECT id FROM runs WHERE kind = 'reference' AND name = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return store_fail(s, err, "looking up a reference");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        *run_id = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return rc == SQLITE_ROW;
    return store_fail(s, err, "looking up a reference");
}

/* ---- merge ----------------------------------------------------------------- */

/* Columns of main.TABLE that src.TABLE has too, other than the skipped ones, as "c1, c2, ..." with a
 * prefix before each; the names come from our own schema, never from input. */
static char *columns(sqlite3 *db, const char *table, const char *prefix,
                     const char *const *skip, const char *join)
{
    StrBuf b;
    sb_init(&b);
    sqlite3_stmt *q = NULL;
    /* The columns both databases have: an older source lacks the newer ones,
     * which stay NULL in the copy. */
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, 'main') WHERE name IN"
                           " (SELECT name FROM pragma_table_info(?1, 'src')) ORDER BY cid",
                           -1, &q, NULL) == 0) {
        sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
        int n = 0;
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(q, 0);
            int skipped = 0;
            for (int i = 0; skip[i]; i++)
                skipped |= !strcmp(skip[i], name);
            if (skipped)
                continue;
            if (join)   /* NULL-safe equality: "m.x IS s.x AND ..." */
                sb_printf(&b, "%sm.\"%s\" IS s.\"%s\"", n++ ? join : "", name, name);
            else
                sb_printf(&b, "%s%s\"%s\"", n++ ? ", " : "", prefix, name);
        }
    }
    sqlite3_finalize(q);
    return sb_take(&b);
}

static int exec_count(sqlite3 *db, const char *sql, int *changes, KvxError *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "merge: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    if (changes)
        *changes = sqlite3_changes(db);
    return 0;
}

static int count_rows(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return n;
}

/* Attach in_path as schema src.  0 or -1 with err (unreadable, or SQLite
 * will not attach it). */
static int merge_attach(sqlite3 *db, const char *in_path, KvxError *err)
{
    if (access(in_path, R_OK) != 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "cannot read '%s'", in_path);
        return -1;
    }
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS src", -1, &q, NULL) != SQLITE_OK) {
        kvx_error_set(err, KVX_EIO, NULL, "merge: %s", sqlite3_errmsg(db));
        return -1;
    }
    /* Read-only, and immutable unless a writer is at work: a merge reads its
     * inputs as the read verbs do, and leaves nothing beside them. */
    char *uri = store_read_uri(in_path);
    sqlite3_bind_text(q, 1, uri, -1, SQLITE_TRANSIENT);
    free(uri);
    int ok = sqlite3_step(q) == SQLITE_DONE;
    sqlite3_finalize(q);
    if (!ok) {
        kvx_error_set(err, KVX_EIO, NULL, "%s: cannot attach: %s", in_path, sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

/* src is a kvx results database of a schema this kvx reads; a corrupt one
 * is a database failure (KVX_EIO), as from every verb. */
static int merge_check_schema(sqlite3 *db, const char *in_path, KvxError *err)
{
    sqlite3_stmt *q = NULL;
    const char *what = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA src.quick_check(1)", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        what = (const char *)sqlite3_column_text(q, 0);
    if (!what || strcmp(what, "ok")) {
        kvx_error_set(err, KVX_EIO, NULL, "%s: the database is corrupt (%s)", in_path,
                      what ? what : sqlite3_errmsg(db));
        sqlite3_finalize(q);
        return -1;
    }
    sqlite3_finalize(q);
    int version = count_rows(db, "SELECT max(version) FROM src.schema_version");
    if (version < 1 || count_rows(db, "SELECT count(*) FROM src.cases") < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: not a kvx results database", in_path);
        return -1;
    }
    if (version > STORE_SCHEMA_VERSION) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: results schema %d is newer than this kvx (%d)",
                      in_path, version, STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* The column lists of the copy (columns()): each table's own and src's
 * ("s."), and the equality that finds a run already present.  malloc'd. */
typedef struct MergeCols {
    char *run_cols, *run_src, *run_eq;
    char *var_cols, *var_src;
    char *case_cols, *case_src;
} MergeCols;

static void merge_cols_find(sqlite3 *db, MergeCols *c)
{
    /* A run is the same run when its whole environment is; wall_s and
     * profile_json are written at its end and may differ between copies. */
    static const char *const run_skip[] = {"id", NULL};
    static const char *const run_eq_skip[] = {"id", "wall_s", "profile_json", NULL};
    static const char *const var_skip[] = {"id", "run_id", NULL};
    static const char *const case_skip[] = {"id", "run_id", "variant_id", NULL};
    c->run_cols = columns(db, "runs", "", run_skip, NULL);
    c->run_src = columns(db, "runs", "s.", run_skip, NULL);
    c->run_eq = columns(db, "runs", "", run_eq_skip, " AND ");
    c->var_cols = columns(db, "variants", "", var_skip, NULL);
    c->var_src = columns(db, "variants", "s.", var_skip, NULL);
    c->case_cols = columns(db, "cases", "", case_skip, NULL);
    c->case_src = columns(db, "cases", "s.", case_skip, NULL);
}

static void merge_cols_free(MergeCols *c)
{
    free(c->run_cols), free(c->run_src), free(c->run_eq);
    free(c->var_cols), free(c->var_src), free(c->case_cols), free(c->case_src);
}

/* The runs src has that main lacks, then src's variants under their runs'
 * ids in main (run_map: src id -> main id). */
static int merge_runs_variants(sqlite3 *db, const MergeCols *c, StrBuf *sql, MergeStats *st,
                               KvxError *err)
{
    sb_reset(sql);
    sb_printf(sql,
              "CREATE TEMP TABLE IF NOT EXISTS run_map (src INTEGER PRIMARY KEY, dst INTEGER);"
              "CREATE TEMP TABLE IF NOT EXISTS var_map (src INTEGER PRIMARY KEY, dst INTEGER);"
              "DELETE FROM temp.run_map; DELETE FROM temp.var_map;"
              "INSERT INTO main.runs (%s) SELECT %s FROM src.runs s WHERE NOT EXISTS"
              " (SELECT 1 FROM main.runs m WHERE %s) ORDER BY s.id;",
              c->run_cols, c->run_src, c->run_eq);
    if (exec_count(db, sb_str(sql), &st->runs_added, err))
        return -1;
    sb_reset(sql);
    sb_printf(sql,
              "INSERT INTO temp.run_map SELECT s.id, (SELECT min(m.id) FROM main.runs m WHERE %s)"
              " FROM src.runs s;"
              "INSERT OR IGNORE INTO main.variants (run_id, %s) SELECT rm.dst, %s FROM"
              " src.variants s JOIN temp.run_map rm ON rm.src = s.run_id ORDER BY s.id;",
              c->run_eq, c->var_cols, c->var_src);
    return exec_count(db, sb_str(sql), &st->variants_added, err);
}

/* src's cases under their runs' and variants' ids in main; a case whose key
 * main holds already is skipped (INSERT OR IGNORE on the unique key). */
static int merge_cases(sqlite3 *db, const MergeCols *c, StrBuf *sql, MergeStats *st,
                       KvxError *err)
{
    sb_reset(sql);
    sb_printf(sql,
              "INSERT INTO temp.var_map SELECT s.id, m.id FROM src.variants s JOIN temp.run_map"
              " rm ON rm.src = s.run_id JOIN main.variants m ON m.run_id = rm.dst AND"
              " m.source_hash = s.source_hash;"
              "INSERT OR IGNORE INTO main.cases (run_id, variant_id, %s) SELECT rm.dst, vm.dst, %s"
              " FROM src.cases s JOIN temp.run_map rm ON rm.src = s.run_id LEFT JOIN"
              " temp.var_map vm ON vm.src = s.variant_id ORDER BY s.id;",
              c->case_cols, c->case_src);
    return exec_count(db, sb_str(sql), &st->cases_added, err);
}

/* The copy of the attached src into main, in one transaction. */
static int merge_copy(sqlite3 *db, MergeStats *st, KvxError *err)
{
    MergeCols c;
    merge_cols_find(db, &c);
    StrBuf sql;
    sb_init(&sql);
    int total_runs = count_rows(db, "SELECT count(*) FROM src.runs");
    int total_cases = count_rows(db, "SELECT count(*) FROM src.cases");
    int rc = -1;
    if (exec_count(db, "BEGIN IMMEDIATE", NULL, err))
        goto fail;
    if (merge_runs_variants(db, &c, &sql, st, err) || merge_cases(db, &c, &sql, st, err) ||
        exec_count(db, "COMMIT", NULL, err)) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        goto fail;
    }
    st->runs_found = total_runs - st->runs_added;
    st->cases_present = total_cases - st->cases_added;
    rc = 0;
fail:
    sb_free(&sql);
    merge_cols_free(&c);
    return rc;
}

int store_merge(Store *out, const char *in_path, MergeStats *st, KvxError *err)
{
    sqlite3 *db = store_db(out);
    memset(st, 0, sizeof *st);
    if (merge_attach(db, in_path, err))
        return -1;
    int rc = merge_check_schema(db, in_path, err) || merge_copy(db, st, err) ? -1 : 0;
    sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
    return rc;
}

/* ---- a Kernel Tuner cache file ---------------------------------------------- */

/* By StoreKtPart.  FIELDS: the joins' order is forced by their arguments
 * (each json_each reads a value of the one before), and json_each yields a
 * value's members in document order, so the rows come in file order without
 * a sort (a cache of 100,000 entries is millions of rows). */
static const char *const kt_sql[] = {
    [STORE_KT_HEAD] = "SELECT json_valid(?1), CASE WHEN json_valid(?1) THEN json_extract(?1, '$.device_name') END,"
                      " CASE WHEN json_valid(?1) THEN json_extract(?1, '$.kernel_name') END,"
                      " CASE WHEN json_valid(?1) THEN json_type(?1, '$.tune_params_keys') END,"
                      " CASE WHEN json_valid(?1) THEN json_type(?1, '$.cache') END",
    [STORE_KT_KEYS] = "SELECT type, atom FROM json_each(?1, '$.tune_params_keys')",
    [STORE_KT_FIELDS] = "SELECT e.id, e.key, e.type, f.key, f.type, f.atom, t.type, t.atom"
                        " FROM json_each(?1, '$.cache') e"
                        " LEFT JOIN json_each(CASE WHEN e.type = 'object' THEN e.value END) f"
                        " LEFT JOIN json_each(CASE WHEN f.type = 'array' AND f.key = 'times' THEN f.value END) t",
};

StoreRows *store_kt_rows(Store *s, StoreKtPart part, const char *json, KvxError *err)
{
    Value p = val_str(json);
    return store_rows(s, kt_sql[part], &p, 1, err);
}
