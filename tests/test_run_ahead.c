/* e2e: host references computed ahead of the GPU (run/run_ahead.c, issue 24
 * item 3), on a fake device (KVX_FAKE_GPUS=1, gpu/fake.h).
 *
 * tests/data/specs/count.yaml has 12 workload points (hit rate x n x
 * counter type), each with its own count_below reference, shared by its
 * variants.  The parent computes the 12 in hand-out order from the moment
 * the order is known; $KVX_TEST_HOSTREF_HOLD=12:1000 holds the last one
 * until every case before its point's first is stored, then 1 s more, so
 * that it is still being computed when its point comes however loaded the
 * machine (no verdict here depends on how long anything took).  Checked:
 * - every case is ok, and the run listed 12 references to compute ahead;
 * - the cases of the 11 other points were all stored before any case of
 *   the slow point, and waited for host work less, all together, than the
 *   slow point's first case did: a slow reference delays its own point only;
 * - runs.profile_json's host_wait_s is the cases' waits summed;
 * - the references' folder under $TMPDIR is gone after the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/count.yaml"
#define NCASES 30
#define NREFS 12

/* A case's workload point: its axes but the strategy (counter, a code axis,
 * changes the output's type and so the reference). */
#define POINT "json_remove(axes, '$.strategy')"
/* The slow point: that of the case stored last (the held reference's point
 * is the last of the hand-out). */
#define SLOW_POINT "(SELECT " POINT " FROM cases ORDER BY id DESC LIMIT 1)"
#define WAIT "json_extract(profile_json, '$.host_wait_ms')"

static int folders_left(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_slow_reference(void **state)
{
    (void)state;
    const char *db = tmp_path("ahead.db"), *log = tmp_path("ahead.log");
    /* From a warm cache: while sources compile, the hand-out starts a unit
     * that can start before the one the references were listed for
     * (run_loop.c's ready_first), which is not what this checks. */
    assert_int_equal(kvx(tmp_path("compile.log"), "compile", SPEC, "--arch", "sm_90", NULL), 0);
    setenv("KVX_TEST_HOSTREF_HOLD", "12:1000", 1);
    int rc = kvx(log, "run", SPEC, "--db", db, "--profile", NULL);
    unsetenv("KVX_TEST_HOSTREF_HOLD");
    if (rc != 0) {
        dump(log);
        fail_msg("kvx run exited %d (expected 0: all ok)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), NCASES);
    assert_int_equal(db_int(db, "SELECT json_extract(profile_json, '$.ahead_refs') FROM runs"), NREFS);
    /* every other point's cases were stored before the slow point's ... */
    assert_int_equal(db_int(db, "SELECT (SELECT max(id) FROM cases WHERE " POINT " NOT IN " SLOW_POINT ") < (SELECT"
                                " min(id) FROM cases WHERE " POINT " IN " SLOW_POINT ")"), 1);
    /* ... and waited less, all of them together, than its first case */
    double others = db_num(db, "SELECT total(" WAIT ") FROM cases WHERE " POINT " NOT IN " SLOW_POINT);
    double first = db_num(db, "SELECT " WAIT " FROM cases WHERE " POINT " IN " SLOW_POINT " ORDER BY id LIMIT 1");
    printf("  the slow point's first case waited %.1f ms, the other points' cases %.1f ms in all\n", first, others);
    if (!(first > 0 && others < first)) {
        dump(log);
        fail_msg("the held reference's case waited %.1f ms, the others %.1f ms (expected less)", first, others);
    }
    /* the run's figure is the cases' waits */
    assert_int_equal(db_int(db, "SELECT abs(json_extract(r.profile_json, '$.host_wait_s') - (SELECT"
                                " sum(" WAIT ") / 1000 FROM cases)) < 0.002 FROM runs r"), 1);
    if (!log_has(log, "host references computed ahead  12 in "))
        fail_msg("kvx run --profile did not say how many references it computed ahead");
    assert_int_equal(folders_left(tmp, "kvx-hostrefs-"), 0);
}

/* More references than the list's first allocation (64), with string
 * arguments (atomic_ops' reduce("add", ...)): the list grows by realloc, and
 * a job's strings must move with it (they were left pointing into the old
 * list: a crash on an H200, 2026-12-02).  The fake has no stand-in for these
 * kernels, so every case is a launch_error (exit 1); the references are
 * computed all the same. */
static void test_many_references(void **state)
{
    (void)state;
    const char *db = tmp_path("many.db"), *log = tmp_path("many.log");
    int rc = kvx(log, "run", KVX_SOURCE_DIR "/specs/atomic_ops.yaml", "--db", db, "--profile", "--where",
                 "space == \"global\" && (type == \"u32\" || type == \"i32\" || type == \"u64\")", NULL);
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run exited %d (expected 1: launch errors on the fake, no crash)", rc);
    }
    assert_true(db_int(db, "SELECT json_extract(profile_json, '$.ahead_refs') FROM runs") > 64);
}

/* A cold run on one GPU: while one source still compiles (held by
 * $KVX_TEST_COMPILE_HOLD until every case that does not need it is done, as
 * a source slower than all the others would be), the worker runs what has
 * compiled; the rest of a unit whose next case waits goes to the end of the
 * hand-out (run_loop.c), so every other case is stored before the slow
 * source's first, and those units are handed out twice.  A hand-out that
 * waited for the held source instead would never end (KVX_HANG_S). */
static void test_ready_first(void **state)
{
    (void)state;
    const char *db = tmp_path("ready.db"), *log = tmp_path("ready.log");
    setenv("KVX_TEST_COMPILE_HOLD", "strategy-warp__counter-u32", 1);
    int rc = kvx(log, "run", SPEC, "--db", db, "--cache", tmp_path("cold-ready"), "-j", "2", "--profile", NULL);
    unsetenv("KVX_TEST_COMPILE_HOLD");
    if (rc != 0) {
        dump(log);
        fail_msg("kvx run exited %d (expected 0: all ok)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), NCASES);
    if (db_int(db, "SELECT (SELECT max(id) FROM cases WHERE label NOT LIKE 'strategy=warp counter=u32 %') <"
                   " (SELECT min(id) FROM cases WHERE label LIKE 'strategy=warp counter=u32 %')") != 1) {
        dump(log);
        fail_msg("the worker waited for the slow source instead of running the cases that had compiled");
    }
    assert_true(db_int(db, "SELECT json_array_length(profile_json, '$.handout') FROM runs") > NREFS);
}

int main(void)
{
    unsetenv("KVX_FAKE_LOG");
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    if (child_dir_make("kvx-run-ahead"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    setenv("KVX_FAKE_GPUS", "1", 1);
    setenv("TMPDIR", tmp, 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_reference),
        cmocka_unit_test(test_many_references),
        cmocka_unit_test(test_ready_first),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
