/* cmd_run: the `kvx run` verb: its option table, the measurement settings
 * its flags give (flags override the spec's measure:, which overrides the
 * defaults, spec_measure_defaults), --devices, and the entry, which hands the
 * options to the run's stages (run.c, run_main). */
#include "run_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

/* --devices: all, or GPU ordinals; whether each exists is known only once
 * the GPUs are probed (run_parse_devices). */
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

static int set_no_flush(CliSet *s)
{
    *(int *)s->field = MEASURE_FLUSH_OFF;
    return 0;
}

static const CliChoice flushes[] = {{"read", MEASURE_FLUSH_READ}, {"write", MEASURE_FLUSH_WRITE}, {NULL, 0}};

#define AT(field) offsetof(RunOpts, field)
#define GIVEN(field) CLI_GIVEN(RunOpts, field)
/* A measurement setting: m.field, marked given in its set_ flag, shown with
 * its default. */
#define MEASURE(name, kind, arg, help, field, given_, lo_, hi_, ...)                                        \
    CLI_OPT(name, 0, kind, arg, NULL, help, AT(m.field), .given = GIVEN(given_), .lo = lo_, .hi = hi_,      \
            .flags = CLI_SHOW_DEFAULT, __VA_ARGS__)

static const CliOpt run_opts[] = {
    CLI_OPT("db", 0, CLI_PATH, "PATH", RESULTS_DEFAULT_DB, "the results database", AT(db)),
    CLI_OPT("devices", 0, CLI_STRING, "LIST", "all", "all, or GPU ordinals 0,2,...", AT(devices),
            .set = set_devices),
    CLI_OPT("where", 0, CLI_STRING, "EXPR", NULL, "run only the points where EXPR holds", AT(where)),
    CLI_OPT("shard", 0, CLI_STRING, "K/N", "from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT",
            "run shard K of N", AT(shard), .set = cli_set_shard),
    CLI_OPT("rerun", 0, CLI_FLAG, NULL, NULL, "measure cases again even when stored", AT(rerun)),
    CLI_OPT("cache", 0, CLI_PATH, "DIR", "$KVX_CACHE_DIR or ~/.cache/kvx", "the compile cache",
            AT(cache_dir)),
    CLI_OPT("no-cache", 0, CLI_FLAG, NULL, NULL, "compile everything; neither read nor write the cache", AT(no_cache)),
    CLI_OPT("jobs", 'j', CLI_INT, "N", "the cores", "compile threads", AT(jobs), .lo = 1, .hi = 4096),
    CLI_OPT("profile", 0, CLI_FLAG, NULL, NULL, "print where the time went", AT(profile)),
    CLI_OPT("counters", 0, CLI_FLAG, NULL, NULL,
            "after the timed samples, a pass under Nsight Compute (ncu): L2 atomic/reduction requests and "
            "DRAM bytes per case", AT(counters)),
    MEASURE("warmup", CLI_INT, "N", "at most N untimed launches after the verified one", warmup,
            set_warmup, 0, 1e9,
            .heading = "measurement (a spec's measure: overrides the defaults, these flags override both):"),
    MEASURE("warmup-ms", CLI_DOUBLE, "X", "... or fewer: warm-up stops once X ms of launches ran",
            warmup_ms, set_warmup_ms, 0, INFINITY),
    MEASURE("min-samples", CLI_INT, "N", "at least N timed samples", min_samples, set_min, 1, 1e9),
    MEASURE("max-samples", CLI_INT, "N", "at most N (raised to the minimum when below it)", max_samples,
            set_max, 0, 1e9),
    MEASURE("noise", CLI_DOUBLE, "X", "stop when (p75-p25)/median <= X", noise, set_noise, 0, INFINITY),
    MEASURE("budget-ms", CLI_DOUBLE, "X",
            "per case: verified launch, warm-up and samples; a kernel slower than it gets its verified "
            "launch and 1 sample", budget_ms, set_budget, 0, INFINITY),
    MEASURE("sample-batch", CLI_INT, "N", "samples per wait after the first min-samples (0 is 1)",
            sample_batch, set_batch, 0, 1e9),
    MEASURE("flush-l2", CLI_CHOICE, NULL,
            "before each sample, read (clean L2) or overwrite (dirty L2) a buffer of twice the L2 size",
            flush_l2, set_flush, 0, 0, .choices = flushes, .implied = "read"),
    CLI_OPT("no-flush-l2", 0, CLI_FLAG, NULL, NULL, "no L2 flush before the samples", AT(m.flush_l2),
            .given = GIVEN(set_flush), .set = set_no_flush),
    MEASURE("timeout", CLI_DOUBLE, "S", "seconds per case, then the worker is killed", timeout_s,
            set_timeout, 0, INFINITY),
    MEASURE("seed", CLI_UINT64, "N", "input generation", seed, set_seed, 0, 0),
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
    spec_measure_defaults(&o.m);
    if (cli_parse(&cmd_run_verb, argc, argv, &o, &a))
        return a.status;
    o.spec_path = a.operand[0];
    return run_main(&o, argc, argv);
}

void run_apply_overrides(const RunOpts *o, MeasureSettings *m)
{
    if (o->set_warmup) m->warmup = o->m.warmup;
    if (o->set_min) m->min_samples = o->m.min_samples;
    if (o->set_max) m->max_samples = o->m.max_samples;
    if (o->set_noise) m->noise = o->m.noise;
    if (o->set_budget) m->budget_ms = o->m.budget_ms;
    if (o->set_flush) m->flush_l2 = o->m.flush_l2;
    if (o->set_timeout) m->timeout_s = o->m.timeout_s;
    if (o->set_seed) m->seed = o->m.seed;
    if (o->set_warmup_ms) m->warmup_ms = o->m.warmup_ms;
    if (o->set_batch) m->sample_batch = o->m.sample_batch < 1 ? 1 : o->m.sample_batch;
    if (m->max_samples < m->min_samples)
        m->max_samples = m->min_samples;
}

char *run_measure_json(const MeasureSettings *m)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "{\"warmup\":%d,\"min_samples\":%d,\"max_samples\":%d,\"noise\":%g,\"budget_ms\":%g,"
              "\"flush_l2\":%s,\"timeout_s\":%g,\"seed\":%llu,\"warmup_ms\":%g,\"sample_batch\":%d,"
              "\"budget\":\"case\",\"stat\":\"median\",\"timer\":\"cuEvent\"}",
              m->warmup, m->min_samples, m->max_samples, m->noise, m->budget_ms,
              m->flush_l2 == MEASURE_FLUSH_READ    ? "\"read\""
              : m->flush_l2 == MEASURE_FLUSH_WRITE ? "\"write\""
                                                   : "false",
              m->timeout_s, (unsigned long long)m->seed, m->warmup_ms, m->sample_batch);
    return sb_take(&b);
}

int run_parse_devices(const char *list, int ngpu, int *out, KvxError *err)
{
    int n = 0;
    if (!list || !strcmp(list, "all")) {
        for (int i = 0; i < ngpu && i < RUN_MAX_DEVICES; i++)
            out[n++] = i;
        return n;
    }
    char *copy = xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long d = strtol(t, &end, 10);
        if (*end || d < 0 || d >= ngpu || n == RUN_MAX_DEVICES) {
            kvx_error_set(err, KVX_EINPUT, NULL, "--devices has '%s' (expected all or ordinals below %d)",
                          t, ngpu);
            free(copy);
            return -1;
        }
        for (int k = 0; k < n; k++)
            if (out[k] == d) {
                kvx_error_set(err, KVX_EINPUT, NULL, "--devices names GPU %ld twice", d);
                free(copy);
                return -1;
            }
        out[n++] = (int)d;
    }
    free(copy);
    return n;
}
