/* cpu: the supervisor of `kvx run` end to end without a GPU, on two fake
 * devices (KVX_FAKE_GPUS=2, gpu/fake.h).  The kvx binary is started as a
 * child, as a user runs it; NVRTC, the compile cache, the pipes, the worker
 * processes with their buffers, launches, checks and timing, and SQLite are
 * real; only the CUDA driver under the worker is the fake one, whose kernels
 * are host stand-ins and which hangs, crashes, faults or writes a wrong value
 * where a marker symbol in the cubin says so (tests/data/specs/fake.cu).
 *
 * Checked, with tests/data/specs/fake.yaml (6 strategies x 3 sizes x 2 modes;
 * workload groups are (size, mode), six cases each):
 * - statuses: base and alt ok and timed (min_samples samples), hang a timeout
 *   ("no result after 2 s"), crash a fault (the worker died), fault a fault with
 *   the worker's detail, mismatch a mismatch (timed anyway); the run went on
 *   after every failure: all 36 cases stored, each group's last case too;
 * - the run's device is the fake one, and both workers measured;
 * - groups go whole to one worker: KVX_FAKE_LOG shows every group's cases on
 *   one device, in order, on one process until a case that ends its worker
 *   (hang, crash, fault) and on its replacement after it; without failing
 *   strategies, every group on exactly one worker process;
 * - the same run again stores nothing ("0 to run");
 * - --shard 1/2 and 2/2 into two databases are disjoint, split no group, and
 *   `kvx merge` of them holds exactly the plain run's keys (with the same
 *   deterministic fake times);
 * - a run killed with SIGKILL part-way (the process group, workers included,
 *   as a preempted job) and started again ends with every case exactly once;
 * - tests/data/specs/compact.yaml (an order-free check over a prefix whose
 *   length is an output) runs: its planted variant a mismatch that lists the
 *   values written twice and not at all, the rest ok; every case's check
 *   made by fingerprints on the device, and both sides sorted there only
 *   for the planted one's listing (the fake's KVX_FAKE_FILL_LOG);
 * - variants of two kernels (tests/data/specs/two_pass.yaml, hist_private.yaml)
 *   run, each sample timing both, and a wrong second kernel is a mismatch;
 *   contention's two_pass runs beside naive and kvx report tabulates it;
 * - without a driver, kvx run exits 4 (nothing measured) and stores nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/fake.yaml"
#define POINTS 36               /* 6 strategies x 3 sizes x 2 modes */
#define GROUPS 6                /* (size, mode) */
#define PER_GROUP 6             /* one case per strategy */
/* The fake devices' uuids (gpu/fake.h: "kvxf", then the ordinal) */
#define FAKE_UUID0 "GPU-6b767866-0000-0000-0000-000000000000"
#define FAKE_UUID1 "GPU-6b767866-0000-0000-0000-000000000001"

#include "tests/kvx_child.h"
#include "tests/bounds.h"

/* ---- KVX_FAKE_LOG ------------------------------------------------------------------ */

typedef struct LogLine {
    long pid;
    char key[65];
    int device;
    char what[16];
} LogLine;

/* The fake workers' log, in the order the lines were appended. */
static LogLine *log_lines(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("no KVX_FAKE_LOG at %s", path);
    int cap = 64;
    LogLine *v = mem_alloc(sizeof *v * (size_t)cap);
    char line[256];
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        if (*n == cap)
            v = mem_realloc(v, sizeof *v * (size_t)(cap *= 2));
        LogLine *l = &v[*n];
        if (sscanf(line, "%ld %64s %d %15s", &l->pid, l->key, &l->device, l->what) != 4)
            fail_msg("%s: unreadable line '%s'", path, line);
        (*n)++;
    }
    fclose(f);
    return v;
}

/* Does this case end its worker (so the next one runs on a replacement)? */
static int ends_worker(const char *what)
{
    return !strcmp(what, "hang") || !strcmp(what, "crash") || !strcmp(what, "fault");
}

/* ---- the full run: statuses, the run going on, groups whole ---------------------------- */

typedef struct Expect {
    const char *strategy;
    const char *status;
    const char *detail;     /* must appear in the detail; NULL: anything */
    int timed;              /* samples and a median expected */
} Expect;

static const Expect expects[] = {
    {"base", "ok", NULL, 1},
    {"alt", "ok", NULL, 1},
    {"hang", "timeout", "no result after 2 s", 0},  /* the spec's measure: timeout_s */
    {"crash", "fault", "died during the case", 0},
    /* the fake driver's sticky error, reported by the first call after the launch */
    {"fault", "fault", "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered (fake))", 0},
    {"mismatch", "mismatch", "(1 wrong); timed anyway", 1}, /* the worker's own check */
};
#define NEXPECTS ((int)(sizeof expects / sizeof expects[0]))

static const char *plain_db(void) { return tmp_path("plain.db"); }

/* Every stored case of db has the status, detail and timing its strategy
 * asks for, once per workload point. */
static void check_statuses(const char *db_path, const char *log)
{
    sqlite3 *db = db_open(db_path);
    assert_non_null(db);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT json_extract(axes, '$.strategy'), label, status, "
                                        "coalesce(detail, ''), samples, median_ms, t_measure_ms "
                                        "FROM cases ORDER BY id",
                                        -1, &q, NULL),
                     SQLITE_OK);
    int seen[NEXPECTS] = {0}, rows = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *strategy = (const char *)sqlite3_column_text(q, 0);
        const char *label = (const char *)sqlite3_column_text(q, 1);
        const char *status = (const char *)sqlite3_column_text(q, 2);
        const char *detail = (const char *)sqlite3_column_text(q, 3);
        int samples = sqlite3_column_int(q, 4);
        int timed = sqlite3_column_type(q, 5) != SQLITE_NULL;
        double median = sqlite3_column_double(q, 5), t_measure = sqlite3_column_double(q, 6);
        rows++;
        int e = 0;
        while (e < NEXPECTS && strcmp(expects[e].strategy, strategy ? strategy : ""))
            e++;
        if (e == NEXPECTS)
            fail_msg("unexpected case '%s'", label);
        seen[e]++;
        if (strcmp(status, expects[e].status)) {
            dump(log);
            fail_msg("%s: status %s (expected %s): %s", label, status, expects[e].status, detail);
        }
        if (expects[e].detail && !strstr(detail, expects[e].detail))
            fail_msg("%s: detail \"%s\" lacks \"%s\"", label, detail, expects[e].detail);
        if (expects[e].timed) {
            /* fake.yaml: min_samples 3; the fake's times are 0.010 .. 0.020 ms */
            if (samples != 3 || !timed || !(median >= 0.010 && median <= 0.020) || !(t_measure > 0))
                fail_msg("%s: %s with %d samples, median %g ms, t_measure %g ms (expected 3 samples, "
                         "0.010 .. 0.020 ms, t_measure > 0)", label, status, samples, timed ? median : NAN,
                         t_measure);
        } else if (samples != 0 || timed) {
            fail_msg("%s: %s but %d samples and %s median", label, status, samples, timed ? "a" : "no");
        }
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    /* The run went on after every failure: every case is stored, including
     * each group's mismatch, which runs after its group's hang, crash and fault. */
    assert_int_equal(rows, POINTS);
    for (int e = 0; e < NEXPECTS; e++)
        if (seen[e] != GROUPS)
            fail_msg("strategy %s: %d cases stored (expected one per workload point, %d)", expects[e].strategy,
                     seen[e], GROUPS);
    assert_int_equal(db_int(db_path, "SELECT count(DISTINCT key) FROM cases"), POINTS);
}

/* The run's summary lists the best ok variant of each of the six (size, mode)
 * points, in axis order, each base or alt (the only ok strategies). */
static void check_best_listed(const char *log)
{
    char *text = file_read(log, NULL);
    assert_non_null(text);
    const char *at = strstr(text, "best variant per point (speed-up over the baseline at the same point):\n");
    if (!at) {
        dump(log);
        fail_msg("no best-variant list in the run's log");
    }
    static const char *const points[] = {"size=1024 mode=a", "size=1024 mode=b", "size=2048 mode=a",
                                         "size=2048 mode=b", "size=4096 mode=a", "size=4096 mode=b"};
    for (int i = 0; i < 6; i++) {
        const char *line = strchr(at, '\n') + 1;
        if (strncmp(line, "  ", 2) || strncmp(line + 2, points[i], strlen(points[i]))) {
            dump(log);
            fail_msg("best-variant line %d is not for %s", i + 1, points[i]);
        }
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        char *one = mem_strdup(line);
        one[end - line] = 0;
        assert_true(strstr(one, "strategy=base ") || strstr(one, "strategy=alt "));
        assert_non_null(strstr(one, " ms "));
        free(one);
        at = end;
    }
    free(text);
}

/* The run's profile accounts for its wall time: the stages add up to it, and
 * what they name is a share of it (at least 90% of it, a bound held by
 * bench/bounds.sh: on a loaded machine the parent's own bookkeeping, which
 * no stage names, has been seen to leave 82% named under ASan); the
 * explorer's figures are there.
 * Each case the workers answered has its steps, its launches (1 verified + its
 * warm-ups + its samples) and the fake clocks, not throttled; the others have
 * none. */
static void check_profile(const char *db_path, const char *log)
{
    if (!log_has(log, "  accounted ") || !log_has(log, " cases/s; GPU time of the samples ")) {
        dump(log);
        fail_msg("kvx run --profile printed no accounting");
    }
    double accounted = db_num(db_path, "SELECT json_extract(profile_json, '$.accounted') FROM runs");
    if (!(accounted > 0 && accounted <= 1)) {
        dump(log);
        fail_msg("the profile's accounted share is %g (expected a share of the wall time)", accounted);
    }
    KVX_BOUND(accounted >= 0.9, "the profile names %.1f%% of the wall time (bound 90%%)", 100 * accounted);
    assert_int_equal(db_int(db_path, "SELECT abs((SELECT sum(value) FROM json_each(r.profile_json,"
                                     " '$.stages_s')) - r.wall_s) <= 0.05 * r.wall_s FROM runs r"),
                     1);
    assert_int_equal(db_int(db_path, "SELECT json_extract(profile_json, '$.cases_per_s') > 0 AND"
                                     " json_extract(profile_json, '$.gpu_s') > 0 AND"
                                     " json_extract(profile_json, '$.cases') = 36 AND"
                                     " json_type(profile_json, '$.worker_s.recv') = 'real' FROM runs"),
                     1);
    /* base, alt and mismatch were answered (timed), 18 cases. */
    assert_int_equal(db_int(db_path, "SELECT count(*) FROM cases WHERE samples > 0 AND"
                                     " json_extract(profile_json, '$.launches') = 1 +"
                                     " json_extract(profile_json, '$.warmups') + samples AND"
                                     " json_type(profile_json, '$.send') = 'real' AND"
                                     " sm_mhz = 1980 AND sm_max_mhz = 1980 AND throttled = 0"),
                     18);
    /* A worker that died or hung answered nothing: no profile, clocks unknown. */
    assert_int_equal(db_int(db_path, "SELECT count(*) FROM cases WHERE samples = 0 AND"
                                     " profile_json IS NULL AND sm_mhz IS NULL AND throttled IS NULL"),
                     db_int(db_path, "SELECT count(*) FROM cases WHERE samples = 0 AND status IN"
                                     " ('timeout', 'fault') AND detail NOT LIKE '%(fake)%'"));
}

static void test_full_run(void **state)
{
    (void)state;
    const char *log = tmp_path("plain-1.log"), *flog = tmp_path("plain-fake.log");
    setenv("KVX_FAKE_LOG", flog, 1);
    int rc = kvx(log, "run", SPEC, "--db", plain_db(), "--profile", NULL);
    unsetenv("KVX_FAKE_LOG");
    if (rc != 1) { /* 1: the run finished and some cases are not ok */
        dump(log);
        fail_msg("kvx run fake.yaml exited %d (expected 1)", rc);
    }
    char line[128];
    snprintf(line, sizeof line, "%d points selected: %d to run, 0 already stored", POINTS, POINTS);
    if (!log_has(log, line) || !log_has(log, "kvx fake device, sm_90, 132 SMs, L2 60 MiB, peak 4800 GB/s; 2 workers")) {
        dump(log);
        fail_msg("the run's log lacks \"%s\" or the fake device line", line);
    }
    check_statuses(plain_db(), log);
    check_best_listed(log);

    /* The fake device is what the run recorded, and both workers measured. */
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM runs WHERE gpu_name = 'kvx fake device' AND "
                                        "gpu_uuid = '" FAKE_UUID0 "' AND cc = 90 AND sm_count = 132 AND "
                                        "peak_gbs = 4800 AND driver_version = 13000"),
                     1);
    assert_int_equal(db_int(plain_db(), "SELECT count(DISTINCT device_uuid) FROM cases WHERE device_uuid IN "
                                        "('" FAKE_UUID0 "', '" FAKE_UUID1 "')"),
                     2);
    /* The run row lists both GPUs it measured on. */
    assert_int_equal(db_int(plain_db(), "SELECT json_array_length(devices_json) = 2 AND"
                                        " json_extract(devices_json, '$[0].uuid') = '" FAKE_UUID0 "' AND"
                                        " json_extract(devices_json, '$[1].uuid') = '" FAKE_UUID1 "' AND"
                                        " json_extract(devices_json, '$[1].sm_count') = 132 FROM runs"),
                     1);

    check_profile(plain_db(), log);

    /* Groups whole to one worker.  Within a group the parent sends the
     * baseline first, then the points in order: ok, ok, hang, crash, fault,
     * mismatch; hang, crash and fault each end their worker process. */
    static const char *const order[PER_GROUP] = {"ok", "ok", "hang", "crash", "fault", "mismatch"};
    int n = 0;
    LogLine *l = log_lines(flog, &n);
    assert_int_equal(n, POINTS);
    int ngroups = 0, pids_per_group = 0;
    char *done = mem_calloc((size_t)n, 1);
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        ngroups++;
        int k = 0, prev = -1;
        for (int j = i; j < n; j++) {
            if (strcmp(l[j].key, l[i].key))
                continue;
            done[j] = 1;
            if (k >= PER_GROUP)
                fail_msg("group %.12s: more than %d cases", l[i].key, PER_GROUP);
            if (strcmp(l[j].what, order[k]))
                fail_msg("group %.12s: case %d did '%s' (expected '%s')", l[i].key, k, l[j].what, order[k]);
            if (l[j].device != l[i].device)
                fail_msg("group %.12s went to devices %d and %d (expected one worker)", l[i].key, l[i].device,
                         l[j].device);
            if (prev >= 0 && ends_worker(l[prev].what) == (l[j].pid == l[prev].pid))
                fail_msg("group %.12s: case %d ran in process %ld after '%s' in %ld (expected %s process)",
                         l[i].key, k, l[j].pid, l[prev].what, l[prev].pid,
                         ends_worker(l[prev].what) ? "a new" : "the same");
            pids_per_group += prev < 0 || l[j].pid != l[prev].pid;
            prev = j;
            k++;
        }
        if (k != PER_GROUP)
            fail_msg("group %.12s: %d cases in the fake log (expected %d)", l[i].key, k, PER_GROUP);
    }
    assert_int_equal(ngroups, GROUPS);
    assert_int_equal(pids_per_group, GROUPS * 4); /* started, then after hang, crash and fault */
    free(done);
    free(l);
}

/* With no failing strategy, no worker is replaced: each group is one process. */
static void test_groups_one_process(void **state)
{
    (void)state;
    const char *log = tmp_path("okonly.log"), *flog = tmp_path("okonly-fake.log");
    setenv("KVX_FAKE_LOG", flog, 1);
    int rc = kvx(log, "run", SPEC, "--db", tmp_path("okonly.db"), "--where",
                 "strategy == \"base\" || strategy == \"alt\"", NULL);
    unsetenv("KVX_FAKE_LOG");
    if (rc != 0) {
        dump(log);
        fail_msg("kvx run --where base/alt exited %d (expected 0: all ok)", rc);
    }
    int n = 0;
    LogLine *l = log_lines(flog, &n);
    assert_int_equal(n, 2 * GROUPS);
    int ngroups = 0, devices = 0;
    for (int i = 0; i < n; i++) {
        int first = 1, cases = 0;
        for (int j = 0; j < n; j++) {
            if (strcmp(l[j].key, l[i].key))
                continue;
            first &= j >= i;
            cases++;
            if (l[j].pid != l[i].pid)
                fail_msg("group %.12s went to worker processes %ld and %ld (expected one)", l[i].key, l[i].pid,
                         l[j].pid);
        }
        if (!first)
            continue;
        ngroups++;
        assert_int_equal(cases, 2);
        devices |= 1 << l[i].device;
    }
    assert_int_equal(ngroups, GROUPS);
    assert_int_equal(devices, 3); /* both fake GPUs got groups */
    free(l);
}

static void test_rerun_stores_nothing(void **state)
{
    (void)state;
    const char *log = tmp_path("plain-2.log");
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM cases"), POINTS);
    int rc = kvx(log, "run", SPEC, "--db", plain_db(), NULL);
    char line[128];
    snprintf(line, sizeof line, "0 to run, %d already stored", POINTS);
    if (rc > 1 || !log_has(log, line)) {
        dump(log);
        fail_msg("the second run exited %d; expected \"%s\" in its log", rc, line);
    }
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM cases"), POINTS);
    /* a run that stored nothing leaves no run row (#22, 13) */
    assert_int_equal(db_int(plain_db(), "SELECT count(*) FROM runs"), 1);
}

/* ---- shards, merged ------------------------------------------------------------------------ */

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
        int rc = kvx(lp, "run", SPEC, "--db", shard_db[k], "--shard", shard_arg[k], NULL);
        snprintf(line, sizeof line, "shard %s (from --shard) has", shard_arg[k]);
        if (rc != 1 || !log_has(lp, line)) {
            dump(lp);
            fail_msg("kvx run --shard %s exited %d; expected 1 and \"%s\"", shard_arg[k], rc, line);
        }
        counts[k] = db_int(shard_db[k], "SELECT count(*) FROM cases");
        assert_true(counts[k] > 0);
    }
    assert_int_equal(counts[0] + counts[1], POINTS);

    /* disjoint, and no workload group split */
    int nk1, nw1, nw2;
    check_shards_disjoint(s1, s2, &nk1, &nw1, &nw2);
    assert_int_equal(nw1 + nw2, GROUPS);
    assert_int_equal(nk1, nw1 * PER_GROUP);

    /* Key, status and fake time: the same as the plain run's, key by key. */
    check_merge_is_plain(tmp_path("merge.log"), all, s1, s2, plain_db(),
                         "SELECT key || ' ' || status || ' ' || coalesce(printf('%.9f', median_ms), '-') "
                         "FROM cases ORDER BY key",
                         POINTS);
}

/* ---- killed and resumed ------------------------------------------------------------------- */

static void test_kill_and_resume(void **state)
{
    (void)state;
    const char *db = tmp_path("killed.db");
    const char *log1 = tmp_path("killed-1.log"), *log2 = tmp_path("killed-2.log");
    const char *argv[] = {"run", SPEC, "--db", db, NULL};
    pid_t pid = kvx_start(log1, argv);
    /* Poll until some cases are stored, then kill kvx and its workers at once. */
    double end = wall_now_ms() + KVX_HANG_S * 1000.0;
    int stored = -1, status = 0;
    while ((stored = db_int(db, "SELECT count(*) FROM cases")) < 8) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            kill(-pid, SIGKILL);
            dump(log1);
            fail_msg("kvx run finished (exit %d) before the test could kill it (%d cases stored)",
                     exit_code(status), stored);
        }
        if (wall_now_ms() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            dump(log1);
            fail_msg("fewer than 8 cases stored after %d s", KVX_HANG_S);
        }
        usleep(10 * 1000);
    }
    kill(-pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(exit_code(status), 128 + SIGKILL);
    int after_kill = db_int(db, "SELECT count(*) FROM cases");
    printf("  killed with %d of %d cases stored\n", after_kill, POINTS);
    if (after_kill < 8 || after_kill >= POINTS) {
        dump(log1);
        fail_msg("%d cases stored at the kill (expected some but not all of %d)", after_kill, POINTS);
    }

    int rc = kvx_wait(kvx_start(log2, argv), log2);
    char line[128];
    snprintf(line, sizeof line, "%d points selected: %d to run, %d already stored", POINTS, POINTS - after_kill,
             after_kill);
    if (rc != 1 || !log_has(log2, line)) {
        dump(log2);
        fail_msg("the resumed run exited %d; expected 1 and \"%s\"", rc, line);
    }
    /* every case exactly once, each with its strategy's status */
    assert_int_equal(db_int(db, "SELECT count(DISTINCT label) FROM cases"), POINTS);
    check_statuses(db, log2);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE run_id = (SELECT max(id) FROM runs)"),
                     POINTS - after_kill);
}

/* ---- the summary with many points ---------------------------------------------------- */

/* fake_many.yaml has 20 points of (size, mode), base and alt at each: too
 * many to list, so the summary counts each winner's points, most first, and
 * the counts add up to 20. */
static void test_best_tallied(void **state)
{
    (void)state;
    const char *log = tmp_path("many.log");
    int rc = kvx(log, "run", KVX_SOURCE_DIR "/tests/data/specs/fake_many.yaml", "--db", tmp_path("many.db"), NULL);
    char *text = file_read(log, NULL);
    const char *at = text ? strstr(text, "best variant at each of 20 points, by how often it won") : NULL;
    if (rc != 0 || !at) {
        dump(log);
        fail_msg("kvx run fake_many.yaml exited %d, or its log has no tally of 20 points", rc);
    }
    int total = 0, lines = 0, last = 1 << 30;
    for (const char *line = strchr(at, '\n') + 1; !strncmp(line, "  strategy=", 11); line = strchr(line, '\n') + 1) {
        const char *best = strstr(line, "best at");
        int wins = 0, of = 0;
        assert_non_null(best);
        assert_int_equal(sscanf(best, "best at %d of %d points", &wins, &of), 2);
        assert_int_equal(of, 20);
        assert_true(wins >= 1 && wins <= last);
        last = wins;
        total += wins;
        lines++;
    }
    assert_true(lines >= 1 && lines <= 2);
    assert_int_equal(total, 20);
    free(text);
}

/* ---- an order-free check: stream compaction ---------------------------------------- */

/* compact.yaml: every strategy writes the kept elements in its own order, so
 * out is checked as a multiset over its first count[0] elements.  On the
 * fake driver the variants' stand-in writes the kept elements in reverse and
 * the reference's in index order, so only an order-free check accepts them;
 * dupdrop's stand-in writes one kept element twice and drops another (with
 * the right count), and the worker's own comparison must say so.  The
 * metric atomics reads the count the launch wrote. */
static void test_compaction(void **state)
{
    (void)state;
    const char *log = tmp_path("compact.log"), *db = tmp_path("compact.db"), *dlog = tmp_path("compact-devio.log");
    setenv("KVX_FAKE_FILL_LOG", dlog, 1);
    int rc = kvx(log, "run", KVX_SOURCE_DIR "/tests/data/specs/compact.yaml", "--db", db, NULL);
    unsetenv("KVX_FAKE_FILL_LOG");
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run compact.yaml exited %d (expected 1: the planted variant is a mismatch)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'mismatch' AND samples > 0"
                                " AND json_extract(axes, '$.strategy') = 'dupdrop'"), 4);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND"
                                " json_extract(axes, '$.strategy') IN ('naive', 'warp', 'block')"), 12);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 16);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE detail LIKE '%written 2 times%'"
                                " AND detail LIKE '%written 0 times%'"), 4);
    /* fingerprinted on the device, output and reference at once, in each of
     * the 16 cases, as i32, over the count the launch wrote (a prefix of n);
     * sorted there, both sides, only in dupdrop's 4, whose sums differ */
    char *text = file_read(dlog, NULL);
    assert_non_null(text);
    int sorts = 0, hashes = 0;
    for (const char *p = text; (p = strstr(p, "kvx_sort i32 ")); p++)
        sorts++;
    for (const char *p = text; (p = strstr(p, "kvx_mset i32 ")); p++)
        hashes++;
    free(text);
    assert_int_equal(hashes, 16);
    assert_int_equal(sorts, 8);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND atomics > 0 AND"
                                " atomics = bytes / 4 - json_extract(workload, '$.n')"), 12);
}

/* ---- variants of several kernels ------------------------------------------------------- */

/* two_pass.yaml and hist_private.yaml: a launch list whose when: picks one
 * kernel or two, scratch buffers (two_pass's uninitialised, global_private's
 * zeroed before every launch) and a planted variant whose second kernel
 * drops the last block's part: a mismatch, found by the worker's own check
 * of the output the sequence leaves.  A sample times the sequence: each fake
 * kernel takes 0.010 .. 0.020 ms, so two take at least 0.020. */
static void test_two_kernels(void **state)
{
    (void)state;
    const char *log = tmp_path("two.log"), *db = tmp_path("two.db");
    const char *specs[] = {KVX_SOURCE_DIR "/tests/data/specs/two_pass.yaml",
                           KVX_SOURCE_DIR "/tests/data/specs/hist_private.yaml"};
    for (int i = 0; i < 2; i++) {
        int rc = kvx(log, "run", specs[i], "--db", db, NULL);
        if (rc != 1) {
            dump(log);
            fail_msg("kvx run %s exited %d (expected 1: the planted variant is a mismatch)", specs[i], rc);
        }
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'mismatch' AND samples = 3 AND"
                                " json_extract(axes, '$.drop') = 1"), 4);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND"
                                " json_extract(axes, '$.drop') = 0"), 6);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 10);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE min_ms >= 0.020 AND"
                                " json_extract(axes, '$.strategy') IN ('two_pass', 'global_private')"), 8);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE max_ms <= 0.020 AND"
                                " json_extract(axes, '$.strategy') = 'thread_reg_v4'"), 2);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE json_extract(profile_json, '$.launches') ="
                                " 2 * (1 + json_extract(profile_json, '$.warmups') + samples) AND"
                                " json_extract(axes, '$.strategy') IN ('two_pass', 'global_private')"), 8);
    /* Each kernel's registers and spills are stored; regs is the largest. */
    assert_int_equal(db_int(db, "SELECT count(*) FROM variants WHERE json_array_length(kernels_json) = 2"
                                " AND regs = (SELECT max(json_extract(value, '$.regs')) FROM"
                                " json_each(kernels_json)) AND (SELECT count(*) FROM json_each(kernels_json)"
                                " WHERE json_extract(value, '$.spill_stores') = 0) = 2 AND"
                                " kernels_json LIKE '%\"kernel\":\"filter_count_sum\"%' ="
                                " (label LIKE '%two_pass%')"), 4);
    assert_int_equal(db_int(db, "SELECT count(*) FROM variants WHERE json_array_length(kernels_json) = 1"
                                " AND json_extract(kernels_json, '$[0].kernel') = 'filter_count'"), 2);
}

/* The new strategies of specs/contention.yaml run on the fake device beside
 * the atomic ones, and kvx report's tables put them side by side: the
 * speed-up table over naive has a two_pass column with a figure. */
static void test_two_pass_reported(void **state)
{
    (void)state;
    const char *log = tmp_path("cont.log"), *db = tmp_path("cont.db"), *out = tmp_path("cont-report");
    int rc = kvx(log, "run", KVX_SOURCE_DIR "/specs/contention.yaml", "--db", db, "--where",
                 "(strategy == \"naive\" || strategy == \"two_pass\") && n == 2^24 && address == \"const\"",
                 NULL);
    if (rc != 0) {
        dump(log);
        fail_msg("kvx run contention.yaml naive/two_pass exited %d (expected 0: all ok)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND"
                                " json_extract(axes, '$.strategy') = 'two_pass'"), 12);
    rc = kvx(log, "report", KVX_SOURCE_DIR "/specs/contention.yaml", "--db", db, "--out", out, NULL);
    if (rc != 0) {
        dump(log);
        fail_msg("kvx report contention.yaml exited %d", rc);
    }
    char path[700];
    snprintf(path, sizeof path, "%s/contention.md", out);
    char *md = file_read(path, NULL);
    assert_non_null(md);
    const char *t = strstr(md, "Speed-up over naive, one counter, u32, n = 2^24");
    assert_non_null(t);
    const char *hdr = strstr(t, "| two_pass");
    const char *next = strstr(t + 1, "\n#");
    if (!hdr || (next && hdr > next))
        fail_msg("the speed-up table has no two_pass column:\n%.1500s", t);
    free(md);
}

/* No GPU and no driver: nothing measured is exit 4, apart from 1 (some case
 * not ok), and nothing is stored.  Where a driver is installed the real run
 * would start, so that half is skipped there. */
static void test_no_gpu_exit(void **state)
{
    (void)state;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        dlclose(lib);
        printf("  skipped the no-driver run: libcuda.so.1 is installed here\n");
        return;
    }
    const char *log = tmp_path("nogpu.log"), *db = tmp_path("nogpu.db");
    setenv("KVX_FAKE_GPUS", "0", 1);
    int rc = kvx(log, "run", SPEC, "--db", db, NULL);
    setenv("KVX_FAKE_GPUS", "2", 1);
    if (rc != 4 || !log_has(log, "measuring needs a GPU")) {
        dump(log);
        fail_msg("kvx run without a driver exited %d (expected 4, \"measuring needs a GPU\")", rc);
    }
    assert_int_equal(access(db, F_OK), -1);
}

/* ---- setup ------------------------------------------------------------------------------ */

static void rm_tree(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", dir);
}

int main(void)
{
    /* Inside a Slurm array job, kvx run would shard these runs by itself. */
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "2", 1);
    if (child_dir_make("kvx-run-fake"))
        return 1;
    /* A compile cache of the test's own: the first run compiles, the rest hit. */
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_run),
        cmocka_unit_test(test_groups_one_process),
        cmocka_unit_test(test_rerun_stores_nothing),
        cmocka_unit_test(test_shards_merge_to_the_plain_run),
        cmocka_unit_test(test_kill_and_resume),
        cmocka_unit_test(test_best_tallied),
        cmocka_unit_test(test_compaction),
        cmocka_unit_test(test_two_kernels),
        cmocka_unit_test(test_two_pass_reported),
        cmocka_unit_test(test_no_gpu_exit),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0)
        rm_tree(tmp);
    else
        printf("  kept %s for a look\n", tmp);
    return failed;
}
