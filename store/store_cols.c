/* store_cols: the table of stored columns (store_cols.h).  A column added to
 * the layout is a line here, or for a measured value a line of core/values.h's
 * KVX_VALUES, with the next `since` and STORE_SCHEMA_VERSION raised: the file
 * is created, migrated, inserted and exported from it.  Each value name's SQL
 * is here too (store_value_sql). */
#include "store_cols.h"
#include "store.h"

#include <stddef.h>
#include <string.h>

/* A column of core/values.h's table: cases columns (TIMED, RES, ROW from
 * CaseRow; LATER filled by an update), variants columns (VAR). */
#define STORE_SQLTYPE_REAL "REAL"
#define STORE_SQLTYPE_INT "INTEGER"
#define STORE_SQLTYPE_MHZ "INTEGER"
#define STORE_SQLTYPE_TRI "INTEGER"
#define VALUE_COL(n, type, since, bind, off, meaning) \
    {#n, STORE_SQLTYPE_##type, "", since, bind, off, 0, meaning, NULL},
#define CASES_TIMED(n, type, since, meaning) VALUE_COL(n, type, since, SCOL_##type, offsetof(CaseRow, n), meaning)
#define CASES_RES CASES_TIMED
#define CASES_ROW CASES_TIMED
#define CASES_LATER(n, type, since, meaning) VALUE_COL(n, type, since, SCOL_NONE, 0, meaning)
#define CASES_VAR(n, type, since, meaning)
#define CASES_SQL(n, type, since, meaning)
#define STORE_COL_CASE(n, from, type, since, tab, unit, imp, doc, meaning) CASES_##from(n, type, since, meaning)
#define VARIANTS_TIMED(n, type, since, meaning)
#define VARIANTS_RES VARIANTS_TIMED
#define VARIANTS_ROW VARIANTS_TIMED
#define VARIANTS_LATER VARIANTS_TIMED
#define VARIANTS_SQL VARIANTS_TIMED
#define VARIANTS_VAR(n, type, since, meaning) VALUE_COL(n, type, since, SCOL_##type, offsetof(VariantRow, n), meaning)
#define STORE_COL_VAR(n, from, type, since, tab, unit, imp, doc, meaning) VARIANTS_##from(n, type, since, meaning)

static const StoreCol runs_cols[] = {
    {"id", "INTEGER", " PRIMARY KEY", 1, SCOL_NONE, 0, 0,
     "run id (`kvx table --run ID`, `DB:run=ID`)", NULL},
    {"kind", "TEXT", " NOT NULL DEFAULT 'run'", 1, SCOL_TEXT, offsetof(RunEnv, kind), 0,
     "`run` (measured by kvx) or `reference` (imported with `kvx import`)", "run"},
    {"name", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, ref_name), 0,
     "references: the `--name` given to import; NULL for runs", NULL},
    {"spec_name", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, spec_name), 0,
     "the spec's `name:` (for a reference: `--spec`, else its NAME)", NULL},
    {"spec_path", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, spec_path), 0,
     "the spec file (for a reference: the CSV file)", NULL},
    {"gpu_name", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, gpu_name), 0,
     "the (first) GPU's name; a reference: `--gpu`", NULL},
    {"gpu_uuid", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, gpu_uuid), 0,
     "the (first) GPU's UUID; references get `ref:NAME`", NULL},
    {"cc", "INTEGER", "", 1, SCOL_INT, offsetof(RunEnv, cc), 0,
     "compute capability, 90 for sm_90", NULL},
    {"sm_count", "INTEGER", "", 1, SCOL_INT, offsetof(RunEnv, sm_count), 0,
     "multiprocessors", NULL},
    {"l2_bytes", "INTEGER", "", 1, SCOL_I64, offsetof(RunEnv, l2_bytes), 0,
     "L2 size, bytes", NULL},
    {"mem_bytes", "INTEGER", "", 1, SCOL_I64, offsetof(RunEnv, mem_bytes), 0,
     "device memory, bytes", NULL},
    {"clock_mhz", "INTEGER", "", 1, SCOL_INT, offsetof(RunEnv, clock_mhz), 0,
     "maximum SM clock the driver reports, MHz", NULL},
    {"mem_clock_mhz", "INTEGER", "", 1, SCOL_INT, offsetof(RunEnv, mem_clock_mhz), 0,
     "maximum memory clock the driver reports, MHz", NULL},
    {"peak_gbs", "REAL", "", 1, SCOL_REAL, offsetof(RunEnv, peak_gbs), 0,
     "peak memory bandwidth, GB/s (1e9 bytes/s)", NULL},
    {"driver_version", "INTEGER", "", 1, SCOL_INT, offsetof(RunEnv, driver_version), 0,
     "`cuDriverGetVersion`, 13000 for 13.0", NULL},
    {"nvrtc_version", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, nvrtc_version), 0,
     "NVRTC's version, `13.0`", NULL},
    {"kvx_version", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, kvx_version), 0,
     "kvx's release and commit", NULL},
    {"arch", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, arch), 0,
     "the target, `sm_90`", NULL},
    {"hostname", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, hostname), 0,
     "where the run was started", NULL},
    {"command", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, command), 0,
     "the command line (a reference: the file it came from)", NULL},
    {"measure_json", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, measure_json), 1,
     "measurement settings (warm-up, samples, noise target, budget, L2 flush, timeout, seed) "
     "as JSON; `flush_l2` is `\"read\"`, `\"write\"` or `false` (`true` in databases before "
     "the two methods: the write method)", NULL},
    {"baseline_json", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, baseline_json), 1,
     "the spec's `baseline:` as JSON, e.g. `{\"strategy\":\"naive\"}`: the default of "
     "`--ratio`", NULL},
    {"axes_json", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, axes_json), 1,
     "declared axes and their values in order, e.g. "
     "`{\"strategy\":[\"naive\",\"warp_cg\"],\"n\":[16777216]}`: the row and column order of "
     "tables", NULL},
    {"started_at", "TEXT", "", 1, SCOL_TEXT, offsetof(RunEnv, started_at), 0,
     "ISO 8601 UTC", NULL},
    {"wall_s", "REAL", "", 1, SCOL_NONE, 0, 0,
     "wall time of the run, s (NULL while running or killed)", NULL},
    {"profile_json", "TEXT", "", 1, SCOL_NONE, 0, 1,
     "where the time went, JSON: `wall_s`; `stages_s` (load, probe, store, workers, loop, "
     "search (a search's time between its rounds), finish: they add up to `wall_s`); `loop_s` (the parent's side: compile_wait, variants, "
     "bind, handout, commit, poll); `worker_s` (the workers' steps, as `cases.profile_json`, "
     "summed); `lost_s` (cases that timed out or whose worker died, until then); `host_wait_s` (the "
     "cases' `host_wait_ms`, summed); `ahead_refs`, `ahead_s` (host references the parent "
     "computed ahead of the GPU, once per key, and its time doing so); `resolutions` (points "
     "resolved: each selected point once), `bindings` (resolved cases bound to their compiled "
     "kernels); `gpu_s`, "
     "`prep_gpu_s`, `launches`, `samples`, `throttled`; `cases_per_s`, `gpu_share` (gpu_s / "
     "wall), `gpu_busy_share` (with the resets and flushes), `accounted` (the share of the "
     "wall the profile names); `per_worker` (one object a worker slot, replacements included, "
     "in --devices order: `device` (the GPU ordinal), `cases` (results read), `units` (groups "
     "or parts handed to it), `busy_s` (inside cases: the worker's steps but `recv`, and the "
     "wait on cases it never answered), `idle_s` (the loop's time before its last result not "
     "inside a case), `tail_idle_s` (from its last result to the loop's end: nothing left for "
     "it while others finished); busy_s + idle_s + tail_idle_s is `stages_s.loop`; "
     "`busy_share` = busy_s / wall_s); `estimate` (`total_s`: the units' estimated cost, "
     "`cases_from_history`: cases estimated from a stored time, `groups_cut`, `units`: units "
     "handed out, orphans included); `handout` (the first 1024 units in the order they were "
     "handed out: `group` (its index in case order), `part` and `parts` (0 of 1: the whole "
     "group; `parts` 0: the rest of a group whose worker could not be restarted), `cases`, "
     "`worker` (the slot), `est_s` (null for such a rest), `at_s` (since the loop's start)); "
     "docs/design.md (the run stage) has the estimate and the cut; and the older "
     "`compile_wall_s`, `compile_cpu_s`, `sources`, `cache_hits`, `input_s`, `verify_s`, "
     "`measure_s`, `cases`", NULL},
    {"devices_json", "TEXT", "", 2, SCOL_TEXT, offsetof(RunEnv, devices_json), 1,
     "every GPU the run measured on: `[{\"ordinal\":0,\"name\":\"NVIDIA "
     "H200\",\"uuid\":\"GPU-...\",\"cc\":90,\"sm_count\":132,\"clock_mhz\":1980,\"mem_clock_mhz\":3201,\"peak_gbs\":4814.3,\"buf_align\":2097152},"
     " ...]` (`buf_align`: the boundary every case buffer starts at, plus its `offset:`; absent "
     "before kvx 0.2.0, whose buffers sat where the driver put them: docs/measurement.md); the "
     "`gpu_*` columns are the first; each case names its own in "
     "`cases.device_uuid`", NULL},
    {"search_strategy", "TEXT", "", 7, SCOL_TEXT, offsetof(RunEnv, search_strategy), 0,
     "`kvx run --search`: the strategy; NULL for a run of every selected point", NULL},
    {"search_budget", "TEXT", "", 7, SCOL_TEXT, offsetof(RunEnv, search_budget), 0,
     "the search's `--budget` as given (`150`, `5%`, `30gpu-min`, `10wall-min`)", NULL},
    {"search_objective", "TEXT", "", 7, SCOL_TEXT, offsetof(RunEnv, search_objective), 0,
     "the search's `--objective`, `VALUE[,POINTS]`", NULL},
    {"search_seed", "TEXT", "", 7, SCOL_TEXT, offsetof(RunEnv, search_seed), 0,
     "the search's `--search-seed` in decimal (TEXT: a seed is any 64-bit number); each batch of a "
     "search is a run row of its own", NULL},
};

static const StoreCol variants_cols[] = {
    {"id", "INTEGER", " PRIMARY KEY", 1, SCOL_NONE, 0, 0,
     "variant id (`cases.variant_id`)", NULL},
    {"run_id", "INTEGER", " NOT NULL REFERENCES runs(id)", 1, SCOL_NONE, 0, 0,
     "the run (`runs.id`); (`run_id`, `source_hash`) is unique", NULL},
    {"spec_name", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, spec_name), 0,
     "the spec's `name:`", NULL},
    {"source_hash", "TEXT", " NOT NULL", 1, SCOL_TEXT, offsetof(VariantRow, source_hash), 0,
     "SHA-256 of the emitted source", NULL},
    {"label", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, label), 0,
     "code axes, `strategy=naive counter=u32`", NULL},
    {"code_axes", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, code_axes_json), 1,
     "the same as JSON", NULL},
    {"arch", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, arch), 0,
     "NVRTC target, `sm_90`", NULL},
    {"options", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, options), 0,
     "NVRTC options, space-separated", NULL},
    {"compile_ok", "INTEGER", "", 1, SCOL_INT, offsetof(VariantRow, compile_ok), 0,
     "1 / 0", NULL},
    {"compile_log", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, compile_log), 0,
     "NVRTC log, NULL when empty", NULL},
    KVX_VALUES(STORE_COL_VAR)
    {"inspect_json", "TEXT", "", 1, SCOL_TEXT, offsetof(VariantRow, inspect_json), 1,
     "PTX/SASS facts as JSON (`kvx table --value inspect.KEY`): `tags`, the counts by kind, "
     "`sites` (per atomic call site: `space`, `source`, `ptxas`, `sass`, `per_warp`; "
     "docs/inspect.md), `sites_more` (sites past the 128 listed) and `disassembler` (the nvdisasm and "
     "version that read the SASS); NULL "
     "when not inspected", NULL},
    {"kernels_json", "TEXT", "", 5, SCOL_TEXT, offsetof(VariantRow, kernels_json), 1,
     "each entry point of the source with its ptxas figures, in the report's order: "
     "`[{\"kernel\":\"filter_count_sum\",\"regs\":14,\"spill_stores\":0,\"spill_loads\":0,"
     "\"smem_static\":8192,\"stack\":0}, ...]`; NULL when the compile failed or in files "
     "before schema 5", NULL},
};

static const StoreCol cases_cols[] = {
    {"id", "INTEGER", " PRIMARY KEY", 1, SCOL_NONE, 0, 0,
     "case id", NULL},
    {"run_id", "INTEGER", " NOT NULL REFERENCES runs(id)", 1, SCOL_NONE, 0, 0,
     "the run (`runs.id`)", NULL},
    {"variant_id", "INTEGER", " REFERENCES variants(id)", 1, SCOL_NONE, 0, 0,
     "NULL for imported reference rows", NULL},
    {"key", "TEXT", " NOT NULL UNIQUE", 1, SCOL_TEXT, offsetof(CaseRow, key), 0,
     "SHA-256 of (spec name, source hash, options, arch, the point as every axis's name=value in "
     "canonical text, the device's UUID, measurement settings; not the display label): `kvx run` "
     "skips stored keys; `kvx merge` keeps one row per key", NULL},
    {"spec_name", "TEXT", "", 1, SCOL_TEXT, offsetof(CaseRow, spec_name), 0,
     "the spec's `name:`", NULL},
    {"label", "TEXT", "", 1, SCOL_TEXT, offsetof(CaseRow, label), 0,
     "every axis, `strategy=naive counter=u32 hit_rate=0.5`", NULL},
    {"axes", "TEXT", " NOT NULL", 1, SCOL_TEXT, offsetof(CaseRow, axes_json), 1,
     "every axis value at this point as a JSON object: "
     "`{\"strategy\":\"naive\",\"hit_rate\":0.5,\"n\":16777216}`; numbers are JSON numbers", "{}"},
    {"workload", "TEXT", "", 1, SCOL_TEXT, offsetof(CaseRow, workload_json), 1,
     "the workload axes only, JSON", NULL},
    {"device_uuid", "TEXT", "", 1, SCOL_TEXT, offsetof(CaseRow, device_uuid), 0,
     "the GPU that measured the case (`runs.devices_json` has them all)", NULL},
    {"status", "TEXT", " NOT NULL", 1, SCOL_TEXT, offsetof(CaseRow, status), 0,
     "`ok`, `mismatch`, `compile_error`, `load_error`, `launch_error`, `fault`, `timeout`, "
     "`skipped`", "ok"},
    {"detail", "TEXT", "", 1, SCOL_TEXT, offsetof(CaseRow, detail), 0,
     "error name and message, first mismatching elements, skip reason", NULL},
    {"grid_x", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, grid[0]), 0,
     "grid size in x (launch geometry)", NULL},
    {"grid_y", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, grid[1]), 0,
     "grid size in y (launch geometry)", NULL},
    {"grid_z", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, grid[2]), 0,
     "grid size in z (launch geometry)", NULL},
    {"block_x", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, block[0]), 0,
     "block size in x (launch geometry)", NULL},
    {"block_y", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, block[1]), 0,
     "block size in y (launch geometry)", NULL},
    {"block_z", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, block[2]), 0,
     "block size in z (launch geometry)", NULL},
    {"smem", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, smem), 0,
     "dynamic shared memory, bytes", NULL},
    {"cluster_x", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, cluster[0]), 0,
     "cluster size in x (launch geometry)", NULL},
    {"cluster_y", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, cluster[1]), 0,
     "cluster size in y (launch geometry)", NULL},
    {"cluster_z", "INTEGER", "", 1, SCOL_I64, offsetof(CaseRow, cluster[2]), 0,
     "cluster size in z (launch geometry)", NULL},
    KVX_VALUES(STORE_COL_CASE)
    {"stored_at", "TEXT", " NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))", 1, SCOL_NONE, 0, 0,
     "ISO 8601 UTC", NULL},
    {"profile_json", "TEXT", "", 3, SCOL_TEXT, offsetof(CaseRow, profile_json), 1,
     "the worker's steps for this case, ms of host wall time: `send` (the previous result), "
     "`recv` (waiting for this case), `module`, `limits`, `buffers`, `ref_kernel` (the "
     "reference kernel, when this case ran it), `verify`, `reference`, `compare`, `warmup`, "
     "`samples`, `clocks`, `stats`; and `gpu_ms` (kernel time of the samples, summed), "
     "`prep_gpu_ms` (their resets and L2 flushes, GPU time), `launch_ms` (the verified launch,"
     " events), `host_wait_ms` (host wall time the GPU had nothing of this case to run: the worker"
     " generating inputs on the host, or waiting after the samples for a host reference the parent"
     " has not yet computed), `warmups`, `launches` (all kernel launches, batch tails included).  NULL for a"
     " case no worker answered (timeout, death, compile error, skipped by the parent)", NULL},
    {"counters_json", "TEXT", "", 6, SCOL_NONE, 0, 1,
     "every metric of `kvx run --counters` (Nsight Compute's names) for the case's one profiled "
     "launch, JSON: `{\"dram__bytes_read.sum\":67108864,...}`, null where ncu gave no number "
     "(`kvx table --value counter.NAME`); the four fixed columns above hold `--counters "
     "default`'s metrics too, and a database migrated from schema 5 or older has them copied here; NULL "
     "when not collected", NULL},
    {"samples_json", "TEXT", "", 6, SCOL_TEXT, offsetof(CaseRow, samples_json), 1,
     "`kvx run --keep-samples`: every timed sample's kernel time, ms per launch, in the order "
     "taken, as a JSON array (`samples` of them; the statistics above are over these); NULL "
     "when not kept", NULL},
};
#define N(a) ((int)(sizeof a / sizeof a[0]))
const StoreTable store_tables[STORE_NTABLES] = {
    [STORE_T_RUNS] = {"runs", runs_cols, N(runs_cols), NULL},
    [STORE_T_VARIANTS] = {"variants", variants_cols, N(variants_cols), "UNIQUE (run_id, source_hash)"},
    [STORE_T_CASES] = {"cases", cases_cols, N(cases_cols), NULL},
};

const StoreCol *store_col_find(const StoreTable *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->cols[i].name, name))
            return &t->cols[i];
    return NULL;
}

void store_cols_create_sql(const StoreTable *t, StrBuf *b)
{
    sb_printf(b, "CREATE TABLE IF NOT EXISTS %s (", t->name);
    for (int i = 0; i < t->ncols; i++)
        sb_printf(b, "%s%s %s%s", i ? ", " : "", t->cols[i].name, t->cols[i].type,
                  t->cols[i].constraint);
    if (t->tail)
        sb_printf(b, ", %s", t->tail);
    sb_puts(b, ");");
}

void store_cols_markdown(const StoreTable *t, StrBuf *b)
{
    sb_puts(b, "| column | type | meaning |\n| --- | --- | --- |\n");
    for (int i = 0; i < t->ncols; i++) {
        const StoreCol *c = &t->cols[i];
        sb_printf(b, "| `%s` | %s%s | ", c->name, c->type,
                  strstr(c->constraint, "UNIQUE") ? " UNIQUE" : "");
        if (c->since > 1)
            sb_printf(b, "(schema %d) ", c->since);
        sb_printf(b, "%s |\n", c->meaning);
    }
}

/* ---- the value names' SQL ---------------------------------------------------- */

/* A value name's column (cases c, variants v), by SpecValue; an SQL line's
 * expression is derived[]'s. */
#define SQL_OF_TIMED(n) "c." #n
#define SQL_OF_RES SQL_OF_TIMED
#define SQL_OF_ROW SQL_OF_TIMED
#define SQL_OF_LATER SQL_OF_TIMED
#define SQL_OF_VAR(n) "v." #n
#define SQL_OF_SQL(n) NULL
#define VALUE_SQL_OBJ(n, from) [SPEC_VALUE_##n] = SQL_OF_##from(n),
#define VALUE_SQL_TAB VALUE_SQL_OBJ
#define VALUE_SQL_FACT VALUE_SQL_OBJ
#define VALUE_SQL_NO(n, from)
static const char *const value_sql[SPEC_VALUE_COUNT] = {
#define X(n, from, type, since, tab, unit, imp, doc, meaning) VALUE_SQL_##tab(n, from)
    KVX_VALUES(X)
#undef X
};

/* The values of KVX_VALUES' SQL lines: expressions over the stored columns. */
static const struct {
    SpecValue v;
    const char *sql;
} derived[] = {
    {SPEC_VALUE_l2_atomics, "(c.l2_atom_requests + c.l2_red_requests)"},
    {SPEC_VALUE_l2_atomics_per_1k, "((c.l2_atom_requests + c.l2_red_requests) * 1000.0 / nullif(c.atomics, 0))"},
};

const char *store_value_sql(int v)
{
    KVX_ASSERT(v >= 0 && v < SPEC_VALUE_COUNT);
    if (value_sql[v])
        return value_sql[v];
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++)
        if ((int)derived[i].v == v)
            return derived[i].sql;
    KVX_ASSERT(!"an SQL line of KVX_VALUES has an expression in derived[]");
    return NULL;
}
