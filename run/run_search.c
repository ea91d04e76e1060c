/* run_search: `kvx run SPEC --search STRATEGY`, a budgeted search over the
 * spec's variants (run/search.h) instead of every selected point.
 *
 * The space: the selected points (--where, and where: before it) that are
 * objective points (--objective VALUE,POINTS), grouped by their code axes'
 * values; a variant is measured at all of its objective points.  The search
 * goes in batches over one run session (run.c: one spec load, GPU probe,
 * run row and set of workers for the whole search): the strategy asks for
 * --batch variants, their cases not yet stored run as one round of the
 * session, and each variant's outcome is read back from the store and told
 * in ask order.  A variant whose cases are all stored is told without
 * running: a killed search, run again, replays its path from the stored
 * rows and goes on where it stopped, and a search in a database that holds
 * an exhaustive run measures nothing.  While a round runs, the sources of
 * the variants the strategy would ask for next compile ahead on the compile
 * processes the round leaves free. */
#define _GNU_SOURCE     /* pthread_tryjoin_np */
#include "run_internal.h"
#include "core/pool.h"
#include "search.h"
#include "search_db.h"
#include "store/store_search.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report/results.h"

typedef struct SearchRun {
    const RunOpts *o;
    KvxError err;
    RunSession *r;              /* the session: its spec, plan, store and workers */
    const Plan *p;              /* &r->plan.p */
    unsigned char *sel;         /* the objective points within --where */
    SearchObjective obj;
    SearchBudget budget;
    int code[SEARCH_MAX_AXES];  /* the code axes' spec indices */
    int nvals[SEARCH_MAX_AXES];
    int *vals;                  /* per candidate, its code values */
    int *pstart, *pts;          /* candidate c's points: pts[pstart[c] .. pstart[c + 1]) */
    char (*keys)[65];           /* per point of the plan (objective points only) */
    SearchSpace sp;
} SearchRun;

/* The session (one arch) and the objective points.  0 or the exit status. */
static int search_open(SearchRun *sr, int argc, char **argv)
{
    RunSession *r = sr->r;
    int rc = run_session_open(r, sr->o, argc, argv);
    if (rc == RUN_PER_ARCH) {
        kvx_error_set(&sr->err, KVX_EINPUT, NULL, "--search runs on GPUs of one arch (--devices)");
        return 2;
    }
    if (rc != 0)
        return rc;
    sr->p = &r->plan.p;
    sr->sel = mem_alloc((size_t)r->plan.p.npoints + 1);
    for (int i = 0; i < r->plan.p.npoints; i++) {
        int m = r->plan.sel[i] && sr->obj.where ? plan_point_matches(&r->plan.p, i, sr->obj.where, &sr->err) : r->plan.sel[i];
        if (m < 0)
            return 2;
        sr->sel[i] = (unsigned char)m;
    }
    return 0;
}

static const SearchRun *same_run;       /* hidx's compare has no context of its own */
static int same_tuple(int stored, const void *vals)
{
    int n = same_run->sp.naxes;
    return !memcmp(same_run->vals + (size_t)stored * (size_t)n, vals, sizeof(int) * (size_t)n);
}

/* The candidates: the objective points grouped by their code values, in
 * point order; each candidate's points, and every point's store key.  0, or
 * 2 when no point is left. */
static int search_space(SearchRun *sr, const RunKeyEnv *ke)
{
    const Plan *p = sr->p;
    int na = 0, n = 0, tuple[SEARCH_MAX_AXES];
    const Spec *s = sr->r->plan.s;
    for (int a = 0; a < s->naxes; a++)
        if (p->code_axes & (1ULL << a))
            sr->nvals[na] = s->axes[a].nvals, sr->code[na++] = a;
    size_t np = (size_t)(p->npoints ? p->npoints : 1);
    int *cand_of = mem_alloc(sizeof(int) * np);
    sr->vals = mem_alloc(sizeof(int) * np * (size_t)(na ? na : 1));
    sr->keys = mem_calloc(np, 65);
    sr->sp.naxes = na;
    HashIdx idx = {0};
    same_run = sr;
    for (int i = 0; i < p->npoints; i++) {
        cand_of[i] = -1;
        if (!sr->sel[i])
            continue;
        for (int a = 0; a < na; a++)
            tuple[a] = plan_point(p, i)[sr->code[a]];
        memcpy(sr->vals + (size_t)n * (size_t)na, tuple, sizeof(int) * (size_t)na);
        int k = hidx_add(&idx, hidx_hash(tuple, sizeof(int) * (size_t)na), n, same_tuple, tuple);
        cand_of[i] = k < 0 ? n++ : k;
        run_case_key(p, i, ke, sr->keys[i]);
    }
    hidx_free(&idx);
    sr->pstart = mem_calloc((size_t)n + 2, sizeof(int));
    sr->pts = mem_alloc(sizeof(int) * np);
    for (int i = 0; i < p->npoints; i++)
        if (cand_of[i] >= 0)
            sr->pstart[cand_of[i] + 2]++;
    for (int c = 0; c < n; c++)
        sr->pstart[c + 2] += sr->pstart[c + 1];
    for (int i = 0; i < p->npoints; i++)
        if (cand_of[i] >= 0)
            sr->pts[sr->pstart[cand_of[i] + 1]++] = i;
    free(cand_of);
    sr->sp = (SearchSpace){.n = n, .naxes = na, .vals = sr->vals, .nvals = sr->nvals};
    if (n == 0)
        kvx_error_set(&sr->err, KVX_EINPUT, NULL, "--search: no selected point is an objective point%s%s",
                      sr->obj.points ? " of " : "", sr->obj.points ? sr->obj.points : "");
    return n ? 0 : 2;
}

/* Candidate c's outcome from the store: *y its objective (NaN invalid),
 * *cost_ms its cases' time, *charged 1 when a case of it was measured by
 * this search (or an earlier try of it: the same strategy, seed and
 * objective), 0 when another run stored them all (it is told, but costs no
 * budget); 1 when every case of it is stored, 0 when some is not, -1 with
 * err. */
static int outcome(SearchRun *sr, Store *st, int c, double *y, double *cost_ms, int *charged)
{
    int n = sr->pstart[c + 1] - sr->pstart[c], all = 1;
    double *v = mem_alloc(sizeof(double) * (size_t)n);
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)sr->o->search_seed);
    StoreSearchId id = {sr->o->search, seed, sr->o->objective};
    *cost_ms = 0;
    *charged = 0;
    for (int k = 0; k < n; k++) {
        char status[32];
        double cost;
        int same;
        if (store_search_case(st, sr->keys[sr->pts[sr->pstart[c] + k]], sr->obj.column, &id, status, &v[k],
                              &cost, &same, &sr->err) != 0) {
            free(v);
            return -1;
        }
        *charged |= same;
        all &= status[0] != 0;
        if (strcmp(status, "ok"))
            v[k] = NAN;
        if (isfinite(cost))
            *cost_ms += cost;
    }
    *y = search_objective_of(&sr->obj, v, n);
    free(v);
    return all;
}

/* "tile=32 unroll=4": candidate c's code values; malloc'd. */
static char *cand_label(const SearchRun *sr, int c)
{
    return plan_point_label(sr->p, sr->pts[sr->pstart[c]], sr->p->code_axes);
}

/* The points of the asked candidates not yet stored into only; how many. */
static int batch_points(SearchRun *sr, Store *st, const int *asked, int n, unsigned char *only)
{
    int count = 0;
    memset(only, 0, (size_t)sr->p->npoints + 1);
    for (int i = 0; i < n; i++)
        for (int k = sr->pstart[asked[i]]; k < sr->pstart[asked[i] + 1]; k++) {
            int stored = store_has_case(st, sr->keys[sr->pts[k]], &sr->err);
            if (stored < 0)
                return -1;
            if (!stored)
                only[sr->pts[k]] = 1, count++;
        }
    return count;
}

typedef struct SearchTally {
    int done;                   /* told variants that count against the budget */
    int told, free_told;        /* every told variant; those another run had stored */
    int invalid, batches;
    int time_up;                /* the time budget stopped a batch in flight */
    int best;                   /* the best valid candidate, -1 none */
    double best_y;
    double gpu_ms;              /* the told candidates' cases' time in their runs */
    double t0;                  /* wall_now_ms() at the search's start */
} SearchTally;

/* Tell the strategy the outcome of the n asked candidates, in ask order.
 * 0, 1 when a case of them is not stored (the batch was stopped; with
 * timed 1, by the time budget: the variants of it that are whole are told
 * and the rest are not), -1 with err. */
static int tell_batch(SearchRun *sr, Search *se, const int *asked, int n, int timed, SearchTally *t)
{
    Store *st = sr->r->store.st;
    int rc = 0;
    for (int i = 0; i < n && (rc == 0 || timed); i++) {
        double y, cost;
        int charged, all = outcome(sr, st, asked[i], &y, &cost, &charged);
        if (all < 0)
            return -1;
        if (all == 0) {
            rc = 1;
            continue;
        }
        search_tell(se, asked[i], y);
        t->done += charged;
        t->told++;
        t->free_told += !charged;
        t->gpu_ms += cost;
        t->invalid += isnan(y);
        if (!isnan(y) && (t->best < 0 || y < t->best_y))
            t->best = asked[i], t->best_y = y;
    }
    return rc;
}

/* Whether a time budget is spent. */
static int over_time(const SearchRun *sr, const SearchTally *t)
{
    double min = sr->budget.amount;
    if (t->time_up)
        return 1;
    if (sr->budget.kind == SEARCH_BUDGET_GPU_MIN)
        return t->gpu_ms >= min * 60000;
    if (sr->budget.kind == SEARCH_BUDGET_WALL_MIN)
        return wall_now_ms() - t->t0 >= min * 60000;
    return 0;
}

static void print_best(const SearchRun *sr, const SearchTally *t, const char *what)
{
    printf("%s", what);
    if (t->best < 0) {
        printf(" no valid variant yet\n");
    } else {
        char *lab = cand_label(sr, t->best);
        printf(" best %s: %s %.6g\n", lab, sr->obj.column, exp(sr->obj.lower ? t->best_y : -t->best_y));
        free(lab);
    }
    fflush(stdout);
}

/* Compiles ahead: while a round runs, the sources of the variants the
 * strategy would ask for next (search_peek: exact for random, a guess for
 * the others) compile into the cache on a thread of their own, on as many
 * compile processes as there are cores, so that the next round finds them
 * there.  Nothing waits for them: the next round cancels
 * what has not started (its guess may have changed) and starts its own at
 * once, beside the compiles still in flight (for a moment more processes
 * than cores); a cancelled Ahead is freed once its thread has ended.  A
 * source the round needs that an Ahead is compiling is waited for, not
 * compiled twice (jit.c's compiles in flight). */
typedef struct Ahead {
    pthread_t thread;
    int started;
    int cancel;                 /* __atomic: JitOptions.cancel */
    JitJob *jobs;
    int n;
    JitOptions jo;
    KvxError err;
    struct Ahead *prev;         /* cancelled; joined and freed with this one */
} Ahead;

static void ahead_free(Ahead *a)
{
    if (!a)
        return;
    if (a->started)
        pthread_join(a->thread, NULL);
    ahead_free(a->prev);
    for (int i = 0; i < a->n; i++)
        jit_job_release(&a->jobs[i]);
    free(a->jobs);
    kvx_error_clear(&a->err);
    free(a);
}

static void *ahead_main(void *arg)
{
    Ahead *a = arg;
    jit_compile_all(a->jobs, a->n, &a->jo, NULL, NULL, &a->err);
    return NULL;
}

/* Free the cancelled Aheads behind a whose threads have ended (their
 * compiles in flight done); the others stay linked for a later call or
 * ahead_free. */
static void ahead_reap(Ahead *a)
{
    while (a && a->prev) {
        Ahead *p = a->prev;
        if (p->started && pthread_tryjoin_np(p->thread, NULL) != 0) {
            a = p;
            continue;
        }
        p->started = 0;
        a->prev = p->prev;
        p->prev = NULL;
        ahead_free(p);
    }
}

/* Stop a's compiles that have not started; a's thread is joined later. */
static void ahead_cancel(Ahead *a)
{
    if (a)
        __atomic_store_n(&a->cancel, 1, __ATOMIC_RELAXED);
}

/* The sources of the next up to `left` variants, less those of the asked
 * ones (the round compiles them), as jobs of a.  Beyond the next batch as
 * far as --ahead, by default SEARCH_AHEAD_PER_PROC a compile process: a
 * guess (local, model) misses less with more of the strategy's likely next
 * asks compiled. */
static void ahead_jobs(SearchRun *sr, Search *se, const int *asked, int nasked, int left, int procs, Ahead *a)
{
    int want = sr->o->ahead >= 0 ? sr->o->ahead
             : sr->o->batch > SEARCH_AHEAD_PER_PROC * procs ? sr->o->batch : SEARCH_AHEAD_PER_PROC * procs;
    int peek[4096], n = search_peek(se, peek, left < want ? left : want < 4096 ? want : 4096);
    const Plan *p = sr->p;
    unsigned char *seen = mem_calloc((size_t)p->nsrcs + 1, 1);
    for (int i = 0; i < nasked; i++)
        for (int k = sr->pstart[asked[i]]; k < sr->pstart[asked[i] + 1]; k++)
            seen[p->point_src[sr->pts[k]]] = 1;
    a->jobs = mem_calloc((size_t)p->nsrcs + 1, sizeof(JitJob));
    const Spec *s = sr->r->plan.s;
    for (int i = 0; i < n; i++)
        for (int k = sr->pstart[peek[i]]; k < sr->pstart[peek[i] + 1]; k++) {
            int src = p->point_src[sr->pts[k]];
            if (seen[src]++)
                continue;
            const Source *so = &p->srcs[src];
            a->jobs[a->n++] = (JitJob){.name = so->file, .source = so->text, .arch = sr->r->plan.facts.arch,
                                       .options = s->options, .noptions = s->noptions, .use_cccl = s->use_cccl};
        }
    free(seen);
}

/* A new Ahead for the round of the asked candidates, after prev (cancelled
 * here; the cancelled ones behind it freed where their threads have ended);
 * NULL when nothing is left to compile ahead (prev then joined here). */
static Ahead *ahead_start(SearchRun *sr, Search *se, const int *asked, int nasked, int left, Ahead *prev)
{
    ahead_cancel(prev);
    ahead_reap(prev);
    int procs = sr->o->jobs > 0 ? sr->o->jobs : pool_cores();
    Ahead *a = mem_calloc(1, sizeof *a);
    if (!sr->o->no_cache && left > 0)
        ahead_jobs(sr, se, asked, nasked, left, procs, a);
    if (a->n == 0) {
        ahead_free(prev);
        ahead_free(a);
        return NULL;
    }
    /* Every process: the round's own sources were mostly compiled ahead
     * (or are in flight, and waited for), so its compile processes mostly
     * wait; its true misses share the cores with these for a moment. */
    a->jo = (JitOptions){.cache_dir = sr->r->cache, .threads = procs, .use_cache = 1, .cancel = &a->cancel,
                         .group = sr->r->o.group, .profile = sr->r->o.profile ? &sr->r->jprof : NULL};
    a->prev = prev;
    a->started = pthread_create(&a->thread, NULL, ahead_main, a) == 0;
    return a;
}

/* The round's sources and those of them the cache held (compiled ahead, or
 * earlier): every case of the round is done, so every source is too. */
static void round_hits(RunSession *r, int *n, int *hits)
{
    pthread_mutex_lock(&r->comp.mu);
    *n = r->comp.n;
    for (int i = 0; i < r->comp.n; i++)
        *hits += r->comp.ready[i] && r->comp.jobs[i].cached;
    pthread_mutex_unlock(&r->comp.mu);
}

/* The wall clock at which a time budget ends the round about to start: a
 * wall-min budget's end; a gpu-min one's when what is left of it is spent
 * on every GPU at once (GPU time runs no faster than the wall on each); 0
 * for a budget of variants. */
static double stop_at(const SearchRun *sr, const SearchTally *t)
{
    double ms = sr->budget.amount * 60000;
    if (sr->budget.kind == SEARCH_BUDGET_WALL_MIN)
        return t->t0 + ms;
    if (sr->budget.kind == SEARCH_BUDGET_GPU_MIN)
        return wall_now_ms() + fmax(ms - t->gpu_ms, 0) / (sr->r->workers.ndev > 0 ? sr->r->workers.ndev : 1);
    return 0;
}

/* One batch: asked, run as a round, told.  0 to go on, -1 when the space
 * is spent, else the exit status to stop with. */
static int search_batch(SearchRun *sr, Search *se, int total, SearchTally *t, Ahead **ahead)
{
    const RunOpts *o = sr->o;
    int asked[4096], n = 0, rc = 0;
    unsigned char *only = mem_alloc((size_t)sr->p->npoints + 1);
    while (n < o->batch && t->done + n < total && (asked[n] = search_ask(se)) >= 0)
        n++;
    /* The batch's cases not stored yet; -1 when the store failed. */
    int unstored = n ? batch_points(sr, sr->r->store.st, asked, n, only) : 0;
    if (n == 0 || unstored < 0) {
        free(only);
        return n == 0 ? -1 : 3;     /* the space is spent; the store failed */
    }
    int nahead = 0, nsrc = 0, hits = 0;
    if (unstored > 0) {
        *ahead = ahead_start(sr, se, asked, n, total - t->done - n, *ahead);
        nahead = *ahead ? (*ahead)->n : 0;
        run_stage_end(&sr->r->prof, RUN_STAGE_search);
        sr->r->stop_at_ms = stop_at(sr, t);
        rc = run_session_round(sr->r, only);
        round_hits(sr->r, &nsrc, &hits);
    }
    int timed = sr->r->stop_at_ms > 0 && wall_now_ms() >= sr->r->stop_at_ms;
    int told = rc ? 0 : tell_batch(sr, se, asked, n, timed, t);
    free(only);
    if (told > 0 && timed) {
        t->time_up = 1;
        fprintf(stderr, "kvx run: the time budget ended batch %d in flight: its variants not measured whole "
                "are not told\n", t->batches + 1);
    } else if (told > 0) {
        fprintf(stderr, "kvx run: a case of the search's batch %d is not stored; a run again goes on\n",
                t->batches + 1);
    }
    if (told && !t->time_up)
        return told < 0 ? 3 : 1;
    char what[512];
    snprintf(what, sizeof what, "search  batch %d: %d variant%s (%d cases measured, %d of %d sources from the "
             "cache, %d compiling ahead); %d of %d variants told (%d already stored, no budget spent), %d invalid;",
             ++t->batches, n, n == 1 ? "" : "s", unstored, hits, nsrc, nahead, t->told, sr->sp.n, t->free_told,
             t->invalid);
    if (rc == 0)
        print_best(sr, t, what);
    return rc;
}

/* The batches until the budget, the space, a stop or a failure ends the
 * search; then the session's summary and the search's.  The exit status. */
static int search_loop(SearchRun *sr)
{
    const RunOpts *o = sr->o;
    int kind;
    SearchParams par;
    char why[256];
    search_parse(o->search, &kind, &par, why, sizeof why);     /* the CLI checked it */
    Search *se = search_new_with(&sr->sp, kind, o->search_seed, &par);
    int total = search_budget_variants(&sr->budget, sr->sp.n), rc = 0;
    SearchTally t = {.best = -1, .t0 = wall_now_ms()};
    int npts = 0;
    for (int c = 0; c < sr->sp.n; c++)
        npts = sr->pstart[c + 1] - sr->pstart[c] > npts ? sr->pstart[c + 1] - sr->pstart[c] : npts;
    printf("search  %s, seed %llu, objective %s: %d variants of up to %d point%s, budget %s = %d variant%s%s\n",
           o->search, (unsigned long long)o->search_seed, o->objective, sr->sp.n, npts, npts == 1 ? "" : "s", o->budget,
           total, total == 1 ? "" : "s", sr->budget.kind >= SEARCH_BUDGET_GPU_MIN ? " or the time" : "");
    fflush(stdout);
    Ahead *ahead = NULL;
    while (rc == 0 && t.done < total && !over_time(sr, &t) && !run_stopping())
        rc = search_batch(sr, se, total, &t, &ahead);
    ahead_cancel(ahead);
    ahead_free(ahead);
    search_free(se);
    run_stage_end(&sr->r->prof, RUN_STAGE_search);
    int frc = sr->r->begun ? run_session_finish(sr->r) : sr->r->rc;
    if (rc > 1)
        return rc;
    char what[512];
    snprintf(what, sizeof what, "\nsearch  %d of %d variants (%.1f%%; %d of them already stored, no budget spent), "
             "%d invalid, in %.1f s (%.1f s of cases);", t.told, sr->sp.n, 100.0 * t.told / (sr->sp.n ? sr->sp.n : 1),
             t.free_told, t.invalid, (wall_now_ms() - t.t0) / 1000, t.gpu_ms / 1000);
    print_best(sr, &t, what);
    const RunSession *r = sr->r;
    printf("results %s; tabulate with: kvx table --db %s --spec %s --rows ... --cols ... (cells the search did"
           " not measure read 'unmeasured')\n", r->store.db_path, r->store.db_path, r->plan.s->name);
    return frc ? frc : rc > 0 ? rc : 0;     /* -1: the space was spent */
}

int run_search(const RunOpts *o, int argc, char **argv)
{
    SearchRun *sr = mem_calloc(1, sizeof *sr);
    sr->o = o;
    sr->r = mem_calloc(1, sizeof *sr->r);
    char why[160];
    int rc = 2;
    if (search_budget_parse(o->budget, 1, &sr->budget, why, sizeof why) != 0) {
        kvx_error_set(&sr->err, KVX_EINPUT, NULL, "--budget is %s", why);
        goto fail;
    }
    if (search_objective_parse(o->objective, "--objective", &sr->obj, &sr->err) != 0 ||
        (rc = search_open(sr, argc, argv)) != 0)
        goto fail;
    RunSession *r = sr->r;
    RunKeyEnv ke = {.options = r->plan.opts_text, .arch = r->plan.facts.arch, .device_uuid = r->workers.infos[r->workers.devs[0]].uuid,
                    .measure_json = r->plan.mjson};
    if ((rc = search_space(sr, &ke)) != 0)
        goto fail;
    rc = search_loop(sr);
fail:
    if (sr->err.code)
        kvx_error_print(&sr->err, stderr);
    kvx_error_clear(&sr->err);
    free(sr->vals), free(sr->pstart), free(sr->pts), free(sr->keys), free(sr->sel);
    search_objective_free(&sr->obj);
    run_session_close(sr->r);
    free(sr->r);
    free(sr);
    return rc;
}
