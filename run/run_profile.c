/* run_profile: the tally of a run's cases and where its wall time went: the
 * parent's stages and loop parts, the workers' steps, the GPU's share, for
 * runs.profile_json and `kvx run --profile`. */
#include "run_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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



void run_stage_end(RunProfile *pr, RunStage st)
{
    double now = wall_now_ms();
    pr->stage[st] += now - pr->lap;
    pr->lap = now;
}

/* Add to a part of the loop the time since *t; *t becomes now. */
void run_part_add(RunProfile *pr, RunPart part, double *t)
{
    double now = wall_now_ms();
    pr->part[part] += now - *t;
    *t = now;
}

void run_profile_add_result(RunProfile *pr, const CaseResult *r)
{
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        pr->step[k] += r->t_step[k];
    pr->gpu_ms += r->gpu_ms;
    pr->prep_gpu_ms += r->prep_gpu_ms;
    pr->host_wait_ms += r->host_wait_ms;
    pr->launches += r->launches;
    pr->samples += r->samples;
    pr->measured += r->samples > 0;
    pr->throttled += r->throttled;
}

double run_case_busy_ms(const CaseResult *r)
{
    double busy = 0;
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        if (k != CASE_STEP_recv)
            busy += r->t_step[k];
    return busy;
}

/* The case's steps as the cases row's profile_json, ms; malloc'd. */
char *run_case_profile_json(const CaseResult *r)
{
    StrBuf b;
    sb_init(&b);
    sb_putc(&b, '{');
    for (int k = 0; k < CASE_STEP_COUNT; k++)
        sb_printf(&b, "\"%s\":%.3f,", case_step_names[k], r->t_step[k]);
    sb_printf(&b, "\"gpu_ms\":%.4f,\"prep_gpu_ms\":%.4f,\"host_wait_ms\":%.3f,\"launch_ms\":", r->gpu_ms,
              r->prep_gpu_ms, r->host_wait_ms);
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

/* WorkerProc slot w's time in the loop: busy (inside cases), idle before its last
 * result, idle after it until the loop's end (ms); they add up to the loop. */
static void worker_split(const RunProfile *pr, int w, double *busy, double *idle, double *tail)
{
    const WorkerTime *wt = &pr->wt[w];
    double last = wt->last_ms > 0 ? wt->last_ms : pr->loop_t0;
    *busy = wt->busy_ms;
    *idle = fmax(0, last - pr->loop_t0 - wt->busy_ms);
    *tail = fmax(0, pr->loop_t1 - last);
}

/* The per-worker records and the hand-out, appended to profile_json's b. */
static void profile_json_workers(const RunProfile *pr, double wall, StrBuf *b)
{
    sb_puts(b, ",\"per_worker\":[");
    for (int w = 0; w < pr->nwt; w++) {
        double busy, idle, tail;
        worker_split(pr, w, &busy, &idle, &tail);
        sb_printf(b, "%s{\"device\":%d,\"cases\":%d,\"units\":%d,\"busy_s\":%.3f,\"idle_s\":%.3f,"
                  "\"tail_idle_s\":%.3f,\"busy_share\":%.4f}", w ? "," : "", pr->wt[w].device,
                  pr->wt[w].cases, pr->wt[w].units, busy / 1000, idle / 1000, tail / 1000,
                  wall > 0 ? busy / wall : 0);
    }
    sb_printf(b, "],\"estimate\":{\"total_s\":%.3f,\"cases_from_history\":%d,\"groups_cut\":%d,"
              "\"units\":%d},\"handout\":[", pr->est_total_ms / 1000, pr->est_known, pr->nsplit,
              pr->nhandout);
    int kept = pr->nhandout < RUN_HANDOUT_KEPT ? pr->nhandout : RUN_HANDOUT_KEPT;
    for (int i = 0; i < kept; i++) {
        const HandoutRec *h = &pr->handout[i];
        sb_printf(b, "%s{\"group\":%d,\"part\":%d,\"parts\":%d,\"cases\":%d,\"worker\":%d,\"est_s\":",
                  i ? "," : "", h->group, h->part, h->nparts, h->cases, h->worker);
        if (isnan(h->est_ms))
            sb_puts(b, "null");
        else
            sb_printf(b, "%.3f", h->est_ms / 1000);
        sb_printf(b, ",\"at_s\":%.3f}", h->at_ms / 1000);
    }
    sb_putc(b, ']');
}

void run_profile_json(const RunProfile *pr, const Tally *t, int njobs, double compile_wall_ms, double compile_ms,
                  int nhit, int nworkers, StrBuf *b)
{
    double wall = pr->lap - pr->t0;
    sb_printf(b, "{\"wall_s\":%.3f,\"compile_wall_s\":%.3f,\"compile_cpu_s\":%.3f,\"sources\":%d,"
              "\"cache_hits\":%d,\"input_s\":%.3f,\"verify_s\":%.3f,\"measure_s\":%.3f,\"cases\":%d,"
              "\"workers\":%d,\"reference_runs\":%d", wall / 1000, compile_wall_ms / 1000, compile_ms / 1000,
              njobs, nhit, t->t_input / 1000, t->t_verify / 1000, t->t_measure / 1000, t->done, nworkers,
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
    profile_json_workers(pr, wall, b);
    sb_printf(b, ",\"host_wait_s\":%.4f,\"ahead_refs\":%d,\"ahead_s\":%.3f,\"resolutions\":%d,\"bindings\":%d",
              pr->host_wait_ms / 1000, pr->ahead_refs, pr->ahead_ms / 1000, pr->resolved, pr->bound);
    sb_printf(b, ",\"gpu_s\":%.4f,\"prep_gpu_s\":%.4f,\"launches\":%ld,\"samples\":%ld,"
              "\"throttled\":%d,\"cases_per_s\":%.2f,\"gpu_share\":%.4f,\"gpu_busy_share\":%.4f,"
              "\"accounted\":%.4f}",
              pr->gpu_ms / 1000, pr->prep_gpu_ms / 1000, pr->launches, pr->samples, pr->throttled,
              wall > 0 ? t->done / (wall / 1000) : 0, wall > 0 ? pr->gpu_ms / wall : 0,
              wall > 0 ? (pr->gpu_ms + pr->prep_gpu_ms) / wall : 0, wall > 0 ? acc / wall : 0);
}

/* The per-worker lines of `kvx run --profile`. */
static void profile_print_workers(const RunProfile *pr, double wall)
{
    printf("  per worker  (busy: inside cases; idle: before its last result; tail: after it, to the "
           "loop's end %.3f s)\n", (pr->loop_t1 - pr->loop_t0) / 1000);
    for (int w = 0; w < pr->nwt; w++) {
        double busy, idle, tail;
        worker_split(pr, w, &busy, &idle, &tail);
        printf("    GPU %-3d %5d cases %4d units  busy %8.3f s (%5.1f%% of the wall)  idle %8.3f s  tail "
               "%8.3f s\n", pr->wt[w].device, pr->wt[w].cases, pr->wt[w].units, busy / 1000,
               wall > 0 ? 100 * busy / wall : 0, idle / 1000, tail / 1000);
    }
    printf("  hand-out  %d units, longest first, %.3f s estimated", pr->nhandout, pr->est_total_ms / 1000);
    if (pr->nsplit)
        printf(", %d group%s cut into parts", pr->nsplit, pr->nsplit == 1 ? "" : "s");
    printf(", %d case%s from stored times\n", pr->est_known, pr->est_known == 1 ? "" : "s");
}

/* `kvx run --profile`: where the wall time went, and the explorer's own
 * figures: cases per second and the share of the wall the GPU spent on the
 * kernels being timed. */
void run_profile_print(const RunProfile *pr, const Tally *t, int nworkers)
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
    printf("  GPU waited for host work %.3f s (inputs generated on the host, host references not "
           "ready when the samples ended)\n", pr->host_wait_ms / 1000);
    if (pr->ahead_refs)
        printf("  host references computed ahead  %d in %.3f s on the parent's thread\n", pr->ahead_refs,
               pr->ahead_ms / 1000);
    printf("  resolutions %d (each selected point once, at plan); %d bound to their compiled kernels\n",
           pr->resolved, pr->bound);
    if (pr->lost_ms > 0)
        printf("    %-10s %8.3f s  (cases that timed out or whose worker died, until then)\n", "lost",
               pr->lost_ms / 1000);
    profile_print_workers(pr, wall);
    double acc = profile_accounted_ms(pr, nworkers);
    printf("  accounted %.1f%% of the wall (stages and loop parts; waiting for results as far as the "
           "workers were busy)\n", 100 * acc / wall);
    if (pr->throttled)
        printf("  %d case%s ran with the SM clock below 90%% of its maximum (column throttled)\n",
               pr->throttled, pr->throttled == 1 ? "" : "s");
}

void run_progress(const Tally *t, double t0, int tty)
{
    if (!tty)
        return;
    double el = (wall_now_ms() - t0) / 1000;
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
