/* resolve: a point of a plan into a self-contained CaseDesc (resolve_case),
 * later bound to its compiled kernels (resolve_bind; resolve.h).
 *
 * Limits are the target's device facts (the GPU's in a run, the --arch
 * target's nominal ones in plan and compile): what a launch would be refused
 * for is an error here, before any GPU sees it.  The worker checks the real
 * device again (registers per thread are known only after ptxas). */
#include "resolve.h"
#include "resolve_internal.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- evaluation helpers ---------------------------------------------------------- */

static uint64_t name_seed(uint64_t seed, const char *name)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a: the buffer name picks the stream */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ULL;
    return seed ^ h;
}

static const ElemType *buffer_type(PointEnv *pe, const BufferSpec *b)
{
    if (b->type[0] != '$')
        return elem_type_find(b->type);
    const SetEntry *se = plan_point_set_var(pe, b->type + 1);
    if (se)
        return se->v.kind == VAL_STR ? elem_type_find(se->v.s) : NULL;
    int a = spec_axis_find(pe->spec, b->type + 1);
    if (a >= 0) {
        Value v = pe->spec->axes[a].vals[pe->vals[a]].v;
        return v.kind == VAL_STR ? elem_type_find(v.s) : NULL;
    }
    return NULL;
}

static int eval_double(PointEnv *pe, const Expr *e, double dflt, double *out, KvxError *err)
{
    if (!e) {
        *out = dflt;
        return 0;
    }
    Value v;
    if (plan_point_eval(pe, e, &v, err))
        return -1;
    if (!val_is_num(v)) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a number, got '%s'", val_text(pe->arena, v));
        return -1;
    }
    *out = val_num(v);
    return 0;
}

static int eval_dim(PointEnv *pe, const Expr *e, int64_t max, const SrcPos *at, uint32_t *out,
                    const char *what, KvxError *err)
{
    int64_t v = 1;
    if (e && plan_point_eval_int(pe, e, &v, err))
        return -1;
    if (v < 1 || v > max) {
        kvx_error_set(err, KVX_EINPUT, e ? &e->pos : at, "%s is %lld (expected 1 .. %lld)", what,
                      (long long)v, (long long)max);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* ---- buffers ---------------------------------------------------------------------- */

/* The worker's own check of the evaluated parameters (inputs_check), here at
 * the spec position of the parameter it names, so a plan that passes never
 * fails in the worker for its inputs. */
static int init_check(const InitSpec *in, const char *buf, const ElemType *t, const InitParams *ip,
                      KvxError *err)
{
    InputsAt at;
    KvxError e = {0};
    if (inputs_check(t, ip, &at, &e) == 0)
        return 0;
    const Expr *by_at[] = {[INPUTS_AT_VALUE] = in->value, [INPUTS_AT_LO] = in->lo, [INPUTS_AT_HI] = in->hi,
                           [INPUTS_AT_EXPONENT] = in->exponent, [INPUTS_AT_FRACTION] = in->fraction,
                           [INPUTS_AT_LENGTH] = in->length};
    const Expr *x = by_at[at];
    kvx_error_set(err, KVX_EINPUT, x ? &x->pos : &in->pos, "buffer '%s': %s", buf, e.msg);
    kvx_error_clear(&e);
    return -1;
}

static int resolve_init(PointEnv *pe, const BufferSpec *bs, const MeasureSettings *m, int keys, CaseBuf *cb,
                        KvxError *err)
{
    const InitSpec *in = spec_init_at(&bs->init, pe->vals);
    InitParams *ip = &cb->init;
    ip->kind = in->kind;
    ip->length = 1;
    if (eval_double(pe, in->value, 0, &ip->value, err) || eval_double(pe, in->lo, 0, &ip->lo, err) ||
        eval_double(pe, in->hi, 0, &ip->hi, err) || eval_double(pe, in->exponent, 1, &ip->exponent, err) ||
        eval_double(pe, in->fraction, 0, &ip->fraction, err) ||
        (in->length && plan_point_eval_int(pe, in->length, &ip->length, err)))
        return -1;
    /* Integers exactly as written (a double rounds above 2^53). */
    const Expr *ix[3] = {in->value, in->lo, in->hi};
    int64_t *iv[3] = {&ip->ivalue, &ip->ilo, &ip->ihi};
    for (int q = 0; q < 3; q++) {
        Value xv;
        if (ix[q] && plan_point_eval(pe, ix[q], &xv, err) == 0 && xv.kind == VAL_INT) {
            *iv[q] = xv.i;
            ip->exact |= 1u << q;
        }
    }
    ip->seed = name_seed(m->seed, bs->name);
    if (init_check(in, bs->name, &elem_types[cb->type], ip, err))
        return -1;
    if (keys)   /* a hash of the parameters: most of a plan's time when a million points check */
        inputs_key(&elem_types[cb->type], cb->count, ip, cb->input_key);
    return 0;
}

/* total += (count + offset) x element size, every step checked: a sum that
 * wrapped would pass the device-memory check below.  The cap, 2^63 bytes,
 * leaves the worker room to round each allocation up to 256 bytes. */
static int add_bytes(const BufferSpec *bs, const CaseBuf *cb, const ElemType *t, uint64_t *total,
                     KvxError *err)
{
    uint64_t elems, bytes, sum;
    if (__builtin_add_overflow(cb->count, cb->offset, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)t->size, &bytes) ||
        __builtin_add_overflow(*total, bytes, &sum) || sum > (uint64_t)INT64_MAX) {
        const Expr *at = bs->offset && cb->offset > cb->count ? bs->offset : bs->count;
        kvx_error_set(err, KVX_EINPUT, &at->pos, "buffer '%s' is (count %llu + offset %llu) x %d "
                      "bytes: the buffers need more than 2^63 bytes", bs->name,
                      (unsigned long long)cb->count, (unsigned long long)cb->offset, t->size);
        return -1;
    }
    *total = sum;
    return 0;
}

static int resolve_buffers(PointEnv *pe, const MeasureSettings *m, int keys, CaseDesc *c, KvxError *err)
{
    const Spec *s = pe->spec;
    if (s->nbufs > CASE_MAX_BUFS) {
        kvx_error_set(err, KVX_EINPUT, &s->bufs[CASE_MAX_BUFS].pos, "more than %d buffers", CASE_MAX_BUFS);
        return -1;
    }
    c->nbufs = s->nbufs;
    uint64_t total = 0;
    for (int b = 0; b < s->nbufs; b++) {
        const BufferSpec *bs = &s->bufs[b];
        CaseBuf *cb = &c->bufs[b];
        snprintf(cb->name, sizeof cb->name, "%s", bs->name);
        const ElemType *t = buffer_type(pe, bs);
        if (!t) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has no element type at this point",
                          bs->name);
            return -1;
        }
        cb->type = t->id;
        int64_t count, offset = 0;
        if (plan_point_eval_int(pe, bs->count, &count, err) ||
            (bs->offset && plan_point_eval_int(pe, bs->offset, &offset, err)))
            return -1;
        if (count < 1 || offset < 0) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has count %lld and offset %lld "
                          "(expected count >= 1, offset >= 0)", bs->name, (long long)count,
                          (long long)offset);
            return -1;
        }
        cb->count = (uint64_t)count;
        cb->offset = (uint64_t)offset;
        if (add_bytes(bs, cb, t, &total, err))
            return -1;
        if (pe->facts->mem_bytes > 0 && total > (uint64_t)pe->facts->mem_bytes) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "the buffers need %.3g GB by '%s' (expected at "
                          "most the %.3g GB of device memory of %s)", total / 1e9, bs->name,
                          pe->facts->mem_bytes / 1e9, pe->facts->name);
            return -1;
        }
        if (resolve_init(pe, bs, m, keys, cb, err))
            return -1;
        cb->checked = bs->checked;
        cb->scratch = !bs->scratch ? CASE_SCRATCH_NO : bs->uninit ? CASE_SCRATCH_UNINIT : CASE_SCRATCH_RESET;
    }
    return 0;
}

/* ---- launch ----------------------------------------------------------------------------- */

typedef struct LaunchOut {
    uint32_t *grid, *block, *cluster, *smem;
    CaseArg *args;
    int *nargs;
} LaunchOut;

static void put_scalar(CaseArg *a, const PtxParam *pp, Value v)
{
    a->buf = -1;
    a->size = pp->size;
    a->align = pp->align ? pp->align : pp->size;
    memset(a->bytes, 0, sizeof a->bytes);
    if (pp->is_float && pp->size == 4) {
        float f = (float)val_num(v);
        memcpy(a->bytes, &f, 4);
    } else if (pp->is_float) {
        double d = val_num(v);
        memcpy(a->bytes, &d, 8);
    } else {
        int64_t i = v.kind == VAL_FLOAT ? (int64_t)llround(v.d) : v.i;
        memcpy(a->bytes, &i, (size_t)pp->size); /* little-endian: the low bytes */
    }
}

static int geometry(PointEnv *pe, const LaunchSpec *l, LaunchOut *o, KvxError *err)
{
    const DeviceFacts *f = pe->facts;
    static const char *gn[] = {"grid.x", "grid.y", "grid.z"}, *bn[] = {"block.x", "block.y", "block.z"},
                      *cn[] = {"cluster.x", "cluster.y", "cluster.z"};
    static const int64_t gmax[] = {0x7fffffff, 65535, 65535}, bmax[] = {1024, 1024, 64};
    for (int d = 0; d < 3; d++)
        if (eval_dim(pe, l->grid[d], gmax[d], &l->pos, &o->grid[d], gn[d], err) ||
            eval_dim(pe, l->block[d], bmax[d], &l->pos, &o->block[d], bn[d], err) ||
            eval_dim(pe, l->cluster[d], 16, &l->pos, &o->cluster[d], cn[d], err))
            return -1;
    uint64_t threads = (uint64_t)o->block[0] * o->block[1] * o->block[2];
    if (f->max_threads > 0 && threads > (uint64_t)f->max_threads) {
        kvx_error_set(err, KVX_EINPUT, l->block[0] ? &l->block[0]->pos : &l->pos, "a block of %llu "
                      "threads (expected at most %d on %s)", (unsigned long long)threads, f->max_threads,
                      f->arch);
        return -1;
    }
    uint64_t cs = (uint64_t)o->cluster[0] * o->cluster[1] * o->cluster[2];
    if (cs > 1 && f->cc < 90) {
        kvx_error_set(err, KVX_EINPUT, l->cluster[0] ? &l->cluster[0]->pos : &l->pos, "a cluster of "
                      "%llu blocks needs sm_90 or newer (the target is %s)", (unsigned long long)cs, f->arch);
        return -1;
    }
    for (int d = 0; cs > 1 && d < 3; d++)
        if (o->grid[d] % o->cluster[d]) {
            kvx_error_set(err, KVX_EINPUT, l->cluster[d] ? &l->cluster[d]->pos : &l->pos, "grid.%c = %u "
                          "is not a multiple of cluster.%c = %u", "xyz"[d], o->grid[d], "xyz"[d],
                          o->cluster[d]);
            return -1;
        }
    int64_t smem = 0;
    if (l->smem && plan_point_eval_int(pe, l->smem, &smem, err))
        return -1;
    if (smem < 0 || (f->smem_block > 0 && smem > f->smem_block)) {
        kvx_error_set(err, KVX_EINPUT, &l->smem->pos, "smem is %lld bytes (expected 0 .. %lld, the "
                      "dynamic shared memory a block may have on %s)", (long long)smem,
                      (long long)f->smem_block, f->arch);
        return -1;
    }
    *o->smem = (uint32_t)smem;
    return 0;
}

/* The values an integer parameter of `bits` holds: its C type's range, or
 * with only a PTX width (no signedness) -2^(w-1) .. 2^w-1. */
static void int_range(const ParamType *ct, int bits, int64_t *lo, uint64_t *hi)
{
    int sign = !ct->known || ct->is_signed, unsign = !ct->known || !ct->is_signed;
    *lo = !sign ? 0 : bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    *hi = ct->is_bool ? 1 : bits >= 64 ? (unsign ? UINT64_MAX : INT64_MAX)
        : unsign ? ((uint64_t)1 << bits) - 1 : ((uint64_t)1 << (bits - 1)) - 1;
}

/* Whether v reaches parameter i unchanged: an integer parameter takes a
 * whole number in its range (put_scalar keeps only the low bytes), a float
 * one a number within FLT_MAX.  The type is the source's C type, else the
 * PTX's width; with neither (plan, a type kvx does not read) nothing is
 * known to check.  0, or -1 with err at the argument. */
static int scalar_fits(PointEnv *pe, const Expr *e, int i, const Params *ps, Value v, KvxError *err)
{
    const ParamType *ct = &ps->ct[i];
    if (!ct->known && !ps->known_widths)
        return 0;
    int is_float = ct->known ? ct->is_float : ps->p[i].is_float;
    int bits = 8 * (ct->known ? ct->size : ps->p[i].size);
    char what[80];
    if (ct->known)
        snprintf(what, sizeof what, "'%s'", ct->text);
    else
        snprintf(what, sizeof what, "(%d bits)", bits);
    double d = val_num(v);
    /* the largest finite value: above it the parameter would read inf */
    double fmax = ct->half ? (ct->half->id == ET_F16 ? 65504.0 : 0x1.fep127) : bits == 32 ? FLT_MAX : INFINITY;
    if (is_float && fabs(d) > fmax) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is %s, out of the range of the kernel's "
                      "parameter %d %s (expected a magnitude of at most %g)", i + 1,
                      val_text(pe->arena, v), i + 1, what, fmax);
        return -1;
    }
    if (is_float)
        return 0;
    if (v.kind == VAL_FLOAT && !(d >= -0x1p63 && d < 0x1p63 && d == trunc(d))) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is %s but the kernel's parameter %d %s is "
                      "an integer (expected a whole number: round(), floor() or int() say how to round)",
                      i + 1, val_text(pe->arena, v), i + 1, what);
        return -1;
    }
    int64_t x = v.kind == VAL_FLOAT ? (int64_t)d : v.i, lo;
    uint64_t hi;
    int_range(ct, bits, &lo, &hi);
    if (x >= lo && (x < 0 || (uint64_t)x <= hi))
        return 0;
    kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is %lld, out of the range of the kernel's "
                  "parameter %d %s (expected %lld .. %llu)", i + 1, (long long)x, i + 1, what,
                  (long long)lo, (unsigned long long)hi);
    return -1;
}

static int one_arg(PointEnv *pe, const Expr *e, int i, const Params *ps, CaseArg *ca, KvxError *err)
{
    const Spec *s = pe->spec;
    int b = e->kind == EX_IDENT ? spec_buffer_find(s, e->name) : -1;
    if (b >= 0) {
        if (!ps->is_ptr[i]) {
            kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is buffer '%s' but the kernel's "
                          "parameter %d is not a pointer", i + 1, e->name, i + 1);
            return -1;
        }
        *ca = (CaseArg){.buf = b, .size = 8, .align = 8};
        return 0;
    }
    Value v;
    if (plan_point_eval(pe, e, &v, err))
        return -1;
    if (!val_is_num(v) && v.kind != VAL_BOOL) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is '%s' (expected a number or a buffer)",
                      i + 1, val_text(pe->arena, v));
        return -1;
    }
    if (ps->known_widths && ps->p[i].size > 8) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "kernel parameter %d is a %d-byte aggregate (kvx "
                      "passes scalars and pointers)", i + 1, ps->p[i].size);
        return -1;
    }
    if (!ps->known_widths && ps->is_ptr[i]) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is a number but the kernel's parameter %d "
                      "is a pointer (expected a buffer)", i + 1, i + 1);
        return -1;
    }
    if (v.kind == VAL_BOOL)
        v = val_int(v.i);   /* val_num reads a bool as 0 */
    if (scalar_fits(pe, e, i, ps, v, err))
        return -1;
    PtxParam pp = ps->known_widths ? ps->p[i] : (PtxParam){8, 0, 8};
    put_scalar(ca, &pp, v);
    if (ps->ct[i].half) {   /* the PTX calls it 2 bytes, not a float: encode it here */
        *ca = (CaseArg){.buf = -1, .size = 2, .align = 2};
        elem_set_f64(ps->ct[i].half, ca->bytes, 0, val_num(v));
    }
    return 0;
}

static int resolve_launch(PointEnv *pe, const LaunchSpec *l, const ResolveKernel *k, LaunchOut *o,
                          KvxError *err)
{
    Params ps;
    if (geometry(pe, l, o, err) || resolve_kernel_params(k, &l->pos, &ps, err))
        return -1;
    if (ps.n != l->nargs) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "kernel '%s' takes %d parameters but args gives %d",
                      k->name, ps.n, l->nargs);
        return -1;
    }
    if (l->nargs > CASE_MAX_ARGS) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "more than %d arguments", CASE_MAX_ARGS);
        return -1;
    }
    *o->nargs = l->nargs;
    for (int i = 0; i < l->nargs; i++)
        if (one_arg(pe, l->args[i], i, &ps, &o->args[i], err))
            return -1;
    return 0;
}

/* ---- checks ------------------------------------------------------------------------------ */

/* A host reference call: arguments evaluated, then checked against the
 * reference's signature with the buffers' types and counts. */
static int check_call(PointEnv *pe, const CheckSpec *cs, const CaseDesc *c, CaseCheck *cc, KvxError *err)
{
    const Spec *s = pe->spec;
    const Expr *r = cs->ref;
    snprintf(cc->ref, sizeof cc->ref, "%s", r->name);
    if (r->nargs > CASE_MAX_REFARGS) {
        kvx_error_set(err, KVX_EINPUT, &r->pos, "too many reference arguments");
        return -1;
    }
    cc->nargs = r->nargs;
    for (int j = 0; j < r->nargs; j++) {
        const Expr *x = r->args[j];
        int bi = x->kind == EX_IDENT ? spec_buffer_find(s, x->name) : -1;
        cc->argbuf[j] = bi;
        if (bi >= 0) {
            cc->args[j] = (RefArg){.is_buf = 1, .t = &elem_types[c->bufs[bi].type],
                                   .count = c->bufs[bi].count};
            continue;
        }
        Value v;
        if (plan_point_eval(pe, x, &v, err))
            return -1;
        if (v.kind == VAL_STR) {
            snprintf(cc->strs[j], sizeof cc->strs[j], "%s", v.s);
            v.s = cc->strs[j];
        }
        cc->args[j].v = v;
    }
    const RefSig *sig = refs_find(r->name);
    const CaseBuf *out = &c->bufs[cs->buffer];
    if (sig && refs_check_args(sig, cc->args, cc->nargs, &elem_types[out->type], out->count, err) < 0) {
        KvxError e2 = {0};
        kvx_error_set(&e2, KVX_EINPUT, &r->pos, "check of '%s': %s", out->name, err->msg);
        kvx_error_clear(err);
        *err = e2;
        return -1;
    }
    return 0;
}

/* `out: in`: the output equals the input buffer, as slice(in, 0, count). */
static int check_buffer(const CheckSpec *cs, const CaseDesc *c, CaseCheck *cc, KvxError *err)
{
    const CaseBuf *out = &c->bufs[cs->buffer], *in = &c->bufs[cs->other];
    if (in->type != out->type || in->count != out->count) {
        kvx_error_set(err, KVX_EINPUT, &cs->ref->pos, "check of '%s' compares it with '%s', but '%s' "
                      "is %llu x %s and '%s' %llu x %s (expected the same type and count)", out->name,
                      in->name, out->name, (unsigned long long)out->count, elem_types[out->type].name,
                      in->name, (unsigned long long)in->count, elem_types[in->type].name);
        return -1;
    }
    snprintf(cc->ref, sizeof cc->ref, "slice");
    cc->nargs = 3;
    cc->argbuf[0] = cs->other;
    cc->args[0] = (RefArg){.is_buf = 1, .t = &elem_types[in->type], .count = in->count};
    cc->argbuf[1] = cc->argbuf[2] = -1;
    cc->args[1] = (RefArg){.v = val_int(0)};
    cc->args[2] = (RefArg){.v = val_int((int64_t)in->count)};
    return 0;
}

static int check_constant(PointEnv *pe, const CheckSpec *cs, const CaseDesc *c, CaseCheck *cc,
                          KvxError *err)
{
    Value v;
    if (plan_point_eval(pe, cs->ref, &v, err))
        return -1;
    const ElemType *t = &elem_types[c->bufs[cs->buffer].type];
    Expected e;
    if (verify_constant(v, t, 1, &e) < 0) {
        kvx_error_set(err, KVX_EINPUT, &cs->ref->pos, "check of '%s': '%s' is not a value of its type "
                      "%s (expected %s)", c->bufs[cs->buffer].name, val_text(pe->arena, v), t->name,
                      t->is_float ? "a number" : "a whole number in its range");
        return -1;
    }
    verify_expected_free(&e);
    cc->constant = v;
    return 0;
}

/* The order and length of cs (the spec's check of one buffer) onto cc: a
 * length buffer holds one integer element at every point. */
static int check_shape(const CheckSpec *cs, const CaseDesc *c, CaseCheck *cc, KvxError *err)
{
    cc->order_any = cs->order_any;
    if (cs->length < 0)
        return 0;
    const CaseBuf *lb = &c->bufs[cs->length];
    if (lb->count != 1 || elem_types[lb->type].is_float) {
        kvx_error_set(err, KVX_EINPUT, &cs->length_pos, "check of '%s': length '%s' is %llu x %s "
                      "(expected one element of an integer type)", c->bufs[cs->buffer].name,
                      lb->name, (unsigned long long)lb->count, elem_types[lb->type].name);
        return -1;
    }
    cc->has_length = 1;
    cc->length_buf = cs->length;
    return 0;
}

static double check_rtol(const Spec *s, const CheckSpec *cs, const ElemType *t)
{
    return cs->rtol >= 0 ? cs->rtol : s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
}

static int resolve_checks(PointEnv *pe, const ResolveCase *rc, CaseDesc *c, KvxError *err)
{
    const Spec *s = pe->spec;
    for (int k = 0; k < s->nchecks; k++) {
        const CheckSpec *cs = &s->checks[k];
        CaseCheck *cc = &c->checks[c->nchecks++];
        memset(cc, 0, sizeof *cc);
        cc->buf = cs->buffer;
        cc->rtol = check_rtol(s, cs, &elem_types[c->bufs[cs->buffer].type]);
        int bad = 0;
        if (cs->kind == CHECK_REFERENCE)
            snprintf(cc->ref, sizeof cc->ref, "reference");
        else if (cs->kind == CHECK_BUFFER)
            bad = check_buffer(cs, c, cc, err);
        else if (cs->ref->kind == EX_CALL && expr_is_reference(cs->ref->name))
            bad = check_call(pe, cs, c, cc, err);
        else
            bad = check_constant(pe, cs, c, cc, err);
        if (bad || check_shape(cs, c, cc, err))
            return -1;
    }
    if (!(s->differential && rc->have_baseline && !rc->is_baseline))
        return 0;
    /* Against the baseline with each buffer's own order and length. */
    for (int k = 0; k < s->nchecks && c->nchecks < CASE_MAX_BUFS; k++) {
        int b = s->checks[k].buffer;
        CaseCheck *cc = &c->checks[c->nchecks++];
        memset(cc, 0, sizeof *cc);
        cc->buf = b;
        check_shape(&s->checks[k], c, cc, err);
        snprintf(cc->ref, sizeof cc->ref, "baseline");
        const ElemType *t = &elem_types[c->bufs[b].type];
        cc->rtol = s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
    }
    return 0;
}

/* ---- the reference ---------------------------------------------------------------------- */

/* A point reference runs at another point: its buffers must be the variant's
 * (same types, counts and inputs); only their layout may differ. */
static int same_buffers(const CaseDesc *c, const CaseDesc *at, const SrcPos *pos, KvxError *err)
{
    for (int b = 0; b < c->nbufs; b++) {
        const CaseBuf *x = &c->bufs[b], *y = &at->bufs[b];
        if (x->type == y->type && x->count == y->count && strcmp(x->input_key, y->input_key) == 0)
            continue;
        kvx_error_set(err, KVX_EINPUT, pos, "buffer '%s' is %llu x %s here but %llu x %s%s at the "
                      "reference point (expected the same buffers and inputs)", x->name,
                      (unsigned long long)x->count, elem_types[x->type].name,
                      (unsigned long long)y->count, elem_types[y->type].name,
                      x->type == y->type && x->count == y->count ? " with other contents" : "");
        return -1;
    }
    return 0;
}

/* What makes two reference runs give the same outputs. */
static void reference_key(const Source *src, const CaseDesc *c, CaseRef *r)
{
    Sha256 h;
    sha256_init(&h);
    sha256_update(&h, src->hash, 64);
    sha256_update(&h, r->kernel, strlen(r->kernel) + 1);
    sha256_update(&h, r->grid, sizeof r->grid);
    sha256_update(&h, r->block, sizeof r->block);
    sha256_update(&h, r->cluster, sizeof r->cluster);
    sha256_update(&h, &r->smem, sizeof r->smem);
    for (int i = 0; i < r->nargs; i++) {
        sha256_update(&h, &r->args[i].buf, sizeof r->args[i].buf);
        sha256_update(&h, r->args[i].bytes, (size_t)r->args[i].size);
    }
    for (int b = 0; b < c->nbufs; b++) {
        sha256_update(&h, c->bufs[b].input_key, 64);
        sha256_update(&h, &r->offset[b], sizeof r->offset[b]);
        sha256_update(&h, &c->bufs[b].checked, sizeof c->bufs[b].checked);
    }
    uint8_t d[32];
    sha256_final(&h, d);
    for (int i = 0; i < 32; i++)
        snprintf(r->key + 2 * i, 3, "%02x", d[i]);
}

/* The reference kernel's launch at its point (pe's), against its source's
 * parameters or its PTX's, and its key.  0 or -1 with err. */
static int reference_launch(PointEnv *pe, const ResolveCase *rc, const Source *src, CaseDesc *c, KvxError *err)
{
    const Spec *s = pe->spec;
    const ReferenceSpec *rs = &s->reference;
    CaseRef *r = &c->ref;
    snprintf(r->kernel, sizeof r->kernel, "%s", rs->kernel ? rs->kernel : s->kernel);
    snprintf(r->cubin_path, sizeof r->cubin_path, "%s", rc->ref_cubin_path ? rc->ref_cubin_path : "");
    const LaunchSpec *l = rs->has_launch ? &rs->launch : &s->launches[0];
    ResolveKernel k = {r->kernel, src->text, rc->ref_ptx};
    LaunchOut o = {r->grid, r->block, r->cluster, &r->smem, r->args, &r->nargs};
    if (resolve_launch(pe, l, &k, &o, err))
        return -1;
    reference_key(src, c, r);
    return 0;
}

static int resolve_reference(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, KvxError *err)
{
    const Spec *s = rv->p->spec;
    const ReferenceSpec *rs = &s->reference;
    int at;
    const Source *src = plan_ref_source(rv->p, rv->ref, rc->point, &at);
    if (!src)
        return 0;
    CaseRef *r = &c->ref;
    r->present = 1;
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, s, plan_point(rv->p, at), &rv->p->facts, a);
    CaseDesc *there = at != rc->point ? mem_calloc(1, sizeof *there) : NULL;
    int rcode = -1;
    if (there && (resolve_buffers(&pe, rv->m, 1, there, err) || same_buffers(c, there, &rs->pos, err)))
        goto done;
    for (int b = 0; b < c->nbufs; b++)
        r->offset[b] = there ? there->bufs[b].offset : c->bufs[b].offset;
    rcode = reference_launch(&pe, rc, src, c, err);
done:
    free(there);
    arena_free(a);
    return rcode;
}

/* " (at strategy=naive n=16777216)" after err's message. */
static void name_point(const Plan *p, int point, KvxError *err)
{
    char *label = plan_point_label(p, point, ~0ULL);
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " (at %s)", label);
    free(label);
}

/* ---- metrics --------------------------------------------------------------------------- */

/* The outputs a metric reads, as a mask of buffers; with c, each must be a
 * one-element buffer at c's point. */
typedef struct OutputNames {
    const Spec *s;
    const CaseDesc *c;      /* NULL: only collect */
    uint32_t mask;
    int failed;
    KvxError *err;
} OutputNames;

static void output_name(void *ctx, const Expr *id)
{
    OutputNames *on = ctx;
    int b = spec_buffer_find(on->s, id->name);
    if (b < 0 || on->failed)
        return;
    on->mask |= 1u << b;
    if (!on->c || on->c->bufs[b].count == 1)
        return;
    kvx_error_set(on->err, KVX_EINPUT, &id->pos, "metric reads '%s', which is %llu x %s (expected "
                  "a scalar output: one element)", id->name,
                  (unsigned long long)on->c->bufs[b].count, elem_types[on->c->bufs[b].type].name);
    on->failed = 1;
}

/* The outputs e reads (a mask), or -1 with err when one is not a scalar in c. */
static int64_t outputs_read(const Spec *s, const Expr *e, const CaseDesc *c, KvxError *err)
{
    OutputNames on = {s, c, 0, 0, err};
    if (e)
        expr_visit_idents(e, output_name, &on);
    return on.failed ? -1 : (int64_t)on.mask;
}

int resolve_metrics_read_outputs(const Spec *s)
{
    const Expr *mx[3] = {s->metrics.bytes, s->metrics.atomics, s->metrics.elements};
    for (int i = 0; i < 3; i++)
        if (outputs_read(s, mx[i], NULL, NULL) > 0)
            return 1;
    return 0;
}

/* ExprEnv over a point with its scalar outputs bound to their values. */
typedef struct OutputEnv {
    PointEnv *pe;
    const CaseResult *res;
} OutputEnv;

static int output_lookup(void *ctx, const char *name, Value *out, KvxError *err)
{
    OutputEnv *oe = ctx;
    int b = spec_buffer_find(oe->pe->spec, name);
    if (b < 0)
        return oe->pe->env.lookup(oe->pe->env.ctx, name, out, err);
    double v = oe->res->out_value[b];
    *out = fabs(v) < 0x1p62 && v == (double)(int64_t)v ? val_int((int64_t)v) : val_float(v);
    return 1;
}

/* A metric: NaN when it reads an output that res does not hold (res NULL:
 * at resolve time, before any launch).  0 or -1 with err. */
static int eval_metric(PointEnv *pe, const Expr *e, const CaseResult *res, double *out, KvxError *err)
{
    int64_t mask = outputs_read(pe->spec, e, NULL, NULL);
    if (mask == 0)
        return eval_double(pe, e, NAN, out, err);
    *out = NAN;
    if (!res || ((uint32_t)mask & res->out_known) != (uint32_t)mask)
        return 0;
    OutputEnv oe = {pe, res};
    ExprEnv env = {output_lookup, &oe, pe->arena};
    Value v;
    if (expr_eval(e, &env, &v, err))
        return -1;
    if (!val_is_num(v)) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a number, got '%s'", val_text(pe->arena, v));
        return -1;
    }
    *out = val_num(v);
    return 0;
}

/* The metrics of c's point; res NULL at resolve time, when only their
 * outputs are checked to be scalars. */
static int eval_metrics(PointEnv *pe, const CaseDesc *c, const CaseResult *res, double metrics[3],
                        KvxError *err)
{
    const Spec *s = pe->spec;
    const Expr *mx[3] = {s->metrics.bytes, s->metrics.atomics, s->metrics.elements};
    for (int i = 0; i < 3; i++)
        if ((c && outputs_read(s, mx[i], c, err) < 0) || eval_metric(pe, mx[i], res, &metrics[i], err))
            return -1;
    return 0;
}

int resolve_metrics(const Plan *p, int point, const CaseResult *res, double metrics[3], KvxError *err)
{
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, p->spec, plan_point(p, point), &p->facts, a);
    int rc = eval_metrics(&pe, NULL, res, metrics, err);
    if (rc)
        name_point(p, point, err);
    arena_free(a);
    return rc;
}

/* ---- a case ---------------------------------------------------------------------------- */

/* Whether launch l runs at pe's point (its when:).  0 or -1 with err. */
static int launch_runs(PointEnv *pe, const LaunchSpec *l, int *runs, KvxError *err)
{
    *runs = 1;
    if (!l->when)
        return 0;
    Value v;
    if (plan_point_eval(pe, l->when, &v, err))
        return -1;
    if (v.kind != VAL_BOOL) {
        kvx_error_set(err, KVX_EINPUT, &l->when->pos, "when is '%s' (expected true or false)",
                      val_text(pe->arena, v));
        return -1;
    }
    *runs = (int)v.i;
    return 0;
}

/* The launches whose when: holds, in order: the first into c's own fields,
 * the rest into c->next, each against its kernel's parameters in the
 * variant's source (its PTX once compiled).  0 or -1 with err. */
static int resolve_launches(PointEnv *pe, const char *source, const char *ptx, CaseDesc *c, KvxError *err)
{
    const Spec *s = pe->spec;
    int n = 0;
    for (int i = 0; i < s->nlaunches; i++) {
        const LaunchSpec *l = &s->launches[i];
        int runs;
        if (launch_runs(pe, l, &runs, err))
            return -1;
        if (!runs)
            continue;
        CaseKernel *k = n ? &c->next[n - 1] : NULL;
        const char *name = l->kernel ? l->kernel : s->kernel;
        LaunchOut o = k ? (LaunchOut){k->grid, k->block, k->cluster, &k->smem, k->args, &k->nargs}
                        : (LaunchOut){c->grid, c->block, c->cluster, &c->smem, c->args, &c->nargs};
        snprintf(k ? k->kernel : c->kernel, sizeof c->kernel, "%s", name);
        ResolveKernel rk = {name, source, ptx};
        if (resolve_launch(pe, l, &rk, &o, err))
            return -1;
        n++;
    }
    if (n == 0) {
        kvx_error_set(err, KVX_EINPUT, &s->launches[0].pos, "no launch runs here: every launch's when "
                      "is false (expected at least one launch at each point)");
        return -1;
    }
    c->nnext = n - 1;
    return 0;
}

/* Whether the variants compare with the baseline's outputs: differential
 * mode, or a check against baseline() (the same for every case).  A
 * baseline case keeps them on the device only then: a copy and an allocation
 * of a 256 MB output cost 0.4 ms a case on an H200. */
static int baseline_compared(const Spec *s, const CaseDesc *c)
{
    int any = s->differential;
    for (int i = 0; i < c->nchecks; i++)
        any |= strcmp(c->checks[i].ref, "baseline") == 0;
    return any;
}

/* name with the suffix a grouped program's CUBIN gives it (compile/jit.h
 * JitJob.symbol), in place; kept whole or -1 when it does not fit. */
static int add_symbol(char *name, size_t cap, const char *symbol)
{
    size_t n = strlen(name), k = symbol ? strlen(symbol) : 0;
    if (n + k >= cap)
        return -1;
    memcpy(name + n, symbol, k + 1);
    return 0;
}

/* The entry points' names as the CUBINs call them: where a variant (or the
 * reference) was a member of a grouped program, K is K__kvxI there; what
 * the spec and the PTX call K stays K everywhere else (keys, messages). */
static int apply_symbols(const ResolveCase *rc, CaseDesc *c, KvxError *err)
{
    int bad = 0;
    if (rc->symbol && rc->symbol[0]) {
        bad |= add_symbol(c->kernel, sizeof c->kernel, rc->symbol);
        for (int i = 0; i < c->nnext; i++)
            bad |= add_symbol(c->next[i].kernel, sizeof c->next[i].kernel, rc->symbol);
    }
    if (c->ref.present && rc->ref_symbol && rc->ref_symbol[0])
        bad |= add_symbol(c->ref.kernel, sizeof c->ref.kernel, rc->ref_symbol);
    if (bad)
        kvx_error_set(err, KVX_EINPUT, NULL, "a kernel's name with its program's suffix (%s) passes %zu "
                      "bytes", rc->symbol ? rc->symbol : "", sizeof c->kernel - 1);
    return bad ? -1 : 0;
}

int resolve_case(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, double metrics[3],
                 KvxError *err)
{
    const Spec *s = rv->p->spec;
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, s, plan_point(rv->p, rc->point), &rv->p->facts, a);
    memset(c, 0, sizeof *c);
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s", rc->cubin_path ? rc->cubin_path : "");
    c->measure = *rv->m;
    snprintf(c->workload_key, sizeof c->workload_key, "%s", rc->workload_key ? rc->workload_key : "");
    const char *source = rv->p->srcs[rv->p->point_src[rc->point]].text;
    int rcode = -1;
    int keys = !rv->checks_only || rv->ref->kind != PLAN_REF_NONE;
    if (resolve_buffers(&pe, rv->m, keys, c, err) || resolve_launches(&pe, source, rc->ptx, c, err) ||
        resolve_checks(&pe, rc, c, err) || resolve_reference(rv, rc, c, err))
        goto done;
    if (eval_metrics(&pe, c, NULL, metrics, err) || apply_symbols(rc, c, err))
        goto done;
    c->is_baseline = rc->is_baseline && baseline_compared(s, c);
    rcode = 0;
done:
    if (rcode)
        name_point(rv->p, rc->point, err);
    arena_free(a);
    return rcode;
}

/* The reference kernel's launch of a resolved c (present) again, at its
 * point, against rc's PTX.  0 or -1 with err. */
static int bind_reference(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, KvxError *err)
{
    int at;
    const Source *src = plan_ref_source(rv->p, rv->ref, rc->point, &at);
    KVX_ASSERT(src);
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, rv->p->spec, plan_point(rv->p, at), &rv->p->facts, a);
    int rcode = reference_launch(&pe, rc, src, c, err);
    arena_free(a);
    return rcode;
}

int resolve_bind(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, KvxError *err)
{
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, rv->p->spec, plan_point(rv->p, rc->point), &rv->p->facts, a);
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s", rc->cubin_path ? rc->cubin_path : "");
    const char *source = rv->p->srcs[rv->p->point_src[rc->point]].text;
    int rcode = 0;
    if (resolve_launches(&pe, source, rc->ptx, c, err) || (c->ref.present && bind_reference(rv, rc, c, err)) ||
        apply_symbols(rc, c, err)) {
        name_point(rv->p, rc->point, err);
        rcode = -1;
    }
    arena_free(a);
    return rcode;
}

/* ---- a whole plan ------------------------------------------------------------------------ */

int resolve_baseline_exists(const Plan *p, KvxError *err)
{
    const Spec *s = p->spec;
    if (s->nbaseline == 0)
        return 0;
    for (int i = 0; i < p->npoints; i++) {
        const int *v = plan_point(p, i);
        int all = 1;
        for (int k = 0; k < s->nbaseline && all; k++)
            all = v[s->baseline[k].axis] == s->baseline[k].value;
        if (all)
            return 0;
    }
    const BaselineEntry *b = &s->baseline[0];
    kvx_error_set(err, KVX_EINPUT, &s->axes[b->axis].vals[b->value].pos, "the baseline matches no "
                  "point: where: prunes every point with %s=%s", s->axes[b->axis].name,
                  s->axes[b->axis].vals[b->value].text);
    return -1;
}

int resolve_plan(const Plan *p, const PlanRef *ref, const unsigned char *sel, KvxError *err)
{
    if (resolve_baseline_exists(p, err))
        return -1;
    Resolver rv = {p, ref, &p->spec->measure, 1};
    CaseDesc *c = mem_alloc(sizeof *c);
    int rc = 0;
    for (int i = 0; i < p->npoints && rc == 0; i++) {
        if (sel && !sel[i])
            continue;
        ResolveCase rcs = {.point = i};
        double metrics[3];
        rc = resolve_case(&rv, &rcs, c, metrics, err);
    }
    free(c);
    return rc;
}
