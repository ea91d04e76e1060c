/* plan_ref: each point's reference (plan_ref.h).  Point references are found
 * through a hash table of the points' value vectors: O(points), so that plan
 * stays fast on large grids. */
#include "plan_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct PointTable {
    const Plan *p;
    int *slot;          /* point index + 1; 0 = empty */
    uint64_t mask;      /* slots - 1 */
} PointTable;

static uint64_t vals_hash(const int *v, int n)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(unsigned)v[i]) * 1099511628211ULL;
    return h;
}

static void table_init(PointTable *t, const Plan *p)
{
    uint64_t n = 16;
    while (n < 2 * (uint64_t)p->npoints)
        n <<= 1;
    t->p = p;
    t->mask = n - 1;
    t->slot = mem_calloc(n, sizeof *t->slot);
    int na = p->spec->naxes;
    for (int i = 0; i < p->npoints; i++) {
        uint64_t h = vals_hash(plan_point(p, i), na) & t->mask;
        while (t->slot[h])
            h = (h + 1) & t->mask;
        t->slot[h] = i + 1;
    }
}

/* The point with value indices v, or -1. */
static int table_find(const PointTable *t, const int *v)
{
    int na = t->p->spec->naxes;
    for (uint64_t h = vals_hash(v, na) & t->mask; t->slot[h]; h = (h + 1) & t->mask)
        if (memcmp(plan_point(t->p, t->slot[h] - 1), v, sizeof(int) * (size_t)na) == 0)
            return t->slot[h] - 1;
    return -1;
}

static int point_refs(const Plan *p, PlanRef *r, KvxError *err)
{
    const Spec *s = p->spec;
    const ReferenceSpec *rs = &s->reference;
    for (int k = 0; k < rs->npoint; k++)
        if (!(p->code_axes >> rs->point[k].axis & 1)) {
            kvx_error_set(err, KVX_EINPUT, &rs->pos, "reference axis '%s' changes no code (a "
                          "workload axis): the reference must run on the variant's own inputs",
                          s->axes[rs->point[k].axis].name);
            return -1;
        }
    PointTable t;
    table_init(&t, p);
    r->point = mem_alloc(sizeof(int) * (size_t)(p->npoints ? p->npoints : 1));
    int *v = mem_alloc(sizeof(int) * (size_t)(s->naxes ? s->naxes : 1));
    int rc = 0;
    for (int i = 0; i < p->npoints && rc == 0; i++) {
        memcpy(v, plan_point(p, i), sizeof(int) * (size_t)s->naxes);
        for (int k = 0; k < rs->npoint; k++)
            v[rs->point[k].axis] = rs->point[k].value;
        if ((r->point[i] = table_find(&t, v)) >= 0)
            continue;
        char *label = plan_point_label(p, i, ~0ULL);
        kvx_error_set(err, KVX_EINPUT, &rs->pos, "the reference of point %s is pruned by where: "
                      "(expected every variant's reference point to be in the plan)", label);
        free(label);
        rc = -1;
    }
    free(v);
    free(t.slot);
    return rc;
}

int plan_ref_build(const Plan *p, PlanRef *r, KvxError *err)
{
    const ReferenceSpec *rs = &p->spec->reference;
    memset(r, 0, sizeof *r);
    if (!rs->present)
        return 0;
    if (rs->npoint > 0) {
        r->kind = PLAN_REF_POINT;
        return point_refs(p, r, err);
    }
    if (!rs->template_path) {
        r->kind = PLAN_REF_OWN;
        return 0;
    }
    r->kind = PLAN_REF_TEMPLATE;
    r->sub_spec = mem_alloc(sizeof *r->sub_spec);
    *r->sub_spec = *p->spec;
    r->sub_spec->template_path = rs->template_path;
    r->sub_spec->kernel = rs->kernel;
    if (plan_build(r->sub_spec, &p->facts, &r->sub, err) == 0) {
        /* Named apart from the variants' sources, which may share code axes. */
        for (int k = 0; k < r->sub.nsrcs; k++) {
            char *f = r->sub.srcs[k].file, *named = mem_alloc(strlen(f) + 16);
            sprintf(named, "reference__%s", f);
            free(f);
            r->sub.srcs[k].file = named;
        }
        return 0;
    }
    free(r->sub_spec);
    r->sub_spec = NULL;
    return -1;
}

void plan_ref_free(PlanRef *r)
{
    if (!r)
        return;
    free(r->point);
    if (r->sub_spec)
        plan_free(&r->sub);
    free(r->sub_spec);
    memset(r, 0, sizeof *r);
}

const Source *plan_ref_source(const Plan *p, const PlanRef *r, int i, int *at)
{
    *at = i;
    switch (r->kind) {
    case PLAN_REF_NONE: return NULL;
    case PLAN_REF_POINT: *at = r->point[i]; return &p->srcs[p->point_src[r->point[i]]];
    case PLAN_REF_OWN: return &p->srcs[p->point_src[i]];
    case PLAN_REF_TEMPLATE: return &r->sub.srcs[r->sub.point_src[i]];
    }
    return NULL;
}

int plan_ref_nsources(const Plan *p, const PlanRef *r)
{
    return p->nsrcs + (r->kind == PLAN_REF_TEMPLATE ? r->sub.nsrcs : 0);
}

const Source *plan_ref_source_at(const Plan *p, const PlanRef *r, int k)
{
    return k < p->nsrcs ? &p->srcs[k] : &r->sub.srcs[k - p->nsrcs];
}

int plan_ref_src(const Plan *p, const PlanRef *r, int point)
{
    switch (r->kind) {
    case PLAN_REF_NONE: return -1;
    case PLAN_REF_POINT: return p->point_src[r->point[point]];
    case PLAN_REF_OWN: return p->point_src[point];
    case PLAN_REF_TEMPLATE: return p->nsrcs + r->sub.point_src[point];
    }
    return -1;
}

unsigned char *plan_ref_used(const Plan *p, const PlanRef *r, const unsigned char *sel)
{
    int n = plan_ref_nsources(p, r);
    unsigned char *used = mem_calloc((size_t)(n ? n : 1), 1);
    for (int i = 0; i < p->npoints; i++) {
        if (!sel[i])
            continue;
        used[p->point_src[i]] = 1;
        int k = plan_ref_src(p, r, i);
        if (k >= 0)
            used[k] = 1;
    }
    return used;
}
