/* results_compare: `kvx compare`: two tables (results_table.h), each from
 * its own database, run or reference, laid out on A's axes and paired cell by
 * cell by their axis values; B/A and a mark where the difference exceeds
 * what either side's noise explains.
 *
 * Invariants: B's axes are found by name, never by position; a cell only one
 * side has is still a line, with the other side empty. */
#include "results_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- compare --------------------------------------------------------------- */

typedef struct CmpLine {
    const char *key;            /* row and column value texts, \x1f-separated */
    const Cell *a, *b;
    const Pivot *pa;            /* the side whose key texts name the line */
    const CaseSet *csa;
    int r, c;
} CmpLine;

static const char *cell_key(const CaseSet *cs, const Pivot *p, int r, int c, Arena *a)
{
    StrBuf b, t;
    sb_init(&b);
    sb_init(&t);
    if (p->nra)
        sb_puts(&b, results_table_key_text(cs, p->ra, p->nra, &p->rkeys[r * p->nra], "\x1f", &t));
    sb_putc(&b, '\x1e');
    if (p->nca)
        sb_puts(&b, results_table_key_text(cs, p->ca, p->nca, &p->ckeys[c * p->nca], "\x1f", &t));
    const char *s = arena_strdup(a, sb_str(&b));
    sb_free(&b);
    sb_free(&t);
    return s;
}

/* '*' when the difference exceeds what either side's own noise explains and
 * min_diff of A; '?' when the noise is not known: neither side measured it
 * (imported references), or, for ratios, either side lacks it (a ratio's noise
 * is its case's and its baseline's, and a one-sided noise says nothing about
 * the other side's ratio). */
static const char *cmp_mark(const Cell *a, const Cell *b, int ratio, double min_diff)
{
    if (!a || !b || !a->n || !b->n)
        return "";
    double na = isnan(a->noise) ? NAN : a->noise * fabs(a->v);
    double nb = isnan(b->noise) ? NAN : b->noise * fabs(b->v);
    if (ratio ? isnan(na) || isnan(nb) : isnan(na) && isnan(nb))
        return "?";
    double lim = isnan(na) ? nb : isnan(nb) ? na : fmax(na, nb);
    lim = fmax(lim, min_diff * fabs(a->v));
    return fabs(b->v - a->v) > lim ? "*" : "";
}

static void cmp_cell_md(const CaseSet *cs, const Cell *c, int ratio, StrBuf *b)
{
    static const Cell none = {0};
    results_table_md_cell(cs, c ? c : &none, ratio, b);
}

/* o's where and-ed with a side's own. */
static const char *side_where(const char *both, const char *own, Arena *a)
{
    if (!own || !*own)
        return both;
    if (!both || !*both)
        return own;
    return arena_printf(a, "(%s) && (%s)", both, own);
}

/* One `kvx compare`: both sides' tables, the lines that pair their cells, and
 * what the footnotes must explain.  Zeroed, so that compare_close frees
 * whatever a failed stage left. */
typedef struct Compare {
    const CompareSide *A, *B;
    const TableOpts *o;
    FILE *out;
    Arena *arena;
    CaseSet ca, cb;
    Pivot pa, pb;
    BaseValue fb[RESULTS_MAX_AXES];   /* the baseline B borrows from A */
    int nfb;
    CmpLine *lines;                 /* A's cells in A's order, then B's alone */
    int nlines;
    int any_star, any_q;            /* some line is marked '*', '?' */
    StrBuf b;                       /* scratch for a cell's text */
} Compare;

/* A side's error names the side: "... [in results/h200.db]". */
static void side_error(KvxError *err, const char *name)
{
    if (err->code)
        snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " [in %s]",
                 name);
}

static int compare_load_a(Compare *c, KvxError *err)
{
    TableOpts oa = *c->o;
    oa.where = side_where(c->o->where, c->A->where, c->arena);
    if (results_table_build(c->A->db, &c->A->sel, &oa, NULL, 0, &c->ca, &c->pa, err)) {
        side_error(err, c->A->name);
        return -1;
    }
    return 0;
}

/* B is laid out on A's axes, by name: its own axis numbering may differ.  A
 * reference stores no baseline: with --ratio and no --baseline it takes A's
 * (the same axis values, looked up among B's). */
static int compare_load_b(Compare *c, KvxError *err)
{
    const CaseSet *ca = &c->ca;
    const Pivot *pa = &c->pa;
    TableOpts ob = *c->o;
    const char **rows = arena_alloc(c->arena, sizeof *rows * (RESULTS_MAX_AXES + 1));
    const char **cols = arena_alloc(c->arena, sizeof *cols * (RESULTS_MAX_AXES + 1));
    for (int j = 0; j < pa->nra; j++)
        rows[j] = ca->axes[pa->ra[j]].name;
    for (int j = 0; j < pa->nca; j++)
        cols[j] = ca->axes[pa->ca[j]].name;
    ob.rows = rows, ob.nrows = pa->nra, ob.cols = cols, ob.ncols = pa->nca;
    ob.where = side_where(c->o->where, c->B->where, c->arena);
    for (int k = 0; c->o->ratio && !c->o->baseline && k < ca->nbase; k++) {
        const RVal *v = &ca->axes[ca->base_axis[k]].vals[ca->base_val[k]];
        c->fb[c->nfb++] = (BaseValue){ca->axes[ca->base_axis[k]].name, v->text, v->is_num, v->num};
    }
    if (results_table_build(c->B->db, &c->B->sel, &ob, c->fb, c->nfb, &c->cb, &c->pb, err)) {
        side_error(err, c->B->name);
        return -1;
    }
    return 0;
}

/* Pair the cells of both sides by their key texts: A's cells in A's order
 * (with B's cell where B has one), then the cells only B has. */
static void compare_pair(Compare *c)
{
    const Pivot *pa = &c->pa, *pb = &c->pb;
    int cap = pa->nr * pa->nc + pb->nr * pb->nc + 1, n = 0;
    c->lines = mem_calloc((size_t)cap, sizeof *c->lines);
    for (int r = 0; r < pa->nr; r++)
        for (int k = 0; k < pa->nc; k++)
            if (pa->cells[r * pa->nc + k].ncases)
                c->lines[n++] = (CmpLine){cell_key(&c->ca, pa, r, k, c->arena),
                                          &pa->cells[r * pa->nc + k], NULL, pa, &c->ca, r, k};
    int na = n;
    for (int r = 0; r < pb->nr; r++)
        for (int k = 0; k < pb->nc; k++) {
            const Cell *cell = &pb->cells[r * pb->nc + k];
            if (!cell->ncases)
                continue;
            const char *key = cell_key(&c->cb, pb, r, k, c->arena);
            int i = 0;
            while (i < na && strcmp(c->lines[i].key, key))
                i++;
            if (i < na)
                c->lines[i].b = cell;
            else
                c->lines[n++] = (CmpLine){key, NULL, cell, pb, &c->cb, r, k};
        }
    c->nlines = n;
}

static void compare_head_md(const Compare *c)
{
    const TableOpts *o = c->o;
    const CaseSet *ca = &c->ca;
    const Pivot *pa = &c->pa;
    FILE *out = c->out;
    fprintf(out, "%s%s; A = %s, B = %s", ca->value_name,
            o->ratio == 2 ? " (speed-up over the baseline)" : o->ratio ? " (ratio to the baseline)" : "",
            c->A->name, c->B->name);
    if (c->cb.base_borrowed) {
        fputs("; B stores no baseline and takes A's, ", out);
        for (int k = 0; k < c->nfb; k++)
            fprintf(out, "%s%s=%s", k ? " " : "", c->fb[k].axis, c->fb[k].text);
    }
    if (o->min_diff > 0)
        fprintf(out, "; marked from a %.3g%% difference", 100 * o->min_diff);
    fputs("\n\n|", out);
    for (int j = 0; j < pa->nra; j++)
        fprintf(out, " %s |", ca->axes[pa->ra[j]].name);
    for (int j = 0; j < pa->nca; j++)
        fprintf(out, " %s |", ca->axes[pa->ca[j]].name);
    fputs(" A | B | B/A | |\n|", out);
    for (int j = 0; j < pa->nra + pa->nca; j++)
        fputs(" --- |", out);
    fputs(" ---: | ---: | ---: | --- |\n", out);
}

static void compare_head(const Compare *c)
{
    const CaseSet *ca = &c->ca;
    const Pivot *pa = &c->pa;
    FILE *out = c->out;
    if (c->o->format == RESULTS_MD) {
        compare_head_md(c);
    } else if (c->o->format == RESULTS_CSV) {
        for (int j = 0; j < pa->nra + pa->nca; j++) {
            results_csv_field(out, ca->axes[j < pa->nra ? pa->ra[j] : pa->ca[j - pa->nra]].name);
            fputc(',', out);
        }
        fputs("A,B,B_over_A,mark\n", out);
    } else {
        fputs("{\"value\": ", out);
        json_write_str(out, ca->value_name);
        fputs(", \"A\": ", out);
        json_write_str(out, c->A->name);
        fputs(", \"B\": ", out);
        json_write_str(out, c->B->name);
        fprintf(out, ", \"b_baseline_from_a\": %s, \"min_diff\": ",
                c->cb.base_borrowed ? "true" : "false");
        results_table_num(out, c->o->min_diff);
        fputs(",\n \"cells\": [", out);
    }
}

/* A line's row and column values, named by the side that has the line. */
static void compare_line_keys(const Compare *c, const CmpLine *l)
{
    const CaseSet *cs = l->csa;
    const Pivot *p = l->pa;
    FILE *out = c->out;
    for (int j = 0; j < p->nra + p->nca; j++) {
        int ax = j < p->nra ? p->ra[j] : p->ca[j - p->nra];
        int vi = j < p->nra ? p->rkeys[l->r * p->nra + j] : p->ckeys[l->c * p->nca + j - p->nra];
        const RVal *v = &cs->axes[ax].vals[vi];
        if (c->o->format == RESULTS_MD) {
            fprintf(out, " %s |", v->text);
        } else if (c->o->format == RESULTS_CSV) {
            results_csv_field(out, v->text);
            fputc(',', out);
        } else {
            json_write_str(out, cs->axes[ax].name);
            fputs(": ", out);
            results_table_json_axis_value(out, v);
            fputs(", ", out);
        }
    }
}

/* A line's A and B cells; a side without the cell is empty ("-", "", null),
 * or "unmeasured" where that side is a search's. */
static void compare_line_sides(Compare *c, const CmpLine *l)
{
    static const char *const name[] = {"A", "B"};
    const Cell *sides[2] = {l->a, l->b};
    FILE *out = c->out;
    for (int s = 0; s < 2; s++) {
        const Cell *cell = sides[s];
        int unmeasured = (!cell || !cell->ncases) && (s ? &c->cb : &c->ca)->searched;
        if (c->o->format == RESULTS_MD) {
            cmp_cell_md(s ? &c->cb : &c->ca, cell, c->o->ratio, &c->b);
            fprintf(out, " %s |", sb_str(&c->b));
        } else if (c->o->format == RESULTS_CSV) {
            if (cell && cell->n)
                results_table_num(out, cell->v);
            else if (cell && cell->text)
                results_csv_field(out, cell->text);
            else if (unmeasured)
                fputs("unmeasured", out);
            fputc(',', out);
        } else {
            fprintf(out, "\"%s\": ", name[s]);
            if (cell && cell->n)
                results_table_num(out, cell->v);
            else if (cell && cell->text)
                json_write_str(out, cell->text);
            else
                fputs(unmeasured ? "\"unmeasured\"" : "null", out);
            fputs(", ", out);
        }
    }
}

/* B/A (NaN unless both sides have a value and A's is not 0) and the mark. */
static void compare_line_ratio(Compare *c, const CmpLine *l)
{
    FILE *out = c->out;
    double ratio = l->a && l->b && l->a->n && l->b->n && l->a->v != 0 ? l->b->v / l->a->v : NAN;
    const char *mark = cmp_mark(l->a, l->b, c->o->ratio, c->o->min_diff);
    c->any_star |= mark[0] == '*';
    c->any_q |= mark[0] == '?';
    if (c->o->format == RESULTS_MD) {
        char buf[64] = "-";
        if (!isnan(ratio))
            results_table_fmt_value(buf, sizeof buf, ratio, VALUE_RAW, 1);
        fprintf(out, " %s | %s |\n", buf, mark);
    } else if (c->o->format == RESULTS_CSV) {
        if (!isnan(ratio))
            results_table_num(out, ratio);
        fprintf(out, ",%s\n", mark);
    } else {
        fputs("\"B_over_A\": ", out);
        if (isnan(ratio))
            fputs("null", out);
        else
            results_table_num(out, ratio);
        fprintf(out, ", \"mark\": \"%s\"}", mark);
    }
}

static void compare_lines(Compare *c)
{
    for (int i = 0; i < c->nlines; i++) {
        if (c->o->format == RESULTS_JSON)
            fputs(i ? ",\n  {" : "\n  {", c->out);
        else if (c->o->format == RESULTS_MD)
            fputc('|', c->out);
        compare_line_keys(c, &c->lines[i]);
        compare_line_sides(c, &c->lines[i]);
        compare_line_ratio(c, &c->lines[i]);
    }
}

/* JSON's closing brackets; Markdown's footnotes for the marks in use. */
/* The buffer placement of a side's measured runs: the boundary they share, 0
 * when they placed buffers where the driver put them, -2 when they differ among
 * themselves, -1 when none was measured by kvx (references only). */
static int64_t side_align(const CompareSide *side, const CaseSet *cs)
{
    int64_t align = -1, last_run = 0;
    for (int i = 0; i < cs->nrecs; i++) {
        if (cs->recs[i].run_id == last_run)
            continue;
        last_run = cs->recs[i].run_id;
        int64_t a = store_run_buf_align(side->db, last_run);
        if (a >= 0)
            align = align == -1 || align == a ? a : -2;
    }
    return align;
}

static const char *align_text(int64_t a, char *buf, size_t n)
{
    if (a == 0)
        return "where the driver put them (before kvx 0.2.0)";
    if (a == -2)
        return "in differing ways among its runs";
    snprintf(buf, n, "at %lld-byte boundaries", (long long)a);
    return buf;
}

/* Says when the two sides placed their buffers differently: a kernel whose
 * atomics hit a few cache lines can differ by 2x from placement alone. */
static void compare_placement(const Compare *c)
{
    int64_t a = side_align(c->A, &c->ca), b = side_align(c->B, &c->cb);
    if (a == -1 || b == -1 || (a == b && a != -2))
        return;
    char ta[64], tb[64];
    fprintf(c->out, "\nNote: A's runs placed their buffers %s, B's %s: a case whose atomics hit a"
            " few cache lines can differ by up to 2x from placement alone (docs/measurement.md,"
            " \"Where buffers are placed\").\n", align_text(a, ta, sizeof ta), align_text(b, tb, sizeof tb));
}

static void compare_foot(const Compare *c)
{
    const TableOpts *o = c->o;
    FILE *out = c->out;
    if (o->format == RESULTS_JSON)
        fputs("\n]}\n", out);
    if (o->format != RESULTS_MD)
        return;
    if (c->any_star) {
        fputs("\n*: |B - A| exceeds the larger of the two cells' measured noise"
              " (noise x value", out);
        if (o->ratio)
            fputs("; a ratio's noise is its case's and its baseline's combined", out);
        fputs(")", out);
        if (o->min_diff > 0)
            fprintf(out, " and %.3g%% of A", 100 * o->min_diff);
        fputs(".\n", out);
    }
    if (c->any_q)
        fputs(o->ratio ? "\n?: a side did not record the noise of its ratio (its case's or"
                         " its baseline's; imported figures record none), so no difference"
                         " can be called significant.\n"
                       : "\n?: neither side recorded its noise (imported figures), so no"
                         " difference can be called significant.\n", out);
    if (c->pa.multi || c->pb.multi)
        fputs("\n(n): the median of n cases at this cell.\n", out);
    compare_placement(c);
}

static void compare_close(Compare *c)
{
    free(c->lines);
    results_table_pivot_free(&c->pa);
    results_table_pivot_free(&c->pb);
    results_caseset_free(&c->ca);
    results_caseset_free(&c->cb);
    sb_free(&c->b);
    arena_free(c->arena);
}

int results_compare(const CompareSide *A, const CompareSide *B, const TableOpts *o, FILE *out,
                    KvxError *err)
{
    Compare c = {.A = A, .B = B, .o = o, .out = out, .arena = arena_new()};
    sb_init(&c.b);
    int rc = -1;
    if (compare_load_a(&c, err) || compare_load_b(&c, err))
        goto fail;
    compare_pair(&c);
    compare_head(&c);
    compare_lines(&c);
    compare_foot(&c);
    rc = 0;
fail:
    compare_close(&c);
    return rc;
}
