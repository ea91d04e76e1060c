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
        f->key = xrealloc(f->key, sizeof *f->key * (size_t)f->cap);
        f->why = xrealloc(f->why, sizeof *f->why * (size_t)f->cap);
    }
    memcpy(f->key[f->n], key, 65);
    f->why[f->n++] = xstrdup(why);
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
