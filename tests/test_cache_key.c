/* test_cache_key: the compile cache is keyed by what changes a compile's
 * product, never by kvx's commit (compile/jit_cache.c, cmake/product.cmake),
 * and inspect reads what the cache holds.  Needs NVRTC, not a GPU.
 *
 * Checked, with a disassembler that logs its calls (the real one behind a
 * script; skipped where there is none):
 * - `kvx compile` of group.yaml fills the cache, disassembling once a
 *   program;
 * - kvx-othercommit (the same sources, another version_text: a rebuild at
 *   another commit) compiles the same spec entirely from the cache and runs
 *   no disassembler;
 * - `kvx inspect` by either binary, for the arch compiled, runs no
 *   disassembler either: the facts and listings are the entries'; for an
 *   arch not compiled yet it does, once a program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/inspect.h"
#include "core/util.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/group.yaml"

/* A disassembler that logs each listing it makes, then runs the real one
 * (the grouped programs' listings are cut by function name: a stored listing
 * would not do). */
static void logging_disassembler(const char *path, const char *real, const char *log)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n"
               "[ \"$1\" = --version ] || echo \"$*\" >> '%s'\n"
               "exec '%s' \"$@\"\n", log, real);
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

/* The other binary with args (a NULL-terminated list), output to log: its
 * exit status. */
static int other(const char *log, ...)
{
    StrBuf cmd;
    sb_init(&cmd);
    sb_printf(&cmd, "'%s'", KVX_OTHER_BINARY);
    va_list ap;
    va_start(ap, log);
    for (const char *a; (a = va_arg(ap, const char *));)
        sb_printf(&cmd, " '%s'", a);
    va_end(ap);
    sb_printf(&cmd, " > '%s' 2>&1", log);
    int st = system(sb_str(&cmd));
    sb_free(&cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void must_have(const char *log, const char *text)
{
    if (!log_has(log, text)) {
        dump(log);
        fail_msg("no '%s' in %s", text, log);
    }
}

static void test_another_commit_hits(void **state)
{
    (void)state;
    const char *calls = tmp_path("calls"), *cache = tmp_path("cache");
    const char *real = inspect_find_disassembler();
    if (!real)
        skip();     /* nothing to count: make installs NVIDIA's nvdisasm into .kvx/tools */
    logging_disassembler(tmp_path("nvdisasm"), real, calls);
    setenv("KVX_NVDISASM", tmp_path("nvdisasm"), 1);
    const char *log = tmp_path("compile.log");
    /* two variants do not compile: exit 1, as alone */
    assert_int_equal(kvx(log, "compile", SPEC, "--arch", "sm_90", "--cache", cache, "--group", "6", "--out",
                         tmp_path("out"), NULL), 1);
    must_have(log, "6 compiles, 0 from the cache");
    int made = lines(calls);
    assert_int_equal(made, 1);              /* the four that compiled: one program, one listing */

    assert_int_equal(other(tmp_path("version.log"), "--version", NULL), 0);
    must_have(tmp_path("version.log"), "another commit");
    const char *again = tmp_path("again.log");
    assert_int_equal(other(again, "compile", SPEC, "--arch", "sm_90", "--cache", cache, "--out",
                           tmp_path("out2"), NULL), 1);
    must_have(again, "6 compiles, 6 from the cache");
    assert_int_equal(lines(calls), made);

    const char *ins = tmp_path("inspect.log");
    assert_int_equal(other(ins, "inspect", SPEC, "--arch", "sm_90", "--cache", cache, "--show", "sass", NULL), 0);
    assert_int_equal(lines(calls), made);   /* facts and listings from the entries */
    must_have(ins, "strategy=warp [sm_90]: SASS sm_90: 1 REDG.ADD");
    assert_int_equal(kvx(ins, "inspect", SPEC, "--arch", "sm_90", "--cache", cache, NULL), 0);
    assert_int_equal(lines(calls), made);
    /* an arch not compiled yet: its compiles disassemble, once a program */
    assert_int_equal(kvx(ins, "inspect", SPEC, "--arch", "sm_80", "--cache", cache, "--group", "6", NULL), 0);
    assert_int_equal(lines(calls), made + 1);
    unsetenv("KVX_NVDISASM");
}

int main(void)
{
    if (child_dir_make("kvx-cache-key"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_another_commit_hits),
    };
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
