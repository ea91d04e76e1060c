/* Golden tests: for every spec in specs/ (and the test spec), the point list and
 * every emitted source for sm_90 are compared byte for byte with the files
 * under tests/golden/<spec>/.  Run from the source directory (ctest does), so
 * that paths in source headers are the relative ones users see.
 * KVX_REGOLD=1 rewrites the golden files (review the diff before committing). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gen/plan.h"

#define GOLDEN_MAX_SOURCES 256    /* per spec; a larger one keeps GOLDEN_SAMPLE */
#define GOLDEN_SAMPLE 48

static int is_yaml(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int compare_or_write(const char *path, const char *text, int regold)
{
    if (regold)
        return file_write_atomic(path, text, strlen(text));
    char *want = file_read(path, NULL);
    if (!want) {
        print_error("missing golden file %s (KVX_REGOLD=1 makes it)\n", path);
        return -1;
    }
    int same = strcmp(want, text) == 0;
    if (!same) {
        size_t k = 0;
        while (want[k] && want[k] == text[k])
            k++;
        print_error("%s differs at byte %zu:\n  golden: %.60s\n  now:    %.60s\n", path, k, want + k, text + k);
    }
    free(want);
    return same ? 0 : -1;
}

static void golden_spec(const char *spec_path, int *failures)
{
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    Spec *s = spec_load(spec_path, &err);
    if (!s) {
        kvx_error_print(&err, stderr);
        fail_msg("%s does not load", spec_path);
    }
    Plan p;
    if (plan_build(s, &f, &p, &err) != 0) {
        kvx_error_print(&err, stderr);
        fail_msg("%s does not plan", spec_path);
    }
    int regold = getenv("KVX_REGOLD") != NULL;
    char dir[1024];
    snprintf(dir, sizeof dir, "tests/golden/%s", s->name);
    if (regold) {
        /* Start clean so that sources no longer emitted do not linger. */
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (e->d_name[0] != '.') {
                char path[2048];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        if (d)
            closedir(d);
        file_mkdir_p(dir);
    }
    StrBuf list;
    sb_init(&list);
    sb_printf(&list, "# %s: %d points of %d, %d sources (sm_90)\n", spec_path, p.npoints, p.nfull, p.nsrcs);
    for (int i = 0; i < p.npoints; i++) {
        char *l = plan_point_label(&p, i, ~0ULL);
        sb_printf(&list, "%d\t%s\t%s\n", i, p.srcs[p.point_src[i]].file, l);
        free(l);
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/points.tsv", dir);
    *failures += compare_or_write(path, list.p, regold) != 0;
    sb_free(&list);
    /* A space of thousands of sources (sgemm.yaml) keeps every point in
     * points.tsv but only GOLDEN_SAMPLE of its sources, evenly spaced
     * and the last among them: the template's branches, not 10 MB of text. */
    int step = p.nsrcs > GOLDEN_MAX_SOURCES ? (p.nsrcs + GOLDEN_SAMPLE - 1) / GOLDEN_SAMPLE : 1;
    for (int k = 0; k < p.nsrcs; k++) {
        if (k % step && k != p.nsrcs - 1)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, p.srcs[k].file);
        *failures += compare_or_write(path, p.srcs[k].text, regold) != 0;
    }
    plan_free(&p);
    spec_free(s);
}

static void test_golden(void **state)
{
    struct dirent **names;
    int n = scandir("specs", &names, is_yaml, by_name);
    assert_true(n >= 1);
    int failures = 0;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "specs/%s", names[i]->d_name);
        golden_spec(path, &failures);
        free(names[i]);
    }
    free(names);
    golden_spec("tests/data/specs/count.yaml", &failures);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
