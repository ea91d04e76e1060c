/* test_values: core/values.h's KVX_VALUES is the one table of stored values:
 * every line is a column of the right table (type, schema) or an SQL
 * expression, a value name where its tab says so, an import column where
 * it says IMP (read from a CSV and exported back under its name), and an
 * objective where it says OBJ. */
#include "tests/results_fixture.h"
#include "store/store_cols.h"
#include "store/store_search.h"

#define FROM_TIMED STORE_T_CASES
#define FROM_RES STORE_T_CASES
#define FROM_ROW STORE_T_CASES
#define FROM_LATER STORE_T_CASES
#define FROM_VAR STORE_T_VARIANTS
#define FROM_SQL -1
#define TAB_OBJ 2
#define TAB_TAB 1
#define TAB_FACT 1
#define TAB_NO 0
#define IMP_IMP 1
#define IMP_NO 0
static const struct {
    const char *name, *type;
    int table, since, tab, imp;
} lines[] = {
#define X(n, from, type, since, tab, unit, imp, doc, meaning) \
    {#n, #type, FROM_##from, since, TAB_##tab, IMP_##imp},
    KVX_VALUES(X)
#undef X
};
#define NLINES ((int)(sizeof lines / sizeof lines[0]))

/* Each line's column is declared where it says, with its type and schema. */
static void test_columns(void **state)
{
    for (int i = 0; i < NLINES; i++) {
        if (lines[i].table < 0) {
            for (int t = 0; t < STORE_NTABLES; t++)
                assert_null(store_col_find(&store_tables[t], lines[i].name));
            continue;
        }
        const StoreCol *c = store_col_find(&store_tables[lines[i].table], lines[i].name);
        if (!c)
            fail_msg("%s: no column in %s", lines[i].name, store_tables[lines[i].table].name);
        assert_string_equal(c->type, strcmp(lines[i].type, "REAL") ? "INTEGER" : "REAL");
        assert_int_equal(c->since, lines[i].since);
        assert_true(c->since <= STORE_SCHEMA_VERSION);
    }
}

/* The value names are the lines whose tab is not NO; the objectives the OBJ ones. */
static void test_names(void **state)
{
    int names = 0;
    for (int i = 0; i < NLINES; i++) {
        int v = values_find(lines[i].name);
        assert_int_equal(v >= 0, lines[i].tab > 0);
        names += v >= 0;
        assert_int_equal(store_objective_dir(lines[i].name) >= 0, lines[i].tab == 2);
        if (v >= 0)
            assert_non_null(store_value_sql(v));
    }
    assert_int_equal(names, SPEC_VALUE_COUNT);
    assert_int_equal(store_objective_dir("median_ms"), 1);
    assert_int_equal(store_objective_dir("gbs"), 0);
}

/* The field of name in export CSV text (header, one row), or NULL. */
static char *csv_field(const char *csv, const char *name)
{
    const char *row = strchr(csv, '\n') + 1;
    int col = 0;
    for (const char *h = csv; h < row - 1; col++) {
        size_t n = strcspn(h, ",\n");
        if (n == strlen(name) && !strncmp(h, name, n)) {
            const char *f = row;
            for (int k = 0; k < col; k++)
                f += strcspn(f, ",\n") + 1;
            char *s = mem_strdup(f);
            s[strcspn(s, ",\n")] = 0;
            return s;
        }
        h += n + 1;
    }
    return NULL;
}

/* A CSV with every IMP column imports each into its column (a value of its
 * own) and exports it back under the same name. */
static void test_import_export(void **state)
{
    StrBuf csv;
    sb_init(&csv);
    sb_puts(&csv, "point");
    for (int i = 0; i < NLINES; i++)
        if (lines[i].imp)
            sb_printf(&csv, ",%s", lines[i].name);
    sb_puts(&csv, "\na");
    for (int i = 0; i < NLINES; i++)
        if (lines[i].imp)
            sb_printf(&csv, ",%d.5", i + 1);
    sb_puts(&csv, "\n");
    const char *path = tmp_path("all.csv"), *db = tmp_path("values.db");
    assert_int_equal(file_write_atomic(path, csv.p, csv.len), 0);
    unlink(db);
    char *out, *errs;
    int rc = run_cmd(cmd_import, 0, &out, &errs, "import", path, "--name", "all", "--db", db, NULL);
    if (rc)
        fail_msg("import: %s", errs);
    free(out), free(errs);
    rc = run_cmd(cmd_export, 1, &out, &errs, "export", "--db", db, NULL);
    assert_int_equal(rc, 0);
    for (int i = 0; i < NLINES; i++) {
        if (!lines[i].imp)
            continue;
        char want[32], *got = csv_field(out, lines[i].name);
        snprintf(want, sizeof want, "%d.5", i + 1);
        if (!got || strcmp(got, want))
            fail_msg("%s: exported '%s', imported %s", lines[i].name, got ? got : "(no column)", want);
        free(got);
    }
    free(out), free(errs);
    sb_free(&csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_import_export),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
