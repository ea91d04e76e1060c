/* run_internal: what the files of `kvx run` share; internal to run/, whose
 * public face is run.h.  By file: run.c, the supervisor (the session,
 * RunSession: its plan RunPlan, its hand-out queue RunQueue, its workers
 * RunWorkers, its store RunStore; run_session_open, run_session_round,
 * run_session_finish, run_session_close; the workers: WorkerProc,
 * run_worker_start, run_worker_stop; run_fail, run_stopping); run_search.c
 * (run_search); run_cases.c, the case list (RunCase, the one record of a
 * case from plan to stored row; run_cases_list, run_cases_free,
 * run_case_key, run_axes_json, run_baseline_json, run_declared_json,
 * run_point_is_baseline) and the closing summary (run_print_best); run_ref.c, reference kernels' keys
 * (run_ref_order, run_ref_fail, run_ref_failed, run_ref_fails_free);
 * run_counters.c (run_counters); run_order.c, the hand-out order (Range,
 * run_history_load, run_history_ms, run_history_free, run_case_model_ms,
 * run_units, run_order); run_profile.c, the tally and where the time went
 * (Tally, RunProfile, run_stage_end, run_part_add, run_profile_add_result,
 * run_case_busy_ms, run_case_profile_json, run_profile_json,
 * run_profile_print, run_progress); run_ahead.c, host references ahead
 * (run_ahead_start, run_ahead_release, run_ahead_stop);
 * run_loop.c, hand-out and results (run_loop). */
#ifndef KVX_RUN_INTERNAL_H
#define KVX_RUN_INTERNAL_H

#include "compile/jit.h"
#include "core/json.h"
#include "gen/plan.h"
#include "host/case.h"
#include "run.h"
#include "shard.h"
#include "store/store.h"
#include "resolve/resolve.h"
#include "gpu/worker.h"

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#define RUN_MAX_DEVICES 16

/* One case of a run, from its plan to its stored row: what names it (the
 * case list, run_cases.c), the resolved case (once, at plan: session_plan;
 * bound to its compiled kernel when its source is ready: run_loop.c), where
 * it is (handed out, waiting for its result) and what came of it. */
typedef struct RunCase {
    int point;
    int src;
    int ref_src;                /* its reference kernel's source (plan_ref_src), or -1 */
    char key[65];
    char workload_key[65];
    char ref_key[65];           /* its reference kernel's key as resolved ("" without one): run_ref_order */
    int is_baseline;
    char *label;
    char *axes_json;
    char *workload_json;
    CaseDesc *desc;             /* the resolved case: RunPlan.desc[point]'s, borrowed */
    const double *metrics;      /* bytes, atomics, elements: RunPlan.metrics[point] */
    int bound;                  /* 0 not yet, 1 bound to its compiled kernel, -1 that failed (why) */
    char *why;                  /* the reason it is skipped (a bind that failed); malloc'd */
    int live;                   /* handed to a worker, no result yet */
    double median_ms;           /* the outcome: its median when ok, else NaN */
    int ran;                    /* stored ok or mismatch: the counter pass takes it */
} RunCase;

/* ---- run.c --------------------------------------------------------------------------- */

/* run_session_open's status when the selected GPUs span several archs:
 * run_main then runs a supervisor per arch. */
enum { RUN_PER_ARCH = -1 };

/* ---- run_search.c ---------------------------------------------------------------------- */

/* `kvx run --search` (run_main with o->search): the strategy asks for
 * variants in batches; each batch is a round of one run session
 * (run_session_round), stored as ordinary rows, and their outcomes read
 * back from the store are told to the strategy.  A variant whose cases are
 * stored already is told without running, so a killed search resumes on
 * the same path.  The exit status as run_main's. */
int run_search(const RunOpts *o, int argc, char **argv);

/* ---- run_cases.c --------------------------------------------------------------------- */

/* What a case's store key holds besides the spec, the source and the point. */
typedef struct RunKeyEnv {
    const char *options;        /* the spec's NVRTC options, space-separated */
    const char *arch;           /* "sm_90" */
    const char *device_uuid;    /* the first selected GPU's */
    const char *measure_json;   /* measure_json of the settings in force */
} RunKeyEnv;

/* The store key of point's case (run_cases.c's head says what it hashes). */
void run_case_key(const Plan *p, int point, const RunKeyEnv *ke, char key[65]);

/* The values of point's axes in mask as a JSON object {"axis":value,...}, in
 * declaration order; malloc'd. */
char *run_axes_json(const Plan *p, int point, uint64_t mask);

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
 * over its baseline partner, by their RunCase.median_ms (NaN: not ok, or not
 * measured). */
void run_print_best(const Plan *p, const RunCase *cases, int n, uint64_t base_mask);

/* 1 when point is the baseline's (every baseline axis at its value; 0
 * without a baseline). */
int run_point_is_baseline(const Plan *p, int point);

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
void run_ref_order(const Plan *p, const PlanRef *ref, RunCase *cases, int n);
/* The reason key failed, or NULL. */
const char *run_ref_failed(const RefFails *f, const char *key);
void run_ref_fails_free(RefFails *f);

/* ---- run_counters.c -------------------------------------------------------------------- */

/* The counter pass (counters.h) of o->counters' metrics over the n cases
 * that ran (RunCase.ran: their resolved cases, as sent), on GPU device, each
 * stored with its case; with o->keep_ncu_rep, ncu's report kept beside the
 * database db.  Says what it did, or why there are no counters, on stdout.
 * 0, or 3 after a store error. */
int run_counters(Store *st, int64_t run_id, const RunCase *cases, int n, const RunOpts *o, const char *db,
                 int device);

/* ---- run_order.c: the hand-out order ----------------------------------------------- */

/* A unit of hand-out: cases[cur..end) of workload group `group`, part `part`
 * of nparts (1: the whole group; 0: an orphan, the rest of a group whose
 * worker could not be restarted), estimated at est_ms. */
typedef struct Range {
    int cur, end, group;
    int part, nparts;
    double est_ms;
} Range;

/* The estimate's constants (run_order.c's head says how they are used).  A
 * case's cost outside its sampling: on 2 H200s 13.5 s of a 35.6 s run of 254
 * cases was worker start, module load, buffer set-up and warm-up launches
 * (results/h200x2/scaling.md), about 50 ms a case. */
#define RUN_EST_CASE_MS 50.0
/* Host work once a group per byte of its buffers: the input generated and
 * the host reference computed (1.4 + 2.9 s over 28 groups of 4 to 256 MB
 * there, threaded: about 1 ns a byte each). */
#define RUN_EST_HOST_NS_PER_BYTE 2.0

/* Stored case times of a spec, by variant source and axis values. */
typedef struct RunHistory {
    void *rows;
    int n, cap;
} RunHistory;

/* Read every timed case of spec_name in st (store_case_costs), the newest of
 * each source and point kept.  0, or -1 with err. */
int run_history_load(Store *st, const char *spec_name, RunHistory *h, KvxError *err);
/* The stored cost (ms) of the case of this source and axes JSON, or NaN. */
double run_history_ms(const RunHistory *h, const char *source_hash, const char *axes_json);
void run_history_free(RunHistory *h);

/* A case's modelled cost (ms) with no stored time: RUN_EST_CASE_MS plus its
 * sampling under m, a launch moving bytes at peak_gbs (plus the L2 flush of
 * l2_bytes), and its verified launch and warm-ups. */
double run_case_model_ms(const MeasureSettings *m, double bytes, double peak_gbs, double l2_bytes);

/* The hand-out units of ngroups groups (group g is cases [gstart[g],
 * gstart[g+1])), case i costing case_ms[i] and group g host_ms[g] once per
 * unit: a group whose cost is above total / nworkers is cut into parts when
 * splittable (run_order.c's head), and the units are sorted by estimate,
 * longest first (ties in case order).  malloc'd, *nunits of them; *nsplit
 * groups were cut. */
Range *run_units(const int *gstart, int ngroups, const double *case_ms, const double *host_ms, int splittable,
                 int nworkers, int *nunits, int *nsplit);

/* ---- run_profile.c: the tally and where the wall time went ------------------------- */

typedef struct Tally {
    int counts[CASE_STATUS_COUNT];
    int done, total, skipped_stored;
    int taken;                  /* of done: cases another run on the database stored first (skipped at
                                   hand-out, or measured here and dropped); not in counts */
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
    X(search, "a search between its rounds: asks, tells, compiles ahead started") \
    X(finish, "workers ended, compile thread joined")
#define RUN_PARTS(X)                                                             \
    X(compile_wait, "waiting for NVRTC (or the compile cache)")                  \
    X(variants, "variant rows: SASS facts and their store")                      \
    X(bind, "resolved cases bound to their compiled kernels")                    \
    X(handout, "cases written to a worker")                                      \
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

/* One worker slot's time in the loop, its replacements included. */
typedef struct WorkerTime {
    int device;
    int cases, units;           /* results read; units handed to it */
    double busy_ms;             /* inside cases: its steps but recv, and the wait on cases it never answered */
    double last_ms;             /* wall_now_ms() of its last result; 0: none */
} WorkerTime;

/* One unit as it was handed out, in hand-out order. */
typedef struct HandoutRec {
    int group, part, nparts, cases, worker;
    double est_ms;
    double at_ms;               /* since the loop's start */
} HandoutRec;

/* Hand-out records kept in runs.profile_json; later ones are counted only. */
#define RUN_HANDOUT_KEPT 1024

typedef struct RunProfile {
    double t0, lap;                     /* wall_now_ms() at cmd_run's start, at the last stage's end */
    double stage[RUN_STAGE_COUNT];      /* ms */
    double part[RUN_PART_COUNT];        /* ms */
    double step[CASE_STEP_COUNT];       /* ms, summed over cases */
    double gpu_ms, prep_gpu_ms;         /* kernel time of the samples; their resets and flushes */
    double host_wait_ms;                /* the workers' CaseResult.host_wait_ms, summed */
    long launches, samples, measured;   /* measured: cases with samples */
    int throttled;
    double lost_ms;                     /* cases that never answered (timeout, death): their wait */
    double loop_t0, loop_t1;            /* wall_now_ms() at the loop's start and end */
    WorkerTime wt[RUN_MAX_DEVICES];     /* per worker slot */
    int nwt;
    HandoutRec *handout;                /* the first RUN_HANDOUT_KEPT units handed out */
    int nhandout;                       /* all units handed out */
    double est_total_ms;                /* the units' estimates, summed */
    int est_known, nsplit;              /* cases estimated from stored times; groups cut */
    int resolved;                       /* points resolved (resolve_case): each selected one once */
    int bound;                          /* resolved cases bound to their compiled kernels (resolve_bind) */
    int ahead_refs;                     /* host references listed to compute ahead (run_ahead.c) */
    double ahead_ms;                    /* the time that took, on the parent's thread */
} RunProfile;

/* Close stage st: the time since the last stage's end goes to it. */
void run_stage_end(RunProfile *pr, RunStage st);
/* The time since *t goes to part; *t moves to now. */
void run_part_add(RunProfile *pr, RunPart part, double *t);
/* A worker's answer into the profile: its steps, GPU times, launches. */
void run_profile_add_result(RunProfile *pr, const CaseResult *r);
/* A case's time inside the worker (ms): its steps but recv. */
double run_case_busy_ms(const CaseResult *r);
/* A case's steps as JSON (cases.profile_json); malloc'd. */
char *run_case_profile_json(const CaseResult *r);
/* runs.profile_json of the run, into b. */
void run_profile_json(const RunProfile *pr, const Tally *t, int njobs, double compile_wall_ms, double compile_ms,
                  int nhit, int nworkers, StrBuf *b);
/* `kvx run --profile`'s table. */
void run_profile_print(const RunProfile *pr, const Tally *t, int nworkers);
/* The progress line (on a terminal) after each case. */
void run_progress(const Tally *t, double t0, int tty);

/* ---- run.c: the session ------------------------------------------------------------ */


/* ---- run_ahead.c: host references ahead of the GPU ---------------------------------- */

typedef struct RunAhead RunAhead;
typedef struct RunSession RunSession;

/* List the host references of r's cases in hand-out order (r->units), once
 * per key, and start computing them on a thread of their own into a folder
 * of its own; r->ahead and r->hostref_dir are then set, and NULL and ""
 * when there are none (or the folder or the thread cannot be made: the
 * workers compute their own); r->holds when $KVX_TEST_HOSTREF_HOLD holds one. */
void run_ahead_start(RunSession *r);
/* The loop's count of cases done (stored): releases a reference that
 * $KVX_TEST_HOSTREF_HOLD holds (run_ahead.c) once it passes the cases listed
 * before that reference's first.  Accepts NULL. */
void run_ahead_release(RunAhead *a, int stored);
/* Stop computing (the cases are done), join the thread, keep its figures in
 * r->prof, free r->ahead.  Accepts a NULL r->ahead. */
void run_ahead_stop(RunSession *r);

/* Cases handed to a worker ahead of their turn: while it runs one, the next
 * waits in its pipe, so the parent's storing and resolving overlap the GPU's
 * work instead of adding to it.  Two are enough for that (and a CaseDesc, 24
 * KB, twice fits a pipe's 64 KB: the write never blocks). */
#define RUN_PIPELINE 2

typedef struct WorkerProc {
    int device;                 /* GPU ordinal */
    pid_t pid;
    int to, from;               /* pipe ends: parent writes to, reads from */
    DeviceInfo info;
    int q[RUN_PIPELINE];        /* indices into cases handed over, oldest (running) first */
    int nq;
    int broken;                 /* a write failed: hand nothing more until its results are read */
    int cur, end;               /* the workload group it works through: cases[cur..end) */
    int group;
    double started;             /* ms, when the oldest case in q began (about) */
    double timeout_ms;
    double started_at;          /* ms, when the process was started */
} WorkerProc;

typedef struct Compiler {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    JitJob *jobs;               /* the sources cases need, in first-use order */
    int *ready;                 /* per job: 0 pending, 1 done */
    int nready;                 /* jobs done */
    int *job_of;                /* per source: index into jobs, or -1 */
    int n;
    JitOptions jo;
    KvxError err;
    int failed;
    int finished;
    double wall_ms;
    int hold;                   /* test hook ($KVX_TEST_COMPILE_HOLD): the job that counts as compiling
                                   until every case that does not need it is done; -1: none */
    int hold_cases;             /* the cases that need it */
} Compiler;

/* The compiles of a session's rounds: sources, cache hits, NVRTC time and
 * the compile threads' wall, summed. */
typedef struct CompileTotals {
    int n, hits;
    double ms, wall_ms;
} CompileTotals;

/* What a run measures: the spec, the target's facts, the plan with its
 * references, the selection and this shard, the settings in force, and
 * every selected point resolved once (session_plan): desc[point] is the
 * resolved case of a point this shard runs (NULL for the others, checked
 * and dropped), freed once its row is stored (kept for --counters). */
typedef struct RunPlan {
    Spec *s;
    DeviceFacts facts;
    Plan p;
    PlanRef pref;
    unsigned char *sel;
    Shard shard;
    MeasureSettings m;
    char *mjson;
    uint64_t base_mask;         /* a point's partner is itself with these set to the baseline */
    char opts_text[1024];
    CaseDesc **desc;            /* per point */
    double (*metrics)[3];       /* per point: bytes, atomics, elements */
    int reads_outputs;          /* a metric reads a scalar output (resolve_metrics_read_outputs) */
} RunPlan;

/* A round's cases and their hand-out.  Workload groups (contiguous after
 * the sort) go whole to one worker: it then generates each input once,
 * keeps the group's host references, and holds the baseline's output for
 * the differential check. */
typedef struct RunQueue {
    RunCase *cases;
    int ncases, nstored, nsel;
    int *gstart, ngroups;
    unsigned char *gbase;       /* the group starts with its baseline */
    RunHistory hist;            /* stored times (session_plan, before --rerun forgets them) */
    Range *units;               /* what is handed out, longest first (run_order) */
    int nunits, next_unit;
    int from_end;               /* units taken last first: another run fills the database (store_run_beside) */
    Range orphan[RUN_MAX_DEVICES];  /* groups whose worker could not be restarted */
    int norphans;
    RefFails refs_failed;
    int nready_seen;            /* Compiler.nready when bind_ready last looked */
} RunQueue;

/* The GPUs and their worker processes. */
typedef struct RunWorkers {
    DeviceInfo infos[RUN_MAX_DEVICES];
    int devs[RUN_MAX_DEVICES], ndev;
    WorkerProc early;           /* GPU 0's worker, started before the probe; pid 0 once taken */
    WorkerProc w[RUN_MAX_DEVICES];
    int n, n0;                  /* running; started */
} RunWorkers;

/* The results database and what the run has written to it. */
typedef struct RunStore {
    const char *db_path;
    Store *st;
    int64_t run_id;
    int64_t *variant_ids;       /* per source, once its row is stored */
    double *samples;            /* --keep-samples: the result being read's times, ms */
    int nsamples, samples_cap;
} RunStore;

/* One `kvx run`: its plan, its hand-out queue, its workers and its store,
 * and what ties them (the compile thread, the tally, the profile).  (The
 * parent's; a worker's own state is worker_internal.h's.)  Everything
 * starts zeroed and session_close frees whatever exists, so a stage that
 * fails just returns its exit status. */
typedef struct RunSession {
    int argc;
    char **argv;
    RunOpts o;
    RunPlan plan;
    RunQueue queue;
    RunWorkers workers;
    RunStore store;
    RunProfile prof;
    JitProfile jprof;           /* --profile: the compile stage's (every batch of the run's) */
    KvxError err;
    int rc;                     /* 0, or the exit status of the first failure */
    Compiler comp;              /* the round's */
    int comp_started;
    CompileTotals ctot;         /* the rounds' whose compile thread is joined */
    int rounds;                 /* rounds listed (run_session_round) */
    /* wall_now_ms() past which a round hands out no more cases and ends once
     * those in flight are collected (a search's time budget); 0 none. */
    double stop_at_ms;
    int begun;                  /* the run row and the workers were made */
    struct sigaction old_sig[2];    /* SIGINT, SIGTERM before the session caught them */
    int caught;
    char *cache;
    JitScratch *scratch;        /* what the cache does not take */
    Tally tally;
    int tty;
    double t0;
    RunAhead *ahead;            /* host references computed ahead; NULL: none */
    char hostref_dir[1024];     /* the folder they go to (CaseDesc.hostref_dir); "" without */
    int holds;                  /* a test hook holds a source or a reference (run_loop.c's holds_release) */
} RunSession;

/* The signal (SIGINT, SIGTERM) that asked the run to stop, or 0.  The loop
 * then hands out nothing more and stores nothing more than the results that
 * came; the run row is closed and the exit status is 128 + it. */
int run_stopping(void);

/* Print r->err and clear it; r->rc = rc.  Returns rc. */
int run_fail(RunSession *r, int rc);
/* Start a worker process for GPU device (fork + exec of `kvx __worker`) and
 * read its start frame.  0, or -1 with err. */
int run_worker_start(WorkerProc *w, int device, KvxError *err);
/* End a worker: close its pipe, then RUN_WORKER_WAIT for it to exit,
 * RUN_WORKER_KILL it first, or RUN_WORKER_LEAVE it (its results all in) to
 * end by itself: reaped here only if it already has, else by the system once
 * kvx has exited, so that its context's release (0.1 s on an H200) is not
 * the run's wait. */
enum { RUN_WORKER_WAIT, RUN_WORKER_KILL, RUN_WORKER_LEAVE };
void run_worker_stop(WorkerProc *w, int how);

/* A session of rounds (`kvx run --search`; run_main is one round): open
 * (the spec, the GPUs, the plan, the store; SIGINT and SIGTERM caught) gives
 * 0, the exit status to stop with, or RUN_PER_ARCH (the GPUs span several
 * archs: run_main then runs a supervisor per arch); each round
 * measures the selected points within only (NULL: all) not stored yet, the
 * first making the run row and the workers; finish ends the workers and the
 * run row and prints the summary (its exit status); close frees everything
 * (also after a failure; the session's memory is the caller's). */
int run_session_open(RunSession *r, const RunOpts *o, int argc, char **argv);
int run_session_round(RunSession *r, const unsigned char *only);
int run_session_finish(RunSession *r);
void run_session_close(RunSession *r);

/* ---- run_loop.c --------------------------------------------------------------------- */

/* ---- run_order.c: the session's order ------------------------------------------------ */

/* The workload groups of r->cases, each case's estimate (r->hist, then the
 * model), the units to hand out, longest first, into r->units; frees
 * r->hist.  Says what it did on stdout on a run of several GPUs. */
void run_order(RunSession *r);

/* Hand out and collect until every case is stored (or r->rc is set, or no
 * worker is left); closes the loop stage. */
void run_loop(RunSession *r);

#endif
