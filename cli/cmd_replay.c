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
    char why[256] = "";
    for (char *t = strtok_r(copy, ",", &save); ok && t; t = strtok_r(NULL, ",", &save))
        ok = search_check(t, why, sizeof why) == 0;
    free(copy);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--strategy has %s", why[0] ? why : "nothing (expected NAME[:key=value]...)");
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

/* --time-budgets: Ns of simulated tuning time or P% of the space's, or "". */
static int set_time_budgets(CliSet *s)
{
    char *copy = mem_strdup(s->value), *save = NULL;
    int ok = 1;
    for (char *t = strtok_r(copy, ",", &save); ok && t; t = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(t);
        char *end = NULL;
        double v = n > 1 ? strtod(t, &end) : 0;
        ok = n > 1 && end == t + n - 1 && (t[n - 1] == 's' || (t[n - 1] == '%' && v <= 100)) && v > 0;
    }
    free(copy);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--time-budgets is '%s' (expected Ns of simulated time or P%% of the "
                 "space's, comma-separated, or \"\")", s->value);
    else if (!(ok = items(s->value) <= SEARCH_REPLAY_MAX))
        snprintf(s->why, sizeof s->why, "--time-budgets has more than %d budgets", SEARCH_REPLAY_MAX);
    else
        *(const char **)s->field = s->value;
    return ok ? 0 : -1;
}

static int set_format(CliSet *s)
{
    int ok = !strcmp(s->value, "md") || !strcmp(s->value, "json");
    if (!ok)
        snprintf(s->why, sizeof s->why, "--format is '%s' (expected md or json)", s->value);
    else
        *(int *)s->field = !strcmp(s->value, "json");
    return ok ? 0 : -1;
}

#define AT(field) offsetof(SearchReplayOpts, field)
static const CliOpt replay_opts[] = {
    CLI_OPT("spec", 0, CLI_STRING, "NAME", "the one spec stored", "the spec whose variants are replayed",
            AT(spec)),
    CLI_OPT("strategy", 0, CLI_STRING, "STRATEGIES", "random,local,model,portfolio",
            "strategies to replay, each NAME[:key=value]... (its constants: docs/cli.md, Search)", AT(strategies),
            .set = set_strategies),
    CLI_OPT("budgets", 0, CLI_STRING, "BUDGETS", "2%,5%,10%,20%", "budgets: N evaluations or P% of the space",
            AT(budgets), .set = set_budgets),
    CLI_OPT("time-budgets", 0, CLI_STRING, "TIMES", "2%,5%,10%,20%",
            "budgets of simulated tuning time (each variant's stored compile + measure time): Ns, or P% of "
            "the whole space's; \"\" none", AT(time_budgets), .set = set_time_budgets),
    CLI_OPT("objective", 0, CLI_STRING, "VALUE[,POINTS]", "median_ms",
            "the value minimised (gbs and other rates: maximised), as a geometric mean over the points "
            "where POINTS holds (all by default)", AT(objective)),
    CLI_OPT("seeds", 0, CLI_INT, "N", "50", "seeded repeats of each strategy", AT(seeds), .lo = 1, .hi = 100000),
    CLI_OPT("seed", 0, CLI_UINT64, "S", "0", "the first seed (S, S+1, ...)", AT(seed)),
    CLI_OPT("batch", 0, CLI_INT, "N", "8", "variants asked before their results are told, as kvx run "
            "--search measures them", AT(batch), .lo = 1, .hi = 4096),
    CLI_OPT("tolerance", 0, CLI_DOUBLE, "F", "0.05", "a seed is within F of the optimum when its best is "
            "at most (1+F) times the optimum's time", AT(tol), .lo = 0, .hi = 10),
    CLI_OPT("format", 0, CLI_STRING, "md|json", "md", "a Markdown table, or one JSON object (bench/search_bench.py "
            "reads it)", AT(json), .set = set_format),
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
             "Prints a Markdown table: per strategy and budget, the evaluations made (every variant\n"
             "asked, an invalid one too), the simulated tuning time spent, the median, 10th percentile\n"
             "and mean of that fraction over the seeds, the share of seeds within the tolerance, and\n"
             "how the mean compares with random's at that budget (worse or better: beyond twice the\n"
             "standard error of the difference).\n",
    .run = cmd_replay,
};

int cmd_replay(int argc, char **argv)
{
    SearchReplayOpts ro = {.strategies = "random,local,model,portfolio", .budgets = "2%,5%,10%,20%",
                           .time_budgets = "2%,5%,10%,20%", .objective = "median_ms",
                           .seeds = 50, .batch = SEARCH_BATCH, .tol = 0.05};
    CliArgs a;
    if (cli_parse(&cmd_replay_verb, argc, argv, &ro, &a))
        return a.status;
    ro.db = a.operand[0];
    return search_replay_main(&ro);
}
