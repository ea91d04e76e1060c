/* measure_plan: the decisions of a case's measurement that need no GPU, as
 * pure functions so that unit tests can check them: how many warm-ups, how
 * many samples to enqueue before the next wait, where sequential sampling
 * would have stopped, and the statistics.  worker_time.c applies them; the
 * rules are docs/measurement.md's.
 *
 * Times are ms.  The budget (m->budget_ms; 0 = none) covers the verified
 * launch, the warm-ups and the samples of one case: `spent` is how much of it
 * is gone. */
#ifndef KVX_MEASURE_PLAN_H
#define KVX_MEASURE_PLAN_H

#include "case.h"

/* The clamped sample bounds: 1 <= *mins <= *maxs. */
void measure_plan_bounds(const MeasureSettings *m, int *mins, int *maxs);

/* Warm-up launches after a verified launch of launch_ms (its GPU time; NaN or
 * <= 0 when unknown) and spent ms of the budget: at most m->warmup, fewer when
 * m->warmup_ms of launches is reached first (ceil(warmup_ms / launch_ms)), and
 * none when the budget leaves room for no more than the one timed sample (a
 * verified launch that spent the whole budget is itself the one sample:
 * worker_time.c). */
int measure_plan_warmups(const MeasureSettings *m, double launch_ms, double spent);

/* Whether a verified launch of launch_ms GPU time (NaN or <= 0: unknown)
 * that spent `spent` ms of the budget is itself the case's one sample: the
 * budget is spent, so no other launch follows it. */
int measure_plan_verified_is_sample(const MeasureSettings *m, double launch_ms, double spent);

/* How many samples to enqueue before the next wait, n being taken already and
 * per the wall time one sample costs (<= 0 when unknown): 0 to stop (max_samples
 * reached, or the budget spent after at least one sample); else the rest of
 * min_samples first, then m->sample_batch at a time, never past max_samples
 * nor past what the budget is predicted to fit (but at least one), nor cap. */
int measure_plan_batch(const MeasureSettings *m, int n, double per, double spent, int cap);

/* Where sampling one at a time would have stopped among t[0..n), given that it
 * did not stop before `from`: the first k in (from, n] with k >= min_samples
 * whose spread (p75 - p25) / median is at most m->noise (tested at every k up
 * to 256, then every 32nd), or 0 when none.  tmp holds n doubles. */
int measure_plan_stop_at(const MeasureSettings *m, const double *t, int from, int n, double *tmp);

/* Relative spread (p75 - p25) / median of t[0..n); sorts a copy into tmp. */
double measure_plan_noise(const double *t, int n, double *tmp);

/* res's samples, median, min, max, mean, stdev and noise from t[0..n); with
 * one sample the noise is NaN (unknown) and the stdev 0.  tmp holds n doubles. */
void measure_plan_stats(const double *t, int n, double *tmp, CaseResult *res);

#endif
