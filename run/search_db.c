/* search_db: objectives and recorded spaces (search_db.h).  A recorded space
 * is rebuilt from the stored rows alone, without the spec file: the axes and
 * their declared order from the newest run's axes_json, the code axes as
 * those no case stored as a workload axis, and each point's newest row. */
#include "search_db.h"
#include "core/num.h"
#include "store/store_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int search_objective_parse(const char *text, const char *what, SearchObjective *o, KvxError *err)
{
    memset(o, 0, sizeof *o);
    const char *comma = strchr(text, ',');
    size_t n = comma ? (size_t)(comma - text) : strlen(text);
    snprintf(o->column, sizeof o->column, "%.*s", (int)(n < sizeof o->column ? n : sizeof o->column - 1), text);
    if (n >= sizeof o->column || (o->lower = store_objective_dir(o->column)) < 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s is '%.*s' (expected one of: %s, then optionally ,POINTS)",
                      what, (int)n, text, store_objective_list());
        return -1;
    }
    o->arena = arena_new();
    if (comma) {
        o->points = comma + 1;
        SrcPos pos = {.file = what, .line = 1, .col = (int)n + 2};
        if (!(o->where = expr_parse(o->arena, o->points, &pos, err))) {
            search_objective_free(o);
            return -1;
        }
    }
    return 0;
}

void search_objective_free(SearchObjective *o)
{
    arena_free(o->arena);
    memset(o, 0, sizeof *o);
}

double search_objective_of(const SearchObjective *o, const double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (!(v[i] > 0) || !isfinite(v[i]))
            return NAN;
        sum += log(v[i]);
    }
    return n ? (o->lower ? sum : -sum) / n : NAN;
}

int search_budget_parse(const char *text, int times, SearchBudget *b, char *why, size_t nwhy)
{
    static const struct {
        const char *suffix;
        SearchBudgetKind kind;
    } units[] = {{"%", SEARCH_BUDGET_PCT}, {"gpu-min", SEARCH_BUDGET_GPU_MIN}, {"wall-min", SEARCH_BUDGET_WALL_MIN}};
    size_t n = strlen(text);
    char num[64];
    b->kind = SEARCH_BUDGET_N;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t k = strlen(units[u].suffix);
        if (n > k && !strcmp(text + n - k, units[u].suffix))
            b->kind = units[u].kind, n -= k;
    }
    snprintf(num, sizeof num, "%.*s", (int)(n < sizeof num ? n : sizeof num - 1), text);
    int ok = n < sizeof num && num_read_double(num, &b->amount) == 0 && b->amount > 0;
    if (b->kind == SEARCH_BUDGET_N)
        ok = ok && b->amount == (double)(int)b->amount;
    if (b->kind == SEARCH_BUDGET_PCT)
        ok = ok && b->amount <= 100;
    if (!times && (b->kind == SEARCH_BUDGET_GPU_MIN || b->kind == SEARCH_BUDGET_WALL_MIN))
        ok = 0;
    if (!ok)
        snprintf(why, nwhy, "'%s' (expected N variants or P%%%s)", text, times ? ", Mgpu-min or Mwall-min" : "");
    return ok ? 0 : -1;
}

int search_budget_variants(const SearchBudget *b, int n)
{
    double v = b->kind == SEARCH_BUDGET_N ? b->amount : b->kind == SEARCH_BUDGET_PCT ? ceil(b->amount * n / 100) : n;
    return v < 1 ? 1 : v > n ? n : (int)v;
}

/* ---- a recorded space ---------------------------------------------------------------- */

typedef struct Loader {
    const SearchObjective *o;
    Arena *a;
    int nall;
    const char *name[SEARCH_MAX_AXES];
    const char **vt[SEARCH_MAX_AXES];   /* values' text */
    Value *vv[SEARCH_MAX_AXES];         /* the same as expression values */
    int nv[SEARCH_MAX_AXES], cap[SEARCH_MAX_AXES];
    int workload[SEARCH_MAX_AXES];
    int64_t id;                         /* the case being read, 0 none */
    int cur[SEARCH_MAX_AXES], ok, unknown;
    double value;
    int *pvals;                         /* points, nall values each */
    double *pval;                       /* per point: its value, NaN when not ok */
    int64_t *pid;                       /* per point: its case (the newest row) */
    int npts, pcap;
    HashIdx idx;
    int nunknown;                       /* cases with a value outside the declared ones */
} Loader;

static Value text_value(const char *t)
{
    double d;
    if (num_read_double(t, &d) == 0)
        return strpbrk(t, ".eE") || d != (double)(int64_t)d ? val_float(d) : val_int((int64_t)d);
    return val_str(t);
}

static int axis_of(const Loader *l, const char *name)
{
    for (int i = 0; i < l->nall; i++)
        if (!strcmp(l->name[i], name))
            return i;
    return -1;
}

static void on_decl(void *ctx, const char *axis, const char *value)
{
    Loader *l = ctx;
    int i = axis_of(l, axis);
    if (i < 0) {
        if (l->nall == SEARCH_MAX_AXES)
            return;
        i = l->nall++;
        l->name[i] = arena_strdup(l->a, axis);
    }
    if (l->nv[i] == l->cap[i]) {
        l->cap[i] = l->cap[i] ? 2 * l->cap[i] : 8;
        l->vt[i] = mem_realloc(l->vt[i], sizeof(char *) * (size_t)l->cap[i]);
        l->vv[i] = mem_realloc(l->vv[i], sizeof(Value) * (size_t)l->cap[i]);
    }
    l->vt[i][l->nv[i]] = arena_strdup(l->a, value ? value : "");
    l->vv[i][l->nv[i]] = text_value(l->vt[i][l->nv[i]]);
    l->nv[i]++;
}

static const Loader *same_loader;       /* hidx's compare has no context of its own */
static int same_point(int stored, const void *vals)
{
    return !memcmp(same_loader->pvals + (size_t)stored * (size_t)same_loader->nall, vals,
                   sizeof(int) * (size_t)same_loader->nall);
}

/* The case read so far becomes a point (its newest row wins). */
static void flush(Loader *l)
{
    for (int i = 0; l->id && i < l->nall; i++)
        l->unknown |= l->cur[i] < 0;
    if (!l->id || l->unknown) {
        l->nunknown += l->id && l->unknown;
        return;
    }
    if (l->npts == l->pcap) {
        l->pcap = l->pcap ? 2 * l->pcap : 256;
        l->pvals = mem_realloc(l->pvals, sizeof(int) * (size_t)l->pcap * (size_t)l->nall);
        l->pval = mem_realloc(l->pval, sizeof(double) * (size_t)l->pcap);
        l->pid = mem_realloc(l->pid, sizeof(int64_t) * (size_t)l->pcap);
    }
    memcpy(l->pvals + (size_t)l->npts * (size_t)l->nall, l->cur, sizeof(int) * (size_t)l->nall);
    same_loader = l;
    int k = hidx_add(&l->idx, hidx_hash(l->cur, sizeof(int) * (size_t)l->nall), l->npts, same_point, l->cur);
    l->pval[k < 0 ? l->npts : k] = l->ok ? l->value : NAN;
    l->pid[k < 0 ? l->npts : k] = l->id;
    l->npts += k < 0;
}

static void on_case(void *ctx, int64_t id, const char *status, double value, const char *axis, const char *text,
                    int workload)
{
    Loader *l = ctx;
    if (id != l->id) {
        flush(l);
        l->id = id, l->unknown = 0, l->ok = status && !strcmp(status, "ok"), l->value = value;
        for (int i = 0; i < l->nall; i++)
            l->cur[i] = -1;
    }
    int i = axis_of(l, axis), v = -1;
    for (int k = 0; i >= 0 && k < l->nv[i] && v < 0; k++)
        if (!strcmp(l->vt[i][k], text ? text : ""))
            v = k;
    if (v < 0) {
        l->unknown = 1;
        return;
    }
    l->cur[i] = v;
    l->workload[i] |= workload;
}

typedef struct PointCtx {
    const Loader *l;
    const int *vals;
} PointCtx;

static int point_lookup(void *ctx, const char *name, Value *out, KvxError *err)
{
    (void)err;
    const PointCtx *pc = ctx;
    int i = axis_of(pc->l, name);
    if (i < 0)
        return 0;
    *out = pc->l->vv[i][pc->vals[i]];
    return 1;
}

/* Whether point p is an objective point: 1, 0, or -1 with err. */
static int objective_point(const Loader *l, int p, KvxError *err)
{
    if (!l->o->where)
        return 1;
    PointCtx pc = {l, l->pvals + (size_t)p * (size_t)l->nall};
    ExprEnv env = {.lookup = point_lookup, .ctx = &pc, .arena = l->o->arena};
    Value v;
    if (expr_eval(l->o->where, &env, &v, err) != 0)
        return -1;
    return v.kind == VAL_BOOL ? v.i != 0 : val_num(v) != 0;
}

static const SearchRecord *same_record;
static int same_tuple(int stored, const void *vals)
{
    const SearchRecord *r = same_record;
    return !memcmp(r->vals + (size_t)stored * (size_t)r->sp.naxes, vals, sizeof(int) * (size_t)r->sp.naxes);
}

/* The code axes into r: those no case stored as a workload axis. */
static void code_axes(const Loader *l, SearchRecord *r, int *code)
{
    r->axis = arena_alloc(r->arena, sizeof(char *) * (size_t)(l->nall + 1));
    r->text = arena_alloc(r->arena, sizeof(char **) * (size_t)(l->nall + 1));
    r->nvals = arena_alloc(r->arena, sizeof(int) * (size_t)(l->nall + 1));
    int n = 0;
    for (int i = 0; i < l->nall; i++)
        if (!l->workload[i]) {
            code[n] = i;
            r->axis[n] = arena_strdup(r->arena, l->name[i]);
            r->text[n] = arena_alloc(r->arena, sizeof(char *) * (size_t)l->nv[i]);
            for (int k = 0; k < l->nv[i]; k++)
                r->text[n][k] = arena_strdup(r->arena, l->vt[i][k]);
            r->nvals[n++] = l->nv[i];
        }
    r->sp.naxes = n;
    r->nall = l->nall;
}

/* The n candidates measured at every objective point, kept in order with
 * their objective (NaN where a point is bad); pcand renumbered to them.
 * How many are kept. */
static int keep_complete(const Loader *l, SearchRecord *r, int n, const double *sum, const int *cnt,
                         const unsigned char *bad)
{
    int na = r->sp.naxes;
    r->y = mem_alloc(sizeof(double) * (size_t)(n ? n : 1));
    int kept = 0, *renum = mem_alloc(sizeof *renum * (size_t)(n ? n : 1));
    for (int c = 0; c < n; c++) {
        renum[c] = -1;
        if (cnt[c] < r->npoints) {
            r->nincomplete++;
            continue;
        }
        renum[c] = kept;
        memmove(r->vals + (size_t)kept * (size_t)na, r->vals + (size_t)c * (size_t)na, sizeof(int) * (size_t)na);
        r->y[kept] = bad[c] ? NAN : (l->o->lower ? sum[c] : -sum[c]) / cnt[c];
        r->ninvalid += bad[c];
        kept++;
    }
    for (int i = 0; i < r->npcase; i++)
        r->pcand[i] = renum[r->pcand[i]];
    free(renum);
    return kept;
}

/* Candidates from the objective points: tuples of code values, each with its
 * points' sum of logs; then those missing a point are dropped. */
static int aggregate(const Loader *l, SearchRecord *r, KvxError *err)
{
    int code[SEARCH_MAX_AXES], tuple[SEARCH_MAX_AXES], n = 0, rc = -1;
    code_axes(l, r, code);
    int na = r->sp.naxes;
    size_t np = (size_t)(l->npts ? l->npts : 1);
    r->vals = mem_alloc(sizeof(int) * (size_t)(na ? na : 1) * np);
    double *sum = mem_calloc(np, sizeof(double));
    int *cnt = mem_calloc(np, sizeof(int));
    unsigned char *bad = mem_calloc(np, 1);
    r->pcase = mem_alloc(sizeof *r->pcase * np);
    r->pcand = mem_alloc(sizeof *r->pcand * np);
    HashIdx idx = {0};
    same_record = r;
    for (int p = 0; p < l->npts; p++) {
        int m = objective_point(l, p, err);
        if (m < 0)
            goto fail;
        for (int a = 0; m && a < na; a++)
            tuple[a] = l->pvals[(size_t)p * (size_t)l->nall + (size_t)code[a]];
        if (!m)
            continue;
        memcpy(r->vals + (size_t)n * (size_t)na, tuple, sizeof(int) * (size_t)na);
        int k = hidx_add(&idx, hidx_hash(tuple, sizeof(int) * (size_t)na), n, same_tuple, tuple);
        int c = k < 0 ? n++ : k;
        r->pcase[r->npcase] = l->pid[p], r->pcand[r->npcase++] = c;
        cnt[c]++;
        if (l->pval[p] > 0 && isfinite(l->pval[p]))
            sum[c] += log(l->pval[p]);
        else
            bad[c] = 1;
    }
    for (int c = 0; c < n; c++)
        r->npoints = cnt[c] > r->npoints ? cnt[c] : r->npoints;
    int kept = keep_complete(l, r, n, sum, cnt, bad);
    r->sp.n = kept;
    r->sp.vals = r->vals;
    r->sp.nvals = r->nvals;
    rc = 0;
    if (kept == 0)
        rc = -1, kvx_error_set(err, KVX_EINPUT, NULL, "no stored variant of %s has the objective's points%s%s",
                               r->spec, l->o->points ? ": " : "", l->o->points ? l->o->points : "");
fail:
    free(sum), free(cnt), free(bad);
    hidx_free(&idx);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int search_record_cand_of(const SearchRecord *r, int64_t case_id)
{
    const int64_t *hit = bsearch(&case_id, r->sorted, (size_t)r->npcase, sizeof case_id, cmp_i64);
    return hit ? r->sorted_cand[hit - r->sorted] : -1;
}

/* r->sorted and r->sorted_cand from r->pcase and r->pcand. */
static void sort_cases(SearchRecord *r)
{
    size_t n = (size_t)(r->npcase ? r->npcase : 1);
    r->sorted = mem_alloc(sizeof *r->sorted * n);
    r->sorted_cand = mem_alloc(sizeof *r->sorted_cand * n);
    memcpy(r->sorted, r->pcase, sizeof *r->sorted * (size_t)r->npcase);
    qsort(r->sorted, (size_t)r->npcase, sizeof *r->sorted, cmp_i64);
    for (int i = 0; i < r->npcase; i++) {
        const int64_t *hit = bsearch(&r->pcase[i], r->sorted, (size_t)r->npcase, sizeof *r->sorted, cmp_i64);
        r->sorted_cand[hit - r->sorted] = r->pcand[i];
    }
}

/* What a candidate's cases cost: the newest case's compile, every case's run. */
typedef struct CostLoad {
    SearchRecord *r;
    int64_t *last;              /* per candidate: the newest case read */
    double *compile;
} CostLoad;

static void on_cost(void *ctx, const StoreSearchFacts *f)
{
    CostLoad *cl = ctx;
    int c = search_record_cand_of(cl->r, f->id);
    if (c < 0)
        return;
    if (f->id > cl->last[c])
        cl->last[c] = f->id, cl->compile[c] = isnan(f->compile_ms) ? 0 : f->compile_ms;
    cl->r->cost_ms[c] += (isnan(f->verify_ms) ? 0 : f->verify_ms) + (isnan(f->measure_ms) ? 0 : f->measure_ms);
}

/* r->cost_ms and r->total_ms from the store.  0, or -1 with err. */
static int load_costs(Store *db, SearchRecord *r, KvxError *err)
{
    size_t n = (size_t)(r->sp.n ? r->sp.n : 1);
    CostLoad cl = {r, mem_calloc(n, sizeof(int64_t)), mem_calloc(n, sizeof(double))};
    r->cost_ms = mem_calloc(n, sizeof(double));
    int rc = store_search_facts(db, r->spec, on_cost, &cl, err);
    r->total_ms = 0;
    for (int c = 0; c < r->sp.n; c++)
        r->total_ms += r->cost_ms[c] += cl.compile[c];
    free(cl.last), free(cl.compile);
    return rc;
}

/* A record only searches stored is no space: its optimum is the best they
 * found.  0, or -1 with err naming the runs. */
static int exhaustive(Store *db, const SearchRecord *r, KvxError *err)
{
    StoreRecordRuns rr;
    if (store_search_record_runs(db, r->spec, &rr, err) != 0)
        return -1;
    if (rr.nfull > 0 || rr.nsearch == 0)
        return 0;
    char runs[96];
    if (rr.nsearch == 1)
        snprintf(runs, sizeof runs, "run %lld", (long long)rr.first);
    else
        snprintf(runs, sizeof runs, "runs %lld to %lld (%d searches)", (long long)rr.first, (long long)rr.last,
                 rr.nsearch);
    kvx_error_set(err, KVX_EINPUT, NULL,
                  "spec '%s' is not an exhaustive record: its %d variants are what %s measured (the first: "
                  "--search %s --budget %s --search-seed %s), and their best is no optimum; record every "
                  "variant with kvx run, without --search, into this database or another",
                  r->spec, r->sp.n, runs, rr.strategy, rr.budget, rr.seed);
    return -1;
}

int search_record_load(Store *db, const char *spec, const SearchObjective *o, SearchRecord *r,
                       KvxError *err)
{
    memset(r, 0, sizeof *r);
    r->arena = arena_new();
    r->spec = arena_strdup(r->arena, spec);
    Loader *l = mem_calloc(1, sizeof *l);
    l->o = o, l->a = r->arena;
    int rc = -1;
    if (store_search_axes(db, spec, on_decl, l, err) != 0)
        goto fail;
    if (l->nall == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no measured run of spec '%s' is stored", spec);
        goto fail;
    }
    if (store_search_cases(db, spec, o->column, on_case, l, err) != 0)
        goto fail;
    flush(l);
    if ((rc = aggregate(l, r, err)) == 0 && (rc = exhaustive(db, r, err)) == 0) {
        sort_cases(r);
        rc = load_costs(db, r, err);
    }
fail:
    for (int i = 0; i < l->nall; i++)
        free(l->vt[i]), free(l->vv[i]);
    free(l->pvals), free(l->pval), free(l->pid);
    hidx_free(&l->idx);
    free(l);
    if (rc)
        search_record_free(r);
    return rc;
}

void search_record_free(SearchRecord *r)
{
    free(r->vals), free(r->y), free(r->pcase), free(r->pcand), free(r->sorted), free(r->sorted_cand), free(r->cost_ms);
    arena_free(r->arena);
    memset(r, 0, sizeof *r);
}
