/* cmd_inspect: `kvx inspect SPEC`: what the compiler made of each variant's
 * atomics, for one or several archs, without a GPU.
 *
 * One arch: a line per variant (inspect_summary).  Several: a variant x arch
 * table of classifications (inspect_table), the static cross-architecture view.
 * --show source|ptx|sass prints the listings with the atomic sections marked. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "inspect.h"

int cmd_inspect(int argc, char **argv)
{
    CliSpecOpts o;
    int rc = cli_parse_spec_opts("inspect", argc, argv, &o);
    if (rc)
        return rc;
    char archs[16][16];
    int narch = 1;
    KvxError err = {0};
    if (o.archs) {
        if ((narch = cli_split_archs(o.archs, archs, 16, &err)) < 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            return 2;
        }
    } else {
        int gpu;
        cli_default_arch(archs[0], &gpu);
    }
    const char *dis = inspect_find_disassembler();
    if (!dis)
        printf("note: SASS needs nvdisasm or cuobjdump (neither found): PTX analysis only\n");
    char *cache = o.cache_dir ? xstrdup(o.cache_dir) : cli_default_cache_dir();

    /* Variants are the sources selected at the first arch; later archs must
     * give the same sources (they do unless the template reads device facts). */
    char **labels = NULL;
    InspectFacts *facts = NULL;
    int nvar = 0;
    for (int ai = 0; ai < narch && rc == 0; ai++) {
        DeviceFacts df;
        facts_for_arch(archs[ai], &df);
        Spec *s = spec_load(o.spec_path, &err);
        Plan p;
        if (!s || plan_build(s, &df, &p, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            spec_free(s);
            rc = 2;
            break;
        }
        unsigned char *sel = cli_select_points(&p, o.where, &err);
        if (!sel) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            plan_free(&p);
            spec_free(s);
            rc = 2;
            break;
        }
        JitJob *jobs = xcalloc((size_t)p.nsrcs, sizeof(JitJob));
        int n = 0;
        for (int k = 0; k < p.nsrcs; k++) {
            int any = 0;
            for (int i = 0; i < p.npoints && !any; i++)
                any = sel[i] && p.point_src[i] == k;
            if (!any)
                continue;
            JitJob *j = &jobs[n++];
            j->name = p.srcs[k].label[0] ? p.srcs[k].label : p.srcs[k].file;
            j->source = p.srcs[k].text;
            j->arch = archs[ai];
            j->options = s->options;
            j->noptions = s->noptions;
            j->use_cccl = s->use_cccl;
        }
        if (ai == 0) {
            nvar = n;
            labels = xcalloc((size_t)(n ? n : 1), sizeof(char *));
            facts = xcalloc((size_t)(n ? n : 1) * (size_t)narch, sizeof(InspectFacts));
            for (int v = 0; v < n; v++)
                labels[v] = xstrdup(jobs[v].name);
        } else if (n != nvar) {
            fprintf(stderr, "kvx inspect: %s gives %d sources where %s gave %d (the template reads device "
                    "facts); inspect one arch at a time\n", archs[ai], n, archs[0], nvar);
            rc = 2;
        }
        JitOptions jo = {.cache_dir = cache, .threads = o.jobs, .use_cache = !o.no_cache};
        if (rc == 0 && jit_compile_all(jobs, n, &jo, NULL, NULL, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        }
        for (int v = 0; v < n && rc == 0; v++) {
            JitJob *j = &jobs[v];
            InspectFacts *f = &facts[v * narch + ai];
            inspect_facts_init(f);
            if (!j->ok) {
                printf("%s [%s]: does not compile\n%s\n", j->name, archs[ai], j->log ? j->log : "");
                continue;
            }
            char *sass = NULL;
            inspect_set_compile(f, j);
            inspect_ptx(j->ptx, f);
            if (dis) {
                sass = inspect_disassemble(j->cubin, j->cubin_len, &err);
                if (!sass) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                } else {
                    inspect_sass(sass, f);
                }
            }
            if (narch == 1 || o.show) {
                StrBuf line;
                sb_init(&line);
                inspect_summary(f, &line);
                printf("%s [%s]: %s\n", j->name, archs[ai], sb_str(&line));
                sb_free(&line);
            }
            if (o.show) {
                StrBuf out;
                sb_init(&out);
                if (!strcmp(o.show, "source"))
                    sb_puts(&out, j->source);
                else if (!strcmp(o.show, "ptx"))
                    inspect_mark(j->ptx, 0, &out);
                else if (sass)
                    inspect_mark(sass, 1, &out);
                else
                    sb_puts(&out, "(no SASS: nvdisasm or cuobjdump is needed)\n");
                printf("%s\n", sb_str(&out));
                sb_free(&out);
            }
            free(sass);
        }
        for (int v = 0; v < n; v++)
            jit_job_release(&jobs[v]);
        free(jobs);
        free(sel);
        plan_free(&p);
        spec_free(s);
    }
    if (rc == 0 && narch > 1) {
        StrBuf t;
        sb_init(&t);
        const char *an[16];
        for (int a = 0; a < narch; a++)
            an[a] = archs[a];
        inspect_table((const char *const *)labels, nvar, an, narch, facts, &t);
        printf("%s", sb_str(&t));
        sb_free(&t);
    }
    for (int v = 0; v < nvar; v++)
        free(labels[v]);
    free(labels);
    free(facts);
    free(cache);
    return rc;
}
