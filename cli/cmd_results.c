/* cmd_results: the verbs that read and combine results (table, compare,
 * export, import, merge, report): their option tables, opening databases,
 * output files, and turning an error into a message and an exit status (0
 * ok, 2 bad usage or input, 3 a database or file failure).  The work is done
 * by the results_* functions of results.h.
 *
 * --spec NAME is a spec's name: (the name its cases are stored under) in
 * every verb that has it; a spec file is the SPEC operand (report) or
 * --spec-file PATH (table, compare). */
#include "cli.h"
#include "report/results.h"
#include "run/run.h"
#include "gen/spec.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- values of the options --------------------------------------------------------------- */

/* --spec: the rule of a spec's name: (the spec loader's), so that a path
 * given for a name is an error that says so rather than "no cases". */
static int set_spec_name(CliSet *s)
{
    const char *v = s->value;
    int ok = *v && strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(v);
    if (!ok)
        snprintf(s->why, sizeof s->why, "--spec is '%s' (expected a spec's name: letters, digits, _ and -, "
                 "as in its name:; --spec-file or the SPEC operand takes a path)", v);
    else
        *(const char **)s->field = v;
    return ok ? 0 : -1;
}

static const CliChoice formats[] = {
    {"md", RESULTS_MD}, {"csv", RESULTS_CSV}, {"json", RESULTS_JSON}, {NULL, 0},
};
/* export's: the table formats, nvbench's JSON and Kernel Tuner's cache file
 * (run/search_kt.c, search_kt_export). */
enum { EXPORT_KERNELTUNER = RESULTS_NVBENCH + 1 };
static const CliChoice export_formats[] = {
    {"csv", RESULTS_CSV}, {"json", RESULTS_JSON}, {"nvbench", RESULTS_NVBENCH},
    {"kerneltuner", EXPORT_KERNELTUNER}, {NULL, 0}};

/* What table and compare read from the command line. */
typedef struct TableArgs {
    TableOpts o;
    int format;                 /* a ResultsFormat, as --format gives it */
    const char *where_a, *where_b;
    const char *db;
    const char *out;
    const char *spec_file;
    Spec *spec;                 /* loaded for --where's let: names, or NULL */
    Arena *arena;
} TableArgs;

static int set_rows(CliSet *s)
{
    TableArgs *ta = s->opts;
    ta->o.rows = results_split(ta->arena, s->value, &ta->o.nrows);
    return 0;
}

static int set_cols(CliSet *s)
{
    TableArgs *ta = s->opts;
    ta->o.cols = results_split(ta->arena, s->value, &ta->o.ncols);
    return 0;
}

static int set_speedup(CliSet *s)
{
    *(int *)s->field = 2;
    return 0;
}

/* A baseline without --speedup means a ratio. */
static int set_baseline(CliSet *s)
{
    TableArgs *ta = s->opts;
    ta->o.baseline = s->value;
    ta->o.ratio = ta->o.ratio ? ta->o.ratio : 1;
    return 0;
}

/* ---- the option tables --------------------------------------------------------------------- */

#define TA(field) offsetof(TableArgs, field)
#define OPT_DB(T)                                                                                           \
    CLI_OPT("db", 0, CLI_PATH, "PATH", RESULTS_DEFAULT_DB, "the results database", offsetof(T, db))
#define OPT_SPEC(at)                                                                                        \
    CLI_OPT("spec", 0, CLI_STRING, "NAME", "the one spec stored",                                           \
            "the spec whose cases are read, by its name: (not a path)", at, .set = set_spec_name)
#define OPT_RUN(at)                                                                                         \
    CLI_OPT("run", 0, CLI_INT64, "ID", "every run", "only the cases of that run", at, .lo = 1,              \
            .hi = 9.2e18, .expect = "a run id: a whole number >= 1")
#define OPT_FAILED_VALUES(at)                                                                               \
    CLI_OPT("failed-values", 0, CLI_FLAG, NULL, NULL,                                                       \
            "a failed case with a stored value (mismatch) shows it, marked", at)
#define OPT_OUT_FILE(at)                                                                                    \
    CLI_OPT("out", 0, CLI_PATH, "FILE", "stdout", "write there, whole or not at all (a regular file only)", \
            at)
/* What table and compare share: the shape of the table. */
#define TABLE_SHAPE                                                                                         \
    CLI_OPT("rows", 0, CLI_STRING, "AXIS,...", NULL, "axes down the side", TA(o.rows), .set = set_rows),    \
    CLI_OPT("cols", 0, CLI_STRING, "AXIS,...", NULL, "axes across", TA(o.cols), .set = set_cols),           \
    CLI_OPT("value", 0, CLI_STRING, "V", "median_ms",                                                       \
            "the stored value in the cells (docs/results-schema.md)", TA(o.value)),                         \
    CLI_OPT("ratio", 0, CLI_FLAG, NULL, NULL, "each value over its baseline's", TA(o.ratio)),               \
    CLI_OPT("speedup", 0, CLI_FLAG, NULL, NULL, "the baseline's value over each, a speed-up",               \
            TA(o.ratio), .set = set_speedup),                                                               \
    CLI_OPT("baseline", 0, CLI_STRING, "AXIS=VALUE,...", "the baseline the run stored",                     \
            "what --ratio and --speedup divide by (alone: --ratio)", TA(o.baseline),                        \
            .set = set_baseline),                                                                           \
    CLI_OPT("where", 0, CLI_STRING, "EXPR", NULL,                                                           \
            "only the cases where EXPR holds (axes, status, values)", TA(o.where),                          \
            .flags = CLI_AND),                                                                              \
    CLI_OPT("spec-file", 0, CLI_PATH, "PATH", "the spec path the run stored, when it still loads",          \
            "the spec whose let: names --where may use", TA(spec_file)),                                    \
    CLI_OPT("format", 0, CLI_CHOICE, NULL, "md", "the output's format", TA(format), .choices = formats)

static const CliOpt table_opts[] = {
    OPT_DB(TableArgs),
    OPT_SPEC(TA(o.sel.spec)),
    TABLE_SHAPE,
    OPT_RUN(TA(o.sel.run_id)),
    CLI_OPT("ref", 0, CLI_STRING, "NAME", NULL, "only the imported reference of that name",
            TA(o.sel.ref_name)),
    OPT_FAILED_VALUES(TA(o.failed_values)),
    CLI_OPT("best", 0, CLI_FLAG, NULL, NULL,
            "per value of the --rows axes, the best passing case (named by the other axes that vary), its "
            "value and the runner-up's", TA(o.best)),
    CLI_OPT("failures", 0, CLI_FLAG, NULL, NULL,
            "the failed cases (status not ok) among the selected, one row each: the axes, the status and the "
            "stored detail (the error, or the first differing elements); none failed: a note, exit 0",
            TA(o.failures)),
    CLI_OPT("beside", 0, CLI_STRING, "AXIS=V,...", NULL,
            "with --best: the cases at these values (a library's calls, imported) are shown beside the best, "
            "not among its candidates, with how many times better the best is", TA(o.beside)),
    OPT_OUT_FILE(TA(out)),
    {0},
};

static const CliOpt compare_opts[] = {
    OPT_DB(TableArgs),
    OPT_SPEC(TA(o.sel.spec)),
    TABLE_SHAPE,
    CLI_OPT("where-a", 0, CLI_STRING, "EXPR", NULL, "and on A's side only", TA(where_a), .flags = CLI_AND),
    CLI_OPT("where-b", 0, CLI_STRING, "EXPR", NULL, "and on B's side only", TA(where_b), .flags = CLI_AND),
    CLI_OPT("min-diff", 0, CLI_DOUBLE, "X", NULL, "the smallest |B-A|/|A| marked *", TA(o.min_diff), .lo = 0,
            .hi = 1e6, .expect = "a relative difference from 0 to 10^6: 0.02 is 2%",
            .flags = CLI_SHOW_DEFAULT),
    OPT_OUT_FILE(TA(out)),
    {0},
};

typedef struct ExportArgs {
    const char *db, *spec, *out;
    int format;
    const char *objective;      /* --format kerneltuner */
} ExportArgs;

static const CliOpt export_opts[] = {
    OPT_DB(ExportArgs),
    OPT_SPEC(offsetof(ExportArgs, spec)),
    CLI_OPT("format", 0, CLI_CHOICE, NULL, "csv", "the output's format (kerneltuner: Kernel Tuner's cache "
            "file of the variants, for its simulation mode)", offsetof(ExportArgs, format),
            .choices = export_formats),
    CLI_OPT("objective", 0, CLI_STRING, "VALUE[,POINTS]", "median_ms",
            "with --format kerneltuner: each variant's objective, a geometric mean over the points where "
            "POINTS holds (a time under time; gbs and any other under its own name, with "
            "objective_higher_is_better)", offsetof(ExportArgs, objective)),
    OPT_OUT_FILE(offsetof(ExportArgs, out)),
    {0},
};

typedef struct ImportArgs {
    const char *db;
    ImportOpts io;
} ImportArgs;

static const CliOpt import_opts[] = {
    CLI_OPT("name", 0, CLI_STRING, "NAME", NULL, "the reference's name, [A-Za-z_][A-Za-z0-9_]*",
            offsetof(ImportArgs, io.name), .flags = CLI_REQUIRED),
    OPT_DB(ImportArgs),
    CLI_OPT("spec", 0, CLI_STRING, "NAME", "--name", "the spec name the rows are filed under (not a path)",
            offsetof(ImportArgs, io.spec), .set = set_spec_name),
    CLI_OPT("gpu", 0, CLI_STRING, "GPU", NULL, "the GPU the figures were measured on (\"RTX 5090\")",
            offsetof(ImportArgs, io.gpu)),
    {0},
};

typedef struct ReportArgs {
    const char *db, *out;
    int64_t run;
    int failed_values;
} ReportArgs;

static const CliOpt report_opts[] = {
    OPT_DB(ReportArgs),
    CLI_OPT("out", 0, CLI_PATH, "DIR", "results", "where DIR/SPEC.md and its plots go",
            offsetof(ReportArgs, out)),
    OPT_RUN(offsetof(ReportArgs, run)),
    OPT_FAILED_VALUES(offsetof(ReportArgs, failed_values)),
    {0},
};

static const CliOpt merge_opts[] = {{0}};

const CliVerb cmd_table_verb = {
    .name = "table",
    .operands = "",
    .operands_are = "no operands",
    .min_operands = 0,
    .max_operands = 0,
    .summary = "pivot stored results: any axes to rows and columns",
    .opts_size = sizeof(TableArgs),
    .opts = table_opts,
    .run = cmd_table,
};
const CliVerb cmd_compare_verb = {
    .name = "compare",
    .operands = "A B",
    .operands_are = "two result sets, A and B",
    .min_operands = 2,
    .max_operands = 2,
    .summary = "two result sets side by side (GPUs, toolkits, runs)",
    .opts_size = sizeof(TableArgs),
    .opts = compare_opts,
    .notes = "A and B: DB, DB:run=ID, DB:ref=NAME, or ref:NAME (an import in --db).\n"
             "--ratio without --baseline: a B that stores no baseline (a reference) takes A's.\n",
    .run = cmd_compare,
};
const CliVerb cmd_export_verb = {
    .name = "export",
    .operands = "",
    .operands_are = "no operands",
    .min_operands = 0,
    .max_operands = 0,
    .summary = "every stored row as CSV or JSON, the measured cases in nvbench's JSON shape, or the"
                " variants as Kernel Tuner's cache file",
    .opts_size = sizeof(ExportArgs),
    .opts = export_opts,
    .run = cmd_export,
};
const CliVerb cmd_import_verb = {
    .name = "import",
    .operands = "FILE",
    .operands_are = "one CSV, nvbench JSON or Kernel Tuner cache file",
    .min_operands = 1,
    .max_operands = 1,
    .summary = "published reference figures (CSV, nvbench's JSON, a Kernel Tuner cache) as a named run",
    .opts_size = sizeof(ImportArgs),
    .opts = import_opts,
    .notes = "FILE: a CSV with a header of axis columns, then value columns (median_ms, min_ms, mean_ms,\n"
             "max_ms, stdev_ms, noise, gbs, pct_peak, ..., status), one row per point; or nvbench's JSON\n"
             "result, one row per state (docs/results-schema.md says how its noise maps to kvx's); or a\n"
             "Kernel Tuner cache file (closed, or left open by an interrupted tuning), one row per entry:\n"
             "the tune parameters as axes, time as mean_ms, the median, min, max and stdev of times, GB/s\n"
             "as gbs, its errors as statuses (InvalidConfig: skipped, CompilationFailedConfig:\n"
             "compile_error, RuntimeFailedConfig and ErrorConfig: launch_error); the fields no column holds\n"
             "(compile_time, ...) are named on stderr.\n",
    .run = cmd_import,
};
const CliVerb cmd_merge_verb = {
    .name = "merge",
    .operands = "OUT.db IN.db...",
    .operands_are = "an output and at least one input",
    .min_operands = 2,
    .max_operands = -1,
    .summary = "combine result databases (one row per case key)",
    .opts_size = sizeof(char),
    .opts = merge_opts,
    .run = cmd_merge,
};
const CliVerb cmd_report_verb = {
    .name = "report",
    .operands = "SPEC",
    .operands_are = "one SPEC file",
    .min_operands = 1,
    .max_operands = 1,
    .summary = "a Markdown report with tables and plots for a spec",
    .opts_size = sizeof(ReportArgs),
    .opts = report_opts,
    .run = cmd_report,
};

/* ---- output files and errors ----------------------------------------------------------------- */

/* The temporary output being written, removed by SIGINT, SIGTERM or SIGHUP
 * (the signal then re-raised, its default action restored by SA_RESETHAND),
 * so that a killed table or export leaves no *.tmpXXXXXX beside its --out.
 * One output at a time per process; the handler touches only this buffer. */
static char tmp_live[4200];
static const int tmp_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction tmp_old[sizeof tmp_sigs / sizeof tmp_sigs[0]];

static void tmp_on_signal(int sig)
{
    if (tmp_live[0])
        unlink(tmp_live);
    raise(sig);
}

/* mkstemp on template (kept in tmp_live) with the handlers in place; signals
 * held meanwhile, so none finds a file not yet named.  The fd, or -1. */
static int tmp_create(const char *template)
{
    sigset_t hold, was;
    sigemptyset(&hold);
    for (size_t i = 0; i < sizeof tmp_sigs / sizeof tmp_sigs[0]; i++)
        sigaddset(&hold, tmp_sigs[i]);
    if (strlen(template) >= sizeof tmp_live) {
        errno = ENAMETOOLONG;
        return -1;
    }
    sigprocmask(SIG_BLOCK, &hold, &was);
    snprintf(tmp_live, sizeof tmp_live, "%s", template);
    int fd = mkstemp(tmp_live);
    if (fd < 0) {
        tmp_live[0] = 0;
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tmp_on_signal;
        sa.sa_flags = SA_RESETHAND;
        for (size_t i = 0; i < sizeof tmp_sigs / sizeof tmp_sigs[0]; i++)
            sigaction(tmp_sigs[i], &sa, &tmp_old[i]);
    }
    sigprocmask(SIG_SETMASK, &was, NULL);
    return fd;
}

/* The temporary is gone (renamed or removed): the handlers as they were. */
static void tmp_done(void)
{
    if (!tmp_live[0])
        return;
    for (size_t i = 0; i < sizeof tmp_sigs / sizeof tmp_sigs[0]; i++)
        sigaction(tmp_sigs[i], &tmp_old[i], NULL);
    tmp_live[0] = 0;
}

/* Write through a temporary in the destination's folder, renamed over it
 * only at the end, so that a failed table leaves no half file.  Only a
 * regular file is replaced: a device (as root, --out /dev/null would have
 * become a file), a directory or a symbolic link is an error.  NULL after
 * saying why. */
static FILE *out_open(const char *path, char **tmp)
{
    *tmp = NULL;
    if (!path)
        return stdout;
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "kvx: cannot write '%s': it is %s (expected a regular file)\n", path,
                S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link"
                                                                            : "not a regular file");
        return NULL;
    }
    size_t n = strlen(path) + 16;
    *tmp = mem_alloc(n);
    snprintf(*tmp, n, "%s.tmpXXXXXX", path);
    int fd = tmp_create(*tmp);
    if (fd >= 0)
        snprintf(*tmp, n, "%s", tmp_live);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        fprintf(stderr, "kvx: cannot write '%s': %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
            tmp_done();
        }
        free(*tmp);
        *tmp = NULL;
        return NULL;
    }
    /* mkstemp makes it 0600; an output is as readable as any file made here. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    return f;
}

/* Close f and, when ok, put it in place.  0, or KVX_EIO after saying why.
 * stdout is main()'s to flush and check, as for every verb. */
static int out_close(FILE *f, const char *path, char *tmp, int ok)
{
    int rc = 0;
    if (f && f != stdout) {
        rc = fclose(f);
        if (ok && !rc && rename(tmp, path))
            rc = -1;
        if (ok && rc)
            fprintf(stderr, "kvx: cannot write '%s': %s\n", path, strerror(errno));
        if (!ok || rc)
            remove(tmp);
        tmp_done();
    }
    free(tmp);
    return rc ? KVX_EIO : 0;
}

static int exit_of(const KvxError *err)
{
    kvx_error_print(err, stderr);
    return err->code == KVX_EINPUT ? KVX_EINPUT : err->code ? KVX_EIO : 0;
}

/* What write(ctx, f, err) writes, to path (stdout when NULL), all or
 * nothing.  The exit status. */
static int write_out(const char *path, int (*write)(void *ctx, FILE *f, KvxError *err), void *ctx,
                     KvxError *err)
{
    char *tmp;
    FILE *f = out_open(path, &tmp);
    if (!f)
        return KVX_EIO;
    int fail = write(ctx, f, err);
    int wrc = out_close(f, path, tmp, !fail);
    if (fail == 1) {
        /* Nothing matched: a finding, not an error (a run without failures). */
        fprintf(stderr, "kvx: %s: nothing to list\n%s", err->msg, err->log ? err->log : "");
        return 0;
    }
    return fail ? exit_of(err) : wrc;
}

/* ---- table ---------------------------------------------------------------------------------- */

/* The newest spec_path stored by a run of the selected spec that still
 * loads as that spec, or NULL. */
static Spec *stored_spec(Store *db, const char *name)
{
    Spec *spec = NULL;
    KvxError quiet = {0};
    Arena *a = arena_new();
    const char **paths;
    int n;
    if (store_spec_paths(db, name, a, &paths, &n))
        n = 0;
    for (int i = 0; i < n && !spec; i++) {
        if (access(paths[i], R_OK) != 0)
            continue;
        spec = spec_load(paths[i], &quiet);
        kvx_error_clear(&quiet);
        /* Another spec at that path now: its lets are not this data's. */
        if (spec && strcmp(spec->name, name)) {
            spec_free(spec);
            spec = NULL;
        }
    }
    arena_free(a);
    return spec;
}

/* The spec whose `let:` names --where may use, as `kvx report` lends its own:
 * --spec-file PATH (an error if it does not load), else, when there is a
 * --where, the newest spec_path stored by a run of the selected spec that
 * still loads (quietly none otherwise: the where then stands on its own).
 * The lets are translated into the same bound-parameter SQL as the rest. */
static int where_spec(TableArgs *ta, Store *db, const ResultsSel *sel, KvxError *err)
{
    if (ta->spec_file) {
        ta->spec = spec_load(ta->spec_file, err);
        ta->o.spec = ta->spec;
        return ta->spec ? 0 : -1;
    }
    if (!ta->o.where || !*ta->o.where)
        return 0;
    ResultsSel s = *sel;
    KvxError quiet = {0};
    if (results_resolve_spec(db, &s, ta->arena, &quiet)) {
        kvx_error_clear(&quiet);
        return 0;   /* the table says why */
    }
    ta->spec = stored_spec(db, s.spec);
    ta->o.spec = ta->spec;
    return 0;
}

typedef struct TableWrite {
    Store *db;
    const TableArgs *ta;
} TableWrite;

static int table_write(void *ctx, FILE *f, KvxError *err)
{
    TableWrite *t = ctx;
    return results_table(t->db, &t->ta->o, f, err);
}

static int table_run(TableArgs *ta)
{
    KvxError err = {0};
    int rc;
    ta->o.format = (ResultsFormat)ta->format;
    Store *db = store_read_open(ta->db, &err);
    if (!db || where_spec(ta, db, &ta->o.sel, &err)) {
        rc = exit_of(&err);
    } else {
        TableWrite t = {db, ta};
        rc = write_out(ta->out, table_write, &t, &err);
    }
    store_close(db);
    kvx_error_clear(&err);
    return rc;
}

int cmd_table(int argc, char **argv)
{
    TableArgs ta = {.db = RESULTS_DEFAULT_DB, .arena = arena_new()};
    CliArgs a;
    int rc = cli_parse(&cmd_table_verb, argc, argv, &ta, &a) ? a.status : table_run(&ta);
    spec_free(ta.spec);
    arena_free(ta.arena);
    return rc;
}

/* ---- compare -------------------------------------------------------------------------------- */

/* A side of a comparison: PATH, PATH:run=ID, PATH:ref=NAME or ref:NAME (in --db). */
static int parse_selector(const char *s, const char *default_db, Arena *a, const char **db,
                          ResultsSel *sel, KvxError *err)
{
    memset(sel, 0, sizeof *sel);
    if (!strncmp(s, "ref:", 4)) {
        *db = default_db;
        sel->ref_name = arena_strdup(a, s + 4);
        return 0;
    }
    const char *run = strstr(s, ":run="), *ref = strstr(s, ":ref=");
    const char *cut = run ? run : ref;
    if (!cut) {
        *db = s;
        return 0;
    }
    *db = arena_strndup(a, s, (size_t)(cut - s));
    if (ref) {
        sel->ref_name = arena_strdup(a, ref + 5);
        return 0;
    }
    char *end;
    long long id = strtoll(run + 5, &end, 10);
    if (*end || id <= 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "'%s': expected DB:run=ID with a positive id", s);
        return -1;
    }
    sel->run_id = id;
    return 0;
}

typedef struct Comparison {
    CompareSide a, b;
    const TableArgs *ta;
} Comparison;

static int compare_write(void *ctx, FILE *f, KvxError *err)
{
    Comparison *c = ctx;
    return results_compare(&c->a, &c->b, &c->ta->o, f, err);
}

/* The sides' databases opened, then the comparison written.  The exit status. */
static int compare_run(TableArgs *ta, char **ab)
{
    KvxError err = {0};
    Comparison c = {.a = {.name = ab[0], .where = ta->where_a}, .b = {.name = ab[1], .where = ta->where_b},
                    .ta = ta};
    const char *pa, *pb;
    int rc;
    ta->o.format = (ResultsFormat)ta->format;
    if (parse_selector(ab[0], ta->db, ta->arena, &pa, &c.a.sel, &err) ||
        parse_selector(ab[1], ta->db, ta->arena, &pb, &c.b.sel, &err)) {
        rc = exit_of(&err);
    } else {
        c.a.sel.spec = c.b.sel.spec = ta->o.sel.spec;
        if (!(c.a.db = store_read_open(pa, &err)) || !(c.b.db = store_read_open(pb, &err)) ||
            where_spec(ta, c.a.db, &c.a.sel, &err))
            rc = exit_of(&err);
        else
            rc = write_out(ta->out, compare_write, &c, &err);
    }
    store_close(c.a.db);
    store_close(c.b.db);
    kvx_error_clear(&err);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    TableArgs ta = {.db = RESULTS_DEFAULT_DB, .arena = arena_new()};
    ta.o.min_diff = 0.02;   /* a 0.2% step on a near-noiseless case is no finding */
    CliArgs a;
    int rc = cli_parse(&cmd_compare_verb, argc, argv, &ta, &a) ? a.status : compare_run(&ta, a.operand);
    spec_free(ta.spec);
    arena_free(ta.arena);
    return rc;
}

/* ---- export, import ------------------------------------------------------------------------- */

typedef struct ExportWrite {
    Store *db;
    const ExportArgs *ea;
} ExportWrite;

static int export_write(void *ctx, FILE *f, KvxError *err)
{
    ExportWrite *x = ctx;
    if (x->ea->format == EXPORT_KERNELTUNER)
        return search_kt_export(x->db, x->ea->spec, x->ea->objective, f, err);
    return results_export(x->db, x->ea->spec, (ResultsFormat)x->ea->format, f, err);
}

int cmd_export(int argc, char **argv)
{
    ExportArgs ea = {.db = RESULTS_DEFAULT_DB, .format = RESULTS_CSV, .objective = "median_ms"};
    CliArgs a;
    if (cli_parse(&cmd_export_verb, argc, argv, &ea, &a))
        return a.status;
    KvxError err = {0};
    int rc;
    Store *db = store_read_open(ea.db, &err);
    /* An unknown --spec is an error, as in kvx table, not an empty file. */
    Arena *ar = arena_new();
    ResultsSel sel = {.spec = ea.spec};
    /* Kernel Tuner's file is of one spec: the one stored, or --spec. */
    int one = ea.spec || ea.format == EXPORT_KERNELTUNER;
    if (!db || (one && results_resolve_spec(db, &sel, ar, &err))) {
        rc = exit_of(&err);
    } else {
        ea.spec = sel.spec;
        ExportWrite x = {db, &ea};
        rc = write_out(ea.out, export_write, &x, &err);
    }
    arena_free(ar);
    store_close(db);
    kvx_error_clear(&err);
    return rc;
}

int cmd_import(int argc, char **argv)
{
    ImportArgs ia = {.db = RESULTS_DEFAULT_DB};
    CliArgs a;
    if (cli_parse(&cmd_import_verb, argc, argv, &ia, &a))
        return a.status;
    StrBuf cmd;
    sb_init(&cmd);
    sb_puts(&cmd, "kvx");
    for (int i = 0; i < argc; i++)
        sb_printf(&cmd, " %s", argv[i]);
    ia.io.source = sb_str(&cmd);
    KvxError err = {0};
    int n = 0, rc = 0;
    const char *csv = a.operand[0];
    StrBuf left;
    sb_init(&left);
    ia.io.left = &left;
    Store *st = store_open(ia.db, &err);
    if (!st || results_import(st, csv, &ia.io, &n, &err))
        rc = exit_of(&err);
    else
        printf("imported %d rows from %s as reference '%s' (spec %s) into %s\n", n, csv, ia.io.name,
               ia.io.spec ? ia.io.spec : ia.io.name, ia.db);
    if (!rc && left.len)
        fprintf(stderr, "kvx import: %s: not stored (kvx has no column for them): %s\n", csv, sb_str(&left));
    store_close(st);
    sb_free(&left);
    sb_free(&cmd);
    kvx_error_clear(&err);
    return rc;
}

/* ---- merge, report -------------------------------------------------------------------------- */

/* A new output that got nothing is removed with its journal files. */
static void merge_undo(const char *outp)
{
    char side[4096];
    unlink(outp);
    snprintf(side, sizeof side, "%s-wal", outp);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", outp);
    unlink(side);
}

/* The inputs one by one into out.  0 or the exit status. */
static int merge_inputs(Store *out, char **in, int n, KvxError *err)
{
    for (int i = 0; i < n; i++) {
        MergeStats s;
        if (store_merge(out, in[i], &s, err))
            return exit_of(err);
        printf("%s: runs %d added, %d already present; variants %d added; cases %d added,"
               " %d already present (kept as they were)\n", in[i], s.runs_added, s.runs_found,
               s.variants_added, s.cases_added, s.cases_present);
    }
    return 0;
}

/* 1 after saying so when an input is the output itself (by device and
 * inode: another name, a link): SQLite would wait for the output's own write
 * lock, then fail with "database is locked". */
static int merge_same_file(const char *outp, char **in, int n)
{
    struct stat o, st;
    if (stat(outp, &o) != 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (stat(in[i], &st) == 0 && st.st_dev == o.st_dev && st.st_ino == o.st_ino) {
            fprintf(stderr, "kvx merge: '%s' is the output '%s' itself: nothing to merge\n", in[i], outp);
            return 1;
        }
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    CliArgs a;
    char none = 0;
    if (cli_parse(&cmd_merge_verb, argc, argv, &none, &a))
        return a.status;
    /* Every input checked before the output is made: a missing one left an
     * empty OUT.db behind. */
    for (int i = 1; i < a.noperands; i++)
        if (access(a.operand[i], R_OK) != 0) {
            fprintf(stderr, "kvx: cannot read '%s': %s\n", a.operand[i], strerror(errno));
            return KVX_EINPUT;
        }
    KvxError err = {0};
    const char *outp = a.operand[0];
    if (merge_same_file(outp, a.operand + 1, a.noperands - 1))
        return KVX_EINPUT;
    int existed = access(outp, F_OK) == 0;
    Store *out = store_open(outp, &err);
    if (!out) {
        int rc = exit_of(&err);
        kvx_error_clear(&err);
        return rc;
    }
    int rc = merge_inputs(out, a.operand + 1, a.noperands - 1, &err);
    store_close(out);
    if (rc && !existed)
        merge_undo(outp);
    kvx_error_clear(&err);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    ReportArgs ra = {.db = RESULTS_DEFAULT_DB, .out = "results"};
    CliArgs a;
    if (cli_parse(&cmd_report_verb, argc, argv, &ra, &a))
        return a.status;
    KvxError err = {0};
    Store *db = store_read_open(ra.db, &err);
    char *written = NULL;
    int rc = 0;
    if (!db || results_report(db, a.operand[0], ra.out, ra.run, ra.failed_values, &written, &err))
        rc = exit_of(&err);
    else
        printf("wrote %s\n", written);
    free(written);
    store_close(db);
    kvx_error_clear(&err);
    return rc;
}
