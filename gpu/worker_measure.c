/* worker_measure: the result of one case whose buffers are laid out: one
 * untimed launch whose outputs are compared with their references (the timed
 * samples and their statistics are worker_sample.c's).
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

/* The baseline variant's output at this workload point as the reference:
 * 0, 1 for the baseline itself (nothing to compare), -1 with res set. */
static int expected_baseline(Worker *w, const CaseDesc *c, const CaseCheck *k, Expected *exp,
                             CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
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

/* A host reference's arguments: k's, with each buffer argument pointing at
 * the case's host copy of that buffer (its count the buffer's unless given). */
static void host_ref_args(const CaseDesc *c, const CaseCheck *k, const Run *run,
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

/* The key of a host reference's result: the reference, its inputs (by their
 * generation keys) and scalar arguments, and the output's type and size; 64
 * hex digits into key. */
static void host_ref_key(const CaseDesc *c, const CaseCheck *k, const RefArg *args, char key[65])
{
    const CaseBuf *b = &c->bufs[k->buf];
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
    snprintf(tail, sizeof tail, "%s:%llu", elem_types[b->type].name, (unsigned long long)b->count);
    sha256_update(&h, tail, strlen(tail) + 1);
    uint8_t digest[32];
    sha256_final(&h, digest);
    for (int i = 0; i < 32; i++)
        snprintf(key + 2 * i, 3, "%02x", digest[i]);
}

/* A host reference's result, from the worker's cache (the least recently
 * used entry is replaced) or computed: 2 (exp borrowed from the cache), -1
 * with res set. */
static int expected_host(Worker *w, const CaseDesc *c, const CaseCheck *k, const Run *run,
                         Expected *exp, CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    RefArg args[CASE_MAX_REFARGS];
    host_ref_args(c, k, run, args);
    char key[65];
    host_ref_key(c, k, args, key);
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
    if (verify_reference_threads(k->ref, args, k->nargs, &elem_types[b->type], b->count,
                                 w->threads, exp, &err) < 0)
        return worker_fail(res, CASE_skipped, "reference %s for '%s': %s", k->ref, b->name, err.msg);
    if (slot->stamp)
        verify_expected_free(&slot->exp);
    slot->exp = *exp;
    memcpy(slot->key, key, 65);
    slot->stamp = ++w->clock;
    return 2;
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
    if (strcmp(k->ref, "baseline") == 0)
        return expected_baseline(w, c, k, exp, res);
    if (strcmp(k->ref, "reference") == 0) {
        KVX_ASSERT(run->ref && run->ref->data[k->buf]);
        verify_from_output(t, run->ref->data[k->buf], b->count, exp);
        return 0;
    }
    return expected_host(w, c, k, run, exp, res);
}

/* The elements of k's buffer compared: all, or the value of its length
 * buffer, verified before it (bad[]: buffers whose checks failed).  0, or 1
 * when the length is wrong or past the buffer (the detail says which). */
static int check_length(const CaseDesc *c, const CaseCheck *k, const Run *run, const int *bad,
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

/* One check: 0 passed (or nothing to compare), 1 a mismatch (res says
 * which elements), -1 with res set (no reference). */
static int check_one(Worker *w, const CaseDesc *c, const CaseCheck *k, Run *run, const int *bad,
                     CaseResult *res)
{
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    Expected exp;
    memset(&exp, 0, sizeof exp);
    worker_lap(w, res, CASE_STEP_compare);
    int rc = expected_get(w, c, k, run, &exp, res);
    worker_lap(w, res, CASE_STEP_reference);
    uint64_t n;
    if (rc < 0 || rc == 1) {
        verify_expected_free(&exp);
        return rc < 0 ? -1 : 0;
    }
    VerifyReport rep;
    memset(&rep, 0, sizeof rep);
    int len_bad = check_length(c, k, run, bad, &n, res);
    if (!len_bad)
        verify_compare_prefix(&exp, t, run->out[k->buf], n, k->order_any, b->name,
                              k->rtol >= 0 ? k->rtol : t->rtol, &rep);
    if (rc == 0)
        verify_expected_free(&exp);
    if (len_bad)
        return 1;
    if (t->is_float && (isnan(res->rel_err) || rep.rel_err > res->rel_err))
        res->rel_err = rep.rel_err;
    if (rep.ok)
        return 0;
    detail_add(res, "%s (%llu wrong)", rep.first, (unsigned long long)rep.nmismatch);
    return 1;
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
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].checked && c->bufs[i].count == 1) {
            res->out_value[i] = elem_get_f64(&elem_types[c->bufs[i].type], run->out[i], 0);
            res->out_known |= 1u << i;
        }
    /* Whole-buffer checks first: a length is a verified scalar output. */
    int bad[CASE_MAX_BUFS] = {0}, own_ok = 1;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nchecks; i++) {
            const CaseCheck *k = &c->checks[i];
            if (k->has_length != pass)
                continue;
            int rc = check_one(w, c, k, run, bad, res);
            if (rc < 0)
                return -1;
            if (rc) {
                res->status = CASE_mismatch;
                bad[k->buf] = 1;
                own_ok = 0;
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

