/* values: the one table of the values kvx stores for a case and its variant
 * (KVX_VALUES below), and the names a results table can show (`kvx table
 * --value`, `--where`, a report table's `value:`) with what each means.
 *
 * The table lives in core/ so that the spec loader can check a report's
 * value: without depending on the later stages, and so that the store, the
 * report verbs and the run expand the same lines; docs/spec.md lists every
 * name (tests/test_results.c holds the docs to it).  Besides these,
 * inspect.KEY names a key of a variant's PTX/SASS facts and counter.METRIC
 * an Nsight Compute metric. */
#ifndef KVX_VALUES_H
#define KVX_VALUES_H

/* The one table of measured and compiled values.  Each line is a value a
 * case or its variant has; from it come the stored column (store/store_cols.c:
 * CREATE TABLE, migrations, the insert, docs/results-schema.md), the field of
 * the row struct and the copy from a worker's result (store/store.h), the
 * names `kvx table --value`, `--where` and a report's value: accept (below,
 * and their SQL in store/), the columns `kvx import` reads and `kvx export`
 * writes, and the objectives of a search.  Adding a value is one line here
 * (and the code that measures it).
 *
 * X(name, from, type, since, tab, unit, import, doc, meaning):
 *   from    TIMED  a cases column from the worker's result (CaseResult.name),
 *                  NULL for a case with no samples
 *           RES    a cases column from the worker's result as it is
 *           ROW    a cases column the parent fills (metrics, rates, the verdict
 *                  on the clocks)
 *           LATER  a cases column a later pass fills (`--counters`)
 *           VAR    a variants column (VariantRow.name: the compile's figures)
 *           SQL    no column: an expression over the stored ones (store/)
 *   type    REAL (double, NaN is NULL), INT (int), MHZ (int, 0 is NULL),
 *           TRI (int 1 or 0, -1 is NULL); the SQL type follows
 *   since   the results schema that added the column (store.h)
 *   tab     OBJ  a value name, measured (a failed case's is not shown), and a
 *                search's --objective (lower is better unless the unit is
 *                GB/s, % or a rate)
 *           TAB  a value name, measured
 *           FACT a value name that a failed case has as well (its compile's,
 *                its check's)
 *           NO   stored, not a value name
 *   unit    how a table shows it (ValueUnit)
 *   import  IMP: a column `kvx import` reads (a double of CaseRow); NO
 *   doc     kvx table's caption of the value (docs/spec.md lists the names)
 *   meaning the column's meaning in docs/results-schema.md */
#define KVX_VALUES(X)                                                                                        \
    X(median_ms, TIMED, REAL, 1, OBJ, VALUE_TIME, IMP, "median time",                                        \
      "median kernel time per launch over the samples, ms (CUDA events)")                                    \
    X(min_ms, TIMED, REAL, 1, OBJ, VALUE_TIME, IMP, "minimum time", "fastest sample, ms per launch")         \
    X(max_ms, TIMED, REAL, 1, OBJ, VALUE_TIME, IMP, "maximum time", "slowest sample, ms per launch")         \
    X(mean_ms, TIMED, REAL, 1, OBJ, VALUE_TIME, IMP, "mean time", "mean over the samples, ms per launch")    \
    X(stdev_ms, TIMED, REAL, 1, TAB, VALUE_TIME, IMP, "standard deviation of the time",                      \
      "standard deviation over the samples, ms")                                                             \
    X(noise, TIMED, REAL, 1, TAB, VALUE_FRAC, IMP, "relative spread (p75-p25)/median",                       \
      "relative spread (p75 − p25) / median")                                                            \
    X(samples, RES, INT, 1, TAB, VALUE_COUNT, NO, "timed samples", "timed samples")                          \
    X(rel_err, RES, REAL, 1, FACT, VALUE_SCI, IMP, "relative error of a float check",                        \
      "relative error of a float check (2-norm), NULL when not applicable")                                  \
    X(bytes, ROW, REAL, 1, NO, VALUE_COUNT, IMP, "",                                                         \
      "the spec's declared `bytes` metric, NULL when undeclared or, for one that reads a scalar output, "    \
      "when the worker sent no value (docs/spec.md, Metrics)")                                               \
    X(atomics, ROW, REAL, 1, NO, VALUE_COUNT, IMP, "",                                                       \
      "the spec's declared `atomics` metric, NULL when undeclared or, for one that reads a scalar output, "  \
      "when the worker sent no value (docs/spec.md, Metrics)")                                               \
    X(elements, ROW, REAL, 1, NO, VALUE_COUNT, IMP, "",                                                      \
      "the spec's declared `elements` metric, NULL when undeclared or, for one that reads a scalar output, " \
      "when the worker sent no value (docs/spec.md, Metrics)")                                               \
    X(gbs, ROW, REAL, 1, OBJ, VALUE_GBS, IMP, "bandwidth (declared bytes / median time)",                    \
      "bytes / median time, GB/s")                                                                           \
    X(pct_peak, ROW, REAL, 1, OBJ, VALUE_PCT, IMP, "bandwidth as % of the device's peak",                    \
      "`gbs` as % of `runs.peak_gbs`")                                                                       \
    X(elems_per_s, ROW, REAL, 1, OBJ, VALUE_RATE, IMP, "elements per second", "elements per second")         \
    X(atomics_per_s, ROW, REAL, 1, OBJ, VALUE_RATE, IMP, "atomic operations per second",                     \
      "atomics per second")                                                                                  \
    X(t_input_ms, RES, REAL, 1, NO, VALUE_TIME, NO, "", "host time spent generating the inputs, ms")         \
    X(t_verify_ms, RES, REAL, 1, NO, VALUE_TIME, NO, "", "host time spent on verification, ms")              \
    X(t_measure_ms, RES, REAL, 1, NO, VALUE_TIME, NO, "", "host time spent sampling, ms")                    \
    X(sm_mhz, RES, MHZ, 3, TAB, VALUE_COUNT, NO, "SM clock read during the samples (MHz, NVML)",             \
      "SM clock read (NVML) while the case's first batch of samples ran, MHz; NULL when unknown "            \
      "(no NVML)")                                                                                           \
    X(mem_mhz, RES, MHZ, 3, NO, VALUE_COUNT, NO, "",                                                         \
      "memory clock read (NVML) while the case's first batch of samples ran, MHz; NULL when "                \
      "unknown (no NVML)")                                                                                   \
    X(sm_max_mhz, RES, MHZ, 3, NO, VALUE_COUNT, NO, "", "the SM clock's maximum (NVML)")                     \
    X(throttled, ROW, TRI, 3, TAB, VALUE_COUNT, NO, "1 when the SM clock fell below 90% of its maximum",     \
      "1 when `sm_mhz` was below 90% of `sm_max_mhz`, 0 when not, NULL when unknown")                        \
    X(l2_atom_requests, LATER, REAL, 4, NO, VALUE_COUNT, NO, "",                                             \
      "L2 requests of global atomics (Nsight Compute's "                                                     \
      "`lts__t_requests_srcunit_tex_op_atom.sum`, `..._red.sum`), from `kvx run --counters`; "               \
      "NULL when not collected")                                                                             \
    X(l2_red_requests, LATER, REAL, 4, NO, VALUE_COUNT, NO, "",                                              \
      "L2 requests of reductions (Nsight Compute's "                                                         \
      "`lts__t_requests_srcunit_tex_op_atom.sum`, `..._red.sum`), from `kvx run --counters`; "               \
      "NULL when not collected")                                                                             \
    X(dram_read_bytes, LATER, REAL, 4, TAB, VALUE_COUNT, NO, "bytes read from device memory (ncu)",          \
      "bytes read from device memory by the case's one profiled launch (`--counters`)")                      \
    X(dram_write_bytes, LATER, REAL, 4, TAB, VALUE_COUNT, NO, "bytes written to device memory (ncu)",        \
      "bytes written to device memory by the case's one profiled launch (`--counters`)")                     \
    X(l2_atomics, SQL, REAL, 4, TAB, VALUE_COUNT, NO,                                                        \
      "global atomic and reduction requests that reached L2 (ncu)", "")                                      \
    X(l2_atomics_per_1k, SQL, REAL, 4, TAB, VALUE_COUNT, NO,                                                 \
      "L2 atomic requests per 1,000 of the spec's atomics (ncu)", "")                                        \
    X(compile_ms, VAR, REAL, 1, FACT, VALUE_TIME, NO, "NVRTC compile time", "NVRTC time, ms")                \
    X(regs, VAR, INT, 1, FACT, VALUE_COUNT, NO, "registers per thread",                                      \
      "ptxas report: registers per thread (a variant of several kernels: the largest; each "                 \
      "kernel's in `kernels_json`)")                                                                         \
    X(spill_stores, VAR, INT, 1, FACT, VALUE_COUNT, NO, "spill stores (bytes)",                              \
      "ptxas report: spill store bytes (several kernels: the largest)")                                      \
    X(spill_loads, VAR, INT, 1, FACT, VALUE_COUNT, NO, "spill loads (bytes)",                                \
      "ptxas report: spill load bytes (several kernels: the largest)")                                       \
    X(smem_static, VAR, INT, 1, FACT, VALUE_COUNT, NO, "static shared memory (bytes)",                       \
      "ptxas report: static shared memory, bytes (several kernels: the largest)")                            \
    X(stack, VAR, INT, 1, FACT, VALUE_COUNT, NO, "stack frame (bytes)",                                      \
      "ptxas report: stack frame, bytes (several kernels: the largest)")

/* How a table shows a value: its unit and scaling. */
typedef enum {
    VALUE_TIME, VALUE_GBS, VALUE_PCT, VALUE_FRAC, VALUE_RATE, VALUE_COUNT, VALUE_SCI, VALUE_RAW
} ValueUnit;

/* The value names: the lines of KVX_VALUES whose tab is OBJ, TAB or FACT, in
 * the table's order (kvx table's messages, docs/spec.md). */
#define VALUES_NAME_OBJ(n) SPEC_VALUE_##n,
#define VALUES_NAME_TAB(n) SPEC_VALUE_##n,
#define VALUES_NAME_FACT(n) SPEC_VALUE_##n,
#define VALUES_NAME_NO(n)
typedef enum {
#define X(n, from, type, since, tab, unit, imp, doc, meaning) VALUES_NAME_##tab(n)
    KVX_VALUES(X)
#undef X
    SPEC_VALUE_COUNT
} SpecValue;

/* What a value name is, by SpecValue. */
typedef struct ValueInfo {
    const char *name;
    const char *doc;
    ValueUnit unit;
    int measured;       /* 1: a failed case's value is not shown (OBJ, TAB) */
    int objective;      /* 1: OBJ */
} ValueInfo;
extern const ValueInfo values_info[SPEC_VALUE_COUNT];

/* 1 when lower values of v are better (times, counts, errors), 0 when
 * higher are (GB/s, % of peak, rates). */
int values_lower_better(ValueUnit u);

/* The SpecValue of name, or -1 (inspect.KEY is not in the list: the caller
 * accepts it on its own terms). */
int values_find(const char *name);

/* "median_ms, min_ms, ..., compile_ms": for messages. */
const char *values_list(void);

/* Whether metric (after "counter.") can name an Nsight Compute metric of
 * cases.counters_json: letters, digits, _ and ., not empty.  1 or 0.  Any
 * such name is accepted: which metrics a run collected is its --counters. */
int values_counter_valid(const char *metric);

/* The keys of a variant's PTX/SASS facts (variants.inspect_json, written by
 * compile/inspect.c's inspect_to_json; tests/test_doc_claims.c holds the two
 * in step): what `value: inspect.KEY` may name.  Not the per-kind counts
 * (ptx.kinds, sass.kinds: their names hold dots, which a JSON path splits)
 * nor the sites (an array). */
#define INSPECT_KEYS                                                                                      \
    "sass_available", "arch", "disassembler", "tags", "warp_aggregated", "redux_aggregated",                \
    "shfl_aggregated", "cas_loop", "smem_hw_inc", "generic_fallback", "agg_seq", "regs", "spill_stores",   \
    "spill_loads", "smem_static", "ptx.atom", "ptx.red", "ptx.global", "ptx.shared", "ptx.cluster",       \
    "ptx.generic", "ptx.cas", "ptx.b16", "ptx.packed", "ptx.vector", "ptx.b64", "ptx.scope_cta",          \
    "ptx.scope_cluster", "ptx.scope_sys", "ptx.cas_loop", "ptx.kinds_other", "sass.total", "sass.ATOM",   \
    "sass.ATOMG", "sass.ATOMS", "sass.RED", "sass.REDG", "sass.REDAS", "sass.smem_inc", "sass.cas",       \
    "sass.b16", "sass.packed_f16x2", "sass.packed_bf16x2", "sass.vector", "sass.b64", "sass.scope_sys",   \
    "sass.scope_cta", "sass.plain", "sass.kinds_other", "sites_more", "mem.source", "mem.ld_global",    \
    "mem.st_global", "mem.ld_shared", "mem.st_shared", "mem.ld_global_bytes", "mem.st_global_bytes",        \
    "mem.ld_shared_bytes", "mem.st_shared_bytes", "mem.kinds_other"
extern const char *const inspect_keys[];    /* INSPECT_KEYS, then NULL */

/* Whether key (after "inspect.") is one of INSPECT_KEYS.  1 or 0. */
int values_inspect_valid(const char *key);

/* "sass_available, arch, ...": INSPECT_KEYS for messages. */
const char *values_inspect_list(void);

#endif
