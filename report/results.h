/* results: what the verbs that read the results store do (table, report,
 * compare, export) and the ones that feed it from outside a run (import,
 * merge).  Their command lines are cmd_results.c's (cli.h).
 *
 * The functions below write to a FILE* so that tests and `kvx report` call
 * them without a process or a redirection; errors go into a KvxError
 * (KVX_EINPUT: bad input, an unknown axis, a bad --where, no such database;
 * KVX_EIO: a database or file failure).  Files: results.c (case loading,
 * formats), results_where.c (--where to the store's condition), results_table.c (`table`,
 * `compare`), results_io.c (`export`, `import`; merge is store_merge), results_kt.c (a Kernel
 * Tuner cache file read for `import`), results_report.c
 * (`report`, gnuplot).  docs/results-schema.md describes the database. */
#ifndef KVX_RESULTS_H
#define KVX_RESULTS_H

#include "core/json.h"
#include "core/num.h"
#include "core/util.h"
#include "store/store_cases.h"


/* The database the verbs read when --db is not given (and `kvx run` writes). */
#define RESULTS_DEFAULT_DB "results/kvx.db"
/* Limits of `kvx import` (docs/spec.md, Limits). */
#define RESULTS_MAX_IMPORT_ROWS 1000000
#define RESULTS_MAX_IMPORT_BYTES (256u << 20)
/* Fields of all rows together: rows and bytes alone let one import hold
 * 10^8 fields (gigabytes, at some 30 bytes of bookkeeping a field). */
#define RESULTS_MAX_IMPORT_CELLS 10000000
/* The cases' axes (JSON) and labels, all rows together: each repeats the
 * header's axis names, so a long header times many rows is unbounded else. */
#define RESULTS_MAX_IMPORT_TEXT (256u << 20)

typedef enum { RESULTS_MD, RESULTS_CSV, RESULTS_JSON, RESULTS_NVBENCH } ResultsFormat;

/* Which cases of a database a table reads (spec NULL: the one spec stored,
 * an error if several; results_resolve_spec fills it). */
typedef StoreSel ResultsSel;

typedef struct TableOpts {
    ResultsSel sel;
    const char *const *rows; int nrows;   /* axis names */
    const char *const *cols; int ncols;
    const char *value;         /* NULL: median_ms */
    int ratio;                 /* 1: value / baseline's; 2: speed-up, baseline's / value */
    const char *baseline;      /* "axis=value,..."; NULL: the run's stored baseline */
    const char *where;         /* kvx expression over axes, status and values */
    ResultsFormat format;
    const struct Spec *spec;   /* optional: its `let:` names may appear in where */
    int failed_values;         /* 1: a failed case with a stored value (the worker times
                                  mismatched cases) shows it, marked with its status */
    double min_diff;           /* compare: smallest |B - A| / |A| that is marked; 0: none */
    int best;                  /* table: per row, the best case instead of a pivot */
    const char *beside;        /* with best: "AXIS=V1,V2...": the cases at those values (a
                                  library's calls) are not candidates but shown beside the
                                  best, the best of them with the ratio; NULL: none */
    int failures;              /* table: the failed cases with their status and detail */
} TableOpts;

/* Pivot the selected cases and write the table.  0; 1 when no case matches
 * (or, with o->failures, none failed), nothing written and err saying so; or
 * -1 with err (KVX_EINPUT for a bad option, KVX_EIO for the database).  With
 * o->failures: one row per failed case (axes, status, stored detail) instead
 * of a pivot.  With o->best: one
 * line per value tuple of the rows axes with the best passing case among the
 * matching ones (lowest time, error or count; highest bandwidth, % of peak or
 * rate; a speed-up reverses it), named by the other axes that vary, and the
 * runner-up with the margin between them (md or csv); with o->beside, the best
 * of the cases at the beside values next to it, and how many times better the
 * best is (>1: the best wins). */
int results_table(Store *db, const TableOpts *o, FILE *out, KvxError *err);

/* Side by side: a table over A and one over B with the same options (ratio and
 * baseline included), written long: one line per cell with A, B, B/A and a `*`
 * where |B - A| exceeds both min_diff*|A| and the larger of noise*value of the two
 * cells (ratio cells: both sides' noise, each the case's and its baseline's
 * combined; a side without it gives `?`).  With ratio and no baseline, a B that
 * stores no baseline (an imported reference) takes A's stored one. */
typedef struct CompareSide {
    Store *db;
    ResultsSel sel;
    const char *name;          /* as the user wrote it, for the caption */
    const char *where;         /* this side only, and-ed with o->where; may be NULL */
} CompareSide;
int results_compare(const CompareSide *a, const CompareSide *b, const TableOpts *o, FILE *out,
                    KvxError *err);

/* Every selected case, axes flattened to columns, with its run's environment
 * and its variant's compile facts.  spec NULL: every spec. */
int results_export(Store *db, const char *spec, ResultsFormat f, FILE *out,
                   KvxError *err);

typedef struct ImportOpts {
    const char *name;          /* reference name, required: runs.name */
    const char *spec;          /* spec name the rows are filed under; NULL: name */
    const char *gpu;           /* GPU the figures were measured on, may be NULL */
    const char *source;        /* where the file came from, stored as the command */
    StrBuf *left;              /* where not NULL: gets what of the file no column holds (a Kernel
                                * Tuner cache's other fields: "compile_time, timestamp, ..."), or "" */
} ImportOpts;

/* Read a reference CSV (axis columns, then value columns), nvbench's JSON or
 * a Kernel Tuner cache file into a new run of kind 'reference'.  *nrows gets the rows stored.  0 or -1 with err. */
int results_import(Store *st, const char *csv_path, const ImportOpts *o,
                   int *nrows, KvxError *err);

/* Kernel Tuner's error name (InvalidConfig, CompilationFailedConfig,
 * RuntimeFailedConfig) for a case's status, NULL for ok or NULL: the table
 * `kvx import` reads a cache file's errors back by (results_kt.c). */
const char *results_kt_error(const char *status);

/* Write DIR/<spec name>.md (and plots) for a spec; *written gets the path
 * (malloc'd).  gnuplot is looked up on PATH, or taken from $KVX_GNUPLOT.
 * only_run: report that measured run alone (0: every measured run, one section
 * each); imported reference runs are always included.
 * failed_values: the report's tables show failed cases' stored values, marked
 * (TableOpts.failed_values). */
int results_report(Store *db, const char *spec_path, const char *out_dir,
                   int64_t only_run, int failed_values, char **written, KvxError *err);

/* ---- shared by results_*.c ------------------------------------------------ */

/* Parse "md", "csv", "json".  -1 if none of them. */
int results_format_parse(const char *s, ResultsFormat *f);
/* Split "a,b,c" into arena strings; *n gets the count. */
const char **results_split(Arena *a, const char *s, int *n);
/* Fill sel->spec when NULL and exactly one spec is stored (names in err). */
int results_resolve_spec(Store *db, ResultsSel *sel, Arena *a, KvxError *err);
/* A CSV field (JSON strings: core/json.h's json_write_str, valid JSON
 * whatever bytes a database holds). */
void results_csv_field(FILE *out, const char *s);
/* The value names --value accepts are core/values.h's (inspect.KEY besides). */

#endif
