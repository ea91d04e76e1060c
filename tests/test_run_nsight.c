/* cpu: what Nsight tools and a user's own statistics get from `kvx run` on
 * the fake device (KVX_FAKE_GPUS, gpu/fake.h), kvx run as a child:
 * - NVTX ranges (gpu/nvtx.h): with NVTX_INJECTION64_PATH naming an injection
 *   library (tests/nvtx/inject.c, as nsys loads its own), every stored case
 *   has a range named "KERNEL LABEL" pushed by a worker, with its sample
 *   batches inside it ("KERNEL LABEL samples A-B", from sample 0 on), and
 *   every push is popped; without the variable nothing is loaded;
 * - --keep-samples: each timed case's sample times in cases.samples_json, as
 *   many as `samples`, their minimum and median those stored; none without
 *   the flag; `kvx export` carries them (a JSON array nested in JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/fake.yaml"
/* fake.yaml's ok strategies: 2 x 3 sizes x 2 modes */
#define OK_WHERE "strategy == \"base\" || strategy == \"alt\""
#define OK_CASES 12

/* kvx_child.h's shard and merge helpers are test_run_fake's. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

static void fake_env(void)
{
    setenv("KVX_FAKE_GPUS", "1", 1);
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    unsetenv("NVTX_INJECTION64_PATH");
}

/* How many lines of the log equal line. */
static int lines_equal(char **v, int n, const char *line)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += !strcmp(v[i], line);
    return k;
}

/* The log's lines with "<pid> " cut off; pushes and pops counted. */
static char **nvtx_lines(const char *path, int *n, int *push, int *pop)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int cap = 64;
    char **v = mem_alloc(sizeof *v * (size_t)cap), line[800];
    *n = *push = *pop = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *rest = strchr(line, ' ');
        assert_non_null(rest);
        rest++;
        *push += !strncmp(rest, "push ", 5);
        *pop += !strcmp(rest, "pop");
        if (*n == cap)
            v = mem_realloc(v, sizeof *v * (size_t)(cap *= 2));
        v[(*n)++] = mem_strdup(rest);
    }
    fclose(f);
    return v;
}

static void test_nvtx_ranges(void **state)
{
    (void)state;
    fake_env();
    const char *db = tmp_path("n.db"), *log = tmp_path("n.log"), *nlog = tmp_path("nvtx.log");
    setenv("KVX_TEST_NVTX_LOG", nlog, 1);
    /* no tool: NVTX loads nothing, and nothing is logged */
    assert_int_equal(kvx(log, "run", SPEC, "--db", tmp_path("plain.db"), "--where", OK_WHERE, NULL), 0);
    assert_int_equal(access(nlog, F_OK), -1);
    setenv("NVTX_INJECTION64_PATH", KVX_NVTX_INJECT, 1);
    int rc = kvx(log, "run", SPEC, "--db", db, "--where", OK_WHERE, NULL);
    unsetenv("NVTX_INJECTION64_PATH");
    if (rc != 0)
        dump(log);
    assert_int_equal(rc, 0);
    int n, push, pop, nlabels;
    char **v = nvtx_lines(nlog, &n, &push, &pop);
    char **labels = db_strings(db, "SELECT label FROM cases ORDER BY id", &nlabels);
    assert_int_equal(nlabels, OK_CASES);
    assert_true(push > OK_CASES);       /* a case and at least one batch each */
    assert_int_equal(push, pop);
    for (int i = 0; i < nlabels; i++) {
        char want[600];
        snprintf(want, sizeof want, "push fill %s", labels[i]);
        if (lines_equal(v, n, want) != 1)
            fail_msg("%d ranges '%s' (expected 1)", lines_equal(v, n, want), want);
        /* the first batch, inside the case's range: the next line */
        int at = 0;
        while (strcmp(v[at], want))
            at++;
        snprintf(want + strlen(want), sizeof want - strlen(want), " samples 0-");
        assert_true(at + 1 < n && !strncmp(v[at + 1], want, strlen(want)));
    }
    strings_free(labels, nlabels);
    strings_free(v, n);
    unsetenv("KVX_TEST_NVTX_LOG");
}

/* The numbers of a JSON array of numbers "[a,b,...]", sorted; their count. */
static int array_sorted(const char *s, double *out, int max)
{
    int n = 0;
    assert_true(*s == '[');
    for (const char *p = s + 1; *p && *p != ']' && n < max;) {
        char *end;
        out[n++] = strtod(p, &end);
        assert_true(end > p);
        p = *end == ',' ? end + 1 : end;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            double t = out[j];
            out[j] = out[j - 1], out[j - 1] = t;
        }
    return n;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b); }

static void test_keep_samples(void **state)
{
    (void)state;
    fake_env();
    const char *db = tmp_path("s.db"), *log = tmp_path("s.log");
    assert_int_equal(kvx(log, "run", SPEC, "--db", db, "--where", OK_WHERE, "--keep-samples", NULL), 0);
    int n;
    char **js = db_strings(db, "SELECT samples_json || ' ' || samples || ' ' || min_ms || ' ' || median_ms"
                               " FROM cases ORDER BY id", &n);
    assert_int_equal(n, OK_CASES);
    for (int i = 0; i < n; i++) {
        double t[64], min, median;
        int samples;
        char *sp = strchr(js[i], ' ');
        assert_non_null(sp);
        assert_int_equal(sscanf(sp, " %d %lf %lf", &samples, &min, &median), 3);
        *sp = 0;
        int k = array_sorted(js[i], t, 64);
        assert_int_equal(k, samples);
        assert_true(samples >= 3);
        assert_true(close_to(t[0], min));
        double med = k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
        if (!close_to(med, median))
            fail_msg("case %d: median of %s is %.9g, stored %.9g", i, js[i], med, median);
    }
    strings_free(js, n);
    /* kvx export: a column in CSV, an array in JSON */
    const char *csv = tmp_path("e.csv"), *json = tmp_path("e.json");
    assert_int_equal(kvx(log, "export", "--db", db, "--format", "csv", "--out", csv, NULL), 0);
    char *head = file_read(csv, NULL);
    assert_non_null(head);
    head[strcspn(head, "\n")] = 0;
    assert_non_null(strstr(head, ",samples_json"));
    free(head);
    assert_int_equal(kvx(log, "export", "--db", db, "--format", "json", "--out", json, NULL), 0);
    assert_true(log_has(json, "\"samples_json\": [0."));
    /* without the flag: none kept */
    const char *db2 = tmp_path("s2.db");
    assert_int_equal(kvx(log, "run", SPEC, "--db", db2, "--where", OK_WHERE, NULL), 0);
    assert_int_equal(db_int(db2, "SELECT count(*) FROM cases WHERE samples_json IS NOT NULL"), 0);
    assert_int_equal(db_int(db2, "SELECT count(*) FROM cases WHERE samples > 0"), OK_CASES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvtx_ranges),
        cmocka_unit_test(test_keep_samples),
    };
    if (child_dir_make("kvx-nsight") != 0)
        return 1;
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
