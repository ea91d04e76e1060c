/* cmd_gen: the verbs that need no GPU: plan, gen, compile, doctor; and the
 * option handling every spec verb shares.
 *
 * Bad input (a malformed spec, an unknown option, a bad --where) prints one
 * FILE:LINE:COL message and exits 2 before anything is written. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect.h"
#include "resolve.h"
#include "shard.h"
#include "worker.h"

char *cli_default_cache_dir(void)
{
    const char *e = getenv("KVX_CACHE_DIR");
    if (e && *e)
        return xstrdup(e);
    StrBuf b;
    sb_init(&b);
    if ((e = getenv("XDG_CACHE_HOME")) && *e)
        sb_printf(&b, "%s/kvx", e);
    else if ((e = getenv("HOME")) && *e)
        sb_printf(&b, "%s/.cache/kvx", e);
    else
        sb_puts(&b, ".kvx/cache");
    return sb_take(&b);
}

int cli_split_archs(const char *list, char archs[][16], int max, KvxError *err)
{
    int n = 0;
    char *copy = xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        DeviceFacts f;
        if (n == max) {
            kvx_error_set(err, KVX_EINPUT, NULL, "too many archs (at most %d)", max);
            free(copy);
            return -1;
        }
        if (strlen(t) >= 16 || facts_for_arch(t, &f) != 0) {
            kvx_error_set(err, KVX_EINPUT, NULL, "unknown arch '%s' (expected sm_75, sm_80, sm_86, sm_87, "
                          "sm_89, sm_90, sm_100, sm_103, sm_110, sm_120 or sm_121)", t);
            free(copy);
            return -1;
        }
        snprintf(archs[n++], 16, "%s", t);
    }
    free(copy);
    if (n == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "--arch is empty (expected e.g. sm_90 or sm_80,sm_90)");
        return -1;
    }
    return n;
}

void cli_default_arch(char arch[16], int *from_gpu)
{
    DeviceInfo info[8];
    int n = 0;
    KvxError err = {0};
    *from_gpu = 0;
    snprintf(arch, 16, "sm_90");
    if (worker_probe(info, 8, &n, &err) == 0 && n > 0) {
        snprintf(arch, 16, "sm_%d%d", info[0].cc_major, info[0].cc_minor);
        *from_gpu = 1;
    }
    kvx_error_clear(&err);
}

/* ---- options of the spec verbs --------------------------------------------------- */

/* Which verbs take an option: bits of SPEC_VERBS' order. */
enum { V_PLAN = 1, V_GEN = 2, V_COMPILE = 4, V_INSPECT = 8, V_ALL = 15 };
static const char *const SPEC_VERBS[] = {"plan", "gen", "compile", "inspect"};

/* One table drives the parser and the usage text, so that a verb takes
 * exactly the options it lists and says so. */
static const struct SpecOpt {
    const char *name;
    int has_arg, code, verbs;
    const char *arg, *doc;
} spec_opts[] = {
    {"arch", required_argument, 'a', V_PLAN | V_GEN, "ARCH", "target arch for device facts (default: the GPU's, else sm_90)"},
    {"arch", required_argument, 'a', V_COMPILE | V_INSPECT, "LIST", "target archs, comma-separated (sm_80,sm_90)"},
    {"where", required_argument, 'w', V_ALL, "EXPR", "select points"},
    {"shard", required_argument, 'S', V_PLAN, "K/N", "the points of shard K of N (kvx run's partition)"},
    {"points", no_argument, 'P', V_PLAN, NULL, "list every point"},
    {"out", required_argument, 'o', V_GEN, "DIR", "where the sources go (required)"},
    {"out", required_argument, 'o', V_COMPILE, "DIR", "where PTX, CUBIN and sources go (default out/SPEC)"},
    {"show", required_argument, 's', V_INSPECT, "WHAT", "source, ptx or sass of every variant"},
    {"cache", required_argument, 'c', V_COMPILE | V_INSPECT, "DIR", "the compile cache (default ~/.cache/kvx)"},
    {"no-cache", no_argument, 'N', V_COMPILE | V_INSPECT, NULL, "compile everything again"},
    {"jobs", required_argument, 'j', V_COMPILE | V_INSPECT, "N", "compile threads (-j N; default: the cores)"},
    {"help", no_argument, 'h', V_ALL, NULL, "this text"},
};
#define NSPEC_OPTS (int)(sizeof spec_opts / sizeof spec_opts[0])

static int verb_bit(const char *verb)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(SPEC_VERBS[i], verb))
            return 1 << i;
    return 0;
}

static void usage_spec(const char *verb, FILE *f)
{
    int bit = verb_bit(verb);
    fprintf(f, "usage: kvx %s SPEC [options]\n", verb);
    for (int i = 0; i < NSPEC_OPTS; i++) {
        const struct SpecOpt *o = &spec_opts[i];
        if (!(o->verbs & bit))
            continue;
        char head[48];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-18s %s\n", head, o->doc);
    }
}

/* A whole number >= 1 for -j, or -1. */
static int parse_jobs(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 1 && v <= 4096 ? (int)v : -1;
}

static int spec_opt_fail(const char *verb, const char *fmt, ...) KVX_PRINTF(2, 3);
static int spec_opt_fail(const char *verb, const char *fmt, ...)
{
    fprintf(stderr, "kvx %s: ", verb);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    usage_spec(verb, stderr);
    return 2;
}

/* One option's value into o.  0 or 2. */
static int spec_opt_set(const char *verb, int c, CliSpecOpts *o)
{
    switch (c) {
    case 'a': o->archs = optarg; break;
    case 'w': o->where = optarg; break;
    case 'o': o->out = optarg; break;
    case 'c': o->cache_dir = optarg; break;
    case 'N': o->no_cache = 1; break;
    case 'P': o->points = 1; break;
    case 's': o->show = optarg; break;
    case 'S': o->shard = optarg; break;
    case 'j':
        if ((o->jobs = parse_jobs(optarg)) < 0)
            return spec_opt_fail(verb, "-j is '%s' (expected a whole number of threads >= 1)", optarg);
        break;
    }
    return 0;
}

int cli_parse_spec_opts(const char *verb, int argc, char **argv, CliSpecOpts *o)
{
    int bit = verb_bit(verb), n = 0;
    struct option opts[NSPEC_OPTS + 1];
    for (int i = 0; i < NSPEC_OPTS; i++)
        if (spec_opts[i].verbs & bit)
            opts[n++] = (struct option){spec_opts[i].name, spec_opts[i].has_arg, 0, spec_opts[i].code};
    opts[n] = (struct option){0, 0, 0, 0};
    const char *shorts = bit & (V_COMPILE | V_INSPECT) ? ":j:h" : ":h";
    memset(o, 0, sizeof *o);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        if (c == 'h') {
            usage_spec(verb, stdout);
            exit(0);
        }
        if (c == ':')
            return spec_opt_fail(verb, "option '%s' needs a value", argv[optind - 1]);
        if (c == '?')
            return spec_opt_fail(verb, "option '%s' is not one of this verb's", argv[optind - 1]);
        if (spec_opt_set(verb, c, o))
            return 2;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kvx %s: expected one SPEC file, got %d arguments\n", verb, argc - optind);
        usage_spec(verb, stderr);
        return 2;
    }
    o->spec_path = argv[optind];
    if (o->show && strcmp(o->show, "source") && strcmp(o->show, "ptx") && strcmp(o->show, "sass"))
        return spec_opt_fail(verb, "--show is '%s' (expected source, ptx or sass)", o->show);
    return 0;
}

unsigned char *cli_select_points(const Plan *p, const char *where, KvxError *err)
{
    unsigned char *sel = xmalloc((size_t)p->npoints + 1);
    memset(sel, 1, (size_t)p->npoints + 1);
    if (!where)
        return sel;
    Arena *a = arena_new();
    SrcPos pos = {"--where", 1, 1};
    Expr *e = expr_parse(a, where, &pos, err);
    /* The rule of where: a value an axis does not have is a typo, not an
     * empty selection. */
    int rc = e && spec_check_axis_values(p->spec, e, err) == 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < p->npoints; i++) {
        int m = plan_point_matches(p, i, e, err);
        if (m < 0)
            rc = -1;
        else
            sel[i] = (unsigned char)m;
    }
    arena_free(a);
    if (rc) {
        free(sel);
        return NULL;
    }
    return sel;
}

int cli_load_plan(const char *path, const char *where, const char *arch, Spec **spec, Plan *plan,
                  PlanRef *ref, unsigned char **sel)
{
    KvxError err = {0};
    DeviceFacts f;
    *sel = NULL;
    memset(plan, 0, sizeof *plan);
    memset(ref, 0, sizeof *ref);
    if (facts_for_arch(arch, &f) != 0) {
        fprintf(stderr, "kvx: unknown arch '%s'\n", arch);
        return 2;
    }
    *spec = spec_load(path, &err);
    if (!*spec || plan_build(*spec, &f, plan, &err) != 0 || plan_ref_build(plan, ref, &err) != 0 ||
        !(*sel = cli_select_points(plan, where, &err)) || resolve_plan(plan, ref, *sel, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(*sel);
        *sel = NULL;
        plan_ref_free(ref);
        if (*spec && plan->spec)
            plan_free(plan);
        spec_free(*spec);
        *spec = NULL;
        return 2;
    }
    return 0;
}

int cli_archs(const CliSpecOpts *o, char archs[][16], int max)
{
    if (!o->archs) {
        int gpu;
        cli_default_arch(archs[0], &gpu);
        return 1;
    }
    KvxError err = {0};
    int n = cli_split_archs(o->archs, archs, max, &err);
    if (n < 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }
    return n;
}

/* ---- plan ------------------------------------------------------------------------ */

/* Keep in sel only the points of shard sh.  The partition is kvx run's (run.c):
 * over the selected points in point order, grouped by the point's label without
 * the baseline axes (its sha256), so that `kvx plan --shard K/N` lists exactly
 * what `kvx run --shard K/N` runs.  Returns the points kept. */
static int shard_select(const Plan *p, unsigned char *sel, const Shard *sh)
{
    ShardPoints sp;
    shard_points(p, sel, sh->n, &sp);
    int kept = 0;
    for (int q = 0; q < sp.n; q++) {
        sel[sp.point[q]] = sp.shard[q] == sh->k;
        kept += sel[sp.point[q]];
    }
    shard_points_free(&sp);
    return kept;
}

int cmd_plan(int argc, char **argv)
{
    CliSpecOpts o;
    char archs[1][16];
    int rc = cli_parse_spec_opts("plan", argc, argv, &o);
    if (rc)
        return rc;
    if (cli_archs(&o, archs, 1) < 0)
        return 2;
    const char *arch = archs[0];
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    if ((rc = cli_load_plan(o.spec_path, o.where, arch, &s, &p, &ref, &sel)))
        return rc;
    KvxError err = {0};
    /* Only an explicit --shard: a plan inside a Slurm array job lists the whole
     * space unless asked (kvx run reads the array variables itself). */
    Shard shard = {0, 1, "none"};
    if (o.shard && shard_parse(o.shard, &shard, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(sel);
        plan_free(&p);
        plan_ref_free(&ref);
        spec_free(s);
        return 2;
    }
    int nsel = 0;
    for (int i = 0; i < p.npoints; i++)
        nsel += sel[i];
    int nshard = shard.n > 1 ? shard_select(&p, sel, &shard) : nsel;
    printf("spec      %s (%s)\n", s->path, s->name);
    if (s->doc) {
        /* Wrapped at 88 columns under the label column. */
        const char *d = s->doc, *end = d + strlen(d);
        /* The end is found once: a strlen per line was quadratic (7 s on a
         * 10 MB doc:). */
        while (end > d && (end[-1] == ' ' || end[-1] == '\n'))
            end--;
        while (d < end) {
            while (*d == ' ' || *d == '\n')
                d++;
            ptrdiff_t len = end - d;
            ptrdiff_t cut = len;
            if (len > 78) {
                cut = 78;
                while (cut > 0 && d[cut] != ' ')
                    cut--;
                if (cut == 0)
                    cut = 78;
            }
            if (cut > 0)
                printf("          %.*s\n", (int)cut, d);
            d += cut;
            if (cut == len)
                break;
        }
    }
    printf("template  %s, kernel %s\n", s->template_path, s->kernel);
    printf("target    %s (%s)\n", arch, p.facts.name);
    printf("axes      (declaration order; code axes change the source)\n");
    for (int a = 0; a < s->naxes; a++) {
        /* An axis can change the code of some sources only (a template branch
         * that reads it): say in how many. */
        int in = 0;
        for (int k = 0; k < p.nsrcs; k++)
            in += (int)((p.srcs[k].code_axes >> a) & 1);
        char kind[40];
        if (!in)
            snprintf(kind, sizeof kind, "workload");
        else if (in == p.nsrcs)
            snprintf(kind, sizeof kind, "code");
        else
            snprintf(kind, sizeof kind, "code (%d of %d sources)", in, p.nsrcs);
        printf("  %-14s %-24s %2d: ", s->axes[a].name, kind, s->axes[a].nvals);
        for (int v = 0; v < s->axes[a].nvals; v++)
            printf("%s%s", v ? ", " : "", s->axes[a].vals[v].text);
        if (s->axes[a].zip >= 0)
            printf("  (zip group %d)", s->axes[a].zip + 1);
        printf("\n");
    }
    printf("points    %d in the full grid, %d after where: (%d pruned)", p.nfull, p.npoints,
           p.nfull - p.npoints);
    if (o.where)
        printf(", %d selected by --where", nsel);
    if (shard.n > 1)
        printf(", %d in shard %d/%d", nshard, shard.k + 1, shard.n);
    printf("\nsources   %d distinct (one compile each per arch)\n\n", p.nsrcs);
    printf("%-4s %-64s %s\n", "#", "source", "points");
    for (int k = 0; k < p.nsrcs; k++) {
        int n = 0;
        for (int i = 0; i < p.npoints; i++)
            n += sel[i] && p.point_src[i] == k;
        if (n)
            printf("%-4d %-64s %d\n", k, p.srcs[k].file, n);
    }
    if (o.points) {
        printf("\n%-6s %-4s %s\n", "point", "src", "axes");
        for (int i = 0; i < p.npoints; i++) {
            if (!sel[i])
                continue;
            char *l = plan_point_label(&p, i, ~0ULL);
            printf("%-6d %-4d %s\n", i, p.point_src[i], l);
            free(l);
        }
    }
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return 0;
}

/* ---- gen --------------------------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char *path = path_join(dir, name);
    int rc = file_write_atomic(path, text, len);
    if (rc)
        fprintf(stderr, "kvx: cannot write %s: %s\n", path, strerror(errno));
    free(path);
    return rc;
}

int cmd_gen(int argc, char **argv)
{
    CliSpecOpts o;
    char archs[1][16];
    int rc = cli_parse_spec_opts("gen", argc, argv, &o);
    if (rc)
        return rc;
    if (!o.out) {
        fprintf(stderr, "kvx gen: --out DIR is required\n");
        return 2;
    }
    if (cli_archs(&o, archs, 1) < 0)
        return 2;
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    if ((rc = cli_load_plan(o.spec_path, o.where, archs[0], &s, &p, &ref, &sel)))
        return rc;
    if (mkdir_p(o.out) != 0) {
        fprintf(stderr, "kvx gen: cannot create %s: %s\n", o.out, strerror(errno));
        rc = 3;
        goto done;
    }
    /* index.tsv: one line per point, so a reader maps any point to its file. */
    StrBuf idx;
    sb_init(&idx);
    sb_puts(&idx, "point\tsource\tsha256");
    for (int a = 0; a < s->naxes; a++)
        sb_printf(&idx, "\t%s", s->axes[a].name);
    sb_putc(&idx, '\n');
    int written = 0;
    unsigned char *used = plan_ref_used(&p, &ref, sel);
    for (int k = 0; k < plan_ref_nsources(&p, &ref) && rc == 0; k++) {
        if (!used[k])
            continue;
        const Source *so = plan_ref_source_at(&p, &ref, k);
        if (write_file(o.out, so->file, so->text, strlen(so->text)))
            rc = 3;
        written++;
    }
    free(used);
    for (int i = 0; i < p.npoints; i++) {
        if (!sel[i])
            continue;
        const Source *so = &p.srcs[p.point_src[i]];
        sb_printf(&idx, "%d\t%s\t%s", i, so->file, so->hash);
        const int *v = plan_point(&p, i);
        for (int a = 0; a < s->naxes; a++)
            sb_printf(&idx, "\t%s", s->axes[a].vals[v[a]].text);
        sb_putc(&idx, '\n');
    }
    if (rc == 0 && write_file(o.out, "index.tsv", idx.p, idx.len))
        rc = 3;
    sb_free(&idx);
    if (rc == 0)
        printf("kvx gen: %d sources and index.tsv written to %s\n", written, o.out);
done:
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return rc;
}

/* ---- compile ------------------------------------------------------------------------ */

typedef struct CompileCtx {
    int done, total;
} CompileCtx;

static void on_compiled(void *ctx, JitJob *j)
{
    CompileCtx *c = ctx;
    c->done++;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r  compiled %d/%d", c->done, c->total);
}

int cmd_compile(int argc, char **argv)
{
    CliSpecOpts o;
    int rc = cli_parse_spec_opts("compile", argc, argv, &o);
    if (rc)
        return rc;
    char archs[16][16];
    int narch = cli_archs(&o, archs, 16);
    if (narch < 0)
        return 2;
    KvxError err = {0};
    char *cache = o.cache_dir ? xstrdup(o.cache_dir) : cli_default_cache_dir();
    char outroot[300] = "out";
    int failures = 0, cached = 0, njobs_all = 0;
    double t0 = now_ms();
    for (int ai = 0; ai < narch && rc == 0; ai++) {
        Spec *s;
        Plan p;
        PlanRef ref;
        unsigned char *sel;
        if ((rc = cli_load_plan(o.spec_path, o.where, archs[ai], &s, &p, &ref, &sel)))
            break;
        int nall = plan_ref_nsources(&p, &ref);
        JitJob *jobs = xcalloc((size_t)(nall ? nall : 1), sizeof(JitJob));
        int *src_of = xmalloc(sizeof(int) * (size_t)(nall ? nall : 1));
        unsigned char *used = plan_ref_used(&p, &ref, sel);
        int n = 0;
        for (int k = 0; k < nall; k++) {
            if (!used[k])
                continue;
            JitJob *j = &jobs[n];
            src_of[n++] = k;
            const Source *so = plan_ref_source_at(&p, &ref, k);
            j->name = so->file;
            j->source = so->text;
            j->arch = archs[ai];
            j->options = s->options;
            j->noptions = s->noptions;
            j->use_cccl = s->use_cccl;
        }
        JitOptions jo = {.cache_dir = cache, .threads = o.jobs, .use_cache = !o.no_cache};
        CompileCtx cc = {0, n};
        if (jit_compile_all(jobs, n, &jo, on_compiled, &cc, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        }
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "\r%*s\r", 40, "");
        char *outdir = NULL;
        {
            /* PTX, CUBIN and source per variant: under --out, by default out/<spec>. */
            StrBuf b;
            sb_init(&b);
            if (o.out)
                sb_printf(&b, "%s/%s", o.out, archs[ai]);
            else
                sb_printf(&b, "out/%s/%s", s->name, archs[ai]);
            snprintf(outroot, sizeof outroot, "out/%s", s->name);
            outdir = sb_take(&b);
            if (mkdir_p(outdir) != 0) {
                fprintf(stderr, "kvx compile: cannot create %s: %s\n", outdir, strerror(errno));
                rc = 3;
            }
        }
        printf("%s%s: %d sources (%s)\n", ai ? "\n" : "", archs[ai], n, s->path);
        printf("%-60s %-7s %9s %6s %5s %7s %6s %6s\n", "source", "status", "compile", "cache", "regs",
               "spills", "smem", "stack");
        for (int i = 0; i < n; i++) {
            JitJob *j = &jobs[i];
            printf("%-60s %-7s %7.0fms %6s %5d %7d %6d %6d\n", j->name, j->ok ? "ok" : "FAILED",
                   j->compile_ms, j->cached ? "hit" : "miss", j->regs, j->spill_stores + j->spill_loads,
                   j->smem_static, j->stack);
            if (!j->ok) {
                failures++;
                if (j->log && *j->log)
                    printf("%s\n", j->log);
            }
            cached += j->cached;
            if (outdir && j->ok && rc == 0) {
                char name[1200];
                const char *file = plan_ref_source_at(&p, &ref, src_of[i])->file;
                size_t stem = strlen(file) - 3; /* ".cu" */
                snprintf(name, sizeof name, "%.*s.ptx", (int)stem, file);
                rc |= write_file(outdir, name, j->ptx, j->ptx_len) ? 3 : 0;
                snprintf(name, sizeof name, "%.*s.cubin", (int)stem, file);
                rc |= write_file(outdir, name, j->cubin, j->cubin_len) ? 3 : 0;
                rc |= write_file(outdir, file, j->source, strlen(j->source)) ? 3 : 0;
            }
            jit_job_release(j);
        }
        njobs_all += n;
        free(outdir);
        free(jobs);
        free(src_of);
        free(used);
        free(sel);
        plan_free(&p);
        plan_ref_free(&ref);
        spec_free(s);
    }
    if (rc == 0 || rc == 3) {
        printf("\n%d compiles, %d from the cache (%s), %d failed, %.1f s\n", njobs_all, cached, cache,
               failures, (now_ms() - t0) / 1000);
        if (rc == 0)
            printf("PTX, CUBIN and sources written under %s/<arch>/\n", o.out ? o.out : outroot);
    }
    free(cache);
    if (rc)
        return rc;
    return failures ? 1 : 0;
}

/* ---- doctor ---------------------------------------------------------------------------- */

static int on_path(const char *tool, char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *copy = xstrdup(path), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/%s", d, tool);
        found = access(out, X_OK) == 0;
    }
    free(copy);
    return found;
}

int cmd_doctor(int argc, char **argv)
{
    if (argc > 1) {
        /* --help says what doctor does rather than doing it. */
        int help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
        fprintf(help ? stdout : stderr, "usage: kvx doctor\n  what this machine has: NVRTC and its archs, "
                "the CUDA headers, the compile cache, the disassembler, the driver and the GPUs\n");
        return help ? 0 : 2;
    }
    int major = 0, minor = 0, problems = 0;
    printf("kvx %s\n", KVX_VERSION);
    if (jit_nvrtc_version(&major, &minor) == 0) {
        char *archs = jit_supported_archs();
        printf("NVRTC       %d.%d; archs %s\n", major, minor, archs ? archs : "(unknown)");
        free(archs);
    } else {
        printf("NVRTC       NOT WORKING: kvx cannot compile\n");
        problems++;
    }
    char *inc = jit_find_cuda_include();
    printf("CUDA headers %s\n", inc ? inc : "NOT FOUND: set CUDA_HOME (cuda_fp16.h etc. will not resolve)");
    if (inc) {
        char *cccl = path_join(inc, "cccl/cub/cub.cuh");
        struct stat st;
        printf("CCCL        %s\n", stat(cccl, &st) == 0 ? "found (headers: [cccl] works)" : "not found");
        free(cccl);
    } else {
        problems++;
    }
    free(inc);
    char *cache = cli_default_cache_dir();
    printf("cache       %s\n", cache);
    free(cache);
    const char *dis = inspect_find_disassembler();
    if (dis)
        printf("SASS        %s (%s, from %s)\n", dis, inspect_disassembler_version(),
               inspect_disassembler_origin());
    else
        printf("SASS        no nvdisasm or cuobjdump: inspect gives the PTX analysis only (make build "
               "installs the PyPI package nvidia-cuda-nvdisasm into .kvx/tools)\n");
    char path[4096];
    printf("gnuplot     %s\n", on_path("gnuplot", path, sizeof path) ? path : "not found: reports without plots");

    KvxError err = {0};
    DeviceInfo info[16];
    int n = 0;
    if (worker_probe(info, 16, &n, &err) != 0) {
        printf("driver      %s\n", err.msg);
        printf("GPUs        none: plan, gen, compile and inspect work; measuring (kvx run) needs a GPU\n");
        kvx_error_clear(&err);
        return problems ? 1 : 0;
    }
    printf("driver      CUDA %d.%d\n", info[0].driver_version / 1000, info[0].driver_version % 1000 / 10);
    printf("GPUs        %d\n", n);
    for (int i = 0; i < n; i++) {
        const DeviceInfo *d = &info[i];
        printf("  %d: %s (%s), sm_%d%d, %d SMs, L2 %.0f MiB, %.1f GiB, peak %.0f GB/s, SM clock %d MHz\n",
               i, d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count, d->l2_bytes / 1048576.0,
               d->mem_bytes / 1073741824.0, d->peak_gbs, d->clock_khz / 1000);
    }
    return problems ? 1 : 0;
}
