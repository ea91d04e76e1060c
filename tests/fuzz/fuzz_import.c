/* fuzz_import: `kvx import` and `kvx export --format json` on arbitrary bytes
 * (issue 22, items 6, 9 and 10).
 *
 * Each input is written as import.csv in a private directory and imported
 * into a fresh in-memory store; what was stored is then exported as JSON.
 * Properties: no crash, no leak; a refused input is a KVX_EINPUT error and
 * leaves nothing stored (the import is one transaction); an accepted one
 * stores one run and every row; the export is valid JSON and valid UTF-8,
 * whatever the import let through. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "report/results.h"
#include "store/store_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];
static char csv_path[300];

static int count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return n;
}

/* The export of db as JSON: valid UTF-8 that SQLite's JSON parser accepts. */
static void check_export(Store *st)
{
    sqlite3 *db = store_db(st);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    KvxError err = {0};
    if (!f || results_export(st, NULL, RESULTS_JSON, f, &err) != 0)
        abort();
    fclose(f);
    for (size_t i = 0; i < len;) {
        int n = json_utf8_len(text + i, len - i);
        if (n == 0)
            abort();
        i += (size_t)n;
    }
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT json_valid(?)", -1, &q, NULL) != SQLITE_OK)
        abort();
    sqlite3_bind_text(q, 1, text, (int)len, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW || sqlite3_column_int(q, 0) != 1)
        abort();
    sqlite3_finalize(q);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/kvx-fuzz-import-%ld", (long)getpid());
        file_mkdir_p(dir);
        snprintf(csv_path, sizeof csv_path, "%s/import.csv", dir);
    }
    if (file_write_atomic(csv_path, data, size) != 0)
        abort();
    KvxError err = {0};
    Store *st = store_open(":memory:", &err);
    if (!st)
        abort();
    ImportOpts o = {.name = "fuzz", .source = "fuzz_import"};
    int nrows = 0;
    sqlite3 *db = store_db(st);
    if (results_import(st, csv_path, &o, &nrows, &err) != 0) {
        if (err.code != KVX_EINPUT || count(db, "SELECT count(*) FROM runs") != 0 ||
            count(db, "SELECT count(*) FROM cases") != 0)
            abort();
    } else if (count(db, "SELECT count(*) FROM runs") != 1 ||
               count(db, "SELECT count(*) FROM cases") != nrows || nrows < 1) {
        abort();
    }
    check_export(st);
    kvx_error_clear(&err);
    store_close(st);
    return 0;
}
