/* counters: ncu's CSV read into per-case counters (the GPU pass itself runs
 * only where ncu and a GPU are: `kvx run --counters`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/counters.h"

/* What ncu --csv --page raw writes: a header, a units row, one row per launch. */
static const char LOG[] =
    "==PROF== Connected to process 123\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"dram__bytes_read.sum\","
    "\"dram__bytes_write.sum\",\"lts__t_requests_srcunit_tex_op_atom.sum\","
    "\"lts__t_requests_srcunit_tex_op_red.sum\"\n"
    "\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"\",\"\"\n"
    "\"0\",\"123\",\"kvx\",\"filter_count\",\"67,108,864\",\"2,048\",\"0\",\"524,288\"\n"
    "\"1\",\"123\",\"kvx\",\"filter_count\",\"67,110,912\",\"n/a\",\"0\",\"16,384\"\n";

static void cases_named(CaseDesc *c, int n, const char *kernel)
{
    memset(c, 0, sizeof *c * (size_t)n);
    for (int i = 0; i < n; i++)
        snprintf(c[i].kernel, sizeof c[i].kernel, "%s", kernel);
}

static void test_parse(void **state)
{
    (void)state;
    CaseDesc c[2];
    cases_named(c, 2, "filter_count");
    double v[2][COUNTER_COUNT];
    char *text = strdup(LOG);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, v, &err), 2);
    assert_int_equal(err.code, 0);
    assert_true(v[0][COUNTER_l2_red_requests] == 524288);
    assert_true(v[0][COUNTER_l2_atom_requests] == 0);
    assert_true(v[0][COUNTER_dram_read_bytes] == 67108864);
    assert_true(v[1][COUNTER_l2_red_requests] == 16384);
    assert_true(isnan(v[1][COUNTER_dram_write_bytes]));     /* "n/a" */
    free(text);
}

/* Rows are matched to cases by order and kernel name: another kernel's row
 * stores nothing rather than the wrong case's counters. */
static void test_row_of_another_kernel(void **state)
{
    (void)state;
    CaseDesc c[2];
    cases_named(c, 2, "histogram");
    double v[2][COUNTER_COUNT];
    char *text = strdup(LOG);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, v, &err), -1);
    assert_non_null(strstr(err.msg, "ncu row 1 is kernel 'filter_count' (expected 'histogram'"));
    kvx_error_clear(&err);
    free(text);
    text = strdup("==PROF== nothing profiled\n");
    assert_int_equal(counters_parse(text, c, 2, v, &err), -1);
    assert_non_null(strstr(err.msg, "no CSV table"));
    kvx_error_clear(&err);
    free(text);
}

/* A case of two kernels (two_pass) takes two rows, its counters their sum;
 * the next case's row follows them. */
static void test_two_kernels_summed(void **state)
{
    (void)state;
    static const char TWO[] =
        "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"dram__bytes_read.sum\","
        "\"dram__bytes_write.sum\",\"lts__t_requests_srcunit_tex_op_atom.sum\","
        "\"lts__t_requests_srcunit_tex_op_red.sum\"\n"
        "\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"\",\"\"\n"
        "\"0\",\"1\",\"kvx\",\"filter_count_blocks\",\"67,108,864\",\"4,096\",\"0\",\"0\"\n"
        "\"1\",\"1\",\"kvx\",\"filter_count_sum\",\"4,224\",\"32\",\"0\",\"0\"\n"
        "\"2\",\"1\",\"kvx\",\"filter_count\",\"67,108,864\",\"32\",\"0\",\"1,056\"\n";
    CaseDesc *c = calloc(2, sizeof *c);
    snprintf(c[0].kernel, sizeof c[0].kernel, "filter_count_blocks");
    c[0].nnext = 1;
    snprintf(c[0].next[0].kernel, sizeof c[0].next[0].kernel, "filter_count_sum");
    snprintf(c[1].kernel, sizeof c[1].kernel, "filter_count");
    double v[2][COUNTER_COUNT];
    char *text = strdup(TWO);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, v, &err), 2);
    assert_true(v[0][COUNTER_dram_read_bytes] == 67108864 + 4224);
    assert_true(v[0][COUNTER_dram_write_bytes] == 4096 + 32);
    assert_true(v[1][COUNTER_l2_red_requests] == 1056);
    free(text);
    /* the second kernel's row missing: the next row is not the case's */
    c[0].next[0].kernel[0] = 'x';
    text = strdup(TWO);
    assert_int_equal(counters_parse(text, c, 2, v, &err), -1);
    assert_non_null(strstr(err.msg, "ncu row 2 is kernel 'filter_count_sum' (expected 'xilter_count_sum' of case 1 of 2"));
    kvx_error_clear(&err);
    free(text);
    free(c);
}

/* Without ncu the pass says so and nothing is stored. */
static void test_no_ncu(void **state)
{
    (void)state;
    setenv("KVX_NCU", "/nonexistent/ncu", 1);
    setenv("CUDA_HOME", "/nonexistent", 1);
    setenv("PATH", "/nonexistent", 1);
    if (counters_find_ncu()) {
        print_message("ncu found at %s despite the empty search path (the toolkit's)\n",
                      counters_find_ncu());
        skip();
    }
    CaseDesc c[1];
    cases_named(c, 1, "k");
    double v[1][COUNTER_COUNT];
    KvxError err = {0};
    assert_int_equal(counters_collect(c, 1, 0, v, &err), -1);
    assert_non_null(strstr(err.msg, "no ncu"));
    assert_true(isnan(v[0][0]));
    kvx_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_row_of_another_kernel),
        cmocka_unit_test(test_two_kernels_summed),
        cmocka_unit_test(test_no_ncu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
