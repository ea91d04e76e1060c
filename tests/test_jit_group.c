/* test_jit_group: several variants in one NVRTC program (compile/jit_group.c).
 * Needs NVRTC and the toolkit headers, not a GPU.
 *
 * Checked:
 * - which sources a program can hold, and the names of their entry points
 *   (extern "C" kernels, #define kept for #undef, no __device__ variable, no
 *   #include after another directive, no #line);
 * - which member a symbol belongs to (K__kvxI, a namespace kvx_gI mangled);
 * - a program of four sources with the same kernel name, the same typedef,
 *   the same macro and the same helper: each member's PTX, log, ptxas
 *   figures and SASS facts are those of its compile alone, its PTX names its
 *   kernel as the source does, its CUBIN holds K__kvxI and is one file on
 *   disk for all four entries;
 * - a program with a member that does not compile (an error in its source),
 *   one ptxas refuses (too much static shared memory) and one whose header
 *   cannot be found (an error no member's lines hold): those three fail as
 *   they fail alone, with the logs of their compiles alone, and every other
 *   member compiles;
 * - `kvx compile --group 3` of friction.yaml says what `kvx compile` says of
 *   each variant alone (the error, the warning, the CCCL hint);
 * - `kvx run --group 6` of group.yaml on the fake device: a program with two
 *   variants that cannot compile stores those as compile_error rows with
 *   their own logs and measures the four others ok;
 * - a key published first by another process's program: the loser takes
 *   that entry's symbol and CUBIN. */
#define _GNU_SOURCE     /* memmem, nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/inspect.h"
#include "compile/jit.h"
#include "compile/jit_internal.h"
#include "core/util.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define FRICTION KVX_SOURCE_DIR "/tests/data/specs/friction.yaml"
#define GROUP_SPEC KVX_SOURCE_DIR "/tests/data/specs/group.yaml"

/* ---- which sources ---------------------------------------------------------------- */

static int entries(const char *src, char names[][JIT_NAME_MAX], StrBuf *macros, const char **why)
{
    return jit_group_entries(src, names, JIT_MAX_KERNELS, macros, why);
}

static void test_entries(void **state)
{
    (void)state;
    char names[JIT_MAX_KERNELS][JIT_NAME_MAX];
    const char *why;
    StrBuf m;
    sb_init(&m);
    assert_int_equal(entries("#include <cuda_fp16.h>\n#define TILE 32\n#define AT(r) r\n"
                             "extern \"C\" __global__ void __launch_bounds__(256) k(int *o) { o[0] = TILE; }\n"
                             "extern \"C\" { __global__ void k2(int *o) {} }\n"
                             "__device__ __forceinline__ int helper(int x) { return x; }\n",
                             names, &m, &why), 2);
    assert_string_equal(names[0], "k");
    assert_string_equal(names[1], "k2");
    assert_string_equal(sb_str(&m), "TILE\nAT\n");
    static const struct { const char *src, *why; } NO[] = {
        {"__device__ unsigned int marker;\nextern \"C\" __global__ void k(int *o) {}\n", "__device__"},
        {"__constant__ float c[4];\nextern \"C\" __global__ void k(int *o) {}\n", "__constant__"},
        {"__global__ void k(int *o) {}\n", "extern \"C\""},
        {"#define X 1\n#include <cuda_fp16.h>\nextern \"C\" __global__ void k(int *o) {}\n", "#include after"},
        {"#line 10 \"a.cu\"\nextern \"C\" __global__ void k(int *o) {}\n", "#line"},
        {"extern \"C\" __device__ int f(int x) { return x; }\n", "no entry point"},
        {"extern \"C\" __global__ void k__kvx1(int *o) {}\n", "__kvx"},
    };
    for (size_t i = 0; i < sizeof NO / sizeof *NO; i++) {
        sb_reset(&m);
        assert_int_equal(entries(NO[i].src, names, &m, &why), -1);
        if (!strstr(why, NO[i].why))
            fail_msg("source %zu: '%s' does not say '%s'", i, why, NO[i].why);
    }
    sb_free(&m);
}

static void test_owner(void **state)
{
    (void)state;
    static const struct { const char *name; int member; } CASES[] = {
        {"k__kvx3", 3}, {"k__kvx12", 12}, {"_ZN6kvx_g34stepEv", 3}, {"_ZN7kvx_g124stepEv", 12},
        {"_ZZN6kvx_g05sgemmE2As", 0}, {"sgemm", -1}, {"k__kvx", -1}, {"_ZN6kvx_gx4stepEv", -1},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++)
        assert_int_equal(jit_group_owner(CASES[i].name, strlen(CASES[i].name)), CASES[i].member);
}

/* ---- programs ------------------------------------------------------------------------ */

static char cache[] = "/tmp/kvx-test-group-XXXXXX";

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Source i of the first program: the same names in each, other code. */
static char *member_source(int i)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "#include <cuda_fp16.h>\ntypedef unsigned int Count;\n#define STEP %d\n"
                  "__device__ __forceinline__ Count step(Count x) { return x * STEP + %d; }\n"
                  "extern \"C\" __global__ void k(Count *out, int n)\n{\n"
                  "    __shared__ Count s[%d];\n    s[threadIdx.x %% %d] = step(threadIdx.x);\n"
                  "    __syncthreads();\n    if (threadIdx.x < n)\n        atomicAdd(out, s[%d]);\n}\n",
                  i + 1, i, 32 << i, 32 << i, i);
    return sb_take(&b);
}

static JitJob job_of(const char *name, const char *src)
{
    return (JitJob){.name = name, .source = src, .arch = "sm_90"};
}

/* Compile n jobs with group size g into root; every compile must run. */
static void compile_n(JitJob *jobs, int n, int g, const char *root)
{
    JitOptions o = {.cache_dir = root, .use_cache = 1, .threads = 1, .group = g};
    KvxError e = {0};
    if (jit_compile_all(jobs, n, &o, NULL, NULL, &e) != 0) {
        kvx_error_print(&e, stderr);
        fail_msg("jit_compile_all failed");
    }
}

/* A member's outputs are its compile alone's. */
static void same_as_alone(const JitJob *g, const JitJob *a)
{
    assert_int_equal(g->ok, a->ok);
    assert_int_equal(g->regs, a->regs);
    assert_int_equal(g->smem_static, a->smem_static);
    assert_int_equal(g->spill_stores, a->spill_stores);
    assert_int_equal(g->stack, a->stack);
    PtxParam pg[8], pa[8];
    assert_int_equal(jit_ptx_params(g->ptx, "k", pg, 8), jit_ptx_params(a->ptx, "k", pa, 8));
    StrBuf fg, fa;
    sb_init(&fg), sb_init(&fa);
    KvxError e = {0};
    assert_int_equal(inspect_job_facts(g, &fg, &e), 0);
    assert_int_equal(inspect_job_facts(a, &fa, &e), 0);
    assert_string_equal(sb_str(&fg), sb_str(&fa));
    assert_string_equal(g->inspect_json, sb_str(&fa));
    sb_free(&fg), sb_free(&fa);
}

static void test_program(void **state)
{
    (void)state;
    char *src[4];
    char names[4][16];
    JitJob grouped[4], alone[4];
    for (int i = 0; i < 4; i++) {
        src[i] = member_source(i);
        snprintf(names[i], sizeof names[i], "m%d.cu", i);
        grouped[i] = job_of(names[i], src[i]);
        alone[i] = job_of(names[i], src[i]);
    }
    char root_a[] = "/tmp/kvx-test-group-alone-XXXXXX";
    assert_non_null(mkdtemp(root_a));
    compile_n(grouped, 4, 4, cache);
    compile_n(alone, 4, 1, root_a);
    struct stat first;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(grouped[i].group, 4);
        char sym[16];
        snprintf(sym, sizeof sym, "__kvx%d", i);
        assert_string_equal(grouped[i].symbol, sym);
        assert_string_equal(alone[i].symbol, "");
        assert_non_null(strstr(grouped[i].ptx, ".entry k("));
        assert_null(strstr(grouped[i].ptx, "__kvx"));
        assert_non_null(strstr(grouped[i].log, "Compiling entry function 'k'"));
        char want[32];
        snprintf(want, sizeof want, "%ck__kvx%d%c", 0, i, 0);
        assert_non_null(memmem(grouped[i].cubin, grouped[i].cubin_len, want, strlen(want) + 1));
        same_as_alone(&grouped[i], &alone[i]);
        char path[1200];
        snprintf(path, sizeof path, "%s/kernel.cubin", grouped[i].dir);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (i == 0)
            first = st;
        assert_true(st.st_ino == first.st_ino);    /* one file for the program */
    }
    /* Again: every member from the cache, as it was. */
    for (int i = 0; i < 4; i++) {
        JitJob again = job_of(names[i], src[i]);
        compile_n(&again, 1, 4, cache);
        assert_int_equal(again.cached, 1);
        assert_string_equal(again.symbol, grouped[i].symbol);
        assert_int_equal(again.group, 4);
        assert_string_equal(again.ptx, grouped[i].ptx);
        jit_job_release(&again);
    }
    for (int i = 0; i < 4; i++) {
        jit_job_release(&grouped[i]);
        jit_job_release(&alone[i]);
        free(src[i]);
    }
    nftw(root_a, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A log less ptxas's "Compile time = ..." lines (they differ run to run). */
static char *timeless(const char *log)
{
    StrBuf b;
    sb_init(&b);
    for (const char *p = log ? log : ""; *p;) {
        size_t n = strcspn(p, "\n");
        if (!memmem(p, n, "Compile time =", 14)) {
            sb_put(&b, p, n);
            sb_putc(&b, '\n');
        }
        p += n + (p[n] == '\n');
    }
    char *s = sb_take(&b);
    return s ? s : strdup("");
}

/* Six sources, three that fail three ways: the failures are their compiles
 * alone, the others compile in a program. */
static void test_failures_apart(void **state)
{
    (void)state;
    static const char *const SRC[6] = {
        "extern \"C\" __global__ void k(int *o) { o[threadIdx.x] = 1; }\n",
        "extern \"C\" __global__ void k(int *o) { undeclared_name = 1; }\n",
        "extern \"C\" __global__ void k(int *o) { o[threadIdx.x] = 2; }\n",
        "extern \"C\" __global__ void k(int *o) { __shared__ int big[20000]; big[threadIdx.x] = 1;"
        " __syncthreads(); o[0] = big[o[1]]; }\n",
        "#include <no_such_header_kvx.h>\nextern \"C\" __global__ void k(int *o) { o[0] = 4; }\n",
        "extern \"C\" __global__ void k(int *o) { o[threadIdx.x] = 5; }\n",
    };
    char root_a[] = "/tmp/kvx-test-group-fail-XXXXXX";
    assert_non_null(mkdtemp(root_a));
    JitJob g[6], a[6];
    char names[6][16];
    for (int i = 0; i < 6; i++) {
        snprintf(names[i], sizeof names[i], "f%d.cu", i);
        g[i] = job_of(names[i], SRC[i]);
        a[i] = job_of(names[i], SRC[i]);
    }
    compile_n(g, 6, 6, cache);
    compile_n(a, 6, 1, root_a);
    for (int i = 0; i < 6; i++) {
        int bad = i == 1 || i == 3 || i == 4;
        assert_int_equal(g[i].ok, !bad);
        if (bad) {
            assert_int_equal(g[i].group, 1);
            char *lg = timeless(g[i].log), *la = timeless(a[i].log);
            assert_string_equal(lg, la);
            free(lg), free(la);
        } else {
            if (g[i].group < 2)
                fail_msg("f%d.cu compiled alone, not in a program (log: %s)", i, g[i].log);
            same_as_alone(&g[i], &a[i]);
        }
        jit_job_release(&g[i]);
        jit_job_release(&a[i]);
    }
    nftw(root_a, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* kvx compile --group 3 of the friction spec: each variant told as alone. */
static void test_compile_friction_grouped(void **state)
{
    (void)state;
    const char *log = tmp_path("group.log");
    assert_int_equal(kvx(log, "compile", FRICTION, "--arch", "sm_90", "--group", "3", "--no-cache", "--out",
                         tmp_path("out"), NULL), 1);
    static const char *const SAID[] = {
        "friction__variant-error.cu(", "error: identifier \"undeclared_name\" is undefined",
        "kvx: friction__variant-warns.cu [sm_90] compiled with warnings:",
        "variable \"unused\" was declared but never referenced", "cannot open source file \"cuda/std/",
        "kvx: hint: a CCCL header", "friction__variant-warns.cu", "2 failed",
    };
    for (size_t i = 0; i < sizeof SAID / sizeof *SAID; i++)
        if (!log_has(log, SAID[i])) {
            dump(log);
            fail_msg("no '%s' in the output", SAID[i]);
        }
}

/* kvx run --group 6 of group.yaml on the fake device: the two variants that
 * cannot compile are their own compile_error rows with their own logs, the
 * four others are measured ok from one program. */
static void test_run_grouped(void **state)
{
    (void)state;
    const char *db = tmp_path("group.db"), *log = tmp_path("run.log");
    setenv("KVX_FAKE_GPUS", "1", 1);
    int rc = kvx(log, "run", GROUP_SPEC, "--group", "6", "--db", db, "--cache", tmp_path("run-cache"), NULL);
    unsetenv("KVX_FAKE_GPUS");
    assert_int_equal(rc, 1);    /* some variants failed */
    assert_int_equal(db_int(db, "select count(*) from cases where status = 'ok'"), 8);
    assert_int_equal(db_int(db, "select count(*) from cases c join variants v on v.id = c.variant_id"
                                " where c.status = 'compile_error' and v.label like 'strategy=error%'"
                                " and v.compile_log like '%group__strategy-error.cu(%undeclared_name%'"), 2);
    assert_int_equal(db_int(db, "select count(*) from cases c join variants v on v.id = c.variant_id"
                                " where c.status = 'compile_error' and v.label like 'strategy=too_much_smem%'"
                                " and v.compile_log like '%80000 bytes smem%'"), 2);
    /* no member's log holds another's lines */
    assert_int_equal(db_int(db, "select count(*) from variants where compile_log like '%undeclared_name%'"
                                " and label not like 'strategy=error%'"), 0);
    assert_int_equal(db_int(db, "select count(*) from variants where instr(compile_log, '__kvx') > 0"), 0);
}

/* A compile that takes a while (one source held 2.5 s, past
 * PROGRESS_QUIET_S) says how far it is, in a log a plain line a tenth
 * (core/progress.c). */
static void test_progress_in_a_log(void **state)
{
    (void)state;
    const char *log = tmp_path("progress.log");
    setenv("KVX_TEST_COMPILE_DELAY", "strategy-naive:2500", 1);
    int rc = kvx(log, "compile", GROUP_SPEC, "--arch", "sm_90", "--group", "1", "-j", "1", "--no-cache", "--out",
                 tmp_path("out-progress"), NULL);
    unsetenv("KVX_TEST_COMPILE_DELAY");
    assert_int_equal(rc, 1);
    if (!log_has(log, "kvx compile: sm_90: ") || !log_has(log, "/6 (")) {
        dump(log);
        fail_msg("no progress line");
    }
}

/* Two processes publish one key from programs grouped otherwise (shards of
 * one spec sharing a cache): the one that lost takes the winner's symbol and
 * CUBIN, which its entry point is found by (was: its own symbol against the
 * winner's CUBIN, the wrong member's kernel or none). */
static void test_lost_publish_adopts(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/lost-publish/entry", cache);
    static char winner_bin[] = "CUBIN of the program that won", loser_bin[] = "the other program's";
    JitJob a = { .name = "v.cu", .source = "extern \"C\" __global__ void k() {}", .arch = "sm_90", .ok = 1,
                 .ptx = mem_strdup(".entry k"), .ptx_len = 8, .log = mem_strdup(""), .group = 4 };
    JitJob b = a;
    b.ptx = mem_strdup(".entry k"), b.log = mem_strdup(""), b.group = 8;
    a.cubin = mem_strdup(winner_bin), a.cubin_len = sizeof winner_bin;
    b.cubin = mem_strdup(loser_bin), b.cubin_len = sizeof loser_bin;
    snprintf(a.symbol, sizeof a.symbol, "__kvx1");
    snprintf(b.symbol, sizeof b.symbol, "__kvx6");
    KvxError err = { 0 };
    assert_int_equal(jit_cache_store(&a, NULL, 0, dir, 0, &err), 0);
    assert_int_equal(jit_cache_store(&b, NULL, 0, dir, 0, &err), 0);
    assert_string_equal(b.symbol, "__kvx1");
    assert_int_equal(b.group, 4);
    assert_int_equal(b.cubin_len, sizeof winner_bin);
    assert_memory_equal(b.cubin, winner_bin, sizeof winner_bin);
    assert_string_equal(b.sum, a.sum);
    JitJob c = { .name = "v.cu" };
    assert_int_equal(jit_cache_load(&c, dir), 0);
    assert_string_equal(c.symbol, "__kvx1");
    jit_job_release(&a);
    jit_job_release(&b);
    jit_job_release(&c);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(cache) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    if (child_dir_make("kvx-jit-group"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_owner),
        cmocka_unit_test(test_program),
        cmocka_unit_test(test_failures_apart),
        cmocka_unit_test(test_compile_friction_grouped),
        cmocka_unit_test(test_run_grouped),
        cmocka_unit_test(test_progress_in_a_log),
        cmocka_unit_test(test_lost_publish_adopts),
    };
    return child_dir_done(cmocka_run_group_tests(tests, setup, teardown));
}
