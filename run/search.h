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
 * order); a strategy answers an ask with what it knows so far.
 *
 * The guided strategies open with a seeded design (search_design.c: a Latin
 * hypercube over the axes' value indices, each point the nearest valid
 * candidate), not with the uniform draws of `random`, and each strategy
 * mixes its kind into the seed: no two strategies open with the same picks. */
#ifndef KVX_SEARCH_H
#define KVX_SEARCH_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

#define SEARCH_MAX_AXES 64       /* a spec's axes are 64-bit masks (SPEC_MAX_AXES) */

/* X(name, what it does): the order of --help and of docs/cli.md. */
#define SEARCH_STRATEGIES(X)                                                                   \
    X(random, "uniform sampling without repeats")                                              \
    X(local, "hill climbing along the axes' order (nearest valid value either side), "         \
             "restarts from a perturbed best or at random")                                    \
    X(model, "an additive model of the objective per axis value (invalid variants count "      \
             "as bad), the best predicted unmeasured variant with an exploration bonus, "       \
             "alternating with the best one's neighbours")                                      \
    X(portfolio, "a bandit over random sampling, local's climb and model's picks: each ask goes to "   \
                 "the one whose recent picks improved the best most (with a share for each), after a " \
                 "seeded design")

typedef enum {
#define X(n, d) SEARCH_##n,
    SEARCH_STRATEGIES(X)
#undef X
    SEARCH_COUNT
} SearchKind;

extern const char *const search_names[];   /* by SearchKind, then NULL */
extern const char *const search_docs[];

/* search_find and search_list, the kinds by name, are run.h's. */

/* The strategy that replays best over the benchmark set, chosen with its
 * constants (SEARCH_PARAMS' defaults) leaving each space out in turn
 * (results/search-spaces.md, `bench/search_bench.py --loo`); `kvx run
 * --search default` and `kvx replay --strategy default` name it. */
#define SEARCH_DEFAULT SEARCH_model

/* X(name, default, what it sets): a strategy's tunable constants, set as
 * `--strategy NAME:key=value:...` (replay) or `--search NAME:key=value`. */
#define SEARCH_PARAMS(X)                                                                        \
    X(kappa, 4.0, "model: the exploration bonus of a value never told, in standard deviations")  \
    X(init, 1.0, "model, portfolio: the seeded design, in multiples of (axes + 2) variants")     \
    X(floor, 0.2, "portfolio: each arm's least share of the asks")                               \
    X(window, 16, "portfolio: the picks of an arm its credit is taken over")

typedef struct SearchParams {
#define X(n, d, w) double n;
    SEARCH_PARAMS(X)
#undef X
} SearchParams;

/* The defaults of SEARCH_PARAMS. */
extern const SearchParams search_params_default;

/* "NAME[:key=value]...": *kind and *p (the defaults, then the values given).
 * 0, or -1 with why (a usage error's text). */
int search_parse(const char *text, int *kind, SearchParams *p, char *why, size_t nwhy);

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
 * random choices drawn from seed, its constants p (NULL: the defaults).
 * NULL when kind is out of range. */
Search *search_new(const SearchSpace *sp, int kind, uint64_t seed);
Search *search_new_with(const SearchSpace *sp, int kind, uint64_t seed, const SearchParams *p);
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

/* The candidates strategy kind (constants p, NULL the defaults) asks on sp
 * under seed, in batches of batch, each batch told y (NaN: invalid) in ask
 * order once asked whole, as `kvx run --search` runs it: at least max of
 * them into order, then more until the batches' simulated cost (cost_ms
 * per candidate, NULL none) reaches min_ms, fewer only when the space is
 * spent; their count.  order has room for sp->n.
 * Every ask is an evaluation, an invalid variant's too. */
int search_replay_order(const SearchSpace *sp, const double *y, int kind, const SearchParams *p, uint64_t seed,
                        int max, const double *cost_ms, double min_ms, int batch, int *order);

/* For each seed of seeds (0..nseeds-1, from seed0) the strategy is run to
 * the largest budget in batches of batch; frac[s * nbudgets + b] is
 * exp(y_opt - y_best) after budgets[b] evaluations (1: the optimum found;
 * 0: nothing valid yet).  frac has nseeds * nbudgets entries.  0, or -1
 * when the space holds no valid candidate. */
int search_replay(const SearchSpace *sp, const double *y, int kind, uint64_t seed0, int nseeds,
                  const int *budgets, int nbudgets, int batch, double *frac);

/* The fraction of the optimum after a time budget: the best y of the
 * evaluations of order[0..n) that started before t_ms of simulated tuning
 * time (cost_ms per candidate, summed in order); *evals how many did.
 * exp(y_opt - y_best), 0 when none was valid. */
double search_frac_at_time(const double *y, const double *cost_ms, double y_opt, const int *order, int n,
                           double t_ms, int *evals);

/* The summary of nseeds fractions (reordered): the median, the 10th
 * percentile (nearest rank), the share of seeds within tol of the optimum
 * (frac >= 1 / (1 + tol)), the mean and its standard error. */
typedef struct SearchStats {
    double median, p10, within, mean, se;
} SearchStats;
SearchStats search_stats(double *frac, int nseeds, double tol);

#endif
