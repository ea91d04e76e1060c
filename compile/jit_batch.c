/* jit_batch: jit_compile_all (jit.h), a batch of jobs compiled on a pool of
 * compile threads, each with a compile process of its own once jitproc_enable
 * was called (jitproc.h).
 *
 * A batch runs in three passes over its jobs:
 *   look up   every job's key and cache entry, on the pool: a hit is done at
 *             once (its after hook and on_done), a miss waits for a compile;
 *   compile   the misses, as units: a grouped program of several sources
 *             that may share one (jit_group.c; JitOptions.group), or a source
 *             alone; each unit one task, or a chain of units that share
 *             included headers (a process precompiles them: pch_mark); the
 *             units with headers first, each kind in the given order;
 *   deferred  the jobs whose key another thread of this process was compiling
 *             when they were looked up (a search compiles ahead beside a
 *             round): waited for, then taken from the cache.
 *
 * Invariants:
 * - A key is compiled by one thread of a process at a time (flight): a claim
 *   is taken without waiting in the first pass, so no thread ever waits while
 *   it holds claims of its own.
 * - Each job's outputs are its own compile's as far as a reader can tell
 *   (jit_group.c), and its on_done is called once, serialised, unless the
 *   batch was cancelled before it or a failure outside its source stopped it.
 * - The cache is best-effort: the first job it refuses prints one warning (a
 *   process's first), and the batch writes to it no more. */
#include "jit_internal.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pool.h"
#include "inspect.h"
#include "jitproc.h"

/* The largest program a batch makes by itself (JitOptions.group 0): past
 * it, a program's per-source cost no longer falls (docs/design.md, "Many
 * variants per NVRTC program"), and a member waits longer for its program. */
#define GROUP_AUTO_MAX 8

/* ---- keys in flight ---------------------------------------------------------------- */

/* Cache keys being compiled in this process: a second compile of a key (a
 * search compiles ahead on one thread while a round compiles on another)
 * waits for the first and then takes its cache entry, instead of running
 * NVRTC twice. */
static pthread_mutex_t flight_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flight_cv = PTHREAD_COND_INITIALIZER;
static char (*flight)[65];
static int nflight, flight_cap;

static int flight_find(const char *key)
{
    for (int i = 0; i < nflight; i++)
        if (!strcmp(flight[i], key))
            return i;
    return -1;
}

/* Claim key: 1, or 0 when another thread holds it and wait is 0 (with wait,
 * once it is released). */
static int flight_claim(const char *key, int wait)
{
    pthread_mutex_lock(&flight_mu);
    while (flight_find(key) >= 0 && wait)
        pthread_cond_wait(&flight_cv, &flight_mu);
    int got = flight_find(key) < 0;
    if (got) {
        if (nflight == flight_cap) {
            flight_cap = flight_cap ? 2 * flight_cap : 16;
            flight = mem_realloc(flight, sizeof *flight * (size_t)flight_cap);
        }
        memcpy(flight[nflight++], key, 65);
    }
    pthread_mutex_unlock(&flight_mu);
    return got;
}

static void flight_release(const char *key)
{
    pthread_mutex_lock(&flight_mu);
    int i = flight_find(key);
    if (i >= 0)
        memcpy(flight[i], flight[--nflight], 65);
    pthread_cond_broadcast(&flight_cv);
    pthread_mutex_unlock(&flight_mu);
}

/* ---- the batch -------------------------------------------------------------------- */

enum { JOB_MISS, JOB_DONE, JOB_DEFER, JOB_SKIP };

/* One job's state: its options and key (jit_prepare), its entry, where it is. */
typedef struct Prep {
    const char **opts;
    int nopts;
    char *dir;
    int overwrite;
    int claimed;                /* it holds the key's flight claim */
    int state;
    GroupMember member;         /* its entry points, when it may be grouped */
    char *macros;               /* member.macros, owned */
    int groupable;
} Prep;

/* A unit of the compile pass: jobs idx[0..n), one program or one source. */
typedef struct Unit {
    int *idx;
    int n;
    uint64_t sig;               /* include_sig of its first job */
    int pch;
} Unit;

typedef struct Batch {
    JitJob *jobs;
    Prep *prep;
    int n;
    const JitOptions *opt;
    void (*on_done)(void *ctx, JitJob *job);
    void *ctx;
    JitProcs *procs;            /* NULL: NVRTC on the pool's threads */
    pthread_mutex_t mu;         /* serialises on_done, the first error, cache_off, prof */
    KvxError first;
    int failed;
    int cache_off;              /* the cache could not be written: read it, write no more */
    JitProfile *prof;
    double t0;
} Batch;

static int cancelled(const Batch *b)
{
    return b->opt->cancel && __atomic_load_n(b->opt->cancel, __ATOMIC_RELAXED);
}

/* A fresh compile's warnings on stderr, mapped to the template: once, when
 * it compiles; a cache hit keeps them in its log.txt but says nothing. */
static void print_warnings(const JitJob *job)
{
    char *w = jit_log_warnings(job->log);
    if (!w)
        return;
    char *mapped = jit_log_map(job, w);
    fprintf(stderr, "kvx: %s [%s] compiled with warnings:\n%s", jit_job_name(job), job->arch, mapped);
    free(mapped);
    free(w);
}

/* Job i is compiled or found: its after hook, then (serialised) the cache's
 * warning, its own warnings and on_done; rc != 0 records the first error. */
static void finish(Batch *b, int i, int rc, KvxError *e)
{
    JitJob *job = &b->jobs[i];
    if (rc == 0 && b->opt->after)
        b->opt->after(b->opt->after_ctx, job);
    pthread_mutex_lock(&b->mu);
    /* Once a process (kvx compile calls this once per arch), for the first
     * job the cache refused; jobs already compiling may refuse it too. */
    static atomic_int warned;
    if (job->cache_warning && !b->cache_off) {
        b->cache_off = 1;
        if (!atomic_exchange(&warned, 1))
            fprintf(stderr, "kvx: warning: the compile cache cannot be written (%s): compiling without it\n",
                    job->cache_warning);
    }
    if (rc == 0 && job->ok && !job->cached)
        print_warnings(job);
    if (rc != 0) {
        if (!b->failed) {
            b->first = *e;           /* takes the log along */
            e->log = NULL;
            e->code = 0;
        }
        b->failed = 1;
    } else if (b->on_done) {
        b->on_done(b->ctx, job);
    }
    pthread_mutex_unlock(&b->mu);
}

/* Profiles are filled under one lock: several batches may share one. */
static pthread_mutex_t prof_mu = PTHREAD_MUTEX_INITIALIZER;

static void prof_add(Batch *b, double *slot, double ms)
{
    if (!b->prof)
        return;
    pthread_mutex_lock(&prof_mu);
    *slot += ms;
    pthread_mutex_unlock(&prof_mu);
}

/* ---- pass 1: look up ---------------------------------------------------------------- */

static int use_cache(const Batch *b)
{
    return b->opt->cache_dir && b->opt->use_cache;
}

/* Job i's key claimed (without waiting: else deferred) and its entry read. */
static void look_up(long i, void *arg)
{
    Batch *b = arg;
    JitJob *job = &b->jobs[i];
    Prep *p = &b->prep[i];
    if (cancelled(b)) {
        p->state = JOB_SKIP;
        return;
    }
    if (use_cache(b) && !(p->claimed = flight_claim(job->key, 0))) {
        p->state = JOB_DEFER;
        return;
    }
    double t0 = wall_now_ms();
    int hit = jit_cache_lookup(job, b->opt, &p->dir, &p->overwrite);
    prof_add(b, b->prof ? &b->prof->cache_ms : NULL, wall_now_ms() - t0);
    p->state = hit ? JOB_DONE : JOB_MISS;
    if (!hit)
        return;
    if (p->claimed)
        flight_release(job->key);
    p->claimed = 0;
    KvxError e = {0};
    finish(b, (int)i, 0, &e);
}

/* ---- pass 2: the misses as units ------------------------------------------------------ */

/* FNV-1a of source's #include lines, its arch and CCCL: jobs with equal
 * values precompile the same headers; 0 for a source without one. */
static uint64_t include_sig(const JitJob *j)
{
    if (!jit_source_includes(j->source))
        return 0;
    uint64_t h = 1469598103934665603ull;
    for (const char *p = strstr(j->source, "#include"); p; p = strstr(p + 1, "#include"))
        for (const char *q = p; *q && *q != '\n'; q++)
            h = (h ^ (unsigned char)*q) * 1099511628211ull;
    for (const char *q = j->arch; q && *q; q++)
        h = (h ^ (unsigned char)*q) * 1099511628211ull;
    return (h ^ (uint64_t)j->use_cccl) | 1;
}

/* Whether jobs i and k may share a program: the same arch, CCCL and full
 * option list. */
static int compatible(const Batch *b, int i, int k)
{
    const JitJob *x = &b->jobs[i], *y = &b->jobs[k];
    const Prep *p = &b->prep[i], *q = &b->prep[k];
    if (strcmp(x->arch, y->arch) || !x->use_cccl != !y->use_cccl || p->nopts != q->nopts)
        return 0;
    for (int o = 0; o < p->nopts; o++)
        if (strcmp(p->opts[o], q->opts[o]))
            return 0;
    return 1;
}

/* Whether unit u already has a source of job k's name (a program's headers
 * are named by them). */
static int name_taken(const Batch *b, const Unit *u, int k)
{
    for (int m = 0; m < u->n; m++)
        if (!strcmp(jit_job_name(&b->jobs[u->idx[m]]), jit_job_name(&b->jobs[k])))
            return 1;
    return 0;
}

/* The programs' size: JitOptions.group, or for 0 as many sources as keep
 * four units a thread, at most GROUP_AUTO_MAX. */
static int group_size(const Batch *b, int misses, int threads)
{
    if (b->opt->group > 0)
        return b->opt->group < JITPROC_MAX_GROUP ? b->opt->group : JITPROC_MAX_GROUP;
    int g = misses / (4 * threads);
    return g < 1 ? 1 : g > GROUP_AUTO_MAX ? GROUP_AUTO_MAX : g;
}

/* The misses into units, in order: each groupable one joins the first open
 * unit it is compatible with, until that unit has g; the others alone.
 * idx: room for n indices.  The number of units. */
static int units_make(Batch *b, int g, int *idx, Unit *u)
{
    int nu = 0, ni = 0;
    int *open = mem_alloc(sizeof *open * (size_t)(b->n + 1)), nopen = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->prep[i].state != JOB_MISS)
            continue;
        int at = -1;
        for (int k = 0; k < nopen && at < 0 && b->prep[i].groupable && g > 1; k++) {
            Unit *o = &u[open[k]];
            if (compatible(b, o->idx[0], i) && !name_taken(b, o, i))
                at = k;
        }
        if (at < 0) {
            u[nu] = (Unit){.idx = idx + ni, .n = 0, .sig = include_sig(&b->jobs[i])};
            ni += g > 1 && b->prep[i].groupable ? g : 1;
            if (g > 1 && b->prep[i].groupable)
                open[nopen++] = nu;
            at = g > 1 && b->prep[i].groupable ? nopen - 1 : -1;
            nu++;
        }
        Unit *t = at >= 0 ? &u[open[at]] : &u[nu - 1];
        t->idx[t->n++] = i;
        if (at >= 0 && t->n == g)
            open[at] = open[--nopen];
    }
    free(open);
    return nu;
}

/* unit->pch where more units share its headers than there are processes:
 * one of them then compiles two or more and reuses the first's PCH; a
 * process that gets only one would pay for making it (0.4 s) and gain
 * nothing. */
static void pch_mark(Unit *u, int nu, int threads)
{
    for (int i = 0; i < nu; i++) {
        int same = 0;
        for (int k = 0; k < nu && u[i].sig; k++)
            same += u[k].sig == u[i].sig;
        u[i].pch = same > threads;
    }
}

/* A task: units order[0..n) of one thread, compiled in turn (a chain of
 * units sharing headers, which one compile process takes). */
typedef struct Task {
    Batch *b;
    Unit *units;
    const int *order;
    int n;
} Task;

/* The tasks, in order[]: first the units with headers, those of a pch group
 * (k units) in chains, its share of the threads of them (k * threads / n, at
 * least 1), each one process's; then the rest, one unit a task; each kind in
 * the given order.  The number of tasks. */
static int tasks_make(Batch *b, Unit *u, int nu, int threads, int *order, Task *tasks)
{
    int no = 0, nt = 0;
    unsigned char *done = mem_calloc((size_t)(nu > 0 ? nu : 1), 1);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nu; i++) {
            if (done[i] || (u[i].sig != 0) != !pass)
                continue;
            int k = 0;
            for (int q = i; q < nu && u[i].pch; q++)
                k += u[q].sig == u[i].sig && !done[q];
            int chains = (int)((long)k * threads / nu), len = 1;
            if (u[i].pch)
                len = (k + (chains > 1 ? chains : 1) - 1) / (chains > 1 ? chains : 1);
            tasks[nt] = (Task){b, u, order + no, 0};
            for (int q = i; q < nu && tasks[nt].n < len; q++)
                if (!done[q] && (q == i || (u[i].pch && u[q].sig == u[i].sig))) {
                    done[q] = 1;
                    order[no++] = q;
                    tasks[nt].n++;
                }
            nt++;
        }
    free(done);
    return nt;
}

/* The unit's sources compiled: in a compile process (a chain's -pch first on
 * the line, as NVRTC requires; not in the key: the same bytes come out), or
 * on this thread.  0, 1 when a process died on some (crashed: not kept), -1
 * with err. */
static int unit_compile(Batch *b, const Unit *u, JitJob **jobs, GroupMember *m, KvxError *err)
{
    const Prep *p = &b->prep[u->idx[0]];
    const char **with = mem_calloc((size_t)p->nopts + 2, sizeof *with);
    int k = 0;
    if (u->pch && b->procs)
        with[k++] = "-pch";
    memcpy(with + k, p->opts, sizeof *p->opts * (size_t)p->nopts);
    k += p->nopts;
    /* NVRTC's own parts, with --profile: a trace file per compile, not in the key */
    static atomic_int traces;
    char trace[PATH_MAX + 64];
    if (b->prof && b->prof->trace) {
        const char *t = getenv("TMPDIR");
        snprintf(trace, sizeof trace, "--fdevice-time-trace=%s/kvx-trace-%ld-%d", t && *t ? t : "/tmp",
                 (long)getpid(), atomic_fetch_add(&traces, 1));
        with[k++] = trace;
    }
    if (!b->procs) {
        int rc = jit_group_compile(m, u->n, with, k, err);
        free(with);
        return rc;
    }
    JitTrip trip = {0};
    int rc = jitproc_compile(b->procs, jobs, u->n, with, k, &trip, err);
    free(with);
    if (b->prof) {
        pthread_mutex_lock(&prof_mu);
        b->prof->start_ms += trip.start_ms;
        b->prof->ipc_ms += trip.wall_ms - trip.work_ms;
        pthread_mutex_unlock(&prof_mu);
    }
    return rc;
}

/* The span of a unit and its sources' parts into the profile. */
static void unit_profile(Batch *b, const Unit *u, double t0, double t1)
{
    if (!b->prof)
        return;
    JitProfile *pr = b->prof;
    pthread_mutex_lock(&prof_mu);
    if (pr->nspans == pr->cap)
        pr->spans = mem_realloc(pr->spans, sizeof *pr->spans * (size_t)(pr->cap = pr->cap ? 2 * pr->cap : 64));
    pr->spans[pr->nspans++] = (JitSpan){t0 - b->t0, t1 - b->t0, u->n};
    pr->programs++;
    for (int i = 0; i < u->n; i++) {
        const JitJob *j = &b->jobs[u->idx[i]];
        pr->nvrtc_ms += j->compile_ms;
        pr->fe_ms += j->fe_ms, pr->nvvm_ms += j->nvvm_ms, pr->ptxas_ms += j->ptxas_ms;
        pr->facts_ms += j->facts_ms;
    }
    pthread_mutex_unlock(&prof_mu);
}

/* A compiled unit's jobs kept (their entries, unless their process died on
 * them), their claims released, each finished. */
static void unit_keep(Batch *b, const Unit *u, int rc, KvxError *e)
{
    pthread_mutex_lock(&b->mu);
    int store = !b->cache_off;
    pthread_mutex_unlock(&b->mu);
    for (int k = 0; k < u->n; k++) {
        int i = u->idx[k];
        JitJob *job = &b->jobs[i];
        Prep *p = &b->prep[i];
        int r = rc < 0 ? -1 : 0;
        if (r == 0 && !job->crashed) {
            double t0 = wall_now_ms();
            r = jit_keep_fresh(job, b->opt, p->opts, p->nopts, p->dir, p->overwrite, store, e);
            prof_add(b, b->prof ? &b->prof->cache_ms : NULL, wall_now_ms() - t0);
        }
        if (p->claimed)
            flight_release(job->key);
        p->claimed = 0;
        p->state = JOB_DONE;
        finish(b, i, r, e);
    }
}

static void unit_run(Batch *b, const Unit *u)
{
    JitJob **jobs = mem_alloc(sizeof *jobs * (size_t)u->n);
    GroupMember *m = mem_alloc(sizeof *m * (size_t)u->n);
    for (int k = 0; k < u->n; k++) {
        jobs[k] = &b->jobs[u->idx[k]];
        m[k] = b->prep[u->idx[k]].member;
        m[k].job = jobs[k];
    }
    KvxError e = {0};
    double t0 = wall_now_ms();
    int rc = cancelled(b) ? 2 : unit_compile(b, u, jobs, m, &e);
    if (rc == 2) {
        for (int k = 0; k < u->n; k++)     /* skipped: a search no longer wants them */
            if (b->prep[u->idx[k]].claimed)
                flight_release(jobs[k]->key), b->prep[u->idx[k]].claimed = 0;
    } else {
        unit_profile(b, u, t0, wall_now_ms());
        unit_keep(b, u, rc, &e);
    }
    kvx_error_clear(&e);
    free(m);
    free(jobs);
}

static void task_run(void *arg)
{
    Task *t = arg;
    for (int k = 0; k < t->n; k++)
        unit_run(t->b, &t->units[t->order[k]]);
}

/* ---- pass 3: what another thread was compiling ---------------------------------------- */

static void deferred(long i, void *arg)
{
    Batch *b = arg;
    Prep *p = &b->prep[i];
    if (p->state != JOB_DEFER)
        return;
    if (cancelled(b)) {
        p->state = JOB_SKIP;
        return;
    }
    p->claimed = flight_claim(b->jobs[i].key, 1);
    p->state = JOB_MISS;
    KvxError e = {0};
    if (jit_cache_lookup(&b->jobs[i], b->opt, &p->dir, &p->overwrite)) {
        flight_release(b->jobs[i].key);
        p->claimed = 0;
        finish(b, (int)i, 0, &e);
        return;
    }
    int one = (int)i;
    Unit u = {.idx = &one, .n = 1};
    unit_run(b, &u);
}

/* ---- the batch -------------------------------------------------------------------------- */

/* Each job's options, key and whether it may be grouped (in a). */
static void prepare(Batch *b, Arena *a)
{
    for (int i = 0; i < b->n; i++) {
        JitJob *job = &b->jobs[i];
        Prep *p = &b->prep[i];
        jit_job_release(job);
        p->opts = jit_prepare(job, b->opt, a, &p->nopts);
        const char *why;
        StrBuf macros;
        sb_init(&macros);
        p->member.nentries = jit_group_entries(job->source, p->member.entries, JIT_MAX_KERNELS, &macros, &why);
        p->member.macros = p->macros = sb_take(&macros);
        p->groupable = p->member.nentries > 0 && !strchr(jit_job_name(job), '"');
    }
}

/* The misses compiled as units on pool p of threads threads. */
static void compile_misses(Batch *b, Pool *p, int threads)
{
    int misses = 0;
    for (int i = 0; i < b->n; i++)
        misses += b->prep[i].state == JOB_MISS;
    if (!misses)
        return;
    int g = group_size(b, misses, threads);
    int *idx = mem_alloc(sizeof *idx * (size_t)b->n * (size_t)g);
    Unit *u = mem_alloc(sizeof *u * (size_t)misses);
    int nu = units_make(b, g, idx, u);
    pch_mark(u, nu, threads);
    int *order = mem_alloc(sizeof *order * (size_t)nu);
    Task *tasks = mem_alloc(sizeof *tasks * (size_t)nu);
    int nt = tasks_make(b, u, nu, threads, order, tasks);
    for (int k = 0; k < nt; k++)
        pool_submit(p, task_run, &tasks[k]);
    pool_wait(p);
    free(tasks);
    free(order);
    free(u);
    free(idx);
}

static int batch_threads(const JitOptions *o, int n)
{
    int threads = o->threads > 0 ? o->threads : pool_cores();
    return threads > n ? (n > 0 ? n : 1) : threads;
}

static void batch_free(Batch *b)
{
    for (int i = 0; i < b->n; i++) {
        if (b->prep[i].claimed)
            flight_release(b->jobs[i].key);
        free(b->prep[i].dir);
        free(b->prep[i].macros);
    }
    free(b->prep);
    pthread_mutex_destroy(&b->mu);
}

int jit_compile_all(JitJob *jobs, int n, const JitOptions *opt,
                    void (*on_done)(void *ctx, JitJob *job), void *ctx, KvxError *err)
{
    static const JitOptions defaults = {0};
    JitOptions o = opt ? *opt : defaults;
    char *found = NULL;
    if (!o.cuda_include)    /* look once, not once per job */
        o.cuda_include = found = jit_find_cuda_include();
    double start = wall_now_ms();
    Batch b = {.jobs = jobs, .n = n, .opt = &o, .on_done = on_done, .ctx = ctx, .prof = o.profile,
               .t0 = o.profile && o.profile->t0 ? o.profile->t0 : start};
    b.prep = mem_calloc((size_t)(n > 0 ? n : 1), sizeof *b.prep);
    pthread_mutex_init(&b.mu, NULL);
    int threads = batch_threads(&o, n);
    /* One compile process per thread, started on a thread's first miss. */
    b.procs = jitproc_enabled() ? jitproc_new(threads) : NULL;
    Arena *a = arena_new();
    prepare(&b, a);
    Pool *p = pool_new(threads);
    pool_for(p, n, look_up, &b);
    compile_misses(&b, p, threads);
    pool_for(p, n, deferred, &b);
    pool_free(p);
    jitproc_free(b.procs);
    if (b.prof) {
        pthread_mutex_lock(&prof_mu);
        b.prof->wall_ms += wall_now_ms() - start;
        b.prof->threads = threads > b.prof->threads ? threads : b.prof->threads;
        b.prof->sources += n;
        for (int i = 0; i < n; i++)
            b.prof->hits += jobs[i].cached;
        pthread_mutex_unlock(&prof_mu);
    }
    batch_free(&b);
    arena_free(a);
    free(found);
    if (!b.failed)
        return 0;
    if (err && !err->code) {
        kvx_error_clear(err);
        *err = b.first;
    } else {
        kvx_error_clear(&b.first);
    }
    return -1;
}

void jit_profile_free(JitProfile *p)
{
    if (!p)
        return;
    free(p->spans);
    p->spans = NULL;
    p->nspans = p->cap = 0;
}

/* How many compile processes were busy in [a, b) on average (ms since the
 * batch began). */
static double busy_in(const JitProfile *p, double a, double b)
{
    double sum = 0;
    for (int i = 0; i < p->nspans; i++) {
        double lo = p->spans[i].t0 > a ? p->spans[i].t0 : a, hi = p->spans[i].t1 < b ? p->spans[i].t1 : b;
        if (hi > lo)
            sum += hi - lo;
    }
    return b > a ? sum / (b - a) : 0;
}

void jit_profile_print(const JitProfile *p, FILE *f)
{
    fprintf(f, "compile profile: %d sources, %d from the cache, %d compiled in %d program%s on %d "
               "process%s, %.2f s wall\n", p->sources, p->hits, p->sources - p->hits, p->programs,
            p->programs == 1 ? "" : "s", p->threads, p->threads == 1 ? "" : "es", p->wall_ms / 1000);
    if (p->nspans) {
        double end = 0, busy = 0;
        for (int i = 0; i < p->nspans; i++) {
            end = p->spans[i].t1 > end ? p->spans[i].t1 : end;
            busy += p->spans[i].t1 - p->spans[i].t0;
        }
        fprintf(f, "  busy processes by tenth of the compiles' wall (%.2f s):", end / 1000);
        for (int t = 0; t < 10; t++)
            fprintf(f, " %.1f", busy_in(p, end * t / 10, end * (t + 1) / 10));
        fprintf(f, "; mean %.1f of %d\n", end > 0 ? busy / end : 0, p->threads);
    }
    fprintf(f, "  seconds of the processes: NVRTC %.2f", p->nvrtc_ms / 1000);
    if (p->fe_ms + p->nvvm_ms + p->ptxas_ms > 0)
        fprintf(f, " (front end %.2f, NVVM %.2f, ptxas %.2f)", p->fe_ms / 1000, p->nvvm_ms / 1000,
                p->ptxas_ms / 1000);
    fprintf(f, ", SASS facts %.2f, process starts %.2f, pipes %.2f; the cache %.2f\n", p->facts_ms / 1000,
            p->start_ms / 1000, p->ipc_ms / 1000, p->cache_ms / 1000);
}
