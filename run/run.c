/* run: `kvx run SPEC`, the supervisor.
 *
 * The parent never initialises CUDA.  It plans the spec for the GPU it finds (by
 * probing in a child), resolves every selected point once into a
 * self-contained CaseDesc (buffers, launch, arguments, checks: each case's
 * record, RunCase, holds it from then to its stored row), compiles the
 * distinct sources on a thread pool while workers measure, binds each case to
 * its compiled kernel (the arguments at the PTX's widths), hands cases to one
 * worker process per GPU over pipes, and stores each result in SQLite as it
 * arrives.
 *
 * A worker that runs past the case's timeout is killed (status timeout); one
 * that dies or reports a sticky fault is replaced (status fault); a case the
 * parent cannot resolve, or whose limits the GPU cannot meet, is stored as
 * skipped with the reason.  Nothing stops the exploration but the user.
 * Cases are ordered by workload point, baseline first, so that a worker reuses
 * one generated input for every variant of a point and the differential check
 * has its baseline output; the groups go out longest first (run_order.c).
 *
 * run_main is a list of stages over one RunSession (its plan, hand-out
 * queue, workers and store): open (the spec, the GPUs), plan (plan,
 * references, every selected point resolved: session_resolve, the store),
 * list (the case list), run_order (run_order.c: the groups, longest first), compile (the
 * compile thread), begin (the run row, the workers), run_loop (run_loop.c:
 * hand-out and results), finish (the summary, the counter pass), close (one
 * NULL-safe release of everything).
 *
 * Its helpers: run_order.c (the
 * workload groups, their estimates and the hand-out order), run_cases.c (the
 * case list and the closing summary), run_ref.c (reference keys), run_profile.c (the tally and
 * where the time went), run_counters.c (--counters), resolve/resolve.c (a case
 * into a CaseDesc); run_internal.h. */
#define _GNU_SOURCE     /* pipe2 */
#include "run_internal.h"
#include "core/proc.h"
#include "core/version.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile/inspect.h"
#include "report/results.h"
#include "gpu/worker.h"

/* ---- compile thread: sources become ready as NVRTC finishes them ----------------- */


static void compiled(void *ctx, JitJob *j)
{
    Compiler *c = ctx;
    pthread_mutex_lock(&c->mu);
    c->ready[j - c->jobs] = 1;
    c->nready++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* On a compile thread, after a compile: the variant's SASS facts for its
 * row, from the cache on a hit, else disassembled in parallel with other
 * compiles and kept in the cache, unless the compile made them. */
static void inspect_after(void *ctx, JitJob *j)
{
    (void)ctx;
    if (!j->ok || !j->cubin || j->inspect_json)
        return;         /* made with the compile (jitproc.c) */
    StrBuf b;
    sb_init(&b);
    KvxError e = {0};
    inspect_job_json(j, &b, &e);
    kvx_error_clear(&e);
    j->inspect_json = b.len ? mem_strdup(sb_str(&b)) : NULL;
    sb_free(&b);
}

static void *compile_main(void *arg)
{
    Compiler *c = arg;
    double t0 = wall_now_ms();
    /* The pool takes jobs FIFO, so sources finish roughly in first-use order and
     * the first cases start while later sources still compile. */
    int rc = jit_compile_all(c->jobs, c->n, &c->jo, compiled, c, &c->err);
    pthread_mutex_lock(&c->mu);
    c->failed = rc != 0;
    c->finished = 1;
    c->wall_ms = wall_now_ms() - t0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Join the round's compile thread; its figures go to the session's totals. */
static void compile_join(RunSession *r)
{
    if (!r->comp_started)
        return;
    pthread_join(r->comp.thread, NULL);
    r->comp_started = 0;
    CompileTotals *t = &r->ctot;
    t->n += r->comp.n;
    t->wall_ms += r->comp.wall_ms;
    for (int i = 0; i < r->comp.n; i++) {
        t->ms += r->comp.jobs[i].cached ? 0 : r->comp.jobs[i].compile_ms;
        t->hits += r->comp.jobs[i].cached;
    }
}

/* ---- workers ---------------------------------------------------------------------- */

/* Start the worker process for GPU device; its start frame is read later
 * (worker_started), so that its cuInit overlaps the parent's work.  0, or
 * -1 with err. */
static int worker_spawn(WorkerProc *w, int device, KvxError *err)
{
    char dev[16];
    snprintf(dev, sizeof dev, "%d", device);
    /* Exec a fresh image: the parent has threads (NVRTC), and a CUDA context
     * must not be created in a forked copy of a threaded process. */
    char *argv[] = {"kvx", "__worker", dev, NULL};
    ProcPipes pp;
    if (proc_start(&pp, "/proc/self/exe", argv, NULL, err) != 0)
        return -1;
    w->device = device;
    w->pid = pp.pid;
    w->to = pp.to;
    w->from = pp.from;
    w->nq = 0;
    w->broken = 0;
    w->started_at = wall_now_ms();
    return 0;
}

/* Read a spawned worker's start frame.  0, or -1 with err (the process
 * reaped). */
static int worker_started(WorkerProc *w, KvxError *err)
{
    if (worker_start_read(w->from, &w->info, err) == 0)
        return 0;
    int status = 0;
    close(w->to);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(w->from);
    w->pid = 0;
    return -1;
}

int run_worker_start(WorkerProc *w, int device, KvxError *err)
{
    return worker_spawn(w, device, err) != 0 || worker_started(w, err) != 0 ? -1 : 0;
}

void run_worker_stop(WorkerProc *w, int how)
{
    if (!w->pid)
        return;
    close(w->to);
    if (how == RUN_WORKER_KILL)
        kill(w->pid, SIGKILL);
    int status;
    while (waitpid(w->pid, &status, how == RUN_WORKER_LEAVE ? WNOHANG : 0) < 0 && errno == EINTR)
        ;
    close(w->from);
    w->pid = 0;
}

/* ---- the run ------------------------------------------------------------------------------ */

static int run_per_arch(int argc, char **argv, const DeviceInfo *infos, const int *devs, int ndev)
{
    int done[RUN_MAX_DEVICES] = {0};
    pid_t pids[RUN_MAX_DEVICES];
    int nchild = 0, worst = 0;
    for (int i = 0; i < ndev; i++) {
        if (done[i])
            continue;
        char list[256] = "";
        for (int k = i; k < ndev; k++)
            if (infos[devs[k]].cc_major == infos[devs[i]].cc_major &&
                infos[devs[k]].cc_minor == infos[devs[i]].cc_minor) {
                done[k] = 1;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", list[0] ? "," : "",
                         devs[k]);
            }
        printf("kvx run: sm_%d%d on GPUs %s\n", infos[devs[i]].cc_major, infos[devs[i]].cc_minor, list);
        fflush(stdout);
        char **args = mem_calloc((size_t)argc + 4, sizeof(char *));
        int n = 0;
        args[n++] = "kvx";
        for (int a = 0; a < argc; a++) {
            if (!strcmp(argv[a], "--devices")) {
                a++;
                continue;
            }
            if (!strncmp(argv[a], "--devices=", 10))
                continue;
            args[n++] = argv[a];
        }
        args[n++] = "--devices";
        args[n++] = list;
        args[n] = NULL;
        pid_t pid = fork();
        if (pid == 0) {
            execv("/proc/self/exe", args);
            _exit(127);
        }
        free(args);
        if (pid > 0)
            pids[nchild++] = pid;
        else
            worst = 3;
    }
    for (int c = 0; c < nchild; c++) {
        int status = 0;
        pid_t got;
        while ((got = waitpid(pids[c], &status, 0)) < 0 && errno == EINTR)
            ;
        int code = got == pids[c] && WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        if (code > worst)
            worst = code;
    }
    return worst;
}


/* ---- SIGINT, SIGTERM ---------------------------------------------------------------- */

/* Set by the handler, read by the loop: a stop finishes the commit in
 * progress (SQLite is never entered from the handler) and closes the run row,
 * so that a ^C leaves every stored case and the run's wall_s. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

int run_stopping(void) { return stop_signal; }

/* The handlers while the run's cases go; *old gets the previous ones.  One
 * shot (SA_RESETHAND): a second ^C kills at once.  No SA_RESTART: the loop's
 * poll returns at the signal. */
static void stop_catch(struct sigaction old[2])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
}

static void stop_release(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

int run_fail(RunSession *r, int rc)
{
    kvx_error_print(&r->err, stderr);
    kvx_error_clear(&r->err);
    return r->rc = rc;
}

/* The GPU ordinals of --devices ("all" or NULL: every one of the ngpu, at most
 * RUN_MAX_DEVICES) into out.  Returns the count, or -1 with err (an ordinal out
 * of range, a duplicate). */
static int parse_devices(const char *list, int ngpu, int *out, KvxError *err)
{
    int n = 0;
    if (!list || !strcmp(list, "all")) {
        for (int i = 0; i < ngpu && i < RUN_MAX_DEVICES; i++)
            out[n++] = i;
        return n;
    }
    char *copy = mem_strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n >= 0; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long d = strtol(t, &end, 10);
        if (*end || d < 0 || d >= ngpu || n == RUN_MAX_DEVICES) {
            kvx_error_set(err, KVX_EINPUT, NULL, "--devices has '%s' (expected all or ordinals below %d)",
                          t, ngpu);
            n = -1;
            break;
        }
        for (int k = 0; k < n; k++)
            if (out[k] == d) {
                kvx_error_set(err, KVX_EINPUT, NULL, "--devices names GPU %ld twice", d);
                n = -1;
                break;
            }
        if (n >= 0)
            out[n++] = (int)d;
    }
    free(copy);
    return n;
}

/* The spec and the GPUs.  0; RUN_PER_ARCH when the selected GPUs span
 * several archs; or the exit status. */

static int session_open(RunSession *r, const RunOpts *o, int argc, char **argv)
{
    r->argc = argc, r->argv = argv;
    r->o = *o;
    r->prof.t0 = r->prof.lap = wall_now_ms();
    /* GPU 0's worker, started now: its cuInit and context overlap the probe's
     * and the planning (about 0.15 s of a run's start on an H200).  Not when
     * GPU 0 may be left out; the probe may yet find no GPU, or several
     * archs: then it is stopped unused. */
    if (!o->devices || !strcmp(o->devices, "all") || !strcmp(o->devices, "0") || !strncmp(o->devices, "0,", 2))
        if (worker_spawn(&r->workers.early, 0, &r->err) != 0)
            kvx_error_clear(&r->err);   /* the workers' start says why, if it fails again */
    if (!(r->plan.s = spec_load(r->o.spec_path, &r->err)))
        return run_fail(r, 2);
    run_stage_end(&r->prof, RUN_STAGE_load);
    /* The GPU, probed in a child: the parent stays free of CUDA. */
    int ngpu = 0;
    if (worker_probe(r->workers.infos, RUN_MAX_DEVICES, &ngpu, &r->err) != 0 || ngpu == 0) {
        fprintf(stderr, "kvx run: %s (plan, gen, compile and inspect work without one)\n",
                r->err.code ? r->err.msg : "no GPU found: measuring needs a GPU");
        kvx_error_clear(&r->err);
        /* Its own status: a script tells "nothing could be measured here"
         * from "measured, and some case is not ok" without counting rows. */
        return r->rc = RUN_EXIT_NO_GPU;
    }
    run_stage_end(&r->prof, RUN_STAGE_probe);
    r->workers.ndev = parse_devices(r->o.devices, ngpu, r->workers.devs, &r->err);
    if (r->workers.ndev <= 0) {
        if (r->workers.ndev == 0)
            kvx_error_set(&r->err, KVX_EINPUT, NULL, "--devices selects no GPU");
        return run_fail(r, 2);
    }
    /* One plan per arch.  A host whose selected GPUs span several archs runs one
     * supervisor per arch, side by side, each with cubins for its own arch. */
    for (int i = 1; i < r->workers.ndev; i++)
        if (r->workers.infos[r->workers.devs[i]].cc_major != r->workers.infos[r->workers.devs[0]].cc_major ||
            r->workers.infos[r->workers.devs[i]].cc_minor != r->workers.infos[r->workers.devs[0]].cc_minor)
            return RUN_PER_ARCH;
    worker_device_info_facts(&r->workers.infos[r->workers.devs[0]], &r->plan.facts);
    return 0;
}

/* Every selected point resolved once, as `kvx plan` resolves it but with
 * the run's settings and the input keys a worker needs: a point that does
 * not resolve is bad input (exit 2) before the store or a GPU is touched.
 * The resolved case of each point of this shard is kept (RunPlan.desc) for
 * its record; the others' are checked and dropped.  0 or the exit status. */
static int session_resolve(RunSession *r)
{
    RunPlan *pl = &r->plan;
    if (resolve_baseline_exists(&pl->p, &r->err))
        return run_fail(r, 2);
    size_t n = (size_t)(pl->p.npoints ? pl->p.npoints : 1);
    pl->desc = mem_calloc(n, sizeof *pl->desc);
    pl->metrics = mem_calloc(n, sizeof *pl->metrics);
    ShardPoints sp;
    shard_points(&pl->p, pl->sel, pl->shard.n, &sp);
    Resolver rv = {&pl->p, &pl->pref, &pl->m, 0};
    CaseDesc *checked = mem_alloc(sizeof *checked);
    int rc = 0;
    for (int q = 0; q < sp.n && rc == 0; q++) {
        int i = sp.point[q];
        CaseDesc *d = sp.shard[q] == pl->shard.k ? mem_alloc(sizeof *d) : checked;
        ResolveCase rcs = {.point = i, .workload_key = sp.key[q], .is_baseline = run_point_is_baseline(&pl->p, i),
                           .have_baseline = 1};   /* the hand-out drops the baseline's checks without it */
        rc = resolve_case(&rv, &rcs, d, pl->metrics[i], &r->err);
        r->prof.resolved++;
        if (d != checked && rc == 0)
            pl->desc[i] = d;
        else if (d != checked)
            free(d);
    }
    free(checked);
    shard_points_free(&sp);
    return rc ? run_fail(r, 2) : 0;
}

/* The plan, every selected point resolved (session_resolve), the store, the
 * stored times.  0 or the exit status. */
static int session_plan(RunSession *r)
{
    RunPlan *pl = &r->plan;
    const Spec *s = pl->s;
    if (plan_build(pl->s, &pl->facts, &pl->p, &r->err) != 0 || plan_ref_build(&pl->p, &pl->pref, &r->err) != 0 ||
        !(pl->sel = plan_select(&pl->p, r->o.where, &r->err)) || shard_parse(r->o.shard, &pl->shard, &r->err))
        return run_fail(r, 2);
    pl->m = s->measure;
    measure_override(&pl->m, &r->o.m, r->o.given);
    pl->reads_outputs = resolve_metrics_read_outputs(s);
    if (session_resolve(r))
        return r->rc;
    run_stage_end(&r->prof, RUN_STAGE_load);
    pl->mjson = measure_json(&pl->m);
    r->store.db_path = r->o.db ? r->o.db : RESULTS_DEFAULT_DB;
    if (!r->o.db) {
        char *dir = path_dir(r->store.db_path);
        file_mkdir_p(dir);
        free(dir);
    }
    /* Not a kvx database, or a newer one: bad input (2), as from every verb. */
    if (!(r->store.st = store_open(r->store.db_path, &r->err)))
        return run_fail(r, r->err.code == KVX_EINPUT ? 2 : 3);
    for (int i = 0; i < s->nbaseline; i++)
        pl->base_mask |= 1ULL << s->baseline[i].axis;
    for (int i = 0; i < s->noptions; i++)
        snprintf(pl->opts_text + strlen(pl->opts_text), sizeof pl->opts_text - strlen(pl->opts_text), "%s%s",
                 i ? " " : "", s->options[i]);
    /* Stored times for the hand-out's estimates, before --rerun forgets them. */
    if (run_history_load(r->store.st, s->name, &r->queue.hist, &r->err) != 0)
        return run_fail(r, 3);
    r->cache = r->o.cache_dir ? mem_strdup(r->o.cache_dir) : jit_default_cache_dir();
    /* The files of compiles the cache does not take (--no-cache, a cache that
     * cannot be written), for the workers to load. */
    r->scratch = jit_scratch_new();
    r->store.variant_ids = mem_calloc((size_t)(pl->p.nsrcs ? pl->p.nsrcs : 1), sizeof(int64_t));
    r->prof.handout = mem_calloc(RUN_HANDOUT_KEPT, sizeof *r->prof.handout);
    r->tty = isatty(STDERR_FILENO);
    return 0;
}

/* The round's cases: the selected points within only (NULL: all), of this
 * shard, less those stored; said on stdout (with the device and the
 * settings on the first round).  0 or the exit status. */
static int session_list(RunSession *r, const unsigned char *only)
{
    const Spec *s = r->plan.s;
    unsigned char *sel = mem_alloc((size_t)r->plan.p.npoints + 1);
    for (int i = 0; i < r->plan.p.npoints; i++)
        sel[i] = r->plan.sel[i] && (!only || only[i]);
    RunKeyEnv ke = {.options = r->plan.opts_text, .arch = r->plan.facts.arch, .device_uuid = r->workers.infos[r->workers.devs[0]].uuid,
                    .measure_json = r->plan.mjson};
    r->rc = run_cases_list(&r->plan.p, sel, &r->plan.shard, &ke, r->store.st, r->o.rerun, &r->queue.cases, &r->queue.ncases,
                           &r->queue.nstored, &r->queue.nsel);
    free(sel);
    for (int i = 0; i < r->queue.ncases; i++) {
        RunCase *c = &r->queue.cases[i];
        c->desc = r->plan.desc[c->point];
        c->metrics = r->plan.metrics[c->point];
        c->ref_src = plan_ref_src(&r->plan.p, &r->plan.pref, c->point);
        KVX_ASSERT(c->desc);    /* resolved at plan, freed only once stored */
        memcpy(c->ref_key, c->desc->ref.present ? c->desc->ref.key : "", c->desc->ref.present ? 65 : 1);
        c->median_ms = NAN;
    }
    run_ref_order(&r->plan.p, &r->plan.pref, r->queue.cases, r->queue.ncases);
    if (r->rounds++)
        return r->rc;
    printf("kvx run %s: %d points selected", s->path, r->queue.nsel);
    if (r->plan.shard.n > 1)
        printf(", shard %d/%d (from %s) has %d", r->plan.shard.k + 1, r->plan.shard.n, r->plan.shard.from,
               r->queue.ncases + r->queue.nstored);
    if (r->o.search)
        printf(": a search measures some of them\n");
    else
        printf(": %d to run, %d already stored (--rerun to repeat)\n", r->queue.ncases, r->queue.nstored);
    const DeviceFacts *f = &r->plan.facts;
    printf("device  %s, %s, %d SMs, L2 %.0f MiB, peak %.0f GB/s; %d worker%s\n", r->workers.infos[r->workers.devs[0]].name,
           f->arch, f->sm_count, f->l2_bytes / 1048576.0, f->peak_gbs, r->workers.ndev, r->workers.ndev > 1 ? "s" : "");
    printf("measure %s\n", r->plan.mjson);
    fflush(stdout);
    return r->rc;
}

/* $KVX_TEST_COMPILE_HOLD=TEXT (a test hook): the job whose name contains
 * TEXT counts as compiling (run_loop.c) until every case that does not need
 * it is done, as a source slower than all the others would, whatever the
 * machine's load. */
static void hold_read(RunSession *r)
{
    Compiler *comp = &r->comp;
    const char *v = getenv("KVX_TEST_COMPILE_HOLD");
    comp->hold = -1;
    for (int k = 0; v && *v && k < comp->n && comp->hold < 0; k++)
        if (strstr(comp->jobs[k].name, v))
            comp->hold = k;
    for (int i = 0; i < r->queue.ncases && comp->hold >= 0; i++) {
        int rsrc = r->queue.cases[i].ref_src;
        comp->hold_cases += comp->job_of[r->queue.cases[i].src] == comp->hold ||
                            (rsrc >= 0 && comp->job_of[rsrc] == comp->hold);
    }
    r->holds |= comp->hold >= 0;
}

/* Compile the sources the cases need, variants' and references', in
 * first-use order (the hand-out's: the longest group's sources first), on a
 * thread of its own while the cases run. */
static void session_compile(RunSession *r)
{
    Compiler *comp = &r->comp;
    pthread_mutex_init(&comp->mu, NULL);
    pthread_cond_init(&comp->cv, NULL);
    int nall = plan_ref_nsources(&r->plan.p, &r->plan.pref);
    comp->jobs = mem_calloc((size_t)(nall ? nall : 1), sizeof(JitJob));
    comp->ready = mem_calloc((size_t)(nall ? nall : 1), sizeof(int));
    comp->job_of = mem_alloc(sizeof(int) * (size_t)(nall ? nall : 1));
    for (int k = 0; k < nall; k++)
        comp->job_of[k] = -1;
    comp->jo = (JitOptions){.cache_dir = r->cache, .threads = r->o.jobs, .use_cache = !r->o.no_cache,
                            .scratch = r->scratch, .cccl_include = NULL, .after = inspect_after,
                            .group = r->o.group, .profile = r->o.profile ? &r->jprof : NULL};
    int *order = mem_alloc(sizeof(int) * (size_t)(r->queue.ncases ? r->queue.ncases : 1)), no = 0;
    for (int u = 0; u < r->queue.nunits; u++)
        for (int i = r->queue.units[u].cur; i < r->queue.units[u].end; i++)
            order[no++] = i;
    KVX_ASSERT(no == r->queue.ncases);
    for (int i = 0; i < 2 * r->queue.ncases; i++) {
        const RunCase *c = &r->queue.cases[order[i / 2]];
        int k = i % 2 ? c->ref_src : c->src;
        if (k < 0 || comp->job_of[k] >= 0)
            continue;
        const Source *so = plan_ref_source_at(&r->plan.p, &r->plan.pref, k);
        comp->job_of[k] = comp->n;
        JitJob *j = &comp->jobs[comp->n++];
        *j = (JitJob){.name = so->file, .source = so->text, .arch = r->plan.facts.arch, .options = r->plan.s->options,
                      .noptions = r->plan.s->noptions, .use_cccl = r->plan.s->use_cccl, .origins = so->origins};
    }
    free(order);
    hold_read(r);
    run_stage_end(&r->prof, RUN_STAGE_store);
    r->t0 = wall_now_ms();
    r->jprof.t0 = r->t0;        /* compile spans on the run's clock */
    pthread_create(&comp->thread, NULL, compile_main, comp);
    r->comp_started = 1;
    run_stage_end(&r->prof, RUN_STAGE_workers);
}

/* The run row: the environment every case is measured in.  0 or 3. */
static int session_run_row(RunSession *r)
{
    const Spec *s = r->plan.s;
    const DeviceInfo *d0 = &r->workers.infos[r->workers.devs[0]];
    char host[256] = "", started[32], nvrtc[16], seed[24];
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int nv_major = 0, nv_minor = 0;
    jit_nvrtc_version(&nv_major, &nv_minor);
    snprintf(nvrtc, sizeof nvrtc, "%d.%d", nv_major, nv_minor);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->o.search_seed);
    StrBuf cmd, basej, declared, devj;
    sb_init(&cmd), sb_init(&basej), sb_init(&declared), sb_init(&devj);
    for (int i = 0; i < r->argc; i++)
        sb_printf(&cmd, "%s%s", i ? " " : "kvx ", r->argv[i]);
    run_baseline_json(s, &basej);
    run_declared_json(s, &declared);
    /* Every GPU this run measures on; the run row's gpu_* fields are d0's. */
    sb_putc(&devj, '[');
    for (int i = 0; i < r->workers.ndev; i++) {
        const DeviceInfo *d = &r->workers.infos[r->workers.devs[i]];
        sb_printf(&devj, "%s{\"ordinal\":%d,\"name\":", i ? "," : "", d->ordinal);
        json_put_str(&devj, d->name, JSON_BYTES);
        sb_puts(&devj, ",\"uuid\":");
        json_put_str(&devj, d->uuid, JSON_BYTES);
        sb_printf(&devj, ",\"cc\":%d,\"sm_count\":%d,\"clock_mhz\":%d,\"mem_clock_mhz\":%d,"
                  "\"peak_gbs\":%.1f,\"buf_align\":%llu}", d->cc_major * 10 + d->cc_minor, d->sm_count,
                  d->clock_khz / 1000, d->mem_clock_khz / 1000, d->peak_gbs, (unsigned long long)WORKER_BUF_ALIGN);
    }
    sb_putc(&devj, ']');
    RunEnv env = {.spec_name = s->name, .spec_path = s->path, .gpu_name = d0->name, .gpu_uuid = d0->uuid,
                  .cc = r->plan.facts.cc, .sm_count = d0->sm_count, .l2_bytes = d0->l2_bytes,
                  .mem_bytes = d0->mem_bytes, .clock_mhz = d0->clock_khz / 1000,
                  .mem_clock_mhz = d0->mem_clock_khz / 1000, .peak_gbs = d0->peak_gbs,
                  .driver_version = d0->driver_version, .nvrtc_version = nvrtc, .kvx_version = version_text(),
                  .arch = r->plan.facts.arch, .hostname = host, .command = sb_str(&cmd), .measure_json = r->plan.mjson,
                  .started_at = started, .baseline_json = sb_str(&basej),
                  .axes_json = sb_str(&declared), .devices_json = sb_str(&devj),
                  .search_strategy = r->o.search, .search_budget = r->o.search ? r->o.budget : NULL,
                  .search_objective = r->o.search ? r->o.objective : NULL,
                  .search_seed = r->o.search ? seed : NULL};
    int rc = store_begin_run(r->store.st, &env, &r->store.run_id, &r->err) != 0 ? run_fail(r, 3) : 0;
    if (rc == 0 && (r->queue.from_end = store_run_beside(r->store.st, r->store.run_id, s->name, &r->err)) < 0)
        rc = run_fail(r, 3);
    if (r->queue.from_end > 0)
        printf("another run of %s is filling %s: this one takes its cases from the other end\n", s->name,
               r->store.db_path);
    sb_free(&cmd), sb_free(&basej), sb_free(&declared), sb_free(&devj);
    run_stage_end(&r->prof, RUN_STAGE_store);
    return rc;
}

/* The run row and one worker per GPU, on the first round.  0 or the exit
 * status. */
static int session_workers(RunSession *r)
{
    if (r->begun++)
        return r->rc;
    if (session_run_row(r))
        return r->rc;
    r->prof.nwt = r->workers.ndev;
    for (int w = 0; w < r->workers.ndev; w++)
        r->prof.wt[w].device = r->workers.devs[w];
    for (int i = 0; i < r->workers.ndev; i++) {
        int rc;
        if (r->workers.devs[i] == 0 && r->workers.early.pid) {
            r->workers.w[i] = r->workers.early;
            r->workers.early.pid = 0;
            rc = worker_started(&r->workers.w[i], &r->err);
        } else {
            rc = run_worker_start(&r->workers.w[i], r->workers.devs[i], &r->err);
        }
        if (rc != 0) {
            kvx_error_print(&r->err, stderr);
            kvx_error_clear(&r->err);
            continue;
        }
        r->workers.n++;
    }
    if (r->workers.n == 0) {
        fprintf(stderr, "kvx run: no worker started: measuring needs a working GPU\n");
        r->rc = 1;
    }
    for (int i = 0; i < r->workers.ndev; i++)
        if (r->workers.w[i].pid && r->workers.w[i].info.clocks_note[0]) {
            printf("clocks  %s\n", r->workers.w[i].info.clocks_note);
            fflush(stdout);
            break;
        }
    r->workers.n0 = r->workers.n;
    return r->rc;
}

/* The run row and the workers (first round), the round's per-case state.
 * 0 or the exit status. */
static int session_begin(RunSession *r)
{
    if (r->rc || session_workers(r))
        return r->rc;
    r->tally.total += r->queue.ncases;
    for (int i = 0; i < r->workers.ndev; i++)
        r->workers.w[i].cur = r->workers.w[i].end = 0;
    r->queue.next_unit = 0;
    run_stage_end(&r->prof, RUN_STAGE_workers);
    return r->rc;
}

/* ---- the end ---------------------------------------------------------------------------- */

/* The run row's end (wall_s, the profile), or no row at all for a run that
 * stored nothing (its cases were all stored earlier, or by another run
 * meanwhile).  The rows this run stored: a result another run stored first,
 * or one a store error lost, is done but not counted. */
static int close_row(RunSession *r, double wall, const char *profile_json)
{
    int stored = 0;
    for (int k = 0; k < CASE_STATUS_COUNT; k++)
        stored += r->tally.counts[k];
    if (r->store.run_id && store_end_run(r->store.st, r->store.run_id, wall, profile_json, &r->err) != 0)
        run_fail(r, 3);
    if (r->store.run_id && stored == 0) {
        int dropped = store_drop_empty_run(r->store.st, r->store.run_id, &r->err);
        if (dropped < 0)
            run_fail(r, 3);
        else if (dropped)
            r->store.run_id = 0;
    }
    return stored;
}

/* Workers ended, the compile thread joined, the run row closed, the summary
 * printed, then --counters' pass.  The exit status. */
static int session_finish(RunSession *r)
{
    /* Stopped: a worker's case in flight is not waited for.  A --counters
     * pass waits for the GPU to be free; otherwise the workers release
     * their contexts while kvx closes the run (RUN_WORKER_LEAVE). */
    for (int w = 0; w < r->workers.ndev; w++)
        run_worker_stop(&r->workers.w[w], run_stopping() ? RUN_WORKER_KILL : r->o.counters ? RUN_WORKER_WAIT
                                                                                  : RUN_WORKER_LEAVE);
    run_ahead_stop(r);
    compile_join(r);
    run_stage_end(&r->prof, RUN_STAGE_finish);
    double wall = (r->prof.lap - r->prof.t0) / 1000;
    const CompileTotals *ct = &r->ctot;
    StrBuf profj;
    sb_init(&profj);
    run_profile_json(&r->prof, &r->tally, ct->n, ct->wall_ms, ct->ms, ct->hits, r->workers.n0, &profj);
    const Tally *t = &r->tally;
    int stored = close_row(r, wall, sb_str(&profj));
    printf("\n%d cases in %.1f s:", stored, wall);
    for (int k = 0; k < CASE_STATUS_COUNT; k++)
        if (t->counts[k])
            printf(" %d %s", t->counts[k], case_status_names[k]);
    if (r->queue.nstored)
        printf(" (%d stored earlier, skipped)", r->queue.nstored);
    if (t->taken)
        printf(" (%d stored by another run meanwhile, skipped)", t->taken);
    if (r->plan.pref.kind != PLAN_REF_NONE)
        printf("\nreference kernel: %d run%s for %d cases (once per reference key and worker)", t->refs_run,
               t->refs_run == 1 ? "" : "s", t->done);
    printf("\ntime    compile %.1f s wall (%d sources, %d from cache, %.1f s of NVRTC), inputs %.1f s, "
           "verify %.1f s, measure %.1f s\n", ct->wall_ms / 1000, ct->n, ct->hits, ct->ms / 1000,
           t->t_input / 1000, t->t_verify / 1000, t->t_measure / 1000);
    if (r->o.profile) {
        run_profile_print(&r->prof, t, r->workers.n0);
        jit_profile_print(&r->jprof, stdout);
        printf("profile_json %s\n", sb_str(&profj));
    }
    sb_free(&profj);
    /* A search prints its own summary. */
    if (stored && r->rc == 0 && !r->o.search) {
        run_print_best(&r->plan.p, r->queue.cases, r->queue.ncases, r->plan.base_mask);
        printf("results %s (run %lld); tabulate with: kvx table --db %s --spec %s --rows ... --cols ...\n",
               r->store.db_path, (long long)r->store.run_id, r->store.db_path, r->plan.s->name);
    }
    /* A pass of its own, after the timed run: a profiler replays kernels. */
    if (r->o.counters && r->rc == 0 && stored && !run_stopping())
        r->rc = run_counters(r->store.st, r->store.run_id, r->queue.cases, r->queue.ncases, &r->o, r->store.db_path,
                             r->workers.devs[0]);
    if (r->rc)
        return r->rc;
    if (run_stopping()) {
        fprintf(stderr, "kvx run: stopped by %s after %d of %d cases; the run is recorded, and a run again"
                " measures the rest\n", run_stopping() == SIGINT ? "SIGINT" : "SIGTERM", t->done, t->total);
        return 128 + run_stopping();
    }
    return t->counts[CASE_ok] == stored ? 0 : 1;
}

/* Free what a round made (its compile thread joined first), ready for the
 * next; a zeroed session is fine. */
static void round_free(RunSession *r)
{
    run_ahead_stop(r);
    compile_join(r);
    Compiler *comp = &r->comp;
    for (int i = 0; i < comp->n; i++)
        jit_job_release(&comp->jobs[i]);
    free(comp->jobs);
    free(comp->ready);
    free(comp->job_of);
    kvx_error_clear(&comp->err);
    if (comp->jobs || comp->ready) {
        pthread_mutex_destroy(&comp->mu);
        pthread_cond_destroy(&comp->cv);
    }
    memset(comp, 0, sizeof *comp);
    run_cases_free(r->queue.cases, r->queue.ncases);
    free(r->queue.gstart), free(r->queue.gbase), free(r->queue.units);
    r->queue.cases = NULL, r->queue.gstart = NULL, r->queue.gbase = NULL, r->queue.units = NULL;
    r->queue.ncases = r->queue.ngroups = r->queue.nunits = r->queue.next_unit = r->queue.norphans = 0;
    r->queue.nready_seen = 0;
    r->holds = 0;
    jit_scratch_free(r->scratch);
    r->scratch = NULL;          /* the next round makes its own */
}

/* Free whatever the stages made; a zeroed session is fine. */
void run_session_close(RunSession *r)
{
    if (r->caught)
        stop_release(r->old_sig);
    r->caught = 0;
    for (int w = 0; w < r->workers.ndev; w++)
        run_worker_stop(&r->workers.w[w], RUN_WORKER_KILL);
    run_worker_stop(&r->workers.early, RUN_WORKER_KILL);
    round_free(r);
    free(r->store.variant_ids), free(r->prof.handout), free(r->store.samples);
    jit_profile_free(&r->jprof);
    run_history_free(&r->queue.hist);
    run_ref_fails_free(&r->queue.refs_failed);
    for (int i = 0; r->plan.desc && i < r->plan.p.npoints; i++)
        free(r->plan.desc[i]);
    free(r->plan.desc), free(r->plan.metrics);
    free(r->cache), free(r->plan.mjson), free(r->plan.sel);
    jit_scratch_free(r->scratch);
    store_close(r->store.st);
    plan_ref_free(&r->plan.pref);
    if (r->plan.p.spec)
        plan_free(&r->plan.p);
    spec_free(r->plan.s);
    kvx_error_clear(&r->err);
}

int run_session_open(RunSession *r, const RunOpts *o, int argc, char **argv)
{
    int rc = session_open(r, o, argc, argv);
    if (rc != 0)
        return rc;
    stop_catch(r->old_sig);
    r->caught = 1;
    return session_plan(r);
}

int run_session_round(RunSession *r, const unsigned char *only)
{
    if (r->rounds)
        round_free(r);
    if (!r->scratch)
        r->scratch = jit_scratch_new();
    if (session_list(r, only) != 0)
        return r->rc;
    run_order(r);
    session_compile(r);
    run_ahead_start(r);
    if (session_begin(r) == 0)
        run_loop(r);
    return r->rc;
}

int run_session_finish(RunSession *r)
{
    int rc = session_finish(r);
    if (r->caught)
        stop_release(r->old_sig);
    r->caught = 0;
    return rc;
}

/* The stages in order; every failure ends in run_session_close. */
int run_main(const RunOpts *o, int argc, char **argv)
{
    if (o->search)
        return run_search(o, argc, argv);
    RunSession *r = mem_calloc(1, sizeof *r);
    int rc = run_session_open(r, o, argc, argv);
    if (rc == RUN_PER_ARCH) {
        run_worker_stop(&r->workers.early, RUN_WORKER_KILL);
        rc = run_per_arch(argc, argv, r->workers.infos, r->workers.devs, r->workers.ndev);
    } else if (rc == 0) {
        rc = run_session_round(r, NULL);
        if (r->begun)
            rc = run_session_finish(r);
    }
    run_session_close(r);
    free(r);
    return rc;
}
