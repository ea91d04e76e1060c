/* results_report_plot: `kvx report`'s plots (results_report_plots): a value
 * against a numeric axis, one series per value of another, one plot per
 * value combination of the panel axes, so that workload points (2^24 and
 * 2^26 elements) are never pooled into one curve.  Each series has its own
 * colour, marker and line style, each point a bar of the cells' stored
 * spread (the median's interquartile range: noise x value), and the title
 * names the GPU.  The spec's `report:` entries with `plot: AXIS` choose x,
 * series and panels (ReportPlot); without one kvx picks them.
 *
 * Each plot is its data (CSV) and two scripts that draw the same figure,
 * gnuplot's and matplotlib's, always written; the SVG and PNG are drawn
 * where gnuplot is installed (or KVX_GNUPLOT names it). */
#include "results_table.h"
#include "gen/spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What one plot shows. */
typedef struct PlotAxes {
    int x, series;              /* spec axes */
    int panels[RESULTS_MAX_AXES], npanels;
    const char *value, *where, *title;
    int ratio;
    int x_workload;             /* 1: x is a workload axis; 0: no numeric one, x is a code axis */
    int x_known;                /* the database says which axes are workload axes */
    int logx;                   /* x's values span more than 2 decades: log2 scale */
} PlotAxes;

/* One drawn plot: a panel of a run. */
typedef struct Plot {
    const Spec *spec;
    const PlotAxes *pa;
    const char *gpu;
    char stem[512];
    StrBuf panel;               /* "n=16777216", or empty */
    StrBuf pooled;              /* the other axes each point pools, "counter (2 values)" */
    int npooled;
    int nseries;
} Plot;

/* ---- gnuplot, files -------------------------------------------------------- */

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

/* gnuplot on STEM.gp in dir; an empty STEM.log is removed.  0, or -1 when
 * gnuplot failed. */
static int plot_draw(const Plot *pl, const char *dir, const char *gnuplot)
{
    char script[600], log[600];
    snprintf(script, sizeof script, "%s.gp", pl->stem);
    snprintf(log, sizeof log, "%s.log", pl->stem);
    if (run_gnuplot(gnuplot, dir, script, log))
        return -1;
    remove_if_empty(dir, log);
    return 0;
}

/* ---- the data ---------------------------------------------------------------- */

static void put_num(StrBuf *b, double v)
{
    char t[40];
    if (isnan(v)) {
        sb_puts(b, "NaN");
        return;
    }
    num_write_double(t, sizeof t, v, NUM_G15);
    sb_puts(b, t);
}

/* A CSV field of a header (a series' name): quoted where it must be. */
static void put_field(StrBuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        sb_puts(b, s);
        return;
    }
    sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            sb_putc(b, '"');
        sb_putc(b, *s);
    }
    sb_putc(b, '"');
}

/* Whether pivot row r belongs to the panel of row first (the same values of
 * the panel axes, row axes 1 .. npanels). */
static int same_panel(const Pivot *p, int r, int first)
{
    return !memcmp(&p->rkeys[r * p->nra + 1], &p->rkeys[first * p->nra + 1], sizeof(int) * (size_t)(p->nra - 1));
}

/* The data of the panel of row first: x, then each series' value and the
 * bar's ends; *lo and *hi the values' range (for a log scale). */
static void panel_data(const CaseSet *cs, const Pivot *p, int first, StrBuf *csv, double *lo, double *hi)
{
    StrBuf key;
    sb_init(&key);
    *lo = INFINITY, *hi = -INFINITY;
    put_field(csv, cs->axes[p->ra[0]].name);
    for (int c = 0; c < p->nc; c++) {
        const char *s = results_table_key_text(cs, p->ca, p->nca, &p->ckeys[c * p->nca], "/", &key);
        sb_putc(csv, ',');
        put_field(csv, s);
        sb_printf(csv, ",lo,hi");
    }
    sb_putc(csv, '\n');
    for (int r = first; r < p->nr; r++) {
        if (!same_panel(p, r, first))
            continue;
        const RVal *xv = &cs->axes[p->ra[0]].vals[p->rkeys[r * p->nra]];
        put_num(csv, xv->is_num ? xv->num : NAN);
        for (int c = 0; c < p->nc; c++) {
            const Cell *cell = &p->cells[r * p->nc + c];
            double v = cell->n ? cell->v : NAN, spread = isnan(cell->noise) ? NAN : cell->noise * v / 2;
            sb_putc(csv, ',');
            put_num(csv, v);
            sb_putc(csv, ',');
            put_num(csv, v - spread);
            sb_putc(csv, ',');
            put_num(csv, v + spread);
            if (v > 0)
                *lo = fmin(*lo, v), *hi = fmax(*hi, v);
        }
        sb_putc(csv, '\n');
    }
    sb_free(&key);
}

/* ---- the scripts ----------------------------------------------------------------- */

/* "SPEC on GPU: what [, panel]" */
static void plot_title(const Plot *pl, StrBuf *t)
{
    const PlotAxes *pa = pl->pa;
    if (pa->title)
        sb_puts(t, pa->title);
    else
        sb_printf(t, "%s: %s%s", pl->spec->name, pa->value, pa->ratio == 2 ? " speed-up" : pa->ratio ? " ratio" : "");
    if (pl->gpu && *pl->gpu)
        sb_printf(t, " on %s", pl->gpu);
    if (pl->panel.len)
        sb_printf(t, " (%s)", sb_str(&pl->panel));
}

static const char *ylabel(const PlotAxes *pa, char *buf, size_t n)
{
    int v = values_find(pa->value);
    const char *unit = pa->ratio ? "x" : v >= 0 && values_info[v].unit == VALUE_TIME ? "ms"
                                      : v >= 0 && values_info[v].unit == VALUE_GBS  ? "GB/s"
                                      : v >= 0 && values_info[v].unit == VALUE_PCT  ? "%" : "";
    snprintf(buf, n, "%s%s%s%s%s", pa->value, pa->ratio == 2 ? " speed-up" : pa->ratio ? " ratio" : "",
             *unit ? " (" : "", unit, *unit ? ")" : "");
    return buf;
}

/* gnuplot's: an SVG, then a PNG (pngcairo where there is one); each series
 * its line type, point type and dash type, with error bars. */
static void plot_gp(const Plot *pl, double lo, double hi, StrBuf *gp)
{
    const PlotAxes *pa = pl->pa;
    StrBuf t;
    sb_init(&t);
    plot_title(pl, &t);
    char yl[160];
    sb_printf(gp, "# written by kvx report: %s against %s, one series per %s; bars: the spread stored\n"
                  "# with each cell (noise x value, its interquartile range)\n"
                  "set datafile separator ','\nset datafile missing 'NaN'\n"
                  "set key outside right noenhanced\nset offsets 0, 0, graph 0.05, graph 0.05\nset title '%s' noenhanced\n"
                  "set xlabel '%s%s' noenhanced\nset ylabel '%s' noenhanced\nset grid\n%s%s"
                  "set terminal svg size 900,540 dynamic noenhanced\nset output '%s.svg'\n"
                  "plot for [i=0:%d] '%s.csv' using 1:(column(2+3*i)):(column(3+3*i)):(column(4+3*i))"
                  " with yerrorlines lt i+1 pt i%%13+1 dt i%%5+1 title columnheader(2+3*i)\n"
                  "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                  "  set terminal pngcairo size 900,540 noenhanced\n} else {\n"
                  "  set terminal png size 900,540\n}\nset output '%s.png'\nreplot\n",
              pa->value, pl->spec->axes[pa->x].name, pl->spec->axes[pa->series].name, sb_str(&t),
              pl->spec->axes[pa->x].name, pa->logx ? " (log2 scale)" : "", ylabel(pa, yl, sizeof yl),
              pa->logx ? "set logscale x 2\n" : "", hi > 20 * lo ? "set logscale y\n" : "", pl->stem,
              pl->nseries - 1, pl->stem, pl->stem);
    sb_free(&t);
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

/* matplotlib's: the figure of plot_gp (same data, axes, scales, styles,
 * size) as STEM.svg and STEM.png beside itself, wherever it is run. */
static void plot_py(const Plot *pl, double lo, double hi, StrBuf *py)
{
    const PlotAxes *pa = pl->pa;
    StrBuf t;
    sb_init(&t);
    char yl[160];
    sb_printf(py, "#!/usr/bin/env python3\n# written by kvx report: python3 %s.py draws %s.gp's figure with"
                  " matplotlib into %s.svg and %s.png beside it.\n"
                  "import csv, math, os\nimport matplotlib\nmatplotlib.use(\"Agg\")\n"
                  "import matplotlib.pyplot as plt\n\nhere = os.path.dirname(os.path.abspath(__file__))\n"
                  "stem = os.path.join(here, ", pl->stem, pl->stem, pl->stem, pl->stem);
    py_str(py, pl->stem);
    sb_puts(py, ")\ntitle = ");
    plot_title(pl, &t);
    py_str(py, sb_str(&t));
    sb_reset(&t);
    sb_printf(&t, "%s%s", pl->spec->axes[pa->x].name, pa->logx ? " (log2 scale)" : "");
    sb_puts(py, "\nxlabel = ");
    py_str(py, sb_str(&t));
    sb_puts(py, "\nylabel = ");
    py_str(py, ylabel(pa, yl, sizeof yl));
    sb_free(&t);
    sb_printf(py, "\nlogx, logy = %s, %s\n\n", pa->logx ? "True" : "False", hi > 20 * lo ? "True" : "False");
    sb_puts(py, "def num(s):\n    try:\n        return float(s)\n    except ValueError:\n        return math.nan\n\n"
                "with open(stem + \".csv\", newline=\"\") as f:\n    rows = list(csv.reader(f))\n"
                "head, body = rows[0], rows[1:]\nx = [num(r[0]) for r in body]\n"
                "markers = \"osD^v<>ph*XP+x\"\nstyles = [\"-\", \"--\", \"-.\", \":\", (0, (5, 1, 1, 1))]\n"
                "fig, ax = plt.subplots(figsize=(9, 5.4), dpi=100)\n"
                "for k, i in enumerate(range(1, len(head), 3)):\n"
                "    y = [num(r[i]) for r in body]\n"
                "    err = [[v - num(r[i + 1]) for v, r in zip(y, body)], [num(r[i + 2]) - v for v, r in zip(y, body)]]\n"
                "    ax.errorbar(x, y, yerr=err, marker=markers[k % len(markers)], linestyle=styles[k % len(styles)],"
                " capsize=3, label=head[i])\n"
                "if logx:\n    ax.set_xscale(\"log\", base=2)\nif logy:\n    ax.set_yscale(\"log\")\n"
                "ax.set_title(title)\nax.set_xlabel(xlabel)\nax.set_ylabel(ylabel)\nax.grid(True)\n"
                "ax.legend(loc=\"upper left\", bbox_to_anchor=(1.01, 1))\nfig.tight_layout()\n"
                "fig.savefig(stem + \".svg\")\nfig.savefig(stem + \".png\")\n");
}

/* ---- one plot ------------------------------------------------------------------ */

/* The plot's links and what a point is. */
static void plot_caption(const Plot *pl, int drawn, FILE *md)
{
    const char *sub = pl->spec->name;   /* dir is <out>/<spec>; links are relative to <out> */
    const char *stem = pl->stem, *x = pl->spec->axes[pl->pa->x].name;
    if (drawn)
        fprintf(md, "\n![%s against %s](%s/%s.svg)\n\n[PNG](%s/%s.png), ", pl->pa->value, x, sub, stem, sub, stem);
    else
        fprintf(md, "\n- %s: not drawn here; ", stem);
    fprintf(md, "data [%s.csv](%s/%s.csv), scripts [%s.gp](%s/%s.gp) (gnuplot) and [%s.py](%s/%s.py)"
                " (matplotlib: `python3 %s/%s.py` draws it)\n",
            stem, sub, stem, stem, sub, stem, stem, sub, stem, sub, stem);
    fprintf(md, "\n%s%s against %s, one series per %s%s%s; bars: each cell's stored spread (noise x value).  ",
            pl->pa->value, pl->pa->ratio ? " (to the baseline)" : "", x, pl->spec->axes[pl->pa->series].name,
            pl->panel.len ? ", at " : "", sb_str(&pl->panel));
    if (pl->npooled > 0)
        fprintf(md, "Each point is the median over %s: it pools cases at different values of %s.\n",
                sb_str(&pl->pooled), pl->npooled > 1 ? "these axes" : "that axis");
    else
        fputs("Each point is one case, or the median of the cases at that point.\n", md);
}

/* The data and both scripts of pl into dir, then gnuplot's drawing where
 * there is a gnuplot; a line of md says what came of it. */
static void plot_write(const Plot *pl, const char *dir, const char *gnuplot, const StrBuf *csv, double lo,
                       double hi, FILE *md)
{
    StrBuf gp, py;
    sb_init(&gp), sb_init(&py);
    plot_gp(pl, lo, hi, &gp);
    plot_py(pl, lo, hi, &py);
    if (plot_file(pl, dir, "csv", csv->p, csv->len) || plot_file(pl, dir, "gp", gp.p, gp.len) ||
        plot_file(pl, dir, "py", py.p, py.len))
        fprintf(md, "- %s: cannot write its files into %s\n", pl->stem, dir);
    else if (gnuplot && plot_draw(pl, dir, gnuplot))
        fprintf(md, "- %s: gnuplot failed (see %s/%s.log); `python3 %s/%s.py` draws it with matplotlib\n",
                pl->stem, dir, pl->stem, pl->spec->name, pl->stem);
    else
        plot_caption(pl, gnuplot != NULL, md);
    sb_free(&gp), sb_free(&py);
}

/* The stem: SPEC[_RUN]_X_VALUE[_ratio][_PANEL], the panel's text ("n=1024
 * mode=a") with '=' made '-' and every other byte but letters, digits, '.'
 * and '-' made '_' ("n-1024_mode-a"). */
static void plot_stem(Plot *pl, int64_t run, int name_run)
{
    const PlotAxes *pa = pl->pa;
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%s", pl->spec->name);
    if (name_run)
        sb_printf(&b, "_%lld", (long long)run);
    sb_printf(&b, "_%s_%s%s", pl->spec->axes[pa->x].name, pa->value,
              pa->ratio == 2 ? "_speedup" : pa->ratio ? "_ratio" : "");
    if (pl->panel.len) {
        sb_putc(&b, '_');
        for (const char *p = sb_str(&pl->panel); *p; p++)
            sb_putc(&b, *p == '=' ? '-' : strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *p)
                                        ? *p : '_');
    }
    snprintf(pl->stem, sizeof pl->stem, "%s", sb_str(&b));
    sb_free(&b);
}

/* The axes of cs each point pools: neither x, series nor a panel, with
 * several values. */
static void pooled_axes(const CaseSet *cs, const Pivot *p, Plot *pl)
{
    for (int a = 0; a < cs->naxes; a++) {
        int used = p->ca[0] == a;
        for (int k = 0; k < p->nra; k++)
            used |= p->ra[k] == a;
        if (!used && cs->axes[a].nvals > 1)
            sb_printf(&pl->pooled, "%s%s (%d values)", pl->npooled++ ? ", " : "", cs->axes[a].name,
                      cs->axes[a].nvals);
    }
}

/* Every panel of one run's plot, each a file set and a caption in md. */
static void run_plot(Store *db, const Spec *spec, const StoreRunInfo *run, int name_run, const char *dir,
                     const char *gnuplot, const PlotAxes *pa, const char *baseline, FILE *md)
{
    const char *rows[RESULTS_MAX_AXES + 1], *cols[] = {spec->axes[pa->series].name};
    rows[0] = spec->axes[pa->x].name;
    for (int k = 0; k < pa->npanels; k++)
        rows[1 + k] = spec->axes[pa->panels[k]].name;
    TableOpts o = {.rows = rows, .nrows = 1 + pa->npanels, .cols = cols, .ncols = 1, .value = pa->value,
                   .ratio = pa->ratio, .baseline = baseline, .where = pa->where, .spec = spec};
    o.sel.spec = spec->name, o.sel.run_id = run->id;
    CaseSet cs;
    Pivot p;
    KvxError err = {0};
    if (results_table_build(db, &o.sel, &o, NULL, 0, &cs, &p, &err)) {
        fprintf(md, "- %s against %s: not plotted: %s\n", pa->value, rows[0], err.msg);
        kvx_error_clear(&err);
    } else {
        for (int r = 0; r < p.nr; r++) {
            int first = 1;
            for (int q = 0; q < r && first; q++)
                first = !same_panel(&p, r, q);
            if (!first)
                continue;
            Plot pl = {.spec = spec, .pa = pa, .gpu = run->gpu_name, .nseries = p.nc};
            sb_init(&pl.panel), sb_init(&pl.pooled);
            for (int k = 1; k < p.nra; k++)
                sb_printf(&pl.panel, "%s%s=%s", k > 1 ? " " : "", cs.axes[p.ra[k]].name,
                          cs.axes[p.ra[k]].vals[p.rkeys[r * p.nra + k]].text);
            plot_stem(&pl, run->id, name_run);
            pooled_axes(&cs, &p, &pl);
            StrBuf csv;
            sb_init(&csv);
            double lo, hi;
            panel_data(&cs, &p, r, &csv, &lo, &hi);
            plot_write(&pl, dir, gnuplot, &csv, lo, hi, md);
            sb_free(&csv), sb_free(&pl.panel), sb_free(&pl.pooled);
        }
    }
    results_table_pivot_free(&p);
    results_caseset_free(&cs);
}

/* ---- which plots ---------------------------------------------------------------- */

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

static int axis_numeric(const Axis *ax)
{
    int num = ax->nvals > 1;
    for (int i = 0; i < ax->nvals; i++)
        num &= val_is_num(ax->vals[i].v);
    return num;
}

/* The spec's axes that the runs stored as workload axes (cases.workload);
 * *known is 0 when no case stored them (older databases). */
static uint64_t workload_axes(Store *db, const Spec *spec, int *known)
{
    WorkloadMask w = {spec, 0};
    *known = store_report_workload_axes(db, spec->name, workload_axis, &w);
    return w.mask;
}

/* What kvx picks: x the numeric workload axis with the most values (the
 * first of equals; without one, among all axes), series the first other
 * axis with several values (else the first other), panels every other
 * workload axis with several values (in a database that does not say which
 * are, every other numeric one).  -1 when there is no x or no series. */
static int auto_axes(Store *db, const Spec *spec, PlotAxes *pa)
{
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
    /* Where the database does not say which are workload axes, every other
     * numeric axis stands for one: sizes are never pooled into a curve. */
    for (int a = 0; a < spec->naxes && pa->x >= 0; a++)
        if (a != pa->x && a != pa->series && spec->axes[a].nvals > 1 &&
            (pa->x_known ? (int)(wl >> a & 1) : axis_numeric(&spec->axes[a])))
            pa->panels[pa->npanels++] = a;
    return pa->x < 0 || pa->series < 0 ? -1 : 0;
}

/* A `report:` plot's axes, what it leaves open as auto_axes picks. */
static void given_axes(Store *db, const Spec *spec, const ReportPlot *rp, PlotAxes *pa)
{
    PlotAxes au = {.x = -1, .series = -1};
    auto_axes(db, spec, &au);
    pa->x = spec_axis_find(spec, rp->x);
    pa->x_workload = pa->x_known = au.x_known && au.x == pa->x;
    pa->series = rp->series ? spec_axis_find(spec, rp->series) : -1;
    for (int a = 0; a < spec->naxes && pa->series < 0; a++)
        if (a != pa->x && spec->axes[a].nvals > 1)
            pa->series = a;
    if (rp->npanels >= 0) {
        for (int k = 0; k < rp->npanels; k++)
            pa->panels[pa->npanels++] = spec_axis_find(spec, rp->panels[k]);
    } else {
        for (int k = 0; k < au.npanels; k++)
            if (au.panels[k] != pa->x && au.panels[k] != pa->series)
                pa->panels[pa->npanels++] = au.panels[k];
    }
    pa->value = rp->value, pa->ratio = rp->ratio, pa->where = rp->where, pa->title = rp->title;
}

/* x's values spanning more than 2 decades get a log2 scale. */
static void log_scale(const Spec *spec, PlotAxes *pa)
{
    const Axis *x = &spec->axes[pa->x];
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < x->nvals; i++)
        if (val_is_num(x->vals[i].v))
            lo = fmin(lo, val_num(x->vals[i].v)), hi = fmax(hi, val_num(x->vals[i].v));
    pa->logx = lo > 0 && hi > 100 * lo;
}

/* The plots to draw: the spec's (report: plot entries), else kvx's median
 * time and, with a baseline, its ratio.  Their count, into pas[0 .. 2 or
 * nplots) (malloc'd). */
static int plots_chosen(Store *db, const Spec *spec, const char *baseline, PlotAxes **pas)
{
    int n = spec->nplots ? spec->nplots : 2;
    *pas = mem_calloc((size_t)n, sizeof **pas);
    if (spec->nplots) {
        for (int i = 0; i < n; i++)
            given_axes(db, spec, &spec->plots[i], &(*pas)[i]);
    } else {
        (*pas)[0] = (PlotAxes){.x = -1, .series = -1, .value = "median_ms"};
        if (auto_axes(db, spec, &(*pas)[0]))
            return 0;
        (*pas)[1] = (*pas)[0];
        (*pas)[1].ratio = 1;
        n = baseline ? 2 : 1;
    }
    for (int i = 0; i < n; i++)
        log_scale(spec, &(*pas)[i]);
    return n;
}

/* The x of the automatic plot, said once. */
static void auto_line(const Spec *spec, const PlotAxes *pa, FILE *md)
{
    fprintf(md, "x: %s (%s)%s; one series per %s", spec->axes[pa->x].name,
            pa->x_workload ? "the numeric workload axis with the most values"
            : pa->x_known  ? "a code axis: no workload axis is numeric"
                           : "the numeric axis with the most values: the database does not say which are"
                             " workload axes",
            pa->logx ? ", on a log2 scale (its values span more than 2 decades)" : "",
            spec->axes[pa->series].name);
    for (int k = 0; k < pa->npanels; k++)
        fprintf(md, "%s%s", k ? ", " : "; one plot per value of ", spec->axes[pa->panels[k]].name);
    fputs(".\n", md);
}

void results_report_plots(Store *db, const Spec *spec, const StoreRunInfo *runs, int nruns, const char *dir,
                          const char *baseline, FILE *md)
{
    fputs("\n## Plots\n\n", md);
    PlotAxes *pas;
    int n = plots_chosen(db, spec, baseline, &pas);
    char *plotdir = path_join(dir, spec->name);
    char *gnuplot = NULL;
    if (n == 0) {
        fputs("None: the spec has no numeric axis with several values and another axis to"
              " draw series from.\n", md);
    } else if (file_mkdir_p(plotdir)) {
        fprintf(md, "None: cannot create '%s'.\n", plotdir);
    } else {
        if (!(gnuplot = find_gnuplot()))
            fputs("gnuplot is not installed (or KVX_GNUPLOT names none): each plot's data and scripts are"
                  " written, not drawn; its matplotlib script draws it anywhere.\n\n", md);
        if (!spec->nplots)
            auto_line(spec, &pas[0], md);
        int nmeasured = 0;
        for (int r = 0; r < nruns; r++)
            nmeasured += !runs[r].reference;
        for (int r = 0; r < nruns; r++)
            for (int i = 0; i < n && !runs[r].reference; i++)
                run_plot(db, spec, &runs[r], nmeasured > 1, plotdir, gnuplot, &pas[i],
                         pas[i].ratio ? baseline : NULL, md);
    }
    free(gnuplot);
    free(plotdir);
    free(pas);
}
