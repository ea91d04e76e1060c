/* measure_plan: warm-up count, batch sizes, the stopping rule and the
 * statistics of a case's samples (see measure_plan.h). */
#include "measure_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void measure_plan_bounds(const MeasureSettings *m, int *mins, int *maxs)
{
    *maxs = m->max_samples > 0 ? m->max_samples : 1;
    *mins = m->min_samples < 1 ? 1 : m->min_samples > *maxs ? *maxs : m->min_samples;
}

int measure_plan_warmups(const MeasureSettings *m, double launch_ms, double spent)
{
    int n = m->warmup > 0 ? m->warmup : 0;
    int known = launch_ms > 0; /* false for NaN too */
    if (known && m->warmup_ms > 0) {
        double need = ceil(m->warmup_ms / launch_ms);
        if (need < n)
            n = (int)need;
    }
    if (m->budget_ms > 0) {
        if (spent >= m->budget_ms)
            return 0;
        if (known) {
            /* Room for the warm-ups and one sample, each about one launch. */
            double fit = floor((m->budget_ms - spent) / launch_ms) - 1;
            if (fit < n)
                n = fit > 0 ? (int)fit : 0;
        }
    }
    return n;
}

int measure_plan_verified_is_sample(const MeasureSettings *m, double launch_ms, double spent)
{
    return m->budget_ms > 0 && spent >= m->budget_ms && launch_ms > 0;
}

int measure_plan_batch(const MeasureSettings *m, int n, double per, double spent, int cap)
{
    int mins, maxs;
    measure_plan_bounds(m, &mins, &maxs);
    if (n >= maxs)
        return 0;
    if (n > 0 && m->budget_ms > 0 && spent >= m->budget_ms)
        return 0;
    int want = n < mins ? mins - n : m->sample_batch > 1 ? m->sample_batch : 1;
    if (want > maxs - n)
        want = maxs - n;
    if (m->budget_ms > 0 && per > 0) {
        double fit = floor((m->budget_ms - spent) / per);
        if (fit < want)
            want = fit < 1 ? 1 : (int)fit;
    }
    if (want > cap)
        want = cap;
    return want > 0 ? want : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted x[0..n), linear interpolation between order statistics. */
static double quantile(const double *x, int n, double q)
{
    double h = (n - 1) * q;
    int lo = (int)h;
    if (lo >= n - 1)
        return x[n - 1];
    return x[lo] + (h - lo) * (x[lo + 1] - x[lo]);
}

double measure_plan_noise(const double *t, int n, double *tmp)
{
    memcpy(tmp, t, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double med = quantile(tmp, n, 0.5);
    return med > 0 ? (quantile(tmp, n, 0.75) - quantile(tmp, n, 0.25)) / med : 0;
}

int measure_plan_stop_at(const MeasureSettings *m, const double *t, int from, int n, double *tmp)
{
    int mins, maxs;
    measure_plan_bounds(m, &mins, &maxs);
    for (int k = from + 1; k <= n; k++)
        /* Sorting at every k is O(k log k); past 256 samples test every 32nd. */
        if (k >= mins && (k <= 256 || k % 32 == 0) && measure_plan_noise(t, k, tmp) <= m->noise)
            return k;
    return 0;
}

void measure_plan_stats(const double *t, int n, double *tmp, CaseResult *res)
{
    res->samples = n;
    if (n == 0)
        return;
    double noise = measure_plan_noise(t, n, tmp); /* leaves tmp sorted */
    res->noise = n > 1 ? noise : NAN;
    res->median_ms = quantile(tmp, n, 0.5);
    res->min_ms = tmp[0];
    res->max_ms = tmp[n - 1];
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    res->mean_ms = sum / n;
    for (int i = 0; i < n; i++)
        ss += (t[i] - res->mean_ms) * (t[i] - res->mean_ms);
    res->stdev_ms = n > 1 ? sqrt(ss / (n - 1)) : 0;
}
