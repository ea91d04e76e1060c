/* run_order: the order in which the parent hands out the run's work.
 *
 * Cases are sorted by workload group (run_cases.c); a group is the unit of
 * hand-out, since its cases share one generated input, one host reference
 * and, for a differential check, the baseline's output.  Here each group's
 * cost is estimated before anything runs, a group much longer than a
 * worker's share is cut into parts where that is safe, and the units are
 * handed out longest first (longest-processing-time first), so that the
 * longest group does not start last and hold one GPU while the others idle.
 *
 * The estimate of a case (ms), in this order:
 *   - a stored time: the newest case in the database of the same spec, the
 *     same variant source (its hash) and the same axis values that was
 *     timed, t_input_ms + t_verify_ms + t_measure_ms (median_ms x samples
 *     where t_measure_ms is NULL), read before --rerun forgets it, plus
 *     RUN_EST_CASE_MS;
 *   - else a model: RUN_EST_CASE_MS + sampling, a launch costing its bytes
 *     (the spec's `bytes` metric, else the buffers' size) at the GPU's peak
 *     bandwidth plus the L2 flush, max_samples of them within the budget
 *     (never less than min_samples), and the verified launch and warm-ups.
 * A group adds RUN_EST_HOST_NS_PER_BYTE x its buffers' bytes (the input
 * generated, the host reference computed, once a group) unless one of its
 * cases has a stored time, which includes them.
 *
 * The split rule: a group may be cut only when the spec is not
 * differential, i.e. no check of any case reads the baseline's output.  Every
 * other check a worker can meet alone: it generates the inputs from their key
 * (inputs.c), computes a host reference on a miss of its cache and runs a
 * reference kernel once per key it has not run, so a part costs one more
 * input generation and reference, which its estimate carries.  With
 * share = total / workers, a group of estimate C > share (its cases'
 * cost S plus its host cost H; more than one case) is cut, in case order,
 * into at most k = min(cases, ceil(2 S / share)) parts of about S / k case
 * cost each (a part ends at the case boundary nearest that), k lowered
 * until S / k >= H (a part repeats the host work: it must carry at least as
 * much case work).  Parts of about half a share keep the list-scheduling
 * bound (makespan <= share + the largest unit) near 1.5 shares. */
#include "run_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/measure_plan.h"

/* ---- stored times ------------------------------------------------------------------- */

typedef struct HistRow {
    char *key;                  /* source hash, '\n', axes JSON */
    double ms;
    int seq;                    /* order read: later is newer */
} HistRow;

static char *hist_key(const char *hash, const char *axes)
{
    size_t nh = strlen(hash), na = strlen(axes);
    char *k = mem_alloc(nh + na + 2);
    memcpy(k, hash, nh);
    k[nh] = '\n';
    memcpy(k + nh + 1, axes, na + 1);
    return k;
}

static void hist_add(void *ctx, const char *hash, const char *axes, double ms)
{
    RunHistory *h = ctx;
    if (h->n == h->cap)
        h->rows = mem_realloc(h->rows, sizeof(HistRow) * (size_t)(h->cap = h->cap ? 2 * h->cap : 64));
    HistRow *row = &((HistRow *)h->rows)[h->n];
    *row = (HistRow){hist_key(hash, axes), ms, h->n};
    h->n++;
}

/* By key, the newest first. */
static int hist_cmp(const void *a, const void *b)
{
    const HistRow *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : y->seq - x->seq;
}

int run_history_load(Store *st, const char *spec_name, RunHistory *h, KvxError *err)
{
    memset(h, 0, sizeof *h);
    if (store_case_costs(st, spec_name, hist_add, h, err) != 0)
        return -1;
    HistRow *v = h->rows;
    if (h->n)
        qsort(v, (size_t)h->n, sizeof *v, hist_cmp);
    int k = 0;
    for (int i = 0; i < h->n; i++) {
        if (k > 0 && strcmp(v[k - 1].key, v[i].key) == 0) {
            free(v[i].key);
            continue;
        }
        v[k++] = v[i];
    }
    h->n = k;
    return 0;
}

double run_history_ms(const RunHistory *h, const char *source_hash, const char *axes_json)
{
    if (h->n == 0)
        return NAN;
    HistRow probe = {hist_key(source_hash, axes_json), 0, 1 << 30};
    const HistRow *v = h->rows;
    int lo = 0, hi = h->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(v[mid].key, probe.key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double ms = lo < h->n && strcmp(v[lo].key, probe.key) == 0 ? v[lo].ms : NAN;
    free(probe.key);
    return ms;
}

void run_history_free(RunHistory *h)
{
    HistRow *v = h->rows;
    for (int i = 0; i < h->n; i++)
        free(v[i].key);
    free(v);
    memset(h, 0, sizeof *h);
}

/* ---- the model --------------------------------------------------------------------- */

double run_case_model_ms(const MeasureSettings *m, double bytes, double peak_gbs, double l2_bytes)
{
    double gbs = peak_gbs > 0 ? peak_gbs : 1000;
    double launch = bytes / (gbs * 1e6);
    /* the read flush streams twice the L2 before every sample */
    double per = launch + (m->flush_l2 ? 2 * l2_bytes / (gbs * 1e6) : 0);
    int mins, maxs;
    measure_plan_bounds(m, &mins, &maxs);
    double sampling = maxs * per;
    if (m->budget_ms > 0)
        sampling = fmin(sampling, fmax(m->budget_ms, mins * per));
    return RUN_EST_CASE_MS + sampling + (1 + m->warmup) * launch;
}

/* ---- units: groups and their parts, longest first ----------------------------------- */

static int unit_cmp(const void *a, const void *b)
{
    const Range *x = a, *y = b;
    if (x->est_ms != y->est_ms)
        return x->est_ms < y->est_ms ? 1 : -1;
    return x->cur - y->cur;
}

/* Cut group g (cases_ms of its cases, host its host cost) into at most k
 * parts of about cases_ms / k each, each ending at the case boundary nearest
 * that share, appended to u. */
static void cut_group(const int *gstart, int g, const double *case_ms, double host, double cases_ms, int k,
                      Range *u, int *nu)
{
    int a = gstart[g], end = gstart[g + 1], part = 0;
    double acc = 0, target = cases_ms / k;
    for (int i = a; i < end; i++) {
        acc += case_ms[i];
        /* close at the boundary nearest this part's share of the cases */
        if (i + 1 < end && part < k - 1 && 2 * acc + case_ms[i + 1] > 2 * target) {
            u[(*nu)++] = (Range){.cur = a, .end = i + 1, .group = g, .part = part++, .nparts = k,
                                 .est_ms = host + acc};
            a = i + 1;
            acc = 0;
        }
    }
    u[(*nu)++] = (Range){.cur = a, .end = end, .group = g, .part = part, .nparts = k, .est_ms = host + acc};
    for (int i = *nu - part - 1; i < *nu; i++)
        u[i].nparts = part + 1;
}

Range *run_units(const int *gstart, int ngroups, const double *case_ms, const double *host_ms, int splittable,
                 int nworkers, int *nunits, int *nsplit)
{
    double *gms = mem_calloc((size_t)(ngroups ? ngroups : 1), sizeof(double)), total = 0;
    for (int g = 0; g < ngroups; g++) {
        for (int i = gstart[g]; i < gstart[g + 1]; i++)
            gms[g] += case_ms[i];
        total += gms[g] + host_ms[g];
    }
    double share = total / (nworkers > 0 ? nworkers : 1);
    Range *u = mem_alloc(sizeof *u * (size_t)(gstart[ngroups] + 1));
    int nu = 0;
    *nsplit = 0;
    for (int g = 0; g < ngroups; g++) {
        int ncases = gstart[g + 1] - gstart[g];
        double c = gms[g] + host_ms[g];
        int k = 1;
        if (splittable && nworkers > 1 && ncases > 1 && c > share)
            k = (int)fmin(ncases, ceil(2 * gms[g] / share));
        /* a part repeats the group's host work: give none less case work */
        while (k > 1 && host_ms[g] > gms[g] / k)
            k--;
        if (k > 1) {
            cut_group(gstart, g, case_ms, host_ms[g], gms[g], k, u, &nu);
            (*nsplit)++;
        } else {
            u[nu++] = (Range){.cur = gstart[g], .end = gstart[g + 1], .group = g, .part = 0, .nparts = 1,
                              .est_ms = c};
        }
    }
    free(gms);
    qsort(u, (size_t)nu, sizeof *u, unit_cmp);
    *nunits = nu;
    return u;
}

/* ---- the session's order ------------------------------------------------------------- */

/* Groups: contiguous runs of one workload key, after the sort. */
static void form_groups(RunSession *r)
{
    size_t n = (size_t)(r->queue.ncases ? r->queue.ncases : 1);
    r->queue.gstart = mem_alloc(sizeof(int) * (n + 1));
    for (int i = 0; i < r->queue.ncases; i++)
        if (i == 0 || strcmp(r->queue.cases[i].workload_key, r->queue.cases[i - 1].workload_key) != 0)
            r->queue.gstart[r->queue.ngroups++] = i;
    r->queue.gstart[r->queue.ngroups] = r->queue.ncases;
    r->queue.gbase = mem_calloc((size_t)(r->queue.ngroups ? r->queue.ngroups : 1), 1);
    for (int g = 0; g < r->queue.ngroups; g++)
        r->queue.gbase[g] = r->queue.cases[r->queue.gstart[g]].is_baseline; /* the baseline sorts first */
}

/* Bytes a case's launch moves (the `bytes` metric, else its buffers) and its
 * buffers' bytes, from its resolved case. */
static void case_bytes(const RunCase *c, double *moved, double *held)
{
    const CaseDesc *d = c->desc;
    *held = 0;
    for (int b = 0; b < d->nbufs; b++)
        *held += (double)d->bufs[b].count * elem_types[d->bufs[b].type].size;
    *moved = isfinite(c->metrics[0]) && c->metrics[0] > 0 ? c->metrics[0] : *held;
}

/* Each case's estimate and each group's host cost (the file's head). */
static void estimate(RunSession *r, double *case_ms, double *host_ms)
{
    for (int g = 0; g < r->queue.ngroups; g++) {
        int known = 0;
        double held = 0, moved;
        for (int i = r->queue.gstart[g]; i < r->queue.gstart[g + 1]; i++) {
            const RunCase *c = &r->queue.cases[i];
            double ms = run_history_ms(&r->queue.hist, r->plan.p.srcs[c->src].hash, c->axes_json);
            if (!isnan(ms)) {
                case_ms[i] = RUN_EST_CASE_MS + ms;
                known++;
                continue;
            }
            case_bytes(c, &moved, &held);
            case_ms[i] = run_case_model_ms(&r->plan.m, moved, r->plan.facts.peak_gbs, (double)r->plan.facts.l2_bytes);
        }
        if (!known && held == 0)
            case_bytes(&r->queue.cases[r->queue.gstart[g]], &moved, &held);
        host_ms[g] = known ? 0 : held * RUN_EST_HOST_NS_PER_BYTE / 1e6;
        r->prof.est_known += known;
    }
}

void run_order(RunSession *r)
{
    form_groups(r);
    size_t n = (size_t)(r->queue.ncases ? r->queue.ncases : 1);
    double *case_ms = mem_calloc(n, sizeof(double));
    double *host_ms = mem_calloc((size_t)(r->queue.ngroups ? r->queue.ngroups : 1), sizeof(double));
    estimate(r, case_ms, host_ms);
    r->queue.units = run_units(r->queue.gstart, r->queue.ngroups, case_ms, host_ms, !r->plan.s->differential, r->workers.ndev, &r->queue.nunits,
                         &r->prof.nsplit);
    for (int u = 0; u < r->queue.nunits; u++)
        r->prof.est_total_ms += r->queue.units[u].est_ms;
    free(case_ms);
    free(host_ms);
    run_history_free(&r->queue.hist);
    if (r->workers.ndev > 1 && r->queue.ngroups > 0) {
        printf("hand-out %d groups", r->queue.ngroups);
        if (r->prof.nsplit)
            printf(" (%d cut into parts: %d units)", r->prof.nsplit, r->queue.nunits);
        printf(", longest first: estimated %.1f s of work, %.1f s a worker; %d of %d cases from stored "
               "times\n", r->prof.est_total_ms / 1000, r->prof.est_total_ms / 1000 / r->workers.ndev, r->prof.est_known, r->queue.ncases);
        fflush(stdout);
    }
}
