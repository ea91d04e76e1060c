/* The check and metric forms a stream compaction needs, from the spec to
 * the worker's wire (tests/data/specs/compact.yaml; docs/spec.md, Checks and
 * Metrics):
 * - `out: {ref: reference, order: any, length: count}` resolves to a check
 *   compared as a multiset over the first count[0] elements, and the case
 *   crosses the pipe to a worker with that; a length buffer index out of
 *   range is refused by case_read;
 * - differential checks take each output's own order and length;
 * - a metric reading the scalar output `count` is NaN when resolved (before
 *   any launch) and is computed from the value a worker sends back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resolve/resolve.h"
#include "gen/plan.h"

#define SPEC "tests/data/specs/compact.yaml"

typedef struct Fixture {
    Spec *s;
    Plan p;
    PlanRef r;
    CaseDesc *c;
    double metrics[3];
} Fixture;

static int setup(void **state)
{
    Fixture *fx = mem_calloc(1, sizeof *fx);
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    if (!(fx->s = spec_load(SPEC, &err)) || plan_build(fx->s, &f, &fx->p, &err) ||
        plan_ref_build(&fx->p, &fx->r, &err))
        fail_msg("%s", err.msg);
    fx->c = mem_calloc(1, sizeof *fx->c);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    Fixture *fx = *state;
    free(fx->c);
    plan_free(&fx->p);
    plan_ref_free(&fx->r);
    spec_free(fx->s);
    free(fx);
    return 0;
}

/* Resolve point (strategy naive, hit_rate 0.1, n 4K is point 0). */
static void resolve_at(Fixture *fx, int point, int is_baseline)
{
    KvxError err = {0};
    Resolver rv = {&fx->p, &fx->r, &fx->s->measure, 0};
    ResolveCase rc = {.point = point, .is_baseline = is_baseline, .have_baseline = 1};
    if (resolve_case(&rv, &rc, fx->c, fx->metrics, &err))
        fail_msg("resolve: %s", err.msg);
}

static const CaseCheck *check_of(const CaseDesc *c, const char *buf, const char *ref)
{
    for (int i = 0; i < c->nchecks; i++)
        if (!strcmp(c->bufs[c->checks[i].buf].name, buf) && !strcmp(c->checks[i].ref, ref))
            return &c->checks[i];
    fail_msg("no check of '%s' against %s", buf, ref);
    return NULL;
}

static void test_order_and_length(void **state)
{
    Fixture *fx = *state;
    resolve_at(fx, 0, 1);
    int count = spec_buffer_find(fx->s, "count");
    const CaseCheck *out = check_of(fx->c, "out", "reference");
    assert_true(out->order_any);
    assert_true(out->has_length);
    assert_int_equal(out->length_buf, count);
    const CaseCheck *cnt = check_of(fx->c, "count", "count_below");
    assert_false(cnt->order_any);
    assert_false(cnt->has_length);

    /* Over the pipe to a worker, and a bad index refused there. */
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    CaseDesc *back = mem_calloc(1, sizeof *back);
    assert_int_equal(case_write(fd[1], fx->c), 0);
    assert_int_equal(case_read(fd[0], back), 0);
    const CaseCheck *bo = check_of(back, "out", "reference");
    assert_true(bo->order_any && bo->has_length && bo->length_buf == count);
    for (int i = 0; i < fx->c->nchecks; i++)
        if (fx->c->checks[i].has_length)
            fx->c->checks[i].length_buf = fx->c->nbufs;
    assert_int_equal(case_write(fd[1], fx->c), 0);
    assert_int_equal(case_read(fd[0], back), -1);
    close(fd[0]);
    close(fd[1]);
    free(back);
}

static void test_differential_keeps_shape(void **state)
{
    Fixture *fx = *state;
    fx->s->differential = 1;
    resolve_at(fx, 1 * 4 + 0, 0);   /* strategy warp: not the baseline */
    fx->s->differential = 0;
    const CaseCheck *out = check_of(fx->c, "out", "baseline");
    assert_true(out->order_any && out->has_length);
    const CaseCheck *cnt = check_of(fx->c, "count", "baseline");
    assert_false(cnt->order_any || cnt->has_length);
}

static void test_metric_reads_count(void **state)
{
    Fixture *fx = *state;
    resolve_at(fx, 0, 1);
    /* bytes: n * 4 + count * 4, atomics: count, elements: n (n = 4096) */
    assert_true(isnan(fx->metrics[0]) && isnan(fx->metrics[1]));
    assert_true(fx->metrics[2] == 4096);
    CaseResult res;
    memset(&res, 0, sizeof res);
    double m[3];
    KvxError err = {0};
    /* The worker did not send count (a run that failed before comparing). */
    assert_int_equal(resolve_metrics(&fx->p, 0, &res, m, &err), 0);
    assert_true(isnan(m[0]) && isnan(m[1]) && m[2] == 4096);
    int count = spec_buffer_find(fx->s, "count");
    res.out_known = 1u << count;
    res.out_value[count] = 409;
    assert_int_equal(resolve_metrics(&fx->p, 0, &res, m, &err), 0);
    assert_true(m[0] == 4096 * 4 + 409 * 4);
    assert_true(m[1] == 409);
    assert_true(m[2] == 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_and_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_differential_keeps_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metric_reads_count, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
