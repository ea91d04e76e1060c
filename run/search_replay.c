/* search_replay: a strategy run against a recorded space, its objective
 * known for every candidate, as `kvx run --search` would run it (batches of
 * asks, then their tells in ask order): search_replay and search_stats; and
 * `kvx replay DB` (search_replay_main, run.h), which runs them for each
 * strategy and budget against a database that holds every variant of a spec
 * measured, without a GPU, and prints the fraction of the optimum the best
 * variant found reaches.  Budgets are prefixes of one run per seed, since no
 * strategy reads its budget.  Kernel Tuner's strategies replay the same
 * space from `kvx export --format kerneltuner` (search_kt.c;
 * bench/kernel_tuner_replay.py prints the same table). */
#include "search_db.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/results.h"
#include "store/store.h"
#include <stdlib.h>

/* The fraction of the optimum after each budget, for one seed. */
static void replay_seed(const SearchSpace *sp, const double *y, double y_opt, int kind, uint64_t seed,
                        const int *budgets, int nbudgets, int maxb, int batch, double *frac)
{
    Search *s = search_new(sp, kind, seed);
    int *asked = mem_alloc(sizeof(int) * (size_t)(batch > 0 ? batch : 1));
    double best = INFINITY;
    int done = 0;
    while (done < maxb) {
        int n = 0;
        for (; n < batch && done + n < maxb; n++)
            if ((asked[n] = search_ask(s)) < 0)
                break;
        for (int i = 0; i < n; i++) {
            search_tell(s, asked[i], y[asked[i]]);
            if (!isnan(y[asked[i]]))
                best = fmin(best, y[asked[i]]);
            done++;
            for (int b = 0; b < nbudgets; b++)
                if (budgets[b] == done)
                    frac[b] = isfinite(best) ? exp(y_opt - best) : 0;
        }
        if (n < batch && done < maxb)
            break;          /* the space is exhausted */
    }
    for (int b = 0; b < nbudgets; b++)
        if (budgets[b] > done)
            frac[b] = isfinite(best) ? exp(y_opt - best) : 0;
    free(asked);
    search_free(s);
}

int search_replay(const SearchSpace *sp, const double *y, int kind, uint64_t seed0, int nseeds,
                  const int *budgets, int nbudgets, int batch, double *frac)
{
    double y_opt = INFINITY;
    for (int c = 0; c < sp->n; c++)
        if (!isnan(y[c]))
            y_opt = fmin(y_opt, y[c]);
    if (!isfinite(y_opt))
        return -1;
    int maxb = 0;
    for (int b = 0; b < nbudgets; b++)
        maxb = budgets[b] > maxb ? budgets[b] : maxb;
    for (int k = 0; k < nseeds; k++)
        replay_seed(sp, y, y_opt, kind, seed0 + (uint64_t)k, budgets, nbudgets, maxb, batch,
                    frac + (size_t)k * (size_t)nbudgets);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

SearchStats search_stats(double *frac, int nseeds, double tol)
{
    SearchStats st = {NAN, NAN, NAN};
    if (nseeds <= 0)
        return st;
    qsort(frac, (size_t)nseeds, sizeof(double), cmp_double);
    st.median = nseeds % 2 ? frac[nseeds / 2] : 0.5 * (frac[nseeds / 2 - 1] + frac[nseeds / 2]);
    int r = (int)ceil(0.1 * nseeds);    /* nearest rank */
    st.p10 = frac[r > 0 ? r - 1 : 0];
    int within = 0;
    for (int i = 0; i < nseeds; i++)
        within += frac[i] >= 1.0 / (1.0 + tol) - 1e-12;
    st.within = (double)within / nseeds;
    return st;
}

/* ---- `kvx replay` ------------------------------------------------------------------------ */

/* "axis=value axis=value" of candidate c. */
static void label(const SearchRecord *r, int c, char *buf, size_t n)
{
    buf[0] = 0;
    for (int a = 0; a < r->sp.naxes; a++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s=%s", a ? " " : "", r->axis[a],
                 r->text[a][r->vals[(size_t)c * (size_t)r->sp.naxes + (size_t)a]]);
}

/* The variant with the lowest y (the objective's log, negated where higher
 * is better), -1 when none is valid. */
static int optimum(const SearchRecord *r)
{
    int opt = -1;
    for (int c = 0; c < r->sp.n; c++)
        if (!isnan(r->y[c]) && (opt < 0 || r->y[c] < r->y[opt]))
            opt = c;
    return opt;
}

static void header(const SearchReplayOpts *ro, const SearchRecord *r, const SearchObjective *o)
{
    int opt = optimum(r);
    char lab[1024];
    label(r, opt, lab, sizeof lab);
    printf("kvx replay %s: spec %s, %d variants over %d objective point%s (%d invalid, %d incomplete left out)\n",
           ro->db, r->spec, r->sp.n, r->npoints, r->npoints == 1 ? "" : "s", r->ninvalid, r->nincomplete);
    printf("objective %s, %s is better, geometric mean%s%s\n", o->column, o->lower ? "lower" : "higher",
           o->points ? " where " : "", o->points ? o->points : "");
    printf("optimum   %s: %.6g\n", lab, exp(o->lower ? r->y[opt] : -r->y[opt]));
    printf("seeds     %llu..%llu, batches of %d, within = at most %g%% from the optimum\n\n",
           (unsigned long long)ro->seed, (unsigned long long)(ro->seed + (uint64_t)ro->seeds - 1), ro->batch,
           100 * ro->tol);
}

/* The table's rows of strategy kind. */
static int replay_rows(const SearchReplayOpts *ro, const SearchRecord *r, int kind, const char **btext,
                       const int *budgets, int nb)
{
    double *frac = mem_alloc(sizeof(double) * (size_t)ro->seeds * (size_t)nb);
    double *col = mem_alloc(sizeof(double) * (size_t)ro->seeds);
    int rc = search_replay(&r->sp, r->y, kind, ro->seed, ro->seeds, budgets, nb, ro->batch, frac);
    for (int b = 0; rc == 0 && b < nb; b++) {
        for (int s = 0; s < ro->seeds; s++)
            col[s] = frac[(size_t)s * (size_t)nb + (size_t)b];
        SearchStats st = search_stats(col, ro->seeds, ro->tol);
        printf("| %s | %s | %d | %.3f | %.3f | %.0f%% |\n", search_names[kind], btext[b], budgets[b], st.median,
               st.p10, 100 * st.within);
    }
    free(frac), free(col);
    return rc;
}

/* The table of every strategy and budget of ro over r. */
static void replay_table(const SearchReplayOpts *ro, const SearchRecord *r, const SearchObjective *o, Arena *ar)
{
    int ns = 0, nb = 0, budgets[SEARCH_REPLAY_MAX];
    const char **names = results_split(ar, ro->strategies, &ns), **btext = results_split(ar, ro->budgets, &nb);
    KVX_ASSERT(ns <= SEARCH_REPLAY_MAX && nb <= SEARCH_REPLAY_MAX);   /* the CLI's setters */
    for (int b = 0; b < nb; b++) {
        SearchBudget sb;
        char why[128];
        search_budget_parse(btext[b], 0, &sb, why, sizeof why);
        budgets[b] = search_budget_variants(&sb, r->sp.n);
    }
    header(ro, r, o);
    printf("| strategy | budget | variants | median | p10 | within %g%% |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
           100 * ro->tol);
    for (int i = 0; i < ns; i++)
        replay_rows(ro, r, search_find(names[i]), btext, budgets, nb);
}

int search_replay_main(const SearchReplayOpts *ro)
{
    KvxError err = {0};
    SearchObjective o = {0};
    SearchRecord r = {0};
    Arena *ar = arena_new();
    ResultsSel sel = {.spec = ro->spec};
    int rc = 0;
    double t0 = wall_now_ms();
    Store *db = store_read_open(ro->db, &err);
    if (!db || results_resolve_spec(db, &sel, ar, &err) || search_objective_parse(ro->objective, "--objective", &o, &err) ||
        search_record_load(db, sel.spec, &o, &r, &err)) {
        kvx_error_print(&err, stderr);
        rc = err.code == KVX_EINPUT ? 2 : 3;
    } else {
        replay_table(ro, &r, &o, ar);
        printf("\n%.1f s\n", (wall_now_ms() - t0) / 1000);
    }
    search_record_free(&r);
    search_objective_free(&o);
    store_close(db);
    arena_free(ar);
    kvx_error_clear(&err);
    return rc;
}
