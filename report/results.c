/* results: the case set that `kvx table`, `compare`, `report` and `export`
 * read: the selected cases loaded with their axis values and one value each
 * (results_caseset_load: by the store's typed queries of
 * store/store_cases.h, --where checked into the store's condition by
 * results_where.c; the baseline resolved from the one given, stored or
 * borrowed), their axes (results_caseset_axis, results_caseset_axis_list),
 * freed by results_caseset_free; and what the read verbs share: the
 * statuses' order (results_status_rank), the output formats
 * (results_format_parse), a comma list (results_split), the spec a database
 * holds (results_resolve_spec), a CSV field (results_csv_field) and a
 * median (results_median).  The pivot is results_table.c's; results_core.h
 * is what they share.  No SQL is written here. */
#include "results_core.h"
#include "host/case.h"
#include "gen/spec.h"
#include "core/values.h"
#include "store/store_search.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const results_status_names[] = {
#define X(n, d) #n,
    CASE_STATUSES(X)
#undef X
};
#define NSTATUS CASE_STATUS_COUNT

int results_status_rank(const char *s)
{
    for (int i = 0; i < NSTATUS; i++)
        if (!strcmp(s, results_status_names[i]))
            return i;
    return NSTATUS;
}

/* ---- small helpers --------------------------------------------------------- */

int results_format_parse(const char *s, ResultsFormat *f)
{
    static const char *const names[] = {"md", "csv", "json"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *f = (ResultsFormat)i;
            return 0;
        }
    return -1;
}

const char **results_split(Arena *a, const char *s, int *n)
{
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    const char **out = arena_alloc(a, sizeof *out * (size_t)cap);
    *n = 0;
    for (const char *p = s;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && (*p == ' ')) p++, len--;
        while (len && p[len - 1] == ' ') len--;
        if (len)
            out[(*n)++] = arena_strndup(a, p, len);
        if (!e)
            break;
        p = e + 1;
    }
    return out;
}

int results_resolve_spec(Store *db, ResultsSel *sel, Arena *a, KvxError *err)
{
    const char **all;
    int nall;
    if (store_spec_names(db, sel->run_id, sel->ref_name, a, &all, &nall, err))
        return -1;
    StrBuf names;
    sb_init(&names);
    int n = 0, found = 0;
    const char *only = NULL;
    for (int i = 0; i < nall; i++) {
        found |= sel->spec && !strcmp(sel->spec, all[i]);
        sb_printf(&names, "%s%s", n++ ? ", " : "", all[i]);
        if (n == 1)
            only = all[i];
    }
    int rc = -1;
    if (n == 0)
        kvx_error_set(err, KVX_EINPUT, NULL, "no cases stored%s",
                      sel->run_id || sel->ref_name ? " for that run or reference" : "");
    else if (sel->spec && !found)
        kvx_error_set(err, KVX_EINPUT, NULL, "no cases of spec '%s' (stored: %s)", sel->spec,
                      sb_str(&names));
    else if (!sel->spec && n > 1)
        kvx_error_set(err, KVX_EINPUT, NULL, "several specs are stored; pick one with --spec (%s)",
                      sb_str(&names));
    else
        rc = 0;
    if (!rc && !sel->spec)
        sel->spec = only;
    sb_free(&names);
    return rc;
}

/* s in double quotes, each '"' doubled (RFC 4180). */
static void csv_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void results_csv_field(FILE *out, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\n\r"))
        csv_quoted(out, s);
    else
        fputs(s, out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double results_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the loaded case set --------------------------------------------------- */





void results_caseset_free(CaseSet *cs)
{
    if (!cs)
        return;
    for (int i = 0; i < cs->naxes; i++)
        free(cs->axes[i].vals);
    free(cs->recs);
    arena_free(cs->arena);
}

int results_caseset_axis(const CaseSet *cs, const char *name)
{
    for (int i = 0; i < cs->naxes; i++)
        if (!strcmp(cs->axes[i].name, name))
            return i;
    return -1;
}

const char *results_caseset_axis_list(const CaseSet *cs)
{
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < cs->naxes; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", cs->axes[i].name);
    const char *s = arena_strdup(cs->arena, sb_str(&b));
    sb_free(&b);
    return s;
}

/* Find or add the value in column `col` of a json_each row (type, atom). */
static int value_intern(CaseSet *cs, AxisInfo *ax, StoreRows *q, int tcol, int acol, int add)
{
    const char *type = store_rows_text(q, tcol);
    RVal r = {0};
    char buf[40];
    r.decl = -1;
    if (type && (!strcmp(type, "integer") || !strcmp(type, "real"))) {
        r.is_num = 1;
        r.num = store_rows_double(q, acol);
        if (!strcmp(type, "integer"))
            snprintf(buf, sizeof buf, "%lld", (long long)store_rows_int(q, acol));
        else
            num_write_double(buf, sizeof buf, r.num, NUM_G15);
        r.text = buf;
    } else if (type && (!strcmp(type, "true") || !strcmp(type, "false"))) {
        r.is_num = 1;
        r.num = type[0] == 't';
        r.text = type;
    } else {
        const char *t = store_rows_text(q, acol);
        r.text = t ? t : "null";
    }
    for (int i = 0; i < ax->nvals; i++) {
        const RVal *o = &ax->vals[i];
        if (o->is_num == r.is_num && (r.is_num ? o->num == r.num : !strcmp(o->text, r.text)))
            return i;
    }
    if (!add)
        return -1;
    if (ax->nvals == ax->cap) {
        ax->cap = ax->cap ? 2 * ax->cap : 8;
        ax->vals = mem_realloc(ax->vals, sizeof *ax->vals * (size_t)ax->cap);
    }
    r.text = arena_strdup(cs->arena, r.text);
    ax->all_num &= r.is_num;
    ax->vals[ax->nvals] = r;
    return ax->nvals++;
}

static const AxisInfo *rank_axis; /* qsort has no context argument */
static int cmp_rank(const void *a, const void *b)
{
    const RVal *x = &rank_axis->vals[*(const int *)a], *y = &rank_axis->vals[*(const int *)b];
    if (rank_axis->all_num)
        return (x->num > y->num) - (x->num < y->num);
    if (x->decl >= 0 && y->decl >= 0)
        return x->decl - y->decl;
    if ((x->decl >= 0) != (y->decl >= 0))
        return x->decl >= 0 ? -1 : 1;
    return *(const int *)a - *(const int *)b;   /* first appearance */
}

/* Declared value order (runs.axes_json) and then display ranks. */
static int rank_values(Store *db, CaseSet *cs, KvxError *err)
{
    StoreRows *st = store_cases_declared(db, &cs->sel, err);
    if (!st)
        return -1;
    int next[RESULTS_MAX_AXES] = {0};
    while (store_rows_next(st, "reading axes", err) > 0) {
        int a = results_caseset_axis(cs, store_rows_text(st, 0));
        if (a < 0)
            continue;
        int vi = value_intern(cs, &cs->axes[a], st, 1, 2, 0);
        if (vi >= 0 && cs->axes[a].vals[vi].decl < 0)
            cs->axes[a].vals[vi].decl = next[a]++;
    }
    store_rows_close(st);
    for (int a = 0; a < cs->naxes; a++) {
        AxisInfo *ax = &cs->axes[a];
        int *idx = mem_alloc(sizeof *idx * (size_t)(ax->nvals + 1));
        for (int i = 0; i < ax->nvals; i++)
            idx[i] = i;
        rank_axis = ax;
        qsort(idx, (size_t)ax->nvals, sizeof *idx, cmp_rank);
        for (int i = 0; i < ax->nvals; i++)
            ax->vals[idx[i]].rank = i;
        free(idx);
    }
    return 0;
}

typedef struct AxisHit { int64_t id; int axis, val; } AxisHit;

/* Every axis value of every selected case, in case order. */
static int load_axes(Store *db, CaseSet *cs, AxisHit **hits, int *nhits, KvxError *err)
{
    StoreRows *st = store_cases_axes(db, &cs->sel, err);
    if (!st)
        return -1;
    int cap = 0, rc;
    *hits = NULL;
    *nhits = 0;
    while ((rc = store_rows_next(st, "reading axes", err)) > 0) {
        const char *key = store_rows_text(st, 1);
        int a = results_caseset_axis(cs, key ? key : "");
        if (a < 0) {
            if (cs->naxes == RESULTS_MAX_AXES) {
                kvx_error_set(err, KVX_EINPUT, NULL, "more than %d axes stored", RESULTS_MAX_AXES);
                break;
            }
            a = cs->naxes++;
            cs->axes[a].name = arena_strdup(cs->arena, key ? key : "");
            cs->axes[a].all_num = 1;
        }
        if (*nhits == cap) {
            cap = cap ? 2 * cap : 256;
            *hits = mem_realloc(*hits, sizeof **hits * (size_t)cap);
        }
        AxisHit *h = &(*hits)[(*nhits)++];
        h->id = store_rows_int(st, 0);
        h->axis = a;
        h->val = value_intern(cs, &cs->axes[a], st, 2, 3, 1);
    }
    store_rows_close(st);
    return err->code ? -1 : 0;
}

/* ---- loading --------------------------------------------------------------- */

const char results_detail_value[] = "detail";

/* What a table shows of each case: a value name, inspect.KEY (a key kvx
 * writes: a misspelt one would tabulate as empty cells), counter.NAME (an ncu
 * metric of cases.counters_json) or the detail (--failures).  0 or -1. */
static int value_resolve(CaseSet *cs, const char *name, StoreShow *show, KvxError *err)
{
    *show = (StoreShow){STORE_SHOW_VALUE, -1, NULL};
    cs->unit = VALUE_RAW;
    cs->measured = 0;
    if (name == results_detail_value) {
        show->kind = STORE_SHOW_DETAIL;
        return 0;
    }
    if (!strncmp(name, "counter.", 8)) {
        if (!values_counter_valid(name + 8)) {
            kvx_error_set(err, KVX_EINPUT, NULL,
                          "bad counter '%s' (expected counter.METRIC with an ncu metric name such as"
                          " counter.dram__bytes_read.sum)", name);
            return -1;
        }
        *show = (StoreShow){STORE_SHOW_COUNTER, -1, name + 8};
        cs->unit = VALUE_COUNT;
        cs->measured = 1;
        return 0;
    }
    if (!strncmp(name, "inspect.", 8)) {
        if (!values_inspect_valid(name + 8)) {
            kvx_error_set(err, KVX_EINPUT, NULL, "unknown inspect fact '%s' (expected inspect. and one of: %s)",
                          name, values_inspect_list());
            return -1;
        }
        *show = (StoreShow){STORE_SHOW_INSPECT, -1, name + 8};
        return 0;
    }
    int vi = values_find(name);
    if (vi < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "unknown value '%s' (expected one of: %s, inspect.KEY,"
                      " counter.METRIC)", name, values_list());
        return -1;
    }
    show->value = cs->vidx = vi;
    cs->unit = values_info[vi].unit;
    cs->measured = values_info[vi].measured;
    return 0;
}

/* One case of load_cases' query into a new Rec; hits (sorted by case id)
 * from *h on give its axis values. */
static void rec_read(CaseSet *cs, StoreRows *st, const AxisHit *hits, int nhits, int *h,
                     int *cap)
{
    if (cs->nrecs == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        cs->recs = mem_realloc(cs->recs, sizeof *cs->recs * (size_t)*cap);
    }
    Rec *r = &cs->recs[cs->nrecs++];
    memset(r, 0, sizeof *r);
    r->id = store_rows_int(st, 0);
    r->run_id = store_rows_int(st, 1);
    const char *status = store_rows_text(st, 2);
    r->status = arena_strdup(cs->arena, status ? status : "ok");
    StoreType t = store_rows_type(st, 3);
    r->raw = t == STORE_INT || t == STORE_REAL ? store_rows_double(st, 3) : NAN;
    if (t == STORE_TEXT)
        r->rawtext = arena_strdup(cs->arena, store_rows_text(st, 3));
    r->noise = store_rows_type(st, 4) == STORE_NULL ? NAN : store_rows_double(st, 4);
    r->match = (int)store_rows_int(st, 5);
    for (int a = 0; a < RESULTS_MAX_AXES; a++)
        r->ax[a] = -1;
    while (*h < nhits && hits[*h].id < r->id)
        (*h)++;
    for (; *h < nhits && hits[*h].id == r->id; (*h)++)
        r->ax[hits[*h].axis] = hits[*h].val;
}

/* The selected cases with value and whether each matches where (o->spec
 * lends its let: names to it). */
static int load_cases(Store *db, CaseSet *cs, const char *value, const char *where,
                      const Spec *spec, KvxError *err)
{
    AxisHit *hits = NULL;
    int nhits = 0, rc = -1;
    StoreRows *st = NULL;
    StoreShow show;
    const StoreCond *cond = NULL;
    if (load_axes(db, cs, &hits, &nhits, err) || rank_values(db, cs, err))
        goto fail;
    cs->value_name = value;
    if (value_resolve(cs, value, &show, err))
        goto fail;
    if (where && *where) {
        SrcPos pos = {"--where", 1, 1};
        Expr *e = expr_parse(cs->arena, where, &pos, err);
        if (!e || !(cond = results_where_cond(cs, spec, e, err)))
            goto fail;
    }
    if (!(st = store_cases_values(db, &cs->sel, &show, cond, err)))
        goto fail;
    int cap = 0, h = 0, step;
    while ((step = store_rows_next(st, "reading cases", err)) > 0)
        rec_read(cs, st, hits, nhits, &h, &cap);
    if (step < 0)
        goto fail;
    rc = 0;
fail:
    store_rows_close(st);
    free(hits);
    return rc;
}

/* ---- baseline and ratios --------------------------------------------------- */

static int base_add(CaseSet *cs, const char *axis, const char *text, int is_num, double num,
                    KvxError *err)
{
    int a = results_caseset_axis(cs, axis);
    if (a < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "baseline axis '%s' is not stored (axes: %s)", axis,
                      results_caseset_axis_list(cs));
        return -1;
    }
    const AxisInfo *ax = &cs->axes[a];
    char *end;
    double d = is_num ? num : strtod(text, &end);
    int text_is_num = is_num || (*text && !*end);
    /* true/false are numbers to the table but words in the text. */
    for (int i = 0; i < ax->nvals; i++)
        if (ax->vals[i].is_num ? (text_is_num && ax->vals[i].num == d) ||
                                     !strcmp(ax->vals[i].text, text)
                               : !strcmp(ax->vals[i].text, text)) {
            cs->base_axis[cs->nbase] = a;
            cs->base_val[cs->nbase++] = i;
            return 0;
        }
    kvx_error_set(err, KVX_EINPUT, NULL, "baseline %s=%s: no stored case has that value", axis,
                  text);
    return -1;
}

/* --baseline 'axis=value[,axis=value...]'. */
/* One axis=value of --baseline given.  0 or -1. */
static int baseline_part(CaseSet *cs, const char *given, const char *part, KvxError *err)
{
    const char *eq = strchr(part, '=');
    if (!eq || eq == part || cs->nbase == RESULTS_MAX_AXES) {
        kvx_error_set(err, KVX_EINPUT, NULL,
                      "--baseline '%s': expected axis=value[,axis=value...]", given);
        return -1;
    }
    const char *axis = arena_strndup(cs->arena, part, (size_t)(eq - part));
    return base_add(cs, axis, eq + 1, 0, 0, err);
}

static int baseline_given(CaseSet *cs, const char *given, KvxError *err)
{
    int n;
    const char **parts = results_split(cs->arena, given, &n);
    for (int i = 0; i < n; i++)
        if (baseline_part(cs, given, parts[i], err))
            return -1;
    return 0;
}

/* The baseline the first selected run stored (runs.baseline_json), if any. */
static int baseline_stored(Store *db, CaseSet *cs, KvxError *err)
{
    StoreRows *st = store_cases_baseline(db, &cs->sel, err);
    if (!st)
        return -1;
    int64_t first_run = 0;
    int rc = 0;
    while (!rc && store_rows_next(st, "reading baselines", err) > 0) {
        int64_t run = store_rows_int(st, 3);
        if (first_run && run != first_run)
            break;
        first_run = run;
        const char *type = store_rows_text(st, 1);
        int is_num = type && (!strcmp(type, "integer") || !strcmp(type, "real"));
        const char *t = store_rows_text(st, 2);
        rc = base_add(cs, store_rows_text(st, 0), t ? t : "", is_num,
                      store_rows_double(st, 2), err);
    }
    store_rows_close(st);
    return rc;
}

/* The baseline: given ("axis=value,..."), else the first selected run's stored
 * one, else the borrowed fb[0..nfb). */
static int baseline_resolve(Store *db, CaseSet *cs, const char *given, const BaseValue *fb,
                            int nfb, KvxError *err)
{
    if (given)
        return baseline_given(cs, given, err);
    int rc = baseline_stored(db, cs, err);
    if (!rc && cs->nbase == 0 && nfb > 0) {
        cs->base_borrowed = 1;
        for (int i = 0; !rc && i < nfb; i++)
            rc = base_add(cs, fb[i].axis, fb[i].text, fb[i].is_num, fb[i].num, err);
    }
    if (!rc && cs->nbase == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL,
                      "--ratio: no baseline stored for spec '%s'; pass --baseline 'axis=value'",
                      cs->sel.spec);
        rc = -1;
    }
    return rc;
}

static void rec_key(const CaseSet *cs, const Rec *r, const int *subst, StrBuf *b)
{
    sb_reset(b);
    sb_printf(b, "%lld", (long long)r->run_id);
    for (int a = 0; a < cs->naxes; a++)
        sb_printf(b, ",%d", subst && subst[a] >= 0 ? subst[a] : r->ax[a]);
}

typedef struct KeyIdx { const char *key; int rec; } KeyIdx;
static int cmp_keyidx(const void *a, const void *b)
{
    return strcmp(((const KeyIdx *)a)->key, ((const KeyIdx *)b)->key);
}

/* rec->v is the value itself; a failed case's is NaN with rec->fail its
 * status, unless failed_values keeps a measured one (rec->vstatus). */
/* A record's value as stored, or its status where a failed case's value
 * is not shown (failed_values shows a measured one beside its status). */
static void value_plain(const CaseSet *cs, Rec *r)
{
    r->v = r->raw;
    r->fail = NULL;
    r->vstatus = NULL;
    if (strcmp(r->status, "ok") && (cs->measured || isnan(r->raw)) && !r->rawtext) {
        if (cs->failed_values && cs->measured && !isnan(r->raw))
            r->vstatus = r->status;
        else
            r->fail = r->status, r->v = NAN;
    }
}

static void values_plain(CaseSet *cs)
{
    for (int i = 0; i < cs->nrecs; i++)
        value_plain(cs, &cs->recs[i]);
}

/* The cases by key (run and axis values, rec_key) for finding each case's
 * baseline, and scratch of nrecs entries for the baseline cases' values and
 * noise and the ratios' noise. */
typedef struct Ratios {
    KeyIdx *idx;                /* sorted by key */
    int subst[RESULTS_MAX_AXES]; /* the baseline's value per axis, -1 elsewhere */
    double *vals, *bnoise;
    double *rnoise;             /* written back after the loop reads the cases' own */
    StrBuf b;
} Ratios;

static void ratios_init(CaseSet *cs, Ratios *R)
{
    size_t n = (size_t)(cs->nrecs + 1);
    R->idx = mem_alloc(sizeof *R->idx * n);
    sb_init(&R->b);
    for (int i = 0; i < cs->nrecs; i++) {
        rec_key(cs, &cs->recs[i], NULL, &R->b);
        R->idx[i].key = arena_strdup(cs->arena, sb_str(&R->b));
        R->idx[i].rec = i;
    }
    qsort(R->idx, (size_t)cs->nrecs, sizeof *R->idx, cmp_keyidx);
    for (int a = 0; a < RESULTS_MAX_AXES; a++)
        R->subst[a] = -1;
    for (int k = 0; k < cs->nbase; k++)
        R->subst[cs->base_axis[k]] = cs->base_val[k];
    R->vals = mem_alloc(sizeof *R->vals * n);
    R->bnoise = mem_alloc(sizeof *R->bnoise * n);
    R->rnoise = mem_alloc(sizeof *R->rnoise * n);
}

static void ratios_free(Ratios *R)
{
    free(R->rnoise);
    free(R->bnoise);
    free(R->vals);
    sb_free(&R->b);
    free(R->idx);
}

/* Case i's ratio to its baseline case(s) (several stored cases at the
 * baseline point, re-runs: their median), or NaN with the reason in fail. */
static void ratio_one(CaseSet *cs, Ratios *R, int i, int ratio)
{
    Rec *r = &cs->recs[i];
    R->rnoise[i] = r->noise;
    if (!r->match || r->fail || isnan(r->v))
        return;
    rec_key(cs, r, R->subst, &R->b);
    KeyIdx probe = {sb_str(&R->b), 0};
    KeyIdx *idx = R->idx;
    KeyIdx *hit = bsearch(&probe, idx, (size_t)cs->nrecs, sizeof *idx, cmp_keyidx);
    if (!hit) {
        r->v = NAN, r->fail = "no baseline";
        return;
    }
    while (hit > idx && !strcmp(hit[-1].key, probe.key))
        hit--;
    int n = 0, nn = 0, self = 0;
    const char *bfail = NULL;
    for (KeyIdx *p = hit; p < idx + cs->nrecs && !strcmp(p->key, probe.key); p++) {
        const Rec *base = &cs->recs[p->rec];
        double bv = strcmp(base->status, "ok") && cs->measured ? NAN : base->raw;
        if (isnan(bv) || bv == 0) {
            bfail = base->status;
        } else {
            R->vals[n++] = bv;
            self |= base == r;
            if (!isnan(base->noise))
                R->bnoise[nn++] = base->noise;
        }
    }
    if (n == 0) {
        r->v = NAN;
        r->fail = arena_printf(cs->arena, "baseline %s", bfail ? bfail : "n/a");
        return;
    }
    /* ratio 2 is a speed-up: the baseline's time over this one's. */
    double bm = results_median(R->vals, n);
    r->v = ratio == 2 ? bm / r->raw : r->raw / bm;
    if (self && n == 1)
        R->rnoise[i] = 0;
    else
        R->rnoise[i] = nn < n || isnan(r->noise) ? NAN : hypot(r->noise, results_median(R->bnoise, nn));
}

/* Fill rec->v and rec->fail: the value itself, or its ratio to the baseline
 * case at the same point of the other axes in the same run.  A ratio's noise
 * is its case's and its baseline's combined (relative spreads add in
 * quadrature), unknown when either is; the baseline point's own ratio is
 * exact.  With failed_values a failed case that has a measured value keeps it
 * (vstatus says why it is not a plain value); its baseline must have passed. */
static void compute_values(CaseSet *cs, int ratio)
{
    values_plain(cs);
    if (!ratio)
        return;
    Ratios R;
    ratios_init(cs, &R);
    for (int i = 0; i < cs->nrecs; i++)
        ratio_one(cs, &R, i, ratio);
    for (int i = 0; i < cs->nrecs; i++)
        cs->recs[i].noise = R.rnoise[i];
    ratios_free(&R);
}

int results_caseset_load(Store *db, const ResultsSel *sel, const TableOpts *o, const BaseValue *fb,
                 int nfb, CaseSet *cs, KvxError *err)
{
    memset(cs, 0, sizeof *cs);
    cs->vidx = -1;
    cs->arena = arena_new();
    cs->sel = *sel;
    cs->failed_values = o->failed_values;
    if (results_resolve_spec(db, &cs->sel, cs->arena, err) ||
        load_cases(db, cs, o->value ? o->value : "median_ms", o->where, o->spec, err))
        return -1;
    cs->searched = store_search_runs(db, cs->sel.spec) > 0;
    if (o->ratio && baseline_resolve(db, cs, o->baseline, fb, nfb, err))
        return -1;
    compute_values(cs, o->ratio);
    return 0;
}
