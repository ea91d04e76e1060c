/* results_report: `kvx report SPEC.yaml`: one Markdown file per spec with the
 * environment of its runs, the measurement settings, the spec's `report:`
 * tables (or a default pair), the status counts and plots of a value
 * against a numeric axis: each plot's data (CSV) and two scripts that draw
 * the same figure, gnuplot's and matplotlib's, always written; the SVG and
 * PNG drawn when gnuplot is installed.
 *
 * The report is assembled in memory and written atomically: a failure leaves
 * the previous report in place.  A table that cannot be built (a bad where, a
 * missing baseline) is one line in the report, not a failed report.  gnuplot
 * runs as a child process on a generated script; without it the report links
 * the data and scripts (`python3 STEM.py` draws where matplotlib is). */
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

/* ---- plots ----------------------------------------------------------------- */

/* $KVX_GNUPLOT (empty: none), else gnuplot on PATH; malloc'd or NULL. */
static char *find_gnuplot(void)
{
    const char *env = getenv("KVX_GNUPLOT");
    if (env)
        return *env && access(env, X_OK) == 0 ? mem_strdup(env) : NULL;
    char path[4096];
    return path_search("gnuplot", path, sizeof path) ? mem_strdup(path) : NULL;
}

static int run_gnuplot(const char *gnuplot, const char *dir, const char *script, const char *log)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (chdir(dir) == 0 && freopen(log, "w", stderr) && freopen("/dev/null", "w", stdout))
            execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    return got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The table as gnuplot data: CSV with every non-number cell as NaN (missing). */
static char *plot_data(const char *csv, double *lo, double *hi, int *ncols)
{
    StrBuf b;
    sb_init(&b);
    *lo = INFINITY, *hi = -INFINITY, *ncols = 0;
    const char *p = csv;
    for (int line = 0; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *row = mem_alloc(len + 1);
        memcpy(row, p, len);
        row[len] = 0;
        int col = 0;
        for (char *f = row, *next; f; f = next, col++) {
            next = strchr(f, ',');
            if (next)
                *next++ = 0;
            char *end;
            double d = strtod(f, &end);
            int num = *f && !*end;
            if (line == 0 || col == 0 || num)
                sb_puts(&b, f);
            else
                sb_puts(&b, "NaN");
            if (line > 0 && col > 0 && num && d > 0)
                *lo = fmin(*lo, d), *hi = fmax(*hi, d);
            if (next)
                sb_putc(&b, ',');
        }
        if (line == 0)
            *ncols = col;
        sb_putc(&b, '\n');
        free(row);
        p += len + (e != NULL);
    }
    return sb_take(&b);
}

/* What a plot shows: x against the median time (or its ratio), one series
 * per value of `series`; the other axes are pooled into each point. */
typedef struct PlotAxes {
    int x, series;
    int x_workload;     /* 1: x is a workload axis; 0: no numeric one, x is a code axis */
    int x_known;        /* the database says which axes are workload axes */
    int logx;           /* x's values span more than 2 decades: log2 scale */
} PlotAxes;

/* The other axes with several values among this run's cases, "counter (2
 * values), n (2 values)", into b: each plotted point pools cases across them.
 * -1 when the cases cannot be read. */
static int pooled_axes(Store *db, const Spec *spec, int64_t run, const PlotAxes *pa,
                       StrBuf *b)
{
    TableOpts o = {0};
    o.sel.spec = spec->name, o.sel.run_id = run;
    CaseSet cs;
    KvxError err = {0};
    int rc = results_caseset_load(db, &o.sel, &o, NULL, 0, &cs, &err);
    int n = 0;
    for (int a = 0; !rc && a < cs.naxes; a++) {
        if (!strcmp(cs.axes[a].name, spec->axes[pa->x].name) ||
            !strcmp(cs.axes[a].name, spec->axes[pa->series].name) || cs.axes[a].nvals < 2)
            continue;
        sb_printf(b, "%s%s (%d values)", n++ ? ", " : "", cs.axes[a].name, cs.axes[a].nvals);
    }
    results_caseset_free(&cs);
    kvx_error_clear(&err);
    return rc ? -1 : n;
}

/* One plot: its axes, whether it shows ratios, the stem of its file names
 * and the other axes each point pools (pooled_axes). */
typedef struct Plot {
    const Spec *spec;
    const PlotAxes *pa;
    const Axis *xa, *sa;
    int ratio;
    char stem[512];
    StrBuf pooled;
    int npooled;
} Plot;

/* The plot's data: run's median times (or ratios) as a CSV table, x down and
 * one column per series, into *csv (malloc'd).  0 or -1 with err. */
static int plot_table(Store *db, const Plot *pl, int64_t run, const char *baseline, char **csv,
                      KvxError *err)
{
    const char *rows[] = {pl->xa->name}, *cols[] = {pl->sa->name};
    TableOpts o = {0};
    o.sel.spec = pl->spec->name, o.sel.run_id = run;
    o.rows = rows, o.nrows = 1, o.cols = cols, o.ncols = 1;
    o.value = "median_ms", o.ratio = pl->ratio, o.baseline = baseline;
    o.format = RESULTS_CSV;
    size_t len = 0;
    FILE *mem = open_memstream(csv, &len);
    int fail = results_table(db, &o, mem, err);
    fclose(mem);
    return fail;
}

/* The gnuplot script: an SVG, then a PNG (pngcairo where there is one). */
static void plot_script(const Plot *pl, double lo, double hi, int ncols, StrBuf *gp)
{
    const PlotAxes *pa = pl->pa;
    int ratio = pl->ratio;
    sb_printf(gp,
              "# written by kvx report: %s against %s, one series per %s; each point the"
              " median over %s\n"
              "set datafile separator ','\n"
              "set key outside right autotitle columnheader noenhanced\n"
              "set title '%s: %s' noenhanced\n"
              "set xlabel '%s%s' noenhanced\nset ylabel '%s' noenhanced\nset grid\n%s%s"
              "set terminal svg size 900,540 dynamic noenhanced\nset output '%s.svg'\n"
              "plot for [i=2:%d] '%s.csv' using 1:i with linespoints title columnheader(i)\n"
              "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "  set terminal pngcairo size 900,540 noenhanced\n} else {\n"
              "  set terminal png size 900,540\n}\n"
              "set output '%s.png'\nreplot\n",
              ratio ? "ratio" : "median_ms", pl->xa->name, pl->sa->name,
              pl->npooled > 0 ? sb_str(&pl->pooled) : "nothing (one case)", pl->spec->name,
              ratio ? "time relative to the baseline" : "median time", pl->xa->name,
              pa->logx ? " (log2 scale)" : "", ratio ? "ratio (x)" : "median time (ms)",
              pa->logx ? "set logscale x 2\n" : "", hi > 20 * lo ? "set logscale y\n" : "",
              pl->stem, ncols, pl->stem, pl->stem);
}

/* s as a Python string literal: quotes, backslashes and control characters
 * escaped, so an axis value cannot end the string. */
static void py_str(StrBuf *b, const char *s)
{
    sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            sb_printf(b, "\\x%02x", *p);
        else
            sb_putc(b, (char)*p);
    }
    sb_putc(b, '"');
}

/* The matplotlib script: the figure of plot_script (same data, axes, scales,
 * size) as STEM.svg and STEM.png beside itself, wherever it is run, without
 * gnuplot (the GPU machines have none). */
static void plot_py(const Plot *pl, double lo, double hi, StrBuf *py)
{
    int ratio = pl->ratio;
    sb_printf(py, "#!/usr/bin/env python3\n# written by kvx report: %s against %s, one series per %s;"
                  " python3 %s.py draws %s.gp's figure with matplotlib into %s.svg and %s.png beside it.\n"
                  "import csv, math, os\nimport matplotlib\nmatplotlib.use(\"Agg\")\n"
                  "import matplotlib.pyplot as plt\n\nhere = os.path.dirname(os.path.abspath(__file__))\n"
                  "stem = os.path.join(here, ",
              ratio ? "ratio" : "median_ms", pl->xa->name, pl->sa->name, pl->stem, pl->stem, pl->stem,
              pl->stem);
    py_str(py, pl->stem);
    sb_puts(py, ")\ntitle = ");
    StrBuf t;
    sb_init(&t);
    sb_printf(&t, "%s: %s", pl->spec->name, ratio ? "time relative to the baseline" : "median time");
    py_str(py, sb_str(&t));
    sb_reset(&t);
    sb_printf(&t, "%s%s", pl->xa->name, pl->pa->logx ? " (log2 scale)" : "");
    sb_puts(py, "\nxlabel = ");
    py_str(py, sb_str(&t));
    sb_free(&t);
    sb_printf(py, "\nylabel = \"%s\"\nlogx, logy = %s, %s\n\n", ratio ? "ratio (x)" : "median time (ms)",
              pl->pa->logx ? "True" : "False", hi > 20 * lo ? "True" : "False");
    sb_puts(py, "def num(s):\n    try:\n        return float(s)\n    except ValueError:\n"
                "        return math.nan\n\n"
                "with open(stem + \".csv\", newline=\"\") as f:\n    rows = list(csv.reader(f))\n"
                "head, body = rows[0], rows[1:]\nx = [num(r[0]) for r in body]\n"
                "fig, ax = plt.subplots(figsize=(9, 5.4), dpi=100)\n"
                "for i in range(1, len(head)):\n"
                "    ax.plot(x, [num(r[i]) for r in body], marker=\"o\", label=head[i])\n"
                "if logx:\n    ax.set_xscale(\"log\", base=2)\nif logy:\n    ax.set_yscale(\"log\")\n"
                "ax.set_title(title)\nax.set_xlabel(xlabel)\nax.set_ylabel(ylabel)\nax.grid(True)\n"
                "ax.legend(loc=\"upper left\", bbox_to_anchor=(1.01, 1))\nfig.tight_layout()\n"
                "fig.savefig(stem + \".svg\")\nfig.savefig(stem + \".png\")\n");
}

/* Write text to dir/STEM.ext.  0 or -1. */
static int plot_file(const Plot *pl, const char *dir, const char *ext, const char *text, size_t len)
{
    StrBuf path;
    sb_init(&path);
    sb_printf(&path, "%s/%s.%s", dir, pl->stem, ext);
    int rc = file_write_atomic(sb_str(&path), text, len);
    sb_free(&path);
    return rc ? -1 : 0;
}

/* Run gnuplot on STEM.gp in dir; an empty STEM.log is removed.  0, or -1
 * when gnuplot failed. */
static void remove_if_empty(const char *dir, const char *name)
{
    StrBuf path;
    sb_init(&path);
    sb_printf(&path, "%s/%s", dir, name);
    struct stat st;
    if (stat(sb_str(&path), &st) == 0 && st.st_size == 0)
        unlink(sb_str(&path));
    sb_free(&path);
}

static int plot_draw(const Plot *pl, const char *dir, const char *gnuplot)
{
    char script[600], log[600];
    snprintf(script, sizeof script, "%s.gp", pl->stem);
    snprintf(log, sizeof log, "%s.log", pl->stem);
    if (run_gnuplot(gnuplot, dir, script, log))
        return -1;
    remove_if_empty(dir, log);      /* gnuplot said nothing */
    return 0;
}

/* The plot's links, and what a point is: a median that pools other axes'
 * values is not the time of any one case.  drawn: gnuplot made the SVG and
 * PNG; else only the data and the scripts are there. */
static void plot_caption(const Plot *pl, int drawn, FILE *md)
{
    const char *what = pl->ratio ? "Ratio to the baseline" : "Median time";
    const char *sub = pl->spec->name;   /* dir is <out>/<spec>; links are relative to <out> */
    const char *stem = pl->stem;
    if (drawn)
        fprintf(md, "\n![%s against %s](%s/%s.svg)\n\n[PNG](%s/%s.png), ", what, pl->xa->name, sub, stem,
                sub, stem);
    else
        fprintf(md, "\n- %s: not drawn here; ", stem);
    fprintf(md, "data [%s.csv](%s/%s.csv), scripts [%s.gp](%s/%s.gp) (gnuplot) and [%s.py](%s/%s.py)"
                " (matplotlib: `python3 %s/%s.py` draws it)\n",
            stem, sub, stem, stem, sub, stem, stem, sub, stem, sub, stem);
    fprintf(md, "\n%s against %s, one series per %s.  ", what, pl->xa->name, pl->sa->name);
    if (pl->npooled > 0)
        fprintf(md, "Each point is the median over %s: it pools cases at different values"
                    " of %s.\n", sb_str(&pl->pooled), pl->npooled > 1 ? "these axes" : "that axis");
    else if (pl->npooled == 0)
        fputs("Each point is one case: no other axis varies in this run.\n", md);
    else
        fputs("Each point is the median of the cases at that point.\n", md);
}

/* The data and both scripts of pl into dir, then gnuplot's drawing where
 * there is a gnuplot; a line of md says what came of it. */
static void plot_write(const Plot *pl, const char *dir, const char *gnuplot, const char *csv, FILE *md)
{
    double lo, hi;
    int ncols;
    char *data = plot_data(csv, &lo, &hi, &ncols);
    StrBuf gp, py;
    sb_init(&gp), sb_init(&py);
    plot_script(pl, lo, hi, ncols, &gp);
    plot_py(pl, lo, hi, &py);
    if (plot_file(pl, dir, "csv", data, strlen(data)) || plot_file(pl, dir, "gp", gp.p, gp.len) ||
        plot_file(pl, dir, "py", py.p, py.len))
        fprintf(md, "- %s: cannot write its files into %s\n", pl->stem, dir);
    else if (gnuplot && plot_draw(pl, dir, gnuplot))
        fprintf(md, "- %s: gnuplot failed (see %s/%s.log); `python3 %s/%s.py` draws it with matplotlib\n",
                pl->stem, dir, pl->stem, pl->spec->name, pl->stem);
    else
        plot_caption(pl, gnuplot != NULL, md);
    free(data);
    sb_free(&gp), sb_free(&py);
}

/* One plot of run's cases.  name_run: put the run id in the file names (the
 * report covers several measured runs); with one run the names stay the same
 * from one run to the next, so a re-made report replaces its plots. */
static void report_plot(Store *db, const Spec *spec, int64_t run, int name_run, const char *dir,
                        const char *gnuplot, const PlotAxes *pa, int ratio,
                        const char *baseline, FILE *md)
{
    Plot pl = {.spec = spec, .pa = pa, .xa = &spec->axes[pa->x], .sa = &spec->axes[pa->series],
               .ratio = ratio};
    if (name_run)
        snprintf(pl.stem, sizeof pl.stem, "%s_%lld_%s_%s", spec->name, (long long)run,
                 pl.xa->name, ratio ? "ratio" : "median_ms");
    else
        snprintf(pl.stem, sizeof pl.stem, "%s_%s_%s", spec->name, pl.xa->name,
                 ratio ? "ratio" : "median_ms");
    char *csv = NULL;
    KvxError err = {0};
    if (plot_table(db, &pl, run, baseline, &csv, &err)) {
        fprintf(md, "- %s: not plotted: %s\n", pl.stem, err.msg);
        kvx_error_clear(&err);
        free(csv);
        return;
    }
    sb_init(&pl.pooled);
    pl.npooled = pooled_axes(db, spec, run, pa, &pl.pooled);
    plot_write(&pl, dir, gnuplot, csv, md);
    free(csv);
    sb_free(&pl.pooled);
}

typedef struct WorkloadMask {
    const Spec *spec;
    uint64_t mask;
} WorkloadMask;

static void workload_axis(void *ctx, const char *name)
{
    WorkloadMask *w = ctx;
    for (int a = 0; a < w->spec->naxes; a++)
        if (!strcmp(w->spec->axes[a].name, name))
            w->mask |= UINT64_C(1) << a;
}

/* Which spec axes the measured runs stored as workload axes (cases.workload:
 * the axes the template did not consult, as `kvx plan` found them); the spec
 * itself does not say.  *known is 0 when no case stored them (older
 * databases). */
static uint64_t workload_axes(Store *db, const Spec *spec, int *known)
{
    WorkloadMask w = {spec, 0};
    *known = store_report_workload_axes(db, spec->name, workload_axis, &w);
    return w.mask;
}

static int axis_numeric(const Axis *ax)
{
    int num = ax->nvals > 1;
    for (int i = 0; i < ax->nvals; i++)
        num &= val_is_num(ax->vals[i].v);
    return num;
}

/* x: the numeric axis with the most values (the first of equals) among those
 * the runs stored as workload axes; without one, among all axes.  Its values spanning
 * more than 2 decades get a log2 scale.  Series: the first other axis with
 * several values (else the first other axis).  -1 when there is no x or no
 * series. */
static int plot_axes(Store *db, const Spec *spec, PlotAxes *pa)
{
    memset(pa, 0, sizeof *pa);
    pa->x = pa->series = -1;
    uint64_t wl = workload_axes(db, spec, &pa->x_known);
    for (int pass = pa->x_known ? 0 : 1; pass < 2 && pa->x < 0; pass++)
        for (int a = 0; a < spec->naxes; a++)
            if (axis_numeric(&spec->axes[a]) && (pass == 1 || (wl >> a & 1)) &&
                (pa->x < 0 || spec->axes[a].nvals > spec->axes[pa->x].nvals))
                pa->x = a, pa->x_workload = pass == 0;
    for (int a = 0; a < spec->naxes && pa->series < 0; a++)
        if (a != pa->x && spec->axes[a].nvals > 1)
            pa->series = a;
    for (int a = 0; a < spec->naxes && pa->series < 0; a++)
        if (a != pa->x)
            pa->series = a;
    if (pa->x < 0 || pa->series < 0)
        return -1;
    const Axis *x = &spec->axes[pa->x];
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < x->nvals; i++)
        lo = fmin(lo, val_num(x->vals[i].v)), hi = fmax(hi, val_num(x->vals[i].v));
    pa->logx = lo > 0 && hi > 100 * lo;
    return 0;
}

static void report_plots(Store *db, const Spec *spec, const RunInfo *runs, int nruns,
                         const char *dir, const char *baseline, FILE *md)
{
    fputs("\n## Plots\n\n", md);
    PlotAxes pa;
    if (plot_axes(db, spec, &pa)) {
        fputs("None: the spec has no numeric axis with several values and another axis to"
              " draw series from.\n", md);
        return;
    }
    /* Plots go to DIR/<spec>/, next to DIR/<spec>.md, linked relative to it. */
    char *plotdir = path_join(dir, spec->name);
    if (file_mkdir_p(plotdir)) {
        fprintf(md, "None: cannot create '%s'.\n", plotdir);
        free(plotdir);
        return;
    }
    char *gnuplot = find_gnuplot();
    if (!gnuplot)
        fputs("gnuplot is not installed (or KVX_GNUPLOT names none): each plot's data and scripts are"
              " written, not drawn; its matplotlib script draws it anywhere.\n\n", md);
    const char *name = spec->axes[pa.x].name;
    fprintf(md, "x: %s (%s)%s; one series per %s.\n", name,
            pa.x_workload ? "the numeric workload axis with the most values"
            : pa.x_known  ? "a code axis: no workload axis is numeric"
                          : "the numeric axis with the most values: the database does not"
                            " say which are workload axes",
            pa.logx ? ", on a log2 scale (its values span more than 2 decades)" : "",
            spec->axes[pa.series].name);
    int nmeasured = 0;
    for (int r = 0; r < nruns; r++)
        nmeasured += !runs[r].reference;
    for (int r = 0; r < nruns; r++) {
        if (runs[r].reference)
            continue;
        report_plot(db, spec, runs[r].id, nmeasured > 1, plotdir, gnuplot, &pa, 0, NULL, md);
        if (baseline)
            report_plot(db, spec, runs[r].id, nmeasured > 1, plotdir, gnuplot, &pa, 1, baseline, md);
    }
    free(plotdir);
    free(gnuplot);
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
    report_plots(db, R.spec, R.runs, R.nruns, dir, R.baseline, R.md);
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
