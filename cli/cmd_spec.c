/* cmd_spec: the verbs that read a spec and need no GPU: plan, gen and
 * compile (inspect, in stages of its own, is cmd_inspect.c); the option
 * tables of all four.
 *
 * Bad input (a malformed spec, an unknown option, a bad --where) prints one
 * message and exits 2 before anything is written. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/progress.h"
#include "resolve/resolve.h"
#include "run/run.h"

/* ---- the option tables ------------------------------------------------------------------ */

#define AT(field) offsetof(CliSpecOpts, field)
#define OPT_ARCH                                                                                            \
    CLI_OPT("arch", 0, CLI_STRING, "ARCH", "the GPU's, else sm_90", "the target arch, for its device facts", \
            AT(archs), .set = cli_set_arch)
#define OPT_ARCHS                                                                                           \
    CLI_OPT("arch", 0, CLI_STRING, "ARCHS", "the GPU's, else sm_90",                                        \
            "target archs, comma-separated (sm_80,sm_90)", AT(archs), .set = cli_set_archs)
#define OPT_GPU                                                                                             \
    CLI_OPT("gpu", 0, CLI_STRING, "TARGET", NULL,                                                           \
            "plan for a named GPU's facts and arch, without it (H200-SXM-141GB, H100-SXM5-80GB, A100-SXM4-80GB)", \
            AT(gpu), .set = cli_set_gpu)
#define OPT_WHERE                                                                                           \
    CLI_OPT("where", 0, CLI_STRING, "EXPR", NULL, "only the points where EXPR holds", AT(where),            \
            .flags = CLI_AND)
#define OPT_CACHE                                                                                           \
    CLI_OPT("cache", 0, CLI_PATH, "DIR", "$KVX_CACHE_DIR or ~/.cache/kvx", "the compile cache", AT(cache_dir))
#define OPT_NO_CACHE CLI_OPT("no-cache", 0, CLI_FLAG, NULL, NULL, "compile everything; neither read nor write the cache", AT(no_cache))
#define OPT_JOBS                                                                                            \
    CLI_OPT("jobs", 'j', CLI_INT, "N", "the CPUs kvx may use", "compile processes", AT(jobs), .lo = 1, .hi = 4096)
#define OPT_GROUP                                                                                           \
    CLI_OPT("group", 0, CLI_INT, "N", "set by the sources and processes, at most 8",           \
            "sources compiled as one NVRTC program (1: each alone)", AT(group), .lo = 1, .hi = 256)
#define OPT_PROFILE                                                                                         \
    CLI_OPT("profile", 0, CLI_FLAG, NULL, NULL,                                                             \
            "where the compile's time went: busy processes over time, NVRTC's parts, facts, pipes, cache",  \
            AT(profile))

static const CliOpt plan_opts[] = {
    OPT_ARCH,
    OPT_GPU,
    OPT_WHERE,
    CLI_OPT("shard", 0, CLI_STRING, "K/N", NULL, "only the points of shard K of N (kvx run's partition)",
            AT(shard), .set = cli_set_shard),
    CLI_OPT("points", 0, CLI_FLAG, NULL, NULL, "list every point", AT(points)),
    CLI_OPT("resolve", 0, CLI_FLAG, NULL, NULL,
            "print every selected point's resolved case: grid, block, buffers, bytes, checks", AT(resolve)),
    CLI_OPT_FORMAT("the selected points (with --resolve, their launches and metrics)", AT(format)),
    {0},
};

static const CliOpt gen_opts[] = {
    OPT_ARCH,
    OPT_GPU,
    OPT_WHERE,
    CLI_OPT("out", 0, CLI_PATH, "DIR", NULL, "where the sources and index.tsv go", AT(out),
            .flags = CLI_REQUIRED),
    {0},
};

static const CliOpt compile_opts[] = {
    OPT_ARCHS,
    OPT_GPU,
    OPT_WHERE,
    CLI_OPT("out", 0, CLI_PATH, "DIR", "out/SPEC", "where PTX, CUBIN and sources go, a folder per arch",
            AT(out)),
    OPT_CACHE,
    OPT_NO_CACHE,
    OPT_JOBS,
    OPT_GROUP,
    OPT_PROFILE,
    CLI_OPT_FORMAT("the compiled sources", AT(format)),
    {0},
};

static const CliChoice shows[] = {
    {"source", CLI_SHOW_SOURCE}, {"ptx", CLI_SHOW_PTX}, {"sass", CLI_SHOW_SASS}, {NULL, 0},
};

static const CliOpt inspect_opts[] = {
    OPT_ARCHS,
    OPT_GPU,
    OPT_WHERE,
    CLI_OPT("show", 0, CLI_CHOICE, NULL, NULL,
            "print every variant's source, PTX or SASS, its atomics marked", AT(show), .choices = shows),
    OPT_CACHE,
    OPT_NO_CACHE,
    OPT_JOBS,
    OPT_GROUP,
    OPT_PROFILE,
    CLI_OPT_FORMAT("the variants' facts", AT(format)),
    {0},
};

/* A verb of one SPEC operand over CliSpecOpts. */
#define SPEC_VERB(name_, summary_, opts_, run_)                                                             \
    {.name = name_, .operands = "SPEC", .operands_are = "one SPEC file", .min_operands = 1,                \
     .max_operands = 1, .summary = summary_, .opts_size = sizeof(CliSpecOpts), .opts = opts_, .run = run_}

const CliVerb cmd_plan_verb = SPEC_VERB("plan",
    "the space: axes, code/workload, sizes, distinct sources", plan_opts, cmd_plan);
const CliVerb cmd_gen_verb = SPEC_VERB("gen",
    "write one .cu per distinct source and an index (--out DIR)", gen_opts, cmd_gen);
const CliVerb cmd_compile_verb = SPEC_VERB("compile",
    "NVRTC to PTX and CUBIN per arch, with the ptxas report and cache", compile_opts, cmd_compile);
const CliVerb cmd_inspect_verb = SPEC_VERB("inspect",
    "what the compiler made of the atomics and the loads and stores (PTX, SASS), per arch", inspect_opts,
    cmd_inspect);

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

/* The spec's doc: wrapped at 88 columns under the label column. */
static void print_doc(const char *d)
{
    /* The end is found once: a strlen per line was quadratic (7 s on a 10 MB
     * doc:). */
    const char *end = d + strlen(d);
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

static void print_axes(const Spec *s, const Plan *p)
{
    printf("axes      (declaration order; code axes change the source)\n");
    for (int a = 0; a < s->naxes; a++) {
        /* An axis can change the code of some sources only (a template branch
         * that reads it): say in how many. */
        int in = 0;
        for (int k = 0; k < p->nsrcs; k++)
            in += (int)((p->srcs[k].code_axes >> a) & 1);
        char kind[40];
        if (!in)
            snprintf(kind, sizeof kind, "workload");
        else if (in == p->nsrcs)
            snprintf(kind, sizeof kind, "code");
        else
            snprintf(kind, sizeof kind, "code (%d of %d sources)", in, p->nsrcs);
        printf("  %-14s %-24s %2d: ", s->axes[a].name, kind, s->axes[a].nvals);
        StrBuf vals;
        sb_init(&vals);
        for (int v = 0; v < s->axes[a].nvals; v++) {
            sb_puts(&vals, v ? ", " : "");
            sb_put_escaped(&vals, s->axes[a].vals[v].text);
        }
        printf("%s", sb_str(&vals));
        sb_free(&vals);
        if (s->axes[a].zip >= 0)
            printf("  (zip group %d)", s->axes[a].zip + 1);
        printf("\n");
    }
}

/* The sources of the selected points, then (--points) the points. */
static void print_selection(const Plan *p, const unsigned char *sel, int points)
{
    printf("%-4s %-64s %s\n", "#", "source", "points");
    for (int k = 0; k < p->nsrcs; k++) {
        int n = 0;
        for (int i = 0; i < p->npoints; i++)
            n += sel[i] && p->point_src[i] == k;
        if (n)
            printf("%-4d %-64s %d\n", k, p->srcs[k].file, n);
    }
    if (!points)
        return;
    printf("\n%-6s %-4s %s\n", "point", "src", "axes");
    for (int i = 0; i < p->npoints; i++) {
        if (!sel[i])
            continue;
        char *l = plan_point_label(p, i, ~0ULL);
        printf("%-6d %-4d %s\n", i, p->point_src[i], l);
        free(l);
    }
}

/* "65536x1x1" */
static void dims(StrBuf *b, const uint32_t d[3])
{
    sb_printf(b, "%ux%ux%u", d[0], d[1], d[2]);
}

/* One check: "out == count_lt(in, thresh), rtol 0" or "out == 7". */
static void print_check(const CaseDesc *c, const CaseCheck *k, Arena *a)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "  check     %s == ", c->bufs[k->buf].name);
    if (!k->ref[0])
        sb_puts(&b, val_text(a, k->constant));
    else if (!strcmp(k->ref, "reference") || !strcmp(k->ref, "baseline"))
        sb_printf(&b, "the %s's %s", !strcmp(k->ref, "baseline") ? "baseline variant" : "reference kernel",
                  c->bufs[k->buf].name);
    else {
        sb_printf(&b, "%s(", k->ref);
        for (int j = 0; j < k->nargs; j++) {
            sb_puts(&b, j ? ", " : "");
            if (k->argbuf[j] >= 0)
                sb_puts(&b, c->bufs[k->argbuf[j]].name);
            else
                sb_puts(&b, val_text(a, k->args[j].v));
        }
        sb_putc(&b, ')');
    }
    printf("%s, rtol %g\n", sb_str(&b), k->rtol);
    sb_free(&b);
}

/* A resolved case as a reader checks it: the launch, each buffer (type,
 * elements, offset, bytes, initialiser), the checks, the metrics and the
 * reference kernel's launch. */
static void print_case(const CaseDesc *c, const double metrics[3], Arena *a)
{
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i <= c->nnext; i++) {
        CaseKernel k;
        case_kernel_at(c, i, &k);
        sb_reset(&b);
        sb_printf(&b, "  launch    %s grid ", k.kernel);
        dims(&b, k.grid);
        sb_puts(&b, " block ");
        dims(&b, k.block);
        if (k.cluster[0] * k.cluster[1] * k.cluster[2] > 1)
            sb_puts(&b, " cluster "), dims(&b, k.cluster);
        printf("%s smem %u\n", sb_str(&b), k.smem);
    }
    for (int k = 0; k < c->nbufs; k++) {
        const CaseBuf *cb = &c->bufs[k];
        const ElemType *t = &elem_types[cb->type];
        sb_reset(&b);
        if (cb->scratch == CASE_SCRATCH_UNINIT)
            sb_puts(&b, "init none");
        else
            inputs_describe(&cb->init, &b);
        printf("  buffer    %-12s %-5s %llu elements +%llu, %llu bytes, %s%s\n", cb->name, t->name,
               (unsigned long long)cb->count, (unsigned long long)cb->offset,
               (unsigned long long)((cb->count + cb->offset) * (uint64_t)t->size), sb_str(&b),
               cb->checked ? ", checked" : cb->scratch ? ", scratch" : "");
    }
    for (int k = 0; k < c->nchecks; k++)
        print_check(c, &c->checks[k], a);
    printf("  metrics  ");
    static const char *const names[3] = {"bytes", "atomics", "elements"};
    for (int k = 0; k < 3; k++) {   /* NaN: the spec gives none */
        if (isnan(metrics[k]))
            printf("%s %s -", k ? "," : "", names[k]);
        else
            printf("%s %s %.15g", k ? "," : "", names[k], metrics[k]);
    }
    printf("\n");
    if (c->ref.present) {
        sb_reset(&b);
        sb_printf(&b, "  reference %s grid ", c->ref.kernel);
        dims(&b, c->ref.grid);
        sb_puts(&b, " block ");
        dims(&b, c->ref.block);
        printf("%s smem %u\n", sb_str(&b), c->ref.smem);
    }
    sb_free(&b);
}

/* --resolve: every selected point's case, resolved as kvx run would (its
 * kernel's parameters from the emitted source).  0, or 2 after the error. */
static int print_resolved(const Plan *p, const PlanRef *ref, const unsigned char *sel)
{
    Resolver rv = {p, ref, &p->spec->measure, 1};
    CaseDesc *c = mem_alloc(sizeof *c);
    Arena *a = arena_new();
    KvxError err = {0};
    int rc = 0;
    printf("\nresolved  (as kvx run launches each point; bytes of a buffer include its offset)\n");
    for (int i = 0; i < p->npoints && rc == 0; i++) {
        if (!sel[i])
            continue;
        ResolveCase rcs = {.point = i};
        double metrics[3];
        if ((rc = resolve_case(&rv, &rcs, c, metrics, &err)) != 0)
            break;
        char *l = plan_point_label(p, i, ~0ULL);
        printf("point %d  %s\n", i, l);
        free(l);
        print_case(c, metrics, a);
    }
    if (rc) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }
    arena_free(a);
    free(c);
    return rc ? 2 : 0;
}

/* --shard: only its points stay in sel.  Only an explicit --shard: a plan
 * inside a Slurm array job lists the whole space unless asked (kvx run reads
 * the array variables itself).  *nsel gets the points --where selected;
 * the points kept. */
static int plan_shard(const CliSpecOpts *o, const Plan *p, unsigned char *sel, Shard *shard, int *nsel)
{
    *shard = (Shard){0, 1, "none"};
    KvxError err = {0};
    int bad = o->shard && shard_parse(o->shard, shard, &err);
    KVX_ASSERT(!bad);   /* checked when parsed */
    *nsel = 0;
    for (int i = 0; i < p->npoints; i++)
        *nsel += sel[i];
    return shard->n > 1 ? shard_select(p, sel, shard) : *nsel;
}

static void print_plan(const CliSpecOpts *o, const char *arch, const Spec *s, const Plan *p,
                       unsigned char *sel)
{
    Shard shard;
    int nsel, nshard = plan_shard(o, p, sel, &shard, &nsel);
    printf("spec      %s (%s)\n", s->path, s->name);
    if (s->doc)
        print_doc(s->doc);
    printf("template  %s, kernel %s\n", s->template_path, s->kernel);
    printf("target    %s (%s)\n", arch, p->facts.name);
    print_axes(s, p);
    printf("points    %d in the full grid, %d after where: (%d pruned)", p->nfull, p->npoints,
           p->nfull - p->npoints);
    if (o->where)
        printf(", %d selected by --where", nsel);
    if (shard.n > 1)
        printf(", %d in shard %d/%d", nshard, shard.k + 1, shard.n);
    printf("\nsources   %d distinct (one compile each per arch)\n\n", p->nsrcs);
    print_selection(p, sel, o->points);
}

int cmd_plan(int argc, char **argv)
{
    CliSpecOpts o;
    char archs[1][16];
    int rc;
    if (cli_parse_spec(&cmd_plan_verb, argc, argv, &o, &rc))
        return rc;
    cli_archs(&o, archs, 1);
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    if ((rc = cli_load_plan(o.spec_path, o.where, archs[0], o.gpu, &s, &p, &ref, &sel)))
        return rc;
    if (o.format != CLI_TEXT) {
        Shard shard;
        int nsel;
        plan_shard(&o, &p, sel, &shard, &nsel);
        rc = cmd_spec_plan_rows(&o, &p, &ref, sel, stdout);
    } else {
        print_plan(&o, archs[0], s, &p, sel);
        if (o.resolve)
            rc = print_resolved(&p, &ref, sel);
    }
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return rc;
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

/* The sources the selected points and their references use.  The count
 * written, or -1 after a write failed. */
static int gen_sources(const char *out, const Plan *p, const PlanRef *ref, const unsigned char *sel)
{
    int written = 0, rc = 0;
    unsigned char *used = plan_ref_used(p, ref, sel);
    for (int k = 0; k < plan_ref_nsources(p, ref) && rc == 0; k++) {
        if (!used[k])
            continue;
        const Source *so = plan_ref_source_at(p, ref, k);
        rc = write_file(out, so->file, so->text, strlen(so->text));
        written++;
    }
    free(used);
    return rc ? -1 : written;
}

/* index.tsv: one line per point, so a reader maps any point to its file.
 * 0 or -1 after saying why. */
static int gen_index(const char *out, const Spec *s, const Plan *p, const unsigned char *sel)
{
    StrBuf idx;
    sb_init(&idx);
    sb_puts(&idx, "point\tsource\tsha256");
    for (int a = 0; a < s->naxes; a++)
        sb_printf(&idx, "\t%s", s->axes[a].name);
    sb_putc(&idx, '\n');
    for (int i = 0; i < p->npoints; i++) {
        if (!sel[i])
            continue;
        const Source *so = &p->srcs[p->point_src[i]];
        sb_printf(&idx, "%d\t%s\t%s", i, so->file, so->hash);
        const int *v = plan_point(p, i);
        for (int a = 0; a < s->naxes; a++) {
            sb_putc(&idx, '\t');   /* escaped: one point, one line */
            sb_put_escaped(&idx, s->axes[a].vals[v[a]].text);
        }
        sb_putc(&idx, '\n');
    }
    int rc = write_file(out, "index.tsv", idx.p, idx.len);
    sb_free(&idx);
    return rc;
}

int cmd_gen(int argc, char **argv)
{
    CliSpecOpts o;
    char archs[1][16];
    int rc;
    if (cli_parse_spec(&cmd_gen_verb, argc, argv, &o, &rc))
        return rc;
    cli_archs(&o, archs, 1);
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    if ((rc = cli_load_plan(o.spec_path, o.where, archs[0], o.gpu, &s, &p, &ref, &sel)))
        return rc;
    int written = -1;
    if (file_mkdir_p(o.out) != 0)
        fprintf(stderr, "kvx gen: cannot create %s: %s\n", o.out, strerror(errno));
    else if ((written = gen_sources(o.out, &p, &ref, sel)) >= 0 && gen_index(o.out, s, &p, sel) == 0)
        printf("kvx gen: %d sources and index.tsv written to %s\n", written, o.out);
    else
        written = -1;
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return written < 0 ? 3 : 0;
}

/* ---- compile ------------------------------------------------------------------------ */

/* What the archs' passes share. */
typedef struct Compilation {
    CliSpecOpts o;
    char archs[16][16];
    int narch;
    char *cache;
    char outroot[300];          /* out/<spec>: where the files go without --out */
    int failures, cached, njobs;
    Progress progress;          /* the sources compiled (or found) so far */
    char what[64];              /* its label: "kvx compile: sm_90" */
    ResultsRows *rows;          /* --format: the table on stdout (the summary goes to stderr) */
} Compilation;

static void on_compiled(void *ctx, JitJob *j)
{
    (void)j;
    progress_step(&((Compilation *)ctx)->progress, 1);
}

/* The jobs of the sources the selected points use, *src_of[job] its source
 * (both malloc'd).  The count. */
static int compile_jobs(const Spec *s, const Plan *p, const PlanRef *ref, const unsigned char *sel,
                        const char *arch, JitJob **jobs, int **src_of)
{
    int nall = plan_ref_nsources(p, ref), n = 0;
    *jobs = mem_calloc((size_t)(nall ? nall : 1), sizeof(JitJob));
    *src_of = mem_alloc(sizeof(int) * (size_t)(nall ? nall : 1));
    unsigned char *used = plan_ref_used(p, ref, sel);
    for (int k = 0; k < nall; k++) {
        if (!used[k])
            continue;
        const Source *so = plan_ref_source_at(p, ref, k);
        (*src_of)[n] = k;
        (*jobs)[n++] = (JitJob){.name = so->file, .source = so->text, .arch = arch, .options = s->options,
                                .noptions = s->noptions, .use_cccl = s->use_cccl, .origins = so->origins};
    }
    free(used);
    return n;
}

/* PTX, CUBIN and source of a variant: under --out, by default out/<spec>.
 * The folder (malloc'd), made; *rc becomes 3 when it cannot be. */
static char *compile_outdir(Compilation *c, const Spec *s, int ai, int *rc)
{
    StrBuf b;
    sb_init(&b);
    if (c->o.out)
        sb_printf(&b, "%s/%s", c->o.out, c->archs[ai]);
    else
        sb_printf(&b, "out/%s/%s", s->name, c->archs[ai]);
    snprintf(c->outroot, sizeof c->outroot, "out/%s", s->name);
    char *outdir = sb_take(&b);
    if (file_mkdir_p(outdir) != 0) {
        fprintf(stderr, "kvx compile: cannot create %s: %s\n", outdir, strerror(errno));
        *rc = 3;
    }
    return outdir;
}

/* A job's line (and its log when it failed); its files when ok.  0 or 3. */
static int compile_report(Compilation *c, const JitJob *j, const Source *so, int ai, const char *outdir, int write)
{
    const char *file = so->file;
    /* A hit compiled nothing now: no time in the compile column (the entry's
     * is of the compile that made it). */
    char ms[32] = "-";
    if (!j->cached)
        snprintf(ms, sizeof ms, "%.0fms", j->compile_ms);
    if (c->rows)
        cmd_spec_compile_row(c->rows, c->archs[ai], so, j);
    else
        printf("%-60s %-7s %9s %6s %5d %7d %6d %6d\n", j->name, j->ok ? "ok" : "FAILED", ms,
               j->cached ? "hit" : "miss", j->regs, j->spill_stores + j->spill_loads, j->smem_static, j->stack);
    c->failures += !j->ok;
    if (!j->ok && !c->rows) {
        char *log = jit_log_map(j, j->log);
        if (*log)
            printf("%s\n", log);
        free(log);
    }
    c->cached += j->cached;
    if (!write || !j->ok)
        return 0;
    char name[1200];
    int rc = 0;
    size_t stem = strlen(file) - 3; /* ".cu" */
    snprintf(name, sizeof name, "%.*s.ptx", (int)stem, file);
    rc |= write_file(outdir, name, j->ptx, j->ptx_len) ? 3 : 0;
    snprintf(name, sizeof name, "%.*s.cubin", (int)stem, file);
    rc |= write_file(outdir, name, j->cubin, j->cubin_len) ? 3 : 0;
    rc |= write_file(outdir, file, j->source, strlen(j->source)) ? 3 : 0;
    return rc;
}

/* The selected sources for arch ai: compiled, listed, written.  0 or the
 * exit status. */
static int compile_arch(Compilation *c, int ai)
{
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    int rc = cli_load_plan(c->o.spec_path, c->o.where, c->archs[ai], c->o.gpu, &s, &p, &ref, &sel);
    if (rc)
        return rc;
    JitJob *jobs;
    int *src_of, n = compile_jobs(s, &p, &ref, sel, c->archs[ai], &jobs, &src_of);
    JitProfile prof = {.trace = 1};
    JitOptions jo = {.cache_dir = c->cache, .threads = c->o.jobs, .use_cache = !c->o.no_cache,
                     .group = c->o.group, .profile = c->o.profile ? &prof : NULL};
    KvxError err = {0};
    snprintf(c->what, sizeof c->what, "kvx compile: %s", c->archs[ai]);
    progress_start(&c->progress, c->what, n);
    rc = jit_compile_all(jobs, n, &jo, on_compiled, c, &err) != 0 ? 3 : 0;
    progress_end(&c->progress);
    if (rc) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        rc = 3;
    }
    char *outdir = compile_outdir(c, s, ai, &rc);
    FILE *say = c->rows ? stderr : stdout;
    fprintf(say, "%s%s: %d sources (%s)\n", ai ? "\n" : "", c->archs[ai], n, s->path);
    if (!c->rows)
        printf("%-60s %-7s %9s %6s %5s %7s %6s %6s\n", "source", "status", "compile", "cache", "regs", "spills",
               "smem", "stack");
    for (int i = 0; i < n; i++) {
        rc |= compile_report(c, &jobs[i], plan_ref_source_at(&p, &ref, src_of[i]), ai, outdir, rc == 0);
        jit_job_release(&jobs[i]);
    }
    if (c->o.profile)
        jit_profile_print(&prof, say);
    jit_profile_free(&prof);
    c->njobs += n;
    free(outdir);
    free(jobs);
    free(src_of);
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return rc;
}

int cmd_compile(int argc, char **argv)
{
    Compilation *c = mem_calloc(1, sizeof *c);
    int rc;
    if (cli_parse_spec(&cmd_compile_verb, argc, argv, &c->o, &rc)) {
        free(c);
        return rc;
    }
    c->narch = cli_archs(&c->o, c->archs, 16);
    c->cache = c->o.cache_dir ? mem_strdup(c->o.cache_dir) : jit_default_cache_dir();
    snprintf(c->outroot, sizeof c->outroot, "out");
    double t0 = wall_now_ms();
    rc = 0;
    if (c->o.format != CLI_TEXT)
        c->rows = results_rows_open(stdout, (ResultsFormat)c->o.format, cmd_spec_compile_cols,
                                    cmd_spec_compile_ncols);
    for (int ai = 0; ai < c->narch && rc == 0; ai++)
        rc = compile_arch(c, ai);
    results_rows_close(c->rows);
    FILE *say = c->rows ? stderr : stdout;
    if (rc == 0 || rc == 3) {
        fprintf(say, "\n%d compiles, %d from the cache (%s), %d failed, %.1f s\n", c->njobs, c->cached, c->cache,
                c->failures, (wall_now_ms() - t0) / 1000);
        if (rc == 0)
            fprintf(say, "PTX, CUBIN and sources written under %s/<arch>/\n", c->o.out ? c->o.out : c->outroot);
    }
    int failures = c->failures;
    free(c->cache);
    free(c);
    return rc ? rc : failures ? 1 : 0;
}
