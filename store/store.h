/* store: the SQLite results database.
 *
 * Three tables (docs/results-schema.md is the user-facing description):
 *   runs      one row per `kvx run` invocation on one device: the environment
 *   variants  one row per (run, source): compile and inspect facts
 *   cases     one row per (variant, workload point): status and measurements
 * The database is in WAL mode while a Store has it open, and is left in
 * rollback (DELETE) mode at store_close, so that other readers need no -wal
 * or -shm; each case is committed on its own, so a killed run loses at most
 * the case in flight.  A case's `key` (see store_case_key) is
 * unique: `kvx run` skips a case whose key is stored, two runs filling one file
 * keep the first row committed (store_put_case), and `kvx merge` keeps one
 * row per key.  A file with other applications' tables is refused before any
 * pragma changes it.  The columns are store_cols.h's table.  Axis values are stored as a JSON object in cases.axes so that any
 * axis can be pivoted with json_extract and bound parameters. */
#ifndef KVX_STORE_H
#define KVX_STORE_H

#include "core/expr.h"
#include "core/util.h"
#include "core/values.h"

typedef struct Store Store;

/* The fields of the row structs from core/values.h's table: a cases column
 * the run fills (TIMED, RES, ROW) is a field of CaseRow, a variants column
 * (VAR) one of VariantRow, each of its type. */
#define STORE_CTYPE_REAL double
#define STORE_CTYPE_INT int
#define STORE_CTYPE_MHZ int
#define STORE_CTYPE_TRI int
#define STORE_CASE_TIMED(n, type) STORE_CTYPE_##type n;
#define STORE_CASE_RES(n, type) STORE_CTYPE_##type n;
#define STORE_CASE_ROW(n, type) STORE_CTYPE_##type n;
#define STORE_CASE_LATER(n, type)
#define STORE_CASE_VAR(n, type)
#define STORE_CASE_SQL(n, type)
#define STORE_FIELD_CASE(n, from, type, since, tab, unit, imp, doc, meaning) STORE_CASE_##from(n, type)
#define STORE_VAR_TIMED(n, type)
#define STORE_VAR_RES(n, type)
#define STORE_VAR_ROW(n, type)
#define STORE_VAR_LATER(n, type)
#define STORE_VAR_VAR(n, type) STORE_CTYPE_##type n;
#define STORE_VAR_SQL(n, type)
#define STORE_FIELD_VAR(n, from, type, since, tab, unit, imp, doc, meaning) STORE_VAR_##from(n, type)

/* KVX_VALUES(STORE_FROM_RESULT), in a function with `CaseRow *row`, a
 * worker's `const CaseResult *res` and `int timed` (the case has samples),
 * copies the values the result carries (TIMED and RES lines) by name: a
 * TIMED one is NaN unless timed.  The rest (ROW) are the caller's. */
#define STORE_FROM_TIMED(n) row->n = timed ? res->n : NAN;
#define STORE_FROM_RES(n) row->n = res->n;
#define STORE_FROM_ROW(n)
#define STORE_FROM_LATER(n)
#define STORE_FROM_VAR(n)
#define STORE_FROM_SQL(n)
#define STORE_FROM_RESULT(n, from, type, since, tab, unit, imp, doc, meaning) STORE_FROM_##from(n)

/* Open (creating the schema when new).  NULL with err. */
Store *store_open(const char *path, KvxError *err);
void store_close(Store *s);     /* accepts NULL */

typedef struct RunEnv {
    const char *spec_name, *spec_path;
    const char *gpu_name, *gpu_uuid;
    int cc, sm_count;
    int64_t l2_bytes, mem_bytes;
    int clock_mhz, mem_clock_mhz;     /* max clocks the driver reports */
    double peak_gbs;
    int driver_version;               /* cuDriverGetVersion: 13000 */
    const char *nvrtc_version;        /* "13.0" */
    const char *kvx_version;
    const char *arch;                 /* "sm_90" */
    const char *hostname;
    const char *command;              /* the command line */
    const char *measure_json;         /* measurement settings */
    const char *started_at;           /* ISO 8601 UTC */
    /* Added for tables and imports (NULL = none): */
    const char *baseline_json;        /* the spec's baseline: {"strategy":"naive"} */
    const char *axes_json;            /* declared axes in order: {"strategy":["naive",...],...} */
    const char *kind;                 /* "run" (NULL) or "reference" (kvx import) */
    const char *ref_name;             /* reference runs: the --name given to import */
    /* Every GPU the run measured on, as a JSON array of {ordinal, name, uuid,
     * cc, sm_count, clock_mhz, mem_clock_mhz, peak_gbs}; the gpu_* fields
     * above are the first of them.  NULL = not recorded. */
    const char *devices_json;
    /* `kvx run --search` (NULL: a run of every selected point): */
    const char *search_strategy, *search_budget, *search_objective, *search_seed;
} RunEnv;

/* Insert a run row; *run_id receives its id.  0 or -1. */
int store_begin_run(Store *s, const RunEnv *env, int64_t *run_id, KvxError *err);
int store_end_run(Store *s, int64_t run_id, double wall_s, const char *profile_json,
                  KvxError *err);

typedef struct VariantRow {
    const char *spec_name;
    const char *source_hash;
    const char *label;                /* code axes: "strategy=naive counter=u32" */
    const char *code_axes_json;       /* {"strategy":"naive","counter":"u32"} */
    const char *arch;
    const char *options;              /* NVRTC options, space-separated */
    int compile_ok;
    const char *compile_log;          /* may be NULL */
    KVX_VALUES(STORE_FIELD_VAR)       /* compile_ms, regs, spill_stores, ...: core/values.h */
    const char *inspect_json;         /* inspect facts, NULL when not inspected */
    const char *kernels_json;         /* each kernel's ptxas figures (jit_kernels_json); NULL */
} VariantRow;

/* Insert or find the variant row for (run, source hash); *variant_id gets it. */
int store_put_variant(Store *s, int64_t run_id, const VariantRow *v, int64_t *variant_id,
                      KvxError *err);

typedef struct CaseRow {
    const char *key;
    const char *spec_name;
    const char *label;                /* all axes */
    const char *axes_json;            /* every axis value at this point */
    const char *workload_json;        /* workload axes only */
    const char *device_uuid;
    const char *status;               /* ok mismatch compile_error ... */
    const char *detail;               /* error name/message, mismatch elements */
    int64_t grid[3], block[3], smem, cluster[3];
    /* The measured values, core/values.h's cases columns by name (median_ms,
     * ..., rel_err, the declared metrics, the rates, the host times, the
     * clocks, throttled): a REAL is NaN for NULL, an MHZ 0, a TRI -1. */
    KVX_VALUES(STORE_FIELD_CASE)
    const char *profile_json;         /* the worker's steps, ms (CASE_STEPS); NULL n/a */
    const char *samples_json;         /* --keep-samples: [ms, ...]; NULL: not kept */
} CaseRow;

/* variant_id 0: no variant (imported reference rows).  Each call is its own
 * transaction.  0 stored; 1 when the key was already stored (another run on
 * the same database measured the case first: nothing is written, and the row
 * there is not this run's); -1 with err. */
int store_put_case(Store *s, int64_t run_id, int64_t variant_id, const CaseRow *c,
                   KvxError *err);
/* n cases in one transaction: all stored, or none (a bulk import).  Inside
 * the caller's open transaction they join it instead. */
int store_put_cases(Store *s, int64_t run_id, int64_t variant_id, const CaseRow *c, int n,
                    KvxError *err);
/* 1 when a case with this key is stored (any run), 0 when not, -1 on error. */
int store_has_case(Store *s, const char *key, KvxError *err);
/* Delete stored cases with this key (for --rerun).  0 or -1. */
int store_forget_case(Store *s, const char *key, KvxError *err);
/* 1 when an older run of spec_name than run_id is filling the database now
 * (no end recorded, and started or storing a case in the last 10 minutes), 0
 * when not, -1 with err.  A run beside it takes its cases from the other end,
 * so that the two measure each case once instead of in step. */
int store_run_beside(Store *s, int64_t run_id, const char *spec_name, KvxError *err);
/* Delete run run_id with its variants when it stored no case (a run that found
 * everything stored, or whose cases another run stored first), so that no
 * empty run row is left.  1 deleted, 0 kept (it has cases), -1 with err. */
int store_drop_empty_run(Store *s, int64_t run_id, KvxError *err);

/* Each stored case of spec_name that was timed, oldest first, to each(ctx,
 * its variant's source hash, its axes JSON, its cost in ms: t_input_ms +
 * t_verify_ms + t_measure_ms, or median_ms x samples where t_measure_ms is
 * NULL).  What `kvx run` estimates a workload group's cost from.  0 or -1. */
typedef void (*StoreCostFn)(void *ctx, const char *source_hash, const char *axes_json, double ms);
int store_case_costs(Store *s, const char *spec_name, StoreCostFn each, void *ctx, KvxError *err);

/* The key: sha256 over the NUL-separated parts given.  hex[65]. */
void store_case_key(const char *const *parts, char hex[65]);

/* Schema version written to schema_version; a newer database is refused. */
#define STORE_SCHEMA_VERSION 7     /* 2: runs.devices_json; 3: cases.profile_json, clocks;
                                      4: cases' hardware counters; 5: variants.kernels_json;
                                      6: cases.counters_json, cases.samples_json; 7: runs.search_* */

/* The hardware counters of case key of run run_id: json, every metric of the
 * pass as {"NAME":value|null}, into cases.counters_json; fixed, the four
 * fixed columns (counters.h's order: L2 atomic and reduction requests, DRAM
 * bytes read and written; NaN stores NULL).  0 or -1 with err. */
int store_put_counters(Store *s, int64_t run_id, const char *key, const char *json, const double fixed[4],
                       KvxError *err);

/* ---- store_io.c ------------------------------------------------------------ */

/* A transaction of the caller's (an import's run row and its cases; the
 * store_put_cases inside it join it).  0 or -1 with err; rollback accepts
 * a store with none open. */
int store_begin(Store *s, KvxError *err);
int store_commit(Store *s, KvxError *err);
void store_rollback(Store *s);
/* 1 with *run_id when a reference run named name is stored, 0 when none,
 * -1 with err. */
int store_ref_run(Store *s, const char *name, int64_t *run_id, KvxError *err);

typedef struct MergeStats {
    int runs_added, runs_found;
    int variants_added;
    int cases_added, cases_present;   /* present: key already in OUT, kept as is */
} MergeStats;

/* Merge the database at in_path into out, all or nothing.  Idempotent: runs
 * are matched on their whole environment, variants on (run, source hash),
 * cases on their key (a key already in out keeps its row).  0 or -1 with err
 * (KVX_EINPUT: unreadable, OUT itself, a newer layout; KVX_EIO: SQLite). */
int store_merge(Store *out, const char *in_path, MergeStats *st, KvxError *err);

/* ---- store_read.c: the read verbs' side ------------------------------------ */


/* Open a database that must exist, read-only, creating nothing beside it
 * (immutable unless a -wal shows a writer at work); one that fails SQLite's
 * quick check is corrupt (KVX_EIO), one of another layout or a newer kvx's is
 * refused (KVX_EINPUT).  NULL with err.  Close with store_close.  The read
 * verbs (report/, cli/, run/'s replay) read through it. */
Store *store_read_open(const char *path, KvxError *err);
/* The distinct spec names of the stored cases (of run run_id when not 0, of
 * the reference ref_name when not NULL), sorted, into an array in a. */
int store_spec_names(Store *db, int64_t run_id, const char *ref_name, Arena *a,
                     const char ***names, int *n, KvxError *err);

/* The spec_path of each run (kind 'run') that stored cases of spec_name,
 * newest first, into an array in a.  0, or -1 when it cannot be read. */
int store_spec_paths(Store *db, const char *spec_name, Arena *a, const char ***paths, int *n);
/* The boundary a measured run placed its case buffers at (runs.devices_json's
 * buf_align): 0 for a run before it was recorded (the driver's placement), -1
 * for a reference or an unknown run. */
int64_t store_run_buf_align(Store *db, int64_t run_id);

/* ---- store_report.c: `kvx report`'s reads beside its tables ----------------
 * Over the cases of spec in the measured runs (run only_run alone when not
 * 0); a failure to read leaves the answer empty. */

/* A run holding cases of the spec, with its environment ("" for NULL text). */
typedef struct StoreRunInfo {
    int64_t id;
    int reference;                    /* kind 'reference' (an import) */
    const char *kind, *name, *gpu_name, *nvrtc_version, *kvx_version, *arch, *hostname;
    const char *started_at, *measure_json, *command;
    int cc, sm_count, clock_mhz, mem_clock_mhz, driver_version;
    double peak_gbs;
    double wall_s;                    /* NaN: none recorded */
    int ncases;                       /* of this spec */
} StoreRunInfo;
/* The measured runs (or run only_run) and every imported reference, measured
 * first, by id, into an array in a.  0 or -1 with err. */
int store_report_runs(Store *db, const char *spec, int64_t only_run, Arena *a,
                      StoreRunInfo **runs, int *n, KvxError *err);
/* Each run whose cases name several GPUs: its id, how many, their UUIDs. */
typedef void (*StoreMultiGpuFn)(void *ctx, int64_t run_id, int ngpus, const char *uuids);
void store_report_multi_gpu(Store *db, const char *spec, int64_t only_run,
                            StoreMultiGpuFn each, void *ctx);
/* Each status with its count. */
typedef void (*StoreStatusFn)(void *ctx, const char *status, int count);
void store_report_statuses(Store *db, const char *spec, int64_t only_run,
                           StoreStatusFn each, void *ctx);
/* Cases stored throttled: how many, the lowest SM clock, the highest maximum. */
void store_report_throttled(Store *db, const char *spec, int64_t only_run, int *n,
                            int *min_mhz, int *max_mhz);
/* Timed cases whose spread stayed above their run's noise target: how many,
 * and the largest spread. */
void store_report_noisy(Store *db, const char *spec, int64_t only_run, int *n,
                        double *max_noise);
/* Each axis name a measured case of spec stored as a workload axis; 1 when
 * some case stored its workload at all, 0 when none did (older files). */
typedef void (*StoreNameFn)(void *ctx, const char *name);
int store_report_workload_axes(Store *db, const char *spec, StoreNameFn each, void *ctx);

/* The rows of a query: the cursor store_cases.h's queries return.  store_rows
 * itself, a query's text and bound parameters, is store_cases.c's,
 * store_io.c's (store_kt_rows) and, until issue 39 moves its queries here,
 * report/results_nvbench.c's (nvbench JSON
 * read with SQLite's JSON functions).  NULL with err when it does not prepare.  next: 1 at a row, 0 at the end, -1 with err "WHAT: ...";
 * text is valid until the next row. */
typedef enum { STORE_NULL, STORE_INT, STORE_REAL, STORE_TEXT } StoreType;
typedef struct StoreRows StoreRows;
StoreRows *store_rows(Store *db, const char *sql, const Value *params, int nparams,
                      KvxError *err);
int store_rows_next(StoreRows *r, const char *what, KvxError *err);
StoreType store_rows_type(const StoreRows *r, int i);
int64_t store_rows_int(const StoreRows *r, int i);
double store_rows_double(const StoreRows *r, int i);
const char *store_rows_text(const StoreRows *r, int i);
void store_rows_close(StoreRows *r);     /* accepts NULL */

/* A Kernel Tuner cache file's JSON text, read with SQLite's JSON functions
 * for `kvx import` (store_io.c, for report/results_kt.c); nothing of the database is read
 * or written.  The rows of part, NULL with err when it does not prepare:
 *   STORE_KT_HEAD    one row: json_valid (1 or 0), then where valid the
 *                    device_name, the kernel_name, and the JSON types
 *                    ("array", "object", ...) of tune_params_keys and cache;
 *   STORE_KT_KEYS    a row per element of tune_params_keys: its type, text;
 *   STORE_KT_FIELDS  a row per field of each cache entry, in file order, and
 *                    a row per element of an entry's "times" array: the
 *                    columns of StoreKtCol (an entry that is no object: one
 *                    row, its field NULL; an empty times: one row, its
 *                    element NULL). */
typedef enum { STORE_KT_HEAD, STORE_KT_KEYS, STORE_KT_FIELDS } StoreKtPart;
typedef enum {
    STORE_KT_ENTRY_ID,                  /* one number per entry, in file order */
    STORE_KT_ENTRY, STORE_KT_ENTRY_TYPE,
    STORE_KT_FIELD, STORE_KT_FIELD_TYPE, STORE_KT_FIELD_TEXT,
    STORE_KT_ELEM_TYPE, STORE_KT_ELEM    /* an element of times, or NULL */
} StoreKtCol;
StoreRows *store_kt_rows(Store *s, StoreKtPart part, const char *json, KvxError *err);

/* `kvx export`'s rows: every case (of spec, or all when NULL) with every
 * stored column of it, its run and its variant; the names and order are
 * docs/results-schema.md's `kvx export`. */
typedef struct StoreCell {
    StoreType type;
    int64_t i;
    double d;
    const char *text;         /* valid until the next store_export_next */
    int json;                 /* text is valid JSON of a JSON-valued column */
} StoreCell;
typedef struct StoreExport StoreExport;
StoreExport *store_export_open(Store *db, const char *spec, KvxError *err);
int store_export_ncols(const StoreExport *x);
const char *store_export_name(const StoreExport *x, int i);
/* The next row into cells[0..ncols).  1, 0 at the end, -1 with err. */
int store_export_next(StoreExport *x, StoreCell *cells, KvxError *err);
void store_export_close(StoreExport *x);     /* accepts NULL */

/* The SQL of value name v (a SpecValue) over cases c and variants v: a
 * column, or an expression over them (l2_atomics). */
const char *store_value_sql(int v);

/* A CaseRow with every measurement NaN, counts 0, throttled -1 (unknown) and strings NULL. */
void store_case_init(CaseRow *c);

#endif
