/* search_replay: a strategy run against a recorded space, its objective
 * known for every candidate, as `kvx run --search` would run it (batches of
 * asks, then their tells in ask order): search_replay_order, search_replay,
 * search_frac_at_time and search_stats; and `kvx replay DB`
 * (search_replay_main, run.h), which runs them for each strategy and budget
 * against a database that holds every variant of a spec measured, without a
 * GPU, and prints the fraction of the optimum the best variant found
 * reaches (results/search-spaces.md's method).  Budgets are counts of
 * evaluations (every ask, an invalid variant's too) or seconds of simulated
 * tuning time (each variant's stored compile + measure time, summed in ask
 * order; an evaluation counts when it started within the budget); both are
 * prefixes of one run per seed, since no strategy reads its budget.  Kernel
 * Tuner's strategies replay the same space from `kvx export --format
 * kerneltuner` (search_kt.c; bench/kernel_tuner_replay.py; bench/'s
 * harness of the benchmark set runs both sides). */
#include "search_db.h"
#include "core/json.h"
#include "core/num.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/results.h"
#include "store/store.h"

int search_replay_order(const SearchSpace *sp, const double *y, int kind, const SearchParams *p, uint64_t seed,
                        int max, const double *cost_ms, double min_ms, int batch, int *order)
{
    Search *s = search_new_with(sp, kind, seed, p);
    int done = 0, spent = 0;
    double clock = 0;
    if (batch < 1)
        batch = 1;
    while ((done < max || clock < min_ms) && !spent) {
        int n = 0, c;
        while (n < batch && (done + n < max || clock < min_ms) && (c = search_ask(s)) >= 0)
            order[done + n++] = c;
        spent = n < batch && (done + n < max || clock < min_ms);     /* the space is spent */
        for (int i = 0; i < n; i++) {
            search_tell(s, order[done + i], y[order[done + i]]);
            clock += cost_ms ? cost_ms[order[done + i]] : 0;
        }
        done += n;
    }
    search_free(s);
    return done;
}

/* The lowest valid y of y, INFINITY when none. */
static double y_optimum(const SearchSpace *sp, const double *y)
{
    double y_opt = INFINITY;
    for (int c = 0; c < sp->n; c++)
        if (!isnan(y[c]))
            y_opt = fmin(y_opt, y[c]);
    return y_opt;
}

int search_replay(const SearchSpace *sp, const double *y, int kind, uint64_t seed0, int nseeds,
                  const int *budgets, int nbudgets, int batch, double *frac)
{
    double y_opt = y_optimum(sp, y);
    if (!isfinite(y_opt))
        return -1;
    int maxb = 1;
    for (int b = 0; b < nbudgets; b++)
        maxb = budgets[b] > maxb ? budgets[b] : maxb;
    int *order = mem_alloc(sizeof(int) * (size_t)(sp->n + 1));
    for (int k = 0; k < nseeds; k++) {
        int n = search_replay_order(sp, y, kind, NULL, seed0 + (uint64_t)k, maxb, NULL, 0, batch, order);
        for (int b = 0; b < nbudgets; b++) {
            double best = INFINITY;
            for (int i = 0; i < n && i < budgets[b]; i++)
                if (!isnan(y[order[i]]))
                    best = fmin(best, y[order[i]]);
            frac[(size_t)k * (size_t)nbudgets + (size_t)b] = isfinite(best) ? exp(y_opt - best) : 0;
        }
    }
    free(order);
    return 0;
}

double search_frac_at_time(const double *y, const double *cost_ms, double y_opt, const int *order, int n,
                           double t_ms, int *evals)
{
    double clock = 0, best = INFINITY;
    int i = 0;
    for (; i < n && clock < t_ms; i++) {
        clock += cost_ms ? cost_ms[order[i]] : 1;
        if (!isnan(y[order[i]]))
            best = fmin(best, y[order[i]]);
    }
    *evals = i;
    return isfinite(best) ? exp(y_opt - best) : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

SearchStats search_stats(double *frac, int nseeds, double tol)
{
    SearchStats st = {NAN, NAN, NAN, NAN, NAN};
    if (nseeds <= 0)
        return st;
    qsort(frac, (size_t)nseeds, sizeof(double), cmp_double);
    st.median = nseeds % 2 ? frac[nseeds / 2] : 0.5 * (frac[nseeds / 2 - 1] + frac[nseeds / 2]);
    int r = (int)ceil(0.1 * nseeds);    /* nearest rank */
    st.p10 = frac[r > 0 ? r - 1 : 0];
    int within = 0;
    double sum = 0, sq = 0;
    for (int i = 0; i < nseeds; i++) {
        within += frac[i] >= 1.0 / (1.0 + tol) - 1e-12;
        sum += frac[i], sq += frac[i] * frac[i];
    }
    st.within = (double)within / nseeds;
    st.mean = sum / nseeds;
    double var = nseeds > 1 ? (sq - sum * sum / nseeds) / (nseeds - 1) : 0;
    st.se = sqrt(var > 0 ? var / nseeds : 0);
    return st;
}

/* ---- `kvx replay` ------------------------------------------------------------------------ */

/* "axis=value axis=value" of candidate c. */
static void label(const SearchRecord *r, int c, char *buf, size_t n)
{
    buf[0] = 0;
    for (int a = 0; a < r->sp.naxes; a++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s=%s", a ? " " : "", r->axis[a],
                 r->text[a][r->vals[(size_t)c * (size_t)r->sp.naxes + (size_t)a]]);
}

/* The variant with the lowest y (the objective's log, negated where higher
 * is better), -1 when none is valid. */
static int optimum(const SearchRecord *r)
{
    int opt = -1;
    for (int c = 0; c < r->sp.n; c++)
        if (!isnan(r->y[c]) && (opt < 0 || r->y[c] < r->y[opt]))
            opt = c;
    return opt;
}

/* A budget of the table: evaluations, or simulated milliseconds. */
typedef struct Budget {
    const char *text;
    int time;                   /* 1: ms of simulated tuning time */
    int evals;                  /* the evaluations of a count budget */
    double ms;                  /* a time budget */
} Budget;

/* One row of the table: a strategy at a budget, over the seeds. */
typedef struct Row {
    const char *strategy;
    const Budget *b;
    double evals;               /* mean evaluations made within the budget */
    double seconds;             /* median simulated tuning time spent, s */
    SearchStats st;
    const char *vs;             /* against random at the budget: better, =, worse; "" no random row */
} Row;

typedef struct Replay {
    const SearchReplayOpts *ro;
    const SearchRecord *r;
    double y_opt;
    Budget b[2 * SEARCH_REPLAY_MAX];
    int nb, max_evals;
    double max_ms;
    Row *rows;
    int nrows;
} Replay;

/* A time budget's text: Ns of simulated time, or P% of the space's. */
static int time_budget(const char *t, double total_ms, double *ms)
{
    size_t n = strlen(t);
    char num[64];
    double v;
    if (n < 2 || n >= sizeof num || (t[n - 1] != 's' && t[n - 1] != '%'))
        return -1;
    snprintf(num, sizeof num, "%.*s", (int)n - 1, t);
    if (num_read_double(num, &v) != 0 || !(v > 0) || (t[n - 1] == '%' && v > 100))
        return -1;
    *ms = t[n - 1] == 's' ? v * 1000 : v * total_ms / 100;
    return 0;
}

/* The budgets of ro over r, the count ones first. */
static void budgets(Replay *rp, Arena *ar)
{
    int nc = 0, nt = 0;
    const char **ct = results_split(ar, rp->ro->budgets, &nc);
    const char **tt = rp->ro->time_budgets[0] ? results_split(ar, rp->ro->time_budgets, &nt) : NULL;
    KVX_ASSERT(nc <= SEARCH_REPLAY_MAX && nt <= SEARCH_REPLAY_MAX);     /* the CLI's setters */
    rp->max_evals = 1;
    for (int i = 0; i < nc; i++) {
        SearchBudget sb;
        char why[128];
        search_budget_parse(ct[i], 0, &sb, why, sizeof why);
        Budget *b = &rp->b[rp->nb++];
        *b = (Budget){.text = ct[i], .evals = search_budget_variants(&sb, rp->r->sp.n)};
        rp->max_evals = b->evals > rp->max_evals ? b->evals : rp->max_evals;
    }
    for (int i = 0; i < nt; i++) {
        Budget *b = &rp->b[rp->nb++];
        *b = (Budget){.text = tt[i], .time = 1};
        time_budget(tt[i], rp->r->total_ms, &b->ms);
        rp->max_ms = b->ms > rp->max_ms ? b->ms : rp->max_ms;
    }
}

/* The fraction of the optimum at budget b of one seed's order[0..n), its
 * evaluations and simulated ms. */
static double at_budget(const Replay *rp, const Budget *b, const int *order, int n, int *evals, double *ms)
{
    const SearchRecord *r = rp->r;
    double f = search_frac_at_time(r->y, r->cost_ms, rp->y_opt, order, n < b->evals || b->time ? n : b->evals,
                                   b->time ? b->ms : INFINITY, evals);
    *ms = 0;
    for (int i = 0; i < *evals; i++)
        *ms += r->cost_ms[order[i]];
    return f;
}

/* The rows of one strategy (text: NAME[:key=value]...) into rp->rows. */
static void strategy_rows(Replay *rp, const char *text)
{
    const SearchReplayOpts *ro = rp->ro;
    const SearchRecord *r = rp->r;
    int kind, ns = ro->seeds, nb = rp->nb;
    SearchParams par;
    char why[256];
    int ok = search_parse(text, &kind, &par, why, sizeof why) == 0;
    KVX_ASSERT(ok);     /* the CLI's setter checked it */
    int *order = mem_alloc(sizeof(int) * (size_t)(r->sp.n ? r->sp.n : 1));
    double *frac = mem_alloc(sizeof(double) * (size_t)ns * (size_t)nb);
    double *secs = mem_alloc(sizeof(double) * (size_t)ns * (size_t)nb);
    double *evals = mem_calloc((size_t)nb, sizeof(double));
    for (int k = 0; k < ns; k++) {
        int n = search_replay_order(&r->sp, r->y, kind, &par, ro->seed + (uint64_t)k, rp->max_evals, r->cost_ms,
                                    rp->max_ms, ro->batch, order);
        for (int b = 0; b < nb; b++) {
            int e;
            double ms;
            frac[(size_t)b * (size_t)ns + (size_t)k] = at_budget(rp, &rp->b[b], order, n, &e, &ms);
            secs[(size_t)b * (size_t)ns + (size_t)k] = ms / 1000;
            evals[b] += (double)e / ns;
        }
    }
    for (int b = 0; b < nb; b++) {
        Row *w = &rp->rows[rp->nrows++];
        double *s = secs + (size_t)b * (size_t)ns;
        qsort(s, (size_t)ns, sizeof *s, cmp_double);
        *w = (Row){.strategy = text, .b = &rp->b[b], .evals = evals[b],
                   .seconds = ns % 2 ? s[ns / 2] : 0.5 * (s[ns / 2 - 1] + s[ns / 2]),
                   .st = search_stats(frac + (size_t)b * (size_t)ns, ns, ro->tol), .vs = ""};
    }
    free(order), free(frac), free(secs), free(evals);
}

/* Each row against random's at its budget: "worse" or "better" where the
 * means differ by more than twice their standard errors (seed noise), else
 * "=".  A strategy's rows are left "" when no random row was replayed. */
static void against_random(Replay *rp)
{
    for (int i = 0; i < rp->nrows; i++) {
        Row *w = &rp->rows[i];
        for (int j = 0; j < rp->nrows; j++) {
            const Row *x = &rp->rows[j];
            if (x->b != w->b || strcmp(x->strategy, "random"))
                continue;
            double d = w->st.mean - x->st.mean, se = sqrt(w->st.se * w->st.se + x->st.se * x->st.se);
            w->vs = fabs(d) <= 2 * se + 1e-9 ? "=" : d < 0 ? "worse" : "better";
        }
    }
}

static void header(const Replay *rp, const SearchObjective *o)
{
    const SearchReplayOpts *ro = rp->ro;
    const SearchRecord *r = rp->r;
    int opt = optimum(r);
    char lab[1024];
    label(r, opt, lab, sizeof lab);
    printf("kvx replay %s: spec %s, %d variants over %d objective point%s (%d invalid, %d incomplete left out)\n",
           ro->db, r->spec, r->sp.n, r->npoints, r->npoints == 1 ? "" : "s", r->ninvalid, r->nincomplete);
    printf("objective %s, %s is better, geometric mean%s%s\n", o->column, o->lower ? "lower" : "higher",
           o->points ? " where " : "", o->points ? o->points : "");
    printf("optimum   %s: %.6g\n", lab, exp(o->lower ? r->y[opt] : -r->y[opt]));
    printf("tuning    %.1f s simulated for the whole space (each variant's compile + measure time as stored)\n",
           r->total_ms / 1000);
    printf("seeds     %llu..%llu, batches of %d, within = at most %g%% from the optimum; vs random: the mean "
           "fraction's difference beyond twice its standard error\n\n",
           (unsigned long long)ro->seed, (unsigned long long)(ro->seed + (uint64_t)ro->seeds - 1), ro->batch,
           100 * ro->tol);
    printf("| strategy | budget | evaluations | simulated s | median | p10 | mean | within %g%% | vs random |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n", 100 * ro->tol);
}

static void print_md(const Replay *rp)
{
    for (int i = 0; i < rp->nrows; i++) {
        const Row *w = &rp->rows[i];
        char budget[96];
        if (w->b->time)
            snprintf(budget, sizeof budget, "%s (%.1f s)", w->b->text, w->b->ms / 1000);
        else
            snprintf(budget, sizeof budget, "%s", w->b->text);
        printf("| %s | %s | %.1f | %.1f | %.3f | %.3f | %.3f | %.0f%% | %s |\n", w->strategy, budget, w->evals,
               w->seconds, w->st.median, w->st.p10, w->st.mean, 100 * w->st.within, w->vs);
    }
}

static void json_str(const char *key, const char *v, const char *after)
{
    StrBuf b;
    sb_init(&b);
    json_put_str(&b, v, JSON_BYTES);
    printf("\"%s\": %s%s", key, sb_str(&b), after);
    sb_free(&b);
}

static void print_json(const Replay *rp, const SearchObjective *o)
{
    const SearchRecord *r = rp->r;
    printf("{");
    json_str("db", rp->ro->db, ", ");
    json_str("spec", r->spec, ", ");
    json_str("objective", rp->ro->objective, ", ");
    printf("\"lower_is_better\": %s, \"variants\": %d, \"invalid\": %d, \"optimum\": %.17g, \"total_s\": %.6g, "
           "\"seeds\": %d, \"batch\": %d, \"tolerance\": %g,\n\"rows\": [", o->lower ? "true" : "false", r->sp.n,
           r->ninvalid, exp(o->lower ? rp->y_opt : -rp->y_opt), r->total_ms / 1000, rp->ro->seeds, rp->ro->batch,
           rp->ro->tol);
    for (int i = 0; i < rp->nrows; i++) {
        const Row *w = &rp->rows[i];
        printf("%s\n{", i ? "," : "");
        json_str("strategy", w->strategy, ", ");
        json_str("budget", w->b->text, ", ");
        printf("\"time\": %s, \"budget_s\": %.6g, \"evaluations\": %.6g, \"simulated_s\": %.6g, \"median\": %.6g, "
               "\"p10\": %.6g, \"mean\": %.6g, \"se\": %.6g, \"within\": %.6g, ", w->b->time ? "true" : "false",
               w->b->time ? w->b->ms / 1000 : 0, w->evals, w->seconds, w->st.median, w->st.p10, w->st.mean,
               w->st.se, w->st.within);
        json_str("vs_random", w->vs, "}");
    }
    printf("]}\n");
}

/* The table of every strategy and budget of ro over r. */
static void replay_table(const SearchReplayOpts *ro, const SearchRecord *r, const SearchObjective *o, Arena *ar)
{
    int ns = 0;
    const char **names = results_split(ar, ro->strategies, &ns);
    Replay rp = {.ro = ro, .r = r};
    rp.y_opt = r->y[optimum(r)];
    budgets(&rp, ar);
    rp.rows = mem_alloc(sizeof *rp.rows * (size_t)(ns * rp.nb > 0 ? ns * rp.nb : 1));
    for (int i = 0; i < ns; i++)
        strategy_rows(&rp, names[i]);
    against_random(&rp);
    if (ro->json) {
        print_json(&rp, o);
    } else {
        header(&rp, o);
        print_md(&rp);
    }
    free(rp.rows);
}

/* A record without a valid variant has no optimum to replay towards: an
 * error, not `optimum strategy=naive: 1` (a variant read at index -1) above
 * an empty table. */
static int no_optimum(const SearchRecord *r, KvxError *err)
{
    if (optimum(r) >= 0)
        return 0;
    kvx_error_set(err, KVX_EINPUT, NULL, "every one of the %d stored variants of %s is invalid (failed, or"
                  " without a value of the objective): there is no optimum to replay", r->sp.n, r->spec);
    return -1;
}

int search_replay_main(const SearchReplayOpts *ro)
{
    KvxError err = {0};
    SearchObjective o = {0};
    SearchRecord r = {0};
    Arena *ar = arena_new();
    ResultsSel sel = {.spec = ro->spec};
    int rc = 0;
    double t0 = wall_now_ms();
    Store *db = store_read_open(ro->db, &err);
    if (!db || results_resolve_spec(db, &sel, ar, &err) || search_objective_parse(ro->objective, "--objective", &o, &err) ||
        search_record_load(db, sel.spec, &o, &r, &err) || no_optimum(&r, &err)) {
        kvx_error_print(&err, stderr);
        rc = err.code == KVX_EINPUT ? 2 : 3;
    } else {
        replay_table(ro, &r, &o, ar);
        if (!ro->json)
            printf("\n%.1f s\n", (wall_now_ms() - t0) / 1000);
    }
    search_record_free(&r);
    search_objective_free(&o);
    store_close(db);
    arena_free(ar);
    kvx_error_clear(&err);
    return rc;
}
