/* cpu: the real worker on the fake CUDA driver (issue #23, item 2; gpu/fake.h).
 * The kvx binary runs as a child, as a user runs it, with KVX_FAKE_GPUS=1:
 * planning, NVRTC, the worker's buffers, resets, launches, verification and
 * timing are real; the driver under the worker is the fake one, which computes
 * each kernel's outputs with a host stand-in and injects faults on request.
 *
 * Checked:
 * - a sticky fault injected mid-group (KVX_FAKE_FAULT_LAUNCH) makes that case
 *   a fault with the driver's error, ends its worker, and a new worker process
 *   finishes the group, ok;
 * - an allocation that fails (KVX_FAKE_MEM_FREE) makes the cases whose
 *   buffers do not fit skipped, "out of device memory", and the run goes on;
 * - the worker's paths: a host reference and a differential check, both L2
 *   flushes, warm-ups, an input at an offset, a cluster launch, dynamic shared
 *   memory past 48 KiB, a reference kernel: every case ok, verified by the
 *   worker itself; a kernel with no host stand-in is a launch_error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define KVX_DEADLINE_S 60
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define SPECS KVX_SOURCE_DIR "/tests/data/specs/"

/* The status and detail stored for label, "status: detail". */
static char *case_row(const char *db, const char *label)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT status || ': ' || coalesce(detail, '') FROM cases WHERE label = '%s'",
             label);
    int n = 0;
    char **v = db_strings(db, sql, &n);
    if (n != 1)
        fail_msg("%d rows for '%s' in %s (expected 1)", n, label, db);
    char *row = mem_strdup(v[0]);
    strings_free(v, n);
    return row;
}

static void expect_row(const char *db, const char *label, const char *want, const char *log)
{
    char *row = case_row(db, label);
    if (strncmp(row, want, strlen(want)) != 0) {
        dump(log);
        fail_msg("%s: '%s' (expected '%s...')", label, row, want);
    }
    free(row);
}

/* Issue #23 item 2: KVX_FAKE_FAULT_LAUNCH=7 hits the second case of the group's
 * verified launch (the first case launches kvx_fill for `in`, the kernel 1 + 3
 * times and kvx_compare once, fake_driver.yaml): the worker sends the fault
 * and exits, and the third case runs on a new worker process. */
static void test_fault_mid_group(void **state)
{
    (void)state;
    const char *db = tmp_path("fault.db"), *log = tmp_path("fault.log"), *flog = tmp_path("fault-fake.log");
    setenv("KVX_FAKE_FAULT_LAUNCH", "7", 1);
    setenv("KVX_FAKE_LOG", flog, 1);
    int rc = kvx(log, "run", SPECS "fake_driver.yaml", "--db", db, "--where", "size == 1024", NULL);
    unsetenv("KVX_FAKE_LOG");
    unsetenv("KVX_FAKE_FAULT_LAUNCH");
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run with a fault injected exited %d (expected 1: some cases not ok)", rc);
    }
    expect_row(db, "strategy=base size=1024", "ok: ", log);
    expect_row(db, "strategy=alt size=1024",
               "fault: cuEventRecord: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered (fake))",
               log);
    expect_row(db, "strategy=s2 size=1024", "ok: ", log);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND samples = 3"), 2);
    /* One group: base and alt on the first worker, s2 on its replacement. */
    FILE *f = fopen(flog, "r");
    assert_non_null(f);
    long pid[3];
    char key[3][65], what[3][16];
    int dev[3], k = 0;
    while (k < 3 && fscanf(f, "%ld %64s %d %15s", &pid[k], key[k], &dev[k], what[k]) == 4)
        k++;
    fclose(f);
    assert_int_equal(k, 3);
    assert_string_equal(key[0], key[1]);
    assert_string_equal(key[1], key[2]);
    assert_true(pid[0] == pid[1]);
    if (pid[2] == pid[1])
        fail_msg("the case after the fault ran in the faulted worker %ld", pid[1]);
}

/* Issue #23 item 2: KVX_FAKE_MEM_FREE below the 1M point's 8 MiB: its outputs cannot be
 * allocated (after the worker gave back its kept ones), the 1K point runs. */
static void test_alloc_fails(void **state)
{
    (void)state;
    const char *db = tmp_path("oom.db"), *log = tmp_path("oom.log");
    setenv("KVX_FAKE_MEM_FREE", "6000000", 1);
    int rc = kvx(log, "run", SPECS "fake_driver.yaml", "--db", db, NULL);
    unsetenv("KVX_FAKE_MEM_FREE");
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run with 6 MB free exited %d (expected 1: some cases not ok)", rc);
    }
    static const char *const strategies[] = {"base", "alt", "s2"};
    for (int i = 0; i < 3; i++) {
        char label[64];
        snprintf(label, sizeof label, "strategy=%s size=1048576", strategies[i]);
        expect_row(db, label, "skipped: out of device memory: buffer 'out' needs 4194304 bytes", log);
        snprintf(label, sizeof label, "strategy=%s size=1024", strategies[i]);
        expect_row(db, label, "ok: ", log);
    }
}

/* fake_paths.yaml as written (read flush), and as a copy with flush_l2 set
 * to write: every case ok, warmed up, sampled and checked by the worker. */
static void run_paths(const char *name, const char *from, const char *to)
{
    char *spec = file_read(SPECS "fake_paths.yaml", NULL), *cu = file_read(SPECS "fake_paths.cu", NULL);
    assert_non_null(spec);
    assert_non_null(cu);
    char *at = strstr(spec, from);
    assert_non_null(at);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%.*s%s%s", (int)(at - spec), spec, to, at + strlen(from));
    char file[64], db[64], log[64];
    snprintf(file, sizeof file, "%s.yaml", name);
    snprintf(db, sizeof db, "%s.db", name);
    snprintf(log, sizeof log, "%s.log", name);
    assert_int_equal(file_write_atomic(tmp_path(file), b.p, b.len), 0);
    assert_int_equal(file_write_atomic(tmp_path("fake_paths.cu"), cu, strlen(cu)), 0);
    sb_free(&b);
    free(spec);
    free(cu);
    int rc = kvx(tmp_path(log), "run", tmp_path(file), "--db", tmp_path(db), NULL);
    if (rc != 0) {
        dump(tmp_path(log));
        fail_msg("kvx run %s exited %d (expected 0: all ok)", file, rc);
    }
    assert_int_equal(db_int(tmp_path(db), "SELECT count(*) FROM cases WHERE status = 'ok' AND samples >= 3 AND"
                                          " json_extract(profile_json, '$.warmups') >= 2"),
                     8);
}

/* Issue #23 item 2: the worker's own code paths run on the fake driver. */
static void test_worker_paths(void **state)
{
    (void)state;
    run_paths("flush_read", "flush_l2: read", "flush_l2: read");
    run_paths("flush_write", "flush_l2: read", "flush_l2: write");
    /* A reference kernel, run once per reference key (the planted wrong
     * variant of refcount.yaml is a GPU test's: the stand-in counts right). */
    const char *db = tmp_path("ref.db"), *log = tmp_path("ref.log");
    int rc = kvx(log, "run", SPECS "refcount.yaml", "--db", db, "--where", "strategy != \"wrong\"", NULL);
    if (rc != 0 || !log_has(log, "reference kernel: 4 runs for 8 cases")) {
        dump(log);
        fail_msg("kvx run refcount.yaml exited %d (expected 0 and 4 reference runs)", rc);
    }
}

/* Issue #23 item 2: an entry point without a host stand-in fails its launch, never a silent ok. */
static void test_no_standin(void **state)
{
    (void)state;
    char *spec = file_read(SPECS "fake_paths.yaml", NULL);
    assert_non_null(spec);
    char *at = strstr(spec, "kernel: count\n");
    assert_non_null(at);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%.*skernel: count_other\n%s", (int)(at - spec), spec, at + strlen("kernel: count\n"));
    assert_int_equal(file_write_atomic(tmp_path("other.yaml"), b.p, b.len), 0);
    sb_free(&b);
    free(spec);
    char *cu = file_read(SPECS "fake_paths.cu", NULL);
    assert_int_equal(file_write_atomic(tmp_path("fake_paths.cu"), cu, strlen(cu)), 0);
    free(cu);
    const char *db = tmp_path("other.db"), *log = tmp_path("other.log");
    int rc = kvx(log, "run", tmp_path("other.yaml"), "--db", db, NULL);
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run with kernel count_other exited %d (expected 1)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'launch_error' AND detail LIKE"
                                " '%CUDA_ERROR_NOT_SUPPORTED (operation not supported (fake: no host stand-in%'"),
                     8);
}

int main(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    unsetenv("SLURM_ARRAY_TASK_MIN");
    unsetenv("KVX_FAKE_LOG");
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    unsetenv("KVX_FAKE_FAULT_LAUNCH");
    unsetenv("KVX_FAKE_MEM_FREE");
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-fake-driver"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_mid_group),
        cmocka_unit_test(test_alloc_fails),
        cmocka_unit_test(test_worker_paths),
        cmocka_unit_test(test_no_standin),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
