/* The command line (cli/cli.c), through the kvx binary as a user runs it:
 * kvx --help lists exactly the verbs of CLI_VERBS; every verb's --help (and
 * -h) goes to stdout with exit 0 and lists exactly the options of its table;
 * every option it lists is accepted with a value of its kind; every other
 * verb's option is refused with `kvx VERB: unknown option` and exit 2 (the
 * 500-odd pairs in process, through the verbs' entries, a few by the binary);
 * numbers are read strictly; every usage error is `kvx VERB: ...`, exit 2,
 * nothing on stdout.  docs/cli.md holds each verb's --help as kvx prints it
 * (KVX_REGOLD=1 rewrites those blocks).  cli_parse's reordering of argv,
 * which `kvx run` stores as its command, is checked in process. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"

static char tmp[256];
/* A path no verb may create: --out and --db values point here. */
static char never[300];

/* ---- running kvx ----------------------------------------------------------------- */

typedef struct Ran {
    int rc;
    char *out, *err;
} Ran;

static void ran_free(Ran *r)
{
    free(r->out);
    free(r->err);
}

/* kvx with argv (NULL-terminated, argv[0] the verb), stdout and stderr apart. */
static Ran kvx_argv(const char *const *argv)
{
    char outp[300], errp[300];
    snprintf(outp, sizeof outp, "%s/out", tmp);
    snprintf(errp, sizeof errp, "%s/err", tmp);
    const char *args[40] = {"kvx"};
    int n = 1;
    for (; argv[n - 1] && n < 39; n++)
        args[n] = argv[n - 1];
    args[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0)
            _exit(126);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        execv(KVX_BINARY, (char *const *)args);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    Ran r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), file_read(outp, NULL),
             file_read(errp, NULL)};
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

/* The verb v called in this process with argv (argv[0] its name), stdout and
 * stderr caught as kvx_argv catches them: for the checks that are many and
 * end in the parser, where a process each would be most of the test's time. */
static Ran verb_argv(const CliVerb *v, const char *const *argv)
{
    char outp[300], errp[300], *args[40];
    snprintf(outp, sizeof outp, "%s/out", tmp);
    snprintf(errp, sizeof errp, "%s/err", tmp);
    int argc = 0;
    for (; argv[argc] && argc < 39; argc++)
        args[argc] = (char *)argv[argc];
    args[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int saved[2] = {dup(1), dup(2)};
    int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    int rc = v->run(argc, args);
    fflush(stdout);
    fflush(stderr);
    dup2(saved[0], 1);
    dup2(saved[1], 2);
    close(saved[0]), close(saved[1]), close(o), close(e);
    Ran r = {rc, file_read(outp, NULL), file_read(errp, NULL)};
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

static Ran kvx(const char *verb, ...)
{
    const char *argv[40] = {verb};
    int n = 1;
    va_list ap;
    va_start(ap, verb);
    while (n < 39 && (argv[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    argv[n] = NULL;
    return kvx_argv(argv);
}

static const char *show_argv(const char *const *argv)
{
    static char buf[1024];
    size_t at = 0;
    for (int i = 0; argv[i] && at < sizeof buf - 1; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, " %s", argv[i]);
    return buf;
}

/* kvx argv (or, with v, the verb in process) must be a usage error: exit 2,
 * nothing on stdout, and stderr starting "kvx VERB: " followed by msg. */
static void usage_error_of(const CliVerb *v, const char *const *argv, const char *msg)
{
    Ran r = v ? verb_argv(v, argv) : kvx_argv(argv);
    char want[1024];
    snprintf(want, sizeof want, "kvx %s: %s", argv[0], msg);
    if (r.rc != 2 || r.out[0] || strncmp(r.err, want, strlen(want)))
        fail_msg("kvx%s: exit %d, stdout '%.200s', stderr '%.300s' (expected exit 2 and '%s')",
                 show_argv(argv), r.rc, r.out, r.err, want);
    ran_free(&r);
}

static void usage_error(const char *const *argv, const char *msg)
{
    usage_error_of(NULL, argv, msg);
}

#define USAGE_ERROR(msg, ...)                                      \
    do {                                                           \
        const char *argv_[] = {__VA_ARGS__, NULL};                 \
        usage_error(argv_, msg);                                   \
    } while (0)

/* ---- the help text -------------------------------------------------------------- */

/* An option as a usage lists it. */
typedef struct Listed {
    char name[64];
    char letter;
    char arg[96];           /* "N", "md|csv|json", "" for a flag */
    int optional;           /* --name[=ARG] */
} Listed;

/* The options of a --help text: lines "  -j, --jobs N ..." or "      --where EXPR ...". */
static int listed_options(const char *help, Listed *out, int max)
{
    int n = 0;
    for (const char *l = help; *l; l += strcspn(l, "\n"), l += *l == '\n') {
        Listed o = {0};
        const char *p = l;
        if (!strncmp(p, "  -", 3) && p[3] != '-' && p[4] == ',') {
            o.letter = p[3];
            p += 6;
        } else if (!strncmp(p, "      --", 8)) {
            p += 6;
        } else {
            continue;
        }
        assert_true(!strncmp(p, "--", 2));
        p += 2;
        size_t len = strcspn(p, " =[\n");
        snprintf(o.name, sizeof o.name, "%.*s", (int)len, p);
        p += len;
        if (!strncmp(p, "[=", 2)) {
            o.optional = 1;
            p += 2;
            snprintf(o.arg, sizeof o.arg, "%.*s", (int)strcspn(p, "]"), p);
        } else if (*p == ' ' && p[1] != ' ') {
            p++;
            snprintf(o.arg, sizeof o.arg, "%.*s", (int)strcspn(p, " \n"), p);
        }
        assert_true(n < max);
        out[n++] = o;
    }
    return n;
}

/* A value of the kind the usage names, or NULL when the test knows none. */
static const char *sample(const char *verb, const Listed *o)
{
    static const struct { const char *arg, *value; } samples[] = {
        {"ARCH", "sm_90"}, {"ARCHS", "sm_80,sm_90"}, {"EXPR", "n > 0"}, {"K/N", "1/2"}, {"N", "2"},
        {"X", "0.5"}, {"S", "1"}, {"LIST", "0"}, {"NAME", "contention"}, {"ID", "1"}, {"V", "median_ms"},
        {"AXIS,...", "n"}, {"AXIS=VALUE,...", "n=1"}, {"AXIS=V,...", "strategy=naive"}, {"GPU", "RTX 5090"},
        {"TARGET", "H200-SXM-141GB"}, {"STRATEGY", "model"}, {"B", "5%"}, {"VALUE[,POINTS]", "median_ms"},
        {"F", "0.05"}, {"STRATEGIES", "random,model:kappa=2"}, {"BUDGETS", "2%,10"}, {"TIMES", "2%,30s"},
    };
    if (!strcmp(o->arg, "DIR") || !strcmp(o->arg, "PATH") || !strcmp(o->arg, "FILE"))
        return never;
    if (strchr(o->arg, '|'))
        return o->arg;  /* the caller takes the first choice */
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        if (!strcmp(samples[i].arg, o->arg))
            return samples[i].value;
    fail_msg("kvx %s --%s %s: the test has no value of that kind (add one to sample())", verb, o->name,
             o->arg);
    return NULL;
}

/* The words that give o a good value: "--name", "VALUE" (or "--name=VALUE"). */
static int option_words(const char *verb, const Listed *o, int use_letter, char words[2][128])
{
    char dash[80];
    if (use_letter)
        snprintf(dash, sizeof dash, "-%c", o->letter);
    else
        snprintf(dash, sizeof dash, "--%s", o->name);
    if (!o->arg[0]) {
        snprintf(words[0], 128, "%s", dash);
        return 1;
    }
    const char *v = sample(verb, o);
    int first = (int)strcspn(v, "|");
    if (o->optional) {
        snprintf(words[0], 128, "%s=%.*s", dash, first, v);
        return 1;
    }
    snprintf(words[0], 128, "%s", dash);
    snprintf(words[1], 128, "%.*s", first, v);
    return 2;
}

static const CliVerb *verb_named(const char *name)
{
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        if (!strcmp((*v)->name, name))
            return *v;
    return NULL;
}

/* ---- tests ------------------------------------------------------------------------ */

/* kvx --help lists every verb of CLI_VERBS and no other. */
static void test_verbs_listed(void **state)
{
    (void)state;
    Ran r = kvx("--help", NULL);
    assert_int_equal(r.rc, 0);
    int listed = 0;
    for (const char *l = r.out; *l; l += strcspn(l, "\n"), l += *l == '\n') {
        if (strncmp(l, "  ", 2) || l[2] == ' ')
            continue;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(l + 2, " \n"), l + 2);
        if (!verb_named(name))
            fail_msg("kvx --help lists '%s', which is no verb of CLI_VERBS", name);
        listed++;
    }
    int n = 0;
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        n++;
    assert_int_equal(listed, n);
    assert_int_equal(n, 13);
    ran_free(&r);
}

/* One verb's --help: on stdout, exit 0, the same for -h; exactly its
 * table's options; each accepted with a good value. */
static void help_of(const CliVerb *v)
{
    Ran h = kvx(v->name, "--help", NULL), h2 = kvx(v->name, "-h", NULL);
    char head[64];
    snprintf(head, sizeof head, "usage: kvx %s", v->name);
    if (h.rc != 0 || h.err[0] || strncmp(h.out, head, strlen(head)))
        fail_msg("kvx %s --help: exit %d, stderr '%s', stdout '%.80s'", v->name, h.rc, h.err, h.out);
    assert_int_equal(h2.rc, 0);
    assert_string_equal(h.out, h2.out);
    Listed l[64];
    int n = listed_options(h.out, l, 64), ntable = 0;
    for (const CliOpt *o = v->opts; o->name; o++, ntable++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found += !strcmp(l[i].name, o->name) && l[i].letter == o->letter &&
                     !!l[i].optional == !!o->implied;
        if (found != 1)
            fail_msg("kvx %s --help lists --%s %d times (its table has it once)", v->name, o->name, found);
    }
    assert_int_equal(n, ntable + 1);   /* and --help */
    assert_string_equal(l[n - 1].name, "help");
    assert_int_equal(l[n - 1].letter, 'h');
    for (int i = 0; i < n; i++)
        for (int use_letter = 0; use_letter <= (l[i].letter != 0); use_letter++) {
            char words[2][128];
            int k = option_words(v->name, &l[i], use_letter, words);
            const char *argv[] = {v->name, words[0], k > 1 ? words[1] : "--help", "--help", NULL};
            Ran r = kvx_argv(argv);
            if (r.rc != 0 || strcmp(r.out, h.out) || r.err[0])
                fail_msg("kvx%s: exit %d, stderr '%s' (its --help lists it)", show_argv(argv), r.rc, r.err);
            ran_free(&r);
        }
    ran_free(&h);
    ran_free(&h2);
    assert_int_equal(access(never, F_OK), -1);
}

static void test_every_help(void **state)
{
    (void)state;
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        help_of(*v);
}

static int has_option(const CliVerb *v, const char *name)
{
    for (const CliOpt *o = v->opts; o->name; o++)
        if (!strcmp(o->name, name))
            return 1;
    return 0;
}

/* Every verb refuses every other verb's options it does not share (in
 * process: some 500 of them), and through the binary, a few. */
static void test_foreign_options(void **state)
{
    (void)state;
    /* Every option name of every table, once. */
    const CliOpt *all[256];
    int nall = 0, refused = 0;
    for (const CliVerb *const *w = CLI_VERBS; *w; w++)
        for (const CliOpt *o = (*w)->opts; o->name; o++) {
            int seen = 0;
            for (int i = 0; i < nall && !seen; i++)
                seen = !strcmp(all[i]->name, o->name);
            if (!seen && nall < 256)
                all[nall++] = o;
        }
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        for (int i = 0; i < nall; i++) {
            if (has_option(*v, all[i]->name))
                continue;
            char dash[80], msg[128];
            snprintf(dash, sizeof dash, "--%s", all[i]->name);
            snprintf(msg, sizeof msg, "unknown option '--%s'", all[i]->name);
            const char *argv[] = {(*v)->name, dash, all[i]->kind == CLI_FLAG ? NULL : "1", NULL};
            usage_error_of(*v, argv, msg);
            refused++;
        }
    assert_true(nall > 40);
    assert_true(refused > 300);
    /* The examples, and kvx run's --arch, which did nothing. */
    USAGE_ERROR("unknown option '--shard'", "gen", "specs/contention.yaml", "--shard", "1/2", "--out", never);
    USAGE_ERROR("unknown option '--out'", "plan", "specs/contention.yaml", "--out", "x");
    USAGE_ERROR("unknown option '--seed'", "table", "--seed", "1");
    USAGE_ERROR("unknown option '--arch'", "run", "--arch", "sm_90", "specs/contention.yaml");
    USAGE_ERROR("unknown option '-j'", "plan", "specs/contention.yaml", "-j", "2");
    USAGE_ERROR("unknown option '--jo'", "compile", "specs/contention.yaml", "--jo", "2");
    assert_int_equal(access(never, F_OK), -1);
}

/* Numbers: digits (a double's fraction and exponent), in bounds, nothing else. */
static void test_strict_numbers(void **state)
{
    (void)state;
    const char *S = "specs/contention.yaml";
    static const char *const bad_jobs[] = {"abc", "0", "4097", "2x", "", " 2", "+2", "-1", "1.0", "2e1"};
    for (size_t i = 0; i < sizeof bad_jobs / sizeof bad_jobs[0]; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "-j is '%s' (expected a whole number from 1 to 4096)", bad_jobs[i]);
        USAGE_ERROR(msg, "compile", S, "-j", bad_jobs[i]);
        snprintf(msg, sizeof msg, "--jobs is '%s' (expected a whole number from 1 to 4096)", bad_jobs[i]);
        USAGE_ERROR(msg, "inspect", S, "--jobs", bad_jobs[i]);
    }
    USAGE_ERROR("-j is '0' (expected", "run", S, "-j0");
    static const char *const bad_seeds[] = {"1e30", "-1", "18446744073709551616", "12abc", "0x10", "1.5", ""};
    for (size_t i = 0; i < sizeof bad_seeds / sizeof bad_seeds[0]; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "--seed is '%s' (expected a whole number below 2^64)", bad_seeds[i]);
        USAGE_ERROR(msg, "run", S, "--seed", bad_seeds[i]);
    }
    USAGE_ERROR("--warmup is '2.5' (expected a whole number up to 10^9)", "run", S, "--warmup", "2.5");
    USAGE_ERROR("--warmup is '1000000001' (expected a whole number up to 10^9)", "run", S,
                "--warmup=1000000001");
    USAGE_ERROR("--min-samples is '0' (expected a whole number from 1 to 10^9)", "run", S, "--min-samples",
                "0");
    static const char *const bad_doubles[] = {"nan", "inf", "-0.1", "0x10", "1e", ".", "1.5.2", " 1",
                                              "1e400"};
    for (size_t i = 0; i < sizeof bad_doubles / sizeof bad_doubles[0]; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "--noise is '%s' (expected a number >= 0)", bad_doubles[i]);
        USAGE_ERROR(msg, "run", S, "--noise", bad_doubles[i]);
    }
    USAGE_ERROR("--min-diff is '-1' (expected a relative difference", "compare", "a.db", "b.db", "--min-diff",
                "-1");
    USAGE_ERROR("--run is '0' (expected a run id: a whole number >= 1)", "table", "--run", "0");
    USAGE_ERROR("--run is '1.5' (expected a run id", "report", S, "--run", "1.5");
    /* Good values at the edges. */
    static const char *const good[][4] = {
        {"-j", "4096"}, {"--seed", "18446744073709551615"}, {"--seed", "0"}, {"--noise", "1e-3"},
        {"--noise", ".5"}, {"--budget-ms", "2E3"}, {"--warmup", "0"}, {"--timeout", "0.25"},
        {"--max-samples", "1000000000"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        Ran r = kvx("run", S, good[i][0], good[i][1], "--help", NULL);
        if (r.rc != 0)
            fail_msg("kvx run %s %s: exit %d, %s", good[i][0], good[i][1], r.rc, r.err);
        ran_free(&r);
    }
}

/* The other usage errors: one form, exit 2, nothing on stdout. */
static void test_usage_errors(void **state)
{
    (void)state;
    const char *S = "specs/contention.yaml";
    USAGE_ERROR("--seed needs a value (N)", "run", S, "--seed");
    USAGE_ERROR("-j needs a value (N)", "compile", S, "-j");
    USAGE_ERROR("--points takes no value (got 'yes')", "plan", S, "--points=yes");
    USAGE_ERROR("expected one SPEC file, got none", "plan");
    USAGE_ERROR("expected one SPEC file, got 'a', 'b'", "run", "a", "b");
    USAGE_ERROR("expected no operands, got 'x'", "table", "x");
    USAGE_ERROR("expected no operands, got 'x'", "doctor", "x");
    USAGE_ERROR("expected an output and at least one input, got 'out.db'", "merge", "out.db");
    USAGE_ERROR("expected two result sets, A and B, got 'a'", "compare", "a");
    USAGE_ERROR("--out DIR is required", "gen", S);
    USAGE_ERROR("--name NAME is required", "import", "x.csv");
    USAGE_ERROR("--show is 'asm' (expected source, ptx or sass)", "inspect", S, "--show", "asm");
    USAGE_ERROR("--format is 'md' (expected csv, json, nvbench or kerneltuner)", "export", "--format", "md");
    USAGE_ERROR("--keep-ncu-rep keeps the report of --counters' pass: give --counters too", "run",
                "--keep-ncu-rep", "x.yaml");
    USAGE_ERROR("--counters is 'dram bytes' (expected default, or ncu metric names such as "
                "dram__bytes_read.sum, comma-separated)", "run", "--counters=dram bytes", "x.yaml");
    USAGE_ERROR("--flush-l2 is 'none' (expected read, write, off, true or false)", "run", S, "--flush-l2=none");
    USAGE_ERROR("--arch takes one arch here, not 'sm_80,sm_90'", "plan", S, "--arch", "sm_80,sm_90");
    USAGE_ERROR("--arch: unknown arch 'sm_99'", "compile", S, "--arch", "sm_99");
    USAGE_ERROR("--shard is '3/2' (expected K/N with 1 <= K <= N)", "plan", S, "--shard", "3/2");
    USAGE_ERROR("--devices is '0,,1' (expected all, or GPU ordinals", "run", S, "--devices", "0,,1");
    /* --spec is a spec's name wherever it is an option; a path is refused. */
    USAGE_ERROR("--spec is 'specs/contention.yaml' (expected a spec's name", "table", "--spec", S);
    USAGE_ERROR("--spec is 'contention.yaml' (expected a spec's name", "export", "--spec", "contention.yaml");
    USAGE_ERROR("--spec is 'a/b' (expected a spec's name", "import", "x.csv", "--name", "r", "--spec", "a/b");
    USAGE_ERROR("--spec is '' (expected a spec's name", "compare", "a", "b", "--spec=");
    /* The first error wins, and --help after it does not hide it. */
    USAGE_ERROR("unknown option '--bogus'", "plan", S, "--bogus", "--help");
    /* An option before the verb. */
    Ran r = kvx("--where", "n > 0", "plan", S, NULL);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "kvx: '--where' before the verb: options go after it"));
    ran_free(&r);
    /* After "--" a word that looks like an option is an operand. */
    r = kvx("plan", "--", "--points", NULL);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "--points: cannot open spec"));
    ran_free(&r);
    assert_int_equal(access(never, F_OK), -1);
}

/* docs/cli.md: under "## kvx VERB", a ```text block that is kvx VERB --help. */
static void test_cli_md(void **state)
{
    (void)state;
    const char *path = KVX_SOURCE_DIR "/docs/cli.md";
    char *doc = file_read(path, NULL);
    assert_non_null(doc);
    int regold = getenv("KVX_REGOLD") != NULL;
    StrBuf fresh;
    sb_init(&fresh);
    const char *at = doc;
    for (const CliVerb *const *v = CLI_VERBS; *v; v++) {
        char heading[64];
        snprintf(heading, sizeof heading, "\n## kvx %s\n", (*v)->name);
        const char *h = strstr(doc, heading);
        if (!h)
            fail_msg("docs/cli.md has no section '## kvx %s'", (*v)->name);
        const char *open = strstr(h, "```text\n"), *close = open ? strstr(open + 8, "```\n") : NULL;
        assert_true(open && close && h >= at);
        Ran r = kvx((*v)->name, "--help", NULL);
        size_t len = (size_t)(close - open - 8);
        if (!regold && (strlen(r.out) != len || strncmp(open + 8, r.out, len)))
            fail_msg("docs/cli.md's kvx %s --help is not what kvx prints (KVX_REGOLD=1 rewrites it):\n%s",
                     (*v)->name, r.out);
        sb_put(&fresh, at, (size_t)(open + 8 - at));
        sb_puts(&fresh, r.out);
        at = close;
        ran_free(&r);
    }
    sb_puts(&fresh, at);
    if (regold)
        assert_int_equal(file_write_atomic(path, fresh.p, fresh.len), 0);
    sb_free(&fresh);
    free(doc);
}

/* ---- cli_parse in process: the order argv is left in ----------------------------------- */

typedef struct Toy {
    int flag, n;
    const char *s;
} Toy;

static const CliOpt toy_opts[] = {
    CLI_OPT("flag", 0, CLI_FLAG, NULL, NULL, "a flag", offsetof(Toy, flag)),
    CLI_OPT("n", 'n', CLI_INT, "N", NULL, "a number", offsetof(Toy, n), .lo = 0, .hi = 10),
    CLI_OPT("s", 0, CLI_STRING, "S", NULL, "a string", offsetof(Toy, s)),
    {0},
};

static int toy_run(int argc, char **argv)
{
    return argc && argv ? 0 : 1;
}

static const CliVerb toy = {.name = "toy", .operands = "A...", .operands_are = "operands",
                            .max_operands = -1, .summary = "a test verb", .opts_size = sizeof(Toy),
                            .opts = toy_opts, .run = toy_run};

static void test_argv_order(void **state)
{
    (void)state;
    /* As getopt leaves it: the options in order with their values, then the
     * operands in order; what kvx run stores as its command and passes to the
     * runs it starts per arch. */
    char *argv[] = {"toy", "a", "--s", "x y", "b", "-n3", "--flag", "c", "--", "--flag", "-n", NULL};
    Toy t = {0};
    CliArgs a;
    assert_int_equal(cli_parse(&toy, 11, argv, &t, &a), 0);
    const char *want[] = {"toy", "--s", "x y", "-n3", "--flag", "--", "a", "b", "c", "--flag", "-n"};
    for (int i = 0; i < 11; i++)
        assert_string_equal(argv[i], want[i]);
    assert_int_equal(a.noperands, 5);
    assert_ptr_equal(a.operand, argv + 6);
    assert_int_equal(t.flag, 1);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.s, "x y");
    /* A value that looks like an option is the option's value. */
    char *argv2[] = {"toy", "--s", "--flag", "-n", "-1", NULL};
    Toy t2 = {0};
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    int rc = cli_parse(&toy, 5, argv2, &t2, &a);
    dup2(saved, 2);
    close(saved);
    close(devnull);
    assert_int_equal(rc, -1);
    assert_int_equal(a.status, 2);   /* -n -1: not a whole number from 0 to 10 */
    assert_string_equal(t2.s, "--flag");
    assert_int_equal(t2.flag, 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/kvx_test_cli.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    snprintf(never, sizeof never, "%s/never", tmp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out", tmp);
    unlink(path);
    snprintf(path, sizeof path, "%s/err", tmp);
    unlink(path);
    rmdir(tmp);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verbs_listed),
        cmocka_unit_test(test_every_help),
        cmocka_unit_test(test_foreign_options),
        cmocka_unit_test(test_strict_numbers),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_cli_md),
        cmocka_unit_test(test_argv_order),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
