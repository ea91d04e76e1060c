/* run_cases: the case list of `kvx run` and what is printed from it at the
 * end.  A case is a selected point of this shard; its store key hashes the
 * spec, the source, the options, the arch, the point (plan_point_key_text:
 * canonical values, not the display label), the device and the measurement
 * settings, so a case already stored is skipped unless --rerun.
 * Cases sort by workload key (the point with the baseline axes set to the
 * baseline), baseline first: a workload group is contiguous, so one worker
 * generates its inputs once and has the baseline output for the differential
 * check. */
#include "run_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON of axis values -------------------------------------------------------------- */

char *run_axes_json(const Plan *p, int point, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, point);
    StrBuf b;
    sb_init(&b);
    sb_putc(&b, '{');
    int first = 1;
    for (int a = 0; a < s->naxes; a++) {
        if (!(mask & (1ULL << a)))
            continue;
        if (!first)
            sb_putc(&b, ',');
        first = 0;
        json_put_str(&b, s->axes[a].name, JSON_BYTES);
        sb_putc(&b, ':');
        const AxisValue *av = &s->axes[a].vals[v[a]];
        if (av->v.kind == VAL_STR)
            json_put_str(&b, av->text, JSON_BYTES);
        else
            sb_puts(&b, av->text);
    }
    sb_putc(&b, '}');
    return sb_take(&b);
}

void run_baseline_json(const Spec *s, StrBuf *b)
{
    sb_putc(b, '{');
    for (int k = 0; k < s->nbaseline; k++) {
        if (k)
            sb_putc(b, ',');
        const Axis *ax = &s->axes[s->baseline[k].axis];
        json_put_str(b, ax->name, JSON_BYTES);
        sb_putc(b, ':');
        const AxisValue *av = &ax->vals[s->baseline[k].value];
        if (av->v.kind == VAL_STR)
            json_put_str(b, av->text, JSON_BYTES);
        else
            sb_puts(b, av->text);
    }
    sb_putc(b, '}');
}

void run_declared_json(const Spec *s, StrBuf *b)
{
    sb_putc(b, '{');
    for (int a = 0; a < s->naxes; a++) {
        if (a)
            sb_putc(b, ',');
        json_put_str(b, s->axes[a].name, JSON_BYTES);
        sb_puts(b, ":[");
        for (int v = 0; v < s->axes[a].nvals; v++) {
            const AxisValue *av = &s->axes[a].vals[v];
            if (v)
                sb_putc(b, ',');
            if (av->v.kind == VAL_STR)
                json_put_str(b, av->text, JSON_BYTES);
            else
                sb_puts(b, av->text);
        }
        sb_putc(b, ']');
    }
    sb_putc(b, '}');
}

/* ---- the case list ------------------------------------------------------------------------ */

void run_case_key(const Plan *p, int point, const RunKeyEnv *ke, char key[65])
{
    char *text = plan_point_key_text(p, point);
    const char *parts[] = {p->spec->name, p->srcs[p->point_src[point]].hash, ke->options, ke->arch, text,
                           ke->device_uuid, ke->measure_json, NULL};
    store_case_key(parts, key);
    free(text);
}

int run_point_is_baseline(const Plan *p, int point)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, point);
    int is = s->nbaseline > 0;
    for (int b = 0; b < s->nbaseline; b++)
        is &= v[s->baseline[b].axis] == s->baseline[b].value;
    return is;
}

static int cmp_case(const void *x, const void *y)
{
    const RunCase *a = x, *b = y;
    int c = strcmp(a->workload_key, b->workload_key);
    if (c)
        return c;
    if (a->is_baseline != b->is_baseline)
        return b->is_baseline - a->is_baseline;
    return a->point - b->point;
}

int run_cases_list(const Plan *p, const unsigned char *sel, const Shard *shard,
                   const RunKeyEnv *ke, Store *st, int rerun, RunCase **out, int *out_n,
                   int *out_stored, int *out_sel)
{
    KvxError err = {0};
    int rc = 0;
    /* The workload key groups a point with its baseline partner (the point with
     * the baseline axes set to the baseline's values). */
    RunCase *cases = mem_calloc((size_t)(p->npoints ? p->npoints : 1), sizeof(RunCase));
    int ncases = 0, nstored = 0;
    ShardPoints sp;
    shard_points(p, sel, shard->n, &sp);
    for (int q = 0; q < sp.n && rc == 0; q++) {
        if (sp.shard[q] != shard->k)
            continue;
        int i = sp.point[q];
        RunCase *c = &cases[ncases];
        c->point = i;
        c->src = p->point_src[i];
        c->label = plan_point_label(p, i, ~0ULL);
        c->axes_json = run_axes_json(p, i, ~0ULL);
        c->workload_json = run_axes_json(p, i, ~p->code_axes);
        memcpy(c->workload_key, sp.key[q], 65);
        run_case_key(p, i, ke, c->key);
        c->is_baseline = run_point_is_baseline(p, i);
        int stored = store_has_case(st, c->key, &err);
        if (stored < 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        } else if (stored && !rerun) {
            nstored++;
            free(c->label);
            free(c->axes_json);
            free(c->workload_json);
            continue;
        } else if (stored && store_forget_case(st, c->key, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        }
        ncases++;
    }
    int nsel = sp.n;
    shard_points_free(&sp);
    qsort(cases, (size_t)ncases, sizeof(RunCase), cmp_case);
    *out = cases;
    *out_n = ncases;
    *out_stored = nstored;
    *out_sel = nsel;
    return rc;
}

void run_cases_free(RunCase *cases, int n)
{
    for (int i = 0; cases && i < n; i++) {
        free(cases[i].label);
        free(cases[i].axes_json);
        free(cases[i].workload_json);
        free(cases[i].why);
    }
    free(cases);
}

/* ---- the best variants ---------------------------------------------------------------- */

/* Cases that compare with each other: with a baseline, those that differ only
 * in the baseline axes (one workload key); without one, those at one workload
 * point (the axes other than the code axes). */
static const char *group_of(const RunCase *c, uint64_t base_mask)
{
    return base_mask ? c->workload_key : c->workload_json;
}

/* qsort context for cmp_group: a run sorts its cases once, at its end. */
static const RunCase *group_cases;
static uint64_t group_mask;
static int cmp_group(const void *x, const void *y)
{
    const int a = *(const int *)x, b = *(const int *)y;
    int c = strcmp(group_of(&group_cases[a], group_mask), group_of(&group_cases[b], group_mask));
    return c ? c : a - b;
}

/* Order of two points by their values of the axes outside skip_mask, in
 * declaration order. */
static int point_cmp(const Plan *p, int a, int b, uint64_t skip_mask)
{
    const int *va = plan_point(p, a), *vb = plan_point(p, b);
    for (int ax = 0; ax < p->spec->naxes; ax++)
        if (!(skip_mask >> ax & 1) && va[ax] != vb[ax])
            return va[ax] < vb[ax] ? -1 : 1;
    return 0;
}

/* A group's best case and its speed-up, and their order for printing. */
typedef struct BestGroup {
    int best;
    double speedup;
} BestGroup;

static const Plan *order_plan;
static uint64_t order_skip;
static const RunCase *order_cases;
static int cmp_best_group(const void *x, const void *y)
{
    const BestGroup *a = x, *b = y;
    return point_cmp(order_plan, order_cases[a->best].point, order_cases[b->best].point, order_skip);
}

/* The groups of comparable cases (the same point but for the baseline axes)
 * that have a median: each one's best case and its speed-up over the group's
 * baseline case, into grp (n entries of room), in the plan's point order with
 * the choice axes left out.  Returns the number of groups. */
static int best_groups(const Plan *p, const RunCase *cases, int n,
                       uint64_t base_mask, uint64_t choice_mask, BestGroup *grp)
{
    /* Case indices sorted by group, then each group walked once: n log n. */
    int *order = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        order[i] = i;
    group_cases = cases, group_mask = base_mask;
    qsort(order, (size_t)n, sizeof *order, cmp_group);
    int ngroups = 0;
    for (int i = 0; i < n;) {
        const char *g = group_of(&cases[order[i]], base_mask);
        int b = -1, base = -1, end = i;
        for (; end < n && !strcmp(group_of(&cases[order[end]], base_mask), g); end++) {
            const int k = order[end];
            if (!isnan(cases[k].median_ms) && (b < 0 || cases[k].median_ms < cases[b].median_ms))
                b = k;
            if (cases[k].is_baseline)
                base = k;
        }
        i = end;
        if (b < 0)
            continue;
        grp[ngroups++] = (BestGroup){b, base >= 0 ? cases[base].median_ms / cases[b].median_ms : NAN};
    }
    free(order);
    order_plan = p, order_skip = choice_mask, order_cases = cases;
    qsort(grp, (size_t)ngroups, sizeof *grp, cmp_best_group);
    return ngroups;
}

/* One line per group: where, the winning choice, its median and speed-up. */
static void best_list(const Plan *p, const RunCase *cases, const BestGroup *grp, int ngroups, uint64_t choice_mask)
{
    printf("\nbest variant per point (speed-up over the baseline at the same point):\n");
    for (int g = 0; g < ngroups; g++) {
        char *where = plan_point_label(p, cases[grp[g].best].point, ~choice_mask);
        char *what = plan_point_label(p, cases[grp[g].best].point, choice_mask);
        printf("  %-44s %-44s %10.4f ms", where, what, cases[grp[g].best].median_ms);
        if (!isnan(grp[g].speedup))
            printf("  %6.2fx", grp[g].speedup);
        printf("\n");
        free(where);
        free(what);
    }
}

/* A winning choice of the baseline axes: how often it won, and the range of
 * its speed-ups (lo > hi when none is known). */
typedef struct Winner {
    char *what;
    int wins;
    double lo, hi;
} Winner;

/* Too many points to list: each winner once, most wins first (a stable
 * insertion sort: equal counts keep their first win's order). */
static void best_tally(const Plan *p, const RunCase *cases, const BestGroup *grp, int ngroups,
                       uint64_t choice_mask)
{
    Winner *w = mem_calloc((size_t)ngroups, sizeof *w);
    int nw = 0;
    for (int g = 0; g < ngroups; g++) {
        char *what = plan_point_label(p, cases[grp[g].best].point, choice_mask);
        int k = 0;
        while (k < nw && strcmp(w[k].what, what))
            k++;
        if (k == nw)
            w[nw++] = (Winner){what, 0, INFINITY, -INFINITY};
        else
            free(what);
        w[k].wins++;
        if (!isnan(grp[g].speedup)) {
            w[k].lo = fmin(w[k].lo, grp[g].speedup);
            w[k].hi = fmax(w[k].hi, grp[g].speedup);
        }
    }
    for (int k = 1; k < nw; k++)
        for (int j = k; j > 0 && w[j - 1].wins < w[j].wins; j--) {
            Winner t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    printf("\nbest variant at each of %d points, by how often it won (speed-up over the baseline):\n",
           ngroups);
    for (int k = 0; k < nw; k++) {
        printf("  %-44s best at %4d of %d points", w[k].what, w[k].wins, ngroups);
        if (w[k].lo <= w[k].hi)
            printf("   %.2fx .. %.2fx", w[k].lo, w[k].hi);
        printf("\n");
        free(w[k].what);
    }
    free(w);
}

/* One line per group when there are few, else how often each choice of the
 * baseline axes won, with the range of its speed-ups. */
void run_print_best(const Plan *p, const RunCase *cases, int n,
                    uint64_t base_mask)
{
    enum { LIST_MAX = 16 };
    const uint64_t choice_mask = base_mask ? base_mask : p->code_axes;
    BestGroup *grp = mem_alloc(sizeof *grp * (size_t)(n ? n : 1));
    int ngroups = best_groups(p, cases, n, base_mask, choice_mask, grp);
    if (ngroups && ngroups <= LIST_MAX)
        best_list(p, cases, grp, ngroups, choice_mask);
    else if (ngroups)
        best_tally(p, cases, grp, ngroups, choice_mask);
    free(grp);
}
