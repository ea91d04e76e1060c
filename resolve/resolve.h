/* resolve: one point of a plan made concrete, with no CUDA: its buffers and
 * their inputs, launch geometry, kernel arguments, checks, metrics and
 * reference evaluated into the CaseDesc a worker runs, and checked against
 * the target's limits and the kernel's parameters.
 *
 * `kvx plan`, `compile` and `run` all resolve every point through here, so a
 * spec that plans runs: plan knows the kernel's parameters from the emitted
 * source (count, and which are pointers), compile and run from the PTX
 * (widths and kinds too).  Errors name the spec position and the point. */
#ifndef KVX_RESOLVE_H
#define KVX_RESOLVE_H

#include "host/case.h"
#include "compile/jit.h"
#include "gen/plan_ref.h"

typedef struct Resolver {
    const Plan *p;
    const PlanRef *ref;
    const MeasureSettings *m;
    int checks_only;            /* validating (resolve_plan): skip the input keys,
                                   which only a worker and a reference key need */
} Resolver;

/* What the parent knows of a case beyond its point.  The PTX and cubin are
 * the compiled variant's and reference's; NULL before compiling (plan), when
 * parameters are read from the emitted source instead. */
typedef struct ResolveCase {
    int point;
    const char *ptx, *cubin_path;
    const char *ref_ptx, *ref_cubin_path;
    /* what the entry points carry in the CUBINs (JitJob.symbol: a grouped
     * program's member); NULL or "": their own names */
    const char *symbol, *ref_symbol;
    const char *workload_key;   /* NULL: "" */
    int is_baseline, have_baseline;
} ResolveCase;

/* Resolve rc into c and metrics[3] (bytes, atomics, elements; NaN when the
 * spec gives none).  0, or -1 with err at the spec position, its message
 * ending in the point's axis values. */
int resolve_case(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, double metrics[3],
                 KvxError *err);

/* c, resolved by resolve_case before its kernels were compiled (rc->ptx and
 * rc->ref_ptx NULL then), bound to them: its launches, and its reference
 * kernel's, evaluated again against the parameters their PTX declares
 * (widths, kinds, ranges), with their CUBINs' paths and the names they
 * have there (rc's cubin paths and symbols).  Nothing else of c changes:
 * buffers, checks, metrics and input keys stay as resolved; the reference
 * key is taken again from the bound arguments.  0, or -1 with err at the
 * spec position, its message ending in the point's axis values. */
int resolve_bind(const Resolver *rv, const ResolveCase *rc, CaseDesc *c, KvxError *err);

/* 0, or -1 with err when s's baseline names no point of p (where: pruned
 * them all); resolve_plan checks it first. */
int resolve_baseline_exists(const Plan *p, KvxError *err);

/* 1 when a metric of s reads a scalar output (docs/spec.md, Metrics): its
 * value is known only from the case's result, and resolve_case gives NaN. */
int resolve_metrics_read_outputs(const Spec *s);

/* The metrics of point with its scalar outputs bound to res's values
 * (CaseResult.out_value); a metric reading one that res does not hold is NaN.
 * 0, or -1 with err (a metric that fails to evaluate, naming the point). */
int resolve_metrics(const Plan *p, int point, const CaseResult *res, double metrics[3], KvxError *err);

/* Resolve every selected point (sel NULL: all) against the plan's facts,
 * kernels taken from the emitted sources: what `kvx plan` validates.  Also
 * checks that the baseline names a point.  0, or -1 with err at the first
 * failure. */
int resolve_plan(const Plan *p, const PlanRef *ref, const unsigned char *sel, KvxError *err);

#endif
