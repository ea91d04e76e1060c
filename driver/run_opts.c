/* run_opts: the options of `kvx run`: usage, parsing, the measurement flags
 * applied over the spec's measure: settings, and --devices.  Flags override the
 * spec, which overrides the defaults (spec_measure_defaults). */
#include "run_internal.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

static void usage(void)
{
    MeasureSettings d;
    spec_measure_defaults(&d);
    fprintf(stderr,
            "usage: kvx run SPEC [options]\n"
            "  --db PATH          results database (default %s)\n"
            "  --devices LIST     all, or GPU ordinals 0,2,... (default all)\n"
            "  --where EXPR       run only the points where EXPR holds\n"
            "  --shard K/N        run shard K of N (default: from SLURM_ARRAY_TASK_ID/COUNT)\n"
            "  --rerun            measure cases again even when stored\n"
            "  --cache DIR        compile cache (default ~/.cache/kvx); --no-cache: recompile\n"
            "  -j N               compile threads (default: cores)\n"
            "  --profile          print where the time went\n"
            "  --counters         after the timed samples, a pass under Nsight Compute (ncu):\n"
            "                     L2 atomic/reduction requests and DRAM bytes per case\n"
            "measurement (defaults; a spec's measure: overrides them, these flags override both):\n"
            "  --warmup N         at most N untimed launches after the verified one (%d)\n"
            "  --warmup-ms X      ... or fewer: warm-up stops once X ms of launches ran (%g)\n"
            "  --min-samples N    (%d)\n"
            "  --max-samples N    (%d)\n"
            "  --noise X          stop when (p75-p25)/median <= X (%g)\n"
            "  --budget-ms X      per case: verified launch, warm-up and samples (%g); a\n"
            "                     kernel slower than it gets its verified launch and 1 sample\n"
            "  --sample-batch N   samples per wait after the first min-samples (%d)\n"
            "  --flush-l2[=read|write] / --no-flush-l2  before each sample, read (clean L2)\n"
            "                     or overwrite (dirty L2) a 2x L2 buffer (%s)\n"
            "  --timeout S        per case, then the worker is killed (%g)\n"
            "  --seed N           input generation (%llu)\n",
            RESULTS_DEFAULT_DB, d.warmup, d.warmup_ms, d.min_samples, d.max_samples, d.noise,
            d.budget_ms, d.sample_batch,
            spec_flush_name(d.flush_l2), d.timeout_s, (unsigned long long)d.seed);
}

/* A seed: decimal digits only, below 2^64.  0 or -1. */
static int parse_seed(const char *s, uint64_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_jobs(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 1 && v <= 4096 ? (int)v : -1;
}

int run_parse_opts(int argc, char **argv, RunOpts *o)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},       {"devices", required_argument, 0, 'D'},
        {"where", required_argument, 0, 'w'},    {"shard", required_argument, 0, 'S'},
        {"rerun", no_argument, 0, 'R'},          {"cache", required_argument, 0, 'c'},
        {"no-cache", no_argument, 0, 'N'},       {"profile", no_argument, 0, 'p'},
        {"counters", no_argument, 0, 'C'},
        {"warmup", required_argument, 0, 1},     {"min-samples", required_argument, 0, 2},
        {"max-samples", required_argument, 0, 3},{"noise", required_argument, 0, 4},
        {"budget-ms", required_argument, 0, 5},  {"flush-l2", optional_argument, 0, 6},
        {"no-flush-l2", no_argument, 0, 7},      {"timeout", required_argument, 0, 8},
        {"seed", required_argument, 0, 9},       {"arch", required_argument, 0, 'a'},
        {"warmup-ms", required_argument, 0, 10}, {"sample-batch", required_argument, 0, 11},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    optind = 1;
    opterr = 0;
    int c;
    char *end;
    int li = -1;
    while ((c = getopt_long(argc, argv, ":j:h", opts, &li)) != -1) {
        /* The option's own name for messages: argv[optind - 1] is its value
         * when it was given apart ("--warmup 3"). */
        char name[40];
        snprintf(name, sizeof name, "--%s", li >= 0 ? opts[li].name : "?");
        li = -1;
        double v = 0;
        if (c >= 1 && c <= 11 && c != 6 && c != 7) {
            errno = 0;
            v = strtod(optarg, &end);
            if (errno || *end || v < 0) {
                fprintf(stderr, "kvx run: %s is '%s' (expected a number >= 0)\n", name, optarg);
                return 2;
            }
            /* Counts are whole and fit an int; the seed is read exactly (a
             * double rounds above 2^53). */
            int whole = c == 1 || c == 2 || c == 3 || c == 11;
            if (whole && (v != floor(v) || v > 1e9)) {
                fprintf(stderr, "kvx run: %s is '%s' (expected a whole number up to 10^9)\n", name, optarg);
                return 2;
            }
            if (c == 9 && parse_seed(optarg, &o->m.seed) < 0) {
                fprintf(stderr, "kvx run: --seed is '%s' (expected a whole number below 2^64)\n", optarg);
                return 2;
            }
        }
        if (c == 'j' && (o->spec.jobs = parse_jobs(optarg)) < 0) {
            fprintf(stderr, "kvx run: -j is '%s' (expected a whole number of threads >= 1)\n", optarg);
            return 2;
        }
        switch (c) {
        case 'd': o->db = optarg; break;
        case 'D': o->devices = optarg; break;
        case 'w': o->spec.where = optarg; break;
        case 'S': o->spec.shard = optarg; break;
        case 'R': o->rerun = 1; break;
        case 'c': o->spec.cache_dir = optarg; break;
        case 'N': o->spec.no_cache = 1; break;
        case 'p': o->profile = 1; break;
        case 'C': o->counters = 1; break;
        case 'j': break;
        case 'a': o->spec.archs = optarg; break;
        case 1: o->m.warmup = (int)v; o->set_warmup = 1; break;
        case 2: o->m.min_samples = (int)v; o->set_min = 1; break;
        case 3: o->m.max_samples = (int)v; o->set_max = 1; break;
        case 4: o->m.noise = v; o->set_noise = 1; break;
        case 5: o->m.budget_ms = v; o->set_budget = 1; break;
        case 6:
            if (!optarg || !strcmp(optarg, "read")) {
                o->m.flush_l2 = MEASURE_FLUSH_READ;
            } else if (!strcmp(optarg, "write")) {
                o->m.flush_l2 = MEASURE_FLUSH_WRITE;
            } else {
                fprintf(stderr, "kvx run: --flush-l2=%s (expected read or write)\n", optarg);
                return 2;
            }
            o->set_flush = 1;
            break;
        case 7: o->m.flush_l2 = MEASURE_FLUSH_OFF; o->set_flush = 1; break;
        case 8: o->m.timeout_s = v; o->set_timeout = 1; break;
        case 9: o->set_seed = 1; break;
        case 10: o->m.warmup_ms = v; o->set_warmup_ms = 1; break;
        case 11: o->m.sample_batch = v < 1 ? 1 : (int)v; o->set_batch = 1; break;
        case 'h': usage(); exit(0);
        case ':':
            fprintf(stderr, "kvx run: option '%s' needs a value\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "kvx run: unknown option '%s'\n", argv[optind - 1]);
            usage();
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kvx run: expected one SPEC file\n");
        usage();
        return 2;
    }
    o->spec.spec_path = argv[optind];
    return 0;
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
    if (o->set_batch) m->sample_batch = o->m.sample_batch;
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
