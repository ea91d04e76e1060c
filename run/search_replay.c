/* search_replay: a strategy run against a recorded space, its objective
 * known for every candidate, as `kvx run --search` would run it (batches of
 * asks, then their tells in ask order): what `kvx replay` prints.  Budgets
 * are prefixes of one run per seed, since no strategy reads its budget. */
#include "search.h"
#include "core/util.h"

#include <math.h>
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
