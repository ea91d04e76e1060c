/* results_table.h: the pivot of a case set that results_table.c builds for
 * `kvx table`, and what results_compare.c needs of it to lay two side by
 * side.  Internal to the results verbs. */
#ifndef KVX_RESULTS_TABLE_H
#define KVX_RESULTS_TABLE_H

#include "results_core.h"

#include <stdio.h>

typedef struct Cell {
    int n;              /* cases whose value went into v */
    int nfail;          /* cases shown by their status */
    int ncases;
    double v;           /* median; NaN when n == 0 */
    double noise;       /* median of the cases' noise; NaN when unknown */
    const char *text;   /* when n == 0: a status, "n/a", or a text fact */
    const char *vstatus; /* --failed-values: no case passed and v is over failed
                            cases' stored values; their status */
} Cell;

typedef struct Pivot {
    int nra, nca;
    int ra[RESULTS_MAX_AXES], ca[RESULTS_MAX_AXES];
    int nr, nc;
    int *rkeys, *ckeys;  /* nr*nra and nc*nca value indices */
    Cell *cells;         /* nr*nc */
    int multi, mixed, any_fail;
    int any_fvalue;      /* some cell has a vstatus */
} Pivot;

/* Load sel's cases, pick o's axes and pivot into p.  With neither --rows
 * nor --cols the first stored axis goes across and the second down.  fb: a
 * baseline to borrow when none is given or stored (results_caseset_load).  0, 1
 * when no case matches (err says so), or -1 with err; cs and p are the
 * caller's to free either way. */
int results_table_build(Store *db, const ResultsSel *sel, const TableOpts *o,
                        const BaseValue *fb, int nfb, CaseSet *cs, Pivot *p, KvxError *err);
void results_table_pivot_free(Pivot *p);

/* The texts of key's values of axes[0..n), joined by sep, in b. */
const char *results_table_key_text(const CaseSet *cs, const int *axes, int n, const int *key,
                                   const char *sep, StrBuf *b);
/* A value with its unit, scaled for reading ("3.41 ms"; with ratio "1.2x"). */
void results_table_fmt_value(char *buf, size_t n, double v, ValueUnit u, int ratio);
/* A cell as Markdown shows it: "-", its value (with (n), (status) or !), or
 * its text. */
void results_table_md_cell(const CaseSet *cs, const Cell *c, int ratio, StrBuf *b);
/* A number for CSV and JSON: 15 significant digits. */
void results_table_num(FILE *out, double v);
/* An axis value in JSON: a number, a boolean or a string. */
void results_table_json_axis_value(FILE *out, const RVal *v);

#endif
