/* results_table: pivoting a case set into a table (`kvx table`); the pivot
 * is results_table.h's, which `kvx compare` (results_compare.c) shares.
 *
 * Rows and columns are the distinct value tuples of the chosen axes among the
 * cases that match --where, in axis value order (numbers numerically, other
 * values in the order the spec declared them).  A cell is the median of its
 * cases' values; a failed case counts as its status, never as a number. */
#include "results_table.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

/* ---- pivot ----------------------------------------------------------------- */

void results_table_pivot_free(Pivot *p)
{
    free(p->rkeys);
    free(p->ckeys);
    free(p->cells);
}

static const CaseSet *key_cs;
static int key_n;
static const int *key_axes;
static int cmp_key(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int i = 0; i < key_n; i++) {
        const RVal *vx = &key_cs->axes[key_axes[i]].vals[x[i]];
        const RVal *vy = &key_cs->axes[key_axes[i]].vals[y[i]];
        if (vx->rank != vy->rank)
            return vx->rank - vy->rank;
    }
    return 0;
}

/* Distinct value tuples over axes[0..n) of the matching cases, sorted. */
static int collect_keys(const CaseSet *cs, const int *axes, int n, int **out)
{
    int cap = 16, count = 0;
    int w = n ? n : 1;
    int *keys = mem_alloc(sizeof *keys * (size_t)(cap * w));
    for (int i = 0; i < cs->nrecs; i++) {
        const Rec *r = &cs->recs[i];
        int k[RESULTS_MAX_AXES] = {0}, ok = r->match;
        for (int j = 0; j < n; j++)
            ok &= (k[j] = r->ax[axes[j]]) >= 0;
        if (!ok)
            continue;
        int found = 0;
        for (int c = 0; c < count && !found; c++)
            found = !memcmp(&keys[c * w], k, sizeof *k * (size_t)w);
        if (found)
            continue;
        if (count == cap) {
            cap *= 2;
            keys = mem_realloc(keys, sizeof *keys * (size_t)(cap * w));
        }
        memcpy(&keys[count++ * w], k, sizeof *k * (size_t)w);
    }
    key_cs = cs, key_n = n, key_axes = axes;
    qsort(keys, (size_t)count, sizeof *keys * (size_t)w, cmp_key);
    *out = keys;
    return count;
}

static int key_find(const int *keys, int count, int w, const int *k)
{
    for (int c = 0; c < count; c++)
        if (!memcmp(&keys[c * w], k, sizeof *k * (size_t)w))
            return c;
    return -1;
}

/* The cell of each case, row * nc + column; -1 for a case that does not match
 * or lacks a row or column axis.  malloc'd, nrecs entries (at least one). */
/* The cell of record r: its row and column keys found among the pivot's (wr
 * and wc values wide), or -1 when it does not match or lacks an axis. */
static int rec_cell(const Pivot *p, const Rec *r, int wr, int wc)
{
    int kr[RESULTS_MAX_AXES] = {0}, kc[RESULTS_MAX_AXES] = {0}, ok = r->match;
    for (int j = 0; j < p->nra; j++)
        ok &= (kr[j] = r->ax[p->ra[j]]) >= 0;
    for (int j = 0; j < p->nca; j++)
        ok &= (kc[j] = r->ax[p->ca[j]]) >= 0;
    return ok ? key_find(p->rkeys, p->nr, wr, kr) * p->nc + key_find(p->ckeys, p->nc, wc, kc) : -1;
}

static int *pivot_place(const CaseSet *cs, const Pivot *p)
{
    int wr = p->nra ? p->nra : 1, wc = p->nca ? p->nca : 1;
    int *cell_of = mem_alloc(sizeof *cell_of * (size_t)(cs->nrecs + 1));
    for (int i = 0; i < cs->nrecs; i++)
        cell_of[i] = rec_cell(p, &cs->recs[i], wr, wc);
    return cell_of;
}

/* What one cell's cases hold: passing values and their noise, failed cases'
 * stored values (used only where no case passed), the worst failure status
 * and a text fact.  The arrays are scratch of nrecs entries, reused per cell. */
typedef struct CellCases {
    double *vals, *noise, *fvals, *fnoise;
    int n, nn, nf, nfn;
    const char *text, *fail, *vstatus;
    int mixed_text;             /* two cases hold different texts */
} CellCases;

static void cell_gather(const CaseSet *cs, const int *cell_of, int c, Cell *cell, CellCases *x)
{
    x->n = x->nn = x->nf = x->nfn = x->mixed_text = 0;
    x->text = x->fail = x->vstatus = NULL;
    for (int i = 0; i < cs->nrecs; i++) {
        if (cell_of[i] != c)
            continue;
        const Rec *r = &cs->recs[i];
        cell->ncases++;
        if (!isnan(r->v) && r->vstatus) {
            x->fvals[x->nf++] = r->v;
            if (!isnan(r->noise))
                x->fnoise[x->nfn++] = r->noise;
            if (!x->vstatus || results_status_rank(r->vstatus) < results_status_rank(x->vstatus))
                x->vstatus = r->vstatus;
        } else if (!isnan(r->v)) {
            x->vals[x->n++] = r->v;
            if (!isnan(r->noise))
                x->noise[x->nn++] = r->noise;
        } else if (r->fail) {
            cell->nfail++;
            if (!x->fail || results_status_rank(r->fail) < results_status_rank(x->fail))
                x->fail = r->fail;
        } else if (r->rawtext) {
            x->mixed_text |= x->text && strcmp(x->text, r->rawtext);
            x->text = r->rawtext;
        }
    }
}

/* The cell's median and noise, or its text; the pivot's footnote flags. */
static void cell_settle(Cell *cell, CellCases *x, Pivot *p)
{
    if (x->n == 0 && x->nf > 0) {
        cell->vstatus = x->vstatus;
        x->n = x->nf, x->nn = x->nfn;
        memcpy(x->vals, x->fvals, sizeof *x->vals * (size_t)x->nf);
        memcpy(x->noise, x->fnoise, sizeof *x->noise * (size_t)x->nfn);
        p->any_fvalue = 1;
    } else {
        cell->nfail += x->nf;   /* failed, though measured: they count as failures */
    }
    int n = x->n;
    cell->n = n;
    cell->v = n ? results_median(x->vals, n) : NAN;
    cell->noise = x->nn ? results_median(x->noise, x->nn) : NAN;
    if (!n)
        cell->text = x->fail ? x->fail : x->mixed_text ? "(mixed)" : x->text ? x->text
                     : cell->ncases ? "n/a" : NULL;
    p->multi |= n > 1;
    p->mixed |= n > 0 && cell->nfail > 0 && !cell->vstatus;
    p->any_fail |= cell->nfail > 0;
}

static void pivot_build(const CaseSet *cs, Pivot *p)
{
    p->nr = collect_keys(cs, p->ra, p->nra, &p->rkeys);
    p->nc = collect_keys(cs, p->ca, p->nca, &p->ckeys);
    size_t ncells = (size_t)p->nr * (size_t)p->nc;
    p->cells = mem_calloc(ncells + 1, sizeof *p->cells);
    int *cell_of = pivot_place(cs, p);
    size_t room = sizeof(double) * (size_t)(cs->nrecs + 1);
    CellCases x = {.vals = mem_alloc(room), .noise = mem_alloc(room), .fvals = mem_alloc(room),
                   .fnoise = mem_alloc(room)};
    for (size_t c = 0; c < ncells; c++) {
        cell_gather(cs, cell_of, (int)c, &p->cells[c], &x);
        cell_settle(&p->cells[c], &x, p);
    }
    free(x.vals);
    free(x.noise);
    free(x.fvals);
    free(x.fnoise);
    free(cell_of);
}

/* ---- formatting ------------------------------------------------------------ */

static void sig3(char *buf, size_t n, double x)
{
    if (fabs(x) >= 1000)
        snprintf(buf, n, "%.0f", x);
    else
        snprintf(buf, n, "%.3g", x);
}

/* A time in ms, in the unit that reads best: "812 ns", "3.41 ms", "1.2 s". */
static void fmt_time(char *buf, size_t n, double v)
{
    static const struct { double lim, mul; const char *unit; } scale[] = {
        {1e-3, 1e6, "ns"}, {1, 1e3, "us"}, {1e3, 1, "ms"}, {INFINITY, 1e-3, "s"}};
    char num[48];
    int i = 0;
    while (fabs(v) >= scale[i].lim && i < 3)
        i++;
    if (v == 0)
        i = 2;
    sig3(num, sizeof num, v * scale[i].mul);
    snprintf(buf, n, "%s %s", num, scale[i].unit);
}

/* A rate per second with an SI prefix: "4.1 G/s". */
static void fmt_rate(char *buf, size_t n, double v)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P"};
    char num[48];
    int i = 0;
    while (fabs(v) >= 1000 && i < 5)
        v /= 1000, i++;
    sig3(num, sizeof num, v);
    snprintf(buf, n, "%s %s/s", num, pre[i]);
}

/* A value with its unit, scaled for reading (Markdown). */
void results_table_fmt_value(char *buf, size_t n, double v, ValueUnit u, int ratio)
{
    char num[48];
    if (ratio) {
        sig3(num, sizeof num, v);
        snprintf(buf, n, "%sx", num);
        return;
    }
    switch (u) {
    case VALUE_TIME:
        fmt_time(buf, n, v);
        return;
    case VALUE_GBS:
        sig3(num, sizeof num, v);
        snprintf(buf, n, "%s GB/s", num);
        return;
    case VALUE_PCT:
        sig3(num, sizeof num, v);
        snprintf(buf, n, "%s%%", num);
        return;
    case VALUE_FRAC:
        sig3(num, sizeof num, v * 100);
        snprintf(buf, n, "%s%%", num);
        return;
    case VALUE_RATE:
        fmt_rate(buf, n, v);
        return;
    case VALUE_SCI:
        snprintf(buf, n, "%.2e", v);
        return;
    case VALUE_COUNT:
    case VALUE_RAW:
        if (v == floor(v) && fabs(v) < 1e15)
            snprintf(buf, n, "%.0f", v);
        else
            snprintf(buf, n, "%.6g", v);
        return;
    }
}

static const char *unit_name(ValueUnit u, int ratio)
{
    static const char *const names[] = {"ms", "GB/s", "%", "fraction", "1/s", "count", "", ""};
    return ratio ? "x" : names[u];
}

const char *results_table_key_text(const CaseSet *cs, const int *axes, int n, const int *key,
                                   const char *sep, StrBuf *b)
{
    sb_reset(b);
    for (int j = 0; j < n; j++)
        sb_printf(b, "%s%s", j ? sep : "", cs->axes[axes[j]].vals[key[j]].text);
    return sb_str(b);
}

void results_table_md_cell(const CaseSet *cs, const Cell *c, int ratio, StrBuf *b)
{
    char buf[64];
    sb_reset(b);
    if (!c->ncases) {
        sb_puts(b, cs->searched ? "unmeasured" : "-");
    } else if (c->n) {
        results_table_fmt_value(buf, sizeof buf, c->v, cs->unit, ratio);
        sb_puts(b, buf);
        if (c->n > 1)
            sb_printf(b, " (%d)", c->n);
        if (c->vstatus)
            sb_printf(b, " (%s)", c->vstatus);
        else if (c->nfail)
            sb_puts(b, " !");
    } else {
        sb_puts(b, c->text);
    }
}

/* What a cell is, for CSV and JSON: "ok" (a value over passing cases, or a
 * fact), the status of failed cases (their value too, with --failed-values),
 * "" for no case ("unmeasured" in a searched database). */
static const char *cell_status(const CaseSet *cs, const Cell *c)
{
    if (!c->ncases)
        return cs->searched ? "unmeasured" : "";
    if (c->vstatus)
        return c->vstatus;
    return c->n || !c->nfail ? "ok" : c->text;
}

/* A cell's number for CSV and JSON: 15 significant digits, enough for any
 * measurement and free of binary noise in medians and ratios (0.91, not
 * 0.90999999999999992). */
void results_table_num(FILE *out, double v)
{
    fprintf(out, "%.15g", v);
}

void results_table_json_axis_value(FILE *out, const RVal *v)
{
    if (v->is_num && strcmp(v->text, "true") && strcmp(v->text, "false"))
        results_table_num(out, v->num);
    else if (v->is_num)
        fputs(v->text, out);
    else
        json_write_str(out, v->text);
}

/* "median_ms (...), as a ratio to strategy=naive; rows: ...; columns: ...". */
static void md_caption(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    fprintf(out, "%s", cs->value_name);
    if (cs->vidx >= 0)
        fprintf(out, " (%s)", values_info[cs->vidx].doc);
    if (o->ratio) {
        fputs(o->ratio == 2 ? ", as a speed-up over " : ", as a ratio to ", out);
        for (int k = 0; k < cs->nbase; k++)
            fprintf(out, "%s%s=%s", k ? " " : "", cs->axes[cs->base_axis[k]].name,
                    cs->axes[cs->base_axis[k]].vals[cs->base_val[k]].text);
    }
    fputs("; rows: ", out);
    for (int j = 0; j < p->nra; j++)
        fprintf(out, "%s%s", j ? ", " : "", cs->axes[p->ra[j]].name);
    if (!p->nra)
        fputs("(all)", out);
    fputs("; columns: ", out);
    for (int j = 0; j < p->nca; j++)
        fprintf(out, "%s%s", j ? ", " : "", cs->axes[p->ca[j]].name);
    if (!p->nca)
        fputs("(all)", out);
    if (o->where && *o->where)
        fprintf(out, "; where %s", o->where);
}

/* The line under the head: row keys left-aligned, values right-aligned. */
static void md_rule(const Pivot *p, FILE *out)
{
    fputs("\n|", out);
    for (int j = 0; j < (p->nra ? p->nra : 1); j++)
        fputs(" --- |", out);
    for (int c = 0; c < p->nc; c++)
        fputs(" ---: |", out);
    fputc('\n', out);
}

static void md_head(const CaseSet *cs, const Pivot *p, FILE *out, StrBuf *b)
{
    fputs("\n\n|", out);
    for (int j = 0; j < p->nra; j++)
        fprintf(out, " %s |", cs->axes[p->ra[j]].name);
    if (!p->nra)
        fputs("  |", out);
    for (int c = 0; c < p->nc; c++)
        fprintf(out, " %s |",
                p->nca ? results_table_key_text(cs, p->ca, p->nca, &p->ckeys[c * p->nca], "/", b)
                       : cs->value_name);
    md_rule(p, out);
}

/* The footnotes for what the cells show: medians, failures, failed values. */
static void md_notes(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    if (cs->searched)
        fputs("\nunmeasured: a search (kvx run --search) measured some variants only, none of this cell"
              " (or where: prunes it).\n", out);
    if (p->multi)
        fputs("\n(n): the median of n cases (other axes, or several runs, at this cell).\n", out);
    if (p->mixed)
        fputs("\n!: some cases at this cell failed; the value is over those that passed.\n", out);
    if (p->any_fvalue)
        fputs("\n(status): no case at this cell passed; the value is what the failed cases"
              " measured (--failed-values), not a verified result.\n", out);
    if (o->ratio == 2)
        fputs("\nSpeed-ups divide the baseline case's value by each case's, at the same point of the"
              " other axes, in the same run.\n", out);
    else if (o->ratio)
        fputs("\nRatios divide each case by the baseline case at the same point of the other"
              " axes, in the same run.\n", out);
}

static void write_md(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    StrBuf b;
    sb_init(&b);
    md_caption(cs, p, o, out);
    md_head(cs, p, out, &b);
    for (int r = 0; r < p->nr; r++) {
        fputc('|', out);
        for (int j = 0; j < p->nra; j++)
            fprintf(out, " %s |", cs->axes[p->ra[j]].vals[p->rkeys[r * p->nra + j]].text);
        if (!p->nra)
            fputs(" (all) |", out);
        for (int c = 0; c < p->nc; c++) {
            results_table_md_cell(cs, &p->cells[r * p->nc + c], o->ratio, &b);
            fprintf(out, " %s |", sb_str(&b));
        }
        fputc('\n', out);
    }
    md_notes(cs, p, o, out);
    sb_free(&b);
}

/* With --failed-values each value column is followed by NAME.status
 * (cell_status), so that a number from a failed case is never bare. */
static void write_csv(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    StrBuf b;
    sb_init(&b);
    for (int j = 0; j < p->nra; j++) {
        if (j)
            fputc(',', out);
        results_csv_field(out, cs->axes[p->ra[j]].name);
    }
    if (!p->nra)
        fputs("rows", out);
    for (int c = 0; c < p->nc; c++) {
        const char *name =
            p->nca ? results_table_key_text(cs, p->ca, p->nca, &p->ckeys[c * p->nca], "/", &b)
                   : cs->value_name;
        fputc(',', out);
        results_csv_field(out, name);
        if (o->failed_values) {
            fputc(',', out);
            results_csv_field(out, arena_printf(cs->arena, "%s.status", name));
        }
    }
    fputc('\n', out);
    for (int r = 0; r < p->nr; r++) {
        for (int j = 0; j < p->nra; j++) {
            if (j)
                fputc(',', out);
            results_csv_field(out, cs->axes[p->ra[j]].vals[p->rkeys[r * p->nra + j]].text);
        }
        if (!p->nra)
            fputs("all", out);
        for (int c = 0; c < p->nc; c++) {
            const Cell *cell = &p->cells[r * p->nc + c];
            fputc(',', out);
            if (cell->n)
                results_table_num(out, cell->v);
            else if (cell->text)
                results_csv_field(out, cell->text);
            else if (!cell->ncases && cs->searched)
                fputs("unmeasured", out);
            if (o->failed_values) {
                fputc(',', out);
                results_csv_field(out, cell_status(cs, cell));
            }
        }
        fputc('\n', out);
    }
    sb_free(&b);
}

/* {"spec": ..., "value": ..., "unit": ..., "ratio": ..., "baseline": {...},
 * "where": ..., "rows": [...], "cols": [...], and the opening of "cells". */
static void json_head(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    fputs("{\"spec\": ", out);
    json_write_str(out, cs->sel.spec);
    fputs(", \"value\": ", out);
    json_write_str(out, cs->value_name);
    fputs(", \"unit\": ", out);
    json_write_str(out, unit_name(cs->unit, o->ratio));
    fprintf(out, ", \"ratio\": %s", o->ratio ? "true" : "false");
    fputs(", \"baseline\": {", out);
    for (int k = 0; o->ratio && k < cs->nbase; k++) {
        fputs(k ? ", " : "", out);
        json_write_str(out, cs->axes[cs->base_axis[k]].name);
        fputs(": ", out);
        results_table_json_axis_value(out, &cs->axes[cs->base_axis[k]].vals[cs->base_val[k]]);
    }
    fputs("}, \"where\": ", out);
    if (o->where && *o->where)
        json_write_str(out, o->where);
    else
        fputs("null", out);
    const struct { const char *name; const int *axes; int n; } sides[] = {
        {"rows", p->ra, p->nra}, {"cols", p->ca, p->nca}};
    for (int s = 0; s < 2; s++) {
        fprintf(out, ", \"%s\": [", sides[s].name);
        for (int j = 0; j < sides[s].n; j++) {
            fputs(j ? ", " : "", out);
            json_write_str(out, cs->axes[sides[s].axes[j]].name);
        }
        fputs("]", out);
    }
    fputs(",\n \"cells\": [", out);
}

/* One cell: its row and column axis values, value, counts and status. */
static void json_cell(const CaseSet *cs, const Pivot *p, int r, int c, FILE *out)
{
    const Cell *cell = &p->cells[r * p->nc + c];
    for (int j = 0; j < p->nra; j++) {
        json_write_str(out, cs->axes[p->ra[j]].name);
        fputs(": ", out);
        results_table_json_axis_value(out, &cs->axes[p->ra[j]].vals[p->rkeys[r * p->nra + j]]);
        fputs(", ", out);
    }
    for (int j = 0; j < p->nca; j++) {
        json_write_str(out, cs->axes[p->ca[j]].name);
        fputs(": ", out);
        results_table_json_axis_value(out, &cs->axes[p->ca[j]].vals[p->ckeys[c * p->nca + j]]);
        fputs(", ", out);
    }
    fputs("\"value\": ", out);
    if (cell->n)
        results_table_num(out, cell->v);
    else if (cell->text && !cell->nfail && strcmp(cell->text, "n/a"))
        json_write_str(out, cell->text);
    else
        fputs("null", out);
    fprintf(out, ", \"n\": %d, \"failed\": %d, \"status\": ", cell->n, cell->nfail);
    json_write_str(out, cell_status(cs, cell));
}

static void write_json(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out)
{
    json_head(cs, p, o, out);
    int first = 1;
    for (int r = 0; r < p->nr; r++)
        for (int c = 0; c < p->nc; c++) {
            if (!p->cells[r * p->nc + c].ncases)
                continue;
            fputs(first ? "\n  {" : ",\n  {", out);
            first = 0;
            json_cell(cs, p, r, c, out);
            fputs("}", out);
        }
    fputs("\n]}\n", out);
}

/* ---- the table ------------------------------------------------------------- */

static int pick_axes(CaseSet *cs, const char *const *names, int n, int *out, const char *opt,
                     KvxError *err)
{
    for (int j = 0; j < n; j++) {
        int a = results_caseset_axis(cs, names[j]);
        if (a < 0) {
            kvx_error_set(err, KVX_EINPUT, NULL, "unknown axis '%s' in %s (stored axes: %s)",
                          names[j], opt, results_caseset_axis_list(cs));
            return -1;
        }
        out[j] = a;
    }
    return 0;
}

/* Load, pick the axes and pivot.  With neither --rows nor --cols the first
 * stored axis goes across and the second down.  fb: a baseline to borrow
 * when none is given or stored (results_caseset_load). */
int results_table_build(Store *db, const ResultsSel *sel, const TableOpts *o,
                        const BaseValue *fb, int nfb, CaseSet *cs, Pivot *p, KvxError *err)
{
    memset(p, 0, sizeof *p);
    if (results_caseset_load(db, sel, o, fb, nfb, cs, err))
        return -1;
    if (o->ratio) {
        for (int i = 0; i < cs->nrecs; i++)
            if (cs->recs[i].rawtext) {
                kvx_error_set(err, KVX_EINPUT, NULL, "--ratio: %s holds text, not numbers",
                              cs->value_name);
                return -1;
            }
    }
    if (o->nrows > RESULTS_MAX_AXES || o->ncols > RESULTS_MAX_AXES ||
        pick_axes(cs, o->rows, o->nrows, p->ra, "--rows", err) ||
        pick_axes(cs, o->cols, o->ncols, p->ca, "--cols", err)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "too many axes in --rows/--cols");
        return -1;
    }
    p->nra = o->nrows;
    p->nca = o->ncols;
    for (int i = 0; i < p->nra; i++)
        for (int j = 0; j < p->nca; j++)
            if (p->ra[i] == p->ca[j]) {
                kvx_error_set(err, KVX_EINPUT, NULL, "axis '%s' is in both --rows and --cols",
                              cs->axes[p->ra[i]].name);
                return -1;
            }
    if (!o->nrows && !o->ncols) {
        if (cs->naxes > 0)
            p->ca[p->nca++] = 0;
        if (cs->naxes > 1)
            p->ra[p->nra++] = 1;
    }
    pivot_build(cs, p);
    if (p->nr == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no stored case of spec '%s' matches%s%s",
                      cs->sel.spec, o->where && *o->where ? " --where " : "",
                      o->where ? o->where : "");
        if (cs->where_misses)
            kvx_error_attach_log(err, cs->where_misses, strlen(cs->where_misses));
        return 1;
    }
    return 0;
}

/* ---- --best ------------------------------------------------------------------- */

/* Lower is better for times, errors and counts; higher for bandwidth, % of
 * peak and rates; a speed-up (baseline / value) turns it around. */
static int lower_better(ValueUnit u, int ratio)
{
    int lower = values_lower_better(u);
    return ratio == 2 ? !lower : lower;
}

/* The axes outside rows with more than one value among the matching cases:
 * what tells a row's candidates apart. */
static int choice_axes(const CaseSet *cs, const Pivot *p, int *out)
{
    int n = 0;
    for (int a = 0; a < cs->naxes; a++) {
        int in_rows = 0, first = -1, varies = 0;
        for (int j = 0; j < p->nra; j++)
            in_rows |= p->ra[j] == a;
        if (in_rows)
            continue;
        for (int i = 0; i < cs->nrecs && !varies; i++) {
            const Rec *r = &cs->recs[i];
            if (!r->match || r->ax[a] < 0)
                continue;
            if (first < 0)
                first = r->ax[a];
            varies = r->ax[a] != first;
        }
        if (varies)
            out[n++] = a;
    }
    return n;
}

/* A candidate of --best: its values of the choice axes ch into label ("axis=value
 * ..."), its value into val (exact for csv, with its unit for md). */
static void best_describe(const CaseSet *cs, const Rec *r, const int *ch, int nch,
                          const TableOpts *o, int csv, StrBuf *label, char *val, size_t n)
{
    sb_reset(label);
    for (int j = 0; j < nch; j++)
        sb_printf(label, "%s%s=%s", j ? " " : "", cs->axes[ch[j]].name,
                  r->ax[ch[j]] >= 0 ? cs->axes[ch[j]].vals[r->ax[ch[j]]].text : "-");
    if (csv)
        num_write_double(val, n, r->v, NUM_G15);
    else
        results_table_fmt_value(val, n, r->v, cs->unit, o->ratio);
}

/* --best over one table: the choice axes that name a candidate, which way is
 * better, and scratch for a row's key and its two candidates' labels. */
typedef struct Best {
    const CaseSet *cs;
    const Pivot *p;
    const TableOpts *o;
    FILE *out;
    int ch[RESULTS_MAX_AXES], nch;
    int lower, csv;
    int bax;                    /* --beside: its axis, -1 for none */
    unsigned char *bval;        /* per value of bax: 1 = beside, not a candidate */
    StrBuf k, a, b, c;
} Best;

/* Parse o->beside ("AXIS=V1,V2") into x->bax and x->bval.  0, or -1 with err. */
static int beside_parse(Best *x, const char *spec, KvxError *err)
{
    const CaseSet *cs = x->cs;
    x->bax = -1;
    if (!spec)
        return 0;
    const char *eq = strchr(spec, '=');
    for (int a = 0; eq && a < cs->naxes && x->bax < 0; a++)
        if (strlen(cs->axes[a].name) == (size_t)(eq - spec) && !strncmp(cs->axes[a].name, spec, eq - spec))
            x->bax = a;
    if (x->bax < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "--beside '%s': expected AXIS=VALUE[,VALUE...] over an axis of the table",
                      spec);
        return -1;
    }
    const AxisInfo *ax = &cs->axes[x->bax];
    x->bval = mem_calloc(ax->nvals ? ax->nvals : 1, 1);
    for (const char *v = eq + 1; *v;) {
        size_t len = strcspn(v, ",");
        /* A value no case has is no error: a report names the library's calls
         * whether or not they were imported, and its columns then show "-". */
        for (int i = 0; i < ax->nvals; i++)
            if (strlen(ax->vals[i].text) == len && !strncmp(ax->vals[i].text, v, len))
                x->bval[i] = 1;
        v += len + (v[len] == ',');
    }
    return 0;
}

static int is_beside(const Best *x, const Rec *r)
{
    return x->bax >= 0 && r->ax[x->bax] >= 0 && x->bval[r->ax[x->bax]];
}

static void best_head(Best *x)
{
    const CaseSet *cs = x->cs;
    const Pivot *p = x->p;
    const TableOpts *o = x->o;
    FILE *out = x->out;
    if (x->csv) {
        for (int j = 0; j < p->nra; j++)
            fprintf(out, "%s,", cs->axes[p->ra[j]].name);
        fprintf(out, "best,%s,candidates,runner_up,runner_up_%s,margin%s%s%s\n", cs->value_name,
                cs->value_name, x->bax >= 0 ? ",beside,beside_" : "", x->bax >= 0 ? cs->value_name : "",
                x->bax >= 0 ? ",best_vs_beside" : "");
        return;
    }
    sb_reset(&x->a);
    for (int j = 0; j < x->nch; j++)
        sb_printf(&x->a, "%s%s", j ? ", " : "", cs->axes[x->ch[j]].name);
    fprintf(out, "best %s%s (%s) per %s, over %s%s%s; margin: how far ahead of the runner-up, (noise) where within either case's spread\n\n",
            cs->value_name, o->ratio == 2 ? " as a speed-up" : o->ratio ? " as a ratio" : "",
            x->lower ? "lowest" : "highest", p->nra ? "row" : "selection",
            x->nch ? sb_str(&x->a) : "one case", o->where && *o->where ? "; where " : "",
            o->where && *o->where ? o->where : "");
    fputs("|", out);
    for (int j = 0; j < p->nra; j++)
        fprintf(out, " %s |", cs->axes[p->ra[j]].name);
    fprintf(out, " best | %s | of | runner-up | its %s | margin |", cs->value_name, cs->value_name);
    if (x->bax >= 0)
        fprintf(out, " beside | its %s | best vs beside |", cs->value_name);
    fputs("\n|", out);
    for (int j = 0; j < p->nra + (x->bax >= 0 ? 9 : 6); j++)
        fputs(j < p->nra || j == p->nra || j == p->nra + 3 || j == p->nra + 6 ? " --- |" : " ---: |", out);
    fputs("\n", out);
}

/* The best and the runner-up among the passing cases of row key (-1 where
 * there is none); returns how many cases competed. */
static int best_pick(const Best *x, const int *key, int beside, int *best, int *second)
{
    const CaseSet *cs = x->cs;
    int n = 0;
    *best = *second = -1;
    for (int i = 0; i < cs->nrecs; i++) {
        const Rec *rec = &cs->recs[i];
        int in = rec->match && !isnan(rec->v) && !rec->vstatus && !rec->fail && is_beside(x, rec) == beside;
        for (int j = 0; j < x->p->nra && in; j++)
            in = rec->ax[x->p->ra[j]] == key[j];
        if (!in)
            continue;
        n++;
        double v = rec->v;
        if (*best < 0 || (x->lower ? v < cs->recs[*best].v : v > cs->recs[*best].v)) {
            *second = *best;
            *best = i;
        } else if (*second < 0 ||
                   (x->lower ? v < cs->recs[*second].v : v > cs->recs[*second].v)) {
            *second = i;
        }
    }
    return n;
}

/* How many times better best is than other: other's value over best's (lower
 * is better) or best's over other's.  The runner-up gives the margin (>= 1); a
 * --beside case can give less than 1, where it wins.  "(noise)" where that is
 * within the spread of either case's samples, where the order means little.
 * Empty when not finite. */
static void best_ratio(const Best *x, const Rec *best, const Rec *other, char *buf, size_t n)
{
    double m = x->lower ? other->v / best->v : best->v / other->v;
    double nz = fmax(best->noise, other->noise);
    int close = !isnan(nz) && fabs(m - 1) <= nz;
    if (isfinite(m))
        snprintf(buf, n, x->csv ? "%.4g" : "%.3fx%s", m, x->csv ? "" : close ? " (noise)" : "");
}

static void best_row(Best *x, int r)
{
    const CaseSet *cs = x->cs;
    const Pivot *p = x->p;
    const int *key = &p->rkeys[r * (p->nra ? p->nra : 1)];
    int best, second, lib = -1, lib2;
    int n = best_pick(x, key, 0, &best, &second);
    results_table_key_text(cs, p->ra, p->nra, key, x->csv ? "," : " | ", &x->k);
    char v1[64] = "", v2[64] = "", margin[32] = "";
    if (best >= 0)
        best_describe(cs, &cs->recs[best], x->ch, x->nch, x->o, x->csv, &x->a, v1, sizeof v1);
    if (second >= 0) {
        best_describe(cs, &cs->recs[second], x->ch, x->nch, x->o, x->csv, &x->b, v2, sizeof v2);
        best_ratio(x, &cs->recs[best], &cs->recs[second], margin, sizeof margin);
    }
    if (x->csv)
        fprintf(x->out, "%s%s%s,%s,%d,%s,%s,%s", sb_str(&x->k), p->nra ? "," : "",
                best >= 0 ? sb_str(&x->a) : "", v1, n, second >= 0 ? sb_str(&x->b) : "", v2,
                margin);
    else
        fprintf(x->out, "| %s%s%s | %s | %d | %s | %s | %s |", sb_str(&x->k),
                p->nra ? " | " : "", best >= 0 ? sb_str(&x->a) : "(none passed)", v1, n,
                second >= 0 ? sb_str(&x->b) : "-", v2, margin);
    if (x->bax >= 0) {
        char v3[64] = "", vs[32] = "";
        if (best_pick(x, key, 1, &lib, &lib2) && lib >= 0) {
            best_describe(cs, &cs->recs[lib], &x->bax, 1, x->o, x->csv, &x->c, v3, sizeof v3);
            if (best >= 0)
                best_ratio(x, &cs->recs[best], &cs->recs[lib], vs, sizeof vs);
        }
        fprintf(x->out, x->csv ? ",%s,%s,%s" : " %s | %s | %s |", lib >= 0 ? sb_str(&x->c) : "-", v3, vs);
    }
    fputs("\n", x->out);
}

static int write_best(const CaseSet *cs, const Pivot *p, const TableOpts *o, FILE *out, KvxError *err)
{
    Best x = {.cs = cs, .p = p, .o = o, .out = out, .lower = lower_better(cs->unit, o->ratio),
              .csv = o->format == RESULTS_CSV};
    x.nch = choice_axes(cs, p, x.ch);
    sb_init(&x.k), sb_init(&x.a), sb_init(&x.b), sb_init(&x.c);
    int rc = beside_parse(&x, o->beside, err);
    if (!rc) {
        best_head(&x);
        for (int r = 0; r < p->nr; r++)
            best_row(&x, r);
    }
    free(x.bval);
    sb_free(&x.k), sb_free(&x.a), sb_free(&x.b), sb_free(&x.c);
    return rc;
}

int results_table(Store *db, const TableOpts *o, FILE *out, KvxError *err)
{
    if (o->failures)
        return results_failures(db, o, out, err);
    CaseSet cs;
    Pivot p;
    if (o->best && (o->ncols > 0 || o->format == RESULTS_JSON)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "--best takes --rows only, and md or csv output");
        return -1;
    }
    int rc = results_table_build(db, &o->sel, o, NULL, 0, &cs, &p, err);
    if (!rc && !o->best && o->beside) {
        kvx_error_set(err, KVX_EINPUT, NULL, "--beside goes with --best");
        rc = -1;
    } else if (!rc && o->best) {
        rc = write_best(&cs, &p, o, out, err);
    } else if (!rc) {
        if (o->format == RESULTS_CSV)
            write_csv(&cs, &p, o, out);
        else if (o->format == RESULTS_JSON)
            write_json(&cs, &p, o, out);
        else
            write_md(&cs, &p, o, out);
    }
    results_table_pivot_free(&p);
    results_caseset_free(&cs);
    return rc;
}
