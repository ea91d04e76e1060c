/* cmd_spec_rows: the tables the spec verbs write with --format md|csv|json
 * (report/results_rows.h): `kvx plan`'s selected points and `kvx compile`'s
 * compiled sources, one row each, for scripts; without --format they print
 * their summaries (cmd_spec.c). */
#include "cmd.h"
#include "resolve/resolve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const CliChoice cli_list_formats[] = {
    {"text", CLI_TEXT}, {"md", RESULTS_MD}, {"csv", RESULTS_CSV}, {"json", RESULTS_JSON}, {NULL, 0},
};

/* ---- plan ------------------------------------------------------------------------ */

/* plan's columns: point, source, file, the axes, and with --resolve the
 * first launch's geometry, the launches and the declared metrics. */
static const char *const resolved_cols[] = {"grid", "block", "smem", "launches", "bytes", "atomics", "elements"};
#define NRESOLVED ((int)(sizeof resolved_cols / sizeof resolved_cols[0]))

static ResultsRows *plan_table(const CliSpecOpts *o, const Plan *p, FILE *out)
{
    const Spec *s = p->spec;
    int n = 3 + s->naxes + (o->resolve ? NRESOLVED : 0);
    const char **cols = mem_alloc(sizeof *cols * (size_t)n);
    cols[0] = "point", cols[1] = "source", cols[2] = "file";
    for (int a = 0; a < s->naxes; a++)
        cols[3 + a] = s->axes[a].name;
    for (int i = 0; o->resolve && i < NRESOLVED; i++)
        cols[3 + s->naxes + i] = resolved_cols[i];
    ResultsRows *t = results_rows_open(out, (ResultsFormat)o->format, cols, n);
    free(cols);
    return t;
}

/* The resolved columns of case c into cells (texts in a). */
static void resolved_cells(const CaseDesc *c, const double metrics[3], Arena *a, const char **cells)
{
    cells[0] = arena_printf(a, "%ux%ux%u", c->grid[0], c->grid[1], c->grid[2]);
    cells[1] = arena_printf(a, "%ux%ux%u", c->block[0], c->block[1], c->block[2]);
    cells[2] = arena_printf(a, "%u", c->smem);
    cells[3] = arena_printf(a, "%d", 1 + c->nnext);
    for (int k = 0; k < 3; k++)
        cells[4 + k] = isnan(metrics[k]) ? NULL : arena_printf(a, "%.15g", metrics[k]);
}

int cmd_spec_plan_rows(const CliSpecOpts *o, const Plan *p, const PlanRef *ref, const unsigned char *sel,
                       FILE *out)
{
    const Spec *s = p->spec;
    Resolver rv = {p, ref, &s->measure, 1};
    CaseDesc *c = mem_alloc(sizeof *c);
    Arena *a = arena_new();
    KvxError err = {0};
    const char **cells = mem_alloc(sizeof *cells * (size_t)(3 + s->naxes + NRESOLVED));
    ResultsRows *t = plan_table(o, p, out);
    int rc = 0;
    for (int i = 0; i < p->npoints && rc == 0; i++) {
        if (!sel[i])
            continue;
        const int *v = plan_point(p, i);
        cells[0] = arena_printf(a, "%d", i);
        cells[1] = arena_printf(a, "%d", p->point_src[i]);
        cells[2] = p->srcs[p->point_src[i]].file;
        for (int ax = 0; ax < s->naxes; ax++)
            cells[3 + ax] = s->axes[ax].vals[v[ax]].text;
        if (o->resolve) {
            ResolveCase rcs = {.point = i};
            double metrics[3];
            if ((rc = resolve_case(&rv, &rcs, c, metrics, &err)) != 0)
                break;
            resolved_cells(c, metrics, a, cells + 3 + s->naxes);
        }
        results_rows_add(t, cells);
    }
    results_rows_close(t);
    if (rc) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }
    free(cells);
    arena_free(a);
    free(c);
    return rc ? 2 : 0;
}

/* ---- compile --------------------------------------------------------------------- */

const char *const cmd_spec_compile_cols[] = {
    "arch", "source", "variant", "status", "compile_ms", "cache", "regs", "spill_stores", "spill_loads",
    "smem_static", "stack", "log",
};
const int cmd_spec_compile_ncols = (int)(sizeof cmd_spec_compile_cols / sizeof cmd_spec_compile_cols[0]);

void cmd_spec_compile_row(ResultsRows *t, const char *arch, const Source *so, const JitJob *j)
{
    char ms[32], nums[5][16];
    /* A cache hit compiled nothing now: no time (the entry's is of the
     * compile that made it). */
    snprintf(ms, sizeof ms, "%.3f", j->compile_ms);
    int v[5] = {j->regs, j->spill_stores, j->spill_loads, j->smem_static, j->stack};
    for (int k = 0; k < 5; k++)
        snprintf(nums[k], sizeof nums[k], "%d", v[k]);
    char *log = j->ok ? NULL : jit_log_map(j, j->log);
    const char *cells[] = {arch, so->file, so->label[0] ? so->label : NULL, j->ok ? "ok" : "compile_error", j->cached ? NULL : ms,
                           j->cached ? "hit" : "miss", nums[0], nums[1], nums[2], nums[3], nums[4],
                           log && *log ? log : NULL};
    results_rows_add(t, cells);
    free(log);
}
