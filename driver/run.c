/* run: `kvx run SPEC`, the supervisor.
 *
 * The parent never initialises CUDA.  It plans the spec for the GPU it finds (by
 * probing in a child), compiles the distinct sources on a thread pool while
 * workers measure, resolves every case into a self-contained CaseDesc (buffers,
 * launch, arguments, checks), hands cases to one worker process per GPU over
 * pipes, and stores each result in SQLite as it arrives.
 *
 * A worker that runs past the case's timeout is killed (status timeout); one
 * that dies or reports a sticky fault is replaced (status fault); a case the
 * parent cannot resolve, or whose limits the GPU cannot meet, is stored as
 * skipped with the reason.  Nothing stops the exploration but the user.
 * Cases are ordered by workload point, baseline first, so that a worker reuses
 * one generated input for every variant of a point and the differential check
 * has its baseline output.
 *
 * Its helpers: run_opts.c (options), run_cases.c (the case list and the
 * closing summary), run_resolve.c (a case into a CaseDesc); run_internal.h. */
#include "run_internal.h"

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

#include "inspect.h"
#include "results.h"
#include "worker.h"

typedef struct Range {
    int cur, end, group;
} Range;

typedef struct CaseGeom {
    uint32_t grid[3], block[3], cluster[3];
    uint32_t smem;
} CaseGeom;

/* Cases handed to a worker ahead of their turn: while it runs one, the next
 * waits in its pipe, so the parent's storing and resolving overlap the GPU's
 * work instead of adding to it.  Two are enough for that (and a CaseDesc, 18
 * KB, twice fits a pipe's 64 KB: the write never blocks). */
#define RUN_PIPELINE 2

typedef struct Worker {
    int device;                 /* GPU ordinal */
    pid_t pid;
    int to, from;               /* pipe ends: parent writes to, reads from */
    DeviceInfo info;
    int q[RUN_PIPELINE];        /* indices into cases handed over, oldest (running) first */
    int nq;
    int broken;                 /* a write failed: hand nothing more until its results are read */
    int cur, end;               /* the workload group it works through: cases[cur..end) */
    int group;
    double started;             /* ms, when the oldest case in q began (about) */
    double timeout_ms;
    double started_at;          /* ms, when the process was started */
} Worker;

/* ---- compile thread: sources become ready as NVRTC finishes them ----------------- */

typedef struct Compiler {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    JitJob *jobs;               /* the sources cases need, in first-use order */
    int *ready;                 /* per job: 0 pending, 1 done */
    int *job_of;                /* per source: index into jobs, or -1 */
    int n;
    JitOptions jo;
    KvxError err;
    int failed;
    int finished;
    double wall_ms;
} Compiler;

static void compiled(void *ctx, JitJob *j)
{
    Compiler *c = ctx;
    pthread_mutex_lock(&c->mu);
    c->ready[j - c->jobs] = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* On a compile thread, after a compile: the variant's SASS facts for its
 * row, disassembled in parallel with other compiles and kept in the cache. */
static void inspect_after(void *ctx, JitJob *j)
{
    (void)ctx;
    if (!j->ok || !j->cubin)
        return;
    StrBuf b;
    sb_init(&b);
    KvxError e = {0};
    inspect_job_json(j, &b, &e);
    kvx_error_clear(&e);
    j->inspect_json = b.len ? xstrdup(sb_str(&b)) : NULL;
    sb_free(&b);
}

static void *compile_main(void *arg)
{
    Compiler *c = arg;
    double t0 = now_ms();
    /* The pool takes jobs FIFO, so sources finish roughly in first-use order and
     * the first cases start while later sources still compile. */
    int rc = jit_compile_all(c->jobs, c->n, &c->jo, compiled, c, &c->err);
    pthread_mutex_lock(&c->mu);
    c->failed = rc != 0;
    c->finished = 1;
    c->wall_ms = now_ms() - t0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- workers ---------------------------------------------------------------------- */

static int worker_start(Worker *w, int device, KvxError *err)
{
    int down[2], up[2];
    /* Close-on-exec: a worker started later must not inherit this worker's pipe
     * ends, or closing ours would never give it EOF.  dup2 below clears the flag
     * on the child's own stdin and stdout. */
    if (pipe(down) || pipe(up)) {
        kvx_error_set(err, KVX_EIO, NULL, "pipe: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(down[i], F_SETFD, FD_CLOEXEC);
        fcntl(up[i], F_SETFD, FD_CLOEXEC);
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* A worker must not outlive a killed parent: EOF on its stdin reaches
         * only an idle one, and one stuck in a kernel would hold its GPU. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        /* Exec a fresh image: the parent has threads (NVRTC), and a CUDA context
         * must not be created in a forked copy of a threaded process. */
        dup2(down[0], STDIN_FILENO);
        dup2(up[1], STDOUT_FILENO);
        close(down[0]); close(down[1]); close(up[0]); close(up[1]);
        char dev[16];
        snprintf(dev, sizeof dev, "%d", device);
        execl("/proc/self/exe", "kvx", "__worker", dev, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    w->device = device;
    w->pid = pid;
    w->to = down[1];
    w->from = up[0];
    w->nq = 0;
    w->broken = 0;
    w->started_at = now_ms();
    if (worker_start_read(w->from, &w->info, err) != 0) {
        int status = 0;
        close(w->to);
        waitpid(pid, &status, 0);
        close(w->from);
        w->pid = 0;
        return -1;
    }
    return 0;
}

static void worker_stop(Worker *w, int kill_it)
{
    if (!w->pid)
        return;
    close(w->to);
    if (kill_it)
        kill(w->pid, SIGKILL);
    int status;
    waitpid(w->pid, &status, 0);
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
        char **args = xcalloc((size_t)argc + 4, sizeof(char *));
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
        waitpid(pids[c], &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        if (code > worst)
            worst = code;
    }
    return worst;
}

/* One `kvx run`: what its stages share.  (The parent's; a worker's own state
 * is worker_internal.h's.)  Everything starts zeroed and session_close frees
 * whatever exists, so a stage that fails just returns its exit status. */
typedef struct RunSession {
    int argc;
    char **argv;
    RunOpts o;
    RunProfile prof;
    KvxError err;
    int rc;                     /* 0, or the exit status of the first failure */
    Spec *s;
    DeviceInfo infos[RUN_MAX_DEVICES];
    int devs[RUN_MAX_DEVICES], ndev;
    DeviceFacts facts;
    Plan p;
    PlanRef pref;
    unsigned char *sel;
    Shard shard;
    MeasureSettings m;
    char *mjson;
    const char *db_path;
    Store *st;
    uint64_t base_mask;         /* a point's partner is itself with these set to the baseline */
    char opts_text[1024];
    RunCase *cases;
    int ncases, nstored, nsel;
    Compiler comp;
    int comp_started;
    char *cache;
    int64_t run_id;
    Worker workers[RUN_MAX_DEVICES];
    int nworkers, nworkers0;
    int64_t *variant_ids;       /* per source, once its row is stored */
    Tally tally;
    int tty;
    double t0;
    /* Workload groups (contiguous after the sort) go whole to one worker: it
     * then generates each input once, keeps the group's host references, and
     * holds the baseline's output for the differential check. */
    int *gstart, ngroups, next_group;
    unsigned char *gbase;       /* the group starts with its baseline */
    Range orphan[RUN_MAX_DEVICES];  /* groups whose worker could not be restarted */
    int norphans;
    int *live;                  /* 1 = handed out */
    double (*mvals)[3];         /* bytes, atomics, elements per case */
    CaseGeom *geoms;
    double *medians;
    CaseDesc *desc;
    RefFails refs_failed;
    char (*refkeys)[65];        /* each case's reference key */
    CaseDesc *kept;             /* --counters: each case as it was sent */
    const char **kept_keys;     /* --counters: the keys of those that ran */
} RunSession;

static int session_fail(RunSession *r, int rc)
{
    kvx_error_print(&r->err, stderr);
    kvx_error_clear(&r->err);
    return r->rc = rc;
}

/* Options, the spec and the GPUs.  0; RUN_PER_ARCH when the selected GPUs
 * span several archs; or the exit status. */
enum { RUN_PER_ARCH = -1 };

static int session_open(RunSession *r, int argc, char **argv)
{
    r->argc = argc, r->argv = argv;
    r->prof.t0 = r->prof.lap = now_ms();
    int rc = run_parse_opts(argc, argv, &r->o);
    if (rc)
        return r->rc = rc;
    if (!(r->s = spec_load(r->o.spec.spec_path, &r->err)))
        return session_fail(r, 2);
    stage_end(&r->prof, RUN_STAGE_load);
    /* The GPU, probed in a child: the parent stays free of CUDA. */
    int ngpu = 0;
    if (worker_probe(r->infos, RUN_MAX_DEVICES, &ngpu, &r->err) != 0 || ngpu == 0) {
        fprintf(stderr, "kvx run: %s (plan, gen, compile and inspect work without one)\n",
                r->err.code ? r->err.msg : "no GPU found: measuring needs a GPU");
        kvx_error_clear(&r->err);
        return r->rc = 1;
    }
    stage_end(&r->prof, RUN_STAGE_probe);
    r->ndev = run_parse_devices(r->o.devices, ngpu, r->devs, &r->err);
    if (r->ndev <= 0) {
        if (r->ndev == 0)
            kvx_error_set(&r->err, KVX_EINPUT, NULL, "--devices selects no GPU");
        return session_fail(r, 2);
    }
    /* One plan per arch.  A host whose selected GPUs span several archs runs one
     * supervisor per arch, side by side, each with cubins for its own arch. */
    for (int i = 1; i < r->ndev; i++)
        if (r->infos[r->devs[i]].cc_major != r->infos[r->devs[0]].cc_major ||
            r->infos[r->devs[i]].cc_minor != r->infos[r->devs[0]].cc_minor)
            return RUN_PER_ARCH;
    device_info_facts(&r->infos[r->devs[0]], &r->facts);
    return 0;
}

/* The plan, every selected point resolved as plan does (before any GPU
 * work), the store and the case list.  0 or the exit status. */
static int session_plan(RunSession *r)
{
    const Spec *s = r->s;
    if (plan_build(r->s, &r->facts, &r->p, &r->err) != 0 || plan_ref_build(&r->p, &r->pref, &r->err) != 0 ||
        !(r->sel = cli_select_points(&r->p, r->o.spec.where, &r->err)) ||
        resolve_plan(&r->p, &r->pref, r->sel, &r->err) != 0 || shard_parse(r->o.spec.shard, &r->shard, &r->err))
        return session_fail(r, 2);
    stage_end(&r->prof, RUN_STAGE_load);
    r->m = s->measure;
    run_apply_overrides(&r->o, &r->m);
    r->mjson = run_measure_json(&r->m);
    r->db_path = r->o.db ? r->o.db : RESULTS_DEFAULT_DB;
    if (!r->o.db) {
        char *dir = path_dir(r->db_path);
        mkdir_p(dir);
        free(dir);
    }
    if (!(r->st = store_open(r->db_path, &r->err)))
        return session_fail(r, 3);
    for (int i = 0; i < s->nbaseline; i++)
        r->base_mask |= 1ULL << s->baseline[i].axis;
    for (int i = 0; i < s->noptions; i++)
        snprintf(r->opts_text + strlen(r->opts_text), sizeof r->opts_text - strlen(r->opts_text), "%s%s",
                 i ? " " : "", s->options[i]);
    /* Cases: selected points of this shard, minus those already stored. */
    RunKeyEnv ke = {.options = r->opts_text, .arch = r->facts.arch, .device_uuid = r->infos[r->devs[0]].uuid,
                    .measure_json = r->mjson};
    r->rc = run_cases_list(&r->p, r->sel, &r->shard, &ke, r->st, r->o.rerun, &r->cases, &r->ncases,
                           &r->nstored, &r->nsel);
    run_ref_order(&r->p, &r->pref, &r->m, r->cases, r->ncases);
    printf("kvx run %s: %d points selected", s->path, r->nsel);
    if (r->shard.n > 1)
        printf(", shard %d/%d (from %s) has %d", r->shard.k + 1, r->shard.n, r->shard.from,
               r->ncases + r->nstored);
    printf(": %d to run, %d already stored (--rerun to repeat)\n", r->ncases, r->nstored);
    const DeviceFacts *f = &r->facts;
    printf("device  %s, %s, %d SMs, L2 %.0f MiB, peak %.0f GB/s; %d worker%s\n", r->infos[r->devs[0]].name,
           f->arch, f->sm_count, f->l2_bytes / 1048576.0, f->peak_gbs, r->ndev, r->ndev > 1 ? "s" : "");
    printf("measure %s\n", r->mjson);
    fflush(stdout);
    return r->rc;
}

/* Compile the sources the cases need, variants' and references', in
 * first-use order, on a thread of its own while the cases run. */
static void session_compile(RunSession *r)
{
    Compiler *comp = &r->comp;
    pthread_mutex_init(&comp->mu, NULL);
    pthread_cond_init(&comp->cv, NULL);
    int nall = plan_ref_nsources(&r->p, &r->pref);
    comp->jobs = xcalloc((size_t)(nall ? nall : 1), sizeof(JitJob));
    comp->ready = xcalloc((size_t)(nall ? nall : 1), sizeof(int));
    comp->job_of = xmalloc(sizeof(int) * (size_t)(nall ? nall : 1));
    for (int k = 0; k < nall; k++)
        comp->job_of[k] = -1;
    r->cache = r->o.spec.cache_dir ? xstrdup(r->o.spec.cache_dir) : cli_default_cache_dir();
    comp->jo = (JitOptions){.cache_dir = r->cache, .threads = r->o.spec.jobs, .use_cache = !r->o.spec.no_cache,
                            .cccl_include = NULL, .after = inspect_after};
    for (int i = 0; i < 2 * r->ncases; i++) {
        int k = i % 2 ? plan_ref_src(&r->p, &r->pref, r->cases[i / 2].point) : r->cases[i / 2].src;
        if (k < 0 || comp->job_of[k] >= 0)
            continue;
        const Source *so = plan_ref_source_at(&r->p, &r->pref, k);
        comp->job_of[k] = comp->n;
        JitJob *j = &comp->jobs[comp->n++];
        *j = (JitJob){.name = so->file, .source = so->text, .arch = r->facts.arch, .options = r->s->options,
                      .noptions = r->s->noptions, .use_cccl = r->s->use_cccl};
    }
    stage_end(&r->prof, RUN_STAGE_store);
    r->t0 = now_ms();
    pthread_create(&comp->thread, NULL, compile_main, comp);
    r->comp_started = 1;
    stage_end(&r->prof, RUN_STAGE_workers);
}

/* The run row: the environment every case is measured in.  0 or 3. */
static int session_run_row(RunSession *r)
{
    const Spec *s = r->s;
    const DeviceInfo *d0 = &r->infos[r->devs[0]];
    char host[256] = "", started[32], nvrtc[16];
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int nv_major = 0, nv_minor = 0;
    jit_nvrtc_version(&nv_major, &nv_minor);
    snprintf(nvrtc, sizeof nvrtc, "%d.%d", nv_major, nv_minor);
    StrBuf cmd, basej, declared, devj;
    sb_init(&cmd), sb_init(&basej), sb_init(&declared), sb_init(&devj);
    for (int i = 0; i < r->argc; i++)
        sb_printf(&cmd, "%s%s", i ? " " : "kvx ", r->argv[i]);
    run_baseline_json(s, &basej);
    run_declared_json(s, &declared);
    /* Every GPU this run measures on; the run row's gpu_* fields are d0's. */
    sb_putc(&devj, '[');
    for (int i = 0; i < r->ndev; i++) {
        const DeviceInfo *d = &r->infos[r->devs[i]];
        sb_printf(&devj, "%s{\"ordinal\":%d,\"name\":", i ? "," : "", d->ordinal);
        run_json_string(&devj, d->name);
        sb_puts(&devj, ",\"uuid\":");
        run_json_string(&devj, d->uuid);
        sb_printf(&devj, ",\"cc\":%d,\"sm_count\":%d,\"clock_mhz\":%d,\"mem_clock_mhz\":%d,"
                  "\"peak_gbs\":%.1f}", d->cc_major * 10 + d->cc_minor, d->sm_count,
                  d->clock_khz / 1000, d->mem_clock_khz / 1000, d->peak_gbs);
    }
    sb_putc(&devj, ']');
    RunEnv env = {.spec_name = s->name, .spec_path = s->path, .gpu_name = d0->name, .gpu_uuid = d0->uuid,
                  .cc = r->facts.cc, .sm_count = d0->sm_count, .l2_bytes = d0->l2_bytes,
                  .mem_bytes = d0->mem_bytes, .clock_mhz = d0->clock_khz / 1000,
                  .mem_clock_mhz = d0->mem_clock_khz / 1000, .peak_gbs = d0->peak_gbs,
                  .driver_version = d0->driver_version, .nvrtc_version = nvrtc, .kvx_version = KVX_VERSION,
                  .arch = r->facts.arch, .hostname = host, .command = sb_str(&cmd), .measure_json = r->mjson,
                  .started_at = started, .baseline_json = sb_str(&basej),
                  .axes_json = sb_str(&declared), .devices_json = sb_str(&devj)};
    int rc = store_begin_run(r->st, &env, &r->run_id, &r->err) != 0 ? session_fail(r, 3) : 0;
    sb_free(&cmd), sb_free(&basej), sb_free(&declared), sb_free(&devj);
    stage_end(&r->prof, RUN_STAGE_store);
    return rc;
}

/* The per-case arrays and the workload groups. */
static void session_cases(RunSession *r)
{
    size_t n = (size_t)(r->ncases ? r->ncases : 1);
    r->variant_ids = xcalloc((size_t)(r->p.nsrcs ? r->p.nsrcs : 1), sizeof(int64_t));
    r->tally.total = r->ncases;
    r->tty = isatty(STDERR_FILENO);
    r->gstart = xmalloc(sizeof(int) * (n + 1));
    for (int i = 0; i < r->ncases; i++)
        if (i == 0 || strcmp(r->cases[i].workload_key, r->cases[i - 1].workload_key) != 0)
            r->gstart[r->ngroups++] = i;
    r->gstart[r->ngroups] = r->ncases;
    r->gbase = xcalloc((size_t)(r->ngroups ? r->ngroups : 1), 1);
    for (int g = 0; g < r->ngroups; g++)
        r->gbase[g] = r->cases[r->gstart[g]].is_baseline; /* the baseline sorts first */
    r->live = xcalloc(n, sizeof(int));
    r->mvals = xcalloc(n, sizeof *r->mvals);
    r->geoms = xcalloc(n, sizeof *r->geoms);
    r->medians = xmalloc(sizeof(double) * n);
    for (int i = 0; i < r->ncases; i++)
        r->medians[i] = NAN;
    r->desc = xmalloc(sizeof *r->desc);
    r->refkeys = xcalloc(n, 65);
    r->kept = r->o.counters ? xcalloc(n, sizeof *r->kept) : NULL;
    r->kept_keys = xcalloc(n, sizeof *r->kept_keys);
}

/* The run row, the per-case state and one worker per GPU.  0 or the exit
 * status. */
static int session_begin(RunSession *r)
{
    if (r->rc || session_run_row(r))
        return r->rc;
    session_cases(r);
    for (int i = 0; i < r->ndev; i++) {
        if (worker_start(&r->workers[i], r->devs[i], &r->err) != 0) {
            kvx_error_print(&r->err, stderr);
            kvx_error_clear(&r->err);
            continue;
        }
        r->nworkers++;
    }
    if (r->nworkers == 0) {
        fprintf(stderr, "kvx run: no worker started: measuring needs a working GPU\n");
        r->rc = 1;
    }
    for (int i = 0; i < r->ndev; i++)
        if (r->workers[i].pid && r->workers[i].info.clocks_note[0]) {
            printf("clocks  %s\n", r->workers[i].info.clocks_note);
            fflush(stdout);
            break;
        }
    r->nworkers0 = r->nworkers;
    stage_end(&r->prof, RUN_STAGE_workers);
    return r->rc;
}

/* ---- the loop: hand-out ------------------------------------------------------------ */

/* Give an idle worker its next group (an orphaned one first).  0 when none is
 * left. */
static int next_group(RunSession *r, Worker *wk)
{
    if (wk->cur < wk->end)
        return 1;
    if (r->norphans > 0) {
        Range *o = &r->orphan[--r->norphans];
        wk->cur = o->cur, wk->end = o->end, wk->group = o->group;
        return 1;
    }
    if (r->next_group >= r->ngroups)
        return 0;
    wk->cur = r->gstart[r->next_group];
    wk->end = r->gstart[r->next_group + 1];
    wk->group = r->next_group++;
    return 1;
}

/* Restart a worker that died; a worker that cannot be restarted leaves the
 * rest of its group to the others. */
static void worker_replace(RunSession *r, Worker *wk)
{
    if (worker_start(wk, wk->device, &r->err) == 0)
        return;
    kvx_error_print(&r->err, stderr);
    kvx_error_clear(&r->err);
    r->nworkers--;
    if (wk->cur < wk->end)
        r->orphan[r->norphans++] = (Range){wk->cur, wk->end, wk->group};
    wk->cur = wk->end;
}

/* Store the variant row of source k once (with its SASS facts, found on the
 * compile threads).  0, or 3 after a store error. */
static int variant_row(RunSession *r, const RunCase *c, const JitJob *j)
{
    if (r->variant_ids[c->src])
        return 0;
    const Source *so = &r->p.srcs[c->src];
    char *code_json = run_axes_json(&r->p, c->point, so->code_axes);
    VariantRow vr = {.spec_name = r->s->name, .source_hash = so->hash, .label = so->label,
                     .code_axes_json = code_json, .arch = r->facts.arch, .options = r->opts_text,
                     .compile_ok = j->ok, .compile_log = j->log, .compile_ms = j->compile_ms,
                     .regs = j->regs, .spill_stores = j->spill_stores, .spill_loads = j->spill_loads,
                     .smem_static = j->smem_static, .stack = j->stack, .inspect_json = j->inspect_json};
    int rc = store_put_variant(r->st, r->run_id, &vr, &r->variant_ids[c->src], &r->err) ? session_fail(r, 3) : 0;
    free(code_json);
    return rc;
}

/* Resolve case idx into r->desc.  0, or -1 with res skipped (the reason). */
static int resolve_one(RunSession *r, const Worker *wk, int idx, const JitJob *j, const JitJob *rj,
                       CaseResult *res)
{
    const RunCase *c = &r->cases[idx];
    KvxError ce = {0};
    char cubin[1100], ref_cubin[1100];
    snprintf(cubin, sizeof cubin, "%s/kernel.cubin", j->dir);
    if (rj)
        snprintf(ref_cubin, sizeof ref_cubin, "%s/kernel.cubin", rj->dir);
    ResolveCase rcs = {.point = c->point, .ptx = j->ptx, .cubin_path = cubin,
                       .ref_ptx = rj ? rj->ptx : NULL, .ref_cubin_path = rj ? ref_cubin : NULL,
                       .workload_key = c->workload_key, .is_baseline = c->is_baseline,
                       .have_baseline = r->gbase[wk->group]};
    Resolver rv = {&r->p, &r->pref, &r->m};
    if (resolve_case(&rv, &rcs, r->desc, r->mvals[idx], &ce) == 0) {
        const char *why = r->desc->ref.present ? run_ref_failed(&r->refs_failed, r->desc->ref.key) : NULL;
        if (!why)
            return 0;
        res->status = CASE_skipped;
        snprintf(res->detail, sizeof res->detail, "%s", why);
        return -1;
    }
    res->status = CASE_skipped;
    if (ce.file[0])
        snprintf(res->detail, sizeof res->detail, "%.200s:%d:%d: %.700s", ce.file, ce.line, ce.col, ce.msg);
    else
        snprintf(res->detail, sizeof res->detail, "%.1000s", ce.msg);
    kvx_error_clear(&ce);
    return -1;
}

/* Queue r->desc (case idx) on the worker.  1 handed over; 0 when the worker
 * died with a case in flight (the poll reports that one; this one goes to its
 * replacement); -1 when it died before it: res is a fault. */
static int send_one(RunSession *r, Worker *wk, int idx, CaseResult *res)
{
    CaseDesc *d = r->desc;
    d->id = idx;
    r->geoms[idx] = (CaseGeom){{d->grid[0], d->grid[1], d->grid[2]}, {d->block[0], d->block[1], d->block[2]},
                               {d->cluster[0], d->cluster[1], d->cluster[2]}, d->smem};
    if (case_write(wk->to, d) != 0) {
        if (wk->nq > 0) {
            wk->cur--;
            wk->broken = 1;
            return 0;
        }
        res->status = CASE_fault;
        snprintf(res->detail, sizeof res->detail, "the worker for GPU %d died before the case", wk->device);
        return -1;
    }
    if (wk->nq == 0)
        wk->started = now_ms();
    wk->q[wk->nq++] = idx;
    /* A reference run first has a timeout of its own. */
    wk->timeout_ms = r->m.timeout_s * 1000 * (d->ref.present ? 2 : 1);
    memcpy(r->refkeys[idx], d->ref.key, sizeof r->refkeys[idx]);
    r->live[idx] = 1;
    if (r->kept) {
        /* checks' strings point into desc: the pass needs none */
        r->kept[idx] = *d;
        r->kept[idx].nchecks = 0;
    }
    return 1;
}

/* A case decided in the parent (compile error, skipped, a dead worker): its row. */
static void store_local(RunSession *r, const Worker *wk, int idx, const CaseResult *res)
{
    const RunCase *rcs = &r->cases[idx];
    CaseRow row;
    store_case_init(&row);
    row.key = rcs->key, row.spec_name = r->s->name, row.label = rcs->label;
    row.axes_json = rcs->axes_json, row.workload_json = rcs->workload_json;
    row.device_uuid = wk->info.uuid, row.status = case_status_names[res->status], row.detail = res->detail;
    if (store_put_case(r->st, r->run_id, r->variant_ids[rcs->src], &row, &r->err) != 0)
        session_fail(r, 3);
    r->tally.counts[res->status]++;
    r->tally.done++;
    if (!r->tty)
        printf("%-13s %s  %s\n", case_status_names[res->status], rcs->label, res->detail);
    progress(&r->tally, r->t0, r->tty);
}

/* The compiled jobs of the worker's next case, once ready.  1 ready; 0 not yet
 * (the worker is busy: its result must be read first); -1 the compile thread
 * failed. */
static int jobs_ready(RunSession *r, Worker *wk, JitJob **j, JitJob **rj)
{
    const RunCase *c = &r->cases[wk->cur];
    Compiler *comp = &r->comp;
    int ji = comp->job_of[c->src], rsrc = plan_ref_src(&r->p, &r->pref, c->point);
    int rji = rsrc >= 0 ? comp->job_of[rsrc] : ji;
    double tp = now_ms();
    pthread_mutex_lock(&comp->mu);
    while (wk->nq == 0 && !(comp->ready[ji] && comp->ready[rji]) && !comp->finished)
        pthread_cond_wait(&comp->cv, &comp->mu);
    int ready = comp->ready[ji] && comp->ready[rji], pending = !ready && !comp->finished;
    pthread_mutex_unlock(&comp->mu);
    part_add(&r->prof, RUN_PART_compile_wait, &tp);
    if (pending)
        return 0;
    if (!ready) {
        kvx_error_print(&comp->err, stderr);
        r->rc = 3;
        return -1;
    }
    *j = &comp->jobs[ji];
    *rj = rsrc >= 0 ? &comp->jobs[rji] : NULL;
    return 1;
}

/* Hand the worker its next case.  1 when it may take another now, 0 when
 * not (full, busy waiting on a compile, nothing left, or an error: r->rc). */
static int handout_one(RunSession *r, Worker *wk)
{
    if (!wk->pid || wk->broken || wk->nq >= RUN_PIPELINE || !next_group(r, wk))
        return 0;
    JitJob *j, *rj;
    if (jobs_ready(r, wk, &j, &rj) <= 0)
        return 0;
    double tp = now_ms();
    if (variant_row(r, &r->cases[wk->cur], j))
        return 0;
    part_add(&r->prof, RUN_PART_variants, &tp);
    int idx = wk->cur++;
    CaseResult res;
    memset(&res, 0, sizeof res);
    res.id = idx;
    res.rel_err = NAN;
    int sent = -1;
    if (!j->ok) {
        res.status = CASE_compile_error;
        snprintf(res.detail, sizeof res.detail, "NVRTC rejected %s (the log is stored with the variant)", j->name);
    } else if (rj && !rj->ok) {
        res.status = CASE_skipped;
        snprintf(res.detail, sizeof res.detail, "reference kernel: NVRTC rejected %s", rj->name);
    } else if (resolve_one(r, wk, idx, j, rj, &res) == 0) {
        sent = send_one(r, wk, idx, &res);
    }
    part_add(&r->prof, RUN_PART_handout, &tp);
    if (sent >= 0)
        return sent;
    store_local(r, wk, idx, &res);
    if (res.status == CASE_fault) {
        worker_stop(wk, 1);
        worker_replace(r, wk);
    }
    part_add(&r->prof, RUN_PART_commit, &tp);
    return r->rc == 0;
}

/* ---- the loop: results ------------------------------------------------------------- */

/* The row of a case a worker answered (or that timed out, or whose worker
 * died: got_result 0). */
static void store_result(RunSession *r, const Worker *wk, int idx, const CaseResult *res, int got_result)
{
    const RunCase *rcs = &r->cases[idx];
    CaseRow row;
    store_case_init(&row);
    row.key = rcs->key, row.spec_name = r->s->name, row.label = rcs->label;
    row.axes_json = rcs->axes_json, row.workload_json = rcs->workload_json;
    row.device_uuid = wk->info.uuid, row.status = case_status_names[res->status], row.detail = res->detail;
    const CaseGeom *g = &r->geoms[idx];
    for (int d = 0; d < 3; d++)
        row.grid[d] = g->grid[d], row.block[d] = g->block[d], row.cluster[d] = g->cluster[d];
    row.smem = g->smem;
    int have_t = res->samples > 0;
    row.median_ms = have_t ? res->median_ms : NAN;
    row.min_ms = have_t ? res->min_ms : NAN;
    row.max_ms = have_t ? res->max_ms : NAN;
    row.mean_ms = have_t ? res->mean_ms : NAN;
    row.stdev_ms = have_t ? res->stdev_ms : NAN;
    row.noise = have_t ? res->noise : NAN;
    row.samples = res->samples;
    row.rel_err = res->rel_err;
    row.bytes = r->mvals[idx][0], row.atomics = r->mvals[idx][1], row.elements = r->mvals[idx][2];
    double sec = row.median_ms / 1000, peak = wk->info.peak_gbs;
    row.gbs = have_t ? row.bytes / sec / 1e9 : NAN;
    row.pct_peak = have_t && peak > 0 ? row.gbs / peak * 100 : NAN;
    row.atomics_per_s = have_t ? row.atomics / sec : NAN;
    row.elems_per_s = have_t ? row.elements / sec : NAN;
    row.t_input_ms = res->t_input_ms, row.t_verify_ms = res->t_verify_ms, row.t_measure_ms = res->t_measure_ms;
    char *cprof = got_result ? case_profile_json(res) : NULL;
    row.profile_json = cprof;
    row.sm_mhz = res->sm_mhz, row.mem_mhz = res->mem_mhz, row.sm_max_mhz = res->sm_max_mhz;
    row.throttled = res->sm_mhz > 0 && res->sm_max_mhz > 0 ? res->throttled : -1;
    if (store_put_case(r->st, r->run_id, r->variant_ids[rcs->src], &row, &r->err) != 0)
        session_fail(r, 3);
    free(cprof);
}

/* What a result means for the tally, the summary and the terminal. */
static void note_result(RunSession *r, int idx, const CaseResult *res, int got_result)
{
    const RunCase *rcs = &r->cases[idx];
    r->medians[idx] = res->status == CASE_ok && res->samples > 0 ? res->median_ms : NAN;
    if (r->kept && (res->status == CASE_ok || res->status == CASE_mismatch))
        r->kept_keys[idx] = rcs->key;
    if (got_result)
        profile_add_result(&r->prof, res);
    r->tally.t_input += res->t_input_ms;
    r->tally.t_verify += res->t_verify_ms;
    r->tally.t_measure += res->t_measure_ms;
    r->tally.counts[res->status]++;
    r->tally.done++;
    r->live[idx] = 0;
    if (!r->tty || res->status != CASE_ok) {
        if (r->tty)
            fprintf(stderr, "\r%*s\r", 70, "");
        printf("%-13s %s", case_status_names[res->status], rcs->label);
        if (res->samples > 0)
            printf("  %.4f ms", res->median_ms);
        if (res->status != CASE_ok && res->detail[0])
            printf("  %s", res->detail);
        printf("\n");
        fflush(stdout);
    }
    progress(&r->tally, r->t0, r->tty);
}

/* Read the worker's oldest case: its result, its death or its timeout.  1
 * with res filled (*got_result: the worker answered; *restart: it must be
 * replaced), 0 when there is nothing yet. */
static int read_result(RunSession *r, Worker *wk, short revents, CaseResult *res, int *got_result,
                       int *restart)
{
    int idx = wk->q[0];
    memset(res, 0, sizeof *res);
    *got_result = *restart = 0;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        if (result_read(wk->from, res) == 0 && res->id == idx) {
            *got_result = 1;
            /* A sticky fault ends the worker's context: it exits after saying
             * so; so may a reference kernel that failed. */
            *restart = res->status == CASE_fault || res->ref_failed;
            if (res->ref_failed)
                run_ref_fail(&r->refs_failed, r->refkeys[idx], res->detail);
            r->tally.refs_run += res->ref_ran;
            return 1;
        }
        memset(res, 0, sizeof *res);
        res->status = CASE_fault;
        res->rel_err = NAN;
        worker_stop(wk, 1);
        snprintf(res->detail, sizeof res->detail, "the worker for GPU %d died during the case", wk->device);
        *restart = 1;
        return 1;
    }
    if (now_ms() - wk->started <= wk->timeout_ms)
        return 0;
    res->status = CASE_timeout;
    res->rel_err = NAN;
    snprintf(res->detail, sizeof res->detail, "no result after %.0f s; the worker was killed",
             wk->timeout_ms / 1000);
    *restart = 1;
    return 1;
}

/* One worker's poll outcome. */
static void collect_one(RunSession *r, Worker *wk, short revents, double *tp)
{
    int idx = wk->q[0], got_result, restart;
    CaseResult res;
    if (!read_result(r, wk, revents, &res, &got_result, &restart))
        return;
    if (!got_result)
        r->prof.lost_ms += now_ms() - wk->started;
    /* The next case in the queue is running now. */
    wk->q[0] = wk->q[1];
    wk->nq--;
    wk->started = now_ms();
    if (restart) {
        worker_stop(wk, 1);
        /* What was queued behind it went with the process: hand it again (the
         * queue holds the last case handed out, cases[cur - 1]). */
        if (wk->nq > 0) {
            KVX_ASSERT(wk->q[0] == wk->cur - 1);
            wk->cur = wk->q[0];
        }
        wk->nq = 0;
    }
    store_result(r, wk, idx, &res, got_result);
    note_result(r, idx, &res, got_result);
    part_add(&r->prof, RUN_PART_commit, tp);
    if (restart)
        worker_replace(r, wk);
}

/* Wait for a result or a timeout (at most a second), and take what came. */
static void collect(RunSession *r)
{
    struct pollfd pfd[RUN_MAX_DEVICES];
    int map[RUN_MAX_DEVICES], npfd = 0;
    double soonest = 1e18;
    for (int w = 0; w < r->ndev; w++) {
        const Worker *wk = &r->workers[w];
        if (!wk->pid || wk->nq == 0)
            continue;
        pfd[npfd] = (struct pollfd){.fd = wk->from, .events = POLLIN};
        map[npfd++] = w;
        double left = wk->started + wk->timeout_ms - now_ms();
        soonest = left < soonest ? left : soonest;
    }
    if (npfd == 0)
        return;
    int wait_ms = soonest < 0 ? 0 : soonest > 1000 ? 1000 : (int)soonest + 1;
    double tp = now_ms();
    int nready = poll(pfd, (nfds_t)npfd, wait_ms);
    part_add(&r->prof, RUN_PART_poll, &tp);
    if (nready < 0 && errno != EINTR) {
        fprintf(stderr, "kvx run: poll: %s\n", strerror(errno));
        r->rc = 3;
        return;
    }
    for (int k = 0; k < npfd; k++)
        collect_one(r, &r->workers[map[k]], pfd[k].revents, &tp);
}

/* Hand out and collect until every case is stored. */
static void session_loop(RunSession *r)
{
    while (r->rc == 0 && r->tally.done < r->ncases && r->nworkers > 0) {
        /* Cases to workers with room in their queue, in order, as their
         * sources become ready. */
        for (int w = 0; w < r->ndev && r->rc == 0; w++)
            while (handout_one(r, &r->workers[w]))
                ;
        if (r->rc == 0)
            collect(r);
    }
    if (r->tty)
        fprintf(stderr, "\r%*s\r", 70, "");
    stage_end(&r->prof, RUN_STAGE_loop);
}

/* ---- the end ---------------------------------------------------------------------------- */

/* Workers ended, the compile thread joined, the run row closed, the summary
 * printed, then --counters' pass.  The exit status. */
static int session_finish(RunSession *r)
{
    for (int w = 0; w < r->ndev; w++)
        worker_stop(&r->workers[w], 0);
    if (r->comp_started)
        pthread_join(r->comp.thread, NULL);
    r->comp_started = 0;
    stage_end(&r->prof, RUN_STAGE_finish);
    double wall = (r->prof.lap - r->prof.t0) / 1000, compile_ms = 0;
    int nhit = 0;
    for (int i = 0; i < r->comp.n; i++) {
        compile_ms += r->comp.jobs[i].cached ? 0 : r->comp.jobs[i].compile_ms;
        nhit += r->comp.jobs[i].cached;
    }
    StrBuf profj;
    sb_init(&profj);
    profile_json(&r->prof, &r->tally, r->comp.n, r->comp.wall_ms, compile_ms, nhit, r->nworkers0, &profj);
    if (r->run_id && store_end_run(r->st, r->run_id, wall, sb_str(&profj), &r->err) != 0) {
        kvx_error_print(&r->err, stderr);
        kvx_error_clear(&r->err);
    }
    const Tally *t = &r->tally;
    printf("\n%d cases in %.1f s:", t->done, wall);
    for (int k = 0; k < CASE_STATUS_COUNT; k++)
        if (t->counts[k])
            printf(" %d %s", t->counts[k], case_status_names[k]);
    if (r->nstored)
        printf(" (%d stored earlier, skipped)", r->nstored);
    if (r->pref.kind != PLAN_REF_NONE)
        printf("\nreference kernel: %d run%s for %d cases (once per reference key and worker)", t->refs_run,
               t->refs_run == 1 ? "" : "s", t->done);
    printf("\ntime    compile %.1f s wall (%d sources, %d from cache, %.1f s of NVRTC), inputs %.1f s, "
           "verify %.1f s, measure %.1f s\n", r->comp.wall_ms / 1000, r->comp.n, nhit, compile_ms / 1000,
           t->t_input / 1000, t->t_verify / 1000, t->t_measure / 1000);
    if (r->o.profile) {
        profile_print(&r->prof, t, r->nworkers0);
        printf("profile_json %s\n", sb_str(&profj));
    }
    sb_free(&profj);
    if (t->done && r->rc == 0) {
        run_print_best(&r->p, r->cases, r->medians, r->ncases, r->base_mask);
        printf("results %s (run %lld); tabulate with: kvx table --db %s --spec %s --rows ... --cols ...\n",
               r->db_path, (long long)r->run_id, r->db_path, r->s->name);
    }
    /* A pass of its own, after the timed run: a profiler replays kernels. */
    if (r->kept && r->rc == 0 && t->done)
        r->rc = run_counters(r->st, r->run_id, r->kept, r->kept_keys, r->ncases, r->devs[0]);
    if (r->rc)
        return r->rc;
    return t->counts[CASE_ok] == t->done ? 0 : 1;
}

/* Free whatever the stages made; a zeroed session is fine. */
static void session_close(RunSession *r)
{
    for (int w = 0; w < r->ndev; w++)
        worker_stop(&r->workers[w], 1);
    if (r->comp_started)
        pthread_join(r->comp.thread, NULL);
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
    run_cases_free(r->cases, r->ncases);
    free(r->variant_ids), free(r->live), free(r->mvals), free(r->geoms);
    free(r->gstart), free(r->gbase), free(r->medians), free(r->desc);
    run_ref_fails_free(&r->refs_failed);
    free(r->refkeys), free(r->kept), free(r->kept_keys);
    free(r->cache), free(r->mjson), free(r->sel);
    store_close(r->st);
    plan_ref_free(&r->pref);
    if (r->p.spec)
        plan_free(&r->p);
    spec_free(r->s);
    kvx_error_clear(&r->err);
}

/* `kvx run`: the stages in order; every failure ends in session_close. */
int cmd_run(int argc, char **argv)
{
    RunSession *r = xcalloc(1, sizeof *r);
    int rc = session_open(r, argc, argv);
    if (rc == RUN_PER_ARCH)
        rc = run_per_arch(argc, argv, r->infos, r->devs, r->ndev);
    else if (rc == 0 && (rc = session_plan(r)) == 0) {
        session_compile(r);
        if (session_begin(r) == 0)
            session_loop(r);
        rc = session_finish(r);
    }
    session_close(r);
    free(r);
    return rc;
}
