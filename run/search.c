/* search: the Search a strategy works on (search.h), the tuple index, the
 * random source, the constants (`NAME:key=value`) and the `random` strategy.  Invariants: a candidate is
 * proposed at most once (proposed[]), told at most once and only after it
 * was proposed, and `best` is the lowest valid y told (the first of equals). */
#include "search_internal.h"
#include "core/num.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const search_names[] = {
#define X(n, d) #n,
    SEARCH_STRATEGIES(X)
#undef X
    NULL};
const char *const search_docs[] = {
#define X(n, d) d,
    SEARCH_STRATEGIES(X)
#undef X
    NULL};

const SearchParams search_params_default = {
#define X(n, d, w) .n = d,
    SEARCH_PARAMS(X)
#undef X
};

static const char *const param_names[] = {
#define X(n, d, w) #n,
    SEARCH_PARAMS(X)
#undef X
};
#define NPARAMS (sizeof param_names / sizeof param_names[0])

int search_find(const char *name)
{
    if (name && !strcmp(name, "default"))
        return SEARCH_DEFAULT;
    for (int k = 0; k < SEARCH_COUNT; k++)
        if (name && !strcmp(name, search_names[k]))
            return k;
    return -1;
}

/* One "key=value" of a strategy's text into p; 0, or -1 with why. */
static int param_set(const char *kv, size_t n, SearchParams *p, char *why, size_t nwhy)
{
    double *field = (double *)p;
    const char *eq = memchr(kv, '=', n);
    for (size_t i = 0; eq && i < NPARAMS; i++) {
        char num[64];
        size_t k = (size_t)(eq - kv), vn = n - k - 1;
        if (strlen(param_names[i]) != k || strncmp(kv, param_names[i], k) || vn >= sizeof num)
            continue;
        snprintf(num, sizeof num, "%.*s", (int)vn, eq + 1);
        if (num_read_double(num, &field[i]) == 0 && field[i] >= 0 && isfinite(field[i]))
            return 0;
        break;
    }
    char names[256] = "";
    for (size_t i = 0; i < NPARAMS; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s=X", i ? ", " : "", param_names[i]);
    snprintf(why, nwhy, "'%.*s' (expected one of: %s, X a number >= 0)", (int)n, kv, names);
    return -1;
}

int search_parse(const char *text, int *kind, SearchParams *p, char *why, size_t nwhy)
{
    _Static_assert(sizeof(SearchParams) == NPARAMS * sizeof(double), "SearchParams is doubles");
    *p = search_params_default;
    size_t n = strcspn(text, ":");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), text);
    if (n >= sizeof name || (*kind = search_find(name)) < 0) {
        snprintf(why, nwhy, "'%.*s' (expected one of: %s, default)", (int)n, text, search_list());
        return -1;
    }
    for (const char *t = text + n; *t == ':';) {
        size_t k = strcspn(t + 1, ":");
        if (param_set(t + 1, k, p, why, nwhy) != 0)
            return -1;
        t += k + 1;
    }
    return 0;
}

int search_check(const char *text, char *why, size_t nwhy)
{
    int kind;
    SearchParams p;
    return search_parse(text, &kind, &p, why, nwhy);
}

const char *search_list(void)
{
    static char buf[256];
    if (!buf[0])
        for (int k = 0; k < SEARCH_COUNT; k++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", k ? ", " : "", search_names[k]);
    return buf;
}

/* splitmix64: small, and the same sequence everywhere for a seed. */
static uint64_t next64(Search *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int search_rand(Search *s, int n)
{
    return (int)(next64(s) % (uint64_t)n);
}

double search_rand01(Search *s)
{
    return (double)(next64(s) >> 11) * 0x1.0p-53;
}

/* ---- the tuple index ------------------------------------------------------------ */

static uint64_t tuple_hash(const int *vals, int naxes)
{
    return hidx_hash(vals, sizeof(int) * (size_t)naxes);
}

static void index_build(Search *s)
{
    const SearchSpace *sp = s->sp;
    s->nslot = 16;
    while (s->nslot < 2 * (size_t)sp->n)
        s->nslot *= 2;
    s->slot = mem_alloc(sizeof(int) * s->nslot);
    for (size_t i = 0; i < s->nslot; i++)
        s->slot[i] = -1;
    for (int c = 0; c < sp->n; c++) {
        size_t h = (size_t)tuple_hash(search_vals(s, c), sp->naxes) & (s->nslot - 1);
        while (s->slot[h] >= 0)
            h = (h + 1) & (s->nslot - 1);
        s->slot[h] = c;
    }
}

int search_lookup(const Search *s, const int *vals)
{
    int na = s->sp->naxes;
    size_t h = (size_t)tuple_hash(vals, na) & (s->nslot - 1);
    for (; s->slot[h] >= 0; h = (h + 1) & (s->nslot - 1))
        if (!memcmp(search_vals(s, s->slot[h]), vals, sizeof(int) * (size_t)na))
            return s->slot[h];
    return -1;
}

int search_step(const Search *s, int cand, int a, int dir)
{
    int v[SEARCH_MAX_AXES];
    memcpy(v, search_vals(s, cand), sizeof(int) * (size_t)s->sp->naxes);
    for (v[a] += dir; v[a] >= 0 && v[a] < s->sp->nvals[a]; v[a] += dir) {
        int c = search_lookup(s, v);
        if (c >= 0)
            return c;
    }
    return -1;
}

/* ---- proposals ------------------------------------------------------------------ */

int search_take(Search *s, int cand)
{
    KVX_ASSERT(cand >= 0 && cand < s->sp->n && !s->proposed[cand]);
    s->proposed[cand] = 1;
    s->nproposed++;
    return cand;
}

int search_take_random(Search *s)
{
    while (s->nperm < s->sp->n) {
        int j = s->nperm + search_rand(s, s->sp->n - s->nperm);
        int c = s->perm[j];
        s->perm[j] = s->perm[s->nperm];
        s->perm[s->nperm++] = c;
        if (!s->proposed[c])
            return search_take(s, c);
    }
    return -1;
}

Search *search_new(const SearchSpace *sp, int kind, uint64_t seed)
{
    return search_new_with(sp, kind, seed, NULL);
}

Search *search_new_with(const SearchSpace *sp, int kind, uint64_t seed, const SearchParams *p)
{
    if (kind < 0 || kind >= SEARCH_COUNT || sp->naxes > SEARCH_MAX_AXES)
        return NULL;
    Search *s = mem_calloc(1, sizeof *s);
    size_t n = (size_t)(sp->n ? sp->n : 1);
    s->sp = sp;
    s->kind = kind;
    s->par = p ? *p : search_params_default;
    /* "kvx-sear": seed 0 is not a zero state; the kind mixed in, so that
     * no two strategies of one seed draw alike (random's stays as it was). */
    s->rng = (seed ^ 0x6b76782d73656172ULL) + (uint64_t)kind * 0xd1b54a32d192ed03ULL;
    s->proposed = mem_calloc(n, 1);
    s->told = mem_calloc(n, 1);
    s->y = mem_alloc(sizeof(double) * n);
    s->perm = mem_alloc(sizeof(int) * n);
    for (int c = 0; c < sp->n; c++)
        s->y[c] = NAN, s->perm[c] = c;
    s->best = -1;
    index_build(s);
    if (kind == SEARCH_local)
        search_local_init(s);
    else if (kind == SEARCH_model)
        search_model_init(s);
    else if (kind == SEARCH_portfolio)
        search_local_init(s), search_model_init(s), search_portfolio_init(s);
    return s;
}

void search_free(Search *s)
{
    if (!s)
        return;
    search_local_free(s);
    search_model_free(s);
    search_portfolio_free(s);
    free(s->strata);
    free(s->proposed), free(s->told), free(s->y), free(s->perm), free(s->slot);
    free(s);
}

int search_ask(Search *s)
{
    if (s->nproposed >= s->sp->n)
        return -1;
    int c = -1;
    if (s->kind == SEARCH_local)
        c = search_local_ask(s);
    else if (s->kind == SEARCH_model)
        c = search_model_ask(s);
    else if (s->kind == SEARCH_portfolio)
        c = search_portfolio_ask(s);
    /* A strategy with nothing of its own left to propose samples at random. */
    return c >= 0 ? c : search_take_random(s);
}

void search_tell(Search *s, int cand, double y)
{
    KVX_ASSERT(cand >= 0 && cand < s->sp->n && s->proposed[cand] && !s->told[cand]);
    double before = s->best >= 0 ? s->y[s->best] : NAN;
    s->told[cand] = 1;
    s->ntold++;
    s->y[cand] = isfinite(y) ? y : NAN;
    if (isfinite(y) && (s->best < 0 || y < s->y[s->best]))
        s->best = cand;
    if (s->local)
        search_local_tell(s, cand, s->y[cand]);
    if (s->port)
        search_portfolio_tell(s, cand, s->y[cand], before);
}

int search_count(const Search *s)
{
    return s->nproposed;
}

void *search_dup(const void *p, size_t n, size_t size)
{
    if (!p)
        return NULL;
    void *q = mem_alloc(n * size > 0 ? n * size : 1);
    memcpy(q, p, n * size);
    return q;
}

/* A deep copy of s, asked and told apart from it. */
static Search *search_clone(const Search *s)
{
    size_t n = (size_t)(s->sp->n ? s->sp->n : 1);
    Search *c = mem_alloc(sizeof *c);
    *c = *s;
    c->proposed = search_dup(s->proposed, n, 1);
    c->told = search_dup(s->told, n, 1);
    c->y = search_dup(s->y, n, sizeof(double));
    c->perm = search_dup(s->perm, n, sizeof(int));
    c->slot = search_dup(s->slot, s->nslot, sizeof(int));
    c->local = NULL, c->model = NULL, c->port = NULL;
    search_design_clone(c, s);
    if (s->port)
        search_portfolio_clone(c, s);
    if (s->local)
        search_local_clone(c, s);
    if (s->model)
        search_model_clone(c, s);
    return c;
}

int search_peek(const Search *s, int *out, int max)
{
    Search *c = search_clone(s);
    int n = 0;
    while (n < max && (out[n] = search_ask(c)) >= 0)
        n++;
    search_free(c);
    return n;
}
