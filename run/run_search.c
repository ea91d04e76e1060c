/* run_search: `kvx run SPEC --search STRATEGY`, a budgeted search over the
 * spec's variants (run/search.h) instead of every selected point.
 *
 * The space: the selected points (--where, and where: before it) that are
 * objective points (--objective VALUE,POINTS), grouped by their code axes'
 * values; a variant is measured at all of its objective points.  The search
 * goes in batches: the strategy asks for --batch variants, their cases not
 * yet stored run as one run_main (o->only: a run row of its own, recording
 * the search), and each variant's outcome is read back from the store and
 * told in ask order.  A variant whose cases are all stored is told without
 * running: a killed search, run again, replays its path from the stored
 * rows and goes on where it stopped, and a search in a database that holds
 * an exhaustive run measures nothing.  Within a batch the sources compile
 * on the compile processes while the first cases run (run.c). */
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
    Spec *s;
    DeviceInfo infos[RUN_MAX_DEVICES];
    int devs[RUN_MAX_DEVICES];
    DeviceFacts facts;
    Plan p;
    unsigned char *sel;         /* the objective points within --where */
    SearchObjective obj;
    SearchBudget budget;
    int code[SEARCH_MAX_AXES];  /* the code axes' spec indices */
    int nvals[SEARCH_MAX_AXES];
    int *vals;                  /* per candidate, its code values */
    int *pstart, *pts;          /* candidate c's points: pts[pstart[c] .. pstart[c + 1]) */
    char (*keys)[65];           /* per point of the plan (objective points only) */
    SearchSpace sp;
    const char *db;
} SearchRun;

/* The spec, the GPUs (one arch), the plan and the objective points. */
static int search_open(SearchRun *sr)
{
    const RunOpts *o = sr->o;
    int ngpu = 0, ndev;
    if (!(sr->s = spec_load(o->spec_path, &sr->err)))
        return 2;
    if (worker_probe(sr->infos, RUN_MAX_DEVICES, &ngpu, &sr->err) != 0 || ngpu == 0) {
        fprintf(stderr, "kvx run: %s (plan, gen, compile and inspect work without one)\n",
                sr->err.code ? sr->err.msg : "no GPU found: measuring needs a GPU");
        kvx_error_clear(&sr->err);
        return RUN_EXIT_NO_GPU;
    }
    if ((ndev = cmd_run_parse_devices(o->devices, ngpu, sr->devs, &sr->err)) <= 0)
        return 2;
    for (int i = 1; i < ndev; i++)
        if (sr->infos[sr->devs[i]].cc_major != sr->infos[sr->devs[0]].cc_major ||
            sr->infos[sr->devs[i]].cc_minor != sr->infos[sr->devs[0]].cc_minor) {
            kvx_error_set(&sr->err, KVX_EINPUT, NULL, "--search runs on GPUs of one arch (--devices)");
            return 2;
        }
    worker_device_info_facts(&sr->infos[sr->devs[0]], &sr->facts);
    if (plan_build(sr->s, &sr->facts, &sr->p, &sr->err) != 0 || !(sr->sel = plan_select(&sr->p, o->where, &sr->err)))
        return 2;
    for (int i = 0; i < sr->p.npoints; i++) {
        int m = sr->sel[i] && sr->obj.where ? plan_point_matches(&sr->p, i, sr->obj.where, &sr->err) : sr->sel[i];
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
    const Plan *p = &sr->p;
    int na = 0, n = 0, tuple[SEARCH_MAX_AXES];
    for (int a = 0; a < sr->s->naxes; a++)
        if (p->code_axes & (1ULL << a))
            sr->nvals[na] = sr->s->axes[a].nvals, sr->code[na++] = a;
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
 * *cost_ms its cases' time; 1 when every case of it is stored, 0 when
 * some is not, -1 with err. */
static int outcome(SearchRun *sr, Store *st, int c, double *y, double *cost_ms)
{
    int n = sr->pstart[c + 1] - sr->pstart[c], all = 1;
    double *v = mem_alloc(sizeof(double) * (size_t)n);
    *cost_ms = 0;
    for (int k = 0; k < n; k++) {
        char status[32];
        double cost;
        if (store_search_case(store_db(st), sr->keys[sr->pts[sr->pstart[c] + k]], sr->obj.column, status, &v[k],
                              &cost, &sr->err) != 0) {
            free(v);
            return -1;
        }
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
    return plan_point_label(&sr->p, sr->pts[sr->pstart[c]], sr->p.code_axes);
}

/* The points of the asked candidates not yet stored into only; how many. */
static int batch_points(SearchRun *sr, Store *st, const int *asked, int n, unsigned char *only)
{
    int count = 0;
    memset(only, 0, (size_t)sr->p.npoints + 1);
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
    int done, invalid, batches;
    int best;                   /* the best valid candidate, -1 none */
    double best_y;
    double gpu_ms;              /* the told candidates' cases' time in their runs */
    double t0;                  /* wall_now_ms() at the search's start */
} SearchTally;

/* Tell the strategy the outcome of the n asked candidates, in ask order.
 * 0, 1 when a case of them is not stored (the batch was stopped), -1 with
 * err. */
static int tell_batch(SearchRun *sr, Search *se, const int *asked, int n, SearchTally *t)
{
    Store *st = store_open(sr->db, &sr->err);
    int rc = st ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        double y, cost;
        int all = outcome(sr, st, asked[i], &y, &cost);
        if (all <= 0) {
            rc = all < 0 ? -1 : 1;
            break;
        }
        search_tell(se, asked[i], y);
        t->done++;
        t->gpu_ms += cost;
        t->invalid += isnan(y);
        if (!isnan(y) && (t->best < 0 || y < t->best_y))
            t->best = asked[i], t->best_y = y;
    }
    store_close(st);
    return rc;
}

/* Whether a time budget is spent. */
static int over_time(const SearchRun *sr, const SearchTally *t)
{
    double min = sr->budget.amount;
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

/* Compiles ahead: while a batch runs, the sources of the variants the
 * strategy would ask for next (search_peek: exact for random, a guess for
 * the others) compile into the cache on a thread of their own, so that the
 * next batch's run finds them there. */
typedef struct Ahead {
    pthread_t thread;
    int started;
    JitJob *jobs;
    int n;
    JitOptions jo;
    KvxError err;
    char *cache;
} Ahead;

static void *ahead_main(void *arg)
{
    Ahead *a = arg;
    jit_compile_all(a->jobs, a->n, &a->jo, NULL, NULL, &a->err);
    return NULL;
}

/* Start compiling the sources of the next up to `left` variants, less those
 * of the asked ones (the batch's run compiles them).  Beyond the next batch
 * as far as two sources a compile process: a guess (local, model) misses
 * less with more of the strategy's likely next asks compiled, and the wider
 * peek costs no wall while it fits the processes once or twice. */
static void ahead_start(SearchRun *sr, Search *se, const int *asked, int nasked, int left, Ahead *a)
{
    int procs = sr->o->jobs > 0 ? sr->o->jobs : pool_cores();
    int want = sr->o->batch > 2 * procs ? sr->o->batch : 2 * procs;
    int peek[4096], n = search_peek(se, peek, left < want ? left : want < 4096 ? want : 4096);
    unsigned char *seen = mem_calloc((size_t)sr->p.nsrcs + 1, 1);
    for (int i = 0; i < nasked; i++)
        for (int k = sr->pstart[asked[i]]; k < sr->pstart[asked[i] + 1]; k++)
            seen[sr->p.point_src[sr->pts[k]]] = 1;
    a->jobs = mem_calloc((size_t)sr->p.nsrcs + 1, sizeof(JitJob));
    for (int i = 0; i < n; i++)
        for (int k = sr->pstart[peek[i]]; k < sr->pstart[peek[i] + 1]; k++) {
            int src = sr->p.point_src[sr->pts[k]];
            if (seen[src]++)
                continue;
            const Source *so = &sr->p.srcs[src];
            a->jobs[a->n++] = (JitJob){.name = so->file, .source = so->text, .arch = sr->facts.arch,
                                       .options = sr->s->options, .noptions = sr->s->noptions,
                                       .use_cccl = sr->s->use_cccl};
        }
    free(seen);
    a->cache = sr->o->cache_dir ? mem_strdup(sr->o->cache_dir) : jit_default_cache_dir();
    a->jo = (JitOptions){.cache_dir = a->cache, .threads = sr->o->jobs, .use_cache = 1};
    a->started = a->n > 0 && pthread_create(&a->thread, NULL, ahead_main, a) == 0;
}

/* Wait for the compiles ahead; a failure is the next batch's to report. */
static void ahead_join(Ahead *a)
{
    if (a->started)
        pthread_join(a->thread, NULL);
    for (int i = 0; i < a->n; i++)
        jit_job_release(&a->jobs[i]);
    free(a->jobs);
    free(a->cache);
    kvx_error_clear(&a->err);
}

/* One batch: asked, run, told.  0 to go on, -1 when the space is spent,
 * else the exit status to stop with. */
static int search_batch(SearchRun *sr, Search *se, int total, SearchTally *t, int *worst, int argc,
                        char **argv)
{
    const RunOpts *o = sr->o;
    int asked[4096], n = 0, rc = 0;
    unsigned char *only = mem_alloc((size_t)sr->p.npoints + 1);
    while (n < o->batch && t->done + n < total && (asked[n] = search_ask(se)) >= 0)
        n++;
    /* todo: the batch's cases not stored yet; -1 when the store failed. */
    int todo = -1;
    Store *st = n ? store_open(sr->db, &sr->err) : NULL;
    if (st)
        todo = batch_points(sr, st, asked, n, only);
    store_close(st);
    if (n == 0 || todo < 0) {
        free(only);
        return n == 0 ? -1 : 3;     /* the space is spent; the store failed */
    }
    Ahead ahead = {0};
    if (todo > 0) {
        RunOpts bo = *o;
        bo.only = only;
        if (!o->no_cache && total - t->done - n > 0)
            ahead_start(sr, se, asked, n, total - t->done - n, &ahead);
        int brc = run_main(&bo, argc, argv);
        ahead_join(&ahead);
        *worst = brc > *worst ? brc : *worst;
        rc = brc >= 2 ? brc : 0;    /* bad input, a store failure, no GPU, a signal */
    }
    int told = rc ? 0 : tell_batch(sr, se, asked, n, t);
    free(only);
    if (told > 0)
        fprintf(stderr, "kvx run: a case of the search's batch %d is not stored; a run again goes on\n",
                t->batches + 1);
    if (told)
        return told < 0 ? 3 : 1;
    char what[256];
    snprintf(what, sizeof what, "search  batch %d: %d variant%s (%d cases measured, %d sources compiled ahead); "
             "%d of %d variants told, %d invalid;", ++t->batches, n, n == 1 ? "" : "s", todo, ahead.n, t->done,
             sr->sp.n, t->invalid);
    if (rc == 0)
        print_best(sr, t, what);
    return rc;
}

/* The batches until the budget, the space or a failure ends the search. */
static int search_loop(SearchRun *sr, int argc, char **argv)
{
    const RunOpts *o = sr->o;
    Search *se = search_new(&sr->sp, search_find(o->search), o->search_seed);
    int total = search_budget_variants(&sr->budget, sr->sp.n), worst = 0, rc = 0;
    SearchTally t = {.best = -1, .t0 = wall_now_ms()};
    int npts = 0;
    for (int c = 0; c < sr->sp.n; c++)
        npts = sr->pstart[c + 1] - sr->pstart[c] > npts ? sr->pstart[c + 1] - sr->pstart[c] : npts;
    printf("search  %s, seed %s, objective %s: %d variants of up to %d point%s, budget %s = %d variant%s%s\n",
           o->search, o->search_seed_text, o->objective, sr->sp.n, npts, npts == 1 ? "" : "s", o->budget,
           total, total == 1 ? "" : "s", sr->budget.kind >= SEARCH_BUDGET_GPU_MIN ? " or the time" : "");
    fflush(stdout);
    while (rc == 0 && t.done < total && !over_time(sr, &t))
        rc = search_batch(sr, se, total, &t, &worst, argc, argv);
    search_free(se);
    if (rc > 0 && rc != 1)
        return rc;
    char what[256];
    snprintf(what, sizeof what, "\nsearch  %d of %d variants (%.1f%%), %d invalid, in %.1f s (%.1f s of cases);",
             t.done, sr->sp.n, 100.0 * t.done / (sr->sp.n ? sr->sp.n : 1), t.invalid, (wall_now_ms() - t.t0) / 1000,
             t.gpu_ms / 1000);
    print_best(sr, &t, what);
    printf("results %s; tabulate with: kvx table --db %s --spec %s --rows ... --cols ... (cells the search did"
           " not measure read 'unmeasured')\n", sr->db, sr->db, sr->s->name);
    return rc ? rc : worst;
}

/* The store keys' environment, as session_plan makes it, into ke. */
static char *key_env(SearchRun *sr, RunKeyEnv *ke, char *opts, size_t nopts)
{
    MeasureSettings m = sr->s->measure;
    cmd_run_apply_overrides(sr->o, &m);
    opts[0] = 0;
    for (int i = 0; i < sr->s->noptions; i++)
        snprintf(opts + strlen(opts), nopts - strlen(opts), "%s%s", i ? " " : "", sr->s->options[i]);
    char *mjson = measure_json(&m);
    *ke = (RunKeyEnv){.options = opts, .arch = sr->facts.arch, .device_uuid = sr->infos[sr->devs[0]].uuid,
                      .measure_json = mjson};
    return mjson;
}

int run_search(const RunOpts *o, int argc, char **argv)
{
    SearchRun *sr = mem_calloc(1, sizeof *sr);
    sr->o = o;
    sr->db = o->db ? o->db : RESULTS_DEFAULT_DB;
    char why[160], opts[1024];
    char *mjson = NULL;
    RunKeyEnv ke;
    int rc = 2;
    if (search_budget_parse(o->budget, 1, &sr->budget, why, sizeof why) != 0) {
        kvx_error_set(&sr->err, KVX_EINPUT, NULL, "--budget is %s", why);
        goto fail;
    }
    if (search_objective_parse(o->objective, "--objective", &sr->obj, &sr->err) != 0 ||
        (rc = search_open(sr)) != 0)
        goto fail;
    mjson = key_env(sr, &ke, opts, sizeof opts);
    if ((rc = search_space(sr, &ke)) != 0)
        goto fail;
    if (!o->db) {
        char *dir = path_dir(sr->db);
        file_mkdir_p(dir);
        free(dir);
    }
    rc = search_loop(sr, argc, argv);
fail:
    if (sr->err.code)
        kvx_error_print(&sr->err, stderr);
    kvx_error_clear(&sr->err);
    free(mjson);
    free(sr->vals), free(sr->pstart), free(sr->pts), free(sr->keys), free(sr->sel);
    search_objective_free(&sr->obj);
    if (sr->p.spec)
        plan_free(&sr->p);
    spec_free(sr->s);
    free(sr);
    return rc;
}
