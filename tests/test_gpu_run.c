/* gpu: `kvx run` as a user runs it, end to end on a real GPU: the kvx binary is
 * started as a child and its database read back with sqlite3.
 *
 * Checked:
 * - tests/data/specs/broken.yaml: correct variants are ok and timed; an illegal
 *   address, a __trap() and a misaligned 16-byte load are faults naming the CUDA
 *   error; a kernel that never returns is a timeout (the spec's timeout_s); a
 *   wrong count is a mismatch (still timed); a block over the kernel's __launch_bounds__ is skipped; and
 *   after every failure the run went on (a later case is ok, every case stored).
 *   The same run again stores nothing new ("already stored").
 * - tests/data/specs/tiny.yaml: a run killed with SIGKILL part-way (the whole
 *   process group, workers included, as a preempted job) and started again ends
 *   with every case stored exactly once, and the second start measured only the
 *   cases the first had not stored.
 * - --shard 1/2 and 2/2 into two databases: disjoint, workload groups whole,
 *   `kvx plan --shard` lists the same points, and `kvx merge` of the two holds
 *   exactly the case keys of the plain run.
 * - tests/data/specs/refcount.yaml (a reference kernel) and copy.yaml (`out:
 *   in`): every correct variant ok, the planted wrong one a mismatch, and the
 *   reference run once per workload point.
 * - tests/data/specs/compact.yaml (order: any over the first count[0]
 *   elements): the three strategies ok, dupdrop (one kept element twice,
 *   another dropped) a mismatch naming both; metrics read the count written.
 * - no visible device (CUDA_VISIBLE_DEVICES empty): kvx run exits 4.
 * Without a GPU (`kvx doctor` counts none) the test exits 77 with the reason. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* nftw */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define SPECS KVX_SOURCE_DIR "/tests/data/specs/"
#define TINY_POINTS 40          /* tiny.yaml: 2 strategies x 5 hit rates x 4 sizes */
#define BROKEN_POINTS 18        /* broken.yaml: 9 strategies x 2 sizes */

#include "tests/kvx_child.h"

static char cache[600];

/* ---- broken.yaml: every failure kind, and the run goes on --------------------- */

typedef struct Expect {
    const char *strategy;
    const char *status;
    const char *detail;     /* must appear in the detail; NULL: anything */
} Expect;

static const Expect expects[] = {
    {"naive", "ok", NULL},
    {"warp", "ok", NULL},
    {"block", "ok", NULL},
    {"oob", "fault", "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"spin", "timeout", "no result after 5 s"},       /* the spec's measure: timeout_s */
    {"trap", "fault", "CUDA_ERROR_"},                 /* the driver's name for a trap has varied */
    {"misaligned", "fault", "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {"wrong", "mismatch", NULL},
    {"too_big", "skipped", "this kernel can launch"},
};
#define NEXPECTS ((int)(sizeof expects / sizeof expects[0]))

static const char *broken_db(void) { return tmp_path("broken.db"); }

static void test_broken_run(void **state)
{
    (void)state;
    const char *log = tmp_path("broken-1.log");
    /* One GPU: cases are then stored in the order they run, which the
     * went-on check below reads. */
    int rc = kvx(log, "run", SPECS "broken.yaml", "--db", broken_db(), "--cache", cache, "--devices", "0", NULL);
    if (rc != 1) { /* 1: the run finished and some cases are not ok */
        dump(log);
        fail_msg("kvx run broken.yaml exited %d (expected 1)", rc);
    }
    sqlite3 *db = db_open(broken_db());
    assert_non_null(db);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT json_extract(axes, '$.strategy'), label, status, "
                                        "coalesce(detail, ''), samples, median_ms IS NOT NULL, id "
                                        "FROM cases ORDER BY id",
                                        -1, &q, NULL),
                     SQLITE_OK);
    int seen[NEXPECTS] = {0}, rows = 0, last_ok_id = -1, stopped = 0;
    int bad_ids[BROKEN_POINTS * 2], nbad = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *strategy = (const char *)sqlite3_column_text(q, 0);
        const char *label = (const char *)sqlite3_column_text(q, 1);
        const char *status = (const char *)sqlite3_column_text(q, 2);
        const char *detail = (const char *)sqlite3_column_text(q, 3);
        int samples = sqlite3_column_int(q, 4), timed = sqlite3_column_int(q, 5), id = sqlite3_column_int(q, 6);
        rows++;
        int e = 0;
        while (e < NEXPECTS && strcmp(expects[e].strategy, strategy ? strategy : ""))
            e++;
        if (e == NEXPECTS)
            fail_msg("unexpected case '%s'", label);
        seen[e]++;
        printf("  %-9s %-32s %s\n", status, label, detail);
        if (strcmp(status, expects[e].status))
            fail_msg("%s: status %s (expected %s): %s", label, status, expects[e].status, detail);
        if (expects[e].detail && !strstr(detail, expects[e].detail))
            fail_msg("%s: detail \"%s\" lacks \"%s\"", label, detail, expects[e].detail);
        if (!strcmp(status, "ok") || !strcmp(status, "mismatch")) {
            /* a mismatch is timed anyway, so a table can still show it */
            if (samples < 1 || !timed)
                fail_msg("%s: %s but %d samples and %s median", label, status, samples,
                         timed ? "a" : "no");
        }
        if (!strcmp(status, "ok"))
            last_ok_id = id;
        else if (nbad < (int)(sizeof bad_ids / sizeof *bad_ids))
            bad_ids[nbad++] = id;
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    assert_int_equal(rows, BROKEN_POINTS);
    for (int e = 0; e < NEXPECTS; e++)
        if (seen[e] != 2)
            fail_msg("strategy %s: %d cases stored (expected one per size, 2)", expects[e].strategy, seen[e]);
    /* The run went on: an ok case was stored after every failure. */
    for (int i = 0; i < nbad; i++)
        stopped |= bad_ids[i] > last_ok_id;
    if (stopped) {
        dump(log);
        fail_msg("no ok case was stored after the last failures: the run stopped early?");
    }
    assert_int_equal(db_int(broken_db(), "SELECT count(DISTINCT key) FROM cases"), BROKEN_POINTS);
    char line[128];
    snprintf(line, sizeof line, "%d points selected: %d to run, 0 already stored", BROKEN_POINTS, BROKEN_POINTS);
    if (!log_has(log, line)) {
        dump(log);
        fail_msg("the first run's log lacks \"%s\"", line);
    }
}

static void test_broken_rerun_stores_nothing(void **state)
{
    (void)state;
    const char *log = tmp_path("broken-2.log");
    int before = db_int(broken_db(), "SELECT count(*) FROM cases");
    int runs_before = db_int(broken_db(), "SELECT count(*) FROM runs");
    assert_int_equal(before, BROKEN_POINTS);
    int rc = kvx(log, "run", SPECS "broken.yaml", "--db", broken_db(), "--cache", cache, "--devices", "0", NULL);
    char line[128];
    snprintf(line, sizeof line, "0 to run, %d already stored", BROKEN_POINTS);
    if (rc > 1 || !log_has(log, line)) {
        dump(log);
        fail_msg("the second run exited %d; expected \"%s\" in its log", rc, line);
    }
    assert_int_equal(db_int(broken_db(), "SELECT count(*) FROM cases"), BROKEN_POINTS);
    /* nothing measured: the second run, which stored no case, leaves no run row (#22, 13) */
    assert_int_equal(db_int(broken_db(), "SELECT count(*) FROM runs"), runs_before);
}

/* ---- tiny.yaml: killed and resumed ------------------------------------------------ */

static const char *plain_db(void) { return tmp_path("tiny.db"); }

static void test_kill_and_resume(void **state)
{
    (void)state;
    const char *log1 = tmp_path("tiny-1.log"), *log2 = tmp_path("tiny-2.log");
    const char *argv[] = {"run", SPECS "tiny.yaml", "--db", plain_db(), "--cache", cache, NULL};
    pid_t pid = kvx_start(log1, argv);
    /* Poll until some cases are stored, then kill kvx and its workers at once. */
    double end = wall_now_ms() + KVX_HANG_S * 1000.0;
    int stored = -1, status = 0;
    while ((stored = db_int(plain_db(), "SELECT count(*) FROM cases")) < 3) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            dump(log1);
            fail_msg("kvx run finished (exit %d) before the test could kill it (%d cases stored)",
                     exit_code(status), stored);
        }
        if (wall_now_ms() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            dump(log1);
            fail_msg("no case stored after %d s", KVX_HANG_S);
        }
        usleep(10 * 1000);
    }
    kill(-pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(exit_code(status), 128 + SIGKILL);
    usleep(200 * 1000); /* let the killed workers' GPU contexts go */
    int after_kill = db_int(plain_db(), "SELECT count(*) FROM cases");
    printf("  killed with %d of %d cases stored\n", after_kill, TINY_POINTS);
    if (after_kill < 3 || after_kill >= TINY_POINTS) {
        dump(log1);
        fail_msg("%d cases stored at the kill (expected some but not all of %d)", after_kill, TINY_POINTS);
    }

    int rc = kvx_wait(kvx_start(log2, argv), log2);
    char line[128];
    snprintf(line, sizeof line, "%d points selected: %d to run, %d already stored", TINY_POINTS,
             TINY_POINTS - after_kill, after_kill);
    if (rc != 0 || !log_has(log2, line)) {
        dump(log2);
        fail_msg("the resumed run exited %d; expected 0 and \"%s\"", rc, line);
    }
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM cases"), TINY_POINTS);
    assert_int_equal(db_int(plain_db(), "SELECT count(DISTINCT key) FROM cases"), TINY_POINTS);
    assert_int_equal(db_int(plain_db(), "SELECT count(DISTINCT label) FROM cases"), TINY_POINTS);
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM cases WHERE status = 'ok'"), TINY_POINTS);
}

/* ---- tiny.yaml: two shards, merged ---------------------------------------------------- */

static void test_shards_merge_to_the_plain_run(void **state)
{
    (void)state;
    const char *s1 = tmp_path("shard-1.db"), *s2 = tmp_path("shard-2.db"), *all = tmp_path("all.db");
    const char *shard_db[2] = {s1, s2}, *shard_arg[2] = {"1/2", "2/2"};
    int counts[2];
    for (int k = 0; k < 2; k++) {
        char log[64], line[64];
        snprintf(log, sizeof log, "shard-%d.log", k + 1);
        const char *lp = tmp_path(log);
        int rc = kvx(lp, "run", SPECS "tiny.yaml", "--db", shard_db[k], "--cache", cache, "--shard",
                     shard_arg[k], NULL);
        snprintf(line, sizeof line, "shard %s (from --shard) has", shard_arg[k]);
        if (rc != 0 || !log_has(lp, line)) {
            dump(lp);
            fail_msg("kvx run --shard %s exited %d; expected 0 and \"%s\"", shard_arg[k], rc, line);
        }
        counts[k] = db_int(shard_db[k], "SELECT count(*) FROM cases");
        assert_true(counts[k] > 0);
    }
    assert_int_equal(counts[0] + counts[1], TINY_POINTS);

    /* disjoint, and no workload group split (tiny's only code axis is the
     * baseline axis, so the workload JSON is the group) */
    int nk1, nw1, nw2;
    check_shards_disjoint(s1, s2, &nk1, &nw1, &nw2);
    assert_int_equal(nw1 + nw2, TINY_POINTS / 2);

    /* kvx plan --shard lists the points kvx run --shard ran */
    for (int k = 0; k < 2; k++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' plan '%s' --points --shard %s", KVX_BINARY, SPECS "tiny.yaml", shard_arg[k]);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        int nl;
        char **labels = db_strings(shard_db[k], "SELECT label FROM cases", &nl);
        char line[512];
        int listed = 0, in_points = 0;
        while (fgets(line, sizeof line, p)) {
            int idx, src, off = 0;
            if (!strncmp(line, "point ", 6))
                in_points = 1;
            else if (in_points && sscanf(line, "%d %d %n", &idx, &src, &off) == 2 && off) {
                line[strcspn(line, "\n")] = 0;
                listed++;
                if (!strings_have(labels, nl, line + off))
                    fail_msg("kvx plan --shard %s lists '%s', which kvx run --shard %s did not run",
                             shard_arg[k], line + off, shard_arg[k]);
            }
        }
        assert_int_equal(pclose(p), 0);
        assert_int_equal(listed, nl);
        strings_free(labels, nl);
    }

    const char *log = tmp_path("merge.log");
    check_merge_is_plain(log, all, s1, s2, plain_db(), "SELECT key FROM cases ORDER BY key", TINY_POINTS);
    /* merging again adds nothing */
    assert_int_equal(kvx(log, "merge", all, s1, s2, NULL), 0);
    assert_int_equal(db_int(all, "SELECT count(*) FROM cases"), TINY_POINTS);
}

/* ---- setup ------------------------------------------------------------------------------ */

/* The "GPUs" line of `kvx doctor`: its count, or 0 with the line in why. */
/* Statuses of a spec's run by the value of one axis: every case whose axis is
 * `wrong_value` a mismatch, every other ok. */
static void statuses_by(const char *dbp, const char *axis, const char *wrong_value, int want_rows)
{
    sqlite3 *db = db_open(dbp);
    assert_non_null(db);
    sqlite3_stmt *q = NULL;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT json_extract(axes, '$.%s'), label, status, coalesce(detail, '') "
             "FROM cases", axis);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    int rows = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(q, 0);
        const char *label = (const char *)sqlite3_column_text(q, 1);
        const char *status = (const char *)sqlite3_column_text(q, 2);
        const char *want = strcmp(v, wrong_value) == 0 ? "mismatch" : "ok";
        printf("  %-9s %-40s %s\n", status, label, (const char *)sqlite3_column_text(q, 3));
        if (strcmp(status, want))
            fail_msg("%s: %s (expected %s)", label, status, want);
        rows++;
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    assert_int_equal(rows, want_rows);
}

/* Run tests/data/specs/NAME.yaml into NAME.db: it must finish with some case
 * not ok (exit 1), every case of axis=wrong a mismatch and every other ok. */
static const char *run_planted(const char *name, const char *axis, const char *wrong, int rows)
{
    char spec[600], logn[64], dbn[64];
    snprintf(spec, sizeof spec, "%s%s.yaml", SPECS, name);
    snprintf(logn, sizeof logn, "%s.log", name);
    snprintf(dbn, sizeof dbn, "%s.db", name);
    const char *log = tmp_path(logn), *dbp = tmp_path(dbn);
    int rc = kvx(log, "run", spec, "--db", dbp, "--cache", cache, "--devices", "0", NULL);
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run %s.yaml exited %d (expected 1: the wrong variant mismatches)", name, rc);
    }
    statuses_by(dbp, axis, wrong, rows);
    return dbp;
}

/* refcount.yaml: checked against a one-thread reference kernel; the planted
 * wrong variant is a mismatch, and the reference ran once per workload point
 * (the run's profile_json counts its runs: 2 sizes x 2 thresholds). */
static void test_reference_kernel(void **state)
{
    (void)state;
    sqlite3 *db = db_open(run_planted("refcount", "strategy", "wrong", 12));
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_extract(profile_json, '$.reference_runs') FROM runs",
                                        -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 4);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* copy.yaml: checked by `out: in`, into a misaligned output too. */
static void test_copy_equals_input(void **state)
{
    (void)state;
    run_planted("copy", "access", "wrong", 6);
}

/* compact.yaml: a stream compaction checked as a multiset over the first
 * count[0] elements (order: any, length: count): naive, warp and block write
 * the kept elements in different orders and are ok; dupdrop writes one kept
 * element twice and drops another (count right) and is a mismatch that names
 * both.  Its metrics read count as written: atomics = count[0], bytes = n * 4
 * + count[0] * 4, the count near hit_rate * n. */
static void test_compaction_order_free(void **state)
{
    (void)state;
    const char *dbp = run_planted("compact", "strategy", "dupdrop", 16);
    assert_int_equal(db_int(dbp, "SELECT count(*) FROM cases WHERE status = 'mismatch' AND"
                                 " detail LIKE '%written 2 times, expected 1%' AND"
                                 " detail LIKE '%written 0 times, expected 1%'"), 4);
    assert_int_equal(db_int(dbp, "SELECT count(*) FROM cases WHERE"
                                 " bytes = json_extract(workload, '$.n') * 4 + atomics * 4 AND"
                                 " abs(atomics - json_extract(workload, '$.hit_rate') *"
                                 " json_extract(workload, '$.n')) <= 0.2 * json_extract(workload,"
                                 " '$.hit_rate') * json_extract(workload, '$.n') + 50"), 16);
}

/* A host whose driver sees no device (CUDA_VISIBLE_DEVICES empty): nothing
 * measured is exit 4, apart from 1 (some case not ok); nothing stored. */
static void test_no_device_exit(void **state)
{
    (void)state;
    const char *log = tmp_path("nodev.log"), *dbp = tmp_path("nodev.db");
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    int rc = kvx(log, "run", SPECS "tiny.yaml", "--db", dbp, "--cache", cache, NULL);
    unsetenv("CUDA_VISIBLE_DEVICES");
    if (rc != 4) {
        dump(log);
        fail_msg("kvx run with no visible device exited %d (expected 4)", rc);
    }
    assert_int_equal(access(dbp, F_OK), -1);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(void)
{
    /* Inside a Slurm array job, kvx run would shard these runs by itself. */
    child_env_clean();
    char why[600];
    if (doctor_gpus(why, sizeof why) < 1) {
        printf("skipped: no GPU to run on (%s)\n", why);
        return 77;
    }
    if (child_dir_make("kvx-gpu-run"))
        return 1;
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broken_run),
        cmocka_unit_test(test_broken_rerun_stores_nothing),
        cmocka_unit_test(test_kill_and_resume),
        cmocka_unit_test(test_shards_merge_to_the_plain_run),
        cmocka_unit_test(test_reference_kernel),
        cmocka_unit_test(test_copy_equals_input),
        cmocka_unit_test(test_compaction_order_free),
        cmocka_unit_test(test_no_device_exit),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0)
        nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    else
        printf("  kept %s for a look\n", tmp);
    return failed;
}
