/* search: budgeted search over a spec's variants (issue 27), as pure
 * functions of a space, a seed and what they are told.
 *
 * A space is a list of candidates, each a tuple of value indices over the
 * code axes (declared order): only the variants that survive `where:` are in
 * it, so a strategy can never propose a pruned point.  A strategy proposes a
 * candidate (search_ask), never one it proposed before, and is told its
 * objective (search_tell: lower is better, NaN for a variant that failed to
 * compile, launch, verify or finish).  The same space, seed and sequence of
 * tells give the same proposals: `kvx run --search` rebuilds a killed
 * search by telling it what the store holds, and `kvx replay` judges a
 * strategy against a recorded space without a GPU.
 *
 * Asks may run ahead of tells (a batch is asked, measured, then told in ask
 * order); a strategy answers an ask with what it knows so far. */
#ifndef KVX_SEARCH_H
#define KVX_SEARCH_H

#include "run.h"

#include <stdint.h>

#define SEARCH_MAX_AXES 64       /* a spec's axes are 64-bit masks (SPEC_MAX_AXES) */

/* X(name, what it does): the order of --help and of docs/cli.md. */
#define SEARCH_STRATEGIES(X)                                                                   \
    X(random, "uniform sampling without repeats")                                              \
    X(local, "hill climbing along the axes' order (nearest valid value either side), "         \
             "restarts from a perturbed best or at random")                                    \
    X(model, "an additive model of the objective per axis value (invalid variants count "      \
             "as bad), the best predicted unmeasured variant with an exploration bonus, "       \
             "alternating with the best one's neighbours")

typedef enum {
#define X(n, d) SEARCH_##n,
    SEARCH_STRATEGIES(X)
#undef X
    SEARCH_COUNT
} SearchKind;

extern const char *const search_names[];   /* by SearchKind, then NULL */
extern const char *const search_docs[];

/* search_find and search_list, the kinds by name, are run.h's. */

/* The strategy that replays best (results/search-replay.md). */
#define SEARCH_DEFAULT SEARCH_model

/* SEARCH_BATCH, --batch's default, is run.h's. */
/* Variants whose sources a search compiles ahead of its asks, per compile
 * process, unless --ahead says (run_search.c's Ahead). */
#define SEARCH_AHEAD_PER_PROC 48

typedef struct SearchSpace {
    int n;                      /* candidates */
    int naxes;                  /* code axes */
    const int *vals;            /* n * naxes value indices, candidate-major; borrowed */
    const int *nvals;           /* per axis: its declared values; borrowed */
} SearchSpace;

typedef struct Search Search;

/* A strategy of kind over sp (borrowed: it must outlive the Search), its
 * random choices drawn from seed.  NULL when kind is out of range. */
Search *search_new(const SearchSpace *sp, int kind, uint64_t seed);
void search_free(Search *s);            /* accepts NULL */

/* The next candidate to measure, never one proposed before; -1 when every
 * candidate was proposed. */
int search_ask(Search *s);

/* What candidate cand (proposed) gave: y, lower is better, or NaN when it is
 * invalid (the strategies steer away from it). */
void search_tell(Search *s, int cand, double y);

/* The candidates proposed so far. */
int search_count(const Search *s);

/* What the next asks would propose if nothing more were told: up to max
 * candidates into out, their count; s itself does not change (a copy of it
 * is asked).  Exact for `random`; for the guided strategies a guess, which
 * `kvx run --search` compiles ahead while the GPU measures a batch. */
int search_peek(const Search *s, int *out, int max);

/* ---- search_replay.c: a strategy judged on a recorded space --------------------- */

/* The objective y[i] of every candidate of sp (NaN: invalid).  For each seed
 * of seeds (0..nseeds-1, from seed0) the strategy is run to the largest
 * budget in batches of batch, each ask told y; frac[s * nbudgets + b] is
 * exp(y_opt - y_best) after budgets[b] proposals (1: the optimum found; 0:
 * nothing valid yet).  frac has nseeds * nbudgets entries.  0, or -1 when
 * the space holds no valid candidate. */
int search_replay(const SearchSpace *sp, const double *y, int kind, uint64_t seed0, int nseeds,
                  const int *budgets, int nbudgets, int batch, double *frac);

/* The summary of nseeds fractions (reordered): the median, the 10th
 * percentile (nearest rank) and the share of seeds within tol of the optimum
 * (frac >= 1 / (1 + tol)). */
typedef struct SearchStats {
    double median, p10, within;
} SearchStats;
SearchStats search_stats(double *frac, int nseeds, double tol);

#endif
