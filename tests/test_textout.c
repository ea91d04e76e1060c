/* test_textout: the one JSON string writer (core/json.c), the one double
 * printer (core/num.c) and the one PATH search (core/path.c).  The JSON_BYTES
 * and both number layouts are held to the bytes written before they were
 * merged: case keys and import keys hash them, so a change here would make
 * every stored case look new to `kvx run` and every import a duplicate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/json.h"
#include "core/num.h"
#include "core/util.h"

static void check_str(const char *s, JsonMode mode, const char *want)
{
    StrBuf b;
    sb_init(&b);
    json_put_str(&b, s, mode);
    if (strcmp(sb_str(&b), want))
        fail_msg("json of \"%s\" (mode %d): %s, expected %s", s ? s : "(null)", mode, sb_str(&b), want);
    sb_free(&b);
}

/* Reports: short escapes, and a byte that is not UTF-8 must not make the
 * whole document unreadable. */
static void test_json_text(void **state)
{
    (void)state;
    check_str("a\"b\\c", JSON_TEXT, "\"a\\\"b\\\\c\"");
    check_str("l1\nl2\tx\r\x01", JSON_TEXT, "\"l1\\nl2\\tx\\u000d\\u0001\"");
    check_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", JSON_TEXT, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    check_str("bad\xff end\xc3", JSON_TEXT, "\"bad\\ufffd end\\ufffd\"");
    check_str("\xed\xa0\x80", JSON_TEXT, "\"\\ufffd\\ufffd\\ufffd\"");   /* a surrogate */
    check_str(NULL, JSON_TEXT, "\"\"");
}

/* Case keys: the bytes run_cases.c hashed before json.c existed. */
static void test_json_bytes(void **state)
{
    (void)state;
    check_str("a\"b\\c", JSON_BYTES, "\"a\\\"b\\\\c\"");
    check_str("l1\nl2\t\x1f", JSON_BYTES, "\"l1\\u000al2\\u0009\\u001f\"");
    check_str("bad\xff caf\xc3\xa9", JSON_BYTES, "\"bad\xff caf\xc3\xa9\"");
}

static void test_json_write(void **state)
{
    (void)state;
    char buf[64] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    json_write_str(f, "x\n\xff");
    fclose(f);
    assert_string_equal(buf, "\"x\\n\\ufffd\"");
}

static void check_num(double d, NumLayout layout, const char *want)
{
    char buf[40];
    num_write_double(buf, sizeof buf, d, layout);
    if (strcmp(buf, want))
        fail_msg("%.17g (layout %d): %s, expected %s", d, layout, buf, want);
    if (strtod(buf, NULL) != d)
        fail_msg("%s does not read back as %.17g", buf, d);
}

static void test_num(void **state)
{
    (void)state;
    static const struct { double d; const char *shortest, *g15; } cases[] = {
        {0.05, "0.05", "0.05"},
        {1000, "1000", "1000"},
        {1e15, "1000000000000000", "1e+15"},
        {1e20, "1e+20", "1e+20"},
        {1e-5, "1e-05", "1e-05"},
        {0.1 + 0.2, "0.30000000000000004", "0.30000000000000004"},
        {0.1 + 0.7, "0.7999999999999999", "0.79999999999999993"},
        {-2.5, "-2.5", "-2.5"},
        {0, "0", "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_num(cases[i].d, NUM_SHORTEST, cases[i].shortest);
        check_num(cases[i].d, NUM_G15, cases[i].g15);
    }
}

static void put_file(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

/* The first executable regular file along PATH; never one in the current
 * directory through an empty entry, a directory or a file without x. */
static void test_path_search(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/kvx_textout_XXXXXX", a[64], b[64], c[64], p[256], path[4096];
    assert_non_null(mkdtemp(tmpl));
    snprintf(a, sizeof a, "%s/a", tmpl), snprintf(b, sizeof b, "%s/b", tmpl), snprintf(c, sizeof c, "%s/c", tmpl);
    assert_int_equal(mkdir(a, 0755) | mkdir(b, 0755) | mkdir(c, 0755), 0);
    snprintf(p, sizeof p, "%s/kvxtool", a), put_file(p, 0644);
    snprintf(p, sizeof p, "%s/kvxtool", b), assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/kvxtool", c), put_file(p, 0755);
    char *old = getenv("PATH") ? mem_strdup(getenv("PATH")) : NULL, *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(tmpl), 0);
    put_file("kvxhere", 0755);
    snprintf(p, sizeof p, "::/nonexistent:%s:%s:%s:", a, b, c);
    setenv("PATH", p, 1);
    assert_int_equal(path_search("kvxtool", path, sizeof path), 1);
    snprintf(p, sizeof p, "%s/kvxtool", c);
    assert_string_equal(path, p);
    assert_int_equal(path_search("kvxhere", path, sizeof path), 0);
    assert_int_equal(path_search("kvx_no_such_tool", path, sizeof path), 0);
    unsetenv("PATH");
    assert_int_equal(path_search("kvxtool", path, sizeof path), 0);
    if (old)
        setenv("PATH", old, 1);
    assert_int_equal(chdir(cwd), 0);
    free(old), free(cwd);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_text),
        cmocka_unit_test(test_json_bytes),
        cmocka_unit_test(test_json_write),
        cmocka_unit_test(test_num),
        cmocka_unit_test(test_path_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
