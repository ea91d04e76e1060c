/* results_report: `kvx report SPEC.yaml`: one Markdown file per spec with the
 * environment of its runs, the measurement settings, the spec's `report:`
 * tables (or a default pair), the status counts and the plots
 * (results_report_plot.c).
 *
 * The report is assembled in memory and written atomically: a failure leaves
 * the previous report in place.  A table that cannot be built (a bad where, a
 * missing baseline) is one line in the report, not a failed report. */
#include "results_core.h"
#include "gen/spec.h"
#include "host/case.h"

#include <errno.h>
#include <math.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef StoreRunInfo RunInfo;

/* One row of the environment table; the run's stored measurement settings
 * (or an import's command) go to settings. */
static void env_row(const RunInfo *r, FILE *md, StrBuf *settings)
{
    char wall[32] = "", peak[32] = "", drv[32] = "";
    if (!isnan(r->wall_s))
        snprintf(wall, sizeof wall, "%.1f s", r->wall_s);
    if (r->peak_gbs > 0)
        snprintf(peak, sizeof peak, "%.0f", r->peak_gbs);
    if (r->driver_version > 0)
        snprintf(drv, sizeof drv, "%d.%d", r->driver_version / 1000, r->driver_version % 1000 / 10);
    fprintf(md, "| %lld | %s%s%s | %s | ", (long long)r->id, r->kind, r->reference ? " " : "",
            r->name, r->gpu_name);
    if (r->cc)
        fprintf(md, "%d", r->cc);
    fputs(" | ", md);
    if (r->sm_count)
        fprintf(md, "%d", r->sm_count);
    fputs(" | ", md);
    if (r->clock_mhz)
        fprintf(md, "%d / %d", r->clock_mhz, r->mem_clock_mhz);
    fprintf(md, " | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", peak, drv, r->nvrtc_version,
            r->kvx_version, r->arch, r->hostname, r->started_at, wall, r->ncases);
    if (*r->measure_json)
        sb_printf(settings, "- run %lld: `%s`\n", (long long)r->id, r->measure_json);
    if (r->reference && *r->command)
        sb_printf(settings, "- run %lld (imported): `%s`\n", (long long)r->id, r->command);
}

/* The environment table, one row per run holding cases of this spec:
 * measured ones (only run only_run when it is not 0) and imported ones, into
 * *runs (in a).  0 or -1 with err. */
static int env_runs(Store *db, const Spec *spec, int64_t only_run, FILE *md, Arena *a,
                    RunInfo **runs, int *nruns, StrBuf *settings, KvxError *err)
{
    if (store_report_runs(db, spec->name, only_run, a, runs, nruns, err))
        return -1;
    fputs("## Environment\n\n| run | kind | GPU | cc | SMs | clocks (MHz) | peak GB/s | driver |"
          " NVRTC | kvx | arch | host | started | wall | cases |\n"
          "| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- | --- | --- | --- |"
          " ---: | ---: |\n", md);
    for (int i = 0; i < *nruns; i++)
        env_row(&(*runs)[i], md, settings);
    return 0;
}

typedef struct MultiGpu {
    FILE *md;
    int first;
} MultiGpu;

/* A run over several GPUs stores one runs row (the first GPU's identity);
 * its cases name the GPU each ran on: one line per such run. */
static void multi_gpu_line(void *ctx, int64_t run_id, int ngpus, const char *uuids)
{
    MultiGpu *m = ctx;
    fprintf(m->md, "%sRun %lld ran on %d GPUs (%s); the row above shows the first.\n",
            m->first ? "\n" : "", (long long)run_id, ngpus, uuids);
    m->first = 0;
}

/* The environment of the runs (env_runs, env_multi_gpu), then the spec's
 * measurement settings and each run's as stored.  0 or -1 with err. */
static int report_env(Store *db, const Spec *spec, int64_t only_run, FILE *md, Arena *a,
                      RunInfo **runs, int *nruns, KvxError *err)
{
    StrBuf settings;
    sb_init(&settings);
    if (env_runs(db, spec, only_run, md, a, runs, nruns, &settings, err)) {
        sb_free(&settings);
        return -1;
    }
    store_report_multi_gpu(db, spec->name, only_run, multi_gpu_line, &(MultiGpu){md, 1});
    const MeasureSettings *m = &spec->measure;
    fprintf(md, "\n## Measurement\n\nThe spec asks for: warm-up %d, %d to %d samples, noise"
                " target %.3g, budget %.0f ms, L2 flush %s, timeout %.0f s, seed %llu.  As"
                " stored with each run:\n\n%s",
            m->warmup, m->min_samples, m->max_samples, m->noise, m->budget_ms,
            measure_flush_name(m->flush_l2), m->timeout_s, (unsigned long long)m->seed,
            settings.len ? sb_str(&settings) : "- (none stored)\n");
    sb_free(&settings);
    return 0;
}

/* Cases whose SM clock fell below CASE_THROTTLE_SHARE of its maximum while
 * they were sampled (NVML): their times are not the card's best. */
static void report_throttled(Store *db, const Spec *spec, int64_t only_run, FILE *md)
{
    int n, lo, hi;
    store_report_throttled(db, spec->name, only_run, &n, &lo, &hi);
    if (n > 0)
        fprintf(md, "\n%d case%s ran throttled: the SM clock fell to %d MHz (of %d) during the"
                    " samples.  `kvx table --value throttled` shows which.\n",
                n, n > 1 ? "s" : "", lo, hi);
}

static void count_status(void *ctx, const char *status, int count)
{
    ((int *)ctx)[results_status_rank(status)] += count;
}

static void report_statuses(Store *db, const Spec *spec, int64_t only_run, FILE *md)
{
    fputs("\n## Status\n\n| status | cases |\n| --- | ---: |\n", md);
    int counts[CASE_STATUS_COUNT + 1] = {0};
    store_report_statuses(db, spec->name, only_run, count_status, counts);
    for (int i = 0; i <= CASE_STATUS_COUNT; i++)
        if (counts[i])
            fprintf(md, "| %s | %d |\n", i < CASE_STATUS_COUNT ? results_status_names[i]
                                                                 : "(other)", counts[i]);
    /* Timed cases whose sampling ended (max_samples or budget) before the
     * spread met the run's noise target: their medians are less certain. */
    int n;
    double worst;
    store_report_noisy(db, spec->name, only_run, &n, &worst);
    if (n > 0)
        fprintf(md, "\n%d timed case%s stopped sampling with the spread above the run's noise"
                    " target (at most %.3g): the sample or time budget ran out first.  `kvx table"
                    " --value noise` shows which.\n",
                n, n > 1 ? "s" : "", worst);
    report_throttled(db, spec, only_run, md);
}

/* "axis=value,..." of a baseline: (the spec's or a report table's), or NULL
 * when n is 0. */
static const char *baseline_text(const Spec *s, const BaselineEntry *b, int n, Arena *a)
{
    StrBuf t;
    sb_init(&t);
    for (int i = 0; i < n; i++) {
        const Axis *ax = &s->axes[b[i].axis];
        sb_printf(&t, "%s%s=%s", i ? "," : "", ax->name, ax->vals[b[i].value].text);
    }
    const char *out = n ? arena_strdup(a, sb_str(&t)) : NULL;
    sb_free(&t);
    return out;
}

/* One table of the report.  baseline: the spec's, unless the table names its
 * own. */
static void report_table(Store *db, const Spec *spec, int64_t run, const ReportTable *t,
                         const char *baseline, int failed_values, Arena *a, FILE *md)
{
    TableOpts o = {0};
    o.sel.spec = spec->name;
    o.sel.run_id = run;
    /* A measured run holds no library call: the beside values are imported. */
    o.sel.with_refs = t->beside != NULL;
    o.rows = t->rows, o.nrows = t->nrows;
    o.cols = t->cols, o.ncols = t->ncols;
    o.value = t->value;
    o.ratio = t->ratio;
    o.best = t->best;
    o.beside = t->beside;
    o.baseline = t->nbaseline ? baseline_text(spec, t->baseline, t->nbaseline, a) : baseline;
    o.where = t->where;
    o.spec = spec;
    o.failed_values = failed_values || t->failed_values;
    KvxError err = {0};
    fprintf(md, "\n### %s\n\n", t->title ? t->title : t->value ? t->value : "median_ms");
    int rc = results_table(db, &o, md, &err);
    if (rc) {
        fprintf(md, "%s: %s\n", rc == 1 ? "Nothing to tabulate" : "Not tabulated", err.msg);
        kvx_error_clear(&err);
    }
}

/* One `kvx report`: the spec, its runs (measured and imported) and the tables
 * to write for each measured run; the Markdown goes to a memory stream. */
typedef struct Report {
    Store *db;
    Spec *spec;
    const char *dir;
    int64_t only_run;
    Arena *a;
    RunInfo *runs;
    int nruns, nmeasured;
    const char *baseline;       /* the spec's baseline: as text, NULL without one */
    /* Without a report: section, the ratio table over the first two axes and
     * the median-time table. */
    ReportTable defaults[2];
    const char *dcols[1], *drows[1];
    const ReportTable *tables;
    int ntables;
    char *text;
    size_t len;
    FILE *md;
} Report;

/* At least one measured run (run only_run, when given).  0 or -1 with err. */
static int report_runs(Report *R, KvxError *err)
{
    if (report_env(R->db, R->spec, R->only_run, R->md, R->a, &R->runs, &R->nruns, err))
        return -1;
    for (int r = 0; r < R->nruns; r++)
        R->nmeasured += !R->runs[r].reference;
    if (!R->nmeasured && R->only_run) {
        kvx_error_set(err, KVX_EINPUT, NULL, "run %lld of spec '%s' is not in the database",
                      (long long)R->only_run, R->spec->name);
        return -1;
    }
    if (!R->nmeasured) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no measured run of spec '%s' in the database",
                      R->spec->name);
        return -1;
    }
    return 0;
}

/* The spec's report: tables, or the default pair (the ratio table only with a
 * baseline). */
static void report_pick_tables(Report *R)
{
    const Spec *spec = R->spec;
    int ndef = 0;
    if (!spec->ntables && spec->naxes > 0) {
        R->dcols[0] = spec->axes[0].name;
        R->drows[0] = spec->naxes > 1 ? spec->axes[1].name : NULL;
        for (int i = R->baseline ? 0 : 1; i < 2; i++) {
            ReportTable *t = &R->defaults[ndef++];
            t->cols = R->dcols, t->ncols = 1;
            t->rows = R->drows, t->nrows = R->drows[0] ? 1 : 0;
            t->value = "median_ms";
            t->ratio = i == 0;
            t->title = i == 0 ? "Time relative to the baseline" : "Median time";
        }
    }
    R->tables = spec->ntables ? spec->tables : R->defaults;
    R->ntables = spec->ntables ? spec->ntables : ndef;
}

static void report_tables(const Report *R, int failed_values)
{
    fputs("\n## Tables\n", R->md);
    for (int r = 0; r < R->nruns; r++) {
        if (R->runs[r].reference)
            continue;
        if (R->nmeasured > 1)
            fprintf(R->md, "\n## Run %lld\n", (long long)R->runs[r].id);
        for (int t = 0; t < R->ntables; t++)
            report_table(R->db, R->spec, R->runs[r].id, &R->tables[t], R->baseline, failed_values,
                         R->a, R->md);
    }
}

/* DIR/<spec>.md, replaced atomically; its path into *written (malloc'd). */
static int report_write(Report *R, char **written, KvxError *err)
{
    fflush(R->md);
    char *path = mem_alloc(strlen(R->dir) + strlen(R->spec->name) + 8);
    sprintf(path, "%s/%s.md", R->dir, R->spec->name);
    if (file_write_atomic(path, R->text, R->len)) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot write '%s': %s", path,
                      errno == EINVAL ? "it is not a regular file (a link or a device)" : strerror(errno));
        free(path);
        return -1;
    }
    *written = path;
    return 0;
}

int results_report(Store *db, const char *spec_path, const char *dir, int64_t only_run,
                   int failed_values, char **written, KvxError *err)
{
    *written = NULL;
    Report R = {.db = db, .dir = dir, .only_run = only_run};
    if (!(R.spec = spec_load(spec_path, err)))
        return -1;
    R.a = arena_new();
    R.md = open_memstream(&R.text, &R.len);
    int rc = -1;
    if (file_mkdir_p(dir)) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot create '%s'", dir);
        goto fail;
    }
    fprintf(R.md, "# %s\n\n", R.spec->name);
    if (R.spec->doc)
        fprintf(R.md, "%s\n\n", R.spec->doc);
    fprintf(R.md, "Spec `%s`, written by `kvx report`.\n\n", R.spec->path);
    if (report_runs(&R, err))
        goto fail;
    R.baseline = baseline_text(R.spec, R.spec->baseline, R.spec->nbaseline, R.a);
    report_pick_tables(&R);
    report_tables(&R, failed_values);
    report_statuses(db, R.spec, only_run, R.md);
    results_report_plots(db, R.spec, R.runs, R.nruns, dir, R.baseline, R.md);
    if (report_write(&R, written, err))
        goto fail;
    rc = 0;
fail:
    fclose(R.md);
    free(R.text);
    arena_free(R.a);
    spec_free(R.spec);
    return rc;
}
