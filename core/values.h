/* values: the names of the values a results table can show (`kvx table
 * --value`, a report table's `value:`) and what each means.
 *
 * The list lives in core/ so that the spec loader can check a report's value:
 * without depending on the later stages; report/results.c gives each name its SQL and
 * unit in a table indexed by SpecValue, and docs/spec.md lists every name
 * (tests/test_results.c holds the docs to it).  Besides these, inspect.KEY
 * names a key of a variant's PTX/SASS facts. */
#ifndef KVX_VALUES_H
#define KVX_VALUES_H

/* X(name, what it means): the order of kvx table's messages and of the docs. */
#define SPEC_VALUES(X)                                                  \
    X(median_ms, "median time")                                         \
    X(min_ms, "minimum time")                                           \
    X(mean_ms, "mean time")                                             \
    X(max_ms, "maximum time")                                           \
    X(stdev_ms, "standard deviation of the time")                      \
    X(gbs, "bandwidth (declared bytes / median time)")                 \
    X(pct_peak, "bandwidth as % of the device's peak")                 \
    X(elems_per_s, "elements per second")                               \
    X(atomics_per_s, "atomic operations per second")                    \
    X(rel_err, "relative error of a float check")                       \
    X(noise, "relative spread (p75-p25)/median")                        \
    X(samples, "timed samples")                                         \
    X(sm_mhz, "SM clock read during the samples (MHz, NVML)")          \
    X(throttled, "1 when the SM clock fell below 90% of its maximum")  \
    X(l2_atomics, "global atomic and reduction requests that reached L2 (ncu)") \
    X(l2_atomics_per_1k, "L2 atomic requests per 1,000 of the spec's atomics (ncu)") \
    X(dram_read_bytes, "bytes read from device memory (ncu)")          \
    X(dram_write_bytes, "bytes written to device memory (ncu)")        \
    X(regs, "registers per thread")                                     \
    X(spill_stores, "spill stores (bytes)")                             \
    X(spill_loads, "spill loads (bytes)")                               \
    X(stack, "stack frame (bytes)")                                     \
    X(smem_static, "static shared memory (bytes)")                      \
    X(compile_ms, "NVRTC compile time")

typedef enum {
#define X(n, doc) SPEC_VALUE_##n,
    SPEC_VALUES(X)
#undef X
    SPEC_VALUE_COUNT
} SpecValue;

/* Names and meanings by SpecValue; names end with NULL. */
extern const char *const spec_value_names[];
extern const char *const spec_value_docs[];

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
