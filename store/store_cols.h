/* store_cols: the stored columns, declared once.  Each table's columns, in
 * their order in the file, with their SQL type, the schema version that added
 * them, where the insert takes them from (a field of RunEnv, VariantRow or
 * CaseRow, by name) and what they mean.  From this one table come CREATE TABLE,
 * the migrations of older files, the inserts, `kvx export`'s columns and the
 * tables of docs/results-schema.md (tests/test_store.c holds the page to it). */
#ifndef KVX_STORE_COLS_H
#define KVX_STORE_COLS_H

#include "core/util.h"

/* How an insert binds a column from its row struct (store.h's). */
typedef enum StoreColBind {
    SCOL_NONE,      /* not from the row: a key the store fills, or a later update */
    SCOL_TEXT,      /* const char *; NULL is NULL (or the column's dflt) */
    SCOL_REAL,      /* double; NaN is NULL */
    SCOL_INT,       /* int */
    SCOL_I64,       /* int64_t */
    SCOL_MHZ,       /* int; 0 (unknown) is NULL */
    SCOL_TRI,       /* int 1 or 0; -1 (unknown) is NULL */
} StoreColBind;

typedef struct StoreCol {
    const char *name;
    const char *type;         /* INTEGER, REAL, TEXT */
    const char *constraint;   /* after the type in CREATE TABLE; "" for none */
    int since;                /* schema version that added it; 1: the first layout */
    StoreColBind bind;
    size_t off;               /* the field's offset in the row struct (bind != NONE) */
    int json;                 /* holds JSON text: `kvx export --format json` nests it */
    const char *meaning;      /* docs/results-schema.md's words */
    const char *dflt;         /* SCOL_TEXT: stored for a NULL field; NULL: NULL */
} StoreCol;

typedef struct StoreTable {
    const char *name;
    const StoreCol *cols;
    int ncols;
    const char *tail;         /* table constraints after the columns, or NULL */
} StoreTable;

enum { STORE_T_RUNS, STORE_T_VARIANTS, STORE_T_CASES, STORE_NTABLES };
extern const StoreTable store_tables[STORE_NTABLES];

/* The column of t named name, or NULL. */
const StoreCol *store_col_find(const StoreTable *t, const char *name);
/* "CREATE TABLE IF NOT EXISTS t (...);" appended to b. */
void store_cols_create_sql(const StoreTable *t, StrBuf *b);
/* The table of t's columns as docs/results-schema.md writes it: a header and
 * one line "| `name` | TYPE | meaning |" per column, appended to b. */
void store_cols_markdown(const StoreTable *t, StrBuf *b);

#endif
