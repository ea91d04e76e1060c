/* search_local: `local`, hill climbing with restarts.  The centre is the
 * best valid candidate of the current climb; its neighbours are the nearest
 * valid candidates either side along each axis (the axes' declared order is
 * their order: a tile of 64 sits between 32 and 128), proposed in a random
 * order.  A neighbour told better becomes the centre.  When every neighbour
 * of the centre was proposed, a restart: half the time the best so far with
 * two or three axes redrawn (an iterated local search's kick), else a
 * candidate at random; the first centre comes from a seeded design; the restart becomes the centre once told valid.  An
 * invalid candidate is never a centre, so a climb turns away from variants
 * that fail. */
#include "search_internal.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A design's candidates before the first climb (search_design.c): a few,
 * so that a space whose corners fail still starts from a valid one. */
#define LOCAL_INIT 4
/* Tries at a kick before a restart falls back to a random candidate. */
#define LOCAL_KICK_TRIES 32

struct LocalState {
    int cur;                    /* the centre, -1 none */
    int *nb, nnb, inb;          /* its neighbours, nb[inb..nnb) not yet proposed */
    int restart;                /* the last restart proposed and not yet told, -1 none */
};

int search_local_init(Search *s)
{
    LocalState *l = mem_calloc(1, sizeof *l);
    l->cur = -1;
    l->restart = -1;
    l->nb = mem_alloc(sizeof(int) * (size_t)(2 * s->sp->naxes + 1));
    s->local = l;
    return 0;
}

void search_local_clone(Search *to, const Search *from)
{
    to->local = search_dup(from->local, 1, sizeof *from->local);
    to->local->nb = search_dup(from->local->nb, (size_t)(2 * from->sp->naxes + 1), sizeof(int));
}

void search_local_free(Search *s)
{
    if (!s->local)
        return;
    free(s->local->nb);
    free(s->local);
    s->local = NULL;
}

static void centre(Search *s, int c)
{
    LocalState *l = s->local;
    l->cur = c;
    l->nnb = l->inb = 0;
    for (int a = 0; a < s->sp->naxes; a++)
        for (int dir = -1; dir <= 1; dir += 2) {
            int n = search_step(s, c, a, dir);
            if (n >= 0 && !s->proposed[n])
                l->nb[l->nnb++] = n;
        }
    for (int i = l->nnb - 1; i > 0; i--) {
        int j = search_rand(s, i + 1), t = l->nb[i];
        l->nb[i] = l->nb[j], l->nb[j] = t;
    }
}

/* The best so far with two or three axes redrawn at random, if valid and new. */
static int kick(Search *s)
{
    int na = s->sp->naxes, v[SEARCH_MAX_AXES];
    for (int t = 0; t < LOCAL_KICK_TRIES; t++) {
        memcpy(v, search_vals(s, s->best), sizeof(int) * (size_t)na);
        int k = 2 + search_rand(s, 2);
        for (int i = 0; i < k; i++) {
            int a = search_rand(s, na);
            v[a] = search_rand(s, s->sp->nvals[a]);
        }
        int c = search_lookup(s, v);
        if (c >= 0 && !s->proposed[c])
            return search_take(s, c);
    }
    return -1;
}

int search_local_ask(Search *s)
{
    LocalState *l = s->local;
    if (s->nproposed < LOCAL_INIT) {
        int c = search_take_design(s, LOCAL_INIT);
        if (c >= 0)
            return c;
    }
    while (l->cur >= 0 && l->inb < l->nnb) {
        int c = l->nb[l->inb++];
        if (!s->proposed[c])
            return search_take(s, c);
    }
    int c = s->best >= 0 && search_rand(s, 2) ? kick(s) : -1;
    if (c < 0)
        c = search_take_random(s);
    if (c >= 0 && l->restart < 0)
        l->restart = c;
    return c;
}

void search_local_tell(Search *s, int cand, double y)
{
    LocalState *l = s->local;
    int was_restart = cand == l->restart;
    if (was_restart)
        l->restart = -1;
    if (isnan(y))
        return;
    int exhausted = l->cur < 0 || l->inb >= l->nnb;
    if (l->cur < 0 || y < s->y[l->cur] || (was_restart && exhausted))
        centre(s, cand);
}
