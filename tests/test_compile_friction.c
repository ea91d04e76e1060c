/* test_compile_friction: what `kvx compile` tells a new user about a compile
 * (tests/data/specs/friction.yaml, NVRTC here, no GPU):
 * - NVRTC's error and warning lines name the template's FILE:LINE before the
 *   generated file's line (the emitter's line map, gen/plan.h Source.origins);
 * - a fresh compile's warnings are shown once, on stderr; a cache hit keeps
 *   them in its entry and says nothing;
 * - a missing `headers: [cccl]` (cooperative groups, cuda/std) gets a hint
 *   naming the fix, and no hint where the spec asked for CCCL;
 * - a cache hit shows no compile time as if it had compiled now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/jit.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/friction.yaml"
#define TEMPLATE KVX_SOURCE_DIR "/tests/data/specs/friction.cu"

static void must_have(const char *log, const char *text)
{
    if (!log_has(log, text)) {
        dump(log);
        fail_msg("no '%s' in the output", text);
    }
}

static void must_lack(const char *log, const char *text)
{
    if (log_has(log, text)) {
        dump(log);
        fail_msg("'%s' in the output", text);
    }
}

static void test_first_compile(void **state)
{
    const char *log = tmp_path("first.log");
    /* Two variants fail to compile: exit 1. */
    assert_int_equal(kvx(log, "compile", SPEC, "--arch", "sm_90", "--out", tmp_path("out"), NULL), 1);
    must_have(log, TEMPLATE ":16: friction__variant-error.cu(");
    must_have(log, "error: identifier \"undeclared_name\" is undefined");
    must_have(log, "kvx: friction__variant-warns.cu [sm_90] compiled with warnings:\n" TEMPLATE
                   ":13: friction__variant-warns.cu(");
    must_have(log, "variable \"unused\" was declared but never referenced");
    must_have(log, "cannot open source file \"cuda/std/");
    must_have(log, "kvx: hint: a CCCL header (cuda/std, CUB, Thrust, cooperative groups) is not on"
                   " NVRTC's include path: add `headers: [cccl]` to the spec");
    must_have(log, "ms   miss");
    /* The warning is shown once: not again after the error's log. */
    char *text = file_read(log, NULL);
    const char *w = strstr(text, "compiled with warnings");
    assert_non_null(w);
    assert_null(strstr(w + 1, "compiled with warnings"));
    free(text);
}

static void test_second_compile_is_a_hit(void **state)
{
    const char *log = tmp_path("second.log");
    assert_int_equal(kvx(log, "compile", SPEC, "--arch", "sm_90", "--out", tmp_path("out"), NULL), 1);
    must_lack(log, "compiled with warnings");
    must_lack(log, "ms    hit");
    must_have(log, "friction__variant-warns.cu                                   ok              -    hit");
    /* The error's log comes from the entry, mapped as when it compiled. */
    must_have(log, TEMPLATE ":16: friction__variant-error.cu(");
    must_have(log, "kvx: hint: a CCCL header");
}

/* The hint is for a spec without CCCL, and for a failed compile only. */
static void test_hint_only_without_cccl(void **state)
{
    JitJob j = {.name = "x.cu", .use_cccl = 1};
    j.log = mem_strdup("info.h(167): catastrophic error: cannot open source file \"cuda/std/type_traits\"\n");
    jit_log_hint(&j);
    assert_null(strstr(j.log, "hint"));
    j.use_cccl = 0;
    jit_log_hint(&j);
    assert_non_null(strstr(j.log, "\nkvx: hint: a CCCL header"));
    free(j.log);
    j.log = mem_strdup("x.cu(3): error: identifier \"y\" is undefined\n");
    jit_log_hint(&j);
    assert_null(strstr(j.log, "hint"));
    free(j.log);
}

/* Lines of another file, and lines the map does not know, stay as they are. */
static void test_map_leaves_other_lines(void **state)
{
    JitJob j = {.name = "x.cu", .origins = "\n\nt.cu:7\n"};
    char *m = jit_log_map(&j, "x.cu(3): error: a\nx.cu(1): error: b\ny.cu(3): error: c\nx.cu(9): d\n");
    assert_string_equal(m, "t.cu:7: x.cu(3): error: a\nx.cu(1): error: b\ny.cu(3): error: c\nx.cu(9): d\n");
    free(m);
    char *w = jit_log_warnings("x.cu(3): warning #177-D: v\n  int v;\n      ^\n\nptxas info    : Used 8 registers\n");
    assert_string_equal(w, "x.cu(3): warning #177-D: v\n  int v;\n      ^\n");
    free(w);
    assert_null(jit_log_warnings("ptxas info    : Used 8 registers\n"));
}

int main(void)
{
    if (child_dir_make("kvx-friction"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_compile),
        cmocka_unit_test(test_second_compile_is_a_hit),
        cmocka_unit_test(test_hint_only_without_cccl),
        cmocka_unit_test(test_map_leaves_other_lines),
    };
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
