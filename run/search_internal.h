/* search_internal: what the strategies' files share.  search.c holds the
 * Search (what was proposed and told), the tuple index that finds a
 * candidate by its values, the random source, the constants and `random`;
 * search_design.c the seeded opening design; search_local.c is `local`,
 * search_model.c `model`, search_portfolio.c `portfolio`. */
#ifndef KVX_SEARCH_INTERNAL_H
#define KVX_SEARCH_INTERNAL_H

#include "search.h"

#include <stddef.h>

typedef struct LocalState LocalState;
typedef struct ModelState ModelState;
typedef struct PortfolioState PortfolioState;

struct Search {
    const SearchSpace *sp;
    int kind;
    SearchParams par;
    uint64_t rng;
    unsigned char *proposed;    /* per candidate */
    unsigned char *told;        /* per candidate */
    double *y;                  /* per candidate: what it gave once told (NaN invalid) */
    int nproposed, ntold;
    int best;                   /* the best valid candidate told, -1 none */
    /* `random`, and every strategy's random fallback: a Fisher-Yates shuffle
     * made one step at a time, so a draw costs O(1) whatever was proposed. */
    int *perm;
    int nperm;                  /* perm[0..nperm) drawn */
    /* The tuple index: open addressing over the candidates' values. */
    int *slot;                  /* -1 empty, else a candidate */
    size_t nslot;
    /* The opening design (search_design.c): its points' targets, drawn
     * when the first is asked; ndesign 0 until then. */
    int *strata;                /* ndesign * naxes: each axis' stratum of each point */
    int ndesign, idesign;       /* points, and those taken */
    LocalState *local;
    ModelState *model;
    PortfolioState *port;
};

/* A uniform integer in [0, n), n > 0. */
int search_rand(Search *s, int n);
/* A uniform double in [0, 1). */
double search_rand01(Search *s);
/* Propose cand: marks it and returns it. */
int search_take(Search *s, int cand);
/* A random candidate never proposed, taken; -1 when none is left. */
int search_take_random(Search *s);
/* The candidate whose values are vals (naxes of them), or -1. */
int search_lookup(const Search *s, const int *vals);
/* The nearest candidate from cand along axis a in direction dir (+1 or -1):
 * the same values but axis a's, the first valid one stepping that way; -1. */
int search_step(const Search *s, int cand, int a, int dir);
/* Candidate c's values. */
static inline const int *search_vals(const Search *s, int c)
{
    return s->sp->vals + (size_t)c * (size_t)s->sp->naxes;
}

/* A copy of n elements of size bytes at p (NULL for NULL); malloc'd. */
void *search_dup(const void *p, size_t n, size_t size);

/* The next point of a design of k (fixed by the first call) taken: the
 * unproposed candidate nearest its stratum on every axis; -1 once the k
 * points are taken (or the space is spent). */
int search_take_design(Search *s, int k);
void search_design_clone(Search *to, const Search *from);

int search_local_init(Search *s);
void search_local_clone(Search *to, const Search *from);
int search_local_ask(Search *s);
void search_local_tell(Search *s, int cand, double y);
void search_local_free(Search *s);

int search_model_init(Search *s);
void search_model_clone(Search *to, const Search *from);
int search_model_ask(Search *s);
void search_model_free(Search *s);
/* The model's design size: init x (axes + 2), at least 2. */
int search_model_ninit(const Search *s);

int search_portfolio_init(Search *s);
void search_portfolio_clone(Search *to, const Search *from);
int search_portfolio_ask(Search *s);
void search_portfolio_tell(Search *s, int cand, double y, double best_before);
void search_portfolio_free(Search *s);

#endif
