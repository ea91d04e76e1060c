/* store_search: what a search reads back (run/search_db.c): the recorded
 * space of a spec for `kvx replay` and `kvx export --format kerneltuner`,
 * and the outcome of a case by its key for a search that resumes. */
#ifndef KVX_STORE_SEARCH_H
#define KVX_STORE_SEARCH_H

#include "store.h"

#include <stdint.h>


/* The cases columns an objective may name are core/values.h's OBJ lines.
 * 1 when lower values of column are better, 0 when higher are, -1 when the
 * column is no objective. */
int store_objective_dir(const char *column);
/* "median_ms, min_ms, ...": for messages. */
const char *store_objective_list(void);

/* Each declared axis value of the newest measured run of spec, in declared
 * order: each(ctx, axis, value's text). */
typedef void (*StoreDeclFn)(void *ctx, const char *axis, const char *value);
int store_search_axes(Store *db, const char *spec, StoreDeclFn each, void *ctx, KvxError *err);

/* Each axis of each measured case of spec, oldest case first, the axes in
 * stored order: each(ctx, case id, its status, its column's value (NaN when
 * NULL), the axis, the value's text, 1 when a workload axis). */
typedef void (*StoreCaseAxisFn)(void *ctx, int64_t id, const char *status, double value, const char *axis,
                                const char *text, int workload);
int store_search_cases(Store *db, const char *spec, const char *column, StoreCaseAxisFn each,
                       void *ctx, KvxError *err);

/* A search as its runs are stored: the runs row's search_strategy,
 * search_seed and search_objective. */
typedef struct StoreSearchId {
    const char *strategy, *seed, *objective;
} StoreSearchId;

/* The stored case of key: *status (into status[32]; "" when none is stored),
 * *value its column's value (NaN when NULL), *cost_ms its time in the run
 * (t_input_ms + t_verify_ms + t_measure_ms, NaN unknown) and *same 1 when
 * the run that measured it was a search of id (this one, or an earlier try
 * of it: what counts against its budget), else 0.  0, or -1 with err. */
int store_search_case(Store *db, const char *key, const char *column, const StoreSearchId *id, char status[32],
                      double *value, double *cost_ms, int *same, KvxError *err);

/* What Kernel Tuner's cache file gives of a stored case (run/search_kt.c). */
typedef struct StoreSearchFacts {
    int64_t id, variant_id;
    const char *status;
    double compile_ms;            /* its variant's NVRTC time; NaN unknown */
    double verify_ms;             /* t_verify_ms; NaN unknown */
    double measure_ms;            /* t_input_ms + t_measure_ms (inputs and samples); NaN unknown */
    double gbs;                   /* NaN: none */
    /* NULL when none (or the file's layout predates it): the kept samples
     * (valid JSON: an array of ms), the variant's entry points joined by
     * '+' (kernels_json's, in their order). */
    const char *samples_json, *kernels;
} StoreSearchFacts;
typedef void (*StoreFactsFn)(void *ctx, const StoreSearchFacts *f);
/* Each measured case of spec, by id.  0, or -1 with err. */
int store_search_facts(Store *db, const char *spec, StoreFactsFn each, void *ctx, KvxError *err);
/* Each numeric `--counters` metric of each measured case of spec:
 * each(ctx, case id, metric, value).  0, or -1 with err. */
typedef void (*StoreMetricFn)(void *ctx, int64_t id, const char *metric, double value);
int store_search_counters(Store *db, const char *spec, StoreMetricFn each, void *ctx, KvxError *err);

/* The GPU name of the newest measured run of spec into out[n] ("" none). */
void store_search_gpu(Store *db, const char *spec, char *out, size_t n);

/* 1 when a run of spec in db was a search (kvx run --search), 0 when none
 * was (or the file predates searches). */
int store_search_runs(Store *db, const char *spec);

/* Which runs stored the measured cases of spec: those of every selected
 * point (nfull) and searches (nsearch; first and last their run ids, the
 * first one's strategy, budget and seed).  A file that predates searches
 * has none.  0, or -1 with err. */
typedef struct StoreRecordRuns {
    int nfull, nsearch;
    int64_t first, last;
    char strategy[64], budget[64], seed[32];
} StoreRecordRuns;
int store_search_record_runs(Store *db, const char *spec, StoreRecordRuns *out, KvxError *err);

#endif
