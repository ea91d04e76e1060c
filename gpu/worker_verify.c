/* worker_verify: the result of one case whose buffers are laid out: one
 * untimed launch whose outputs are compared with their references (the timed
 * samples and their statistics are worker_time.c's).
 *
 * References come from a constant, from the baseline variant's outputs at the
 * same workload point (kept per worker, WORKER_MAX_BASELINES of them), from a
 * reference kernel's outputs (worker_ref.c), or from a host computation,
 * cached (WORKER_MAX_EXPECTED) because every variant of a point checks
 * against the same one.  A host reference the worker has not cached is read
 * from the parent, which computes it ahead (CaseDesc.hostref_dir,
 * run/run_ahead.c), or else computed here; either on a thread of its own
 * from the moment the case's inputs exist, while the GPU runs the reference
 * kernel, the verified launch and the samples; the outputs are compared
 * after the samples, so the GPU waits only for what is left of it then
 * (res->host_wait_ms).  Outputs are compared on the device
 * (worker_compare.c), order-free checks too (both sides sorted there),
 * except where a check needs them on the host: a set or membership
 * reference, a constant compared as a multiset.  One-element outputs always
 * come back (metrics may read them).  A case that mismatches is still timed;
 * the status keeps it out of any "fastest correct" reading. */
#include "worker_internal.h"
#include "host/hostref.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void detail_add(CaseResult *res, const char *fmt, ...) KVX_PRINTF(2, 3);
static void detail_add(CaseResult *res, const char *fmt, ...)
{
    size_t len = strlen(res->detail);
    if (len + 3 >= sizeof res->detail)
        return;
    if (len) {
        memcpy(res->detail + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail + len, sizeof res->detail - len, fmt, ap);
    va_end(ap);
}

/* ---- verification -------------------------------------------------------- */

static Baseline *baseline_find(WorkerState *w, const char *key)
{
    for (int i = 0; i < WORKER_MAX_BASELINES; i++)
        if (w->baselines[i].key[0] && strcmp(w->baselines[i].key, key) == 0)
            return &w->baselines[i];
    return NULL;
}

static void baseline_clear(Baseline *b)
{
    for (int i = 0; i < CASE_MAX_BUFS; i++)
        if (b->dev[i])
            cu.cuMemFree(b->dev[i]);
    memset(b, 0, sizeof *b);
}

/* Keep the baseline's outputs, on the device, under its workload key,
 * replacing the oldest.  A copy that finds no room leaves the slot empty:
 * the variants are then skipped with the reason. */
static int baseline_store(WorkerState *w, const CaseDesc *c, const CaseLaunch *run, CaseResult *res)
{
    Baseline *b = baseline_find(w, c->workload_key);
    if (!b) { /* free slots have stamp 0 and go first */
        b = &w->baselines[0];
        for (int i = 1; i < WORKER_MAX_BASELINES; i++)
            if (w->baselines[i].stamp < b->stamp)
                b = &w->baselines[i];
    }
    baseline_clear(b);
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *cb = &c->bufs[i];
        if (!cb->checked)
            continue;
        uint64_t bytes = cb->count * (uint64_t)elem_types[cb->type].size;
        CUresult r = cu.cuMemAlloc(&b->dev[i], bytes ? bytes : 8);
        if (r != CUDA_SUCCESS) {
            b->dev[i] = 0;
            baseline_clear(b);
            return r == CUDA_ERROR_OUT_OF_MEMORY ? 0 : worker_step(w, res, r, "cuMemAlloc (baseline)", 0);
        }
        if (bytes && worker_step(w, res, cu.cuMemcpyDtoDAsync(b->dev[i], run->ptr[i], bytes, w->stream),
                                 "cuMemcpyDtoDAsync (baseline)", 0) < 0) {
            baseline_clear(b);
            return -1;
        }
        b->type[i] = cb->type;
        b->count[i] = cb->count;
    }
    memcpy(b->key, c->workload_key, 65);
    b->stamp = ++w->clock;
    return 0;
}

/* The baseline variant's output at this workload point as the reference:
 * 0, 1 for the baseline itself (nothing to compare), -1 with res set. */
static int site_baseline(WorkerState *w, const CaseDesc *c, const CaseCheck *k, RefSite *site, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    if (c->is_baseline)
        return 1;
    Baseline *base = baseline_find(w, c->workload_key);
    if (!base || !base->dev[k->buf])
        return worker_fail(res, CASE_skipped,
                           "no baseline output for '%s' at this workload point (the baseline "
                           "variant has not run here, or it failed)", b->name);
    if (base->type[k->buf] != b->type || base->count[k->buf] != b->count)
        return worker_fail(res, CASE_skipped, "the baseline's '%s' has another type or size",
                           b->name);
    *site = (RefSite){base->dev[k->buf], &elem_types[b->type], 1, NULL};
    return 0;
}

/* A host reference's arguments: k's, with each buffer argument pointing at
 * the case's host copy of that buffer (its count the buffer's unless given). */
static void host_ref_args(const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                          RefArg args[CASE_MAX_REFARGS])
{
    memcpy(args, k->args, sizeof(RefArg) * CASE_MAX_REFARGS);
    for (int j = 0; j < k->nargs; j++) {
        if (!args[j].is_buf)
            continue;
        const CaseBuf *ab = &c->bufs[k->argbuf[j]];
        args[j].t = &elem_types[ab->type];
        args[j].data = run->host[k->argbuf[j]];
        if (!args[j].count)
            args[j].count = ab->count;
    }
}

static ExpCache *expc_find(WorkerState *w, const char *key)
{
    for (int i = 0; i < WORKER_MAX_EXPECTED; i++)
        if (w->expc[i].stamp && strcmp(w->expc[i].key, key) == 0)
            return &w->expc[i];
    return NULL;
}

/* Keep exp (now the cache's) under key, replacing the least recently used. */
static void expc_put(WorkerState *w, const char *key, const Expected *exp)
{
    ExpCache *slot = &w->expc[0];
    for (int i = 1; i < WORKER_MAX_EXPECTED; i++)
        if (w->expc[i].stamp < slot->stamp)
            slot = &w->expc[i];
    if (slot->stamp)
        verify_expected_free(&slot->exp);
    if (slot->dev)
        cu.cuMemFree(slot->dev);
    slot->dev = 0;
    slot->exp = *exp;
    memcpy(slot->key, key, 65);
    slot->stamp = ++w->clock;
}

int worker_host_reads(const CaseDesc *c, int buf)
{
    if (c->hostref_dir[0])
        return 0;   /* computed ahead by the parent */
    for (int i = 0; i < c->nchecks; i++) {
        const CaseCheck *k = &c->checks[i];
        for (int j = 0; j < k->nargs && hostref_is_host(c, k); j++)
            if (k->args[j].is_buf && k->argbuf[j] == buf)
                return 1;
    }
    return 0;
}

/* The result the parent computes ahead, waited for until it is published or
 * the parent says none will be; a failure, or none, is computed again by
 * expected_host, which reports it. */
static void job_await(HostJob *j, const char *dir)
{
    for (;;) {
        int finished = 0;
        char why[256];
        int rc = hostref_load(dir, j->key, &j->exp, &finished, why, sizeof why);
        if (rc != 0 || finished) {
            j->rc = rc == 1 ? 0 : -1;
            return;
        }
        usleep(200);
    }
}

static void job_run(HostJob *j, const CaseDesc *c, int threads)
{
    if (c->hostref_dir[0]) {
        job_await(j, c->hostref_dir);
        return;
    }
    const CaseCheck *k = &c->checks[j->check];
    const CaseBuf *b = &c->bufs[k->buf];
    /* A failure is computed again by expected_host, which reports it. */
    KvxError err = {0};
    j->rc = verify_reference_threads(k->ref, j->args, k->nargs, &elem_types[b->type], b->count, threads,
                                     &j->exp, &err);
    kvx_error_clear(&err);
}

static void *jobs_thread(void *arg)
{
    HostRefs *h = arg;
    for (int i = 0; i < h->n; i++)
        job_run(&h->job[i], h->c, h->threads);
    return NULL;
}

void worker_host_refs_start(WorkerState *w, const CaseDesc *c, CaseLaunch *run)
{
    HostRefs *h = &run->hrefs;
    memset(h, 0, sizeof *h);
    h->c = c;
    h->threads = w->threads;
    for (int i = 0; i < c->nchecks; i++) {
        const CaseCheck *k = &c->checks[i];
        if (!hostref_is_host(c, k))
            continue;
        HostJob *j = &h->job[h->n];
        host_ref_args(c, k, run, j->args);
        hostref_key(c, k, j->key);
        int dup = expc_find(w, j->key) != NULL;
        for (int q = 0; q < h->n && !dup; q++)
            dup = strcmp(h->job[q].key, j->key) == 0;
        if (dup)
            continue;
        j->check = i;
        h->n++;
    }
    h->started = h->n && pthread_create(&h->tid, NULL, jobs_thread, h) == 0;
}

void worker_host_refs_join(WorkerState *w, CaseLaunch *run, CaseResult *res)
{
    HostRefs *h = &run->hrefs;
    double t0 = wall_now_ms();
    if (h->started)
        pthread_join(h->tid, NULL);
    else
        jobs_thread(h);
    res->host_wait_ms += wall_now_ms() - t0;
    for (int i = 0; i < h->n; i++)
        if (h->job[i].rc == 0)
            expc_put(w, h->job[i].key, &h->job[i].exp);
        else
            verify_expected_free(&h->job[i].exp);
    h->started = 0;
    h->n = 0;
}

/* A host reference's result from the worker's cache, where
 * worker_host_refs_join put it, or computed now; NULL with res skipped when
 * it cannot be computed. */
static ExpCache *expected_host(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                               CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    RefArg args[CASE_MAX_REFARGS];
    host_ref_args(c, k, run, args);
    char key[65];
    hostref_key(c, k, key);
    ExpCache *e = expc_find(w, key);
    if (e) {
        e->stamp = ++w->clock;
        return e;
    }
    /* Not cached: it failed, or more references than the cache holds were
     * computed for this case and this one was replaced.  Inputs the parent's
     * computation read are made here now (the device generated its copy). */
    for (int j = 0; j < k->nargs; j++)
        if (args[j].is_buf && !args[j].data &&
            !(args[j].data = worker_host_input(w, &c->bufs[k->argbuf[j]], res)))
            return NULL;
    KvxError err = {0};
    Expected exp;
    memset(&exp, 0, sizeof exp);
    double t0 = wall_now_ms();
    int rc = verify_reference_threads(k->ref, args, k->nargs, &elem_types[b->type], b->count,
                                      w->threads, &exp, &err);
    res->host_wait_ms += wall_now_ms() - t0;
    if (rc < 0) {
        verify_expected_free(&exp);
        worker_fail(res, CASE_skipped, "reference %s for '%s': %s", k->ref, b->name, err.msg);
        kvx_error_clear(&err);
        return NULL;
    }
    expc_put(w, key, &exp);
    return expc_find(w, key);
}

/* Values as the device compares them: integers in the output's type t
 * (wrapped), floats as double; n values of exp from first; malloc'd. */
static void *values_packed(const Expected *exp, const ElemType *t, uint64_t first, uint64_t n, uint64_t *bytes)
{
    if (exp->is_float) {
        *bytes = n * sizeof(double);
        void *p = mem_alloc(*bytes ? *bytes : 1);
        memcpy(p, exp->f + first, *bytes);
        return p;
    }
    *bytes = n * (uint64_t)t->size;
    unsigned char *p = mem_alloc(*bytes ? *bytes : 1);
    for (uint64_t j = 0; j < n; j++)
        memcpy(p + j * (uint64_t)t->size, &exp->u[first + j], (size_t)t->size); /* little-endian */
    return p;
}

int worker_checks_ready(WorkerState *w, const CaseDesc *c, CaseResult *res)
{
    for (int i = 0; i < c->nchecks; i++) {
        RefSite site;
        if (strcmp(c->checks[i].ref, "baseline") == 0 && site_baseline(w, c, &c->checks[i], &site, res) < 0)
            return -1;
    }
    return 0;
}

/* A host reference: its values uploaded once per key, or, for a set or an
 * address-dependent membership, the host's Expected.  0, or -1 with res set. */
static int site_host(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run, RefSite *site,
                     CaseResult *res)
{
    const ElemType *t = &elem_types[c->bufs[k->buf].type];
    ExpCache *e = expected_host(w, c, k, run, res);
    if (!e)
        return -1;
    if (e->exp.kind != EXPECT_VALUES) {
        *site = (RefSite){0, t, 1, &e->exp};
        return 0;
    }
    if (!e->dev) {
        uint64_t bytes;
        void *p = values_packed(&e->exp, t, 0, e->exp.count, &bytes);
        int rc = worker_upload(w, &e->dev, p, bytes, res);
        free(p);
        if (rc < 0)
            return -1;
    }
    *site = (RefSite){e->dev, e->exp.is_float ? &elem_types[ET_F64] : t, 1, NULL};
    return 0;
}

/* A constant: one value, compared with every element (stride 0). */
static int site_constant(WorkerState *w, const CaseDesc *c, const CaseCheck *k, RefSite *site, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    Expected exp;
    memset(&exp, 0, sizeof exp);
    if (verify_constant(k->constant, t, 1, &exp) < 0) {
        verify_expected_free(&exp);
        return worker_fail(res, CASE_skipped, "check of '%s': the constant does not fit %s", b->name, t->name);
    }
    uint64_t bytes;
    void *p = values_packed(&exp, t, 0, 1, &bytes);
    verify_expected_free(&exp);
    int rc = 0;
    if (!w->cmp_const)
        rc = worker_step(w, res, cu.cuMemAlloc(&w->cmp_const, 8), "cuMemAlloc (constant)", 0);
    if (rc == 0)
        rc = worker_step(w, res, cu.cuMemcpyHtoDAsync(w->cmp_const, p, bytes, w->stream),
                         "cuMemcpyHtoDAsync (constant)", 0);
    free(p);
    *site = (RefSite){w->cmp_const, t->is_float ? &elem_types[ET_F64] : t, 0, NULL};
    return rc;
}

/* Where the reference of one check lies.  0, 1 when there is nothing to
 * compare (the baseline's own differential check), -1 with res set. */
static int site_get(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run, RefSite *site,
                    CaseResult *res)
{
    if (k->ref[0] == 0)
        return site_constant(w, c, k, site, res);
    if (strcmp(k->ref, "baseline") == 0)
        return site_baseline(w, c, k, site, res);
    if (strcmp(k->ref, "reference") == 0) {
        KVX_ASSERT(run->ref && run->ref->ptr[k->buf]);
        *site = (RefSite){run->ref->ptr[k->buf], &elem_types[c->bufs[k->buf].type], 1, NULL};
        return 0;
    }
    if (hostref_slice_on_device(c, k)) {
        const ElemType *t = &elem_types[c->bufs[k->buf].type];
        uint64_t start = (uint64_t)k->args[1].v.i;
        *site = (RefSite){run->ptr[k->argbuf[0]] + start * (uint64_t)t->size, t, 1, NULL};
        return 0;
    }
    return site_host(w, c, k, run, site, res);
}

int worker_verify_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    double t0 = wall_now_ms();
    if (worker_launch_once(w, c, run, 0, NULL, res) < 0)
        return -1;
    res->t_verify_ms = wall_now_ms() - t0;
    return 0;
}

/* A case whose reference could not be computed has no result: its samples
 * (taken while the reference was computed) are dropped. */
static void samples_drop(CaseResult *res)
{
    res->median_ms = res->min_ms = res->max_ms = res->mean_ms = res->stdev_ms = NAN;
    res->noise = res->rel_err = NAN;
    res->samples = 0;
}

/* A check whose reference is only on the host: the output downloaded (once
 * per case) and compared there.  0, or -1 with res set. */
static int compare_host(WorkerState *w, const CaseDesc *c, const CaseCheck *k, CaseLaunch *run, const Expected *exp,
                        double rtol, VerifyReport *rep, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    if (!run->downloaded[k->buf] && b->count &&
        worker_step(w, res, cu.cuMemcpyDtoH(run->out[k->buf], run->ptr[k->buf], b->count * (uint64_t)t->size),
                    "cuMemcpyDtoH", 1) < 0)
        return -1;
    run->downloaded[k->buf] = 1;
    verify_compare(exp, t, run->out[k->buf], b->name, rtol, rep);
    return 0;
}

/* The output of k's buffer on the host (once per case).  0, or -1 with res set. */
static int download(WorkerState *w, const CaseDesc *c, int buf, CaseLaunch *run, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[buf];
    uint64_t bytes = b->count * (uint64_t)elem_types[b->type].size;
    if (!run->downloaded[buf] && bytes &&
        worker_step(w, res, cu.cuMemcpyDtoH(run->out[buf], run->ptr[buf], bytes), "cuMemcpyDtoH", 1) < 0)
        return -1;
    run->downloaded[buf] = 1;
    return 0;
}

/* k's reference on the host, for a comparison the device does not make, in
 * *use: the host reference's own values (cached), or a constant or the device
 * copy (reference kernel, baseline, slice) made into *own.  0, or -1 with res
 * set. */
static int expected_here(WorkerState *w, const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run,
                         const RefSite *site, Expected *own, const Expected **use, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    if (site->exp) {
        *use = site->exp;
        return 0;
    }
    if (hostref_is_host(c, k)) {
        ExpCache *e = expected_host(w, c, k, run, res);
        *use = e ? &e->exp : NULL;
        return e ? 0 : -1;
    }
    *use = own;
    if (site->stride == 0)
        return verify_constant(k->constant, t, b->count, own) < 0
                   ? worker_fail(res, CASE_skipped, "check of '%s': the constant does not fit %s", b->name, t->name)
                   : 0;
    uint64_t bytes = b->count * (uint64_t)site->t->size;
    void *data = mem_alloc(bytes ? bytes : 1);
    int rc = bytes ? worker_step(w, res, cu.cuMemcpyDtoH(data, site->ptr, bytes), "cuMemcpyDtoH (reference)", 1) : 0;
    if (rc == 0)
        verify_from_output(site->t, data, b->count, own);
    free(data);
    return rc < 0 ? -1 : 0;
}

/* The elements of k's buffer compared: all, or the value of its length
 * buffer, checked before it (bad[]: buffers whose checks failed).  0, or 1
 * when the length is wrong or past the buffer (the detail says which). */
static int check_length(const CaseDesc *c, const CaseCheck *k, const CaseLaunch *run, const int *bad,
                        uint64_t *n, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    *n = b->count;
    if (!k->has_length)
        return 0;
    const CaseBuf *lb = &c->bufs[k->length_buf];
    char why[160];
    if (bad[k->length_buf])
        detail_add(res, "%s: not compared, its length '%s' is wrong", b->name, lb->name);
    else if (verify_length(&elem_types[lb->type], run->out[k->length_buf], lb->name, b->count, n,
                           why, sizeof why) < 0)
        detail_add(res, "%s: %s", b->name, why);
    else
        return 0;
    return 1;
}

/* An order-free or prefix check: on the device (in order, or both sides
 * sorted there), or on the host (host/verify_order.c) where the reference is
 * there only (a set, a membership) or is one value compared as a multiset.
 * 0 compared (rep filled), 1 its length is wrong, -1 with res set. */
static int compare_prefix(WorkerState *w, const CaseDesc *c, const CaseCheck *k, CaseLaunch *run, const RefSite *site,
                          const int *bad, double rtol, VerifyReport *rep, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    uint64_t n;
    if (check_length(c, k, run, bad, &n, res))
        return 1;
    if (!site->exp && !k->order_any)
        return worker_compare_span(w, run->ptr[k->buf], t, n, site, rtol, b->name, rep, res);
    if (!site->exp && site->stride == 1)
        return worker_compare_multiset(w, run->ptr[k->buf], t, n, site, rtol, b->name, rep, res);
    Expected own;
    memset(&own, 0, sizeof own);
    const Expected *use = NULL;
    int rc = download(w, c, k->buf, run, res);
    if (rc == 0)
        rc = expected_here(w, c, k, run, site, &own, &use, res);
    if (rc == 0)
        verify_compare_prefix(use, t, run->out[k->buf], n, k->order_any, b->name, rtol, rep);
    verify_expected_free(&own);
    return rc;
}

/* One check: 0 (compared, or nothing to compare), 1 a mismatch, -1 with
 * res set. */
static int check_one(WorkerState *w, const CaseDesc *c, const CaseCheck *k, CaseLaunch *run, const int *bad,
                     CaseResult *res)
{
    const ElemType *t = &elem_types[c->bufs[k->buf].type];
    double rtol = k->rtol >= 0 ? k->rtol : t->rtol;
    RefSite site;
    memset(&site, 0, sizeof site);
    worker_lap(w, res, CASE_STEP_compare);
    int rc = site_get(w, c, k, run, &site, res);
    worker_lap(w, res, CASE_STEP_reference);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    VerifyReport rep;
    memset(&rep, 0, sizeof rep);
    if (k->order_any || k->has_length)
        rc = compare_prefix(w, c, k, run, &site, bad, rtol, &rep, res);
    else
        rc = site.exp ? compare_host(w, c, k, run, site.exp, rtol, &rep, res)
                      : worker_compare_device(w, c, k, run, &site, rtol, &rep, res);
    if (rc != 0)
        return rc;
    if (t->is_float && (isnan(res->rel_err) || rep.rel_err > res->rel_err))
        res->rel_err = rep.rel_err;
    if (rep.ok)
        return 0;
    detail_add(res, "%s (%llu wrong)", rep.first, (unsigned long long)rep.nmismatch);
    return 1;
}

/* Every one-element checked output on the host, as res->out_value: a
 * length for a prefix check, a value for a metric.  0, or -1 with res set. */
static int scalars_get(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].checked && c->bufs[i].count == 1) {
            if (download(w, c, i, run, res) < 0)
                return -1;
            res->out_value[i] = elem_get_f64(&elem_types[c->bufs[i].type], run->out[i], 0);
            res->out_known |= 1u << i;
        }
    return 0;
}

int worker_compare_case(WorkerState *w, const CaseDesc *c, CaseLaunch *run, CaseResult *res)
{
    double t0 = wall_now_ms();
    worker_lap(w, res, CASE_STEP_stats);
    worker_host_refs_join(w, run, res);
    worker_lap(w, res, CASE_STEP_reference);
    int bad[CASE_MAX_BUFS] = {0}, own_ok = 1;
    if (scalars_get(w, c, run, res) < 0)
        return -1;
    /* Whole-buffer checks first: a length is a checked scalar output. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nchecks; i++) {
            const CaseCheck *k = &c->checks[i];
            if (k->has_length != pass)
                continue;
            int rc = check_one(w, c, k, run, bad, res);
            if (rc < 0) {
                samples_drop(res);
                return -1;
            }
            if (rc) {
                res->status = CASE_mismatch;
                bad[k->buf] = 1;
                own_ok = 0;
            }
        }
    /* A baseline that fails its own checks must not become the reference. */
    if (c->is_baseline && own_ok && baseline_store(w, c, run, res) < 0)
        return -1;
    if (res->status == CASE_mismatch)
        detail_add(res, "timed anyway");
    res->t_verify_ms += wall_now_ms() - t0;
    worker_lap(w, res, CASE_STEP_compare);
    return 0;
}
