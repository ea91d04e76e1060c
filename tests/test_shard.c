/* test_shard: the partition of a run's cases across hosts (run/shard.c) and
 * the parsing of --shard K/N and Slurm's array variables.
 *
 * What a user running one spec as a job array relies on: every case lands in
 * exactly one shard, whatever N; the cases of one workload group (a point and
 * its baseline partner) stay together; every host computes the same partition
 * whatever order it enumerates the cases in; the shards are balanced to within
 * one group; and a bad --shard or a Slurm array that cannot be a shard is refused
 * with a message saying what was found.  With the kvx binary built, `kvx plan
 * --shard K/N` lists shards that together hold every point exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "run/shard.h"
#include "core/util.h"

/* ---- a case list: n cases in ngroups groups, keys like run.c's (hex) -------- */

typedef struct Cases {
    int n;
    char (*keys)[16];
    const char **group;     /* group[i] points into keys */
    double *cost;
    int *gid;               /* group index of case i */
} Cases;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* n cases over ngroups groups (each group gets at least one case when n >=
 * ngroups), with integer costs 1..9 when costed: sums are then exact, and the
 * order of summation cannot change a tie. */
static Cases cases_make(int n, int ngroups, int costed, uint64_t seed)
{
    Cases c = {n, mem_calloc((size_t)(ngroups ? ngroups : 1), 16), mem_calloc((size_t)(n ? n : 1), sizeof(char *)),
               costed ? mem_calloc((size_t)(n ? n : 1), sizeof(double)) : NULL,
               mem_calloc((size_t)(n ? n : 1), sizeof(int))};
    for (int g = 0; g < ngroups; g++)
        snprintf(c.keys[g], 16, "%08llx", (unsigned long long)(rng_next(&seed) & 0xffffffffu) ^ (unsigned)g);
    for (int i = 0; i < n; i++) {
        c.gid[i] = i < ngroups ? i : (int)(rng_next(&seed) % (uint64_t)ngroups);
        c.group[i] = c.keys[c.gid[i]];
        if (costed)
            c.cost[i] = (double)(1 + rng_next(&seed) % 9);
    }
    return c;
}

static void cases_free(Cases *c)
{
    free(c->keys);
    free(c->group);
    free(c->cost);
    free(c->gid);
}

/* Check the partition of c into nshards: range, groups whole, balance, and no
 * empty shard when there are at least as many groups as shards. */
static void check_partition(const Cases *c, int ngroups, int nshards, const int *shard_of)
{
    int *gshard = mem_alloc(sizeof(int) * (size_t)(ngroups ? ngroups : 1));
    double *gcost = mem_calloc((size_t)(ngroups ? ngroups : 1), sizeof(double));
    double *load = mem_calloc((size_t)nshards, sizeof(double));
    for (int g = 0; g < ngroups; g++)
        gshard[g] = -1;
    for (int i = 0; i < c->n; i++) {
        int k = shard_of[i], g = c->gid[i];
        if (k < 0 || k >= nshards)
            fail_msg("n=%d N=%d: case %d is in shard %d", c->n, nshards, i, k);
        if (gshard[g] >= 0 && gshard[g] != k)
            fail_msg("n=%d N=%d: group %s split between shards %d and %d", c->n, nshards, c->keys[g],
                     gshard[g], k);
        gshard[g] = k;
        double w = c->cost ? c->cost[i] : 1;
        gcost[g] += w;
        load[k] += w;
    }
    double biggest = 0, lo = 1e300, hi = 0;
    for (int g = 0; g < ngroups; g++)
        if (gcost[g] > biggest)
            biggest = gcost[g];
    for (int k = 0; k < nshards; k++) {
        lo = load[k] < lo ? load[k] : lo;
        hi = load[k] > hi ? load[k] : hi;
    }
    if (c->n && hi - lo > biggest)
        fail_msg("n=%d groups=%d N=%d: loads %g..%g differ by more than the largest group (%g)", c->n,
                 ngroups, nshards, lo, hi, biggest);
    if (c->n && ngroups >= nshards && lo == 0)
        fail_msg("n=%d groups=%d N=%d: a shard is empty", c->n, ngroups, nshards);
    free(gshard);
    free(gcost);
    free(load);
}

static void test_partition_covers_and_keeps_groups(void **state)
{
    (void)state;
    static const int sizes[][2] = {{0, 0}, {1, 1}, {2, 1}, {5, 5}, {7, 3}, {40, 20}, {100, 7},
                                   {257, 64}, {1000, 100}, {3000, 1000}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int costed = 0; costed < 2; costed++)
            for (int nshards = 1; nshards <= 17; nshards++) {
                Cases c = cases_make(sizes[s][0], sizes[s][1], costed, 0x9e3779b97f4a7c15ULL + s);
                int *shard_of = mem_alloc(sizeof(int) * (size_t)(c.n ? c.n : 1));
                for (int i = 0; i < c.n; i++)
                    shard_of[i] = -1;
                shard_partition(c.group, c.cost, c.n, nshards, shard_of);
                check_partition(&c, sizes[s][1], nshards, shard_of);
                free(shard_of);
                cases_free(&c);
            }
}

/* The same cases in another order (another host's enumeration) get the same
 * shard per group; the same input twice gives the same output. */
static void test_partition_is_deterministic(void **state)
{
    (void)state;
    for (int costed = 0; costed < 2; costed++)
        for (int nshards = 2; nshards <= 17; nshards += 3) {
            Cases c = cases_make(600, 150, costed, 42 + (uint64_t)nshards);
            int *a = mem_alloc(sizeof(int) * 600), *b = mem_alloc(sizeof(int) * 600);
            shard_partition(c.group, c.cost, c.n, nshards, a);
            shard_partition(c.group, c.cost, c.n, nshards, b);
            assert_memory_equal(a, b, sizeof(int) * 600);

            /* Fisher-Yates over a copy: permuted keys (as separate strings, so
             * that no pointer identity is involved), costs and groups. */
            int *perm = mem_alloc(sizeof(int) * 600);
            for (int i = 0; i < 600; i++)
                perm[i] = i;
            uint64_t seed = 7;
            for (int i = 599; i > 0; i--) {
                int j = (int)(rng_next(&seed) % (uint64_t)(i + 1)), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            char (*keys)[16] = mem_alloc(16 * 600);
            const char **group = mem_alloc(sizeof(char *) * 600);
            double *cost = costed ? mem_alloc(sizeof(double) * 600) : NULL;
            for (int i = 0; i < 600; i++) {
                memcpy(keys[i], c.group[perm[i]], 16);
                group[i] = keys[i];
                if (cost)
                    cost[i] = c.cost[perm[i]];
            }
            shard_partition(group, cost, 600, nshards, b);
            for (int i = 0; i < 600; i++)
                if (b[i] != a[perm[i]])
                    fail_msg("N=%d: group %s is in shard %d in one order and %d in another", nshards,
                             group[i], a[perm[i]], b[i]);
            free(keys);
            free(group);
            free(cost);
            free(perm);
            free(a);
            free(b);
            cases_free(&c);
        }
}

/* The documented rule, pinned: groups largest first (ties by key) onto the least
 * loaded shard (ties to the lower index).  A change here re-deals every stored
 * sharded run, so it must be deliberate. */
static void test_partition_rule(void **state)
{
    (void)state;
    const char *keys[] = {"f", "b", "e", "a", "d", "c", "a"};
    int got[7];
    shard_partition(keys, NULL, 7, 3, got);
    /* costs: a 2, the rest 1 -> a:0, then b:1 c:2 d:1 e:2 f:0 */
    const int want[7] = {0, 1, 2, 0, 1, 2, 0};
    assert_memory_equal(got, want, sizeof want);

    /* Largest first: the heavy group (last by key) gets a shard to itself and
     * the loads come out 3 and 3, where dealing in key order gives 2 and 4. */
    const char *g2[] = {"a", "b", "c", "zz"};
    const double c2[] = {1, 1, 1, 3};
    int s2[4];
    shard_partition(g2, c2, 4, 2, s2);
    for (int i = 0; i < 3; i++)
        assert_int_not_equal(s2[i], s2[3]);

    /* One shard: everything in shard 0. */
    int s3[7] = {9, 9, 9, 9, 9, 9, 9};
    shard_partition(keys, NULL, 7, 1, s3);
    for (int i = 0; i < 7; i++)
        assert_int_equal(s3[i], 0);
}

/* ---- shard_parse -------------------------------------------------------------- */

static void slurm_clear(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    unsetenv("SLURM_ARRAY_TASK_MIN");
}

static void expect_shard(const char *text, int k, int n, const char *from)
{
    Shard s;
    KvxError err = {0};
    if (shard_parse(text, &s, &err) != 0)
        fail_msg("'%s': refused: %s", text ? text : "(env)", err.msg);
    assert_int_equal(s.k, k);
    assert_int_equal(s.n, n);
    assert_string_equal(s.from, from);
    assert_int_equal(err.code, 0);
}

static void expect_refused(const char *text, const char *msg)
{
    Shard s;
    KvxError err = {0};
    assert_int_equal(shard_parse(text, &s, &err), -1);
    assert_int_equal(err.code, KVX_EINPUT);
    assert_string_equal(err.msg, msg);
    kvx_error_clear(&err);
}

static void test_parse_text(void **state)
{
    (void)state;
    slurm_clear();
    expect_shard("1/4", 0, 4, "--shard");
    expect_shard("4/4", 3, 4, "--shard");
    expect_shard("1/1", 0, 1, "--shard");
    expect_shard("17/17", 16, 17, "--shard");
    expect_refused("0/4", "--shard is '0/4' (expected K/N with 1 <= K <= N)");
    expect_refused("5/4", "--shard is '5/4' (expected K/N with 1 <= K <= N)");
    expect_refused("a/b", "--shard is 'a/b' (expected K/N with 1 <= K <= N)");
    expect_refused("1/0", "--shard is '1/0' (expected K/N with 1 <= K <= N)");
    expect_refused("-1/4", "--shard is '-1/4' (expected K/N with 1 <= K <= N)");
    expect_refused("1/4/2", "--shard is '1/4/2' (expected K/N with 1 <= K <= N)");
    expect_refused("2/", "--shard is '2/' (expected K/N with 1 <= K <= N)");
    expect_refused("3", "--shard is '3' (expected K/N, e.g. 1/4)");
    expect_refused("", "--shard is '' (expected K/N, e.g. 1/4)");
}

static void test_parse_slurm(void **state)
{
    (void)state;
    slurm_clear();
    expect_shard(NULL, 0, 1, "none");

    /* --array=0-3 */
    setenv("SLURM_ARRAY_TASK_ID", "2", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
    expect_shard(NULL, 2, 4, "SLURM_ARRAY_TASK_ID");
    /* --array=1-4: shards count from the array's first index */
    setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
    setenv("SLURM_ARRAY_TASK_ID", "1", 1);
    expect_shard(NULL, 0, 4, "SLURM_ARRAY_TASK_ID");
    setenv("SLURM_ARRAY_TASK_ID", "4", 1);
    expect_shard(NULL, 3, 4, "SLURM_ARRAY_TASK_ID");
    /* no MIN: taken as 0 */
    unsetenv("SLURM_ARRAY_TASK_MIN");
    setenv("SLURM_ARRAY_TASK_ID", "3", 1);
    expect_shard(NULL, 3, 4, "SLURM_ARRAY_TASK_ID");
    /* --shard wins over the environment */
    expect_shard("2/3", 1, 3, "--shard");

    /* an index past the count: a stepped or sparse array (--array=0-15:4) */
    setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
    setenv("SLURM_ARRAY_TASK_ID", "4", 1);
    expect_refused(NULL, "Slurm array variables do not make a shard (SLURM_ARRAY_TASK_ID=4, "
                         "SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=0); pass --shard K/N");
    setenv("SLURM_ARRAY_TASK_MIN", "5", 1);
    setenv("SLURM_ARRAY_TASK_ID", "4", 1);
    expect_refused(NULL, "Slurm array variables do not make a shard (SLURM_ARRAY_TASK_ID=4, "
                         "SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=5); pass --shard K/N");
    unsetenv("SLURM_ARRAY_TASK_MIN");
    setenv("SLURM_ARRAY_TASK_ID", "x", 1);
    expect_refused(NULL, "Slurm array variables do not make a shard (SLURM_ARRAY_TASK_ID=x, "
                         "SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=unset); pass --shard K/N");
    setenv("SLURM_ARRAY_TASK_ID", "0", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "0", 1);
    expect_refused(NULL, "Slurm array variables do not make a shard (SLURM_ARRAY_TASK_ID=0, "
                         "SLURM_ARRAY_TASK_COUNT=0, SLURM_ARRAY_TASK_MIN=unset); pass --shard K/N");

    /* an ID without a COUNT (a plain job's leftovers): the whole run */
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    setenv("SLURM_ARRAY_TASK_ID", "3", 1);
    expect_shard(NULL, 0, 1, "none");
    slurm_clear();
}

/* ---- kvx plan --shard (needs the binary: built by CMake) ------------------------- */

#ifdef KVX_BINARY
/* Run `kvx plan SPEC --arch sm_90 --points [--shard S]` and collect the point
 * labels it lists (one malloc'd string each, NULL-terminated).  NULL on failure. */
static char **plan_points(const char *spec, const char *shard, int *n)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT '%s' plan '%s' "
             "--arch sm_90 --points%s%s 2>&1", KVX_BINARY, spec, shard ? " --shard " : "", shard ? shard : "");
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    char line[1024];
    int in_points = 0, cap = 64;
    char **out = mem_calloc((size_t)cap, sizeof(char *));
    *n = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, "point ", 6)) {
            in_points = 1;
            continue;
        }
        int idx, src, off = 0;
        if (!in_points || sscanf(line, "%d %d %n", &idx, &src, &off) != 2 || !off)
            continue;
        line[strcspn(line, "\n")] = 0;
        if (*n + 1 >= cap)
            out = mem_realloc(out, sizeof(char *) * (size_t)(cap *= 2));
        out[(*n)++] = mem_strdup(line);
        out[*n] = NULL;
    }
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        for (int i = 0; i < *n; i++)
            free(out[i]);
        free(out);
        return NULL;
    }
    return out;
}

static void strs_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The label's workload group: every axis but strategy (the tiny spec's baseline). */
static const char *after_strategy(const char *line)
{
    const char *s = strstr(line, "strategy=");
    return s ? strchr(s, ' ') : NULL;
}

static void test_plan_shard(void **state)
{
    (void)state;
    const char *spec = KVX_SOURCE_DIR "/tests/data/specs/tiny.yaml";
    int nall = 0, n1 = 0, n2 = 0, n3 = 0;
    char **all = plan_points(spec, NULL, &nall);
    if (!all)
        skip(); /* the binary did not run: reported by the tests of plan itself */
    char **s1 = plan_points(spec, "1/2", &n1), **s2 = plan_points(spec, "2/2", &n2);
    assert_non_null(s1);
    assert_non_null(s2);
    assert_int_equal(nall, 40);
    assert_true(n1 > 0 && n2 > 0);
    assert_int_equal(n1 + n2, nall);
    /* every point in exactly one shard: the lines (index, source, label) match */
    for (int i = 0; i < nall; i++) {
        int hits = 0;
        for (int k = 0; k < n1; k++)
            hits += !strcmp(all[i], s1[k]);
        for (int k = 0; k < n2; k++)
            hits += !strcmp(all[i], s2[k]);
        if (hits != 1)
            fail_msg("'%s' is in %d shards", all[i], hits);
    }
    /* a point and its baseline partner (strategy=naive) share a shard */
    for (int a = 0; a < n1; a++)
        for (int b = 0; b < n2; b++)
            if (!strcmp(after_strategy(s1[a]), after_strategy(s2[b])))
                fail_msg("workload group '%s' split between shards", after_strategy(s1[a]));
    /* a bad --shard is refused (exit 2) */
    char **bad = plan_points(spec, "3/2", &n3);
    assert_null(bad);
    strs_free(all, nall);
    strs_free(s1, n1);
    strs_free(s2, n2);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_covers_and_keeps_groups),
        cmocka_unit_test(test_partition_is_deterministic),
        cmocka_unit_test(test_partition_rule),
        cmocka_unit_test(test_parse_text),
        cmocka_unit_test(test_parse_slurm),
#ifdef KVX_BINARY
        cmocka_unit_test(test_plan_shard),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
