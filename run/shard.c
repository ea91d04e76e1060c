/* shard: deterministic partition of cases (see shard.h). */
#include "shard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_int(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int shard_parse(const char *text, Shard *s, KvxError *err)
{
    s->k = 0;
    s->n = 1;
    s->from = "none";
    if (text) {
        const char *slash = strchr(text, '/');
        long k, n;
        char kb[32];
        if (!slash || (size_t)(slash - text) >= sizeof kb) {
            kvx_error_set(err, KVX_EINPUT, NULL, "--shard is '%s' (expected K/N, e.g. 1/4)", text);
            return -1;
        }
        memcpy(kb, text, (size_t)(slash - text));
        kb[slash - text] = 0;
        if (parse_int(kb, &k) || parse_int(slash + 1, &n) || n < 1 || k < 1 || k > n || n > 100000) {
            kvx_error_set(err, KVX_EINPUT, NULL, "--shard is '%s' (expected K/N with 1 <= K <= N)", text);
            return -1;
        }
        s->k = (int)k - 1;
        s->n = (int)n;
        s->from = "--shard";
        return 0;
    }
    const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
    if (id && count) {
        long i, c, lo = 0;
        const char *min = getenv("SLURM_ARRAY_TASK_MIN");
        if (parse_int(id, &i) || parse_int(count, &c) || (min && parse_int(min, &lo)) || c < 1 ||
            i - lo < 0 || i - lo >= c) {
            kvx_error_set(err, KVX_EINPUT, NULL, "Slurm array variables do not make a shard "
                          "(SLURM_ARRAY_TASK_ID=%s, SLURM_ARRAY_TASK_COUNT=%s, SLURM_ARRAY_TASK_MIN=%s); "
                          "pass --shard K/N", id, count, min ? min : "unset");
            return -1;
        }
        s->k = (int)(i - lo);
        s->n = (int)c;
        s->from = "SLURM_ARRAY_TASK_ID";
    }
    return 0;
}

typedef struct Group {
    const char *key;
    double cost;
    int shard;
} Group;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const Group *)a)->key, ((const Group *)b)->key);
}

static int by_cost(const void *a, const void *b)
{
    const Group *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int find_group(const Group *g, int n, const char *key)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(g[mid].key, key);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void shard_partition(const char *const *group, const double *cost, int n, int nshards, int *shard_of)
{
    if (nshards <= 1) {
        for (int i = 0; i < n; i++)
            shard_of[i] = 0;
        return;
    }
    Group *g = mem_calloc((size_t)(n ? n : 1), sizeof(Group));
    int ng = 0;
    for (int i = 0; i < n; i++)
        g[ng++] = (Group){group[i], 0, 0};
    qsort(g, (size_t)ng, sizeof(Group), by_key);
    int u = 0;
    for (int i = 0; i < ng; i++)
        if (u == 0 || strcmp(g[u - 1].key, g[i].key) != 0)
            g[u++] = g[i];
    ng = u;
    for (int i = 0; i < n; i++)
        g[find_group(g, ng, group[i])].cost += cost ? cost[i] : 1;
    qsort(g, (size_t)ng, sizeof(Group), by_cost);
    double *load = mem_calloc((size_t)nshards, sizeof(double));
    for (int i = 0; i < ng; i++) {
        int best = 0;
        for (int k = 1; k < nshards; k++)
            if (load[k] < load[best])
                best = k;
        g[i].shard = best;
        load[best] += g[i].cost;
    }
    qsort(g, (size_t)ng, sizeof(Group), by_key);
    for (int i = 0; i < n; i++)
        shard_of[i] = g[find_group(g, ng, group[i])].shard;
    free(load);
    free(g);
}

void shard_points(const Plan *p, const unsigned char *sel, int nshards, ShardPoints *sp)
{
    /* A group is what shares a worker's caches: the points that differ in the
     * baseline axes, the reference point's axes, or, for a reference kernel of
     * its own template, in any code axis (they run on the same inputs). */
    const Spec *s = p->spec;
    uint64_t base_mask = 0;
    for (int i = 0; i < s->nbaseline; i++)
        base_mask |= 1ULL << s->baseline[i].axis;
    for (int i = 0; i < s->reference.npoint; i++)
        base_mask |= 1ULL << s->reference.point[i].axis;
    if (s->reference.template_path)
        base_mask |= p->code_axes;
    size_t cap = (size_t)(p->npoints ? p->npoints : 1);
    sp->point = mem_alloc(sizeof(int) * cap);
    sp->key = mem_alloc(65 * cap);
    sp->shard = mem_alloc(sizeof(int) * cap);
    const char **groups = mem_alloc(sizeof(char *) * cap);
    sp->n = 0;
    for (int i = 0; i < p->npoints; i++) {
        if (!sel[i])
            continue;
        char *wl = plan_point_label(p, i, ~base_mask);
        sha256_hex(wl, strlen(wl), sp->key[sp->n]);
        free(wl);
        groups[sp->n] = sp->key[sp->n];
        sp->point[sp->n++] = i;
    }
    shard_partition(groups, NULL, sp->n, nshards, sp->shard);
    free(groups);
}

void shard_points_free(ShardPoints *sp)
{
    if (!sp)
        return;
    free(sp->point);
    free(sp->key);
    free(sp->shard);
    sp->point = NULL, sp->key = NULL, sp->shard = NULL;
    sp->n = 0;
}
