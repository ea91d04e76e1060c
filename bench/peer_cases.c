/* peer_cases: bench/peer.h over kvx's own stages.  The spec is loaded and
 * planned (spec_load, plan_build, plan_ref_build) for the GPU's facts as
 * worker_device_info_facts makes them, or an arch's nominal ones; points are selected
 * as plan_select selects them (gen/plan.c: a compared value an
 * axis does not have is an error); each row is resolved by resolve_case with
 * the run's measurement settings, as run_loop.c resolves a case before it
 * goes to a worker; inputs come from inputs_fill with the resolved
 * initialisers and the host reference from verify_reference_threads, as
 * worker.c and worker_verify.c make them.  Nothing of the generator or the
 * reference is repeated here.
 *
 * Invariants: at most one row is prepared at a time (its inputs and its
 * reference); inputs are kept by kvx's input key, so a row that shares the
 * previous row's inputs generates nothing. */
#include "peer.h"

#include "host/inputs.h"
#include "host/measure_plan.h"
#include "resolve/resolve.h"
#include "host/verify.h"
#include "gpu/worker.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)PEER_FLUSH_OFF == (int)MEASURE_FLUSH_OFF && (int)PEER_FLUSH_READ == (int)MEASURE_FLUSH_READ &&
                   (int)PEER_FLUSH_WRITE == (int)MEASURE_FLUSH_WRITE,
               "peer.h's flush modes are spec.h's");
_Static_assert(PEER_MAX_ARGS == CASE_MAX_REFARGS, "a check's arguments fit a PeerCheck");

/* A generated input, kept while rows use its key. */
typedef struct Host {
    char key[65];
    void *data;
    uint64_t bytes;
    uint64_t hash;
    int hashed;
} Host;

typedef struct Row {
    int point;
    char *label;
    CaseDesc desc;
    double metrics[3];
} Row;

struct PeerSet {
    Spec *spec;
    Plan plan;
    PlanRef ref;
    int planned;
    MeasureSettings m;
    char facts[512];
    int threads;
    uint64_t choice;            /* baseline axes, as a mask */
    Row *rows;
    int nrows;
    Host hosts[CASE_MAX_BUFS];
    int nhosts;
    int generated;
    int prepared;               /* the row prepared, -1 none */
    Expected exp;
    int have_exp;
};

static int fail(char *err, size_t n, const char *fmt, ...) KVX_PRINTF(3, 4);
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* err's message with its position, into the caller's buffer; err cleared. */
static int fail_kvx(KvxError *e, char *err, size_t n)
{
    if (e->file[0] && e->line > 0)
        fail(err, n, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
    else if (e->file[0])
        fail(err, n, "%s: %s", e->file, e->msg);
    else
        fail(err, n, "%s", e->msg);
    kvx_error_clear(e);
    return -1;
}

/* ---- opening: the spec, its plan, the settings --------------------------------------- */

static void apply_overrides(const PeerOptions *o, MeasureSettings *m)
{
    if (o->warmup >= 0)
        m->warmup = o->warmup;
    if (o->min_samples >= 0)
        m->min_samples = o->min_samples;
    if (o->max_samples >= 0)
        m->max_samples = o->max_samples;
    if (o->flush_l2 >= 0)
        m->flush_l2 = o->flush_l2;
    if (o->noise >= 0)
        m->noise = o->noise;
    if (o->budget_ms >= 0)
        m->budget_ms = o->budget_ms;
    if (o->set_seed)
        m->seed = o->seed;
    measure_finish(m);
}

/* The device as kvx run's probe reports it, then as expression facts. */
static void device_facts(const PeerDevice *pd, DeviceFacts *f)
{
    DeviceInfo d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", pd->name);
    d.cc_major = pd->cc_major, d.cc_minor = pd->cc_minor;
    d.sm_count = pd->sm_count, d.warp = pd->warp;
    d.l2_bytes = pd->l2_bytes, d.mem_bytes = pd->mem_bytes;
    d.smem_block_optin = pd->smem_block_optin, d.smem_sm = pd->smem_sm;
    d.max_threads_block = pd->max_threads_block, d.max_threads_sm = pd->max_threads_sm;
    d.regs_sm = pd->regs_sm;
    d.mem_clock_khz = pd->mem_clock_khz, d.bus_width = pd->bus_width;
    d.peak_gbs = peer_peak_gbs(pd);
    worker_device_info_facts(&d, f);
}

PeerSet *peer_open(const PeerOptions *o, char *err, size_t n)
{
    KvxError e = {0};
    PeerSet *s = mem_calloc(1, sizeof *s);
    s->prepared = -1;
    s->threads = o->threads;
    DeviceFacts f;
    const char *arch = o->arch ? o->arch : "sm_90";
    if (o->device)
        device_facts(o->device, &f);
    else if (facts_for_arch(arch, &f) != 0) {
        fail(err, n, "unknown arch '%s'", arch);
        goto fail;
    }
    snprintf(s->facts, sizeof s->facts, "%s, %s, %d SMs, L2 %.0f MiB, peak %.1f GB/s%s", f.name, f.arch,
             f.sm_count, f.l2_bytes / 1048576.0, f.peak_gbs, f.nominal ? " (nominal: no GPU)" : "");
    if (!(s->spec = spec_load(o->spec_path, &e)) || plan_build(s->spec, &f, &s->plan, &e) != 0) {
        fail_kvx(&e, err, n);
        goto fail;
    }
    s->planned = 1;
    if (plan_ref_build(&s->plan, &s->ref, &e) != 0) {
        fail_kvx(&e, err, n);
        goto fail;
    }
    s->m = s->spec->measure;
    apply_overrides(o, &s->m);
    for (int i = 0; i < s->spec->nbaseline; i++)
        s->choice |= 1ULL << s->spec->baseline[i].axis;
    if (!s->choice && spec_axis_find(s->spec, "strategy") >= 0)
        s->choice = 1ULL << spec_axis_find(s->spec, "strategy");
    if (!s->choice) {
        fail(err, n, "%s: no baseline: and no strategy axis (expected the axis whose value a peer's name "
             "replaces)", o->spec_path);
        goto fail;
    }
    return s;
fail:
    peer_close(s);
    return NULL;
}

static void hosts_drop(PeerSet *s, int keep_for_row)
{
    const CaseDesc *c = keep_for_row >= 0 ? &s->rows[keep_for_row].desc : NULL;
    for (int h = 0; h < s->nhosts;) {
        int used = 0;
        for (int b = 0; c && b < c->nbufs && !used; b++)
            used = !c->bufs[b].checked && !c->bufs[b].scratch && !strcmp(c->bufs[b].input_key, s->hosts[h].key);
        if (used) {
            h++;
            continue;
        }
        free(s->hosts[h].data);
        s->hosts[h] = s->hosts[--s->nhosts];
    }
}

static void rows_free(PeerSet *s)
{
    for (int r = 0; r < s->nrows; r++)
        free(s->rows[r].label);
    free(s->rows);
    s->rows = NULL;
    s->nrows = 0;
}

void peer_close(PeerSet *s)
{
    if (!s)
        return;
    if (s->have_exp)
        verify_expected_free(&s->exp);
    hosts_drop(s, -1);
    rows_free(s);
    plan_ref_free(&s->ref);
    if (s->planned)
        plan_free(&s->plan);
    spec_free(s->spec);
    free(s);
}

const char *peer_spec_name(const PeerSet *s) { return s->spec->name; }
const char *peer_facts(const PeerSet *s) { return s->facts; }

const char *peer_check_ref(const PeerSet *s)
{
    if (s->spec->nchecks < 1)
        return "";
    const CheckSpec *cs = &s->spec->checks[0];
    return cs->kind == CHECK_EXPR && cs->ref->kind == EX_CALL && expr_is_reference(cs->ref->name)
               ? cs->ref->name
               : "";
}

/* ---- selecting and grouping ----------------------------------------------------------- */

/* Clear sel[i] for the points text does not select.  0 or -1 with e. */
static int select_by(const PeerSet *s, const char *text, const char *what, unsigned char *sel, KvxError *e)
{
    if (!text)
        return 0;
    Arena *a = arena_new();
    SrcPos pos = {what, 1, 1};
    Expr *x = expr_parse(a, text, &pos, e);
    int rc = x && spec_check_axis_values(s->spec, x, e) == 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < s->plan.npoints; i++) {
        int m = sel[i] ? plan_point_matches(&s->plan, i, x, e) : 0;
        if (m < 0)
            rc = -1;
        else
            sel[i] = (unsigned char)m;
    }
    arena_free(a);
    return rc;
}

/* Grouping: points are equal when they agree on every axis but the choices. */
typedef struct GroupCtx {
    const PeerSet *s;
    const int *group_point;     /* per group: its first point */
    int point;
} GroupCtx;

static uint64_t group_hash(const PeerSet *s, int point)
{
    const int *v = plan_point(&s->plan, point);
    uint64_t h = 1469598103934665603ULL;
    for (int a = 0; a < s->spec->naxes; a++)
        if (!(s->choice >> a & 1))
            h = (h ^ (uint64_t)v[a]) * 1099511628211ULL;
    return h;
}

static int same_group(int stored, const void *ctx)
{
    const GroupCtx *g = ctx;
    const int *x = plan_point(&g->s->plan, g->group_point[stored]), *y = plan_point(&g->s->plan, g->point);
    for (int a = 0; a < g->s->spec->naxes; a++)
        if (!(g->s->choice >> a & 1) && x[a] != y[a])
            return 0;
    return 1;
}

static int is_baseline(const PeerSet *s, int point)
{
    const int *v = plan_point(&s->plan, point);
    int all = s->spec->nbaseline > 0;
    for (int b = 0; b < s->spec->nbaseline; b++)
        all &= v[s->spec->baseline[b].axis] == s->spec->baseline[b].value;
    return all;
}

/* Resolve row r's point as kvx run resolves a case (no PTX yet: the kernel's
 * parameters from the source, which nothing here launches). */
static int row_resolve(PeerSet *s, Row *r, char *err, size_t n)
{
    KvxError e = {0};
    Resolver rv = {&s->plan, &s->ref, &s->m, 0};
    ResolveCase rc = {.point = r->point, .is_baseline = is_baseline(s, r->point)};
    if (resolve_case(&rv, &rc, &r->desc, r->metrics, &e) != 0)
        return fail_kvx(&e, err, n);
    const CheckSpec *cs = s->spec->nchecks ? &s->spec->checks[0] : NULL;
    if (!cs || !*peer_check_ref(s) || r->desc.nchecks < 1) {
        const SrcPos *p = cs ? &cs->pos : NULL;
        return fail(err, n, "%s:%d:%d: the first check is not a host reference call (a peer's output is "
                    "compared with kvx's host reference: histogram(...), count_below(...), ...)",
                    p ? p->file : s->spec->path, p ? p->line : 1, p ? p->col : 1);
    }
    r->label = plan_point_label(&s->plan, r->point, ~0ULL);
    return 0;
}

int peer_select(PeerSet *s, const char *where, const char *filter, char *err, size_t n)
{
    KvxError e = {0};
    rows_free(s);
    int np = s->plan.npoints;
    unsigned char *sel = mem_alloc((size_t)np + 1);
    memset(sel, 1, (size_t)np + 1);
    int *group_point = mem_alloc(sizeof(int) * ((size_t)np + 1));
    HashIdx idx = {0};
    int rc = -1;
    if (select_by(s, where, "--where", sel, &e) || select_by(s, filter, "peer filter", sel, &e)) {
        fail_kvx(&e, err, n);
        goto done;
    }
    /* Rows grow as groups are found: a CaseDesc is some 20 KB, and a row per
     * point of a large plan would be gigabytes. */
    int cap = 16;
    s->rows = mem_calloc((size_t)cap, sizeof *s->rows);
    for (int i = 0; i < np; i++) {
        if (!sel[i])
            continue;
        GroupCtx g = {s, group_point, i};
        int k = hidx_add(&idx, group_hash(s, i), s->nrows, same_group, &g);
        if (k < 0) {
            if (s->nrows == cap) {
                s->rows = mem_realloc(s->rows, sizeof *s->rows * (size_t)(cap *= 2));
                memset(s->rows + s->nrows, 0, sizeof *s->rows * (size_t)(cap - s->nrows));
            }
            group_point[s->nrows] = i;
            s->rows[s->nrows++].point = i;
        } else if (is_baseline(s, i) && !is_baseline(s, s->rows[k].point)) {
            s->rows[k].point = i;
        }
    }
    for (int r = 0; r < s->nrows; r++)
        if (row_resolve(s, &s->rows[r], err, n) != 0)
            goto done;
    rc = s->nrows;
done:
    hidx_free(&idx);
    free(group_point);
    free(sel);
    return rc;
}

/* ---- rows ------------------------------------------------------------------------------ */

int peer_rows(const PeerSet *s) { return s->nrows; }
int peer_naxes(const PeerSet *s) { return s->spec->naxes; }
const char *peer_axis_name(const PeerSet *s, int axis) { return s->spec->axes[axis].name; }
int peer_axis_choice(const PeerSet *s, int axis) { return (int)(s->choice >> axis & 1); }
const char *peer_label(const PeerSet *s, int row) { return s->rows[row].label; }

const char *peer_axis_value(const PeerSet *s, int row, int axis)
{
    const int *v = plan_point(&s->plan, s->rows[row].point);
    return s->spec->axes[axis].vals[v[axis]].text;
}

double peer_metric(const PeerSet *s, int row, int which)
{
    KVX_ASSERT(which >= 0 && which < 3);
    return s->rows[row].metrics[which];
}

void peer_check(const PeerSet *s, int row, PeerCheck *pc)
{
    const CaseDesc *c = &s->rows[row].desc;
    const CaseCheck *k = &c->checks[0];
    const CaseBuf *out = &c->bufs[k->buf];
    memset(pc, 0, sizeof *pc);
    pc->ref = k->ref;
    pc->out = out->name;
    pc->out_type = elem_types[out->type].name;
    pc->out_size = elem_types[out->type].size;
    pc->out_count = out->count;
    pc->nargs = k->nargs;
    for (int j = 0; j < k->nargs; j++) {
        PeerArg *a = &pc->args[j];
        const Value v = k->args[j].v;
        if (k->argbuf[j] >= 0)
            a->buf = c->bufs[k->argbuf[j]].name;
        else if (v.kind == VAL_INT || v.kind == VAL_BOOL)
            a->is_int = 1, a->i = v.i, a->d = (double)v.i;
        else if (v.kind == VAL_FLOAT)
            a->d = v.d;
        else if (v.kind == VAL_STR)
            a->s = k->strs[j];
    }
}

static const Host *host_of(const PeerSet *s, const char *key)
{
    for (int h = 0; h < s->nhosts; h++)
        if (!strcmp(s->hosts[h].key, key))
            return &s->hosts[h];
    return NULL;
}

static int buf_find(const CaseDesc *c, const char *name)
{
    for (int b = 0; b < c->nbufs; b++)
        if (!strcmp(c->bufs[b].name, name))
            return b;
    return -1;
}

int peer_input(const PeerSet *s, int row, const char *name, PeerInput *in)
{
    const CaseDesc *c = &s->rows[row].desc;
    int b = buf_find(c, name);
    if (b < 0 || c->bufs[b].checked || c->bufs[b].scratch)
        return -1;
    const CaseBuf *cb = &c->bufs[b];
    const ElemType *t = &elem_types[cb->type];
    /* The description, kept in the arena of the spec: it lives as long as s. */
    StrBuf d;
    sb_init(&d);
    inputs_describe(&cb->init, &d);
    const Host *h = s->prepared == row ? host_of(s, cb->input_key) : NULL;
    *in = (PeerInput){.name = cb->name, .type = t->name, .size = t->size, .is_float = t->is_float,
                      .is_signed = t->is_signed, .count = cb->count, .offset = cb->offset, .key = cb->input_key,
                      .init = arena_strdup(s->spec->arena, sb_str(&d)), .data = h ? h->data : NULL};
    sb_free(&d);
    return 0;
}

/* ---- preparing: inputs and the reference ------------------------------------------------ */

static int generate(PeerSet *s, const CaseBuf *b, char *err, size_t n)
{
    if (host_of(s, b->input_key))
        return 0;
    KVX_ASSERT(s->nhosts < CASE_MAX_BUFS);
    const ElemType *t = &elem_types[b->type];
    uint64_t bytes = b->count * (uint64_t)t->size;
    void *data = mem_alloc(bytes ? bytes : 1);
    KvxError e = {0};
    if (inputs_fill(t, data, b->count, &b->init, s->threads, &e) < 0) {
        free(data);
        fail(err, n, "buffer '%s': %s", b->name, e.msg);
        kvx_error_clear(&e);
        return -1;
    }
    Host *h = &s->hosts[s->nhosts++];
    memset(h, 0, sizeof *h);
    memcpy(h->key, b->input_key, 65);
    h->data = data;
    h->bytes = bytes;
    s->generated++;
    return 0;
}

int peer_prepare(PeerSet *s, int row, char *err, size_t n)
{
    const CaseDesc *c = &s->rows[row].desc;
    if (s->have_exp)
        verify_expected_free(&s->exp);
    s->have_exp = 0;
    s->prepared = -1;
    hosts_drop(s, row);
    for (int b = 0; b < c->nbufs; b++)   /* inputs only: a scratch buffer is the kernels' own */
        if (!c->bufs[b].checked && !c->bufs[b].scratch && generate(s, &c->bufs[b], err, n) != 0)
            return -1;
    /* The reference's arguments bound to the inputs, as worker_verify.c's
     * expected_get binds them. */
    const CaseCheck *k = &c->checks[0];
    const CaseBuf *out = &c->bufs[k->buf];
    RefArg args[CASE_MAX_REFARGS];
    memcpy(args, k->args, sizeof args);
    for (int j = 0; j < k->nargs; j++) {
        if (!args[j].is_buf)
            continue;
        const CaseBuf *ab = &c->bufs[k->argbuf[j]];
        const Host *h = host_of(s, ab->input_key);
        if (ab->checked || !h)
            return fail(err, n, "check of '%s': argument '%s' is not an input", out->name, ab->name);
        args[j].t = &elem_types[ab->type];
        args[j].data = h->data;
        if (!args[j].count)
            args[j].count = ab->count;
    }
    KvxError e = {0};
    memset(&s->exp, 0, sizeof s->exp);
    if (verify_reference_threads(k->ref, args, k->nargs, &elem_types[out->type], out->count, s->threads,
                                 &s->exp, &e) < 0) {
        fail(err, n, "reference %s for '%s': %s", k->ref, out->name, e.msg);
        kvx_error_clear(&e);
        verify_expected_free(&s->exp);
        return -1;
    }
    s->have_exp = 1;
    s->prepared = row;
    return 0;
}

int peer_generated(const PeerSet *s) { return s->generated; }

uint64_t peer_input_hash(PeerSet *s, int row, const char *name)
{
    const CaseDesc *c = &s->rows[row].desc;
    int b = buf_find(c, name);
    if (s->prepared != row || b < 0)
        return 0;
    Host *h = (Host *)host_of(s, c->bufs[b].input_key);
    if (!h)
        return 0;
    if (!h->hashed)
        h->hash = hidx_hash(h->data, (size_t)h->bytes), h->hashed = 1;
    return h->hash;
}

int peer_verify(PeerSet *s, int row, const void *out, char *detail, size_t n)
{
    if (s->prepared != row || !s->have_exp)
        return -1;
    const CaseDesc *c = &s->rows[row].desc;
    const CaseCheck *k = &c->checks[0];
    const CaseBuf *b = &c->bufs[k->buf];
    const ElemType *t = &elem_types[b->type];
    VerifyReport rep;
    memset(&rep, 0, sizeof rep);
    verify_compare(&s->exp, t, out, b->name, k->rtol >= 0 ? k->rtol : t->rtol, &rep);
    if (detail && n)
        snprintf(detail, n, "%s", rep.ok ? "" : rep.first);
    return rep.ok ? 1 : 0;
}

/* ---- measurement --------------------------------------------------------------------- */

void peer_measure(const PeerSet *s, PeerMeasure *m)
{
    const MeasureSettings *x = &s->m;
    *m = (PeerMeasure){x->warmup, x->min_samples, x->max_samples, x->sample_batch, x->flush_l2,
                       x->warmup_ms, x->noise, x->budget_ms, x->seed};
}

int peer_warmups(const PeerSet *s, double launch_ms, double spent_ms)
{
    return measure_plan_warmups(&s->m, launch_ms, spent_ms);
}

int peer_batch(const PeerSet *s, int n, double per_ms, double spent_ms, int cap)
{
    return measure_plan_batch(&s->m, n, per_ms, spent_ms, cap);
}

int peer_stop_at(const PeerSet *s, const double *t, int from, int n, double *tmp)
{
    return measure_plan_stop_at(&s->m, t, from, n, tmp);
}

void peer_stats(const double *t, int n, double *tmp, PeerStats *st)
{
    CaseResult r;
    memset(&r, 0, sizeof r);
    r.median_ms = r.min_ms = r.max_ms = r.mean_ms = r.stdev_ms = r.noise = NAN;
    measure_plan_stats(t, n, tmp, &r);
    *st = (PeerStats){r.samples, r.median_ms, r.min_ms, r.max_ms, r.mean_ms, r.stdev_ms, r.noise};
}

double peer_peak_gbs(const PeerDevice *d)
{
    return worker_device_peak_gbs(d->mem_clock_khz, d->bus_width);
}
