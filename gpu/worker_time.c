/* worker_time: the timed part of a case: warm-up, samples in batches, the
 * clocks, the statistics (the decisions are measure_plan.c's, pure and unit
 * tested; this file applies them on the GPU).
 *
 * A sample is [reset outputs, flush L2] outside the timed region, then one
 * launch between two events.  Samples are enqueued in batches, each with its
 * own three events (before the reset, start, end), and the worker waits once
 * per batch: the wait per sample cost more than a small kernel.  Which of a
 * batch's samples count is decided afterwards, as if they had been taken one
 * at a time (measure_plan_stop_at), so a batch changes how many launches run, not
 * the statistics. */
#include "worker_internal.h"
#include "flush_ptx.h"     /* the read flush kernel, shared with bench/peers.cu */

#include <math.h>
#include <stdlib.h>
#include <string.h>

int worker_flush_prepare(WorkerState *w, int mode, CaseResult *res)
{
    if (!w->scratch) {
        size_t bytes = (size_t)(w->dev.l2_bytes > 0 ? FLUSH_L2_FACTOR * w->dev.l2_bytes : FLUSH_BYTES_DEFAULT);
        CUresult r = cu.cuMemAlloc(&w->scratch, bytes);
        if (r != CUDA_SUCCESS)
            return worker_fail(res, CASE_skipped, "L2 flush buffer of %zu bytes: %s", bytes,
                               cudadl_error_name(r));
        w->scratch_bytes = bytes;
        /* Defined contents for the read flush; the buffer is not written again. */
        if (worker_step(w, res, cu.cuMemsetD8Async(w->scratch, 0, bytes, w->stream), "cuMemsetD8Async",
                        0) < 0 ||
            worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize", 1) < 0)
            return -1;
    }
    if (mode == MEASURE_FLUSH_READ && !w->flush_fn) {
        CUresult r = cu.cuModuleLoadData(&w->flush_mod, flush_ptx);
        if (r == CUDA_SUCCESS)
            r = cu.cuModuleGetFunction(&w->flush_fn, w->flush_mod, FLUSH_KERNEL);
        if (r != CUDA_SUCCESS)
            return worker_fail(res, CASE_skipped, "the L2 flush kernel (PTX JIT): %s",
                               cudadl_error_name(r));
    }
    return 0;
}

int worker_flush_read(WorkerState *w, CaseResult *res)
{
    unsigned long long n16 = w->scratch_bytes / 16, buf = w->scratch;
    void *args[] = {&buf, &n16, &buf};
    const unsigned blocks =
        (unsigned)(w->dev.sm_count > 0 ? FLUSH_BLOCKS_PER_SM * w->dev.sm_count : FLUSH_BLOCKS_DEFAULT);
    return worker_step(w, res,
                       cu.cuLaunchKernel(w->flush_fn, blocks, 1, 1, FLUSH_THREADS, 1, 1, 0, w->stream, args, NULL),
                       "cuLaunchKernel (L2 flush)", 0);
}

/* Enqueue k samples: events bev[3i] (before the reset), bev[3i+1] and
 * bev[3i+2] around the launch.  0, or -1 with res set. */
static int batch_enqueue(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int flush, int k,
                         CaseResult *res)
{
    for (int i = 0; i < k; i++) {
        CUevent *e = &w->bev[3 * i];
        if (worker_step(w, res, cu.cuEventRecord(e[0], w->stream), "cuEventRecord", 0) < 0 ||
            worker_prepare_launch(w, c, run, flush, res) < 0 ||
            worker_step(w, res, cu.cuEventRecord(e[1], w->stream), "cuEventRecord", 0) < 0 ||
            worker_enqueue_launch(w, c, run, res) < 0 ||
            worker_step(w, res, cu.cuEventRecord(e[2], w->stream), "cuEventRecord", 0) < 0)
            return -1;
    }
    return 0;
}

/* Wait for a batch of k and read its times into t[0..k); the GPU time of the
 * resets and flushes is added to res->prep_gpu_ms.  0, or -1 (faults exit). */
static int batch_collect(WorkerState *w, int k, double *t, CaseResult *res)
{
    if (worker_step(w, res, cu.cuEventSynchronize(w->bev[3 * k - 1]), "cuEventSynchronize", 1) < 0)
        return -1;
    for (int i = 0; i < k; i++) {
        float prep = 0, ms = 0;
        CUevent *e = &w->bev[3 * i];
        if (worker_step(w, res, cu.cuEventElapsedTime(&prep, e[0], e[1]), "cuEventElapsedTime", 1) < 0 ||
            worker_step(w, res, cu.cuEventElapsedTime(&ms, e[1], e[2]), "cuEventElapsedTime", 1) < 0)
            return -1;
        t[i] = ms;
        res->prep_gpu_ms += prep;
    }
    return 0;
}

/* The SM and memory clocks while the first batch runs (the GPU is busy then;
 * read after it, an idle GPU may already have clocked down). */
static void clocks_read(WorkerState *w, CaseResult *res)
{
    worker_lap(w, res, CASE_STEP_samples);
    nvml_clocks(&w->nvml, &res->sm_mhz, &res->mem_mhz);
    res->sm_max_mhz = w->nvml.sm_max_mhz;
    res->mem_max_mhz = w->nvml.mem_max_mhz;
    res->throttled = nvml_throttled(res->sm_mhz, res->sm_max_mhz);
    worker_lap(w, res, CASE_STEP_clocks);
}

/* The warm-ups, enqueued together and waited for once.  Returns the wall time
 * they took, or -1 with res set. */
static double warmup_run(WorkerState *w, const CaseDesc *c, CaseLaunch *run, int n, CaseResult *res)
{
    double t0 = wall_now_ms();
    for (int i = 0; i < n; i++)
        if (worker_prepare_launch(w, c, run, c->measure.flush_l2, res) < 0 ||
            worker_enqueue_launch(w, c, run, res) < 0)
            return -1;
    if (n && worker_step(w, res, cu.cuStreamSynchronize(w->stream), "cuStreamSynchronize", 1) < 0)
        return -1;
    res->warmups = n;
    res->launches += n * (1 + c->nnext);
    worker_lap(w, res, CASE_STEP_warmup);
    return wall_now_ms() - t0;
}

/* Batches until measure_plan_batch says stop or a batch meets the noise target.
 * Fills t[0..*n).  0, or -1 with res set. */
static int samples_run(WorkerState *w, const CaseDesc *c, CaseLaunch *run, double per, double spent,
                       double *t, double *tmp, int *n, CaseResult *res)
{
    const MeasureSettings *m = &c->measure;
    int k, first = 1;
    *n = 0;
    while ((k = measure_plan_batch(m, *n, per, spent, WORKER_MAX_BATCH)) > 0) {
        nvtx_push("%s %s samples %d-%d", c->kernel, c->label, *n, *n + k - 1);
        double b0 = wall_now_ms();
        int rc = batch_enqueue(w, c, run, m->flush_l2, k, res);
        double enqueue = wall_now_ms() - b0;
        if (rc == 0 && first)
            clocks_read(w, res);
        double b1 = wall_now_ms();
        if (rc == 0)
            rc = batch_collect(w, k, t + *n, res);
        nvtx_pop();
        if (rc < 0)
            return -1;
        double wall = enqueue + wall_now_ms() - b1;  /* the clocks' read left out */
        res->launches += k * (1 + c->nnext);
        per = wall / k;
        spent += wall;
        first = 0;
        int stop = measure_plan_stop_at(m, t, *n, *n + k, tmp);
        *n = stop ? stop : *n + k;
        if (stop)
            break;
    }
    return 0;
}

/* --keep-samples: the n counted sample times, in the order taken, for
 * worker_main to send after the result. */
static void keep_samples(WorkerState *w, const CaseDesc *c, const double *t, int n)
{
    if (!c->keep_samples)
        return;
    n = n < CASE_SAMPLES_KEPT_MAX ? n : CASE_SAMPLES_KEPT_MAX;
    if (n > w->kept_cap) {
        w->kept = mem_realloc(w->kept, sizeof *w->kept * (size_t)n);
        w->kept_cap = n;
    }
    memcpy(w->kept, t, sizeof *t * (size_t)n);
    w->nkept = n;
}

/* A kernel whose verified launch alone spent the budget is not launched
 * again: that launch, timed between events as a sample is, is its one
 * sample (no L2 flush came before it: microseconds, against a launch of over
 * the budget).  Its wall time moves from the verify step to the samples. */
static int verified_as_sample(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    if (!measure_plan_verified_is_sample(&c->measure, res->launch_ms, run->spent_ms))
        return 0;
    double t = res->launch_ms;
    clocks_read(w, res);        /* the GPU has just run over the budget */
    keep_samples(w, c, &t, 1);
    measure_plan_stats(&t, 1, &(double){0}, res);
    res->gpu_ms += t;
    res->t_step[CASE_STEP_verify] -= run->spent_ms;
    res->t_step[CASE_STEP_samples] += run->spent_ms;
    res->t_verify_ms -= run->spent_ms;
    res->t_measure_ms = run->spent_ms;
    return 1;
}

int worker_time_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    const MeasureSettings *m = &c->measure;
    if (verified_as_sample(w, c, run, res))
        return 0;
    double t0 = wall_now_ms();
    if (m->flush_l2 && worker_flush_prepare(w, m->flush_l2, res) < 0)
        return -1;
    int nw = measure_plan_warmups(m, res->launch_ms, run->spent_ms);
    double warm = warmup_run(w, c, run, nw, res);
    if (warm < 0)
        return -1;
    /* One sample costs about a launch plus its reset and flush: the verified
     * launch's wall time, or the warm-ups' when there were any. */
    double per = nw ? warm / nw : run->spent_ms;
    int mins, maxs, n = 0;
    measure_plan_bounds(m, &mins, &maxs);
    double *t = mem_alloc((size_t)maxs * sizeof *t), *tmp = mem_alloc((size_t)maxs * sizeof *tmp);
    int rc = samples_run(w, c, run, per, run->spent_ms + warm, t, tmp, &n, res);
    worker_lap(w, res, CASE_STEP_samples);
    if (rc == 0) {
        keep_samples(w, c, t, n);
        measure_plan_stats(t, n, tmp, res);
        for (int i = 0; i < n; i++)
            res->gpu_ms += t[i];
    }
    free(t);
    free(tmp);
    res->t_measure_ms = wall_now_ms() - t0;
    return rc;
}
