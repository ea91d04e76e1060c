/* run_ref: what `kvx run` keeps of reference kernels: which reference keys
 * failed (their
 * cases are skipped with the reason, never run against a missing reference). */
#include "run_internal.h"

#include <stdlib.h>
#include <string.h>

void run_ref_fail(RefFails *f, const char *key, const char *why)
{
    if (!key[0] || run_ref_failed(f, key))
        return;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->key = mem_realloc(f->key, sizeof *f->key * (size_t)f->cap);
        f->why = mem_realloc(f->why, sizeof *f->why * (size_t)f->cap);
    }
    memcpy(f->key[f->n], key, 65);
    f->why[f->n++] = mem_strdup(why);
}

const char *run_ref_failed(const RefFails *f, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->key[i], key) == 0)
            return f->why[i];
    return NULL;
}

void run_ref_fails_free(RefFails *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n; i++)
        free(f->why[i]);
    free(f->key);
    free(f->why);
    memset(f, 0, sizeof *f);
}

/* The baseline's place first in its group matters only to differential
 * checks (run_ref_order leaves those specs as they are). */
static int cmp_ref(const void *x, const void *y)
{
    const RunCase *a = x, *b = y;
    int c = strcmp(a->workload_key, b->workload_key);
    if (c)
        return c;
    if ((c = strcmp(a->ref_key, b->ref_key)))
        return c;
    if (a->is_baseline != b->is_baseline)
        return b->is_baseline - a->is_baseline;
    return a->point - b->point;
}

void run_ref_order(const Plan *p, const PlanRef *ref, RunCase *cases, int n)
{
    if (ref->kind == PLAN_REF_NONE || p->spec->differential)
        return;
    qsort(cases, (size_t)n, sizeof *cases, cmp_ref);
}
