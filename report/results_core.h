/* results_core: what results*.c share: the set of cases a table is built
 * from, loaded by results.c through the store's typed queries
 * (store/store_cases.h: axes, values, --where as a checked condition,
 * baselines) with ratios, and small formatting helpers.
 * Internal to the results verbs; report/results.h is the public face. */
#ifndef KVX_RESULTS_CORE_H
#define KVX_RESULTS_CORE_H

#include "gen/spec.h"
#include "results.h"

#define RESULTS_MAX_AXES 64

/* ---- results_nvbench.c ---------------------------------------------------- */

/* `kvx export --format nvbench`: the newest measured case of each label of
 * spec (NULL: every spec, a benchmark each) in nvbench's JSON shape.  0 or -1. */
int results_export_nvbench(Store *db, const char *spec, FILE *out, KvxError *err);
/* Whether an import's text is nvbench JSON (an object with "benchmarks"). */
int results_nvbench_is(const char *text);
/* nvbench JSON (read from path) as the reference CSV `kvx import` reads (axes, then median_ms,
 * mean_ms, min_ms, max_ms, stdev_ms, noise, gbs, elems_per_s, status);
 * *gpu gets the first state's device name (in a), or NULL.  The CSV
 * (malloc'd), or NULL with err. */
char *results_nvbench_csv(Store *db, const char *json, const char *path, Arena *a, const char **gpu,
                          KvxError *err);

/* ---- results_kt.c ---------------------------------------------------------- */

/* Whether an import's text is a Kernel Tuner cache file (an object with
 * "tune_params_keys" and "cache"). */
int results_kt_is(const char *text);
/* A Kernel Tuner cache file's JSON (read from path; one left open by an
 * interrupted tuning too) as the reference CSV `kvx import` reads: the tune
 * parameters, then median_ms, mean_ms, min_ms, max_ms, stdev_ms, gbs,
 * status; *gpu gets its device_name (in a) or NULL; left, where not NULL,
 * gets the names of the entries' fields that have no column ("compile_time,
 * timestamp, ...").  The CSV (malloc'd), or NULL with err. */
char *results_kt_csv(Store *db, const char *json, const char *path, Arena *a, const char **gpu, StrBuf *left,
                     KvxError *err);

/* ---- results_io.c ----------------------------------------------------------- */

/* 1 when name is a column `kvx import` reads as a value (median_ms, ...,
 * status), not as an axis. */
int results_import_column(const char *name);

typedef struct RVal {
    int is_num;
    double num;
    const char *text;
    int decl;            /* position in the run's declared axis values; -1 */
    int rank;            /* display order */
} RVal;

typedef struct AxisInfo {
    const char *name;
    RVal *vals;
    int nvals, cap;
    int all_num;
} AxisInfo;

typedef struct Rec {
    int64_t id, run_id;
    int ax[RESULTS_MAX_AXES];    /* value index per axis, -1 when the case lacks it */
    const char *status;
    double raw;          /* the value column, NaN when NULL or text */
    const char *rawtext; /* the value column when it is text (inspect facts) */
    double noise;
    int match;           /* satisfies --where */
    double v;            /* what the cell uses (raw or ratio); NaN when unusable */
    const char *fail;    /* why unusable: a status, "no baseline", ... */
    const char *vstatus; /* --failed-values: v is a failed case's value, this its status */
} Rec;

typedef struct CaseSet {
    Arena *arena;
    ResultsSel sel;
    AxisInfo axes[RESULTS_MAX_AXES];
    int naxes;
    Rec *recs;
    int nrecs;
    int vidx;                   /* the SpecValue shown; -1 for inspect.KEY, counter.NAME */
    const char *value_name;
    ValueUnit unit;
    int measured;
    int failed_values;
    int base_axis[RESULTS_MAX_AXES], base_val[RESULTS_MAX_AXES], nbase;
    int base_borrowed;          /* the baseline is the fallback, none was stored */
    int searched;               /* a run of the spec was a search: a cell without cases is unmeasured */
    const char *where_misses;   /* the --where's `axis == value` whose value no case has, a line
                                   each with its position and the axis's values; NULL: none */
} CaseSet;

/* One axis value of a baseline handed from one case set to another (compare:
 * an imported side that stores no baseline takes the other side's). */
typedef struct BaseValue {
    const char *axis;
    const char *text;
    int is_num;
    double num;
} BaseValue;

/* The value name that loads each case's stored detail (its error, the first
 * differing elements) as text: --failures' column.  Matched by address, so no
 * --value a user types can name it. */
extern const char results_detail_value[];

/* --failures (results_failures.c): the matching cases whose status is not ok,
 * one row each.  0, 1 when there is none (err says so), or -1 with err. */
int results_failures(Store *db, const TableOpts *o, FILE *out, KvxError *err);

/* Load the cases of sel (spec resolved when NULL) with o's value, whether they
 * match o->where (o->spec, when given, lends its `let:` names to it), and when
 * o->ratio is set each one's ratio to its baseline case (o->baseline
 * "axis=value,..."; NULL: the runs' stored baseline, else fb[0..nfb) when
 * nfb > 0).  A ratio's noise combines the case's and its baseline's.  0, or -1
 * with err; cs is to be freed with results_caseset_free either way (NULL is fine). */
int results_caseset_load(Store *db, const ResultsSel *sel, const TableOpts *o,
                 const BaseValue *fb, int nfb, CaseSet *cs, KvxError *err);
void results_caseset_free(CaseSet *cs);
int results_caseset_axis(const CaseSet *cs, const char *name);     /* -1 if none */
const char *results_caseset_axis_list(const CaseSet *cs);              /* "a, b, c" */

/* `kvx report`'s plots of spec's measured runs into DIR/<spec>/, with their
 * links and captions in md (results_report_plot.c); baseline: the spec's,
 * as text, or NULL. */
void results_report_plots(Store *db, const Spec *spec, const StoreRunInfo *runs, int nruns, const char *dir,
                          const char *baseline, FILE *md);

/* Status names in tabulation order (host/case.h), and a status's place. */
extern const char *const results_status_names[];
int results_status_rank(const char *s);

/* Median of v[0..n), n > 0 (v is sorted in place). */
double results_median(double *v, int n);

/* --where e as the store's condition over cs's cases (results_where.c; in
 * cs's arena): axis names, status, value names and spec's let: names,
 * checked.  The condition, or NULL with err at the offending node. */
const StoreCond *results_where_cond(CaseSet *cs, const Spec *spec, const Expr *e, KvxError *err);

#endif
