/* results_cmd: the command lines of the results verbs (table, compare,
 * export, import, merge, report): option parsing, opening databases, output
 * files, and turning an error into a message and an exit status.  The work is
 * done by the results_* functions of results.h. */
#include "results.h"
#include "../gen/spec.h"

#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the verbs ------------------------------------------------------------- */

static int usage_fail(const char *verb, const char *usage, const char *msg)
{
    if (msg)
        fprintf(stderr, "kvx %s: %s\n", verb, msg);
    fprintf(stderr, "usage: kvx %s %s\n", verb, usage);
    return KVX_EINPUT;
}

/* Options the table-like verbs share. */
enum { OPT_DB = 1000, OPT_SPEC, OPT_ROWS, OPT_COLS, OPT_VALUE, OPT_RATIO, OPT_SPEEDUP, OPT_BASELINE,
       OPT_WHERE, OPT_RUN, OPT_REF, OPT_FORMAT, OPT_OUT, OPT_WHERE_A, OPT_WHERE_B,
       OPT_SPEC_FILE, OPT_FAILED_VALUES, OPT_MIN_DIFF, OPT_BEST };

static const struct option table_options[] = {
    {"db", required_argument, NULL, OPT_DB},
    {"spec", required_argument, NULL, OPT_SPEC},
    {"rows", required_argument, NULL, OPT_ROWS},
    {"cols", required_argument, NULL, OPT_COLS},
    {"value", required_argument, NULL, OPT_VALUE},
    {"ratio", no_argument, NULL, OPT_RATIO},
    {"speedup", no_argument, NULL, OPT_SPEEDUP},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"where", required_argument, NULL, OPT_WHERE},
    {"run", required_argument, NULL, OPT_RUN},
    {"ref", required_argument, NULL, OPT_REF},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"out", required_argument, NULL, OPT_OUT},
    {"spec-file", required_argument, NULL, OPT_SPEC_FILE},
    {"failed-values", no_argument, NULL, OPT_FAILED_VALUES},
    {"best", no_argument, NULL, OPT_BEST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct option compare_options[] = {
    {"db", required_argument, NULL, OPT_DB},
    {"spec", required_argument, NULL, OPT_SPEC},
    {"rows", required_argument, NULL, OPT_ROWS},
    {"cols", required_argument, NULL, OPT_COLS},
    {"value", required_argument, NULL, OPT_VALUE},
    {"ratio", no_argument, NULL, OPT_RATIO},
    {"speedup", no_argument, NULL, OPT_SPEEDUP},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"where", required_argument, NULL, OPT_WHERE},
    {"where-a", required_argument, NULL, OPT_WHERE_A},
    {"where-b", required_argument, NULL, OPT_WHERE_B},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"out", required_argument, NULL, OPT_OUT},
    {"spec-file", required_argument, NULL, OPT_SPEC_FILE},
    {"min-diff", required_argument, NULL, OPT_MIN_DIFF},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct TableArgs {
    const char *where_a, *where_b;
    TableOpts o;
    const char *db;
    const char *out;
    const char *spec_file;
    Spec *spec;          /* loaded for --where's let: names, or NULL */
    Arena *arena;
} TableArgs;

/* Parse one option into ta.  0, or an exit status. */
static int table_opt(TableArgs *ta, int c, const char *arg, const char *verb, const char *usage)
{
    char buf[160];
    switch (c) {
    case OPT_DB: ta->db = arg; return 0;
    case OPT_SPEC: ta->o.sel.spec = arg; return 0;
    case OPT_ROWS: ta->o.rows = results_split(ta->arena, arg, &ta->o.nrows); return 0;
    case OPT_COLS: ta->o.cols = results_split(ta->arena, arg, &ta->o.ncols); return 0;
    case OPT_VALUE: ta->o.value = arg; return 0;
    case OPT_RATIO: ta->o.ratio = 1; return 0;
    case OPT_SPEEDUP: ta->o.ratio = 2; return 0;
    case OPT_BASELINE: ta->o.baseline = arg; ta->o.ratio = ta->o.ratio ? ta->o.ratio : 1; return 0;
    case OPT_WHERE: ta->o.where = arg; return 0;
    case OPT_REF: ta->o.sel.ref_name = arg; return 0;
    case OPT_OUT: ta->out = arg; return 0;
    case OPT_WHERE_A: ta->where_a = arg; return 0;
    case OPT_WHERE_B: ta->where_b = arg; return 0;
    case OPT_SPEC_FILE: ta->spec_file = arg; return 0;
    case OPT_FAILED_VALUES: ta->o.failed_values = 1; return 0;
    case OPT_BEST: ta->o.best = 1; return 0;
    case OPT_MIN_DIFF: {
        char *end;
        double d = strtod(arg, &end);
        if (end == arg || *end || !(d >= 0 && d < 1e6)) {
            snprintf(buf, sizeof buf, "--min-diff wants a relative difference >= 0 (0.02 is 2%%),"
                     " not '%s'", arg);
            return usage_fail(verb, usage, buf);
        }
        ta->o.min_diff = d;
        return 0;
    }
    case OPT_RUN: {
        char *end;
        long long id = strtoll(arg, &end, 10);
        if (*end || id <= 0) {
            snprintf(buf, sizeof buf, "--run wants a run id (a positive integer), not '%s'", arg);
            return usage_fail(verb, usage, buf);
        }
        ta->o.sel.run_id = id;
        return 0;
    }
    case OPT_FORMAT:
        if (results_format_parse(arg, &ta->o.format)) {
            snprintf(buf, sizeof buf, "--format wants md, csv or json, not '%s'", arg);
            return usage_fail(verb, usage, buf);
        }
        return 0;
    case 'h': return usage_fail(verb, usage, NULL) ? -1 : 0;
    default: return usage_fail(verb, usage, NULL);
    }
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
    *tmp = xmalloc(n);
    snprintf(*tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(*tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        fprintf(stderr, "kvx: cannot write '%s': %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
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

/* Close f and, when ok, put it in place.  0, or KVX_EIO after saying why. */
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
    } else if (f) {
        rc = fflush(f);
    }
    free(tmp);
    return rc ? KVX_EIO : 0;
}

static int exit_of(const KvxError *err)
{
    kvx_error_print(err, stderr);
    return err->code == KVX_EINPUT ? KVX_EINPUT : err->code ? KVX_EIO : 0;
}

/* The spec whose `let:` names --where may use, as `kvx report` lends its own:
 * --spec-file PATH (an error if it does not load), else, when there is a
 * --where, the newest spec_path stored by a run of the selected spec that
 * still loads (quietly none otherwise: the where then stands on its own).
 * The lets are translated into the same bound-parameter SQL as the rest. */
static int where_spec(TableArgs *ta, sqlite3 *db, const ResultsSel *sel, KvxError *err)
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
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT r.spec_path FROM runs r WHERE r.kind = 'run' AND"
                           " r.spec_path IS NOT NULL AND EXISTS (SELECT 1 FROM cases c WHERE"
                           " c.run_id = r.id AND c.spec_name = ?1) ORDER BY r.id DESC",
                           -1, &q, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(q, 1, s.spec, -1, SQLITE_TRANSIENT);
    while (!ta->spec && sqlite3_step(q) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(q, 0);
        if (access(path, R_OK) != 0)
            continue;
        ta->spec = spec_load(path, &quiet);
        kvx_error_clear(&quiet);
        /* Another spec at that path now: its lets are not this data's. */
        if (ta->spec && strcmp(ta->spec->name, s.spec)) {
            spec_free(ta->spec);
            ta->spec = NULL;
        }
    }
    sqlite3_finalize(q);
    ta->o.spec = ta->spec;
    return 0;
}

static const char table_usage[] =
    "[--db PATH] [--spec NAME] [--rows AXIS,...] [--cols AXIS,...] [--value V] [--ratio|--speedup]\n"
    "       [--baseline 'axis=value,...'] [--where EXPR] [--spec-file PATH] [--run ID | --ref NAME]\n"
    "       [--failed-values] [--best] [--format md|csv|json] [--out FILE]\n"
    "  --spec-file: the spec whose let: names --where may use (default: the spec path the\n"
    "  run stored, when it still loads)\n"
    "  --failed-values: a failed case with a stored value (mismatch) shows it, marked\n"
    "  --best: per value of the --rows axes, the best passing case (named by the other\n"
    "  axes that vary), its value and the runner-up's";

int cmd_table(int argc, char **argv)
{
    TableArgs ta = {.db = RESULTS_DEFAULT_DB, .arena = arena_new()};
    KvxError err = {0};
    int rc = 0, c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", table_options, NULL)) != -1)
        if ((rc = table_opt(&ta, c, optarg, "table", table_usage)))
            goto done;
    if (optind < argc) {
        rc = usage_fail("table", table_usage, "unexpected argument");
        goto done;
    }
    sqlite3 *db = results_open_existing(ta.db, &err);
    if (!db) {
        rc = exit_of(&err);
        goto done;
    }
    if (where_spec(&ta, db, &ta.o.sel, &err)) {
        rc = exit_of(&err);
        sqlite3_close(db);
        goto done;
    }
    char *tmp;
    FILE *f = out_open(ta.out, &tmp);
    if (!f) {
        rc = KVX_EIO;
    } else {
        int fail = results_table(db, &ta.o, f, &err);
        int wrc = out_close(f, ta.out, tmp, !fail);
        rc = fail ? exit_of(&err) : wrc;
    }
    sqlite3_close(db);
done:
    spec_free(ta.spec);
    arena_free(ta.arena);
    kvx_error_clear(&err);
    return rc < 0 ? 0 : rc;
}

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

static const char compare_usage[] =
    "A B [--db PATH] [--spec NAME] [--value V] [--rows AXIS,...] [--cols AXIS,...]\n"
    "       [--ratio|--speedup] [--baseline 'axis=value'] [--where EXPR] [--where-a EXPR]\n"
    "       [--where-b EXPR] [--spec-file PATH] [--min-diff X] [--format md|csv|json] [--out FILE]\n"
    "  A and B: DB, DB:run=ID, DB:ref=NAME, or ref:NAME (an import in --db)\n"
    "  --ratio without --baseline: a B that stores no baseline (a reference) takes A's\n"
    "  --min-diff: smallest |B-A|/|A| marked * (default 0.02)";

int cmd_compare(int argc, char **argv)
{
    TableArgs ta = {.db = RESULTS_DEFAULT_DB, .arena = arena_new()};
    ta.o.min_diff = 0.02;   /* a 0.2% step on a near-noiseless case is no finding */
    KvxError err = {0};
    int rc = 0, c;
    sqlite3 *dba = NULL, *dbb = NULL;
    FILE *f = NULL;
    char *tmp = NULL;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", compare_options, NULL)) != -1)
        if ((rc = table_opt(&ta, c, optarg, "compare", compare_usage)))
            goto done;
    if (argc - optind != 2) {
        rc = usage_fail("compare", compare_usage, "expected two result sets, A and B");
        goto done;
    }
    const char *pa, *pb;
    CompareSide sa = {.name = argv[optind], .where = ta.where_a};
    CompareSide sb = {.name = argv[optind + 1], .where = ta.where_b};
    if (parse_selector(argv[optind], ta.db, ta.arena, &pa, &sa.sel, &err) ||
        parse_selector(argv[optind + 1], ta.db, ta.arena, &pb, &sb.sel, &err)) {
        rc = exit_of(&err);
        goto done;
    }
    sa.sel.spec = sb.sel.spec = ta.o.sel.spec;
    if (!(sa.db = dba = results_open_existing(pa, &err)) ||
        !(sb.db = dbb = results_open_existing(pb, &err))) {
        rc = exit_of(&err);
        goto done;
    }
    if (where_spec(&ta, dba, &sa.sel, &err)) {
        rc = exit_of(&err);
        goto done;
    }
    if (!(f = out_open(ta.out, &tmp))) {
        rc = KVX_EIO;
        goto done;
    }
    int fail = results_compare(&sa, &sb, &ta.o, f, &err);
    int wrc = out_close(f, ta.out, tmp, !fail);
    rc = fail ? exit_of(&err) : wrc;
done:
    sqlite3_close(dba);
    sqlite3_close(dbb);
    spec_free(ta.spec);
    arena_free(ta.arena);
    kvx_error_clear(&err);
    return rc < 0 ? 0 : rc;
}

static const char export_usage[] = "[--db PATH] [--spec NAME] [--format csv|json] [--out FILE]";

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"out", required_argument, NULL, OPT_OUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dbpath = RESULTS_DEFAULT_DB, *spec = NULL, *outpath = NULL;
    ResultsFormat f = RESULTS_CSV;
    KvxError err = {0};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == OPT_DB)
            dbpath = optarg;
        else if (c == OPT_SPEC)
            spec = optarg;
        else if (c == OPT_OUT)
            outpath = optarg;
        else if (c == OPT_FORMAT && !results_format_parse(optarg, &f) && f != RESULTS_MD)
            continue;
        else if (c == OPT_FORMAT)
            return usage_fail("export", export_usage, "--format wants csv or json");
        else
            return c == 'h' ? (usage_fail("export", export_usage, NULL), 0)
                            : usage_fail("export", export_usage, NULL);
    }
    if (optind < argc)
        return usage_fail("export", export_usage, "unexpected argument");
    sqlite3 *db = results_open_existing(dbpath, &err);
    if (!db)
        return exit_of(&err);
    /* An unknown --spec is an error, as in kvx table, not an empty file. */
    Arena *a = arena_new();
    ResultsSel sel = {.spec = spec};
    int rc = KVX_EIO;
    if (spec && results_resolve_spec(db, &sel, a, &err)) {
        rc = exit_of(&err);
    } else {
        char *tmp;
        FILE *out = out_open(outpath, &tmp);
        if (out) {
            int fail = results_export(db, spec, f, out, &err);
            int wrc = out_close(out, outpath, tmp, !fail);
            rc = fail ? exit_of(&err) : wrc;
        }
    }
    arena_free(a);
    sqlite3_close(db);
    kvx_error_clear(&err);
    return rc;
}

static const char import_usage[] =
    "FILE.csv --name NAME [--db PATH] [--spec NAME] [--gpu \"RTX 5090\"]\n"
    "  FILE.csv: a header of axis columns, then value columns (median_ms, min_ms, mean_ms,\n"
    "  max_ms, stdev_ms, noise, gbs, pct_peak, ..., status); one row per point";

int cmd_import(int argc, char **argv)
{
    enum { OPT_NAME = 2000, OPT_GPU };
    static const struct option opts[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"name", required_argument, NULL, OPT_NAME},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dbpath = RESULTS_DEFAULT_DB;
    ImportOpts io = {0};
    KvxError err = {0};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == OPT_DB)
            dbpath = optarg;
        else if (c == OPT_SPEC)
            io.spec = optarg;
        else if (c == OPT_NAME)
            io.name = optarg;
        else if (c == OPT_GPU)
            io.gpu = optarg;
        else
            return c == 'h' ? (usage_fail("import", import_usage, NULL), 0)
                            : usage_fail("import", import_usage, NULL);
    }
    if (argc - optind != 1)
        return usage_fail("import", import_usage, "expected one CSV file");
    if (!io.name)
        return usage_fail("import", import_usage, "--name is required");
    StrBuf cmd;
    sb_init(&cmd);
    sb_puts(&cmd, "kvx");
    for (int i = 0; i < argc; i++)
        sb_printf(&cmd, " %s", argv[i]);
    io.source = sb_str(&cmd);
    int n = 0, rc = 0;
    Store *st = store_open(dbpath, &err);
    if (!st || results_import(st, argv[optind], &io, &n, &err))
        rc = exit_of(&err);
    else
        printf("imported %d rows from %s as reference '%s' (spec %s) into %s\n", n, argv[optind],
               io.name, io.spec ? io.spec : io.name, dbpath);
    store_close(st);
    sb_free(&cmd);
    kvx_error_clear(&err);
    return rc;
}

static const char merge_usage[] = "OUT.db IN.db...";

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    KvxError err = {0};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
        return c == 'h' ? (usage_fail("merge", merge_usage, NULL), 0)
                        : usage_fail("merge", merge_usage, NULL);
    if (argc - optind < 2)
        return usage_fail("merge", merge_usage, "expected an output and at least one input");
    /* Every input checked before the output is made: a missing one left an
     * empty OUT.db behind. */
    for (int i = optind + 1; i < argc; i++)
        if (access(argv[i], R_OK) != 0) {
            fprintf(stderr, "kvx: cannot read '%s': %s\n", argv[i], strerror(errno));
            return KVX_EINPUT;
        }
    const char *outp = argv[optind];
    int existed = access(outp, F_OK) == 0;
    Store *out = store_open(outp, &err);
    if (!out)
        return exit_of(&err);
    int rc = 0;
    for (int i = optind + 1; i < argc && !rc; i++) {
        MergeStats s;
        if (results_merge(out, argv[i], &s, &err)) {
            rc = exit_of(&err);
            break;
        }
        printf("%s: runs %d added, %d already present; variants %d added; cases %d added,"
               " %d already present (kept as they were)\n", argv[i], s.runs_added, s.runs_found,
               s.variants_added, s.cases_added, s.cases_present);
    }
    store_close(out);
    if (rc && !existed) {
        /* A new output that got nothing is removed with its journal files. */
        char side[4096];
        unlink(outp);
        snprintf(side, sizeof side, "%s-wal", outp);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", outp);
        unlink(side);
    }
    kvx_error_clear(&err);
    return rc;
}

static const char report_usage[] = "SPEC.yaml [--db PATH] [--out DIR] [--run ID] [--failed-values]";

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"out", required_argument, NULL, OPT_OUT},
        {"failed-values", no_argument, NULL, OPT_FAILED_VALUES},
        {"run", required_argument, NULL, OPT_RUN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dbpath = RESULTS_DEFAULT_DB, *dir = "results";
    KvxError err = {0};
    int c, failed_values = 0;
    long long run = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == OPT_DB)
            dbpath = optarg;
        else if (c == OPT_OUT)
            dir = optarg;
        else if (c == OPT_FAILED_VALUES)
            failed_values = 1;
        else if (c == OPT_RUN) {
            char *end;
            run = strtoll(optarg, &end, 10);
            if (*end || run <= 0)
                return usage_fail("report", report_usage, "--run wants a run id (a positive integer)");
        }
        else
            return c == 'h' ? (usage_fail("report", report_usage, NULL), 0)
                            : usage_fail("report", report_usage, NULL);
    }
    if (argc - optind != 1)
        return usage_fail("report", report_usage, "expected one spec file");
    sqlite3 *db = results_open_existing(dbpath, &err);
    if (!db)
        return exit_of(&err);
    char *written = NULL;
    int rc = 0;
    if (results_report(db, argv[optind], dir, run, failed_values, &written, &err))
        rc = exit_of(&err);
    else
        printf("wrote %s\n", written);
    free(written);
    sqlite3_close(db);
    kvx_error_clear(&err);
    return rc;
}
