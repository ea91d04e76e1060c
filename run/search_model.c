/* search_model: `model`, an additive model of the objective with an
 * exploration bonus, alternating with the best candidate's neighbours.
 *
 * After a seeded design (search_design.c) of init x (axes + 2) candidates, the objective is modelled as a mean plus one
 * effect per axis value (backfitted, each effect shrunk toward 0 by n / (n +
 * 1) of its n observations): tile sizes, vector widths and unroll factors
 * mostly act on their own, and such a model learns them from far fewer
 * measurements than there are candidates.  An invalid candidate counts as
 * worse than the worst valid one, so the values that fail to compile or
 * launch are steered away from.  Every other ask takes an unproposed
 * neighbour of the best candidate (search_local.c's neighbourhood), which
 * finds what the additive model cannot: the interactions near the optimum.
 * The exploration bonus of a value never told is kappa (SearchParams)
 * standard deviations of the told values, 1/sqrt(1 + n) of it after n. */
#include "search_internal.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Backfitting sweeps: the effects settle within a few on these spaces. */
#define MODEL_SWEEPS 4

struct ModelState {
    int *off;                   /* per axis: its first value's slot; off[naxes] slots in all */
    double *eff, *sum;          /* per slot: the value's effect; a sweep's residual sum */
    int *cnt;                   /* per slot: told candidates with that value */
    int *told;                  /* the told candidates, in tell order */
    double *yv;                 /* their modelled objective (invalid: a penalty) */
    int ninit;                  /* the design's candidates first */
    int flip;                   /* alternates the model and the neighbours */
};

int search_model_ninit(const Search *s)
{
    int k = (int)lround(s->par.init * (s->sp->naxes + 2));
    return k < 2 ? 2 : k;
}

int search_model_init(Search *s)
{
    const SearchSpace *sp = s->sp;
    ModelState *m = mem_calloc(1, sizeof *m);
    m->off = mem_alloc(sizeof(int) * (size_t)(sp->naxes + 1));
    m->off[0] = 0;
    for (int a = 0; a < sp->naxes; a++)
        m->off[a + 1] = m->off[a] + sp->nvals[a];
    size_t nv = (size_t)(m->off[sp->naxes] ? m->off[sp->naxes] : 1);
    m->eff = mem_calloc(nv, sizeof(double));
    m->sum = mem_calloc(nv, sizeof(double));
    m->cnt = mem_calloc(nv, sizeof(int));
    m->told = mem_alloc(sizeof(int) * (size_t)(sp->n ? sp->n : 1));
    m->yv = mem_alloc(sizeof(double) * (size_t)(sp->n ? sp->n : 1));
    s->model = m;
    m->ninit = search_model_ninit(s);
    return 0;
}

void search_model_clone(Search *to, const Search *from)
{
    const ModelState *m = from->model;
    size_t nv = (size_t)(m->off[from->sp->naxes] ? m->off[from->sp->naxes] : 1);
    size_t n = (size_t)(from->sp->n ? from->sp->n : 1);
    ModelState *c = search_dup(m, 1, sizeof *m);
    c->off = search_dup(m->off, (size_t)from->sp->naxes + 1, sizeof(int));
    c->eff = search_dup(m->eff, nv, sizeof(double));
    c->sum = search_dup(m->sum, nv, sizeof(double));
    c->cnt = search_dup(m->cnt, nv, sizeof(int));
    c->told = search_dup(m->told, n, sizeof(int));
    c->yv = search_dup(m->yv, n, sizeof(double));
    to->model = c;
}

void search_model_free(Search *s)
{
    ModelState *m = s->model;
    if (!m)
        return;
    free(m->off), free(m->eff), free(m->sum), free(m->cnt), free(m->told), free(m->yv);
    free(m);
    s->model = NULL;
}

/* The told candidates with their modelled objective into m->told/yv; their
 * count.  *sd: the spread of the valid ones (1 when fewer than two). */
static int gather(Search *s, double *mu, double *sd)
{
    ModelState *m = s->model;
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
    int n = 0, nvalid = 0;
    for (int c = 0; c < s->sp->n; c++) {
        if (!s->told[c])
            continue;
        m->told[n++] = c;
        if (isnan(s->y[c]))
            continue;
        nvalid++;
        lo = fmin(lo, s->y[c]), hi = fmax(hi, s->y[c]);
        sum += s->y[c], sq += s->y[c] * s->y[c];
    }
    double penalty = nvalid ? hi + 0.5 * (hi - lo) + 1e-3 : 1.0;
    *mu = 0;
    for (int i = 0; i < n; i++) {
        double y = s->y[m->told[i]];
        m->yv[i] = isnan(y) ? penalty : y;
        *mu += m->yv[i];
    }
    *mu /= n ? n : 1;
    double var = nvalid > 1 ? (sq - sum * sum / nvalid) / (nvalid - 1) : 1.0;
    *sd = var > 0 ? sqrt(var) : 1e-3;
    return n;
}

static double predict(const ModelState *m, const int *v, int naxes, int skip)
{
    double p = 0;
    for (int a = 0; a < naxes; a++)
        if (a != skip)
            p += m->eff[m->off[a] + v[a]];
    return p;
}

/* The effects, backfitted over the told candidates. */
static void fit(Search *s, int n, double mu)
{
    ModelState *m = s->model;
    int na = s->sp->naxes;
    size_t nv = (size_t)m->off[na];
    memset(m->eff, 0, sizeof(double) * nv);
    memset(m->cnt, 0, sizeof(int) * nv);
    for (int i = 0; i < n; i++)
        for (int a = 0; a < na; a++)
            m->cnt[m->off[a] + search_vals(s, m->told[i])[a]]++;
    for (int sweep = 0; sweep < MODEL_SWEEPS; sweep++)
        for (int a = 0; a < na; a++) {
            memset(m->sum + m->off[a], 0, sizeof(double) * (size_t)s->sp->nvals[a]);
            for (int i = 0; i < n; i++) {
                const int *v = search_vals(s, m->told[i]);
                m->sum[m->off[a] + v[a]] += m->yv[i] - mu - predict(m, v, na, a);
            }
            for (int k = m->off[a]; k < m->off[a + 1]; k++)
                m->eff[k] = m->sum[k] / (m->cnt[k] + 1);
        }
}

/* The unproposed candidate of the lowest prediction less its bonus, taken. */
static int best_predicted(Search *s, double sd)
{
    const ModelState *m = s->model;
    int na = s->sp->naxes, pick = -1;
    double pick_score = INFINITY;
    for (int c = 0; c < s->sp->n; c++) {
        if (s->proposed[c])
            continue;
        const int *v = search_vals(s, c);
        double bonus = 0;
        for (int a = 0; a < na; a++)
            bonus += 1.0 / sqrt(1.0 + m->cnt[m->off[a] + v[a]]);
        double score = predict(m, v, na, -1) - s->par.kappa * sd * bonus / na;
        if (score < pick_score)
            pick_score = score, pick = c;
    }
    return pick >= 0 ? search_take(s, pick) : -1;
}

/* An unproposed nearest neighbour of the best candidate, at random, or -1. */
static int best_neighbour(Search *s)
{
    int nb[2 * SEARCH_MAX_AXES], n = 0;
    for (int a = 0; a < s->sp->naxes; a++)
        for (int dir = -1; dir <= 1; dir += 2) {
            int c = search_step(s, s->best, a, dir);
            if (c >= 0 && !s->proposed[c])
                nb[n++] = c;
        }
    return n ? search_take(s, nb[search_rand(s, n)]) : -1;
}

int search_model_ask(Search *s)
{
    ModelState *m = s->model;
    if (s->nproposed < m->ninit || s->ntold == 0) {
        int c = search_take_design(s, m->ninit);
        return c >= 0 ? c : search_take_random(s);
    }
    m->flip ^= 1;
    if (m->flip && s->best >= 0) {
        int c = best_neighbour(s);
        if (c >= 0)
            return c;
    }
    double mu, sd;
    int n = gather(s, &mu, &sd);
    fit(s, n, mu);
    return best_predicted(s, sd);
}
