/* run_counters: `kvx run --counters`: after the timed run, the cases that ran
 * once more under Nsight Compute, their counters stored beside their times
 * (counters.h says how the pass works). */
#include "run_internal.h"
#include "counters.h"

#include "core/json.h"
#include "core/num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The report's path with --keep-ncu-rep: beside the database, named by it
 * and the run, "results/kvx-run12.ncu-rep" for results/kvx.db; NULL without. */
static char *rep_path(const char *db, int64_t run_id, int keep)
{
    if (!keep)
        return NULL;
    size_t len = strlen(db);
    if (len > 3 && !strcmp(db + len - 3, ".db"))
        len -= 3;
    size_t n = len + 48;
    char *p = mem_alloc(n);
    snprintf(p, n, "%.*s-run%lld.ncu-rep", (int)len, db, (long long)run_id);
    return p;
}

/* Case i's values as counters_json: {"NAME":value|null,...}; its fixed
 * columns into fixed. */
static void case_json(const CounterList *l, const double *v, StrBuf *b, double fixed[COUNTER_COUNT])
{
    for (int k = 0; k < COUNTER_COUNT; k++)
        fixed[k] = NAN;
    sb_puts(b, "{");
    for (int k = 0; k < l->n; k++) {
        char num[40] = "null";
        if (isfinite(v[k]))
            num_write_double(num, sizeof num, v[k], NUM_SHORTEST);
        sb_puts(b, k ? "," : "");
        json_put_str(b, l->name[k], JSON_TEXT);
        sb_printf(b, ":%s", num);
        int f = counters_fixed(l->name[k]);
        if (f >= 0)
            fixed[f] = v[k];
    }
    sb_puts(b, "}");
}

/* Store the got cases' values.  0, or 3 after a store error. */
static int store_all(Store *st, int64_t run_id, const CounterList *l, const double *vals, int got,
                     const RunCase *cases, const int *at)
{
    for (int i = 0; i < got; i++) {
        StrBuf b;
        sb_init(&b);
        double fixed[COUNTER_COUNT];
        case_json(l, vals + (size_t)i * (size_t)l->n, &b, fixed);
        KvxError se = {0};
        int rc = store_put_counters(st, run_id, cases[at[i]].key, sb_str(&b), fixed, &se);
        sb_free(&b);
        if (rc != 0) {
            kvx_error_print(&se, stderr);
            kvx_error_clear(&se);
            return 3;
        }
    }
    return 0;
}

int run_counters(Store *st, int64_t run_id, const RunCase *cases, int n, const RunOpts *o, const char *db,
                 int device)
{
    CounterList *l = mem_alloc(sizeof *l);
    char why[256];
    int parsed = counters_list_parse(o->counters, l, why, sizeof why);
    KVX_ASSERT(parsed == 0); /* the CLI checked it */
    CaseDesc *ran = mem_alloc(sizeof *ran * (size_t)(n ? n : 1));
    int *at = mem_alloc(sizeof *at * (size_t)(n ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (cases[i].ran) {
            ran[m] = *cases[i].desc;
            ran[m].nchecks = 0;     /* checks' strings point into the desc: the pass needs none */
            at[m++] = i;
        }
    double *vals = mem_alloc(sizeof *vals * (size_t)(m ? m : 1) * (size_t)l->n);
    char *rep = rep_path(db, run_id, o->keep_ncu_rep);
    double t0 = wall_now_ms();
    KvxError err = {0};
    int got = m ? counters_collect(ran, m, device, l, rep, vals, &err) : 0;
    int rc = store_all(st, run_id, l, vals, got, cases, at);
    if (got > 0) {
        StrBuf names;
        sb_init(&names);
        counters_list_join(l, &names);
        printf("counters %d of %d cases profiled with ncu in %.1f s (%s)\n", got, m, (wall_now_ms() - t0) / 1000,
               sb_str(&names));
        sb_free(&names);
    }
    if (got > 0 && rep)
        printf("counters ncu's report kept: %s\n", rep);
    if (err.code)
        printf("counters %s\n", err.msg);
    kvx_error_clear(&err);
    free(rep);
    free(vals);
    free(at);
    free(ran);
    free(l);
    return rc;
}
