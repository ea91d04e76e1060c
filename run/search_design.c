/* search_design: the seeded opening design of the guided strategies, a
 * Latin hypercube over the code axes' value indices (after McKay et al.,
 * 1979): for a design of k points each axis' values are cut into k strata
 * of equal width, and each axis deals its k strata to the k points in a
 * random order, so that every axis' range is covered evenly however few the
 * points.  A point's target on axis a is a random index inside its stratum;
 * the point taken is the unproposed candidate nearest the targets (the sum
 * over the axes of the squared distance in strata, ties to the first from a
 * random start), since `where:` prunes some combinations and others were
 * proposed already.  Invariants: at most k points, each proposed once. */
#include "search_internal.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The strata of a design of k points: per axis a random permutation of 0..k-1. */
static void strata_draw(Search *s, int k)
{
    int na = s->sp->naxes;
    s->ndesign = k;
    s->strata = mem_alloc(sizeof(int) * (size_t)k * (size_t)(na ? na : 1));
    for (int a = 0; a < na; a++) {
        for (int i = 0; i < k; i++)
            s->strata[(size_t)i * (size_t)na + (size_t)a] = i;
        for (int i = k - 1; i > 0; i--) {
            int j = search_rand(s, i + 1);
            int *x = &s->strata[(size_t)i * (size_t)na + (size_t)a], *y = &s->strata[(size_t)j * (size_t)na + (size_t)a];
            int t = *x;
            *x = *y, *y = t;
        }
    }
}

/* The unproposed candidate nearest target (value indices, fractional), or -1. */
static int nearest(const Search *s, const double *target, int start)
{
    const SearchSpace *sp = s->sp;
    int pick = -1;
    double pick_d = INFINITY;
    for (int i = 0; i < sp->n; i++) {
        int c = (start + i) % sp->n;
        if (s->proposed[c])
            continue;
        const int *v = search_vals(s, c);
        double d = 0;
        for (int a = 0; a < sp->naxes && d < pick_d; a++) {
            double x = (v[a] - target[a]) / sp->nvals[a];
            d += x * x;
        }
        if (d < pick_d)
            pick_d = d, pick = c;
    }
    return pick;
}

int search_take_design(Search *s, int k)
{
    int na = s->sp->naxes;
    if (s->ndesign == 0)
        strata_draw(s, k > 1 ? k : 1);
    if (s->idesign >= s->ndesign || s->nproposed >= s->sp->n)
        return -1;
    double target[SEARCH_MAX_AXES];
    const int *st = s->strata + (size_t)s->idesign++ * (size_t)na;
    for (int a = 0; a < na; a++) {
        /* Index space [0, nvals): stratum st[a] of ndesign, a random point in it. */
        double w = (double)s->sp->nvals[a] / s->ndesign;
        target[a] = floor((st[a] + search_rand01(s)) * w);
        if (target[a] > s->sp->nvals[a] - 1)
            target[a] = s->sp->nvals[a] - 1;
    }
    int c = nearest(s, target, search_rand(s, s->sp->n));
    return c >= 0 ? search_take(s, c) : -1;
}

void search_design_clone(Search *to, const Search *from)
{
    to->strata = from->ndesign ? search_dup(from->strata, (size_t)from->ndesign * (size_t)from->sp->naxes, sizeof(int))
                               : NULL;
}
