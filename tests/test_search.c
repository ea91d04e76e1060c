/* test_search: the search strategies (run/search.c, search_local.c,
 * search_model.c) and their replay (run/search_replay.c) on synthetic
 * spaces, no GPU and no database.
 *
 * What a user of `kvx run --search` and `kvx replay` relies on: a seed gives
 * the same proposals every time (a killed search resumes on the same path)
 * and another seed other ones; no candidate is proposed twice and every one
 * is reached when the budget is the whole space; a pruned point is never
 * proposed (the space holds only valid ones, and the neighbourhood steps
 * over holes); a peek at the next proposals (what a search compiles ahead)
 * changes nothing; invalid variants steer the guided strategies away; the replay
 * reports the optimum found at a full budget and the guided strategies beat
 * random sampling at a small one; no two strategies of one seed open with
 * the same picks, and the guided ones' seeded design covers every axis'
 * range evenly (each stratum of each axis once); a strategy's constants
 * parse as NAME:key=value and a wrong key says which it takes; a time
 * budget counts the evaluations that started within it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/search.h"
#include "run/search_internal.h"
#include "core/util.h"

/* A tuning space like a tiled kernel's: 5 axes of 4 to 6 ordered values,
 * `where: a0 + a1 <= 8` pruning the largest tiles, the objective a bowl per
 * axis plus an interaction of the first two, and invalid (a launch-resource
 * failure) where a0 + a2 > 7. */
#define NAX 5
static const int nvals[NAX] = {6, 5, 4, 6, 5};

typedef struct Space {
    SearchSpace sp;
    int *vals;
    double *y;
} Space;

static double objective(const int *v)
{
    static const int opt[NAX] = {3, 2, 1, 4, 2};
    double y = 0;
    for (int a = 0; a < NAX; a++)
        y += 0.08 * (a + 1) * (v[a] - opt[a]) * (v[a] - opt[a]);
    return y + 0.05 * abs(v[0] - v[1] - 1);
}

static void space_make(Space *s, int with_invalid)
{
    int total = 1;
    for (int a = 0; a < NAX; a++)
        total *= nvals[a];
    s->vals = malloc(sizeof(int) * NAX * (size_t)total);
    s->y = malloc(sizeof(double) * (size_t)total);
    int n = 0, v[NAX];
    for (int i = 0; i < total; i++) {
        for (int a = NAX - 1, r = i; a >= 0; a--)
            v[a] = r % nvals[a], r /= nvals[a];
        if (v[0] + v[1] > 8)
            continue;
        memcpy(s->vals + n * NAX, v, sizeof v);
        s->y[n++] = with_invalid && v[0] + v[2] > 7 ? NAN : objective(v);
    }
    s->sp = (SearchSpace){.n = n, .naxes = NAX, .vals = s->vals, .nvals = nvals};
}

static void space_free(Space *s)
{
    free(s->vals);
    free(s->y);
}

/* The first n proposals of kind under seed, each told its objective at once. */
static void proposals(const Space *s, int kind, uint64_t seed, int n, int *out)
{
    Search *se = search_new(&s->sp, kind, seed);
    for (int i = 0; i < n; i++) {
        out[i] = search_ask(se);
        if (out[i] >= 0)
            search_tell(se, out[i], s->y[out[i]]);
    }
    search_free(se);
}

static void test_deterministic_per_seed(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 1);
    int a[60], b[60], c[60];
    for (int k = 0; k < SEARCH_COUNT; k++) {
        proposals(&s, k, 7, 60, a);
        proposals(&s, k, 7, 60, b);
        proposals(&s, k, 8, 60, c);
        assert_memory_equal(a, b, sizeof a);
        assert_memory_not_equal(a, c, sizeof a);
    }
    space_free(&s);
}

static void test_whole_space_once(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 1);
    int n = s.sp.n;
    int *got = malloc(sizeof(int) * (size_t)(n + 1));
    char *seen = calloc((size_t)n, 1);
    for (int k = 0; k < SEARCH_COUNT; k++) {
        memset(seen, 0, (size_t)n);
        proposals(&s, k, 3, n + 1, got);
        for (int i = 0; i < n; i++) {
            assert_true(got[i] >= 0 && got[i] < n);
            assert_int_equal(seen[got[i]], 0);
            seen[got[i]] = 1;
        }
        assert_int_equal(got[n], -1);
    }
    free(got);
    free(seen);
    space_free(&s);
}

/* Issue 37: with batches of 8, the first 8 picks of every strategy were the
 * same random draws. */
static void test_first_picks_differ(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 0);
    int first[SEARCH_COUNT][8];
    for (int k = 0; k < SEARCH_COUNT; k++) {
        Search *se = search_new(&s.sp, k, 11);
        for (int i = 0; i < 8; i++)
            first[k][i] = search_ask(se);      /* a batch: asked before any tell */
        search_free(se);
    }
    for (int k = 0; k < SEARCH_COUNT; k++)
        for (int j = k + 1; j < SEARCH_COUNT; j++)
            assert_memory_not_equal(first[k], first[j], sizeof first[k]);
    space_free(&s);
}

/* A full product space (nothing pruned): the model's design of 2 x (axes +
 * 2) points (init=2), each axis' values cut into that many strata, puts one point in
 * each stratum of each axis. */
static void test_design_strata(void **state)
{
    (void)state;
    static const int nv[3] = {20, 30, 7};     /* 10 strata: 2 and 3 values each on the first two */
    int n = nv[0] * nv[1] * nv[2];
    int *vals = malloc(sizeof(int) * 3 * (size_t)n);
    for (int i = 0; i < n; i++)
        vals[3 * i] = i / (nv[1] * nv[2]), vals[3 * i + 1] = i / nv[2] % nv[1], vals[3 * i + 2] = i % nv[2];
    SearchSpace sp = {.n = n, .naxes = 3, .vals = vals, .nvals = nv};
    for (uint64_t seed = 0; seed < 5; seed++) {
        SearchParams par = search_params_default;
        par.init = 2;
        Search *se = search_new_with(&sp, SEARCH_model, seed, &par);
        int k = search_model_ninit(se), hit[3][32] = {{0}};
        assert_int_equal(k, 10);
        for (int i = 0; i < k; i++) {
            int c = search_ask(se);
            for (int a = 0; a < 3; a++)
                hit[a][vals[3 * c + a] * k / nv[a]]++;
        }
        for (int a = 0; a < 2; a++)         /* axes of at least k values: a stratum each */
            for (int t = 0; t < k; t++)
                assert_int_equal(hit[a][t], 1);
        for (int v = 0; v < nv[2]; v++)     /* 7 values, 10 points: each value at least once */
            assert_true(hit[2][v * k / nv[2]] >= 1);
        search_free(se);
    }
    free(vals);
}

static void test_parse(void **state)
{
    (void)state;
    int kind;
    SearchParams p;
    char why[256];
    assert_int_equal(search_parse("model", &kind, &p, why, sizeof why), 0);
    assert_int_equal(kind, SEARCH_model);
    assert_true(p.kappa == search_params_default.kappa);
    assert_int_equal(search_parse("portfolio:kappa=1.5:floor=0.1", &kind, &p, why, sizeof why), 0);
    assert_int_equal(kind, SEARCH_portfolio);
    assert_true(p.kappa == 1.5 && p.floor == 0.1 && p.init == search_params_default.init);
    assert_int_equal(search_parse("default", &kind, &p, why, sizeof why), 0);
    assert_int_equal(kind, SEARCH_DEFAULT);
    assert_int_equal(search_parse("model:kapa=1", &kind, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "'kapa=1' (expected one of: kappa=X, init=X"));
    assert_int_equal(search_parse("model:kappa=-1", &kind, &p, why, sizeof why), -1);
    assert_int_equal(search_parse("anneal", &kind, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "'anneal' (expected one of: random, local, model, portfolio, default)"));
}

/* An evaluation counts when it started within the budget: costs 3, 3, 3
 * and budgets of 5 and 6 ms see two evaluations and three. */
static void test_time_budget(void **state)
{
    (void)state;
    const double y[4] = {log(4), log(2), log(1), NAN}, cost[4] = {3, 3, 3, 3};
    const int order[4] = {0, 3, 1, 2};
    int e;
    assert_float_equal(search_frac_at_time(y, cost, log(1), order, 4, 5, &e), 0.25, 1e-12);
    assert_int_equal(e, 2);
    assert_float_equal(search_frac_at_time(y, cost, log(1), order, 4, 6.5, &e), 0.5, 1e-12);
    assert_int_equal(e, 3);
    assert_float_equal(search_frac_at_time(y, cost, log(1), order, 1, 100, &e), 0.25, 1e-12);
    assert_int_equal(e, 1);
}

/* A neighbour step over a pruned hole lands on the next valid value, and a
 * step off the space's edge gives none. */
static void test_neighbours_skip_pruned(void **state)
{
    (void)state;
    static const int nv[2] = {5, 2};
    /* (1,0) and (2,0) pruned. */
    static const int vals[] = {0, 0, 0, 1, 1, 1, 2, 1, 3, 0, 3, 1, 4, 0, 4, 1};
    SearchSpace sp = {.n = 8, .naxes = 2, .vals = vals, .nvals = nv};
    Search *se = search_new(&sp, SEARCH_local, 1);
    assert_int_equal(search_step(se, 0, 0, +1), 4);     /* (0,0) -> (3,0) */
    assert_int_equal(search_step(se, 4, 0, -1), 0);
    assert_int_equal(search_step(se, 1, 0, +1), 2);     /* (0,1) -> (1,1) */
    assert_int_equal(search_step(se, 6, 0, +1), -1);    /* (4,0): the edge */
    assert_int_equal(search_step(se, 0, 1, -1), -1);
    int tuple[2] = {2, 0};
    assert_int_equal(search_lookup(se, tuple), -1);
    search_free(se);
}

/* A peek changes nothing (the same proposals follow with or without one)
 * and, for random, is what the next asks propose. */
static void test_peek(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 1);
    for (int k = 0; k < SEARCH_COUNT; k++) {
        int plain[40], peeked[40], peek[8];
        proposals(&s, k, 11, 40, plain);
        Search *se = search_new(&s.sp, k, 11);
        for (int i = 0; i < 40; i++) {
            int n = search_peek(se, peek, 8);
            assert_int_equal(n, 8);
            peeked[i] = search_ask(se);
            if (k == SEARCH_random)
                assert_int_equal(peek[0], peeked[i]);
            search_tell(se, peeked[i], s.y[peeked[i]]);
        }
        search_free(se);
        assert_memory_equal(plain, peeked, sizeof plain);
    }
    space_free(&s);
}

/* Invalid candidates among the first 40 proposals, summed over 50 seeds. */
static int invalid_count(const Space *s, int kind)
{
    int bad = 0, got[40];
    for (uint64_t seed = 0; seed < 50; seed++) {
        proposals(s, kind, seed, 40, got);
        for (int i = 0; i < 40; i++)
            bad += isnan(s->y[got[i]]);
    }
    return bad;
}

static void test_invalid_steers_away(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 1);
    int rnd = invalid_count(&s, SEARCH_random);
    int loc = invalid_count(&s, SEARCH_local), mod = invalid_count(&s, SEARCH_model);
    printf("  invalid proposals of 2000: random %d, local %d, model %d\n", rnd, loc, mod);
    assert_true(rnd > 0);
    assert_true(loc < rnd / 2);
    assert_true(mod < rnd / 2);
    space_free(&s);
}

static void test_replay(void **state)
{
    (void)state;
    Space s;
    space_make(&s, 1);
    int budgets[3] = {s.sp.n / 20, s.sp.n / 10, s.sp.n};
    double frac[50 * 3], col[50];
    SearchStats st[SEARCH_COUNT][3];
    for (int k = 0; k < SEARCH_COUNT; k++) {
        assert_int_equal(search_replay(&s.sp, s.y, k, 0, 50, budgets, 3, SEARCH_BATCH, frac), 0);
        for (int b = 0; b < 3; b++) {
            for (int i = 0; i < 50; i++)
                col[i] = frac[i * 3 + b];
            st[k][b] = search_stats(col, 50, 0.05);
        }
        printf("  %-7s 5%%: median %.3f p10 %.3f within %.2f; 10%%: median %.3f within %.2f\n",
               search_names[k], st[k][0].median, st[k][0].p10, st[k][0].within, st[k][1].median,
               st[k][1].within);
        assert_float_equal(st[k][2].median, 1.0, 1e-12);
        assert_float_equal(st[k][2].p10, 1.0, 1e-12);
    }
    for (int b = 0; b < 2; b++) {
        assert_true(st[SEARCH_local][b].median > st[SEARCH_random][b].median);
        assert_true(st[SEARCH_model][b].median > st[SEARCH_random][b].median);
    }
    assert_true(st[SEARCH_DEFAULT][1].within >= 0.9);
    space_free(&s);
}

static void test_stats(void **state)
{
    (void)state;
    double f[10] = {1, 0.5, 0.96, 0.9, 1, 0.2, 0.99, 0.8, 0.7, 0.6};
    SearchStats st = search_stats(f, 10, 0.05);
    assert_float_equal(st.median, 0.85, 1e-12);
    assert_float_equal(st.p10, 0.2, 1e-12);
    assert_float_equal(st.within, 0.4, 1e-12);
    double none[1] = {0};
    SearchSpace sp = {.n = 1, .naxes = NAX, .vals = (int[NAX]){0}, .nvals = nvals};
    double y = NAN;
    int b = 1;
    assert_int_equal(search_replay(&sp, &y, SEARCH_random, 0, 1, &b, 1, 1, none), -1);
    assert_int_equal(search_find("model"), SEARCH_model);
    assert_int_equal(search_find("annealing"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_per_seed),
        cmocka_unit_test(test_whole_space_once),
        cmocka_unit_test(test_neighbours_skip_pruned),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_invalid_steers_away),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_first_picks_differ),
        cmocka_unit_test(test_design_strata),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_time_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
