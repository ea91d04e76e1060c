/* Bad-spec corpus: every YAML file of tests/badspec/ (01_axes_empty.yaml on) must fail to load, plan or
 * resolve at one of its points (what `kvx plan` checks)
 * with exactly the message and line:column recorded in tests/badspec/EXPECTED,
 * and `kvx plan` must exit 2 on it with that message on stderr.
 * KVX_REGOLD=1 rewrites EXPECTED from what kvx says now (review the diff). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "resolve/resolve.h"
#include "gen/plan.h"

/* Relative: ctest runs in the source directory, and messages name paths as given. */
#define DIR_BAD "tests/badspec"

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_yaml(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* The message kvx gives for one bad spec, as "LINE:COL: message" (the file name
 * part is checked separately: it must be the spec or its template). */
static char *message_for(const char *path, char *file, size_t nfile)
{
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    Spec *s = spec_load(path, &err);
    if (s) {
        /* As `kvx plan` does: plan, references, and every point resolved. */
        Plan p;
        PlanRef r = {0};
        int ok = plan_build(s, &f, &p, &err) == 0;
        ok = ok && plan_ref_build(&p, &r, &err) == 0 && resolve_plan(&p, &r, NULL, &err) == 0;
        if (p.spec)
            plan_free(&p);
        plan_ref_free(&r);
        spec_free(s);
        if (ok)
            return NULL;
    }
    assert_int_equal(err.code, KVX_EINPUT);
    snprintf(file, nfile, "%s", err.file);
    char *out = malloc(2048);
    snprintf(out, 2048, "%d:%d: %s", err.line, err.col, err.msg);
    kvx_error_clear(&err);
    return out;
}

static void test_corpus(void **state)
{
    struct dirent **names;
    int n = scandir(DIR_BAD, &names, is_yaml, by_name);
    assert_true(n >= 25);
    int regold = getenv("KVX_REGOLD") != NULL;
    char *expected = file_read(DIR_BAD "/EXPECTED", NULL);
    if (!regold)
        assert_non_null(expected);
    StrBuf fresh;
    sb_init(&fresh);
    for (int i = 0; i < n; i++) {
        char path[1024], file[512];
        snprintf(path, sizeof path, "%s/%s", DIR_BAD, names[i]->d_name);
        char *msg = message_for(path, file, sizeof file);
        if (!msg)
            fail_msg("%s loaded and planned without an error", names[i]->d_name);
        /* The position names the spec, or the template for template errors. */
        assert_true(strstr(file, "tests/badspec/") != NULL || strstr(file, "tests/data/specs/") != NULL);
        sb_printf(&fresh, "%s\t%s\t%s\n", names[i]->d_name, strrchr(file, '/') + 1, msg);
        if (!regold) {
            char want[4096];
            snprintf(want, sizeof want, "%s\t%s\t%s\n", names[i]->d_name, strrchr(file, '/') + 1, msg);
            if (!strstr(expected, want)) {
                const char *line = strstr(expected, names[i]->d_name);
                fail_msg("%s: kvx says\n  %s:%s\nbut EXPECTED has\n  %.*s", names[i]->d_name, file, msg,
                         line ? (int)strcspn(line, "\n") : 6, line ? line : "(none)");
            }
        }
        free(msg);
        free(names[i]);
    }
    free(names);
    if (regold)
        file_write_atomic(DIR_BAD "/EXPECTED", fresh.p, fresh.len);
    sb_free(&fresh);
    free(expected);
}

/* Run cmd (stderr with stdout); it must exit 2 and say msg. */
static void exits_2_saying(const char *cmd, const char *msg)
{
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char out[4096] = "";
    size_t got = fread(out, 1, sizeof out - 1, f);
    out[got] = 0;
    int st = pclose(f);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    if (!strstr(out, msg))
        fail_msg("%s said:\n%s\n(expected '%s')", cmd, out, msg);
}

/* The binary, not just the library: exit status 2 and FILE:LINE:COL on stderr. */
static void test_cli_exit_status(void **state)
{
    (void)state;
    exits_2_saying(KVX_BINARY " plan " DIR_BAD "/30_unknown_top_key.yaml 2>&1",
                   "tests/badspec/30_unknown_top_key.yaml:3:1: unknown key 'hitrate' in the spec");
}

/* --where follows where:'s rules: a value an axis lacks is an error at its
 * column, exit 2, not an empty selection. */
static void test_where_typo(void **state)
{
    (void)state;
    exits_2_saying(KVX_BINARY " plan specs/contention.yaml --where 'strategy == \"naiv\"' 2>&1",
                   "--where:1:13: axis 'strategy' has no value \"naiv\" (expected one of: naive,");
}

/* A verb takes its own options only, and -j a number. */
static void test_verb_options(void **state)
{
    (void)state;
    exits_2_saying(KVX_BINARY " gen specs/contention.yaml --shard 1/2 --out /tmp/kvx-never 2>&1",
                   "kvx gen: unknown option '--shard'");
    exits_2_saying(KVX_BINARY " plan specs/contention.yaml -j 4 2>&1", "kvx plan: unknown option '-j'");
    exits_2_saying(KVX_BINARY " compile specs/contention.yaml -j abc 2>&1",
                   "kvx compile: -j is 'abc' (expected a whole number from 1 to 4096)");
    assert_int_equal(access("/tmp/kvx-never", F_OK), -1);
    /* kvx run reads its numbers exactly, before it looks for a GPU. */
    exits_2_saying(KVX_BINARY " run specs/contention.yaml --seed 18446744073709551616 2>&1",
                   "kvx run: --seed is '18446744073709551616' (expected a whole number below 2^64)");
    exits_2_saying(KVX_BINARY " run specs/contention.yaml --warmup 2.5 2>&1",
                   "kvx run: --warmup is '2.5' (expected a whole number up to 10^9)");
    exits_2_saying(KVX_BINARY " run specs/contention.yaml -j 0 2>&1", "kvx run: -j is '0'");
}

/* Nothing half-written: kvx gen on a bad spec leaves no output directory. */
static void test_gen_writes_nothing(void **state)
{
    char dir[] = "/tmp/kvx-badgen-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s gen %s/31_unresolved_placeholder.yaml --out %s/out 2>/dev/null", KVX_BINARY,
             DIR_BAD, dir);
    int st = system(cmd);
    assert_int_equal(WEXITSTATUS(st), 2);
    char out[1100];
    snprintf(out, sizeof out, "%s/out", dir);
    assert_null(opendir(out));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_cli_exit_status),
        cmocka_unit_test(test_where_typo),
        cmocka_unit_test(test_verb_options),
        cmocka_unit_test(test_gen_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
