/* run: the public face of run/, the only run/ header other folders include
 * (tests/deps/test_deps.sh holds that).  It holds `kvx run`'s options as
 * the CLI parses them (RunOpts) and the one entry that runs them
 * (run_main); the shard partition that `kvx plan --shard` shares
 * (shard_parse, shard_points); the checks the CLI makes of run/'s option
 * values while parsing, so that a bad one is a usage error (search_find,
 * search_list, search_budget_parse, search_objective_parse,
 * counters_list_parse); `kvx replay`'s entry (search_replay_main); and
 * Kernel Tuner's cache file for `kvx export` (search_kt_export).  What the
 * files of run/ share among themselves is run_internal.h, search.h,
 * search_db.h, search_internal.h, shard.h and counters.h. */
#ifndef KVX_RUN_H
#define KVX_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "core/expr.h"
#include "core/measure.h"
#include "core/util.h"
#include "gen/plan.h"
#include "store/store.h"


/* ---- run.c: `kvx run` ---------------------------------------------------------------- */

/* `kvx run`'s options, as the CLI parses them: plain values, no state. */
typedef struct RunOpts {
    const char *spec_path;
    const char *where;          /* --where filter over points */
    const char *shard;          /* --shard K/N; NULL: Slurm's array variables, else the whole run */
    const char *cache_dir;      /* NULL: jit_default_cache_dir() */
    int no_cache;
    int jobs;                   /* -j: compile threads; 0 = cores */
    int group;                  /* --group: sources per NVRTC program; 0: chosen per batch */
    const char *db;             /* NULL: RESULTS_DEFAULT_DB, its folder made */
    const char *devices;        /* "all" or "0,2" */
    MeasureSettings m;          /* the defaults, then the flags' values: given[] says which were given */
    int given[MEASURE_COUNT];   /* by MeasureId */
    int rerun;
    int profile;
    const char *counters;       /* --counters' metric list (counters.h): a pass under ncu
                                   after the timed run; NULL: none */
    int keep_ncu_rep;           /* keep ncu's report beside the database */
    int keep_samples;           /* store every sample's time (cases.samples_json) */
    /* --search (run_search.c): NULL, or the strategy's name with its settings */
    const char *search, *budget, *objective;
    uint64_t search_seed;
    int batch;                  /* variants asked per batch */
    int ahead;                  /* variants compiled ahead of the asks; -1: SEARCH_AHEAD_PER_PROC a process */
    int search_given;           /* one of --budget, --objective, --search-seed, --batch, --ahead was given */
} RunOpts;

/* `kvx run` of o's spec: every selected point, or with o->search the
 * variants a search picks (run_search.c); the stages are run.c's head.
 * argv: the verb's words, as stored with the run and passed on to the runs
 * of other archs.  The exit status: 0 every case this run stored ok, 1 some
 * not, 2 bad input, 3 a store failure, RUN_EXIT_NO_GPU nothing measured (no
 * GPU or no driver), 128 + the signal when SIGINT or SIGTERM stopped it. */
int run_main(const RunOpts *o, int argc, char **argv);
enum { RUN_EXIT_NO_GPU = 4 };

/* ---- shard.c: a run's cases across hosts ---------------------------------------------- */

typedef struct Shard {
    int k;      /* 0-based index of this shard */
    int n;      /* shard count; 1 = everything */
    const char *from;   /* "--shard", "SLURM_ARRAY_TASK_ID", or "none" */
} Shard;

/* Parse "K/N" (1 <= K <= N).  With text NULL, read Slurm's array variables
 * (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else
 * the whole run.  0 or -1 with err. */
int shard_parse(const char *text, Shard *s, KvxError *err);

/* The selected points of a plan (sel[i] != 0) in point order, each with its
 * workload key (the sha256 of its label without the spec's baseline axes) and
 * the shard its group falls in.  kvx run and kvx plan --shard both use it, so
 * that `kvx plan --shard K/N` lists exactly what `kvx run --shard K/N` runs. */
typedef struct ShardPoints {
    int n;
    int *point;             /* point index in the plan */
    char (*key)[65];        /* workload key, hex */
    int *shard;             /* 0-based shard of nshards */
} ShardPoints;
void shard_points(const Plan *p, const unsigned char *sel, int nshards, ShardPoints *sp);
void shard_points_free(ShardPoints *sp);

/* ---- search.c, search_db.c, counters.c: option values checked while parsing ------------ */

/* The strategy named name (a SearchKind of search.h; "default" is
 * SEARCH_DEFAULT), or -1. */
int search_find(const char *name);
/* 0 when text is a strategy, NAME[:key=value]... (search.h's
 * search_parse), else -1 with why. */
int search_check(const char *text, char *why, size_t nwhy);
/* "random, local, model": for messages. */
const char *search_list(void);
/* Candidates proposed before any is told, measured together: the GPU works
 * through a batch while the next compiles are started.  --batch's default. */
#define SEARCH_BATCH 8

/* A budget: N variants, P% of the space's, or minutes of GPU time (the
 * stored cases' t_input + t_verify + t_measure) or of wall time. */
typedef enum { SEARCH_BUDGET_N, SEARCH_BUDGET_PCT, SEARCH_BUDGET_GPU_MIN, SEARCH_BUDGET_WALL_MIN } SearchBudgetKind;
typedef struct SearchBudget {
    SearchBudgetKind kind;
    double amount;
} SearchBudget;
/* Parse "N", "P%", "Mgpu-min" or "Mwall-min" (times only when times); the
 * expectation into why on failure.  0 or -1. */
int search_budget_parse(const char *text, int times, SearchBudget *b, char *why, size_t nwhy);

/* An objective, `VALUE[,POINTS]` (search_db.h says what it means). */
typedef struct SearchObjective {
    char column[32];            /* the stored value */
    int lower;                  /* 1: lower is better */
    const char *points;         /* the points' expression as given, or NULL */
    Expr *where;                /* parsed, in arena; NULL: every point */
    Arena *arena;
} SearchObjective;
/* Parse text ("median_ms" or "gbs,n == 4096") into o; what names the
 * option in messages ("--objective").  0, or -1 with err.  Free with
 * search_objective_free. */
int search_objective_parse(const char *text, const char *what, SearchObjective *o, KvxError *err);
void search_objective_free(SearchObjective *o);

#define COUNTERS_MAX 64             /* metrics in one --counters list */
#define COUNTER_NAME_MAX 128
/* The metrics of one counter pass, by ncu name, in the order given. */
typedef struct CounterList {
    int n;
    char name[COUNTERS_MAX][COUNTER_NAME_MAX];
} CounterList;
/* `--counters`' value: METRIC,METRIC,... where `default` stands for
 * counters.h's four; a name repeated counts once.  0, or -1 with the reason
 * (what follows "--counters is ...") in why. */
int counters_list_parse(const char *text, CounterList *l, char *why, size_t whylen);

/* ---- search_replay.c: `kvx replay` ----------------------------------------------------- */

/* `kvx replay`'s options, as the CLI parses them. */
typedef struct SearchReplayOpts {
    const char *db;
    const char *spec;           /* NULL: the one spec stored */
    const char *strategies;     /* "random,local,model,portfolio": NAME[:key=value]... each */
    const char *budgets;        /* "2%,5%,10%,20%": N variants or P% of the space */
    const char *time_budgets;   /* "2%,5%,10%,20%": Ns of simulated tuning time or P% of the space's; "" none */
    const char *objective;
    int json;                   /* --format json */
    int seeds;
    uint64_t seed;
    int batch;
    double tol;
} SearchReplayOpts;
/* At most this many strategies, and budgets, in one replay. */
#define SEARCH_REPLAY_MAX 32

/* The strategies of o against the recorded space of o->spec in o->db, for
 * each budget over o->seeds seeded repeats, as a Markdown table (or JSON)
 * on stdout.
 * The exit status: 0, 2 bad input (err's message printed), 3 a store
 * failure. */
int search_replay_main(const SearchReplayOpts *o);

/* ---- search_kt.c: Kernel Tuner's cache file -------------------------------------------- */

/* The recorded space of spec in db under objective (`VALUE[,POINTS]`) as
 * Kernel Tuner's cache file, written to f (search_kt.c's head says how).
 * 0, or -1 with err (KVX_EINPUT: a bad objective, no such cases). */
int search_kt_export(Store *db, const char *spec, const char *objective, FILE *f, KvxError *err);

#endif
