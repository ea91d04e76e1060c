/* worker_measure: the result of one case whose buffers are laid out: one
 * untimed launch whose outputs are compared with their references, then timed
 * samples and their statistics.
 *
 * References come from a constant, from the baseline variant's outputs at the
 * same workload point (kept per worker, WORKER_MAX_BASELINES of them), from a
 * reference kernel's outputs (worker_ref.c), or from a host computation, cached (WORKER_MAX_EXPECTED) because every variant of a
 * point checks against the same one.  A case that mismatches is still timed;
 * the status keeps it out of any "fastest correct" reading. */
#include "worker_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

static Baseline *baseline_find(Worker *w, const char *key)
{
    for (int i = 0; i < WORKER_MAX_BASELINES; i++)
        if (w->baselines[i].key[0] && strcmp(w->baselines[i].key, key) == 0)
            return &w->baselines[i];
    return NULL;
}

/* Keep the baseline's outputs under its workload key, replacing the oldest. */
static void baseline_store(Worker *w, const CaseDesc *c, const Run *run)
{
    Baseline *b = baseline_find(w, c->workload_key);
    if (!b) { /* free slots have stamp 0 and go first */
        b = &w->baselines[0];
        for (int i = 1; i < WORKER_MAX_BASELINES; i++)
            if (w->baselines[i].stamp < b->stamp)
                b = &w->baselines[i];
    }
    for (int i = 0; i < CASE_MAX_BUFS; i++)
        free(b->data[i]);
    memset(b, 0, sizeof *b);
    memcpy(b->key, c->workload_key, 65);
    b->stamp = ++w->clock;
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *cb = &c->bufs[i];
        if (!cb->checked)
            continue;
        size_t bytes = cb->count * (uint64_t)elem_types[cb->type].size;
        b->data[i] = xmalloc(bytes ? bytes : 1);
        memcpy(b->data[i], run->out[i], bytes);
        b->type[i] = cb->type;
        b->count[i] = cb->count;
    }
}

/* The reference of one check.  0 (exp is the caller's to free), 2 (exp is
 * borrowed from the worker's cache: do not free), 1 when there is nothing to
 * compare (the baseline's own differential check), -1 with res set. */
static int expected_get(Worker *w, const CaseDesc *c, const CaseCheck *k, const Run *run,
                        Expected *exp, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    if (k->ref[0] == 0) {
        if (verify_constant(k->constant, t, b->count, exp) < 0)
            return worker_fail(res, CASE_skipped, "check of '%s': the constant does not fit %s",
                               b->name, t->name);
        return 0;
    }
    if (strcmp(k->ref, "baseline") == 0) {
        if (c->is_baseline)
            return 1;
        Baseline *base = baseline_find(w, c->workload_key);
        if (!base || !base->data[k->buf])
            return worker_fail(res, CASE_skipped,
                               "no baseline output for '%s' at this workload point (the baseline "
                               "variant has not run here, or it failed)", b->name);
        if (base->type[k->buf] != b->type || base->count[k->buf] != b->count)
            return worker_fail(res, CASE_skipped, "the baseline's '%s' has another type or size",
                               b->name);
        if (verify_from_output(t, base->data[k->buf], b->count, exp) < 0)
            return worker_fail(res, CASE_skipped, "the baseline's '%s' cannot be a reference",
                               b->name);
        return 0;
    }
    if (strcmp(k->ref, "reference") == 0) {
        KVX_ASSERT(run->ref && run->ref->data[k->buf]);
        verify_from_output(t, run->ref->data[k->buf], b->count, exp);
        return 0;
    }
    RefArg args[CASE_MAX_REFARGS];
    memcpy(args, k->args, sizeof args);
    for (int j = 0; j < k->nargs; j++) {
        if (!args[j].is_buf)
            continue;
        const CaseBuf *ab = &c->bufs[k->argbuf[j]];
        args[j].t = &elem_types[ab->type];
        args[j].data = run->host[k->argbuf[j]];
        if (!args[j].count)
            args[j].count = ab->count;
    }
    /* The key: the reference, its inputs (by their generation keys) and scalar
     * arguments, and the output's type and size. */
    Sha256 h;
    sha256_init(&h);
    sha256_update(&h, k->ref, strlen(k->ref) + 1);
    for (int j = 0; j < k->nargs; j++) {
        char text[96];
        if (args[j].is_buf)
            snprintf(text, sizeof text, "b:%s", c->bufs[k->argbuf[j]].input_key);
        else if (args[j].v.kind == VAL_STR)
            snprintf(text, sizeof text, "s:%s", args[j].v.s);
        else
            snprintf(text, sizeof text, "n:%d:%lld:%.17g", args[j].v.kind, (long long)args[j].v.i,
                     args[j].v.d);
        sha256_update(&h, text, strlen(text) + 1);
    }
    char tail[64];
    snprintf(tail, sizeof tail, "%s:%llu", t->name, (unsigned long long)b->count);
    sha256_update(&h, tail, strlen(tail) + 1);
    uint8_t digest[32];
    sha256_final(&h, digest);
    char key[65];
    for (int i = 0; i < 32; i++)
        snprintf(key + 2 * i, 3, "%02x", digest[i]);
    ExpCache *slot = &w->expc[0];
    for (int i = 0; i < WORKER_MAX_EXPECTED; i++) {
        ExpCache *e = &w->expc[i];
        if (e->stamp && strcmp(e->key, key) == 0) {
            e->stamp = ++w->clock;
            *exp = e->exp;
            return 2;
        }
        if (e->stamp < slot->stamp)
            slot = e;
    }
    KvxError err = {0};
    if (verify_reference_threads(k->ref, args, k->nargs, t, b->count, w->threads, exp, &err) < 0)
        return worker_fail(res, CASE_skipped, "reference %s for '%s': %s", k->ref, b->name, err.msg);
    if (slot->stamp)
        verify_expected_free(&slot->exp);
    slot->exp = *exp;
    memcpy(slot->key, key, 65);
    slot->stamp = ++w->clock;
    return 2;
}

int worker_verify_case(Worker *w, const CaseDesc *c, Run *run, CaseResult *res)
{
    double t0 = now_ms();
    if (worker_launch_once(w, c, run, 0, NULL, res) < 0)
        return -1;
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *b = &c->bufs[i];
        if (b->checked && b->count &&
            worker_step(w, res,
                        cu.cuMemcpyDtoH(run->out[i], run->ptr[i],
                                        b->count * (uint64_t)elem_types[b->type].size),
                        "cuMemcpyDtoH", 1) < 0)
            return -1;
    }
    int own_ok = 1;
    for (int i = 0; i < c->nchecks; i++) {
        const CaseCheck *k = &c->checks[i];
        const CaseBuf *b = &c->bufs[k->buf];
        const ElemType *t = &elem_types[b->type];
        Expected exp;
        memset(&exp, 0, sizeof exp);
        int rc = expected_get(w, c, k, run, &exp, res);
        if (rc < 0) {
            verify_expected_free(&exp);
            return -1;
        }
        if (rc == 1)
            continue;
        VerifyReport rep;
        memset(&rep, 0, sizeof rep);
        verify_compare(&exp, t, run->out[k->buf], b->name, k->rtol >= 0 ? k->rtol : t->rtol, &rep);
        if (rc == 0)
            verify_expected_free(&exp);
        if (t->is_float && (isnan(res->rel_err) || rep.rel_err > res->rel_err))
            res->rel_err = rep.rel_err;
        if (!rep.ok) {
            res->status = CASE_mismatch;
            own_ok = 0;
            detail_add(res, "%s (%llu wrong)", rep.first, (unsigned long long)rep.nmismatch);
        }
    }
    /* A baseline that fails its own checks must not become the reference. */
    if (c->is_baseline && own_ok)
        baseline_store(w, c, run);
    if (res->status == CASE_mismatch)
        detail_add(res, "timed anyway");
    res->t_verify_ms = now_ms() - t0;
    return 0;
}

/* ---- measurement ----------------------------------------------------------- */

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

/* Relative spread (p75 - p25) / median of t[0..n); sorts a copy into tmp. */
static double noise_of(const double *t, int n, double *tmp)
{
    memcpy(tmp, t, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double med = quantile(tmp, n, 0.5);
    return med > 0 ? (quantile(tmp, n, 0.75) - quantile(tmp, n, 0.25)) / med : 0;
}

static void stats_fill(const double *t, int n, double *tmp, CaseResult *res)
{
    res->samples = n;
    if (n == 0)
        return;
    res->noise = noise_of(t, n, tmp); /* leaves tmp sorted */
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

/* The read flush: every thread of a grid-stride loop loads 16-byte words of
 * the buffer into L2 (ld.global.cg: L2 only, not L1) and folds them into a
 * register, stored only when it equals a constant, so the loads cannot be
 * removed.  PTX for sm_50 and later, compiled by the driver for the device:
 * no NVRTC in the worker. */
static const char flush_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry kvx_l2_flush(.param .u64 buf, .param .u64 n16, .param .u64 out)\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<12>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [buf];\n"
    "    ld.param.u64 %rd2, [n16];\n"
    "    ld.param.u64 %rd3, [out];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mad.lo.u32 %r4, %r1, %r2, %r3;\n"
    "    cvt.u64.u32 %rd4, %r4;\n"
    "    mov.u32 %r5, %nctaid.x;\n"
    "    mul.lo.u32 %r6, %r5, %r2;\n"
    "    cvt.u64.u32 %rd5, %r6;\n"
    "    mov.u32 %r7, 0;\n"
    "    setp.ge.u64 %p1, %rd4, %rd2;\n"
    "    @%p1 bra DONE;\n"
    "LOOP:\n"
    "    shl.b64 %rd6, %rd4, 4;\n"
    "    add.s64 %rd7, %rd1, %rd6;\n"
    "    ld.global.cg.v4.u32 {%r8, %r9, %r10, %r11}, [%rd7];\n"
    "    xor.b32 %r7, %r7, %r8;\n"
    "    xor.b32 %r7, %r7, %r9;\n"
    "    xor.b32 %r7, %r7, %r10;\n"
    "    xor.b32 %r7, %r7, %r11;\n"
    "    add.s64 %rd4, %rd4, %rd5;\n"
    "    setp.lt.u64 %p2, %rd4, %rd2;\n"
    "    @%p2 bra LOOP;\n"
    "DONE:\n"
    "    setp.ne.u32 %p1, %r7, 0x9e3779b9;\n"
    "    @%p1 bra END;\n"
    "    st.global.u32 [%rd3], %r7;\n"
    "END:\n"
    "    ret;\n"
    "}\n";

int worker_flush_prepare(Worker *w, int mode, CaseResult *res)
{
    if (!w->scratch) {
        size_t bytes = (size_t)(w->dev.l2_bytes > 0 ? 2 * w->dev.l2_bytes : 64 << 20);
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
            r = cu.cuModuleGetFunction(&w->flush_fn, w->flush_mod, "kvx_l2_flush");
        if (r != CUDA_SUCCESS)
            return worker_fail(res, CASE_skipped, "the L2 flush kernel (PTX JIT): %s",
                               cudadl_error_name(r));
    }
    return 0;
}

int worker_measure_case(Worker *w, const CaseDesc *c, Run *run, CaseResult *res)
{
    const MeasureSettings *m = &c->measure;
    double t0 = now_ms();
    if (m->flush_l2 && worker_flush_prepare(w, m->flush_l2, res) < 0)
        return -1;
    for (int i = 0; i < m->warmup; i++)
        if (worker_launch_once(w, c, run, m->flush_l2, NULL, res) < 0)
            return -1;
    int maxs = m->max_samples > 0 ? m->max_samples : 1;
    int mins = m->min_samples < 1 ? 1 : m->min_samples > maxs ? maxs : m->min_samples;
    double *t = xmalloc((size_t)maxs * sizeof *t), *tmp = xmalloc((size_t)maxs * sizeof *tmp);
    double start = now_ms();
    int n = 0, rc = 0;
    while (n < maxs) {
        float ms = 0;
        if (worker_launch_once(w, c, run, m->flush_l2, &ms, res) < 0) {
            rc = -1;
            break;
        }
        t[n++] = ms;
        /* Sorting on every sample is O(n^2 log n); past 256 samples test every 32nd. */
        if (n >= mins && (n <= 256 || n % 32 == 0) && noise_of(t, n, tmp) <= m->noise)
            break;
        if (m->budget_ms > 0 && now_ms() - start >= m->budget_ms)
            break;
    }
    if (rc == 0)
        stats_fill(t, n, tmp, res);
    free(t);
    free(tmp);
    res->t_measure_ms = now_ms() - t0;
    return rc;
}
