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
 *   worker itself; a kernel with no host stand-in is a launch_error;
 * - the worker's module cache (KVX_FAKE_CALL_LOG's loads, unloads and
 *   launches; the cache cut to CACHE_MODULES by $KVX_TEST_WORKER_MODULES):
 *   past it each load unloads the least recently used module first, a
 *   module evicted is loaded again when a case comes back to it, and every
 *   case is ok;
 * - output resets (KVX_FAKE_CALL_LOG's memsets): each launch of a case is
 *   preceded by the memset of the width its init's byte pattern asks for (8,
 *   16 or 32 bits), and each counter ends at its init plus its count, so no
 *   launch started from anything but the init. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

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

/* A kernel whose verified launch spends the whole budget is launched once:
 * that launch is its one sample (samples 1, launches 1, no warm-up, its
 * median the verified launch's time), and the worker's verify step no longer
 * holds its time (cases under the budget: test_fault_mid_group's 3 samples). */
static void test_over_budget(void **state)
{
    (void)state;
    const char *db = tmp_path("budget.db"), *log = tmp_path("budget.log");
    setenv("KVX_FAKE_NS_PER_BYTE", "10", 1);     /* the 1M cases: tens of ms of wall a launch */
    int rc = kvx(log, "run", SPECS "fake_driver.yaml", "--db", db, "--budget-ms", "20", "--warmup", "2",
                 "--where", "size == 1M", NULL);
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    if (rc != 0) {
        dump(log);
        fail_msg("kvx run --budget-ms 20 exited %d", rc);
    }
    const char *once = "SELECT count(*) FROM cases WHERE status = 'ok' AND samples = 1 AND noise IS NULL"
                       " AND json_extract(profile_json, '$.launches') = 1"
                       " AND json_extract(profile_json, '$.warmups') = 0"
                       " AND abs(median_ms - json_extract(profile_json, '$.launch_ms')) < 1e-4"
                       " AND json_extract(profile_json, '$.verify') < json_extract(profile_json, '$.samples')"
                       " AND t_measure_ms >= 20";
    if (db_int(db, once) != 3) {
        dump(log);
        fail_msg("%d of the 3 over-budget cases launched once, their verified launch the sample", db_int(db, once));
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

/* ---- KVX_FAKE_CALL_LOG ------------------------------------------------------------- */

/* One line of the fake driver's call log (gpu/fake.h). */
typedef struct Call {
    long pid;
    char what[16];          /* load, unload, launch, memset8, memset16, memset32, dtod */
    char arg[64];           /* the module (load, unload, launch), the memset's value, or
                             * the bytes a device-to-device copy moved */
    char rest[160];         /* the entry point (launch), or the memset's elements */
} Call;

/* The calls of the log at path, in the order they were appended. */
static Call *calls_read(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("no KVX_FAKE_CALL_LOG at %s", path);
    int cap = 1024;
    Call *v = mem_alloc(sizeof *v * (size_t)cap);
    char line[320];
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        if (*n == cap)
            v = mem_realloc(v, sizeof *v * (size_t)(cap *= 2));
        Call *c = &v[*n];
        c->rest[0] = 0;
        if (sscanf(line, "%ld %15s %63s %159[^\n]", &c->pid, c->what, c->arg, c->rest) < 3)
            fail_msg("%s: unreadable line '%s'", path, line);
        (*n)++;
    }
    fclose(f);
    return v;
}

/* ---- the module cache ---------------------------------------------------------------- */

/* The worker's module cache, cut from WORKER_MAX_MODULES (256) by
 * $KVX_TEST_WORKER_MODULES, so that the test compiles 16 cubins, not 264;
 * fewer extra than cached, so that the 1K group (C cases) goes out before
 * the 2K group (E + 1). */
#define CACHE_MODULES 12
#define EXTRA_MODULES 4     /* cubins past CACHE_MODULES */

/* The module cache test's spec, at path (next to a copy of fake_modules.cu):
 * a cubin per mod, 0 .. C + E - 1 (C = CACHE_MODULES, E = EXTRA_MODULES),
 * in three workload groups, each in mod order, handed out longest first
 * (the cache warm, so that no compile reorders them):
 *   4K  every mod: C + E cubins in a cache of C (loads evict, whatever came
 *       before, and it comes back to evicted ones);
 *   1K  mod 0 .. C-1: the cache holds them, mod 0 the least recently used;
 *   2K  mod 0 (held: now the most recently used), then C .. C+E-1: each
 *       load evicts the least recently used, 1 .. E, not 0, which a cache
 *       that forgot a hit (first in, first out) would take.
 * mod 0 is the baseline, first in each group. */
static void modules_spec(const char *path)
{
    StrBuf axis, b;
    sb_init(&axis);
    for (int i = 0; i < CACHE_MODULES + EXTRA_MODULES; i++)
        sb_printf(&axis, "%s%d", i ? ", " : "", i);
    sb_init(&b);
    sb_printf(&b,
              "kvx: 1\nname: fake_modules\ndoc: the module cache test's (tests/test_fake_driver.c)\n"
              "template: fake_modules.cu\nkernel: count\n"
              "axes:\n  mod: [%s]\n  n: [1K, 2K, 4K]\n"
              "where:\n  - 'n != 1K || mod < %d'\n  - 'n != 2K || mod == 0 || mod >= %d'\n"
              "buffers:\n  in:  { type: i32, count: n, init: { uniform: [0, 999] } }\n"
              "  out: { type: u32, count: 1, init: 0 }\n"
              "launch: { grid: 'ceil_div(n, 256)', block: 256, args: [in, n, 300, out] }\n"
              "check:\n  out: count_below(in, 300)\n"
              "baseline: { mod: 0 }\n"
              "measure: { warmup: 0, min_samples: 1, max_samples: 1, noise: 0.05, budget_ms: 100,\n"
              "           flush_l2: false, timeout_s: 30 }\n",
              axis.p, CACHE_MODULES, CACHE_MODULES);
    assert_int_equal(file_write_atomic(path, b.p, b.len), 0);
    sb_free(&b);
    sb_free(&axis);
}

/* A module as the worker's calls show it, replayed against its cache's rule. */
typedef struct SimMod {
    char mod[17];
    int held;               /* loaded now */
    long used;              /* the replay's clock at its last load or launch */
    int own;                /* launched a kvx_* entry point: devio's or the flush's
                             * module, held apart from the cache */
    int evicted;            /* unloaded once for another's load */
} SimMod;

typedef struct Sim {
    SimMod *m;
    int n, cap;
    long clock, pid;
    int evictions, reloads;
} Sim;

static SimMod *sim_mod(Sim *s, const char *mod)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->m[i].mod, mod))
            return &s->m[i];
    if (s->n == s->cap)
        s->m = mem_realloc(s->m, sizeof *s->m * (size_t)(s->cap = s->cap ? 2 * s->cap : 512));
    SimMod *m = &s->m[s->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->mod, sizeof m->mod, "%s", mod);
    return m;
}

/* The cached modules held now (own ones apart); *lru the least recently used. */
static int sim_cached(const Sim *s, const SimMod **lru)
{
    int n = 0;
    *lru = NULL;
    for (int i = 0; i < s->n; i++)
        if (s->m[i].held && !s->m[i].own) {
            n++;
            if (!*lru || s->m[i].used < (*lru)->used)
                *lru = &s->m[i];
        }
    return n;
}

/* The unload of call i, followed by a load of the same process: an
 * eviction, which must take the least recently used module of a full cache. */
static void sim_evict(Sim *s, const Call *c, SimMod *m)
{
    const SimMod *lru;
    int held = sim_cached(s, &lru);
    if (held != CACHE_MODULES)
        fail_msg("pid %ld evicted %s with %d modules held (expected only when full, %d)", c->pid, c->arg, held,
                 CACHE_MODULES);
    if (lru != m)
        fail_msg("pid %ld evicted %s, last used at %ld, before %s, last used at %ld (not the least recently "
                 "used)", c->pid, m->mod, m->used, lru->mod, lru->used);
    m->evicted = 1;
    s->evictions++;
}

/* Replay call i of v[0..n) on s. */
static void sim_call(Sim *s, const Call *v, int n, int i)
{
    const Call *c = &v[i];
    if (c->pid != s->pid)
        for (int k = 0; k < s->n; k++)
            s->m[k].held = 0;   /* a new worker process holds nothing */
    s->pid = c->pid;
    if (strcmp(c->what, "load") && strcmp(c->what, "unload") && strcmp(c->what, "launch"))
        return;
    SimMod *m = sim_mod(s, c->arg);
    if (!strcmp(c->what, "load")) {
        if (m->held)
            fail_msg("pid %ld loaded %s while it held it (call %d)", c->pid, c->arg, i + 1);
        s->reloads += m->evicted;
        m->held = 1;
        m->used = ++s->clock;
    } else if (!strcmp(c->what, "launch")) {
        /* A module is launched right after its load: whether it is kvx's
         * own is known then, and the cache bounded. */
        const SimMod *lru;
        if (!m->held)
            fail_msg("pid %ld launched %s of module %s, not loaded (call %d)", c->pid, c->rest, c->arg, i + 1);
        m->used = ++s->clock;
        m->own |= !strncmp(c->rest, "kvx_", 4);
        if (sim_cached(s, &lru) > CACHE_MODULES)
            fail_msg("pid %ld holds %d modules at call %d (expected at most %d)", c->pid, sim_cached(s, &lru),
                     i + 1, CACHE_MODULES);
    } else {
        if (!m->held)
            fail_msg("pid %ld unloaded %s, not loaded (call %d)", c->pid, c->arg, i + 1);
        if (i + 1 < n && v[i + 1].pid == c->pid && !strcmp(v[i + 1].what, "load"))
            sim_evict(s, c, m);
        m->held = 0;
    }
}

/* One worker loads more cubins than it keeps, and comes back to evicted
 * ones (modules_spec): each load past CACHE_MODULES evicts the least
 * recently used module, and every case is ok. */
static void test_module_eviction(void **state)
{
    (void)state;
    const char *spec = tmp_path("modules.yaml"), *db = tmp_path("modules.db"), *log = tmp_path("modules.log");
    const char *clog = tmp_path("modules-calls.log");
    char *cu = file_read(SPECS "fake_modules.cu", NULL);
    assert_non_null(cu);
    assert_int_equal(file_write_atomic(tmp_path("fake_modules.cu"), cu, strlen(cu)), 0);
    free(cu);
    modules_spec(spec);
    if (kvx(log, "compile", spec, "--arch", "sm_90", "--out", tmp_path("modules-out"), NULL) != 0) {
        dump(log);
        fail_msg("kvx compile of the module cache test's spec failed");
    }
    char cap[16];
    snprintf(cap, sizeof cap, "%d", CACHE_MODULES);
    setenv("KVX_TEST_WORKER_MODULES", cap, 1);
    setenv("KVX_FAKE_CALL_LOG", clog, 1);
    int rc = kvx(log, "run", spec, "--db", db, NULL);
    unsetenv("KVX_FAKE_CALL_LOG");
    unsetenv("KVX_TEST_WORKER_MODULES");
    const int cases = 2 * CACHE_MODULES + 2 * EXTRA_MODULES + 1;
    if (rc != 0 || db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'") != cases) {
        dump(log);
        fail_msg("kvx run of %d cubins exited %d (expected 0 and %d cases ok)",
                 CACHE_MODULES + EXTRA_MODULES, rc, cases);
    }
    /* The order modules_spec plans (the results are stored as they come):
     * else the hit that tells the least recently used from the first loaded
     * would not come where it should. */
    if (db_int(db, "SELECT max(id) FROM cases WHERE json_extract(axes, '$.n') = 1024") >
        db_int(db, "SELECT min(id) FROM cases WHERE json_extract(axes, '$.n') = 2048"))
        fail_msg("the 2K group ran before the 1K group ended (expected longest first, one after the other)");
    int n = 0, kernels = 0;
    Call *v = calls_read(clog, &n);
    Sim s = {0};
    for (int i = 0; i < n; i++)
        sim_call(&s, v, n, i);
    for (int i = 0; i < s.n; i++)
        kernels += !s.m[i].own;
    if (kernels != CACHE_MODULES + EXTRA_MODULES || s.evictions < EXTRA_MODULES || s.reloads < 1)
        fail_msg("%d kernel modules, %d evictions, %d loaded again (expected %d, at least %d, at least 1)",
                 kernels, s.evictions, s.reloads, CACHE_MODULES + EXTRA_MODULES, EXTRA_MODULES);
    free(s.m);
    free(v);
}

/* ---- output resets ------------------------------------------------------------------ */

/* fake_resets.yaml's inits and the memset each asks for, by its byte pattern. */
static const struct {
    const char *init;       /* the axis value */
    const char *call, *value, *elements;
} resets[] = {
    {"u32_d8", "memset8", "5a", "4"},
    {"u16_d16", "memset16", "1234", "1"},
    {"u32_d16", "memset16", "beef", "2"},
    {"u64_d16", "memset16", "4321", "4"},
    {"u32_d32", "memset32", "12345678", "1"},
    {"u64_d32", "memset32", "a0b0c0d", "2"},
};

/* The launches of a spec's own kernels (not kvx_*) with no memset since the
 * one before: started from what the last one left, or reset by something
 * else (a copy, where every init of fake_resets.yaml takes a memset). */
static int launches_unreset(const Call *v, int n)
{
    int reset = 0, bad = 0;
    for (int i = 0; i < n; i++)
        if (!strncmp(v[i].what, "memset", 6)) {
            reset = 1;
        } else if (!strcmp(v[i].what, "launch") && strncmp(v[i].rest, "kvx_", 4)) {
            bad += !reset;
            reset = 0;
        }
    return bad;
}

/* Outputs reset before every launch by the narrowest memset that writes
 * their init: every case ok (each counter ended at its init plus its count:
 * the samples' resets), a memset before each launch of the kernel, and as
 * many memsets of each init's width and pattern as its cases launched. */
static void test_reset_widths(void **state)
{
    (void)state;
    const char *db = tmp_path("resets.db"), *log = tmp_path("resets.log");
    const char *clog = tmp_path("resets-calls.log");
    setenv("KVX_FAKE_CALL_LOG", clog, 1);
    int rc = kvx(log, "run", SPECS "fake_resets.yaml", "--db", db, NULL);
    unsetenv("KVX_FAKE_CALL_LOG");
    if (rc != 0 || db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'") != 12) {
        dump(log);
        fail_msg("kvx run fake_resets.yaml exited %d (expected 0 and 12 cases ok: a counter that did not "
                 "start from its init ends elsewhere)", rc);
    }
    int n = 0;
    Call *v = calls_read(clog, &n);
    int unreset = launches_unreset(v, n);
    if (unreset)
        fail_msg("%d launches of the counting kernels with no memset since the one before (expected a reset "
                 "by memset before each)", unreset);
    for (size_t r = 0; r < sizeof resets / sizeof resets[0]; r++) {
        int memsets = 0;
        for (int i = 0; i < n; i++)
            memsets += !strcmp(v[i].what, resets[r].call) && !strcmp(v[i].arg, resets[r].value) &&
                       !strcmp(v[i].rest, resets[r].elements);
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT sum(json_extract(profile_json, '$.launches')) FROM cases "
                                  "WHERE json_extract(axes, '$.init') = '%s'", resets[r].init);
        int launches = db_int(db, sql);
        /* two sizes, each 1 verified launch + 2 warm-ups + 3 samples */
        if (launches != 12 || memsets != launches)
            fail_msg("init %s: %d calls '%s %s %s' for %d launches (expected one a launch, 12)", resets[r].init,
                     memsets, resets[r].call, resets[r].value, resets[r].elements, launches);
    }
    free(v);
}

/* ---- the baseline's outputs --------------------------------------------------------- */

/* Two variants of fake_modules.cu at two sizes, mod 0 the baseline, out
 * checked against count_below, and against the baseline's output too where
 * differential. */
static void baseline_spec(const char *path, int differential)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b,
              "kvx: 1\nname: fake_baseline\ndoc: the baseline test's (tests/test_fake_driver.c)\n"
              "template: fake_modules.cu\nkernel: count\n"
              "axes:\n  mod: [0, 1]\n  n: [1K, 2K]\n"
              "buffers:\n  in:  { type: i32, count: n, init: { uniform: [0, 999] } }\n"
              "  out: { type: u32, count: 1, init: 0 }\n"
              "launch: { grid: 'ceil_div(n, 256)', block: 256, args: [in, n, 300, out] }\n"
              "check:\n  out: count_below(in, 300)\ndifferential: %s\n"
              "baseline: { mod: 0 }\n"
              "measure: { warmup: 0, min_samples: 1, max_samples: 1, noise: 0.05, budget_ms: 100,\n"
              "           flush_l2: false, timeout_s: 30 }\n",
              differential ? "true" : "false");
    assert_int_equal(file_write_atomic(path, b.p, b.len), 0);
    sb_free(&b);
}

/* The device-to-device copies of a run of baseline_spec. */
static int baseline_copies(int differential, const char *name)
{
    char spec[64], db[64], log[64], clog[64];
    snprintf(spec, sizeof spec, "%s.yaml", name);
    snprintf(db, sizeof db, "%s.db", name);
    snprintf(log, sizeof log, "%s.log", name);
    snprintf(clog, sizeof clog, "%s-calls.log", name);
    baseline_spec(tmp_path(spec), differential);
    setenv("KVX_FAKE_CALL_LOG", tmp_path(clog), 1);
    int rc = kvx(tmp_path(log), "run", tmp_path(spec), "--db", tmp_path(db), NULL);
    unsetenv("KVX_FAKE_CALL_LOG");
    if (rc != 0 || db_int(tmp_path(db), "SELECT count(*) FROM cases WHERE status = 'ok'") != 4) {
        dump(tmp_path(log));
        fail_msg("kvx run of the baseline test's spec (differential: %d) exited %d (expected 0 and 4 cases ok)",
                 differential, rc);
    }
    int n = 0, copies = 0;
    Call *v = calls_read(tmp_path(clog), &n);
    for (int i = 0; i < n; i++)
        copies += !strcmp(v[i].what, "dtod");
    free(v);
    return copies;
}

/* The baseline's outputs are copied aside at each of the two workload points
 * in differential mode, where the other variant compares with them, and
 * never outside it (a copy and an allocation of a 256 MB output cost 0.4 ms
 * a case on an H200). */
static void test_baseline_kept_when_used(void **state)
{
    (void)state;
    char *cu = file_read(SPECS "fake_modules.cu", NULL);
    assert_non_null(cu);
    assert_int_equal(file_write_atomic(tmp_path("fake_modules.cu"), cu, strlen(cu)), 0);
    free(cu);
    int used = baseline_copies(1, "baseline-used");
    int unused = baseline_copies(0, "baseline-unused");
    if (used != 2 || unused != 0)
        fail_msg("%d device-to-device copies in differential mode, %d outside it (expected 2 and 0)", used,
                 unused);
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-fake-driver"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_mid_group),
        cmocka_unit_test(test_alloc_fails),
        cmocka_unit_test(test_over_budget),
        cmocka_unit_test(test_worker_paths),
        cmocka_unit_test(test_no_standin),
        cmocka_unit_test(test_module_eviction),
        cmocka_unit_test(test_reset_widths),
        cmocka_unit_test(test_baseline_kept_when_used),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
