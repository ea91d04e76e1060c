/* test_store_schemas: results databases of every layout kvx ever wrote
 * read today (issue 40 items 1 and 2).
 *
 * - tests/data/store/schemaN.db (N = 1 .. 6, tests/data/store/make_fixtures.sh)
 *   export as CSV and JSON with every column of today's layout, the ones
 *   their schema lacks empty, and tabulate;
 * - every database committed under results/ is in rollback mode (no -wal
 *   or -shm needed to read it) and exports;
 * - the verbs that read a database (table, compare, export in every format,
 *   merge's input) leave nothing beside it, even one in WAL mode. */
#include "tests/results_fixture.h"
#include "store/store_cols.h"

#include <dirent.h>

#define NSCHEMAS 6

static char *export_text(const char *db, const char *format)
{
    char *out, *errs;
    int rc = run_cmd(cmd_export, 1, &out, &errs, "export", "--db", db, "--format", format, NULL);
    if (rc)
        fail_msg("kvx export --db %s --format %s: exit %d: %s", db, format, rc, errs);
    free(errs);
    return out;
}

/* Whether SQLite's JSON parser takes text. */
static int json_ok(const char *text)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_valid(?1)", -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_text(q, 1, text, -1, SQLITE_STATIC);
    int ok = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1;
    sqlite3_finalize(q);
    sqlite3_close(db);
    return ok;
}

/* The header of CSV text from its `label` column on: the same for every
 * layout (the axes before it are the spec's). */
static char *header_tail(const char *csv)
{
    const char *from = strstr(csv, ",label,");
    assert_non_null(from);
    size_t n = strcspn(from, "\n");
    char *s = mem_strdup(from);
    s[n] = 0;
    return s;
}

static void test_every_schema_exports(void **state)
{
    char *want = NULL;
    for (int v = NSCHEMAS; v >= 1; v--) {
        char db[256];
        snprintf(db, sizeof db, KVX_SOURCE_DIR "/tests/data/store/schema%d.db", v);
        assert_int_equal(count(db, "SELECT max(version) FROM schema_version"), v);
        char *csv = export_text(db, "csv"), *head = header_tail(csv);
        if (!want)
            want = mem_strdup(head);
        else if (strcmp(head, want))
            fail_msg("schema %d exports the columns\n%s\nnot today's\n%s", v, head, want);
        /* A column of a later schema is there, empty. */
        assert_non_null(strstr(head, ",samples_json,"));
        assert_non_null(strstr(head, ",search_seed,"));
        free(head);
        free(csv);
        char *json = export_text(db, "json");
        if (!json_ok(json))
            fail_msg("schema %d: the JSON export is not valid JSON", v);
        assert_non_null(strstr(json, "\"samples_json\": null"));
        free(json);
        free(export_text(db, "nvbench"));
        char *out, *errs;
        const char *spec = v <= 2 ? "histogram" : "contention";
        int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", db, "--spec", spec, NULL);
        if (rc)
            fail_msg("kvx table of schema %d: %s", v, errs);
        free(out), free(errs);
    }
    free(want);
}

/* Each *.db under dir (recursively) to each(path). */
static void each_db(const char *dir, void (*each)(const char *path))
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = strlen(e->d_name);
        if (e->d_type == DT_DIR)
            each_db(path, each);
        else if (n > 3 && !strcmp(e->d_name + n - 3, ".db"))
            each(path);
    }
    closedir(d);
}

static int ncommitted;

/* Rollback mode is byte 18 and 19 of the header being 1 (WAL: 2). */
static void committed_one(const char *path)
{
    unsigned char head[20];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    if (head[18] != 1 || head[19] != 1)
        fail_msg("%s is in WAL mode: `sqlite3 %s 'pragma journal_mode=delete'`", path, path);
    free(export_text(path, "csv"));
    char *json = export_text(path, "json");
    if (!json_ok(json))
        fail_msg("%s: the JSON export is not valid JSON", path);
    free(json);
    ncommitted++;
}

static void test_committed_results(void **state)
{
    each_db(KVX_SOURCE_DIR "/results", committed_one);
    assert_true(ncommitted >= 70);
    printf("%d committed databases export\n", ncommitted);
}

/* dir holds exactly the one file name. */
static void only_file(const char *dir, const char *name, const char *after)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && strcmp(e->d_name, name))
            fail_msg("after %s, %s/%s lies beside %s", after, dir, e->d_name, name);
    closedir(d);
}

static void test_readers_leave_nothing(void **state)
{
    char dir[512], db[600], outdb[600];
    snprintf(dir, sizeof dir, "%s", tmp_path("wal"));
    assert_int_equal(file_mkdir_p(dir), 0);
    snprintf(db, sizeof db, "%s/w.db", dir);
    snprintf(outdb, sizeof outdb, "%s", tmp_path("merged.db"));
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tmp_path("a.db"), db);
    assert_int_equal(system(cmd), 0);
    sqlite3 *h = open_db(db);
    assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    only_file(dir, "w.db", "switching it to WAL");
    char *out, *errs;
    static const char *const formats[] = {"csv", "json", "nvbench"};
    for (int i = 0; i < 3; i++) {
        free(export_text(db, formats[i]));
        only_file(dir, "w.db", formats[i]);
    }
    assert_int_equal(run_cmd(cmd_export, 1, &out, &errs, "export", "--db", db, "--format", "kerneltuner",
                             NULL), 0);
    free(out), free(errs);
    only_file(dir, "w.db", "export --format kerneltuner");
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", db, "--rows", "hit_rate", NULL), 0);
    free(out), free(errs);
    only_file(dir, "w.db", "table");
    assert_int_equal(run_cmd(cmd_compare, 1, &out, &errs, "compare", db, tmp_path("b.db"), NULL), 0);
    free(out), free(errs);
    only_file(dir, "w.db", "compare");
    assert_int_equal(run_cmd(cmd_merge, 0, &out, &errs, "merge", outdb, db, NULL), 0);
    free(out), free(errs);
    only_file(dir, "w.db", "merge");
    assert_int_equal(count(outdb, "SELECT count(*) FROM cases"), 35);
}

/* docs/results-schema.md's schema_version line names today's version and
 * what each version added: every column of store_cols.c with its `since`. */
static void test_versions_documented(void **state)
{
    char *doc = read_all(KVX_SOURCE_DIR "/docs/results-schema.md");
    assert_non_null(doc);
    char *line = strstr(doc, "| `version` | INTEGER |");
    assert_non_null(line);
    *strchr(line, '\n') = 0;
    char want[64];
    snprintf(want, sizeof want, "currently %d (", STORE_SCHEMA_VERSION);
    if (!strstr(line, want))
        fail_msg("docs/results-schema.md's version line does not say '%s'", want);
    for (int t = 0; t < STORE_NTABLES; t++)
        for (int i = 0; i < store_tables[t].ncols; i++) {
            const StoreCol *c = &store_tables[t].cols[i];
            if (c->since < 2)
                continue;
            snprintf(want, sizeof want, "; %d added ", c->since);
            char *at = strstr(line, c->since == 2 ? "(2 added " : want);
            char name[80];
            snprintf(name, sizeof name, "`%s`", c->name);
            char other[80];
            snprintf(other, sizeof other, "`%s.%s`", store_tables[t].name, c->name);
            char *next = at ? strstr(at + 8, " added ") : NULL;
            char *hit = at ? strstr(at, name) : NULL, *hit2 = at ? strstr(at, other) : NULL;
            if (!at || ((!hit || (next && hit > next)) && (!hit2 || (next && hit2 > next))))
                fail_msg("docs/results-schema.md's version line does not say that %d added %s.%s", c->since,
                         store_tables[t].name, c->name);
        }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_schema_exports),
        cmocka_unit_test(test_committed_results),
        cmocka_unit_test(test_readers_leave_nothing),
        cmocka_unit_test(test_versions_documented),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
