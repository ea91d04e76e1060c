/* results_rows: a table of named columns as Markdown, CSV or JSON
 * (results_rows.h). */
#include "results_rows.h"
#include "core/json.h"
#include "core/num.h"

#include <stdlib.h>
#include <string.h>

struct ResultsRows {
    FILE *out;
    ResultsFormat f;
    char **cols;
    unsigned char *json;
    int ncols, nrows;
};

/* A Markdown cell: one line (newlines and tabs escaped), '|' escaped. */
static void md_cell(FILE *out, const char *s)
{
    StrBuf b;
    sb_init(&b);
    sb_put_escaped(&b, s ? s : "");
    for (const char *p = sb_str(&b); *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    sb_free(&b);
}

ResultsRows *results_rows_open(FILE *out, ResultsFormat f, const char *const *cols, int ncols)
{
    ResultsRows *t = mem_calloc(1, sizeof *t);
    t->out = out, t->f = f, t->ncols = ncols;
    t->cols = mem_alloc(sizeof *t->cols * (size_t)(ncols ? ncols : 1));
    t->json = mem_calloc((size_t)(ncols ? ncols : 1), 1);
    for (int i = 0; i < ncols; i++)
        t->cols[i] = mem_strdup(cols[i]);
    if (f == RESULTS_JSON) {
        fputc('[', out);
    } else if (f == RESULTS_CSV) {
        for (int i = 0; i < ncols; i++) {
            fputs(i ? "," : "", out);
            results_csv_field(out, cols[i]);
        }
        fputc('\n', out);
    } else {
        fputc('|', out);
        for (int i = 0; i < ncols; i++) {
            fputc(' ', out);
            md_cell(out, cols[i]);
            fputs(" |", out);
        }
        fputs("\n|", out);
        for (int i = 0; i < ncols; i++)
            fputs(" --- |", out);
        fputc('\n', out);
    }
    return t;
}

void results_rows_json(ResultsRows *t, int i)
{
    t->json[i] = 1;
}

/* A finite decimal number, whole, in JSON's grammar (no leading zero, no
 * bare '.'). */
static int is_number(const char *s)
{
    double d;
    const char *digits = s + (*s == '-');
    size_t n = strlen(s);
    return num_read_double(s, &d) == 0 && !(digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9') &&
           digits[0] != '.' && n && s[n - 1] != '.' && !strstr(s, ".e") && !strstr(s, ".E");
}

static void json_row(ResultsRows *t, const char *const *cells)
{
    fputs(t->nrows ? ",\n{" : "\n{", t->out);
    for (int i = 0; i < t->ncols; i++) {
        fputs(i ? ", " : "", t->out);
        json_write_str(t->out, t->cols[i]);
        fputs(": ", t->out);
        const char *c = cells[i];
        if (!c)
            fputs("null", t->out);
        else if (t->json[i] || is_number(c))
            fputs(c, t->out);
        else
            json_write_str(t->out, c);
    }
    fputc('}', t->out);
}

void results_rows_add(ResultsRows *t, const char *const *cells)
{
    if (t->f == RESULTS_JSON) {
        json_row(t, cells);
    } else if (t->f == RESULTS_CSV) {
        for (int i = 0; i < t->ncols; i++) {
            fputs(i ? "," : "", t->out);
            results_csv_field(t->out, cells[i]);
        }
        fputc('\n', t->out);
    } else {
        fputc('|', t->out);
        for (int i = 0; i < t->ncols; i++) {
            fputc(' ', t->out);
            md_cell(t->out, cells[i]);
            fputs(" |", t->out);
        }
        fputc('\n', t->out);
    }
    t->nrows++;
}

void results_rows_close(ResultsRows *t)
{
    if (!t)
        return;
    if (t->f == RESULTS_JSON)
        fputs(t->nrows ? "\n]\n" : "]\n", t->out);
    for (int i = 0; i < t->ncols; i++)
        free(t->cols[i]);
    free(t->cols);
    free(t->json);
    free(t);
}
