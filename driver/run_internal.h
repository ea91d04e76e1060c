/* run_internal: what the files of `kvx run` share.  run.c is the supervisor
 * (planning, the compile thread, worker processes, storing results);
 * run_opts.c parses its options; run_cases.c builds the case list (keys,
 * order, JSON of axis values) and prints the best variants at the end;
 * run_resolve.c turns one case into a self-contained CaseDesc.  Internal to
 * `kvx run`: cli.h's cmd_run is the public face. */
#ifndef KVX_RUN_INTERNAL_H
#define KVX_RUN_INTERNAL_H

#include "cli.h"
#include "case.h"
#include "shard.h"
#include "store.h"
#include "resolve.h"

#define RUN_MAX_DEVICES 16

typedef struct RunOpts {
    CliSpecOpts spec;
    const char *db;
    const char *devices;        /* "all" or "0,2" */
    MeasureSettings m;          /* spec's, overridden by flags below */
    int set_warmup, set_min, set_max, set_noise, set_budget, set_flush, set_timeout, set_seed;
    int set_warmup_ms, set_batch;
    int rerun;
    int profile;
    int counters;               /* a counter pass under ncu after the timed run */
} RunOpts;

typedef struct RunCase {
    int point;
    int src;
    char key[65];
    char workload_key[65];
    char ref_key[65];           /* its reference's key ("" without one): run_ref_order */
    int is_baseline;
    char *label;
    char *axes_json;
    char *workload_json;
} RunCase;

/* ---- run_opts.c ---------------------------------------------------------------------- */

/* Parse `kvx run` arguments into o (zeroed first; the spec path is the one
 * operand).  --help prints usage and exits 0.  Returns 0, or 2 after printing
 * what is wrong (and usage) to stderr. */
int run_parse_opts(int argc, char **argv, RunOpts *o);

/* Apply the measurement flags that were given over m (the spec's settings);
 * max_samples is raised to min_samples when below it. */
void run_apply_overrides(const RunOpts *o, MeasureSettings *m);

/* m as the JSON stored with the run and hashed into every case key; malloc'd. */
char *run_measure_json(const MeasureSettings *m);

/* The GPU ordinals of --devices ("all" or NULL: every one of the ngpu, at most
 * RUN_MAX_DEVICES) into out.  Returns the count, or -1 with err (an ordinal out
 * of range, a duplicate). */
int run_parse_devices(const char *list, int ngpu, int *out, KvxError *err);

/* ---- run_cases.c --------------------------------------------------------------------- */

/* What a case's store key holds besides the spec, the source and the point. */
typedef struct RunKeyEnv {
    const char *options;        /* the spec's NVRTC options, space-separated */
    const char *arch;           /* "sm_90" */
    const char *device_uuid;    /* the first selected GPU's */
    const char *measure_json;   /* run_measure_json of the settings in force */
} RunKeyEnv;

/* The values of point's axes in mask as a JSON object {"axis":value,...}, in
 * declaration order; malloc'd. */
char *run_axes_json(const Plan *p, int point, uint64_t mask);

/* s as a JSON string literal, quotes and escapes included, appended to b. */
void run_json_string(StrBuf *b, const char *s);

/* Append to b the baseline as {"axis":value,...} ({} without one). */
void run_baseline_json(const Spec *s, StrBuf *b);

/* Append to b every axis with its declared values, {"axis":[v,...],...}. */
void run_declared_json(const Spec *s, StrBuf *b);

/* The cases to run: of the points sel selects (*nsel, over all shards), those
 * of shard->k less the ones st already holds (*nstored; with rerun they are
 * forgotten and measured again), sorted by workload key with the baseline
 * first, so that a workload group is contiguous (groups and shards: shard_points).
 * *cases is malloc'd with *ncases entries; free them with run_cases_free, also
 * after an error.  Returns 0, or 3 after printing a store error (the list stops
 * there). */
int run_cases_list(const Plan *p, const unsigned char *sel, const Shard *shard,
                   const RunKeyEnv *ke, Store *st, int rerun, RunCase **cases, int *ncases,
                   int *nstored, int *nsel);

/* Free n cases from run_cases_list and the array; NULL is fine. */
void run_cases_free(RunCase *cases, int n);

/* Print the best variant of each group of comparable cases and its speed-up
 * over its baseline partner.  medians[i]: case i's median in ms, NaN when it
 * has none (not ok, or not measured). */
void run_print_best(const Plan *p, const RunCase *cases, const double *medians, int n,
                    uint64_t base_mask);

/* ---- run_ref.c ------------------------------------------------------------------------ */

/* Reference keys whose kernel failed, with the reason every later case of
 * the key is skipped with. */
typedef struct RefFails {
    char (*key)[65];
    char **why;
    int n, cap;
} RefFails;

void run_ref_fail(RefFails *f, const char *key, const char *why);

/* With a reference, order the cases of each workload group by their
 * reference's key, so that a worker runs each reference once and keeps it
 * while its cases last.  A differential spec keeps its order (the baseline
 * first in each group). */
void run_ref_order(const Plan *p, const PlanRef *ref, const MeasureSettings *m, RunCase *cases, int n);
/* The reason key failed, or NULL. */
const char *run_ref_failed(const RefFails *f, const char *key);
void run_ref_fails_free(RefFails *f);

/* ---- run_counters.c -------------------------------------------------------------------- */

/* The counter pass (counters.h) over the n resolved cases descs[i] (those with
 * keys[i] non-NULL: the cases that ran), on GPU device, each stored with its
 * case.  Says what it did, or why there are no counters, on stdout.  0, or 3
 * after a store error. */
int run_counters(Store *st, int64_t run_id, const CaseDesc *descs, char *const *keys, int n,
                 int device);

#endif
