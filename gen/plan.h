/* plan: a spec expanded into points, and points into distinct sources.
 *
 * A point assigns one value to every axis (zip groups advance together), in
 * declaration order with the last axis fastest, and satisfies every `where:`.
 * Emitting a point's source records which axes the template consulted (directly,
 * through `set:` variables or through `let:` names): those are the point's code
 * axes, and points that agree on them share one source, compiled once.  The
 * other axes are workload axes.  Output is deterministic. */
#ifndef KVX_PLAN_H
#define KVX_PLAN_H

#include "spec.h"

/* Limits of the template engine (docs/spec.md, Limits). */
#define PLAN_MAX_TEMPLATE_BYTES (4u << 20)    /* one template or included file */
#define PLAN_MAX_INCLUDED_BYTES (16u << 20)   /* all files read, each include counted */
#define PLAN_MAX_INCLUDE_DEPTH 16
#define PLAN_MAX_IF_DEPTH 64
#define PLAN_MAX_SOURCE_BYTES (16u << 20)     /* one generated source */
#define PLAN_MAX_PLAN_BYTES (64u << 20)       /* the distinct sources of one plan, together */

/* Evaluation environment of one point: axes, set variables, lets, device facts
 * (a buffer name is not one of its names: a check's arguments look buffers up
 * before evaluating, resolve/resolve.c).  `used` collects the axes consulted
 * since the last reset (bit i = axes[i]). */
typedef struct PointEnv {
    const Spec *spec;
    const int *vals;            /* value index per axis */
    const DeviceFacts *facts;
    Arena *arena;
    Value *let_val;             /* per let: cached value */
    uint64_t *let_used;         /* per let: axes its value depends on */
    int *let_state;             /* 0 unevaluated, 1 evaluating, 2 done */
    uint64_t used;
    int used_facts;             /* a device fact was consulted since the reset */
    ExprEnv env;                /* lookup bound to this PointEnv */
} PointEnv;

/* pe for the point of value indices vals (one per axis of s) with facts f
 * (NULL: no device facts); lets' caches and values live in a.  s, vals, f
 * and a are borrowed and must outlive pe. */
void plan_point_env_init(PointEnv *pe, const Spec *s, const int *vals,
                    const DeviceFacts *f, Arena *a);
/* Evaluate e at this point.  0 or -1 with err. */
int plan_point_eval(PointEnv *pe, const Expr *e, Value *out, KvxError *err);
/* Evaluate e to an integer (a float that is integral is accepted).  0 or -1
 * with err. */
int plan_point_eval_int(PointEnv *pe, const Expr *e, int64_t *out, KvxError *err);
/* The set variable var at this point, NULL if unbound. */
const SetEntry *plan_point_set_var(const PointEnv *pe, const char *var);


typedef struct Source {
    char hash[65];              /* sha256 of text */
    char *text;                 /* header comment + body, malloc'd */
    char *file;                 /* "<spec>__axis-val__axis-val.cu", or with "__" and 8
                                   hash digits before ".cu" when two sanitise to one */
    char *label;                /* "strategy=naive counter=u32": its code axes */
    char *origins;              /* per line of text, "FILE:LINE" of the template line it
                                   came from ("" for the header's): NVRTC's line numbers
                                   mapped back (compile/jit.h JitJob.origins) */
    uint64_t code_axes;
    int first_point;
    int npoints;
} Source;

typedef struct Plan {
    Spec *spec;                 /* borrowed */
    DeviceFacts facts;
    int nfull;                  /* before where: */
    int npoints;
    int *vals;                  /* npoints * spec->naxes value indices */
    int *point_src;             /* source index per point */
    Source *srcs;
    int nsrcs;
    uint64_t code_axes;         /* union over sources */
} Plan;

/* Expand s (borrowed: p->spec) for the device facts f, filter by where: and
 * emit into p: each source's header names the spec, the variant and the
 * command that reproduces it.  0 or -1 with err, p then zeroed. */
int plan_build(Spec *s, const DeviceFacts *f, Plan *p, KvxError *err);
void plan_free(Plan *p);        /* accepts a zeroed Plan */

/* Point i's value indices, one per axis. */
const int *plan_point(const Plan *p, int i);
/* "strategy=naive counter=u32 hit_rate=0.05" for the axes in mask; malloc'd. */
char *plan_point_label(const Plan *p, int i, uint64_t mask);

/* Point i as a case key hashes it: every axis in declaration order as
 * name=value, the value's canonical text (spec values hold no control
 * character), joined by single spaces.  Frozen: it is what keys of every
 * stored database hash (it read the same as the label when the label was
 * hashed), so the label may change its looks without breaking resume or
 * merge; test_plan pins it.  malloc'd. */
char *plan_point_key_text(const Plan *p, int i);

/* Does point i satisfy the filter expression (--where)?  1, 0, or -1 with err. */
int plan_point_matches(const Plan *p, int i, const Expr *filter, KvxError *err);

/* Points selected by a --where expression (all when NULL): a malloc'd 0/1
 * array of npoints + 1 bytes, or NULL with err. */
unsigned char *plan_select(const Plan *p, const char *where, KvxError *err);

#endif
