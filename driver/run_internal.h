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
int run_counters(Store *st, int64_t run_id, const CaseDesc *descs, const char *const *keys, int n,
                 int device);

/* ---- run_profile.c: the tally and where the wall time went ------------------------- */

typedef struct Tally {
    int counts[CASE_STATUS_COUNT];
    int done, total, skipped_stored;
    double t_input, t_verify, t_measure;
    int refs_run;               /* reference kernel runs (once per reference key and worker) */
} Tally;

/* Where the run's wall time went.  The stages tile cmd_run from its start to
 * the run row's end; the loop's parts are the parent's side of the loop; the
 * workers' steps (CASE_STEPS) are summed over every case measured. */
#define RUN_STAGES(X)                                                            \
    X(load, "spec load, plan, selection")                                        \
    X(probe, "the GPU probe (a child process: cuInit)")                          \
    X(store, "database open, case keys and lookups, the run row")                \
    X(workers, "compile thread and worker processes started (cuInit, context)")  \
    X(loop, "cases handed out, measured and stored")                             \
    X(finish, "workers ended, compile thread joined")
#define RUN_PARTS(X)                                                             \
    X(compile_wait, "waiting for NVRTC (or the compile cache)")                  \
    X(variants, "variant rows: SASS facts and their store")                      \
    X(handout, "cases resolved and written to a worker")                         \
    X(commit, "results stored (one transaction each) and printed")               \
    X(poll, "waiting for results")

typedef enum {
#define X(n, d) RUN_STAGE_##n,
    RUN_STAGES(X)
#undef X
    RUN_STAGE_COUNT
} RunStage;
typedef enum {
#define X(n, d) RUN_PART_##n,
    RUN_PARTS(X)
#undef X
    RUN_PART_COUNT
} RunPart;

typedef struct RunProfile {
    double t0, lap;                     /* now_ms() at cmd_run's start, at the last stage's end */
    double stage[RUN_STAGE_COUNT];      /* ms */
    double part[RUN_PART_COUNT];        /* ms */
    double step[CASE_STEP_COUNT];       /* ms, summed over cases */
    double gpu_ms, prep_gpu_ms;         /* kernel time of the samples; their resets and flushes */
    long launches, samples, measured;   /* measured: cases with samples */
    int throttled;
    double lost_ms;                     /* cases that never answered (timeout, death): their wait */
} RunProfile;

/* Close stage st: the time since the last stage's end goes to it. */
void stage_end(RunProfile *pr, RunStage st);
/* The time since *t goes to part; *t moves to now. */
void part_add(RunProfile *pr, RunPart part, double *t);
/* A worker's answer into the profile: its steps, GPU times, launches. */
void profile_add_result(RunProfile *pr, const CaseResult *r);
/* A case's steps as JSON (cases.profile_json); malloc'd. */
char *case_profile_json(const CaseResult *r);
/* runs.profile_json of the run, into b. */
void profile_json(const RunProfile *pr, const Tally *t, int njobs, double compile_wall_ms, double compile_ms,
                  int nhit, int nworkers, StrBuf *b);
/* `kvx run --profile`'s table. */
void profile_print(const RunProfile *pr, const Tally *t, int nworkers);
/* The progress line (on a terminal) after each case. */
void progress(const Tally *t, double t0, int tty);

#endif
