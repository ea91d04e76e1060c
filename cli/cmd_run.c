/* cmd_run: the `kvx run` verb: its option table, whose values go to a
 * plain RunOpts (the measurement flags into RunOpts.m, marked in given[]:
 * run/ lays them over the spec's measure:, which overrides the defaults of
 * core/measure.h), the checks of the options that go together, and the
 * entry, which hands them to run_main (run/run.h). */
#include "cli/cli.h"
#include "run/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/results.h"

/* --devices: all, or GPU ordinals; whether each exists is known only once
 * the GPUs are probed (run/run.c). */
static int set_devices(CliSet *s)
{
    const char *v = s->value;
    int ok = !strcmp(v, "all") || (*v && strspn(v, "0123456789,") == strlen(v) && v[0] != ',' &&
                                   v[strlen(v) - 1] != ',' && !strstr(v, ",,"));
    if (!ok)
        snprintf(s->why, sizeof s->why, "--devices is '%s' (expected all, or GPU ordinals such as 0,2)", v);
    else
        *(const char **)s->field = v;
    return ok ? 0 : -1;
}

/* A measurement flag: checked by the rule of its row of core/measure.h
 * (measure_set), which a spec's measure: shares; the value goes to o->m and
 * the flag is marked given. */
static int set_measure(CliSet *s)
{
    RunOpts *o = s->opts;
    size_t at = (size_t)((char *)s->field - (char *)&o->m);
    for (int i = 0; i < MEASURE_COUNT; i++) {
        const MeasureField *f = &measure_fields[i];
        if (f->at != at)
            continue;
        char expect[128];
        const char *v = s->value ? s->value : "read";  /* a bare --flush-l2 */
        if (measure_set(&o->m, f, v, expect, sizeof expect)) {
            snprintf(s->why, sizeof s->why, "--%s is '%s' (expected %s)", f->flag, v, expect);
            return -1;
        }
        o->given[i] = 1;
        return 0;
    }
    KVX_ASSERT(!"a measurement flag with no row");
    return -1;
}

/* --counters: the list checked now (counters.h), kept as text for the pass. */
static int set_counters(CliSet *s)
{
    CounterList *l = mem_alloc(sizeof *l);
    char why[300];
    int rc = counters_list_parse(s->value, l, why, sizeof why);
    free(l);
    if (rc)
        snprintf(s->why, sizeof s->why, "--counters is %s", why);
    else
        *(const char **)s->field = s->value;
    return rc;
}

static int set_no_flush(CliSet *s)
{
    RunOpts *o = s->opts;
    o->m.flush_l2 = MEASURE_FLUSH_OFF;
    o->given[MEASURE_ID_flush_l2] = 1;
    return 0;
}

/* --search: a strategy, NAME[:key=value]... */
static int set_search(CliSet *s)
{
    char why[256];
    if (search_check(s->value, why, sizeof why) != 0) {
        snprintf(s->why, sizeof s->why, "--search is %s", why);
        return -1;
    }
    *(const char **)s->field = s->value;
    return 0;
}

/* --budget: N, P%, Mgpu-min or Mwall-min (search_budget_parse). */
static int set_budget(CliSet *s)
{
    SearchBudget b;
    char why[160];
    if (search_budget_parse(s->value, 1, &b, why, sizeof why) != 0) {
        snprintf(s->why, sizeof s->why, "--budget is %s", why);
        return -1;
    }
    *(const char **)s->field = s->value;
    return 0;
}

/* err as one line for a flag's complaint: "FILE:LINE:COL: msg" when it has a
 * position (an objective's expression), else the message. */
static void error_line(const KvxError *err, char *buf, size_t n)
{
    if (err->file[0])
        snprintf(buf, n, "%.40s:%d:%d: %.400s", err->file, err->line, err->col, err->msg);
    else
        snprintf(buf, n, "%.480s", err->msg);
}

/* --objective: VALUE[,POINTS], the value one of the stored objectives and
 * POINTS an expression (whose names are checked against the spec later). */
static int set_objective(CliSet *s)
{
    SearchObjective o;
    KvxError err = {0};
    int rc = search_objective_parse(s->value, "--objective", &o, &err);
    if (rc != 0)
        error_line(&err, s->why, sizeof s->why);
    else
        *(const char **)s->field = s->value;
    search_objective_free(&o);
    kvx_error_clear(&err);
    return rc;
}

static const CliChoice flushes[] = {
    {"read", MEASURE_FLUSH_READ}, {"write", MEASURE_FLUSH_WRITE}, {"off", MEASURE_FLUSH_OFF}, {NULL, 0}};

#define AT(field) offsetof(RunOpts, field)
/* A measurement flag from its row of core/measure.h: the value's kind for the
 * usage's default, the setter for the check. */
#define MEASURE_KIND(k) (k == MEASURE_INT ? CLI_INT : k == MEASURE_DOUBLE ? CLI_DOUBLE : k == MEASURE_U64 ? CLI_UINT64 : CLI_CHOICE)
#define MEASURE_OPT(field_, key_, flag_, kind_, lo_, hi_, def_, arg_, help_)                              \
    CLI_OPT(flag_, 0, MEASURE_KIND(kind_), arg_, NULL, help_, AT(m.field_), .set = set_measure,            \
            .flags = CLI_SHOW_DEFAULT, .choices = kind_ == MEASURE_FLUSH ? flushes : NULL,                 \
            .implied = kind_ == MEASURE_FLUSH ? "read" : NULL),

static const CliOpt run_opts[] = {
    CLI_OPT("db", 0, CLI_PATH, "PATH", RESULTS_DEFAULT_DB, "the results database", AT(db)),
    CLI_OPT("devices", 0, CLI_STRING, "LIST", "all", "all, or GPU ordinals 0,2,...", AT(devices),
            .set = set_devices),
    CLI_OPT("where", 0, CLI_STRING, "EXPR", NULL, "run only the points where EXPR holds", AT(where),
            .flags = CLI_AND),
    CLI_OPT("shard", 0, CLI_STRING, "K/N", "from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT",
            "run shard K of N", AT(shard), .set = cli_set_shard),
    CLI_OPT("rerun", 0, CLI_FLAG, NULL, NULL, "measure cases again even when stored", AT(rerun)),
    CLI_OPT("cache", 0, CLI_PATH, "DIR", "$KVX_CACHE_DIR or ~/.cache/kvx", "the compile cache",
            AT(cache_dir)),
    CLI_OPT("no-cache", 0, CLI_FLAG, NULL, NULL, "compile everything; neither read nor write the cache", AT(no_cache)),
    CLI_OPT("jobs", 'j', CLI_INT, "N", "the CPUs kvx may use", "compile processes", AT(jobs), .lo = 1, .hi = 4096),
    CLI_OPT("group", 0, CLI_INT, "N", "set by the sources and processes, at most 8",
            "sources compiled as one NVRTC program (1: each alone)", AT(group), .lo = 1, .hi = 256),
    CLI_OPT("profile", 0, CLI_FLAG, NULL, NULL, "print where the time went", AT(profile)),
    CLI_OPT("counters", 0, CLI_STRING, "LIST", NULL,
            "after the timed samples, a pass under Nsight Compute (ncu) collecting ncu metrics per case: "
            "LIST is METRIC,METRIC,...; default (also a bare --counters) is L2 atomic/reduction requests "
            "and DRAM bytes read/written", AT(counters), .set = set_counters, .implied = "default"),
    CLI_OPT("keep-ncu-rep", 0, CLI_FLAG, NULL, NULL,
            "with --counters: keep ncu's report as DB-runID.ncu-rep beside the database", AT(keep_ncu_rep)),
    CLI_OPT("keep-samples", 0, CLI_FLAG, NULL, NULL,
            "store every timed sample's time per case (cases.samples_json; kvx export has them)",
            AT(keep_samples)),
    CLI_OPT("search", 0, CLI_STRING, "STRATEGY", NULL,
            "measure the variants a strategy picks within a budget, not every point: one of random, local, "
            "model, portfolio or default (model, chosen leaving each recorded space out in turn: "
            "results/search-spaces.md), as NAME[:key=value]... (kappa, init, floor, window: docs/cli.md, "
            "Search)", AT(search), .set = set_search,
            .heading = "search (docs/cli.md, Search): a budgeted search over the variants"),
    CLI_OPT("budget", 0, CLI_STRING, "B", "5%", "with --search: N variants, P% of them, Mgpu-min or Mwall-min",
            AT(budget), .given = CLI_GIVEN(RunOpts, search_given), .set = set_budget),
    CLI_OPT("objective", 0, CLI_STRING, "VALUE[,POINTS]", "median_ms",
            "with --search: the value minimised (gbs and other rates: maximised) as a geometric mean over "
            "the workload points where POINTS holds (every selected one by default)", AT(objective),
            .given = CLI_GIVEN(RunOpts, search_given), .set = set_objective),
    CLI_OPT("search-seed", 0, CLI_UINT64, "S", "0", "with --search: the strategy's seed (--seed is the "
            "inputs')", AT(search_seed), .given = CLI_GIVEN(RunOpts, search_given)),
    CLI_OPT("batch", 0, CLI_INT, "N", "8", "with --search: variants asked and measured together", AT(batch),
            .lo = 1, .hi = 4096, .given = CLI_GIVEN(RunOpts, search_given)),
    CLI_OPT("ahead", 0, CLI_INT, "N", "48 per core",
            "with --search: the next N variants the strategy would ask for compile while a batch runs "
            "(0: none)", AT(ahead), .lo = 0, .hi = 4096, .given = CLI_GIVEN(RunOpts, search_given)),
    CLI_OPT("no-flush-l2", 0, CLI_FLAG, NULL, NULL, "no L2 flush before the samples (--flush-l2 off)",
            AT(m.flush_l2), .set = set_no_flush,
            .heading = "measurement (docs/measurement.md): these flags override a spec's measure:, which "
                       "overrides the defaults"),
    MEASURE_SETTINGS(MEASURE_OPT)
    {0},
};

const CliVerb cmd_run_verb = {
    .name = "run",
    .operands = "SPEC",
    .operands_are = "one SPEC file",
    .min_operands = 1,
    .max_operands = 1,
    .summary = "verify and measure every case on the GPU; results to SQLite",
    .opts_size = sizeof(RunOpts),
    .opts = run_opts,
    .run = cmd_run,
};

int cmd_run(int argc, char **argv)
{
    RunOpts o = {0};
    CliArgs a;
    measure_defaults(&o.m);
    o.budget = "5%", o.objective = "median_ms", o.batch = SEARCH_BATCH, o.ahead = -1;
    if (cli_parse(&cmd_run_verb, argc, argv, &o, &a))
        return a.status;
    if (o.keep_ncu_rep && !o.counters)
        return cli_fail(&cmd_run_verb, "--keep-ncu-rep keeps the report of --counters' pass: give --counters too");
    o.spec_path = a.operand[0];
    if (!o.search && o.search_given)
        return cli_fail(&cmd_run_verb, "--budget, --objective, --search-seed, --batch and --ahead go with --search");
    if (o.search && (o.shard || o.rerun))
        return cli_fail(&cmd_run_verb, "--search takes neither --shard nor --rerun (a search resumes from "
                        "what is stored)");
    if (o.search && o.counters)
        return cli_fail(&cmd_run_verb, "--search takes no --counters (the counter pass profiles a run's cases: "
                        "run it on the variants the search found, with --where)");
    return run_main(&o, argc, argv);
}
