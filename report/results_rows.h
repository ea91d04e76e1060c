/* results_rows: one table of named columns written as Markdown, CSV or JSON
 * (an array of objects, one a row): what the verbs that list things write
 * with --format md|csv|json (plan, compile, inspect, doctor; `table
 * --failures`), as the result verbs write their tables.
 *
 * A cell is text.  In JSON a cell that reads whole as a finite decimal
 * number goes out as a number, NULL as null, any other as a string; a
 * column marked JSON (results_rows_json) nests its text as it is: valid
 * JSON its caller made (inspect's facts).
 * In CSV, NULL is empty and fields are quoted as RFC 4180 says; in
 * Markdown a cell is one line and a '|' is escaped. */
#ifndef KVX_RESULTS_ROWS_H
#define KVX_RESULTS_ROWS_H

#include "results.h"

#include <stdio.h>

typedef struct ResultsRows ResultsRows;

/* A table of ncols columns named cols (copied) on out, in format f (md,
 * csv or json). */
ResultsRows *results_rows_open(FILE *out, ResultsFormat f, const char *const *cols, int ncols);
/* Column i holds JSON text. */
void results_rows_json(ResultsRows *t, int i);
/* One row: cells[0 .. ncols). */
void results_rows_add(ResultsRows *t, const char *const *cells);
/* The table's end (JSON's ']'; an empty table is its header, or []). */
void results_rows_close(ResultsRows *t);     /* accepts NULL */

#endif
