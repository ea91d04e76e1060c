/* store_cases: the queries a results table is built from (report/results.c:
 * `kvx table`, `compare`, `report`): which cases (a selection), their axis
 * values, their runs' declared axis order and stored baseline, and one value
 * of each case with whether it matches a condition.  A reader asks by these
 * typed queries; the SQL is built here, every value a bound parameter, never
 * a reader's text.  Each query returns a StoreRows cursor (store.h) whose
 * columns are listed at it, or NULL with err. */
#ifndef KVX_STORE_CASES_H
#define KVX_STORE_CASES_H

#include "store.h"

/* Which cases a query reads. */
typedef struct StoreSel {
    const char *spec;          /* the spec name (the queries need it) */
    int64_t run_id;            /* 0: every run */
    const char *ref_name;      /* non-NULL: only the imported reference of that name */
    int with_refs;             /* with run_id: the imported references' cases too (a
                                  report's beside: columns are a library's, imported) */
} StoreSel;

/* A condition over a case (`--where`, a report table's where:), checked by
 * its builder (report/results_where.c: names, types, positions). */
typedef enum {
    STORE_COND_AXIS,      /* an axis's value at the case (axis) */
    STORE_COND_STATUS,    /* the case's status */
    STORE_COND_VALUE,     /* a value name of core/values.h (value: a SpecValue) */
    STORE_COND_LIT,       /* a number or a string (lit) */
    STORE_COND_NOT,       /* !a */
    STORE_COND_AND,       /* a && b */
    STORE_COND_OR,        /* a || b */
    STORE_COND_CMP,       /* a OP b, op one of OP_EQ, OP_NE, '<', OP_LE, '>', OP_GE (core/expr.h) */
} StoreCondKind;

typedef struct StoreCond {
    StoreCondKind kind;
    int op;
    const char *axis;
    int value;
    Value lit;
    const struct StoreCond *a, *b;
} StoreCond;

/* The value a table shows of each case. */
typedef enum {
    STORE_SHOW_VALUE,     /* a value name (value: a SpecValue) */
    STORE_SHOW_INSPECT,   /* a key of variants.inspect_json (key, one of core/values.h's INSPECT_KEYS) */
    STORE_SHOW_COUNTER,   /* a metric of cases.counters_json (key, values_counter_valid) */
    STORE_SHOW_DETAIL,    /* the case's stored detail, as text */
} StoreShowKind;

typedef struct StoreShow {
    StoreShowKind kind;
    int value;
    const char *key;
} StoreShow;

/* The declared axis values (runs.axes_json) of the runs that hold selected
 * cases, by run, axis order, value order: (axis, JSON type, value). */
StoreRows *store_cases_declared(Store *db, const StoreSel *sel, KvxError *err);
/* Every axis value of every selected case, by case id and axis order: (case
 * id, axis, JSON type, value). */
StoreRows *store_cases_axes(Store *db, const StoreSel *sel, KvxError *err);
/* The stored baselines (runs.baseline_json) of the runs that hold selected
 * cases, by run and key order: (axis, JSON type, value, run id). */
StoreRows *store_cases_baseline(Store *db, const StoreSel *sel, KvxError *err);
/* Each selected case by id: (id, run id, status, the value show names, noise,
 * 1 or 0: whether it matches where; 1 without one). */
StoreRows *store_cases_values(Store *db, const StoreSel *sel, const StoreShow *show,
                              const StoreCond *where, KvxError *err);

#endif
