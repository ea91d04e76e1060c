/* Unit tests of the space (product, where, zip), point environments, templates
 * and the grouping of points into sources. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gen/plan.h"

#define SPECS KVX_SOURCE_DIR "/tests/data/specs"

static Spec *load(const char *path)
{
    KvxError err = {0};
    Spec *s = spec_load(path, &err);
    if (!s) {
        kvx_error_print(&err, stderr);
        fail_msg("spec did not load");
    }
    return s;
}

static void build(Spec *s, Plan *p)
{
    KvxError err = {0};
    DeviceFacts f;
    assert_int_equal(facts_for_arch("sm_90", &f), 0);
    if (plan_build(s, &f, p, &err) != 0) {
        kvx_error_print(&err, stderr);
        fail_msg("plan did not build");
    }
}

static void test_spec_fields(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    assert_string_equal(s->name, "count");
    assert_int_equal(s->naxes, 4);
    assert_string_equal(s->axes[3].name, "n");
    assert_int_equal(s->axes[3].vals[0].v.kind, VAL_INT);
    assert_int_equal(s->axes[3].vals[0].v.i, 65536);       /* 2^16 */
    assert_int_equal(s->axes[3].vals[1].v.i, 1048576);     /* 1M */
    assert_int_equal(s->axes[2].vals[1].v.kind, VAL_FLOAT);
    assert_string_equal(s->axes[2].vals[1].text, "0.05");
    assert_int_equal(s->nbufs, 2);
    assert_string_equal(s->bufs[1].type, "$T");
    assert_true(s->bufs[1].checked);
    assert_false(s->bufs[0].checked);
    assert_int_equal(s->bufs[0].init.kind, INIT_UNIFORM);
    assert_int_equal(s->nbaseline, 1);
    assert_int_equal(s->measure.min_samples, 5);
    assert_int_equal(s->measure.max_samples, 200);  /* default kept */
    assert_int_equal(s->ntables, 1);
    assert_true(s->tables[0].ratio);
    spec_free(s);
}

/* The text a case key hashes (issue #23: canonical values, not the label):
 * pinned, because every stored database's keys hash it, and independent of
 * how labels look. */
static void test_point_key_text(void **state)
{
    (void)state;
    Spec *s = load(SPECS "/count.yaml");
    Plan p;
    build(s, &p);
    char *key = plan_point_key_text(&p, 0), *label = plan_point_label(&p, 0, ~0ULL);
    assert_string_equal(key, "strategy=naive counter=u32 hit_rate=0 n=65536");
    assert_string_equal(key, label);    /* what keys hashed before there was a key text */
    free(key);
    free(label);
    key = plan_point_key_text(&p, p.npoints - 1);
    assert_non_null(strstr(key, "n=1048576"));
    free(key);
    plan_free(&p);
    spec_free(s);
}

static void test_product_where_sources(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    Plan p;
    build(s, &p);
    assert_int_equal(p.nfull, 3 * 2 * 3 * 2);
    /* where: drops block with u32: 3 hit rates x 2 sizes */
    assert_int_equal(p.npoints, 36 - 6);
    /* naive, warp x (u32, u64) and block x u64 */
    assert_int_equal(p.nsrcs, 5);
    uint64_t code = (1ULL << 0) | (1ULL << 1);
    assert_int_equal(p.code_axes, code);
    /* Declaration order, last axis fastest. */
    char *l0 = plan_point_label(&p, 0, ~0ULL), *l1 = plan_point_label(&p, 1, ~0ULL);
    assert_string_equal(l0, "strategy=naive counter=u32 hit_rate=0 n=65536");
    assert_string_equal(l1, "strategy=naive counter=u32 hit_rate=0 n=1048576");
    free(l0);
    free(l1);
    for (int i = 0; i < p.npoints; i++) {
        const Source *so = &p.srcs[p.point_src[i]];
        const int *v = plan_point(&p, i);
        assert_int_equal(v[0], plan_point(&p, so->first_point)[0]);
        assert_int_equal(v[1], plan_point(&p, so->first_point)[1]);
    }
    int total = 0;
    for (int k = 0; k < p.nsrcs; k++)
        total += p.srcs[k].npoints;
    assert_int_equal(total, p.npoints);
    plan_free(&p);
    spec_free(s);
}

static void test_emitted_source_reads_clean(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    Plan p;
    build(s, &p);
    const Source *naive = &p.srcs[0];
    assert_string_equal(naive->file, "count__strategy-naive__counter-u32.cu");
    assert_string_equal(naive->label, "strategy=naive counter=u32");
    const char *t = naive->text;
    assert_null(strstr(t, "{{"));
    assert_null(strstr(t, "#if"));
    assert_non_null(strstr(t, "// Variant: strategy=naive counter=u32\n"));
    assert_non_null(strstr(t, "--where 'strategy == \"naive\" && counter == \"u32\"'"));
    assert_non_null(strstr(t, "unsigned int *out)"));
    /* Directive lines vanish whole: the atomic follows the bounds check directly. */
    assert_non_null(strstr(t, "        return;\n    if (in[i] < thresh)\n        atomicAdd(out, (unsigned int)1);\n}\n"));
    /* The include is resolved with the point's values. */
    const Source *block = NULL;
    for (int k = 0; k < p.nsrcs; k++)
        if (strstr(p.srcs[k].label, "strategy=block"))
            block = &p.srcs[k];
    assert_non_null(block);
    assert_non_null(strstr(block->text, "// block staging with 256 threads\n"));
    assert_non_null(strstr(block->text, "__shared__ unsigned long long local;"));
    plan_free(&p);
    spec_free(s);
}

static void test_deterministic(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    Plan a, b;
    build(s, &a);
    build(s, &b);
    assert_int_equal(a.nsrcs, b.nsrcs);
    for (int k = 0; k < a.nsrcs; k++) {
        assert_string_equal(a.srcs[k].text, b.srcs[k].text);
        assert_string_equal(a.srcs[k].hash, b.srcs[k].hash);
    }
    plan_free(&a);
    plan_free(&b);
    spec_free(s);
}

static void test_zip(void **state)
{
    Spec *s = load(SPECS "/zip.yaml");
    Plan p;
    build(s, &p);
    assert_int_equal(p.nfull, 6);    /* strategy: [naive, warp], where: keeps naive */
    assert_int_equal(p.npoints, 3);
    for (int i = 0; i < 3; i++) {
        const int *v = plan_point(&p, i);
        assert_int_equal(v[2], i);
        assert_int_equal(v[3], i);
    }
    assert_int_equal(p.nsrcs, 1);
    /* init by n: one initialiser per value of the axis */
    const InitSpec *in = &s->bufs[0].init;
    assert_int_equal(spec_init_at(in, plan_point(&p, 0))->kind, INIT_UNIFORM);
    assert_int_equal(spec_init_at(in, plan_point(&p, 1))->kind, INIT_RUNS);
    assert_int_equal(spec_init_at(in, plan_point(&p, 2))->kind, INIT_ZIPF);
    plan_free(&p);
    spec_free(s);
}

static void test_point_env_lets(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    Plan p;
    build(s, &p);
    Arena *a = arena_new();
    /* point with hit_rate 0.05 */
    int pi = -1;
    for (int i = 0; i < p.npoints && pi < 0; i++)
        if (plan_point(&p, i)[2] == 1)
            pi = i;
    PointEnv pe;
    plan_point_env_init(&pe, s, plan_point(&p, pi), &p.facts, a);
    KvxError err = {0};
    int64_t v;
    SrcPos pos = {"t", 1, 1};
    Expr *e = expr_parse(a, "thresh + ceil_div(n, BLOCK) * 0 + sm_count", &pos, &err);
    assert_non_null(e);
    assert_int_equal(plan_point_eval_int(&pe, e, &v, &err), 0);
    assert_int_equal(v, 50 + 132);
    /* thresh depends on hit_rate only; sm_count is a fact */
    assert_int_equal(pe.used, 1ULL << 2 | 1ULL << 3);
    assert_true(pe.used_facts);
    const SetEntry *se = plan_point_set_var(&pe, "T");
    assert_non_null(se);
    assert_string_equal(se->v.s, "u32");
    /* A buffer is not a name of the point (plan.h): a check's arguments look
     * buffers up before they are evaluated. */
    Expr *buf = expr_parse(a, "in", &pos, &err);
    assert_non_null(buf);
    assert_int_equal(plan_point_eval_int(&pe, buf, &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown name 'in'"));
    kvx_error_clear(&err);
    arena_free(a);
    plan_free(&p);
    spec_free(s);
}

static void test_where_filter(void **state)
{
    Spec *s = load(SPECS "/count.yaml");
    Plan p;
    build(s, &p);
    Arena *a = arena_new();
    KvxError err = {0};
    SrcPos pos = {"--where", 1, 1};
    Expr *e = expr_parse(a, "strategy == \"warp\" && hit_rate > 0", &pos, &err);
    int n = 0;
    for (int i = 0; i < p.npoints; i++)
        n += plan_point_matches(&p, i, e, &err) == 1;
    assert_int_equal(n, 2 * 2 * 2);
    Expr *bad = expr_parse(a, "hit_rate * 2", &pos, &err);
    assert_int_equal(plan_point_matches(&p, 0, bad, &err), -1);
    assert_string_equal(err.msg, "--where is 0 (expected a boolean)");
    kvx_error_clear(&err);
    arena_free(a);
    plan_free(&p);
    spec_free(s);
}

/* 0 when text passes spec_check_axis_values on s; else -1 and the column of
 * the error in *col. */
static int axis_values(const Spec *s, const char *text, int *col)
{
    KvxError err = {0};
    SrcPos pos = {"t", 1, 1};
    Expr *e = expr_parse(s->arena, text, &pos, &err);
    assert_non_null(e);
    int rc = spec_check_axis_values(s, e, &err);
    *col = err.col;
    kvx_error_clear(&err);
    return rc;
}

static void test_axis_values(void **state)
{
    Spec *s = load(SPECS "/count.yaml");   /* strategy [naive warp block], n [2^16, 1M] */
    int col = 0;
    assert_int_equal(axis_values(s, "strategy == \"warp\" && n == 1048576", &col), 0);
    assert_int_equal(axis_values(s, "n != 2^16 || 1M == n || n == 65536.0", &col), 0);
    /* either side, == and !=, strings and numbers, nested in calls and ?: */
    assert_int_equal(axis_values(s, "\"wrap\" == strategy", &col), -1);
    assert_int_equal(col, 1);
    assert_int_equal(axis_values(s, "strategy != 'blok'", &col), -1);
    assert_int_equal(col, 13);
    assert_int_equal(axis_values(s, "max(n == 2^17 ? 1 : 2, 3)", &col), -1);
    assert_int_equal(col, 10);
    /* a value of the wrong kind is the evaluator's type error, not this one;
     * set variables and lets are not enumerated values, so not checked */
    assert_int_equal(axis_values(s, "strategy == 1 || T == \"u16\" || thresh == 7", &col), 0);
    /* only comparisons of equality: an ordering needs no listed value */
    assert_int_equal(axis_values(s, "n < 100 || n >= 2^30", &col), 0);
    spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_fields),
        cmocka_unit_test(test_point_key_text),
        cmocka_unit_test(test_product_where_sources),
        cmocka_unit_test(test_emitted_source_reads_clean),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_zip),
        cmocka_unit_test(test_point_env_lets),
        cmocka_unit_test(test_where_filter),
        cmocka_unit_test(test_axis_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
