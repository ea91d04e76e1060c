/* search_portfolio: `portfolio`, a bandit over three arms (random sampling,
 * `local`'s climb, `model`'s picks) on one Search, after OpenTuner's
 * credit-assigning meta-technique (Ansel et al., PACT 2014): each ask, after
 * the seeded design, goes to an arm drawn with probability floor + (1 - 3
 * floor) x its credit's share, its credit the improvements of the best its
 * last `window` told picks made (in log of the objective: a pick 10% faster
 * than the best so far earns log 1.1; one not faster, or invalid, 0); with
 * no credit anywhere yet, each arm a third.  Every arm sees every tell:
 * local re-centres on a better variant whoever found it, the model fits
 * everything told.  So no arm is ever starved (random keeps at least floor
 * of the asks: where the guided arms mislead, as on a space whose optimum
 * lies in rare values, random sampling still finds it), and the arm that is
 * paying gets most of the budget. */
#include "search_internal.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ARM_RANDOM, ARM_LOCAL, ARM_MODEL, ARMS, ARM_NONE = 255 };

struct PortfolioState {
    unsigned char *arm_of;      /* per candidate: the arm that proposed it, ARM_NONE the design */
    double *gain;               /* ARMS x window: each arm's last gains, a ring */
    int window;
    int ngain[ARMS], pos[ARMS];
};

int search_portfolio_init(Search *s)
{
    PortfolioState *p = mem_calloc(1, sizeof *p);
    p->window = s->par.window >= 1 ? (int)s->par.window : 1;
    p->arm_of = mem_alloc((size_t)(s->sp->n ? s->sp->n : 1));
    memset(p->arm_of, ARM_NONE, (size_t)(s->sp->n ? s->sp->n : 1));
    p->gain = mem_calloc((size_t)ARMS * (size_t)p->window, sizeof(double));
    s->port = p;
    return 0;
}

void search_portfolio_clone(Search *to, const Search *from)
{
    const PortfolioState *p = from->port;
    to->port = search_dup(p, 1, sizeof *p);
    to->port->arm_of = search_dup(p->arm_of, (size_t)(from->sp->n ? from->sp->n : 1), 1);
    to->port->gain = search_dup(p->gain, (size_t)ARMS * (size_t)p->window, sizeof(double));
}

void search_portfolio_free(Search *s)
{
    if (!s->port)
        return;
    free(s->port->arm_of), free(s->port->gain);
    free(s->port);
    s->port = NULL;
}

/* The arm of the next ask, drawn by credit. */
static int draw_arm(Search *s)
{
    const PortfolioState *p = s->port;
    double credit[ARMS], total = 0;
    for (int a = 0; a < ARMS; a++) {
        credit[a] = 0;
        for (int i = 0; i < p->ngain[a]; i++)
            credit[a] += p->gain[(size_t)a * (size_t)p->window + (size_t)i];
        total += credit[a];
    }
    double floor = fmin(s->par.floor, 1.0 / ARMS), u = search_rand01(s), acc = 0;
    for (int a = 0; a < ARMS; a++) {
        acc += total > 0 ? floor + (1 - ARMS * floor) * credit[a] / total : 1.0 / ARMS;
        if (u < acc)
            return a;
    }
    return ARMS - 1;
}

int search_portfolio_ask(Search *s)
{
    int c = -1;
    if (s->nproposed < search_model_ninit(s) || s->ntold == 0)
        c = search_take_design(s, search_model_ninit(s));
    if (c >= 0)
        return c;
    int arm = draw_arm(s);
    c = arm == ARM_LOCAL ? search_local_ask(s) : arm == ARM_MODEL ? search_model_ask(s) : search_take_random(s);
    if (c >= 0)
        s->port->arm_of[c] = (unsigned char)arm;
    return c;
}

void search_portfolio_tell(Search *s, int cand, double y, double best_before)
{
    PortfolioState *p = s->port;
    int a = p->arm_of[cand];
    if (a == ARM_NONE)
        return;
    double g = isnan(y) || isnan(best_before) ? 0 : fmax(0, best_before - y);
    p->gain[(size_t)a * (size_t)p->window + (size_t)p->pos[a]] = g;
    p->pos[a] = (p->pos[a] + 1) % p->window;
    if (p->ngain[a] < p->window)
        p->ngain[a]++;
}
