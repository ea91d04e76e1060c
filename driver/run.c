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

static const char *status_name(int st) { return case_status_names[st]; }

typedef struct Tally {
    int counts[CASE_STATUS_COUNT];
    int done, total, skipped_stored;
    double t_input, t_verify, t_measure;
    int refs_run;               /* reference kernel runs (once per reference key and worker) */
} Tally;

/* Where the run's wall time went.  The stages tile cmd_run from its start to
 * the run row's end; the loop's parts are the parent's side of the loop; the
 * workers' steps (CASE_STEPS) are summed over every case measured. */
#define RUN_STAGES(X)                                                            \
    X(load, "spec load, plan, selection")                                        \
    X(probe, "the GPU probe (a child process: cuInit)")                          \
    X(store, "database open, case keys and lookups, the run row")                \
    X(workers, "compile thread and worker processes started (cuInit, context)")  \
    X(loop, "cases handed out, measured and stored")                             \
    X(finish, "workers ended, compile thread joined")
#define RUN_PARTS(X)                                                             \
    X(compile_wait, "waiting for NVRTC (or the compile cache)")                  \
    X(variants, "variant rows: SASS facts and their store")                      \
    X(handout, "cases resolved and written to a worker")                         \
    X(commit, "results stored (one transaction each) and printed")               \
    X(poll, "waiting for results")

typedef enum {
#define X(n, d) RUN_STAGE_##n,
    RUN_STAGES(X)
#undef X
    RUN_STAGE_COUNT
} RunStage;
typedef enum {
#define X(n, d) RUN_PART_##n,
    RUN_PARTS(X)
#undef X
    RUN_PART_COUNT
} RunPart;
static const char *const stage_names[] = {
#define X(n, d) #n,
    RUN_STAGES(X)
#undef X
};
static const char *const part_names[] = {
#define X(n, d) #n,
    RUN_PARTS(X)
#undef X
};

typedef struct RunProfile {
    double t0, lap;                     /* now_ms() at cmd_run's start, at the last stage's end */
    double stage[RUN_STAGE_COUNT];      /* ms */
    double part[RUN_PART_COUNT];        /* ms */
    double step[CASE_STEP_COUNT];       /* ms, summed over cases */
    double gpu_ms, prep_gpu_ms;         /* kernel time of the samples; their resets and flushes */
    long launches, samples, measured;   /* measured: cases with samples */
    int throttled;
    double lost_ms;                     /* cases that never answered (timeout, death): their wait */
} RunProfile;

static void stage_end(RunProfile *pr, RunStage st)
{
    double now = now_ms();
    pr->stage[st] += now - pr->lap;
    pr->lap = now;
}

/* Add to a part of the loop the time since *t; *t becomes now. */
static void part_add(RunProfile *pr, RunPart part, double *t)
{
    double now = now_ms();
    pr->part[part] += now - *t;
    *t = now;
}

static void profile_add_result(RunProfile *pr, const CaseResult *r)
{
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        pr->step[k] += r->t_step[k];
    pr->gpu_ms += r->gpu_ms;
    pr->prep_gpu_ms += r->prep_gpu_ms;
    pr->launches += r->launches;
    pr->samples += r->samples;
    pr->measured += r->samples > 0;
    pr->throttled += r->throttled;
}

/* The case's steps as the cases row's profile_json, ms; malloc'd. */
static char *case_profile_json(const CaseResult *r)
{
    StrBuf b;
    sb_init(&b);
    sb_putc(&b, '{');
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        sb_printf(&b, "\"%s\":%.3f,", case_step_names[k], r->t_step[k]);
    sb_printf(&b, "\"gpu_ms\":%.4f,\"prep_gpu_ms\":%.4f,\"launch_ms\":", r->gpu_ms, r->prep_gpu_ms);
    if (isnan(r->launch_ms))
        sb_puts(&b, "null");
    else
        sb_printf(&b, "%.4f", r->launch_ms);
    sb_printf(&b, ",\"warmups\":%d,\"launches\":%d}", r->warmups, r->launches);
    return sb_take(&b);
}

/* The workers' time not spent waiting for a case. */
static double worker_busy_ms(const RunProfile *pr)
{
    double busy = 0;
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        if (k != CASE_STEP_recv)
            busy += pr->step[k];
    return busy;
}

/* The share of the wall time that the profile names: every stage but the
 * loop, the loop's parts, and of the parent's waiting for results as much as
 * the workers were busy (the rest is time nobody was working: pipe latency). */
static double profile_accounted_ms(const RunProfile *pr, int nworkers)
{
    double named = 0;
    for (int k = 0; k < RUN_STAGE_COUNT; k++)
        if (k != RUN_STAGE_loop)
            named += pr->stage[k];
    for (int k = 0; k < RUN_PART_COUNT; k++)
        if (k != RUN_PART_poll)
            named += pr->part[k];
    double busy = (worker_busy_ms(pr) + pr->lost_ms) / (nworkers > 0 ? nworkers : 1);
    return named + fmin(pr->part[RUN_PART_poll], busy);
}

static void profile_json(const RunProfile *pr, const Tally *t, const Compiler *comp, double compile_ms,
                         int nhit, int nworkers, StrBuf *b)
{
    double wall = pr->lap - pr->t0;
    sb_printf(b, "{\"wall_s\":%.3f,\"compile_wall_s\":%.3f,\"compile_cpu_s\":%.3f,\"sources\":%d,"
              "\"cache_hits\":%d,\"input_s\":%.3f,\"verify_s\":%.3f,\"measure_s\":%.3f,\"cases\":%d,"
              "\"workers\":%d,\"reference_runs\":%d", wall / 1000, comp->wall_ms / 1000, compile_ms / 1000,
              comp->n, nhit, t->t_input / 1000, t->t_verify / 1000, t->t_measure / 1000, t->done, nworkers,
              t->refs_run);
    sb_puts(b, ",\"stages_s\":{");
    for (int k = 0; k < RUN_STAGE_COUNT; k++)
        sb_printf(b, "%s\"%s\":%.3f", k ? "," : "", stage_names[k], pr->stage[k] / 1000);
    sb_puts(b, "},\"loop_s\":{");
    for (int k = 0; k < RUN_PART_COUNT; k++)
        sb_printf(b, "%s\"%s\":%.3f", k ? "," : "", part_names[k], pr->part[k] / 1000);
    sb_puts(b, "},\"worker_s\":{");
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        sb_printf(b, "%s\"%s\":%.3f", k ? "," : "", case_step_names[k], pr->step[k] / 1000);
    double acc = profile_accounted_ms(pr, nworkers);
    sb_printf(b, "},\"lost_s\":%.3f", pr->lost_ms / 1000);
    sb_printf(b, ",\"gpu_s\":%.4f,\"prep_gpu_s\":%.4f,\"launches\":%ld,\"samples\":%ld,"
              "\"throttled\":%d,\"cases_per_s\":%.2f,\"gpu_share\":%.4f,\"gpu_busy_share\":%.4f,"
              "\"accounted\":%.4f}",
              pr->gpu_ms / 1000, pr->prep_gpu_ms / 1000, pr->launches, pr->samples, pr->throttled,
              wall > 0 ? t->done / (wall / 1000) : 0, wall > 0 ? pr->gpu_ms / wall : 0,
              wall > 0 ? (pr->gpu_ms + pr->prep_gpu_ms) / wall : 0, wall > 0 ? acc / wall : 0);
}

/* `kvx run --profile`: where the wall time went, and the explorer's own
 * figures: cases per second and the share of the wall the GPU spent on the
 * kernels being timed. */
static void profile_print(const RunProfile *pr, const Tally *t, int nworkers)
{
    double wall = pr->lap - pr->t0;
    if (wall <= 0)
        return;
    printf("profile %.2f s wall, %d cases: %.1f cases/s; GPU time of the samples %.3f s (%.1f%% of "
           "the wall), with their resets and flushes %.3f s (%.1f%%); %ld launches\n",
           wall / 1000, t->done, t->done / (wall / 1000), pr->gpu_ms / 1000, 100 * pr->gpu_ms / wall,
           (pr->gpu_ms + pr->prep_gpu_ms) / 1000, 100 * (pr->gpu_ms + pr->prep_gpu_ms) / wall,
           pr->launches);
    printf("  stages ");
    for (int k = 0; k < RUN_STAGE_COUNT; k++)
        printf(" %s %.3f", stage_names[k], pr->stage[k] / 1000);
    printf("\n  loop   ");
    double parts = 0;
    for (int k = 0; k < RUN_PART_COUNT; k++) {
        printf(" %s %.3f", part_names[k], pr->part[k] / 1000);
        parts += pr->part[k];
    }
    printf(" other %.3f\n  worker  (summed over %d worker%s; per case, ms)\n", 
           (pr->stage[RUN_STAGE_loop] - parts) / 1000, nworkers, nworkers == 1 ? "" : "s");
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        printf("    %-10s %8.3f s  %8.3f ms\n", case_step_names[k], pr->step[k] / 1000,
               t->done ? pr->step[k] / t->done : 0);
    if (pr->lost_ms > 0)
        printf("    %-10s %8.3f s  (cases that timed out or whose worker died, until then)\n", "lost",
               pr->lost_ms / 1000);
    double acc = profile_accounted_ms(pr, nworkers);
    printf("  accounted %.1f%% of the wall (stages and loop parts; waiting for results as far as the "
           "workers were busy)\n", 100 * acc / wall);
    if (pr->throttled)
        printf("  %d case%s ran with the SM clock below 90%% of its maximum (column throttled)\n",
               pr->throttled, pr->throttled == 1 ? "" : "s");
}

static void progress(const Tally *t, double t0, int tty)
{
    if (!tty)
        return;
    double el = (now_ms() - t0) / 1000;
    double rate = el > 0 ? t->done / el : 0;
    double eta = rate > 0 ? (t->total - t->done) / rate : 0;
    int fails = t->done - t->counts[CASE_ok];
    fprintf(stderr, "\r  %d/%d cases  %.1f/s  ETA %.0fs  %d not ok   ", t->done, t->total, rate, eta, fails);
}

/* Several archs among the selected GPUs: one `kvx run` per arch, as child
 * processes (fork + exec, the same arguments with --devices narrowed to that
 * arch's GPUs), run side by side into the same database.  Each plans the spec
 * with its own GPU's facts and compiles for its own arch.  Returns the worst
 * exit status. */
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

int cmd_run(int argc, char **argv)
{
    RunOpts o;
    RunProfile prof;
    memset(&prof, 0, sizeof prof);
    prof.t0 = prof.lap = now_ms();
    int rc = run_parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    KvxError err = {0};
    Spec *s = spec_load(o.spec.spec_path, &err);
    if (!s) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        return 2;
    }
    stage_end(&prof, RUN_STAGE_load);

    /* The GPU, probed in a child: the parent stays free of CUDA. */
    DeviceInfo infos[RUN_MAX_DEVICES];
    int ngpu = 0;
    if (worker_probe(infos, RUN_MAX_DEVICES, &ngpu, &err) != 0 || ngpu == 0) {
        fprintf(stderr, "kvx run: %s (plan, gen, compile and inspect work without one)\n",
                err.code ? err.msg : "no GPU found: measuring needs a GPU");
        kvx_error_clear(&err);
        spec_free(s);
        return 1;
    }
    stage_end(&prof, RUN_STAGE_probe);
    int devs[RUN_MAX_DEVICES] = {0};
    int ndev = run_parse_devices(o.devices, ngpu, devs, &err);
    if (ndev <= 0) {
        if (ndev == 0)
            kvx_error_set(&err, KVX_EINPUT, NULL, "--devices selects no GPU");
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        spec_free(s);
        return 2;
    }
    /* One plan per arch.  A host whose selected GPUs span several archs runs one
     * supervisor per arch, side by side, each with cubins for its own arch. */
    int narchs = 0;
    for (int i = 0; i < ndev; i++) {
        int first = 1;
        for (int k = 0; k < i && first; k++)
            first = !(infos[devs[k]].cc_major == infos[devs[i]].cc_major &&
                      infos[devs[k]].cc_minor == infos[devs[i]].cc_minor);
        narchs += first;
    }
    if (narchs > 1) {
        rc = run_per_arch(argc, argv, infos, devs, ndev);
        spec_free(s);
        return rc;
    }
    DeviceFacts facts;
    device_info_facts(&infos[devs[0]], &facts);

    Plan p;
    if (plan_build(s, &facts, &p, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        spec_free(s);
        return 2;
    }
    /* Every selected point resolved as plan does, before any GPU work. */
    PlanRef pref;
    unsigned char *sel = NULL;
    if (plan_ref_build(&p, &pref, &err) != 0 || !(sel = cli_select_points(&p, o.spec.where, &err)) ||
        resolve_plan(&p, &pref, sel, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(sel);
        plan_ref_free(&pref);
        plan_free(&p);
        spec_free(s);
        return 2;
    }
    Shard shard;
    if (shard_parse(o.spec.shard, &shard, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(sel);
        plan_ref_free(&pref);
        plan_free(&p);
        spec_free(s);
        return 2;
    }
    stage_end(&prof, RUN_STAGE_load);
    MeasureSettings m = s->measure;
    run_apply_overrides(&o, &m);
    char *mjson = run_measure_json(&m);
    const char *db_path = o.db ? o.db : RESULTS_DEFAULT_DB;
    if (!o.db) {
        char *dir = path_dir(db_path);
        mkdir_p(dir);
        free(dir);
    }
    Store *st = store_open(db_path, &err);
    if (!st) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(mjson);
        free(sel);
        plan_ref_free(&pref);
        plan_free(&p);
        spec_free(s);
        return 3;
    }

    /* Baseline axes: a point's partner is itself with these set to the baseline. */
    uint64_t base_mask = 0;
    for (int i = 0; i < s->nbaseline; i++)
        base_mask |= 1ULL << s->baseline[i].axis;
    char opts_text[1024] = "";
    for (int i = 0; i < s->noptions; i++)
        snprintf(opts_text + strlen(opts_text), sizeof opts_text - strlen(opts_text), "%s%s", i ? " " : "",
                 s->options[i]);
    const char *uuid = infos[devs[0]].uuid;

    /* Cases: selected points of this shard, minus those already stored. */
    RunKeyEnv ke = {.options = opts_text, .arch = facts.arch, .device_uuid = uuid, .measure_json = mjson};
    RunCase *cases = NULL;
    int ncases = 0, nstored = 0, nsel = 0;
    rc = run_cases_list(&p, sel, &shard, &ke, st, o.rerun, &cases, &ncases, &nstored, &nsel);
    run_ref_order(&p, &pref, &m, cases, ncases);

    printf("kvx run %s: %d points selected", s->path, nsel);
    if (shard.n > 1)
        printf(", shard %d/%d (from %s) has %d", shard.k + 1, shard.n, shard.from, ncases + nstored);
    printf(": %d to run, %d already stored (--rerun to repeat)\n", ncases, nstored);
    printf("device  %s, %s, %d SMs, L2 %.0f MiB, peak %.0f GB/s; %d worker%s\n", infos[devs[0]].name,
           facts.arch, facts.sm_count, facts.l2_bytes / 1048576.0, facts.peak_gbs, ndev, ndev > 1 ? "s" : "");
    printf("measure %s\n", mjson);
    fflush(stdout);

    /* Compile the sources the cases need, in first-use order, while running. */
    Compiler comp = {0};
    pthread_mutex_init(&comp.mu, NULL);
    pthread_cond_init(&comp.cv, NULL);
    /* Sources: the variants' (0 .. nsrcs) and a reference template's after them. */
    int nall = plan_ref_nsources(&p, &pref);
    comp.jobs = xcalloc((size_t)(nall ? nall : 1), sizeof(JitJob));
    comp.ready = xcalloc((size_t)(nall ? nall : 1), sizeof(int));
    comp.job_of = xmalloc(sizeof(int) * (size_t)(nall ? nall : 1));
    for (int k = 0; k < nall; k++)
        comp.job_of[k] = -1;
    char *cache = o.spec.cache_dir ? xstrdup(o.spec.cache_dir) : cli_default_cache_dir();
    comp.jo = (JitOptions){.cache_dir = cache, .threads = o.spec.jobs, .use_cache = !o.spec.no_cache,
                           .cccl_include = NULL, .after = inspect_after};
    for (int i = 0; i < 2 * ncases; i++) {
        int k = i % 2 ? plan_ref_src(&p, &pref, cases[i / 2].point) : cases[i / 2].src;
        if (k < 0 || comp.job_of[k] >= 0)
            continue;
        const Source *so = plan_ref_source_at(&p, &pref, k);
        comp.job_of[k] = comp.n;
        JitJob *j = &comp.jobs[comp.n++];
        j->name = so->file;
        j->source = so->text;
        j->arch = facts.arch;
        j->options = s->options;
        j->noptions = s->noptions;
        j->use_cccl = s->use_cccl;
    }
    stage_end(&prof, RUN_STAGE_store);
    double t0 = now_ms();
    pthread_create(&comp.thread, NULL, compile_main, &comp);
    stage_end(&prof, RUN_STAGE_workers);

    RunEnv env = {0};
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char started[32];
    time_t now = time(NULL);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    StrBuf cmd;
    sb_init(&cmd);
    for (int i = 0; i < argc; i++)
        sb_printf(&cmd, "%s%s", i ? " " : "kvx ", argv[i]);
    int nv_major = 0, nv_minor = 0;
    jit_nvrtc_version(&nv_major, &nv_minor);
    char nvrtc[16];
    snprintf(nvrtc, sizeof nvrtc, "%d.%d", nv_major, nv_minor);
    StrBuf basej;
    sb_init(&basej);
    run_baseline_json(s, &basej);
    StrBuf declared;
    sb_init(&declared);
    run_declared_json(s, &declared);
    const DeviceInfo *d0 = &infos[devs[0]];
    /* Every GPU this run measures on; the run row's gpu_* fields are d0's. */
    StrBuf devj;
    sb_init(&devj);
    sb_putc(&devj, '[');
    for (int i = 0; i < ndev; i++) {
        const DeviceInfo *d = &infos[devs[i]];
        sb_printf(&devj, "%s{\"ordinal\":%d,\"name\":", i ? "," : "", d->ordinal);
        run_json_string(&devj, d->name);
        sb_puts(&devj, ",\"uuid\":");
        run_json_string(&devj, d->uuid);
        sb_printf(&devj, ",\"cc\":%d,\"sm_count\":%d,\"clock_mhz\":%d,\"mem_clock_mhz\":%d,"
                  "\"peak_gbs\":%.1f}", d->cc_major * 10 + d->cc_minor, d->sm_count,
                  d->clock_khz / 1000, d->mem_clock_khz / 1000, d->peak_gbs);
    }
    sb_putc(&devj, ']');
    env = (RunEnv){.spec_name = s->name, .spec_path = s->path, .gpu_name = d0->name, .gpu_uuid = d0->uuid,
                   .cc = facts.cc, .sm_count = d0->sm_count, .l2_bytes = d0->l2_bytes,
                   .mem_bytes = d0->mem_bytes, .clock_mhz = d0->clock_khz / 1000,
                   .mem_clock_mhz = d0->mem_clock_khz / 1000, .peak_gbs = d0->peak_gbs,
                   .driver_version = d0->driver_version, .nvrtc_version = nvrtc, .kvx_version = KVX_VERSION,
                   .arch = facts.arch, .hostname = host, .command = sb_str(&cmd), .measure_json = mjson,
                   .started_at = started, .baseline_json = sb_str(&basej),
                   .axes_json = sb_str(&declared), .devices_json = sb_str(&devj)};
    int64_t run_id = 0;
    if (rc == 0 && store_begin_run(st, &env, &run_id, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        rc = 3;
    }

    stage_end(&prof, RUN_STAGE_store);
    Worker workers[RUN_MAX_DEVICES];
    memset(workers, 0, sizeof workers);
    int nworkers = 0;
    for (int i = 0; rc == 0 && i < ndev; i++) {
        if (worker_start(&workers[i], devs[i], &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            continue;
        }
        nworkers++;
    }
    if (rc == 0 && nworkers == 0) {
        fprintf(stderr, "kvx run: no worker started: measuring needs a working GPU\n");
        rc = 1;
    }
    for (int i = 0; i < ndev; i++)
        if (workers[i].pid && workers[i].info.clocks_note[0]) {
            printf("clocks  %s\n", workers[i].info.clocks_note);
            fflush(stdout);
            break;
        }
    const int nworkers0 = nworkers;
    stage_end(&prof, RUN_STAGE_workers);

    int64_t *variant_ids = xcalloc((size_t)p.nsrcs, sizeof(int64_t));
    Tally tally = {0};
    tally.total = ncases;
    int tty = isatty(STDERR_FILENO);
    /* Workload groups (contiguous after the sort) go whole to one worker: it
     * then generates each input once, keeps the group's host references, and
     * holds the baseline's output for the differential check. */
    int *gstart = xmalloc(sizeof(int) * (size_t)(ncases + 1));
    int ngroups = 0, next_group = 0;
    for (int i = 0; i < ncases; i++)
        if (i == 0 || strcmp(cases[i].workload_key, cases[i - 1].workload_key) != 0)
            gstart[ngroups++] = i;
    gstart[ngroups] = ncases;
    unsigned char *gbase = xcalloc((size_t)(ngroups ? ngroups : 1), 1);
    Range orphan[RUN_MAX_DEVICES];
    int norphans = 0;
    for (int g = 0; g < ngroups; g++)
        gbase[g] = cases[gstart[g]].is_baseline; /* the baseline sorts first */
    int *live = xcalloc((size_t)(ncases ? ncases : 1), sizeof(int)); /* 1 = handed out */
    double (*mvals)[3] = xcalloc((size_t)(ncases ? ncases : 1), sizeof *mvals);
    CaseGeom *geoms = xcalloc((size_t)(ncases ? ncases : 1), sizeof *geoms);
    double *medians = xmalloc(sizeof(double) * (size_t)(ncases ? ncases : 1));
    for (int i = 0; i < ncases; i++)
        medians[i] = NAN;
    CaseDesc *desc = xmalloc(sizeof *desc);
    RefFails refs_failed = {0};
    char (*refkeys)[65] = xcalloc((size_t)(ncases ? ncases : 1), 65);
    /* --counters: each case as it was sent, and the keys of those that ran. */
    CaseDesc *kept = o.counters ? xcalloc((size_t)(ncases ? ncases : 1), sizeof *kept) : NULL;
    char **kept_keys = xcalloc((size_t)(ncases ? ncases : 1), sizeof *kept_keys);

    while (rc == 0 && tally.done < ncases && nworkers > 0) {
        /* Hand out cases to workers with room in their queue, in order, as their
         * sources become ready. */
        for (int w = 0; w < ndev; w++) {
            Worker *wk = &workers[w];
            if (!wk->pid || wk->broken || wk->nq >= RUN_PIPELINE)
                continue;
            if (wk->cur >= wk->end) {
                if (norphans > 0) {
                    /* the rest of a group whose worker could not be restarted */
                    norphans--;
                    wk->cur = orphan[norphans].cur;
                    wk->end = orphan[norphans].end;
                    wk->group = orphan[norphans].group;
                } else if (next_group < ngroups) {
                    wk->cur = gstart[next_group];
                    wk->end = gstart[next_group + 1];
                    wk->group = next_group++;
                } else {
                    continue;
                }
            }
            RunCase *c = &cases[wk->cur];
            int ji = comp.job_of[c->src];
            int rsrc = plan_ref_src(&p, &pref, c->point);
            int rji = rsrc >= 0 ? comp.job_of[rsrc] : ji;
            double tp = now_ms();
            pthread_mutex_lock(&comp.mu);
            /* A case ahead of its turn does not wait for its source (or its
             * reference's): the worker is busy, and its result must be read. */
            while (wk->nq == 0 && !(comp.ready[ji] && comp.ready[rji]) && !comp.finished)
                pthread_cond_wait(&comp.cv, &comp.mu);
            int ready = comp.ready[ji] && comp.ready[rji], pending = !ready && !comp.finished;
            pthread_mutex_unlock(&comp.mu);
            part_add(&prof, RUN_PART_compile_wait, &tp);
            if (pending)
                continue;
            if (!ready) {
                kvx_error_print(&comp.err, stderr);
                rc = 3;
                break;
            }
            JitJob *j = &comp.jobs[ji], *rj = rsrc >= 0 ? &comp.jobs[rji] : NULL;
            if (!variant_ids[c->src]) {
                char *code_json = run_axes_json(&p, c->point, p.srcs[c->src].code_axes);
                /* The SASS facts go with the results so tables can show them
                 * (found on the compile threads: inspect_after). */
                VariantRow vr = {.spec_name = s->name, .source_hash = p.srcs[c->src].hash,
                                 .label = p.srcs[c->src].label, .code_axes_json = code_json,
                                 .arch = facts.arch, .options = opts_text, .compile_ok = j->ok,
                                 .compile_log = j->log, .compile_ms = j->compile_ms, .regs = j->regs,
                                 .spill_stores = j->spill_stores, .spill_loads = j->spill_loads,
                                 .smem_static = j->smem_static, .stack = j->stack,
                                 .inspect_json = j->inspect_json};
                if (store_put_variant(st, run_id, &vr, &variant_ids[c->src], &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    rc = 3;
                }
                free(code_json);
                part_add(&prof, RUN_PART_variants, &tp);
                if (rc)
                    break;
            }
            int idx = wk->cur++;
            CaseResult res;
            memset(&res, 0, sizeof res);
            res.id = idx;
            res.rel_err = NAN;
            int local = 0, dead = 0;
            if (!j->ok) {
                res.status = CASE_compile_error;
                snprintf(res.detail, sizeof res.detail, "NVRTC rejected %s (the log is stored with the variant)",
                         j->name);
                local = 1;
            } else if (rj && !rj->ok) {
                res.status = CASE_skipped;
                snprintf(res.detail, sizeof res.detail, "reference kernel: NVRTC rejected %s", rj->name);
                local = 1;
            } else {
                KvxError ce = {0};
                char cubin[1100], ref_cubin[1100];
                snprintf(cubin, sizeof cubin, "%s/kernel.cubin", j->dir);
                if (rj)
                    snprintf(ref_cubin, sizeof ref_cubin, "%s/kernel.cubin", rj->dir);
                ResolveCase rcs = {.point = c->point, .ptx = j->ptx, .cubin_path = cubin,
                                   .ref_ptx = rj ? rj->ptx : NULL, .ref_cubin_path = rj ? ref_cubin : NULL,
                                   .workload_key = c->workload_key, .is_baseline = c->is_baseline,
                                   .have_baseline = gbase[wk->group]};
                Resolver rv = {&p, &pref, &m};
                if (resolve_case(&rv, &rcs, desc, mvals[idx], &ce) != 0) {
                    res.status = CASE_skipped;
                    if (ce.file[0])
                        snprintf(res.detail, sizeof res.detail, "%.200s:%d:%d: %.700s", ce.file, ce.line,
                                 ce.col, ce.msg);
                    else
                        snprintf(res.detail, sizeof res.detail, "%.1000s", ce.msg);
                    kvx_error_clear(&ce);
                    local = 1;
                } else if (desc->ref.present && run_ref_failed(&refs_failed, desc->ref.key)) {
                    res.status = CASE_skipped;
                    snprintf(res.detail, sizeof res.detail, "%s", run_ref_failed(&refs_failed, desc->ref.key));
                    local = 1;
                } else {
                    desc->id = idx;
                    geoms[idx] = (CaseGeom){{desc->grid[0], desc->grid[1], desc->grid[2]},
                                            {desc->block[0], desc->block[1], desc->block[2]},
                                            {desc->cluster[0], desc->cluster[1], desc->cluster[2]},
                                            desc->smem};
                    int wrote = case_write(wk->to, desc) == 0;
                    part_add(&prof, RUN_PART_handout, &tp);
                    if (!wrote && wk->nq > 0) {
                        /* It died with a case in flight: the poll reports that
                         * one, and this one goes to its replacement. */
                        wk->cur--;
                        wk->broken = 1;
                        continue;
                    }
                    if (!wrote) {
                        res.status = CASE_fault;
                        snprintf(res.detail, sizeof res.detail, "the worker for GPU %d died before the case",
                                 wk->device);
                        local = 1;
                        dead = 1;
                    } else {
                        if (wk->nq == 0)
                            wk->started = now_ms();
                        wk->q[wk->nq++] = idx;
                        /* A reference run first has a timeout of its own. */
                        wk->timeout_ms = m.timeout_s * 1000 * (desc->ref.present ? 2 : 1);
                        memcpy(refkeys[idx], desc->ref.key, sizeof refkeys[idx]);
                        live[idx] = 1;
                        if (kept) {
                            /* checks' strings point into desc: the pass needs none */
                            kept[idx] = *desc;
                            kept[idx].nchecks = 0;
                        }
                        w--; /* room for one more ahead of its turn */
                    }
                }
            }
            if (local) {
                part_add(&prof, RUN_PART_handout, &tp);
                CaseRow row;
                store_case_init(&row);
                RunCase *rcs = &cases[idx];
                row.key = rcs->key; row.spec_name = s->name; row.label = rcs->label;
                row.axes_json = rcs->axes_json; row.workload_json = rcs->workload_json;
                row.device_uuid = wk->info.uuid; row.status = status_name(res.status); row.detail = res.detail;
                if (store_put_case(st, run_id, variant_ids[rcs->src], &row, &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    rc = 3;
                }
                tally.counts[res.status]++;
                tally.done++;
                if (!tty)
                    printf("%-13s %s  %s\n", status_name(res.status), rcs->label, res.detail);
                progress(&tally, t0, tty);
                if (dead) {
                    worker_stop(wk, 1);
                    if (worker_start(wk, wk->device, &err) != 0) {
                        kvx_error_print(&err, stderr);
                        kvx_error_clear(&err);
                        nworkers--;
                        if (wk->cur < wk->end)
                            orphan[norphans++] = (Range){wk->cur, wk->end, wk->group};
                        wk->cur = wk->end;
                        continue;
                    }
                }
                part_add(&prof, RUN_PART_commit, &tp);
                w--; /* this worker still has room: give it the next case */
            }
        }
        if (rc)
            break;

        /* Wait for a result or a timeout. */
        struct pollfd pfd[RUN_MAX_DEVICES];
        int map[RUN_MAX_DEVICES], npfd = 0;
        double soonest = 1e18;
        for (int w = 0; w < ndev; w++) {
            if (!workers[w].pid || workers[w].nq == 0)
                continue;
            pfd[npfd] = (struct pollfd){.fd = workers[w].from, .events = POLLIN};
            map[npfd++] = w;
            double left = workers[w].started + workers[w].timeout_ms - now_ms();
            if (left < soonest)
                soonest = left;
        }
        if (npfd == 0)
            continue;
        int wait_ms = soonest < 0 ? 0 : soonest > 1000 ? 1000 : (int)soonest + 1;
        double tp = now_ms();
        int nready = poll(pfd, (nfds_t)npfd, wait_ms);
        part_add(&prof, RUN_PART_poll, &tp);
        if (nready < 0 && errno != EINTR) {
            fprintf(stderr, "kvx run: poll: %s\n", strerror(errno));
            rc = 3;
            break;
        }
        for (int k = 0; k < npfd; k++) {
            Worker *wk = &workers[map[k]];
            int idx = wk->q[0];
            CaseResult res;
            memset(&res, 0, sizeof res);
            int got = 0, restart = 0, got_result = 0;
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (result_read(wk->from, &res) == 0 && res.id == idx) {
                    got = 1;
                    got_result = 1;
                    /* A sticky fault ends the worker's context: it exits after saying so;
                     * so may a reference kernel that failed. */
                    restart = res.status == CASE_fault || res.ref_failed;
                    if (res.ref_failed)
                        run_ref_fail(&refs_failed, refkeys[idx], res.detail);
                    tally.refs_run += res.ref_ran;
                } else {
                    memset(&res, 0, sizeof res);
                    res.status = CASE_fault;
                    res.rel_err = NAN;
                    worker_stop(wk, 1);
                    snprintf(res.detail, sizeof res.detail, "the worker for GPU %d died during the case",
                             wk->device);
                    got = 1;
                    restart = 1;
                }
            } else if (now_ms() - wk->started > wk->timeout_ms) {
                res.status = CASE_timeout;
                res.rel_err = NAN;
                snprintf(res.detail, sizeof res.detail, "no result after %.0f s; the worker was killed",
                         wk->timeout_ms / 1000);
                got = 1;
                restart = 1;
            }
            if (!got)
                continue;
            if (!got_result)
                prof.lost_ms += now_ms() - wk->started;
            /* The next case in the queue is running now. */
            wk->q[0] = wk->q[1];
            wk->nq--;
            wk->started = now_ms();
            if (restart) {
                worker_stop(wk, 1);
                /* What was queued behind it went with the process: hand it again
                 * (the queue holds the last case handed out, cases[cur - 1]). */
                if (wk->nq > 0) {
                    KVX_ASSERT(wk->q[0] == wk->cur - 1);
                    wk->cur = wk->q[0];
                }
                wk->nq = 0;
            }
            RunCase *rcs = &cases[idx];
            CaseRow row;
            store_case_init(&row);
            row.key = rcs->key; row.spec_name = s->name; row.label = rcs->label;
            row.axes_json = rcs->axes_json; row.workload_json = rcs->workload_json;
            row.device_uuid = wk->info.uuid;
            row.status = status_name(res.status);
            row.detail = res.detail;
            DeviceInfo *di = &wk->info;
            for (int d = 0; d < 3; d++) {
                row.grid[d] = geoms[idx].grid[d];
                row.block[d] = geoms[idx].block[d];
                row.cluster[d] = geoms[idx].cluster[d];
            }
            row.smem = geoms[idx].smem;
            medians[idx] = res.status == CASE_ok && res.samples > 0 ? res.median_ms : NAN;
            if (kept && (res.status == CASE_ok || res.status == CASE_mismatch))
                kept_keys[idx] = rcs->key;
            int have_t = res.samples > 0;
            row.median_ms = have_t ? res.median_ms : NAN;
            row.min_ms = have_t ? res.min_ms : NAN;
            row.max_ms = have_t ? res.max_ms : NAN;
            row.mean_ms = have_t ? res.mean_ms : NAN;
            row.stdev_ms = have_t ? res.stdev_ms : NAN;
            row.noise = have_t ? res.noise : NAN;
            row.samples = res.samples;
            row.rel_err = res.rel_err;
            row.bytes = mvals[idx][0];
            row.atomics = mvals[idx][1];
            row.elements = mvals[idx][2];
            double sec = row.median_ms / 1000;
            row.gbs = have_t ? row.bytes / sec / 1e9 : NAN;
            row.pct_peak = have_t && di->peak_gbs > 0 ? row.gbs / di->peak_gbs * 100 : NAN;
            row.atomics_per_s = have_t ? row.atomics / sec : NAN;
            row.elems_per_s = have_t ? row.elements / sec : NAN;
            row.t_input_ms = res.t_input_ms;
            row.t_verify_ms = res.t_verify_ms;
            row.t_measure_ms = res.t_measure_ms;
            char *cprof = got_result ? case_profile_json(&res) : NULL;
            row.profile_json = cprof;
            row.sm_mhz = res.sm_mhz;
            row.mem_mhz = res.mem_mhz;
            row.sm_max_mhz = res.sm_max_mhz;
            row.throttled = res.sm_mhz > 0 && res.sm_max_mhz > 0 ? res.throttled : -1;
            if (got_result)
                profile_add_result(&prof, &res);
            tally.t_input += res.t_input_ms;
            tally.t_verify += res.t_verify_ms;
            tally.t_measure += res.t_measure_ms;
            if (store_put_case(st, run_id, variant_ids[rcs->src], &row, &err) != 0) {
                kvx_error_print(&err, stderr);
                kvx_error_clear(&err);
                rc = 3;
            }
            free(cprof);
            tally.counts[res.status]++;
            tally.done++;
            live[idx] = 0;
            if (!tty || res.status != CASE_ok) {
                if (tty)
                    fprintf(stderr, "\r%*s\r", 70, "");
                printf("%-13s %s", status_name(res.status), rcs->label);
                if (have_t)
                    printf("  %.4f ms", res.median_ms);
                if (res.status != CASE_ok && res.detail[0])
                    printf("  %s", res.detail);
                printf("\n");
                fflush(stdout);
            }
            progress(&tally, t0, tty);
            part_add(&prof, RUN_PART_commit, &tp);
            if (restart) {
                if (worker_start(wk, wk->device, &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    nworkers--;
                    if (wk->cur < wk->end)
                        orphan[norphans++] = (Range){wk->cur, wk->end, wk->group};
                    wk->cur = wk->end;
                }
            }
        }
    }
    if (tty)
        fprintf(stderr, "\r%*s\r", 70, "");
    stage_end(&prof, RUN_STAGE_loop);

    for (int w = 0; w < ndev; w++)
        worker_stop(&workers[w], 0);
    pthread_join(comp.thread, NULL);
    stage_end(&prof, RUN_STAGE_finish);
    double wall = (prof.lap - prof.t0) / 1000;
    double compile_ms = 0;
    int ncompiled = 0, nhit = 0;
    for (int i = 0; i < comp.n; i++) {
        JitJob *j = &comp.jobs[i];
        if (!j->cached)
            compile_ms += j->compile_ms;
        ncompiled++;
        nhit += j->cached;
    }
    StrBuf profj;
    sb_init(&profj);
    profile_json(&prof, &tally, &comp, compile_ms, nhit, nworkers0, &profj);
    if (run_id && store_end_run(st, run_id, wall, sb_str(&profj), &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }

    printf("\n%d cases in %.1f s:", tally.done, wall);
    for (int k = 0; k < CASE_STATUS_COUNT; k++)
        if (tally.counts[k])
            printf(" %d %s", tally.counts[k], status_name(k));
    if (nstored)
        printf(" (%d stored earlier, skipped)", nstored);
    if (pref.kind != PLAN_REF_NONE)
        printf("\nreference kernel: %d run%s for %d cases (once per reference key and worker)",
               tally.refs_run, tally.refs_run == 1 ? "" : "s", tally.done);
    printf("\ntime    compile %.1f s wall (%d sources, %d from cache, %.1f s of NVRTC), inputs %.1f s, "
           "verify %.1f s, measure %.1f s\n", comp.wall_ms / 1000, ncompiled, nhit, compile_ms / 1000,
           tally.t_input / 1000, tally.t_verify / 1000, tally.t_measure / 1000);
    if (o.profile) {
        profile_print(&prof, &tally, nworkers0);
        printf("profile_json %s\n", sb_str(&profj));
    }
    if (tally.done && rc == 0) {
        run_print_best(&p, cases, medians, ncases, base_mask);
        printf("results %s (run %lld); tabulate with: kvx table --db %s --spec %s --rows ... --cols ...\n",
               db_path, (long long)run_id, db_path, s->name);
    }
    /* A pass of its own, after the timed run: a profiler replays kernels. */
    if (kept && rc == 0 && tally.done) {
        int crc = run_counters(st, run_id, kept, kept_keys, ncases, devs[0]);
        rc = crc ? crc : rc;
    }
    free(kept);
    free(kept_keys);
    sb_free(&profj);
    sb_free(&cmd);
    sb_free(&basej);
    sb_free(&declared);
    sb_free(&devj);
    for (int i = 0; i < comp.n; i++)
        jit_job_release(&comp.jobs[i]);
    free(comp.jobs);
    free(comp.ready);
    free(comp.job_of);
    kvx_error_clear(&comp.err);
    pthread_mutex_destroy(&comp.mu);
    pthread_cond_destroy(&comp.cv);
    run_cases_free(cases, ncases);
    free(variant_ids);
    free(live);
    free(mvals);
    free(geoms);
    free(gstart);
    free(gbase);
    free(medians);
    free(desc);
    run_ref_fails_free(&refs_failed);
    free(refkeys);
    free(cache);
    free(mjson);
    free(sel);
    store_close(st);
    plan_ref_free(&pref);
    plan_free(&p);
    spec_free(s);
    if (rc)
        return rc;
    return tally.counts[CASE_ok] == tally.done ? 0 : 1;
}
