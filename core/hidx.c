/* hidx: an open-addressing index from hashes to row numbers (util.h). */
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

uint64_t hidx_hash(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void hidx_grow(HashIdx *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    HashIdx g = {mem_alloc(sizeof(uint64_t) * cap), mem_alloc(sizeof(int) * cap), cap, t->n};
    for (size_t i = 0; i < g.cap; i++)
        g.idx[i] = -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->idx[i] < 0)
            continue;
        size_t j = t->hash[i] & (g.cap - 1);
        while (g.idx[j] >= 0)
            j = (j + 1) & (g.cap - 1);
        g.hash[j] = t->hash[i], g.idx[j] = t->idx[i];
    }
    hidx_free(t);
    *t = g;
}

int hidx_add(HashIdx *t, uint64_t h, int idx, int (*same)(int stored, const void *ctx),
             const void *ctx)
{
    if (2 * (t->n + 1) > t->cap)   /* at most half full: short probes */
        hidx_grow(t);
    size_t j = h & (t->cap - 1);
    for (; t->idx[j] >= 0; j = (j + 1) & (t->cap - 1))
        if (t->hash[j] == h && same(t->idx[j], ctx))
            return t->idx[j];
    t->hash[j] = h, t->idx[j] = idx, t->n++;
    return -1;
}

void hidx_free(HashIdx *t)
{
    free(t->hash);
    free(t->idx);
    memset(t, 0, sizeof *t);
}
