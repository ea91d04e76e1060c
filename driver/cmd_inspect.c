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
    int narch = cli_archs(&o, archs, 16);
    if (narch < 0)
        return 2;
    KvxError err = {0};
    const char *dis = inspect_find_disassembler();
    if (!dis)
        printf("note: SASS needs nvdisasm or cuobjdump (neither found): PTX analysis only\n");
    char *cache = o.cache_dir ? xstrdup(o.cache_dir) : cli_default_cache_dir();

    /* Variants are keyed by their code-axis label: an arch whose where: prunes
     * some (a cc-dependent constraint) leaves those cells empty. */
    int cap = 64, nvar = 0;
    char **labels = xcalloc((size_t)cap, sizeof(char *));
    InspectFacts *facts = xcalloc((size_t)cap * (size_t)narch, sizeof(InspectFacts));
    unsigned char *present = xcalloc((size_t)cap * (size_t)narch, 1);
    for (int ai = 0; ai < narch && rc == 0; ai++) {
        Spec *s;
        Plan p;
        PlanRef ref;
        unsigned char *sel;
        if ((rc = cli_load_plan(o.spec_path, o.where, archs[ai], &s, &p, &ref, &sel)))
            break;
        JitJob *jobs = xcalloc((size_t)(p.nsrcs ? p.nsrcs : 1), sizeof(JitJob));
        int *row = xmalloc(sizeof(int) * (size_t)(p.nsrcs ? p.nsrcs : 1));
        int n = 0;
        for (int k = 0; k < p.nsrcs; k++) {
            int any = 0;
            for (int i = 0; i < p.npoints && !any; i++)
                any = sel[i] && p.point_src[i] == k;
            if (!any)
                continue;
            JitJob *j = &jobs[n];
            j->name = p.srcs[k].label[0] ? p.srcs[k].label : p.srcs[k].file;
            j->source = p.srcs[k].text;
            j->arch = archs[ai];
            j->options = s->options;
            j->noptions = s->noptions;
            j->use_cccl = s->use_cccl;
            int v = 0;
            while (v < nvar && strcmp(labels[v], j->name) != 0)
                v++;
            if (v == nvar) {
                if (nvar == cap) {
                    labels = xrealloc(labels, sizeof(char *) * (size_t)(cap * 2));
                    facts = xrealloc(facts, sizeof(InspectFacts) * (size_t)(cap * 2) * (size_t)narch);
                    present = xrealloc(present, (size_t)(cap * 2) * (size_t)narch);
                    memset(present + (size_t)cap * (size_t)narch, 0, (size_t)cap * (size_t)narch);
                    cap *= 2;
                }
                labels[nvar++] = xstrdup(j->name);
            }
            row[n++] = v;
        }
        JitOptions jo = {.cache_dir = cache, .threads = o.jobs, .use_cache = !o.no_cache};
        if (jit_compile_all(jobs, n, &jo, NULL, NULL, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        }
        for (int v = 0; v < n && rc == 0; v++) {
            JitJob *j = &jobs[v];
            InspectFacts *f = &facts[row[v] * narch + ai];
            present[row[v] * narch + ai] = 1;
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
                /* Each atomic site: what the source does, what ptxas did. */
                sb_reset(&line);
                inspect_sites(f, &line);
                for (const char *q = sb_str(&line); *q;) {
                    size_t len = strcspn(q, "\n");
                    printf("    site: %.*s\n", (int)len, q);
                    q += len + (q[len] == '\n');
                }
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
        free(row);
        free(sel);
        plan_free(&p);
        plan_ref_free(&ref);
        spec_free(s);
    }
    if (rc == 0 && narch > 1) {
        /* The variant x arch table; a cell the arch's where: prunes says so. */
        StrBuf t, cell;
        sb_init(&t);
        sb_init(&cell);
        sb_puts(&t, "| variant |");
        for (int a = 0; a < narch; a++)
            sb_printf(&t, " %s |", archs[a]);
        sb_puts(&t, "\n|---|");
        for (int a = 0; a < narch; a++)
            sb_puts(&t, "---|");
        sb_putc(&t, '\n');
        for (int v = 0; v < nvar; v++) {
            sb_printf(&t, "| %s |", labels[v]);
            for (int a = 0; a < narch; a++) {
                sb_reset(&cell);
                if (present[v * narch + a])
                    inspect_tags(&facts[v * narch + a], &cell);
                else
                    sb_puts(&cell, "(not in this arch's plan)");
                sb_printf(&t, " %s |", sb_str(&cell));
            }
            sb_putc(&t, '\n');
        }
        printf("%s", sb_str(&t));
        sb_free(&t);
        sb_free(&cell);
    }
    for (int v = 0; v < nvar; v++)
        free(labels[v]);
    free(labels);
    free(facts);
    free(present);
    free(cache);
    return rc;
}
