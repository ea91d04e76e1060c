/* run_resolve: one case of `kvx run` resolved in the parent into a
 * self-contained CaseDesc for a worker: the spec's buffers, launch and checks
 * evaluated at the case's point, its arguments matched against the compiled
 * kernel's PTX parameters.  Anything that cannot be resolved is an error naming
 * the spec position; the case is then stored as skipped, and the run goes on. */
#include "run_internal.h"

#include <math.h>
#include <string.h>

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
    const SetEntry *se = point_set_var(pe, b->type + 1);
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
    if (point_eval(pe, e, &v, err))
        return -1;
    if (!val_is_num(v)) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a number, got '%s'", val_text(pe->arena, v));
        return -1;
    }
    *out = val_num(v);
    return 0;
}

static int eval_dim(PointEnv *pe, const Expr *e, uint32_t *out, const char *what, KvxError *err)
{
    int64_t v = 1;
    if (e && point_eval_int(pe, e, &v, err))
        return -1;
    if (v < 1 || v > 0x7fffffff) {
        kvx_error_set(err, KVX_EINPUT, e ? &e->pos : NULL, "%s is %lld (expected 1 .. 2^31-1)", what,
                      (long long)v);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

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

int run_resolve_case(const Plan *p, int point, const JitJob *job, const RunCase *rc,
                     const MeasureSettings *m, int have_baseline, CaseDesc *c, double metrics[3],
                     KvxError *err)
{
    const Spec *s = p->spec;
    Arena *a = arena_new();
    PointEnv pe;
    point_env_init(&pe, s, plan_point(p, point), &p->facts, a);
    memset(c, 0, sizeof *c);
    int ok = -1;
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s/kernel.cubin", job->dir);
    snprintf(c->kernel, sizeof c->kernel, "%s", s->kernel);
    c->measure = *m;
    memcpy(c->workload_key, rc->workload_key, 65);
    c->is_baseline = rc->is_baseline;

    if (s->nbufs > CASE_MAX_BUFS) {
        kvx_error_set(err, KVX_EINPUT, &s->bufs[CASE_MAX_BUFS].pos, "more than %d buffers", CASE_MAX_BUFS);
        goto done;
    }
    c->nbufs = s->nbufs;
    for (int b = 0; b < s->nbufs; b++) {
        const BufferSpec *bs = &s->bufs[b];
        CaseBuf *cb = &c->bufs[b];
        snprintf(cb->name, sizeof cb->name, "%s", bs->name);
        const ElemType *t = buffer_type(&pe, bs);
        if (!t) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has no element type at this point",
                          bs->name);
            goto done;
        }
        cb->type = t->id;
        int64_t count, offset = 0;
        if (point_eval_int(&pe, bs->count, &count, err) || (bs->offset && point_eval_int(&pe, bs->offset,
                                                                                        &offset, err)))
            goto done;
        if (count < 1 || offset < 0) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has count %lld and offset %lld "
                          "(expected count >= 1, offset >= 0)", bs->name, (long long)count, (long long)offset);
            goto done;
        }
        cb->count = (uint64_t)count;
        cb->offset = (uint64_t)offset;
        const InitSpec *in = spec_init_at(&bs->init, pe.vals);
        InitParams *ip = &cb->init;
        ip->kind = in->kind;
        double len = 1;
        if (eval_double(&pe, in->value, 0, &ip->value, err) || eval_double(&pe, in->lo, 0, &ip->lo, err) ||
            eval_double(&pe, in->hi, 0, &ip->hi, err) ||
            eval_double(&pe, in->exponent, 1, &ip->exponent, err) ||
            eval_double(&pe, in->fraction, 0, &ip->fraction, err) || eval_double(&pe, in->length, 1, &len, err))
            goto done;
        ip->length = (int64_t)len;
        /* Integers exactly as written (a double rounds above 2^53). */
        const Expr *ix[3] = {in->value, in->lo, in->hi};
        int64_t *iv[3] = {&ip->ivalue, &ip->ilo, &ip->ihi};
        for (int q = 0; q < 3; q++) {
            Value xv;
            if (ix[q] && point_eval(&pe, ix[q], &xv, err) == 0 && xv.kind == VAL_INT) {
                *iv[q] = xv.i;
                ip->exact |= 1u << q;
            }
        }
        ip->seed = name_seed(m->seed, bs->name);
        inputs_key(t, cb->count, ip, cb->input_key);
        cb->checked = bs->checked;
    }

    const LaunchSpec *l = &s->launch;
    for (int d = 0; d < 3; d++) {
        static const char *gn[] = {"grid.x", "grid.y", "grid.z"}, *bn[] = {"block.x", "block.y", "block.z"},
                          *cn[] = {"cluster.x", "cluster.y", "cluster.z"};
        if (eval_dim(&pe, l->grid[d], &c->grid[d], gn[d], err) ||
            eval_dim(&pe, l->block[d], &c->block[d], bn[d], err) ||
            eval_dim(&pe, l->cluster[d], &c->cluster[d], cn[d], err))
            goto done;
    }
    int64_t smem = 0;
    if (l->smem && point_eval_int(&pe, l->smem, &smem, err))
        goto done;
    if (smem < 0 || smem > 0x7fffffff) {
        kvx_error_set(err, KVX_EINPUT, &l->smem->pos, "smem is %lld bytes", (long long)smem);
        goto done;
    }
    c->smem = (uint32_t)smem;

    PtxParam params[CASE_MAX_ARGS];
    int np = jit_ptx_params(job->ptx, s->kernel, params, CASE_MAX_ARGS);
    if (np < 0) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "the PTX has no entry point '%s' (is it extern \"C\"?)",
                      s->kernel);
        goto done;
    }
    if (np != l->nargs) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "kernel '%s' takes %d parameters but launch.args gives %d",
                      s->kernel, np, l->nargs);
        goto done;
    }
    c->nargs = l->nargs;
    for (int i = 0; i < l->nargs; i++) {
        const Expr *e = l->args[i];
        CaseArg *ca = &c->args[i];
        if (e->kind == EX_IDENT && spec_buffer_find(s, e->name) >= 0) {
            if (params[i].size != 8) {
                kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is buffer '%s' but the kernel's "
                              "parameter %d is %d bytes (expected a pointer)", i + 1, e->name, i + 1,
                              params[i].size);
                goto done;
            }
            ca->buf = spec_buffer_find(s, e->name);
            ca->size = 8;
            ca->align = 8;
            continue;
        }
        Value v;
        if (point_eval(&pe, e, &v, err))
            goto done;
        if (!val_is_num(v) && v.kind != VAL_BOOL) {
            kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is '%s' (expected a number or a buffer)",
                          i + 1, val_text(a, v));
            goto done;
        }
        if (params[i].size > 8) {
            kvx_error_set(err, KVX_EINPUT, &e->pos, "kernel parameter %d is a %d-byte aggregate (kvx "
                          "passes scalars and pointers)", i + 1, params[i].size);
            goto done;
        }
        put_scalar(ca, &params[i], v);
    }

    for (int k = 0; k < s->nchecks; k++) {
        const CheckSpec *cs = &s->checks[k];
        CaseCheck *cc = &c->checks[c->nchecks++];
        const ElemType *t = &elem_types[c->bufs[cs->buffer].type];
        cc->buf = cs->buffer;
        cc->rtol = cs->rtol >= 0 ? cs->rtol : s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
        const Expr *r = cs->ref;
        if (r->kind == EX_CALL && expr_is_reference(r->name)) {
            snprintf(cc->ref, sizeof cc->ref, "%s", r->name);
            if (r->nargs > CASE_MAX_REFARGS) {
                kvx_error_set(err, KVX_EINPUT, &r->pos, "too many reference arguments");
                goto done;
            }
            cc->nargs = r->nargs;
            for (int j = 0; j < r->nargs; j++) {
                const Expr *x = r->args[j];
                cc->argbuf[j] = -1;
                if (x->kind == EX_IDENT && spec_buffer_find(s, x->name) >= 0) {
                    int bi = spec_buffer_find(s, x->name);
                    cc->argbuf[j] = bi;
                    cc->args[j].is_buf = 1;
                    cc->args[j].t = &elem_types[c->bufs[bi].type];
                    cc->args[j].count = c->bufs[bi].count;
                    continue;
                }
                Value v;
                if (point_eval(&pe, x, &v, err))
                    goto done;
                if (v.kind == VAL_STR) {
                    snprintf(cc->strs[j], sizeof cc->strs[j], "%s", v.s);
                    v.s = cc->strs[j];
                }
                cc->args[j].v = v;
            }
        } else {
            Value v;
            if (point_eval(&pe, r, &v, err))
                goto done;
            cc->constant = v;
        }
    }
    if (s->differential && have_baseline && !rc->is_baseline) {
        for (int b = 0; b < s->nbufs && c->nchecks < CASE_MAX_BUFS; b++) {
            if (!s->bufs[b].checked)
                continue;
            CaseCheck *cc = &c->checks[c->nchecks++];
            const ElemType *t = &elem_types[c->bufs[b].type];
            cc->buf = b;
            snprintf(cc->ref, sizeof cc->ref, "baseline");
            cc->rtol = s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
        }
    }

    const Expr *mx[3] = {s->metrics.bytes, s->metrics.atomics, s->metrics.elements};
    for (int k = 0; k < 3; k++)
        if (eval_double(&pe, mx[k], NAN, &metrics[k], err))
            goto done;
    ok = 0;
done:
    arena_free(a);
    return ok;
}
