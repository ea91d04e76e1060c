/* search_db: a search's objective and a recorded space.
 *
 * An objective is `VALUE[,POINTS]`: a stored value (store_search.h's
 * STORE_OBJECTIVES) and the workload points it is judged over (an
 * expression over the axes; all of them when absent).  A variant's
 * objective is the mean of log VALUE over those points, negated for a value
 * where higher is better, so that lower is better and fractions of the
 * optimum are ratios of geometric means; a variant with a point not ok (or
 * without the value) is invalid.
 *
 * A recorded space is every variant of a spec stored in a database with its
 * objective: what `kvx replay` runs the strategies against and `kvx export
 * --format kerneltuner` writes.  One that only searches stored (no run of
 * every selected point) is refused, naming the runs. */
#ifndef KVX_SEARCH_DB_H
#define KVX_SEARCH_DB_H

#include "run.h"
#include "search.h"

/* SearchObjective, search_objective_parse and _free are run.h's (the CLI
 * checks --objective with them). */

/* The objective of one variant from its points' values (n of them, NaN for
 * a point not ok): NaN when any is. */
double search_objective_of(const SearchObjective *o, const double *v, int n);

/* SearchBudget and search_budget_parse are run.h's. */
/* The variants a budget allows in a space of n (all of them for a time
 * budget, which stops the search by the clock instead); at least 1. */
int search_budget_variants(const SearchBudget *b, int n);

typedef struct SearchRecord {
    Arena *arena;
    const char *spec;
    int nall;                   /* stored axes */
    const char **axis;          /* the code axes' names */
    const char ***text;         /* per code axis: its values' text, declared order */
    int *nvals;
    SearchSpace sp;
    int *vals;
    double *y;                  /* per candidate: the objective, NaN invalid */
    int npoints;                /* objective points per candidate */
    int nincomplete;            /* variants without every objective point measured: left out */
    int ninvalid;
    /* Each objective point read: its case id and its candidate (-1: one left
     * out), npcase of them in case order. */
    int64_t *pcase;
    int *pcand;
    int npcase;
    /* pcase sorted, and each one's candidate: search_record_cand_of. */
    int64_t *sorted;
    int *sorted_cand;
    /* Per candidate: its simulated tuning cost, ms: its variant's compile
     * (the newest case's t_compile) plus its points' input, verify and
     * measure times; 0 where the store has none.  total_ms: all of them. */
    double *cost_ms;
    double total_ms;
} SearchRecord;

/* The recorded space of spec in db under objective o.  0, or -1 with err
 * (KVX_EINPUT: no such cases, no objective point, only searches stored). */
int search_record_load(Store *db, const char *spec, const SearchObjective *o, SearchRecord *r,
                       KvxError *err);
void search_record_free(SearchRecord *r);       /* accepts a zeroed one */

/* The candidate whose objective point case_id is, or -1. */
int search_record_cand_of(const SearchRecord *r, int64_t case_id);

#endif
