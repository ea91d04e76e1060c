/* Every source of every spec in specs/ compiles with NVRTC for sm_90, and a
 * second compile is served from the cache in full; of a space of thousands
 * (sgemm.yaml) an evenly spaced COMPILE_MAX_SOURCES, the last among them.  (The GPU's own arch is
 * tested by the gpu tests; sm_80 by kvx compile in the main job.) */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "compile/jit.h"
#include "gen/plan.h"

#define COMPILE_MAX_SOURCES 24

static int is_yaml(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void compile_spec(const char *path, const char *cache, int *failures, int *total)
{
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    Spec *s = spec_load(path, &err);
    assert_non_null(s);
    Plan p;
    assert_int_equal(plan_build(s, &f, &p, &err), 0);
    int n = p.nsrcs < COMPILE_MAX_SOURCES ? p.nsrcs : COMPILE_MAX_SOURCES;
    JitJob *jobs = calloc((size_t)n, sizeof(JitJob));
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < n; k++) {
            int src = n == p.nsrcs ? k : (int)((long long)k * (p.nsrcs - 1) / (n - 1));
            jit_job_release(&jobs[k]);
            memset(&jobs[k], 0, sizeof jobs[k]);
            jobs[k].name = p.srcs[src].file;
            jobs[k].source = p.srcs[src].text;
            jobs[k].arch = "sm_90";
            jobs[k].options = s->options;
            jobs[k].noptions = s->noptions;
            jobs[k].use_cccl = s->use_cccl;
        }
        JitOptions jo = {.cache_dir = cache, .threads = 0, .use_cache = 1};
        if (jit_compile_all(jobs, n, &jo, NULL, NULL, &err) != 0) {
            kvx_error_print(&err, stderr);
            fail_msg("jit failed on %s", path);
        }
        for (int k = 0; k < n; k++) {
            if (pass == 0 && !jobs[k].ok) {
                print_error("%s: %s does not compile:\n%s\n", path, jobs[k].name, jobs[k].log);
                (*failures)++;
            }
            if (pass == 1 && jobs[k].ok && !jobs[k].cached) {
                print_error("%s: %s was compiled again, not served from the cache\n", path, jobs[k].name);
                (*failures)++;
            }
        }
    }
    *total += n;
    for (int k = 0; k < n; k++)
        jit_job_release(&jobs[k]);
    free(jobs);
    plan_free(&p);
    spec_free(s);
}

static void test_specs_compile(void **state)
{
    char cache[] = "/tmp/kvx-cache-XXXXXX";
    assert_non_null(mkdtemp(cache));
    struct dirent **names;
    int n = scandir("specs", &names, is_yaml, by_name);
    assert_true(n >= 1);
    int failures = 0, total = 0;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "specs/%s", names[i]->d_name);
        compile_spec(path, cache, &failures, &total);
        free(names[i]);
    }
    free(names);
    printf("compiled %d sources for sm_90\n", total);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_specs_compile)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
