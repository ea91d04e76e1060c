/* test_hostile_store: the results database under careless and concurrent
 * use (issue 22, item 13).  Each test runs the kvx binary as a user does (on
 * fake GPUs, gpu/fake.h) and checks what a user would: the exit status of
 * the failure's class (docs/cli.md), the rows stored, and nothing changed or
 * left behind that should not be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

/* The shard checks of kvx_child.h are not used here. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kvx_child.h"
#include "hostile_fixture.h"
#include "bounds.h"

#define SPECS KVX_SOURCE_DIR "/tests/data/specs/"
#define SCALE_POINTS 18     /* fake_scale_diff.yaml: 12 strategies at 4K, base and alt at 1K, 2K, 3K */

/* A results database of n imported rows at path (made anew). */
static const char *imported_db(const char *name, int n)
{
    const char *db = tmp_path(name);
    unlink(db);
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "a,median_ms\n");
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%d,%d\n", i, i);
    char csv[64], line[64];
    snprintf(csv, sizeof csv, "%s.csv", name);
    snprintf(line, sizeof line, "imported %d rows", n);
    EXPECT(0, line, "import", put(csv, b.p, b.len), "--name", "r", "--db", db);
    sb_free(&b);
    return db;
}

/* Execute sql on the database at path (read-write). */
static void db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s: %s", path, sql, msg);
    sqlite3_close(db);
}

/* The cases the summary line of a run's log counts ("N cases in 1.2 s"), or -1. */
static long summary_cases(const char *log)
{
    char *s = file_read(log, NULL), *at = s ? strstr(s, " cases in ") : NULL;
    while (at && at > s && at[-1] != '\n')
        at--;
    long v = at ? strtol(at, NULL, 10) : -1;
    free(s);
    return v;
}

/* The number after the last occurrence of prefix in the log, or -1. */
static long log_number(const char *log, const char *prefix)
{
    char *s = file_read(log, NULL), *at = NULL;
    for (char *p = s; p && (p = strstr(p, prefix)); p++)
        at = p;
    long v = at ? strtol(at + strlen(prefix), NULL, 10) : -1;
    free(s);
    return v;
}

/* ---- two unsharded runs on one database (#22, 13) ------------------------------------ */

/* Both exit 0 (they once aborted at the first case both had measured, exit 3);
 * every case is stored once; each run's "N cases" is the rows it stored, and
 * a run that stored none leaves no run row. */
static void test_two_runs_one_db(void **state)
{
    (void)state;
    const char *db = tmp_path("two.db"), *la = tmp_path("two-a.log"), *lb = tmp_path("two-b.log");
    setenv("KVX_FAKE_GPUS", "2", 1);
    setenv("KVX_FAKE_NS_PER_BYTE", "1500", 1);   /* 12 to 49 ms a case: the runs overlap */
    const char *argv[] = {"run", SPECS "fake_scale_diff.yaml", "--db", db, NULL};
    pid_t a = kvx_start(la, argv), b = kvx_start(lb, argv);
    int ra = kvx_wait(a, la), rb = kvx_wait(b, lb);
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (ra != 0 || rb != 0) {
        dump(la), dump(lb);
        fail_msg("the runs side by side exited %d and %d (expected 0 and 0)", ra, rb);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), SCALE_POINTS);
    assert_int_equal(db_int(db, "SELECT count(DISTINCT key) FROM cases"), SCALE_POINTS);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), SCALE_POINTS);
    long na = summary_cases(la), nb = summary_cases(lb);
    if (na < 0 || nb < 0 || na + nb != SCALE_POINTS) {
        dump(la), dump(lb);
        fail_msg("the summaries say %ld and %ld cases; %d were stored", na, nb, SCALE_POINTS);
    }
    const char *logs[] = {la, lb};
    long ns[] = {na, nb};
    for (int i = 0; i < 2; i++) {
        long id = log_number(logs[i], "(run ");
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM cases WHERE run_id = %ld", id);
        if (ns[i] > 0 && db_int(db, sql) != ns[i]) {
            dump(logs[i]);
            fail_msg("run %ld says %ld cases but stored %d", id, ns[i], db_int(db, sql));
        }
        if (ns[i] == 0 && id != -1)
            fail_msg("a run that stored nothing named run %ld", id);
    }
    /* every run row has its cases, and its end (wall_s) */
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs r WHERE wall_s IS NULL OR NOT EXISTS"
                                " (SELECT 1 FROM cases c WHERE c.run_id = r.id)"), 0);
}

/* A run with every case stored already leaves no empty run row. */
static void test_nothing_to_run(void **state)
{
    (void)state;
    const char *db = tmp_path("again.db");
    const char *one = "n == 4096 && hit_rate == 0 && strategy == \"naive\"";
    EXPECT(0, "1 ok", "run", SPECS "tiny.yaml", "--db", db, "--where", one);
    EXPECT(0, "0 to run, 1 already stored", "run", SPECS "tiny.yaml", "--db", db, "--where", one);
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs"), 1);
}

/* ---- SIGTERM and SIGINT (#22, 13) ------------------------------------------------------ */

/* A stop part-way: the case in progress is committed, the run row gets its
 * wall_s (once NULL), and the exit status is 128 + the signal. */
static void stop_with(int sig, const char *name)
{
    char dbn[32], logn[32];
    snprintf(dbn, sizeof dbn, "stop-%d.db", sig);
    snprintf(logn, sizeof logn, "stop-%d.log", sig);
    const char *db = tmp_path(dbn), *log = tmp_path(logn);
    setenv("KVX_FAKE_NS_PER_BYTE", "20000", 1);   /* 0.16 to 0.65 s a case */
    const char *argv[] = {"run", SPECS "fake_scale.yaml", "--db", db, NULL};
    pid_t pid = kvx_start(log, argv);
    double end = wall_now_ms() + KVX_HANG_S * 1000.0;
    while (db_int(db, "SELECT count(*) FROM cases") < 1 && wall_now_ms() < end)
        usleep(20 * 1000);
    kill(pid, sig);     /* the parent alone: its workers are left to it */
    int rc = kvx_wait(pid, log);
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    if (rc != 128 + sig || !log_has(log, name)) {
        dump(log);
        fail_msg("kvx run sent signal %d exited %d (expected %d and '%s')", sig, rc, 128 + sig, name);
    }
    int stored = db_int(db, "SELECT count(*) FROM cases");
    assert_true(stored >= 1 && stored < SCALE_POINTS);
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs WHERE wall_s IS NOT NULL"), 1);
    /* and the run again measures the rest */
    EXPECT(0, "already stored", "run", SPECS "fake_scale.yaml", "--db", db);
    assert_int_equal(db_int(db, "SELECT count(DISTINCT key) FROM cases"), SCALE_POINTS);
}

static void test_run_stopped(void **state)
{
    (void)state;
    stop_with(SIGTERM, "stopped by SIGTERM");
    stop_with(SIGINT, "stopped by SIGINT");
}

/* ---- merge, read verbs, foreign and corrupt files (#22, 13) -------------------------------- */

/* merge x.db x.db waited 10 s for its own lock, then said "database is
 * locked" (exit 3); another name for the same file is the same. */
static void test_merge_itself(void **state)
{
    (void)state;
    const char *db = imported_db("self.db", 3), *link = tmp_path("self-link.db");
    unlink(link);
    assert_int_equal(symlink(db, link), 0);
    double t0 = wall_now_ms();
    EXPECT(2, "is the output", "merge", db, db);
    EXPECT(2, "is the output", "merge", db, link);
    double ms = wall_now_ms() - t0;
    KVX_BOUND(ms < 5000, "two merges into themselves refused in %.0f ms (bound 5000 ms: no lock waited for)", ms);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 3);
}

/* A database of a newer schema is refused by the read verbs too, as by run. */
static void test_read_newer_schema(void **state)
{
    (void)state;
    const char *db = imported_db("newer.db", 3);
    db_exec(db, "UPDATE schema_version SET version = 99");
    EXPECT(2, "results schema 99 is newer than this kvx", "table", "--db", db);
    EXPECT(2, "results schema 99 is newer than this kvx", "export", "--db", db);
    EXPECT(2, "results schema 99 is newer than this kvx", "run", SPECS "tiny.yaml", "--db", db);
}

/* Another application's SQLite file is refused before kvx changes it: a run
 * once switched it to WAL for good. */
static void test_foreign_sqlite(void **state)
{
    (void)state;
    const char *db = tmp_path("foreign.db");
    unlink(db);
    db_exec(db, "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine')");
    EXPECT(2, "not a kvx results database (it holds other tables: notes)", "run", SPECS "tiny.yaml", "--db", db);
    EXPECT(2, "not a kvx results database", "import", put("f.csv", "a,median_ms\n1,1\n", 0), "--name", "r",
           "--db", db);
    EXPECT(2, "not a kvx results database", "merge", db, imported_db("fsrc.db", 2));
    int n;
    char **mode = db_strings(db, "PRAGMA journal_mode", &n);
    assert_int_equal(n, 1);
    assert_string_equal(mode[0], "delete");
    strings_free(mode, n);
    assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master"), 1);
}

/* A corrupt database is a database failure (3) from every verb; table and
 * export once said 2. */
static void test_corrupt_every_verb(void **state)
{
    (void)state;
    const char *db = imported_db("corrupt.db", 2000);
    size_t len;
    char *bytes = file_read(db, &len);
    srand(22);
    for (int i = 0; i < 200; i++)
        bytes[4096 + (size_t)rand() % (len - 4096)] ^= 0x5a;
    assert_int_equal(file_write_atomic(db, bytes, len), 0);
    free(bytes);
    EXPECT(3, "corrupt", "table", "--db", db);
    EXPECT(3, "corrupt", "export", "--db", db);
    EXPECT(3, "corrupt", "report", SPECS "tiny.yaml", "--db", db, "--out", tmp_path("rep"));
    EXPECT(3, "corrupt", "merge", tmp_path("from-corrupt.db"), db);
    /* not a SQLite file at all: the same class */
    const char *junk = put("junk.db", "this is no database, only text that is long enough to be read\n", 0);
    EXPECT(3, "", "table", "--db", junk);
    EXPECT(3, "", "run", SPECS "tiny.yaml", "--db", junk);
}

/* ---- a killed export (#22, 13) ------------------------------------------------------------- */

/* 1 when the test directory holds a file whose name starts with prefix. */
static int dir_has(const char *prefix)
{
    DIR *d = opendir(tmp);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)))
        found = !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return found;
}

/* SIGTERM while the temporary output is being written: it is removed (once
 * left as out.csv.tmpXXXXXX), and no out.csv appears. */
static void test_export_killed(void **state)
{
    (void)state;
    const char *db = imported_db("big.db", 200000), *out = tmp_path("out.csv");
    for (int sig = SIGTERM, round = 0; round < 2; round++, sig = SIGINT) {
        const char *argv[] = {"export", "--db", db, "--out", out, NULL};
        pid_t pid = kvx_start(tmp_path("export.log"), argv);
        double end = wall_now_ms() + KVX_HANG_S * 1000.0;
        while (!dir_has("out.csv.tmp") && wall_now_ms() < end)
            usleep(500);
        assert_true(dir_has("out.csv.tmp"));
        kill(pid, sig);
        int rc = kvx_wait(pid, tmp_path("export.log"));
        if (rc == 0) /* it finished first: the signal came too late to test anything */
            fail_msg("the export of 200000 rows ended before the signal");
        assert_int_equal(rc, 128 + sig);
        assert_false(dir_has("out.csv.tmp"));
        assert_int_equal(access(out, F_OK), -1);
    }
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-hostile-store"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_runs_one_db),
        cmocka_unit_test(test_nothing_to_run),
        cmocka_unit_test(test_run_stopped),
        cmocka_unit_test(test_merge_itself),
        cmocka_unit_test(test_read_newer_schema),
        cmocka_unit_test(test_foreign_sqlite),
        cmocka_unit_test(test_corrupt_every_verb),
        cmocka_unit_test(test_export_killed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(rc);
}
