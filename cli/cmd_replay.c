/* cmd_replay: `kvx replay DB`, the search strategies run against a
 * database that holds every variant of a spec measured (an exhaustive run),
 * without a GPU: for each strategy and budget, over seeded repeats, the
 * fraction of the optimum the best variant found reaches (run/search.h,
 * run/search_db.h).  Kernel Tuner's strategies replay the same space from
 * `kvx export --format kerneltuner` (bench/kernel_tuner_replay.py prints the
 * same table). */
#include "cli/cli.h"
#include "run/search.h"
#include "run/search_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/results.h"
#include "store/store.h"

#define REPLAY_MAX 32     /* strategies or budgets in one replay */

typedef struct ReplayArgs {
    const char *spec;
    const char *strategies;
    const char *budgets;
    const char *objective;
    int seeds;
    uint64_t seed;
    int batch;
    double tol;
} ReplayArgs;

static int set_strategies(CliSet *s)
{
    char *copy = mem_strdup(s->value), *save = NULL;
    int ok = *s->value != 0;
    for (char *t = strtok_r(copy, ",", &save); ok && t; t = strtok_r(NULL, ",", &save))
        ok = search_find(t) >= 0;
    free(copy);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--strategy is '%s' (expected names among: %s)", s->value, search_list());
    else
        *(const char **)s->field = s->value;
    return ok ? 0 : -1;
}

static int set_budgets(CliSet *s)
{
    char *copy = mem_strdup(s->value), *save = NULL, why[128] = "";
    SearchBudget b;
    int ok = *s->value != 0;
    for (char *t = strtok_r(copy, ",", &save); ok && t; t = strtok_r(NULL, ",", &save))
        ok = search_budget_parse(t, 0, &b, why, sizeof why) == 0;
    free(copy);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--budgets has %s", why[0] ? why : "nothing (expected N or P%)");
    else
        *(const char **)s->field = s->value;
    return ok ? 0 : -1;
}

#define AT(field) offsetof(ReplayArgs, field)
static const CliOpt replay_opts[] = {
    CLI_OPT("spec", 0, CLI_STRING, "NAME", "the one spec stored", "the spec whose variants are replayed",
            AT(spec)),
    CLI_OPT("strategy", 0, CLI_STRING, "STRATEGIES", "random,local,model", "strategies to replay", AT(strategies),
            .set = set_strategies),
    CLI_OPT("budgets", 0, CLI_STRING, "BUDGETS", "2%,5%,10%", "budgets: N variants or P% of the space",
            AT(budgets), .set = set_budgets),
    CLI_OPT("objective", 0, CLI_STRING, "VALUE[,POINTS]", "median_ms",
            "the value minimised (gbs and other rates: maximised), as a geometric mean over the points "
            "where POINTS holds (all by default)", AT(objective)),
    CLI_OPT("seeds", 0, CLI_INT, "N", "50", "seeded repeats of each strategy", AT(seeds), .lo = 1, .hi = 100000),
    CLI_OPT("seed", 0, CLI_UINT64, "S", "0", "the first seed (S, S+1, ...)", AT(seed)),
    CLI_OPT("batch", 0, CLI_INT, "N", "8", "variants asked before their results are told, as kvx run "
            "--search measures them", AT(batch), .lo = 1, .hi = 4096),
    CLI_OPT("tolerance", 0, CLI_DOUBLE, "F", "0.05", "a seed is within F of the optimum when its best is "
            "at most (1+F) times the optimum's time", AT(tol), .lo = 0, .hi = 10),
    {0},
};

const CliVerb cmd_replay_verb = {
    .name = "replay",
    .operands = "DB",
    .operands_are = "one database",
    .min_operands = 1,
    .max_operands = 1,
    .summary = "replay search strategies against an exhaustively measured spec; no GPU",
    .opts_size = sizeof(ReplayArgs),
    .opts = replay_opts,
    .notes = "The fraction of the optimum is the optimum's objective over the best found (1: found).\n"
             "Prints a Markdown table: per strategy and budget, the median and 10th percentile of\n"
             "that fraction over the seeds, and the share of seeds within the tolerance.\n",
    .run = cmd_replay,
};

/* "axis=value axis=value" of candidate c. */
static void label(const SearchRecord *r, int c, char *buf, size_t n)
{
    buf[0] = 0;
    for (int a = 0; a < r->sp.naxes; a++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s=%s", a ? " " : "", r->axis[a],
                 r->text[a][r->vals[(size_t)c * (size_t)r->sp.naxes + (size_t)a]]);
}

/* The variant with the lowest y (the objective's log, negated where higher
 * is better), -1 when none is valid. */
static int optimum(const SearchRecord *r)
{
    int opt = -1;
    for (int c = 0; c < r->sp.n; c++)
        if (!isnan(r->y[c]) && (opt < 0 || r->y[c] < r->y[opt]))
            opt = c;
    return opt;
}

static void header(const ReplayArgs *ra, const char *db, const SearchRecord *r, const SearchObjective *o)
{
    int opt = optimum(r);
    char lab[1024];
    label(r, opt, lab, sizeof lab);
    printf("kvx replay %s: spec %s, %d variants over %d objective point%s (%d invalid, %d incomplete left out)\n",
           db, r->spec, r->sp.n, r->npoints, r->npoints == 1 ? "" : "s", r->ninvalid, r->nincomplete);
    printf("objective %s, %s is better, geometric mean%s%s\n", o->column, o->lower ? "lower" : "higher",
           o->points ? " where " : "", o->points ? o->points : "");
    printf("optimum   %s: %.6g\n", lab, exp(o->lower ? r->y[opt] : -r->y[opt]));
    printf("seeds     %llu..%llu, batches of %d, within = at most %g%% from the optimum\n\n",
           (unsigned long long)ra->seed, (unsigned long long)(ra->seed + (uint64_t)ra->seeds - 1), ra->batch,
           100 * ra->tol);
}

/* The table's rows of strategy kind. */
static int replay_rows(const ReplayArgs *ra, const SearchRecord *r, int kind, const char **btext,
                       const int *budgets, int nb)
{
    double *frac = mem_alloc(sizeof(double) * (size_t)ra->seeds * (size_t)nb);
    double *col = mem_alloc(sizeof(double) * (size_t)ra->seeds);
    int rc = search_replay(&r->sp, r->y, kind, ra->seed, ra->seeds, budgets, nb, ra->batch, frac);
    for (int b = 0; rc == 0 && b < nb; b++) {
        for (int s = 0; s < ra->seeds; s++)
            col[s] = frac[(size_t)s * (size_t)nb + (size_t)b];
        SearchStats st = search_stats(col, ra->seeds, ra->tol);
        printf("| %s | %s | %d | %.3f | %.3f | %.0f%% |\n", search_names[kind], btext[b], budgets[b], st.median,
               st.p10, 100 * st.within);
    }
    free(frac), free(col);
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    ReplayArgs ra = {.strategies = "random,local,model", .budgets = "2%,5%,10%", .objective = "median_ms",
                     .seeds = 50, .batch = SEARCH_BATCH, .tol = 0.05};
    CliArgs a;
    if (cli_parse(&cmd_replay_verb, argc, argv, &ra, &a))
        return a.status;
    KvxError err = {0};
    SearchObjective o = {0};
    SearchRecord r = {0};
    Arena *ar = arena_new();
    ResultsSel sel = {.spec = ra.spec};
    int rc = 0, ns = 0, nb = 0, budgets[REPLAY_MAX];
    double t0 = wall_now_ms();
    Store *db = store_read_open(a.operand[0], &err);
    if (!db || results_resolve_spec(db, &sel, ar, &err) || search_objective_parse(ra.objective, "--objective", &o, &err) ||
        search_record_load(db, sel.spec, &o, &r, &err)) {
        kvx_error_print(&err, stderr);
        rc = err.code == KVX_EINPUT ? 2 : 3;
        goto fail;
    }
    const char **names = results_split(ar, ra.strategies, &ns), **btext = results_split(ar, ra.budgets, &nb);
    if (ns > REPLAY_MAX || nb > REPLAY_MAX) {
        rc = cli_fail(&cmd_replay_verb, "at most %d strategies and %d budgets", REPLAY_MAX, REPLAY_MAX);
        goto fail;
    }
    for (int b = 0; b < nb; b++) {
        SearchBudget sb;
        char why[128];
        search_budget_parse(btext[b], 0, &sb, why, sizeof why);
        budgets[b] = search_budget_variants(&sb, r.sp.n);
    }
    header(&ra, a.operand[0], &r, &o);
    printf("| strategy | budget | variants | median | p10 | within %g%% |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
           100 * ra.tol);
    for (int i = 0; i < ns; i++)
        replay_rows(&ra, &r, search_find(names[i]), btext, budgets, nb);
    printf("\n%.1f s\n", (wall_now_ms() - t0) / 1000);
fail:
    search_record_free(&r);
    search_objective_free(&o);
    store_close(db);
    arena_free(ar);
    kvx_error_clear(&err);
    return rc;
}
