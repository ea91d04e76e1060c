/* results_io: moving results in and out of the store: `kvx export` (every case
 * as one flat row for pandas and spreadsheets), `kvx import` (a reference table
 * measured elsewhere, stored as a run of kind 'reference') and `kvx merge`
 * (shards and machines combined into one database).
 *
 * Invariants: an import is checked whole before anything is written, and is
 * one transaction (its run row and every case), so that a failed or killed
 * one leaves no rows; a merge of one input is one transaction; merging the
 * same input twice changes nothing. */
#include "results_core.h"
#include "core/version.h"
#include "host/case.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- export ---------------------------------------------------------------- */

static void export_cell(const StoreCell *c, ResultsFormat f, FILE *out)
{
    char buf[40];
    switch (c->type) {
    case STORE_INT:
        fprintf(out, "%lld", (long long)c->i);
        break;
    case STORE_REAL:
        /* JSON has no Inf or NaN (a database written by an older kvx may hold
         * them): they go out as null, and empty in CSV, like NULL. */
        if (!isfinite(c->d)) {
            if (f == RESULTS_JSON)
                fputs("null", out);
            break;
        }
        num_write_double(buf, sizeof buf, c->d, NUM_G15);
        fputs(buf, out);
        break;
    case STORE_NULL:
        if (f == RESULTS_JSON)
            fputs("null", out);
        break;
    case STORE_TEXT:
        if (f == RESULTS_JSON)
            json_write_str(out, c->text);
        else
            results_csv_field(out, c->text);
    }
}

/* Valid JSON text as it is, but for bytes that are not UTF-8, which can
 * only sit inside its strings: each becomes \ufffd there. */
static void put_json_raw(FILE *out, const char *s)
{
    size_t n = strlen(s);
    while (*s) {
        int k = json_utf8_len(s, n);
        if (k <= 0) {
            fputs("\\ufffd", out);
            k = 1;
        } else {
            fwrite(s, 1, (size_t)k, out);
        }
        s += k, n -= (size_t)k;
    }
}

static void export_row(const StoreExport *x, const StoreCell *cells, ResultsFormat f, int row,
                       FILE *out)
{
    int json = f == RESULTS_JSON;
    if (json)
        fputs(row ? ",\n{" : "\n{", out);
    for (int i = 0; i < store_export_ncols(x); i++) {
        if (json) {
            fputs(i ? ", " : "", out);
            json_write_str(out, store_export_name(x, i));
            fputs(": ", out);
        } else if (i) {
            fputc(',', out);
        }
        if (json && cells[i].json)
            put_json_raw(out, cells[i].text);
        else
            export_cell(&cells[i], f, out);
    }
    fputs(json ? "}" : "\n", out);
}

int results_export(Store *db, const char *spec, ResultsFormat f, FILE *out, KvxError *err)
{
    if (f == RESULTS_NVBENCH)
        return results_export_nvbench(db, spec, out, err);
    StoreExport *x = store_export_open(db, spec, err);
    if (!x)
        return -1;
    int n = store_export_ncols(x);
    StoreCell *cells = mem_alloc(sizeof *cells * (size_t)n);
    if (f == RESULTS_JSON) {
        fputs("[", out);
    } else {
        for (int i = 0; i < n; i++) {
            if (i)
                fputc(',', out);
            results_csv_field(out, store_export_name(x, i));
        }
        fputc('\n', out);
    }
    int rc, row = 0;
    while ((rc = store_export_next(x, cells, err)) > 0)
        export_row(x, cells, f, row++, out);
    if (rc == 0 && f == RESULTS_JSON)
        fputs("\n]\n", out);
    free(cells);
    store_export_close(x);
    return rc;
}

/* ---- import ---------------------------------------------------------------- */

/* Value columns an imported CSV may carry (core/values.h's IMP lines, each
 * a double of CaseRow: an IMP line of another type does not compile), and
 * where each goes. */
#define IMPORT_IMP_REAL(n) {#n, offsetof(CaseRow, n)},
#define IMPORT_NO_REAL(n)
#define IMPORT_NO_INT(n)
#define IMPORT_NO_MHZ(n)
#define IMPORT_NO_TRI(n)
static const struct { const char *name; size_t off; } import_cols[] = {
#define X(n, from, type, since, tab, unit, imp, doc, meaning) IMPORT_##imp##_##type(n)
    KVX_VALUES(X)
#undef X
};
#define NIMPORT ((int)(sizeof import_cols / sizeof import_cols[0]))

int results_import_column(const char *name)
{
    for (int k = 0; k < NIMPORT; k++)
        if (!strcmp(name, import_cols[k].name))
            return 1;
    return !strcmp(name, "status");
}

typedef struct CsvRow {
    char **f;
    int n;
    int line;
    int *col;          /* 1-based column of each field, for messages */
} CsvRow;

/* Text (len bytes) is UTF-8 without a NUL: the text past a NUL would be cut
 * off unseen, and bytes that are not UTF-8 would be stored as they are and
 * make every JSON written from them invalid.  0, or -1 with an error at the
 * first bad byte. */
static int csv_text_check(const char *path, const char *text, size_t len, KvxError *err)
{
    SrcPos pos = {path, 1, 1};
    for (size_t i = 0; i < len;) {
        int n = (unsigned char)text[i] < 0x80 ? 1 : json_utf8_len(text + i, len - i);
        if (n == 0 || text[i] == 0) {
            kvx_error_set(err, KVX_EINPUT, &pos, text[i] ? "invalid UTF-8 (expected text)"
                                                         : "a NUL byte (expected text)");
            return -1;
        }
        pos.line += text[i] == '\n', pos.col = text[i] == '\n' ? 1 : pos.col + n;
        i += (size_t)n;
    }
    return 0;
}

/* The reader of one CSV text: where it is, and its current line. */
typedef struct Csv {
    Arena *a;
    const char *path;
    const char *p;
    int line;
    long cells;         /* fields read so far, of all rows */
    KvxError *err;
} Csv;

/* One field at c->p into b, quoted ("" for a quote, newlines inside) or not;
 * c->p is left at the ',' or end of line after it.  A quote never closed is
 * an error at the quote; the field keeps what was read. */
static void csv_field(Csv *c, int col, StrBuf *b)
{
    if (*c->p == '"') {
        SrcPos open = {c->path, c->line, col};
        for (c->p++; *c->p && !(*c->p == '"' && c->p[1] != '"'); c->p++) {
            if (*c->p == '"')
                c->p++;
            if (*c->p == '\n')
                c->line++;
            sb_putc(b, *c->p);
        }
        if (*c->p == '"')
            c->p++;
        else
            kvx_error_set(c->err, KVX_EINPUT, &open, "a quote is never closed (expected '\"')");
    }
    while (*c->p && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
        sb_putc(b, *c->p++);
}

/* Field text, at 1-based column col, onto r (grown in a; *fcap its room). */
static void row_add(Arena *a, CsvRow *r, int *fcap, int col, const char *text)
{
    if (r->n == *fcap) {
        char **nf = arena_alloc(a, sizeof *nf * (size_t)*fcap * 2);
        int *nc = arena_alloc(a, sizeof *nc * (size_t)*fcap * 2);
        memcpy(nf, r->f, sizeof *nf * (size_t)*fcap);
        memcpy(nc, r->col, sizeof *nc * (size_t)*fcap);
        r->f = nf, r->col = nc, *fcap *= 2;
    }
    r->col[r->n] = col;
    r->f[r->n++] = arena_strdup(a, text);
}

/* The row that starts at c->p, through its line end. */
static CsvRow csv_row(Csv *c)
{
    CsvRow r = {0};
    int fcap = 8;
    r.f = arena_alloc(c->a, sizeof *r.f * (size_t)fcap);
    r.col = arena_alloc(c->a, sizeof *r.col * (size_t)fcap);
    r.line = c->line;
    const char *ls = c->p;
    for (;;) {
        StrBuf b;
        sb_init(&b);
        int col = (int)(c->p - ls) + 1;
        csv_field(c, col, &b);
        row_add(c->a, &r, &fcap, col, sb_str(&b));
        sb_free(&b);
        if (++c->cells > RESULTS_MAX_IMPORT_CELLS) {
            SrcPos pos = {c->path, c->line, col};
            kvx_error_set(c->err, KVX_EINPUT, &pos, "more than %d fields in all (expected at most"
                          " that many per import)", RESULTS_MAX_IMPORT_CELLS);
            break;
        }
        if (*c->p != ',')
            break;
        c->p++;
    }
    while (*c->p == '\r')
        c->p++;
    if (*c->p == '\n')
        c->p++, c->line++;
    return r;
}

/* Split text (len bytes) into rows of fields (RFC 4180 quoting; blank lines
 * are skipped, and so are lines starting with '#' before the header, and only
 * there: after it, '#' starts a value like any other).  A NUL byte, bytes
 * that are not UTF-8, a quote never closed, more than RESULTS_MAX_IMPORT_ROWS
 * rows below the header and more than RESULTS_MAX_IMPORT_CELLS fields (the
 * header's too) are errors at their position; the rows read so far are
 * returned in any case, for the caller to free. */
static CsvRow *csv_parse(Arena *a, const char *path, const char *text, size_t len, int *nrows,
                         KvxError *err)
{
    int cap = 16;
    CsvRow *rows = mem_alloc(sizeof *rows * (size_t)cap);
    *nrows = 0;
    if (csv_text_check(path, text, len, err))
        return rows;
    Csv c = {a, path, text, 1, 0, err};
    while (*c.p) {
        if (*c.p == '\n' || (*c.p == '#' && *nrows == 0) || (*c.p == '\r' && c.p[1] == '\n')) {
            while (*c.p && *c.p != '\n')
                c.p++;
            if (*c.p)
                c.p++;
            c.line++;
            continue;
        }
        CsvRow r = csv_row(&c);
        if (*nrows == cap)
            rows = mem_realloc(rows, sizeof *rows * (size_t)(cap *= 2));
        rows[(*nrows)++] = r;
        if (*nrows - 1 > RESULTS_MAX_IMPORT_ROWS) {     /* the header is not a row */
            SrcPos pos = {path, r.line, 1};
            kvx_error_set(err, KVX_EINPUT, &pos, "more than %d rows (expected at most that many"
                          " per import)", RESULTS_MAX_IMPORT_ROWS);
        }
        if (err->code)
            break;
    }
    return rows;
}

static int is_ident(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (s++; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* A whole field that is a finite decimal number (not "inf", "nan", hex, or
 * 1e400, which strtod makes Inf). */
static int parse_number(const char *s, double *d)
{
    if (!*s || strpbrk(s, "xXnNiI"))
        return 0;
    char *end;
    *d = strtod(s, &end);
    return *end == 0 && isfinite(*d);
}

/* Rows whose keys (or whose field f) are equal, for the duplicate checks. */
typedef struct RowKey { const CaseRow *cases; const CsvRow *rows; int f; const char *s; } RowKey;

static int same_key(int stored, const void *ctx)
{
    const RowKey *k = ctx;
    return strcmp(k->cases[stored].key, k->s) == 0;
}

static int same_field(int stored, const void *ctx)
{
    const RowKey *k = ctx;
    return strcmp(k->rows[stored].f[k->f], k->s) == 0;
}

static int same_column(int stored, const void *ctx)
{
    const RowKey *k = ctx;
    return strcmp(k->rows[0].f[stored], k->s) == 0;
}

static void json_scalar(StrBuf *b, const char *s)
{
    double d;
    char buf[40];
    if (parse_number(s, &d)) {
        num_write_double(buf, sizeof buf, d, NUM_G15);
        sb_puts(b, buf);
        return;
    }
    json_put_str(b, s, JSON_BYTES);
}

/* What the stages of an import share. */
typedef struct Import {
    Arena *a;
    const char *csv_path;
    const ImportOpts *o;
    const char *spec;
    CsvRow *rows;
    int nrows;
    int *which;                 /* per header column: import_cols index, NIMPORT (status), -1 (axis) */
    int ax0, nax;               /* axis columns [ax0, nax), before the value columns */
    CaseRow *cases;             /* by row (row 0, the header, unused) */
    HashIdx keys;
    HashIdx cols;               /* the header's names: a repeat found in linear time */
    size_t text;                /* bytes of the rows' axes and labels so far */
} Import;

static int header_rows(Import *im, KvxError *err);

/* kvx export's own CSV: `case_id, run_id, run_kind, run_name, spec_name`,
 * the axes (an axis written axis.NAME is NAME), then `label` and the other
 * columns, of which the value columns and status are read and the rest
 * (the run's environment, the variant's facts, ...) left.  1 when the header
 * is one (im->which, ax0 and nax set), 0 when not. */
static int header_of_export(Import *im)
{
    static const char *const head[] = {"case_id", "run_id", "run_kind", "run_name", "spec_name"};
    CsvRow *h = &im->rows[0];
    int label = -1;
    for (int i = 0; i < h->n && label < 0; i++)
        if (i < 5 ? strcmp(h->f[i], head[i]) != 0 : !strcmp(h->f[i], "label"))
            label = i < 5 ? h->n : i;
    if (label < 6 || label >= h->n)
        return 0;
    im->which = arena_alloc(im->a, sizeof *im->which * (size_t)h->n);
    im->ax0 = 5, im->nax = label;
    for (int i = 0; i < h->n; i++) {
        im->which[i] = i < 5 ? -2 : i < label ? -1 : -2;
        for (int k = 0; k < NIMPORT && i >= label; k++)
            if (!strcmp(h->f[i], import_cols[k].name))
                im->which[i] = k;
        if (i >= label && !strcmp(h->f[i], "status"))
            im->which[i] = NIMPORT;
        if (i >= 5 && i < label && !strncmp(h->f[i], "axis.", 5))
            h->f[i] += 5;
    }
    return 1;
}

/* Header: axis columns up to the first value column, value columns after
 * (or kvx export's, header_of_export).  0 or -1 with err. */
static int import_header(Import *im, KvxError *err)
{
    const CsvRow *h = &im->rows[0];
    if (header_of_export(im))
        return header_rows(im, err);
    im->nax = -1;
    im->which = arena_alloc(im->a, sizeof *im->which * (size_t)h->n);
    for (int i = 0; i < h->n; i++) {
        SrcPos pos = {im->csv_path, h->line, h->col[i]};
        int w = -1;
        for (int k = 0; k < NIMPORT; k++)
            if (!strcmp(h->f[i], import_cols[k].name))
                w = k;
        if (!strcmp(h->f[i], "status"))
            w = NIMPORT;
        im->which[i] = w;
        if (w < 0 && im->nax >= 0) {
            kvx_error_set(err, KVX_EINPUT, &pos,
                          "'%s' follows the value columns: axis columns come first, then"
                          " values (median_ms, min_ms, mean_ms, noise, gbs, ..., status)", h->f[i]);
            return -1;
        }
        if (w >= 0 && im->nax < 0)
            im->nax = i;
        const char *sep = h->n == 1 ? strpbrk(h->f[i], ";\t") : NULL;
        if (w < 0 && sep) {
            kvx_error_set(err, KVX_EINPUT, &pos, "the header is one field holding %s: kvx reads"
                          " comma-separated values (write the file with ',' as the separator)",
                          *sep == ';' ? "';'" : "tabs");
            return -1;
        }
        if (w < 0 && !is_ident(h->f[i])) {
            kvx_error_set(err, KVX_EINPUT, &pos, "axis name '%s' is not an identifier", h->f[i]);
            return -1;
        }
        if (hidx_add(&im->cols, hidx_hash(h->f[i], strlen(h->f[i])), i, same_column,
                     &(RowKey){im->cases, im->rows, 0, h->f[i]}) >= 0) {
            kvx_error_set(err, KVX_EINPUT, &pos, "column '%s' appears twice", h->f[i]);
            return -1;
        }
    }
    if (im->nax <= 0) {
        SrcPos pos = {im->csv_path, h->line, 1};
        kvx_error_set(err, KVX_EINPUT, &pos, im->nax < 0 ? "no value column (median_ms, ...)"
                                                         : "no axis column before the values");
        return -1;
    }
    return header_rows(im, err);
}

/* Every row has the header's field count.  0 or -1 with err. */
static int header_rows(Import *im, KvxError *err)
{
    const CsvRow *h = &im->rows[0];
    /* Every row's field count first: the checks below index any field. */
    for (int r = 1; r < im->nrows; r++)
        if (im->rows[r].n != h->n) {
            SrcPos pos = {im->csv_path, im->rows[r].line, 1};
            kvx_error_set(err, KVX_EINPUT, &pos, "%d fields, the header has %d", im->rows[r].n, h->n);
            return -1;
        }
    return 0;
}

/* The values of row r into its case.  0 or -1 with err at the field. */
static int import_values(Import *im, int r, KvxError *err)
{
    const CsvRow *h = &im->rows[0], *row = &im->rows[r];
    CaseRow *c = &im->cases[r];
    for (int i = im->nax; i < h->n; i++) {
        SrcPos pos = {im->csv_path, row->line, row->col[i]};
        double d;
        if (im->which[i] == -2)
            continue;
        if (im->which[i] == NIMPORT) {
            if (results_status_rank(row->f[i]) >= CASE_STATUS_COUNT) {
                kvx_error_set(err, KVX_EINPUT, &pos, "unknown status '%s'", row->f[i]);
                return -1;
            }
            c->status = row->f[i];
        } else if (*row->f[i] && !parse_number(row->f[i], &d)) {
            kvx_error_set(err, KVX_EINPUT, &pos, "%s: '%s' is not a number", h->f[i], row->f[i]);
            return -1;
        } else if (*row->f[i]) {
            *(double *)((char *)c + import_cols[im->which[i]].off) = d;
        }
    }
    return 0;
}

/* Row r as a case: its axes, label, values and key (a repeated key is an
 * error).  0 or -1 with err. */
static int import_row(Import *im, int r, StrBuf *axes, StrBuf *label, KvxError *err)
{
    const CsvRow *h = &im->rows[0], *row = &im->rows[r];
    CaseRow *c = &im->cases[r];
    store_case_init(c);
    sb_reset(axes), sb_reset(label);
    sb_putc(axes, '{');
    for (int i = im->ax0; i < im->nax; i++) {
        sb_printf(axes, "%s\"%s\":", i > im->ax0 ? "," : "", h->f[i]);
        json_scalar(axes, row->f[i]);
        sb_printf(label, "%s%s=%s", i > im->ax0 ? " " : "", h->f[i], row->f[i]);
    }
    sb_putc(axes, '}');
    /* Each row repeats the axis names: 100 names of 1 MB were 200 MB a row. */
    im->text += axes->len + label->len;
    if (im->text > RESULTS_MAX_IMPORT_TEXT) {
        SrcPos pos = {im->csv_path, row->line, 1};
        kvx_error_set(err, KVX_EINPUT, &pos, "the rows' axes and labels pass %u bytes (expected at"
                      " most that many per import; each row repeats the axis names)",
                      RESULTS_MAX_IMPORT_TEXT);
        return -1;
    }
    c->axes_json = arena_strdup(im->a, sb_str(axes));
    c->label = arena_strdup(im->a, sb_str(label));
    c->spec_name = im->spec;
    c->status = "ok";
    c->device_uuid = arena_printf(im->a, "ref:%s", im->o->name);
    if (import_values(im, r, err))
        return -1;
    const char *parts[] = {"reference", im->o->name, im->spec, c->axes_json, NULL};
    char key[65];
    store_case_key(parts, key);
    c->key = arena_strdup(im->a, key);
    int j = hidx_add(&im->keys, hidx_hash(key, 64), r, same_key, &(RowKey){im->cases, im->rows, 0, c->key});
    if (j < 0)
        return 0;
    SrcPos pos = {im->csv_path, row->line, 1};
    kvx_error_set(err, KVX_EINPUT, &pos, "repeats the axis values of line %d", im->rows[j].line);
    return -1;
}

/* The declared order of axis values: the order of the file. */
static const char *import_decl(Import *im)
{
    StrBuf decl;
    sb_init(&decl);
    sb_putc(&decl, '{');
    for (int i = im->ax0; i < im->nax; i++) {
        sb_printf(&decl, "%s\"%s\":[", i > im->ax0 ? "," : "", im->rows[0].f[i]);
        int nv = 0;
        HashIdx seen = {0};
        for (int r = 1; r < im->nrows; r++) {
            const char *f = im->rows[r].f[i];
            if (hidx_add(&seen, hidx_hash(f, strlen(f)), r, same_field,
                         &(RowKey){im->cases, im->rows, i, f}) < 0) {
                sb_puts(&decl, nv++ ? "," : "");
                json_scalar(&decl, f);
            }
        }
        hidx_free(&seen);
        sb_putc(&decl, ']');
    }
    sb_putc(&decl, '}');
    const char *out = arena_strdup(im->a, sb_str(&decl));
    sb_free(&decl);
    return out;
}

/* The name's check, the reference run and all its cases, in one transaction:
 * an import killed half-way leaves nothing (a run row committed alone once
 * stayed with 0 cases and made the retry "already imported"), and of two
 * imports of one name, one is refused.  0 or -1. */
static int import_store(Store *st, Import *im, KvxError *err)
{
    int64_t run_id, other;
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    RunEnv env = {.kind = "reference", .ref_name = im->o->name, .spec_name = im->spec,
                  .spec_path = im->csv_path, .gpu_name = im->o->gpu,
                  .gpu_uuid = arena_printf(im->a, "ref:%s", im->o->name), .kvx_version = version_text(),
                  .command = im->o->source, .axes_json = import_decl(im), .started_at = when, .peak_gbs = 0};
    /* One transaction for all rows, too: a commit per row made 200,000 rows
     * take minutes.  store_put_cases joins it. */
    if (store_begin(st, err))
        return -1;
    int found = store_ref_run(st, im->o->name, &other, err);
    if (found > 0)
        kvx_error_set(err, KVX_EINPUT, NULL, "a reference named '%s' is already imported (run %lld);"
                      " choose another --name", im->o->name, (long long)other);
    if (found || store_begin_run(st, &env, &run_id, err) ||
        store_put_cases(st, run_id, 0, im->cases + 1, im->nrows - 1, err) || store_commit(st, err)) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

/* nvbench JSON (results_nvbench.c) in place of text as the CSV it maps to;
 * the GPU its first state names when --gpu gave none.  0 or -1 with err. */
static int import_nvbench(Store *st, Import *im, char **text, size_t *len, ImportOpts *local, KvxError *err)
{
    if (!results_nvbench_is(*text))
        return 0;
    const char *gpu = NULL;
    char *csv = results_nvbench_csv(st, *text, im->csv_path, im->a, &gpu, err);
    if (!csv)
        return -1;
    free(*text);
    *text = csv;
    *len = strlen(csv);
    if (!local->gpu)
        local->gpu = gpu;
    if (!local->source)
        local->source = "nvbench JSON";
    return 0;
}

/* A Kernel Tuner cache file (results_kt.c) in place of text as the CSV it
 * maps to, with its device as the GPU when --gpu gave none; other JSON than
 * nvbench's or Kernel Tuner's is refused here (read as a CSV, its header
 * was an "axis name '{'").  0 or -1 with err. */
static int import_kt(Store *st, Import *im, char **text, size_t *len, ImportOpts *local, KvxError *err)
{
    const char *p = *text + strspn(*text, " \t\r\n");
    if (results_nvbench_is(*text) || (*p != '{' && *p != '['))
        return 0;
    if (!results_kt_is(*text)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: JSON that is neither nvbench's result (benchmarks) nor a"
                      " Kernel Tuner cache file (tune_params_keys, cache); kvx import reads those or a CSV",
                      im->csv_path);
        return -1;
    }
    const char *gpu = NULL;
    char *csv = results_kt_csv(st, *text, im->csv_path, im->a, &gpu, local->left, err);
    if (!csv)
        return -1;
    free(*text);
    *text = csv;
    *len = strlen(csv);
    if (!local->gpu)
        local->gpu = gpu;
    if (!local->source)
        local->source = "Kernel Tuner cache";
    return 0;
}

int results_import(Store *st, const char *csv_path, const ImportOpts *o, int *nstored,
                   KvxError *err)
{
    ImportOpts local = *o;
    Import im = {.a = arena_new(), .csv_path = csv_path, .o = &local, .spec = o->spec ? o->spec : o->name};
    size_t len;
    char *text = file_read_max(csv_path, RESULTS_MAX_IMPORT_BYTES, &len);
    int rc = -1;
    *nstored = 0;
    if (!text) {
        char why[64];
        kvx_error_set(err, KVX_EINPUT, NULL, "cannot read '%s': %s", csv_path,
                      file_read_why(errno, RESULTS_MAX_IMPORT_BYTES, why, sizeof why));
        goto done;
    }
    if (!o->name || !is_ident(o->name)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "import needs --name NAME ([A-Za-z_][A-Za-z0-9_]*), got '%s'",
                      o->name ? o->name : "");
        goto done;
    }
    if (import_kt(st, &im, &text, &len, &local, err) || import_nvbench(st, &im, &text, &len, &local, err))
        goto done;
    /* A UTF-8 byte order mark, which spreadsheets write, is not the first
     * column's name. */
    size_t bom = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    im.rows = csv_parse(im.a, csv_path, text + bom, len - bom, &im.nrows, err);
    if (err->code)
        goto done;
    if (im.nrows < 2) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: expected a header and at least one row", csv_path);
        goto done;
    }
    if (import_header(&im, err))
        goto done;
    /* Check every row and build its case before storing anything. */
    im.cases = arena_alloc(im.a, sizeof *im.cases * (size_t)im.nrows);
    StrBuf axes, label;
    sb_init(&axes), sb_init(&label);
    for (int r = 1; r < im.nrows && !err->code; r++)
        import_row(&im, r, &axes, &label, err);
    sb_free(&axes), sb_free(&label);
    if (err->code || import_store(st, &im, err))
        goto done;
    *nstored = im.nrows - 1;
    rc = 0;
done:
    hidx_free(&im.keys);
    hidx_free(&im.cols);
    free(im.rows);
    free(text);
    arena_free(im.a);
    return rc;
}
