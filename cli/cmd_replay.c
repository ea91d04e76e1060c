/* cmd_replay: `kvx replay DB`, the search strategies run against a
 * database that holds every variant of a spec measured (an exhaustive run),
 * without a GPU: the verb's option table, whose values go to
 * SearchReplayOpts, and the entry, which hands them to search_replay_main
 * (run/run.h, run/search_replay.c). */
#include "cli/cli.h"
#include "run/run.h"

#include <stdlib.h>
#include <string.h>

/* Items of a comma-separated list. */
static int items(const char *v)
{
    int n = 1;
    for (; *v; v++)
        n += *v == ',';
    return n;
}

static int set_strategies(CliSet *s)
{
    char *copy = mem_strdup(s->value), *save = NULL;
    int ok = *s->value != 0;
    for (char *t = strtok_r(copy, ",", &save); ok && t; t = strtok_r(NULL, ",", &save))
        ok = search_find(t) >= 0;
    free(copy);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--strategy is '%s' (expected names among: %s)", s->value, search_list());
    else if (!(ok = items(s->value) <= SEARCH_REPLAY_MAX))
        snprintf(s->why, sizeof s->why, "--strategy names more than %d strategies", SEARCH_REPLAY_MAX);
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
    else if (!(ok = items(s->value) <= SEARCH_REPLAY_MAX))
        snprintf(s->why, sizeof s->why, "--budgets has more than %d budgets", SEARCH_REPLAY_MAX);
    else
        *(const char **)s->field = s->value;
    return ok ? 0 : -1;
}

#define AT(field) offsetof(SearchReplayOpts, field)
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
    .opts_size = sizeof(SearchReplayOpts),
    .opts = replay_opts,
    .notes = "The fraction of the optimum is the optimum's objective over the best found (1: found).\n"
             "Prints a Markdown table: per strategy and budget, the median and 10th percentile of\n"
             "that fraction over the seeds, and the share of seeds within the tolerance.\n",
    .run = cmd_replay,
};

int cmd_replay(int argc, char **argv)
{
    SearchReplayOpts ro = {.strategies = "random,local,model", .budgets = "2%,5%,10%", .objective = "median_ms",
                           .seeds = 50, .batch = SEARCH_BATCH, .tol = 0.05};
    CliArgs a;
    if (cli_parse(&cmd_replay_verb, argc, argv, &ro, &a))
        return a.status;
    ro.db = a.operand[0];
    return search_replay_main(&ro);
}
