/* test_jitproc: NVRTC in compile processes (compile/jitproc.h).  Needs NVRTC
 * and the toolkit headers, not a GPU.
 *
 * Checked:
 * - jit_compile_all on a pool of `kvx __compile` children (the kvx binary,
 *   three of them for six sources): a child killed inside a compile
 *   ($KVX_TEST_COMPILE_CRASH) makes that one source a failed compile whose
 *   log names the signal and the source, not cached; the other five compile,
 *   with their PTX, CUBIN, ptxas report, cache entry and SASS facts; the same
 *   jobs again without the crash: the five from the cache, the sixth compiled;
 * - a compile process precompiles included headers (-pch) and reuses them:
 *   the same bytes as a compile without, the second source faster, no
 *   folder left behind;
 * - `kvx compile` stores the SASS facts with each entry, so that the
 *   `kvx run` of the same spec after it (fake device) runs no disassembler
 *   at all (a fake nvdisasm that logs its calls), and its variants carry the
 *   facts the compile made;
 * - the crash in `kvx run`: that source's cases are compile errors that name
 *   the dead compile process, the other source's cases are measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/jit.h"
#include "compile/jitproc.h"
#include "core/util.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/fake.yaml"

/* The shard helpers of kvx_child.h are the run tests', not used here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define NJOBS 6
#define CRASHED 3

/* Kernel i of the pool test: distinct sources, so distinct cache entries. */
static char *kernel_source(int i)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "extern \"C\" __global__ void k%d(unsigned *out, int n)\n"
                  "{\n    if (threadIdx.x < n)\n        atomicAdd(out, %du);\n}\n", i, i + 1);
    return sb_take(&b);
}

static void compile_all(JitJob *jobs, char **src, char names[][16], const char *cache)
{
    for (int i = 0; i < NJOBS; i++)
        jobs[i] = (JitJob){.name = names[i], .source = src[i], .arch = "sm_90"};
    JitOptions o = {.cache_dir = cache, .threads = 3, .use_cache = 1};
    KvxError e = {0};
    int rc = jit_compile_all(jobs, NJOBS, &o, NULL, NULL, &e);
    if (rc != 0)
        kvx_error_print(&e, stderr);
    kvx_error_clear(&e);
    assert_int_equal(rc, 0);
}

static void test_crash_in_a_child(void **state)
{
    (void)state;
    jitproc_enable(KVX_BINARY);
    assert_true(jitproc_enabled());
    char names[NJOBS][16], *src[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        snprintf(names[i], sizeof names[i], "k%d.cu", i);
        src[i] = kernel_source(i);
    }
    const char *cache = tmp_path("pool-cache");
    JitJob jobs[NJOBS];
    setenv("KVX_TEST_COMPILE_CRASH", "k3.cu", 1);
    compile_all(jobs, src, names, cache);
    unsetenv("KVX_TEST_COMPILE_CRASH");
    for (int i = 0; i < NJOBS; i++) {
        if (i == CRASHED) {
            assert_int_equal(jobs[i].ok, 0);
            assert_int_equal(jobs[i].crashed, 1);
            assert_non_null(strstr(jobs[i].log, "killed by signal 11"));
            assert_non_null(strstr(jobs[i].log, "while compiling k3.cu"));
            assert_null(jobs[i].dir);
            continue;
        }
        assert_int_equal(jobs[i].ok, 1);
        assert_int_equal(jobs[i].cached, 0);
        assert_non_null(jobs[i].cubin);
        assert_non_null(strstr(jobs[i].ptx, ".entry k"));
        assert_true(jobs[i].regs > 0);
        assert_non_null(jobs[i].dir);
        assert_non_null(jobs[i].inspect_json);
        assert_non_null(strstr(jobs[i].inspect_json, "\"ptx\":{\"atom\":1"));
    }
    for (int i = 0; i < NJOBS; i++)
        jit_job_release(&jobs[i]);
    compile_all(jobs, src, names, cache);
    for (int i = 0; i < NJOBS; i++) {
        assert_int_equal(jobs[i].ok, 1);
        assert_int_equal(jobs[i].crashed, 0);
        assert_int_equal(jobs[i].cached, i != CRASHED);
        jit_job_release(&jobs[i]);
        free(src[i]);
    }
    jitproc_enable(NULL);
}

/* Two sources that include cooperative_groups.h (2.3 s of NVRTC's front-end
 * each here), compiled by one compile process, which precompiles the
 * headers for the first and reuses them for the second, and again on a
 * thread without precompiled headers: the same PTX and CUBIN bytes, no word
 * of it in the logs, the second compile in the process under 60% of the
 * first's time, and no folder of precompiled headers left. */
static void test_headers_precompiled(void **state)
{
    (void)state;
#define CG_BODY                                                                                              \
    "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"                                   \
    "extern \"C\" __global__ void k(unsigned *out)\n{\n"                                                       \
    "    if (cg::coalesced_threads().thread_rank() == 0)\n        atomicAdd(out, %du);\n}\n"
    char src[2][512], name[2][16];
    JitJob proc[2], thread[2];
    for (int i = 0; i < 2; i++) {
        snprintf(src[i], sizeof src[i], CG_BODY, i + 1);
        snprintf(name[i], sizeof name[i], "cg%d.cu", i);
        proc[i] = (JitJob){.name = name[i], .source = src[i], .arch = "sm_90", .use_cccl = 1};
        thread[i] = proc[i];
    }
    char *tmpdir = getenv("TMPDIR") ? mem_strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);   /* where the compile process puts them */
    JitScratch *scratch = jit_scratch_new();
    JitOptions o = {.threads = 1, .use_cache = 0, .scratch = scratch};
    KvxError e = {0};
    jitproc_enable(KVX_BINARY);
    assert_int_equal(jit_compile_all(proc, 2, &o, NULL, NULL, &e), 0);
    jitproc_enable(NULL);
    assert_int_equal(jit_compile_all(thread, 2, &o, NULL, NULL, &e), 0);
    for (int i = 0; i < 2; i++) {
        assert_true(proc[i].ok && thread[i].ok);
        assert_int_equal(proc[i].ptx_len, thread[i].ptx_len);
        assert_int_equal(proc[i].cubin_len, thread[i].cubin_len);
        assert_memory_equal(proc[i].ptx, thread[i].ptx, proc[i].ptx_len);
        assert_memory_equal(proc[i].cubin, thread[i].cubin, proc[i].cubin_len);
        assert_null(strstr(proc[i].log, "precompiled"));
    }
    if (!(proc[1].compile_ms < 0.6 * proc[0].compile_ms))
        fail_msg("the second compile took %.0f ms after %.0f ms: the headers were not reused", proc[1].compile_ms,
                 proc[0].compile_ms);
    StrBuf cmd;
    sb_init(&cmd);
    sb_printf(&cmd, "ls -d '%s'/kvx-pch-* 2>/dev/null | grep -q .", tmp);
    assert_int_not_equal(system(sb_str(&cmd)), 0);
    sb_free(&cmd);
    for (int i = 0; i < 2; i++)
        jit_job_release(&proc[i]), jit_job_release(&thread[i]);
    jit_scratch_free(scratch);
    if (tmpdir)
        setenv("TMPDIR", tmpdir, 1);
    else
        unsetenv("TMPDIR");
    free(tmpdir);
}

/* A disassembler that logs each listing asked of it and prints a captured
 * sm_90 listing. */
static void fake_disassembler(const char *path, const char *log)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n"
               "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; fi\n"
               "echo \"$*\" >> '%s'\n"
               "exec cat '%s/tests/data/inspect/sass/counter_u32.sm_90.sass'\n",
            log, KVX_SOURCE_DIR);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

static int lines(const char *path)
{
    char *s = file_read(path, NULL);
    int n = 0;
    for (const char *p = s; p && *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

static void test_run_after_compile_disassembles_nothing(void **state)
{
    (void)state;
    const char *calls = tmp_path("disasm-calls.txt"), *log = tmp_path("compile.log");
    fake_disassembler(tmp_path("nvdisasm"), calls);
    setenv("KVX_NVDISASM", tmp_path("nvdisasm"), 1);
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    int rc = kvx(log, "compile", SPEC, "--arch", "sm_90", "--out", tmp_path("out"), NULL);
    if (rc != 0)
        dump(log);
    assert_int_equal(rc, 0);
    assert_int_equal(lines(calls), 6);      /* one listing per source */
    rc = kvx(tmp_path("run.log"), "run", SPEC, "--db", tmp_path("x.db"), "--where", "strategy == 'base'", NULL);
    if (rc != 0)
        dump(tmp_path("run.log"));
    assert_int_equal(rc, 0);
    assert_true(log_has(tmp_path("run.log"), "from cache"));
    assert_int_equal(lines(calls), 6);      /* the run asked nothing more */
    assert_int_equal(db_int(tmp_path("x.db"), "SELECT count(*) FROM variants WHERE inspect_json LIKE "
                                              "'%\"sass_available\":true%REDG.ADD%'"), 1);
    unsetenv("KVX_NVDISASM");
}

/* The same crash in a run: that source's cases are compile errors that say
 * so, the other source's cases are measured. */
static void test_crash_in_a_run(void **state)
{
    (void)state;
    const char *db = tmp_path("crash.db"), *log = tmp_path("crash.log");
    setenv("KVX_TEST_COMPILE_CRASH", "strategy-alt", 1);
    int rc = kvx(log, "run", SPEC, "--db", db, "--no-cache", "-j", "2", "--where",
                 "strategy == 'base' || strategy == 'alt'", NULL);
    unsetenv("KVX_TEST_COMPILE_CRASH");
    if (rc != 1)
        dump(log);
    assert_int_equal(rc, 1);    /* some cases failed */
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'compile_error' AND detail = "
                                "'the compile process died compiling fake__strategy-alt.cu (the log is "
                                "stored with the variant)'"), 6);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), 6);
    assert_int_equal(db_int(db, "SELECT count(*) FROM variants WHERE compile_ok = 0 AND compile_log LIKE "
                                "'kvx: the compile process (pid %) was killed by signal 11%'"), 1);
}

static void rm_tree(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", dir);
}

int main(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    unsetenv("KVX_TEST_COMPILE_CRASH");
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-jitproc"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash_in_a_child),
        cmocka_unit_test(test_headers_precompiled),
        cmocka_unit_test(test_run_after_compile_disassembles_nothing),
        cmocka_unit_test(test_crash_in_a_run),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0)
        rm_tree(tmp);
    else
        printf("  kept %s for a look\n", tmp);
    return failed;
}
