/* cmd_inspect: `kvx inspect SPEC`: what the compiler made of each variant's
 * atomics, for one or several archs, without a GPU (its options are in
 * cmd_spec.c's tables, beside the other spec verbs').
 *
 * One arch: a line per variant (inspect_summary), and under a variant of
 * several kernels a line per kernel (its own atomics, registers and
 * spills: inspect_kernels.c).  Several: a variant x arch
 * table of classifications (inspect_table), the static cross-architecture view.
 * --show source|ptx|sass prints the listings with the atomic sections marked.
 * --format md|csv|json: one row per variant and arch instead (inspect_row),
 * the facts as kvx run stores them (variants.inspect_json) among them. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "compile/inspect.h"
#include "core/progress.h"

/* What the archs' passes share.  Variants are keyed by their code-axis label:
 * an arch whose where: prunes some (a cc-dependent constraint) leaves those
 * cells empty. */
typedef struct Inspection {
    CliSpecOpts o;
    char archs[16][16];
    int narch;
    const char *dis;            /* the disassembler, or NULL */
    char *cache;
    int cap, nvar;
    char **labels;
    InspectFacts *facts;        /* nvar x narch */
    unsigned char *present;     /* nvar x narch */
    ResultsRows *rows;          /* --format: the table */
} Inspection;

static const char *const inspect_cols[] = {"variant", "arch", "status", "tags", "summary", "memory", "sites",
                                           "facts", "log"};
#define NINSPECT ((int)(sizeof inspect_cols / sizeof inspect_cols[0]))

/* --format's row of one variant on one arch: its facts (f NULL: it does not
 * compile, log says why). */
static void inspect_row(const Inspection *in, const char *name, const char *arch, const InspectFacts *f,
                        const char *log)
{
    StrBuf b[5];
    for (int i = 0; i < 5; i++)
        sb_init(&b[i]);
    if (f) {
        inspect_tags(f, &b[0]);
        inspect_summary(f, &b[1]);
        inspect_memory(f, &b[2]);
        inspect_sites(f, &b[3]);
        while (b[3].len && b[3].p[b[3].len - 1] == '\n')    /* a line a site, the last one ended */
            b[3].p[--b[3].len] = 0;
        inspect_to_json(f, &b[4]);
    }
    const char *cells[NINSPECT] = {name, arch, f ? "ok" : "compile_error", f ? sb_str(&b[0]) : NULL,
                                   f ? sb_str(&b[1]) : NULL, f && b[2].len ? sb_str(&b[2]) : NULL,
                                   f && b[3].len ? sb_str(&b[3]) : NULL, f ? sb_str(&b[4]) : NULL,
                                   log && *log ? log : NULL};
    results_rows_add(in->rows, cells);
    for (int i = 0; i < 5; i++)
        sb_free(&b[i]);
}

/* The row of label, added when new. */
/* Room for twice the variants: labels, and a facts and a present slot per
 * arch for each. */
static void grow(Inspection *in)
{
    size_t na = (size_t)in->narch, cap = (size_t)in->cap;
    in->labels = mem_realloc(in->labels, sizeof(char *) * cap * 2);
    in->facts = mem_realloc(in->facts, sizeof(InspectFacts) * cap * 2 * na);
    in->present = mem_realloc(in->present, cap * 2 * na);
    memset(in->present + cap * na, 0, cap * na);
    in->cap *= 2;
}

static int variant_row(Inspection *in, const char *label)
{
    for (int v = 0; v < in->nvar; v++)
        if (!strcmp(in->labels[v], label))
            return v;
    if (in->nvar == in->cap)
        grow(in);
    in->labels[in->nvar] = mem_strdup(label);
    return in->nvar++;
}

/* Each line of sites ("what the source does, what ptxas did") as a "site:"
 * line under its variant or kernel. */
static void print_sites(const char *sites, const char *indent)
{
    for (const char *q = sites; *q;) {
        size_t len = strcspn(q, "\n");
        printf("%ssite: %.*s\n", indent, (int)len, q);
        q += len + (q[len] == '\n');
    }
}

/* One variant's summary, its loads and stores and its sites, a line each. */
static void print_summary(const InspectFacts *f, const char *name, const char *arch)
{
    StrBuf line;
    sb_init(&line);
    inspect_summary(f, &line);
    printf("%s [%s]: %s\n", name, arch, sb_str(&line));
    /* The loads and stores beside the atomics: their widths show vectorisation. */
    sb_reset(&line);
    inspect_memory(f, &line);
    if (line.len)
        printf("    memory: %s\n", sb_str(&line));
    /* Each atomic site: what the source does, what ptxas did. */
    sb_reset(&line);
    inspect_sites(f, &line);
    print_sites(sb_str(&line), "    ");
    sb_free(&line);
}

/* A source of several kernels: each with its own facts, as the variant's
 * summary line and sites are laid out, indented under it. */
static void print_kernels(const JitJob *j, const char *sass)
{
    char names[INSPECT_MAX_KERNELS][INSPECT_NAME_MAX];
    int n = inspect_entries(j->ptx, names, INSPECT_MAX_KERNELS);
    if (n < 2)
        return;
    InspectFacts *f = mem_alloc(sizeof *f);
    StrBuf line;
    sb_init(&line);
    for (int k = 0; k < n; k++) {
        inspect_kernel_facts(j, sass, names[k], f);
        sb_reset(&line);
        inspect_summary(f, &line);
        printf("  kernel %s: %s\n", names[k], sb_str(&line));
        sb_reset(&line);
        inspect_sites(f, &line);
        print_sites(sb_str(&line), "      ");
    }
    sb_free(&line);
    free(f);
}

/* --show: the listing asked for, its atomic sections marked. */
static void print_listing(int show, const JitJob *j, const char *sass)
{
    StrBuf out;
    sb_init(&out);
    if (show == CLI_SHOW_SOURCE)
        sb_puts(&out, j->source);
    else if (show == CLI_SHOW_PTX)
        inspect_mark(j->ptx, 0, &out);
    else if (sass)
        inspect_mark(sass, 1, &out);
    else
        sb_puts(&out, "(no SASS: nvdisasm or cuobjdump is needed)\n");
    printf("%s\n", sb_str(&out));
    sb_free(&out);
}

/* The facts of one compiled job into f, printed as asked. */
static void inspect_one(const Inspection *in, const JitJob *j, const char *arch, InspectFacts *f)
{
    inspect_facts_init(f);
    if (!j->ok) {
        char *log = jit_log_map(j, j->log);
        if (in->rows)
            inspect_row(in, j->name, arch, NULL, log);
        else
            printf("%s [%s]: does not compile\n%s\n", j->name, arch, log);
        free(log);
        return;
    }
    char *sass = NULL;
    inspect_set_compile(f, j);
    inspect_ptx(j->ptx, f);
    if (in->dis) {
        KvxError err = {0};
        if ((sass = inspect_job_sass(j, &err)))     /* the entry's, else disassembled and kept */
            inspect_sass(sass, f);
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }
    if (in->rows) {
        inspect_row(in, j->name, arch, f, NULL);
    } else if (in->narch == 1 || in->o.show) {
        print_summary(f, j->name, arch);
        print_kernels(j, sass);
    }
    if (in->o.show && !in->rows)
        print_listing(in->o.show, j, sass);
    free(sass);
}

/* A variant compiled or found in the cache: one more for the progress line. */
static void inspected(void *ctx, JitJob *j)
{
    (void)j;
    progress_step(ctx, 1);
}

/* The selected variants of arch ai: compiled, inspected, printed.  0 or the
 * exit status. */
static int inspect_arch(Inspection *in, int ai)
{
    Spec *s;
    Plan p;
    PlanRef ref;
    unsigned char *sel;
    int rc = cli_load_plan(in->o.spec_path, in->o.where, in->archs[ai], in->o.gpu, &s, &p, &ref, &sel);
    if (rc)
        return rc;
    JitJob *jobs = mem_calloc((size_t)(p.nsrcs ? p.nsrcs : 1), sizeof(JitJob));
    int *row = mem_alloc(sizeof(int) * (size_t)(p.nsrcs ? p.nsrcs : 1));
    int n = 0;
    for (int k = 0; k < p.nsrcs; k++) {
        int any = 0;
        for (int i = 0; i < p.npoints && !any; i++)
            any = sel[i] && p.point_src[i] == k;
        if (!any)
            continue;
        const char *name = p.srcs[k].label[0] ? p.srcs[k].label : p.srcs[k].file;
        jobs[n] = (JitJob){.name = name, .source = p.srcs[k].text, .arch = in->archs[ai],
                           .options = s->options, .noptions = s->noptions, .use_cccl = s->use_cccl,
                           .origins = p.srcs[k].origins};
        row[n++] = variant_row(in, name);
    }
    JitProfile prof = {.trace = 1};
    JitOptions jo = {.cache_dir = in->cache, .threads = in->o.jobs, .use_cache = !in->o.no_cache,
                     .group = in->o.group, .profile = in->o.profile ? &prof : NULL};
    KvxError err = {0};
    char what[64];
    snprintf(what, sizeof what, "kvx inspect: %s", in->archs[ai]);
    Progress pr;
    progress_start(&pr, what, n);
    int failed = jit_compile_all(jobs, n, &jo, inspected, &pr, &err) != 0;
    progress_end(&pr);
    if (in->o.profile)
        jit_profile_print(&prof, in->rows ? stderr : stdout);
    jit_profile_free(&prof);
    if (failed) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        rc = 3;
    }
    for (int v = 0; v < n && rc == 0; v++) {
        size_t at = (size_t)row[v] * (size_t)in->narch + (size_t)ai;
        in->present[at] = 1;
        inspect_one(in, &jobs[v], in->archs[ai], &in->facts[at]);
    }
    for (int v = 0; v < n; v++)
        jit_job_release(&jobs[v]);
    free(jobs);
    free(row);
    free(sel);
    plan_free(&p);
    plan_ref_free(&ref);
    spec_free(s);
    return rc;
}

/* The variant x arch table; a cell the arch's where: prunes says so. */
static void print_table(const Inspection *in)
{
    StrBuf t, cell;
    sb_init(&t);
    sb_init(&cell);
    sb_puts(&t, "| variant |");
    for (int a = 0; a < in->narch; a++)
        sb_printf(&t, " %s |", in->archs[a]);
    sb_puts(&t, "\n|---|");
    for (int a = 0; a < in->narch; a++)
        sb_puts(&t, "---|");
    sb_putc(&t, '\n');
    for (int v = 0; v < in->nvar; v++) {
        sb_printf(&t, "| %s |", in->labels[v]);
        for (int a = 0; a < in->narch; a++) {
            size_t at = (size_t)v * (size_t)in->narch + (size_t)a;
            sb_reset(&cell);
            if (in->present[at])
                inspect_tags(&in->facts[at], &cell);
            else
                sb_puts(&cell, "(not in this arch's plan)");
            sb_printf(&t, " %s |", sb_str(&cell));
        }
        sb_putc(&t, '\n');
    }
    printf("%s", sb_str(&t));
    sb_free(&t);
    sb_free(&cell);
}

int cmd_inspect(int argc, char **argv)
{
    Inspection *in = mem_calloc(1, sizeof *in);
    int rc = 0;
    if (cli_parse_spec(&cmd_inspect_verb, argc, argv, &in->o, &rc) == 0) {
        in->narch = cli_archs(&in->o, in->archs, 16);
        if (!(in->dis = inspect_find_disassembler()))
            fprintf(in->o.format != CLI_TEXT ? stderr : stdout,
                    "note: SASS needs nvdisasm or cuobjdump (neither found): PTX analysis only\n");
        if (in->o.format != CLI_TEXT)
            in->rows = results_rows_open(stdout, (ResultsFormat)in->o.format, inspect_cols, NINSPECT);
        if (in->rows)
            results_rows_json(in->rows, 7);     /* facts */
        in->cache = in->o.cache_dir ? mem_strdup(in->o.cache_dir) : jit_default_cache_dir();
        in->cap = 64;
        in->labels = mem_calloc((size_t)in->cap, sizeof(char *));
        in->facts = mem_calloc((size_t)in->cap * (size_t)in->narch, sizeof(InspectFacts));
        in->present = mem_calloc((size_t)in->cap * (size_t)in->narch, 1);
    }
    for (int ai = 0; rc == 0 && ai < in->narch; ai++)
        rc = inspect_arch(in, ai);
    if (rc == 0 && in->narch > 1 && !in->rows)
        print_table(in);
    results_rows_close(in->rows);
    for (int v = 0; v < in->nvar; v++)
        free(in->labels[v]);
    free(in->labels);
    free(in->facts);
    free(in->present);
    free(in->cache);
    free(in);
    return rc;
}
