/* plan_ref: the reference of every point of a plan (a spec's `reference:`).
 *
 * A reference given as a point of the code axes maps each point to the point
 * with those axes set: its variant's source is the reference's, and the point
 * must survive `where:`.  A reference kernel in a template of its own is
 * emitted at every point like the variants (the same spec, its template and
 * kernel swapped in), so its sources are found and shared the same way: one
 * per distinct text, compiled once.  A reference kernel in the spec's own
 * template lives in each variant's source. */
#ifndef KVX_PLAN_REF_H
#define KVX_PLAN_REF_H

#include "plan.h"

typedef enum {
    PLAN_REF_NONE,      /* no reference: section */
    PLAN_REF_POINT,     /* point[i]: the point whose variant is point i's reference */
    PLAN_REF_OWN,       /* a kernel in the spec's template: each variant's own source */
    PLAN_REF_TEMPLATE   /* a kernel in its own template: sub's sources */
} PlanRefKind;

typedef struct PlanRef {
    PlanRefKind kind;
    int *point;         /* PLAN_REF_POINT: npoints entries */
    Spec *sub_spec;     /* PLAN_REF_TEMPLATE: a shallow copy of the spec (its arena is the spec's) */
    Plan sub;           /* PLAN_REF_TEMPLATE: sub.point_src[i] is point i's reference source */
} PlanRef;

/* Build p's references.  0, or -1 with err at the spec's reference: (a point
 * reference whose target where: prunes, an axis that changes no code, a
 * template that fails to emit). */
int plan_ref_build(const Plan *p, PlanRef *r, KvxError *err);
void plan_ref_free(PlanRef *r);    /* accepts a zeroed PlanRef */

/* The source of point i's reference (in p's table or r->sub's), and in *at
 * the point whose launch and buffers it runs with: r->point[i] for a point
 * reference, i otherwise.  NULL when the spec has no reference. */
const Source *plan_ref_source(const Plan *p, const PlanRef *r, int i, int *at);

/* One numbering for the sources a run compiles: p's (0 .. p->nsrcs) and a
 * reference template's after them (p->nsrcs + its index). */
int plan_ref_nsources(const Plan *p, const PlanRef *r);
const Source *plan_ref_source_at(const Plan *p, const PlanRef *r, int k);
/* The source of point's reference in that numbering; -1 without a reference. */
int plan_ref_src(const Plan *p, const PlanRef *r, int point);
/* Which sources of that numbering the points of sel use, as variants or
 * references: a malloc'd 0/1 array of plan_ref_nsources entries. */
unsigned char *plan_ref_used(const Plan *p, const PlanRef *r, const unsigned char *sel);

#endif
