/* cli: a verb's option table to its parser and its usage text (cli.h), and
 * what the spec verbs share: a spec loaded into a plan, the archs, the cache.
 *
 * The parser is written out rather than built on getopt_long: it needs the
 * table's kinds and bounds for its messages, takes only exact names (getopt
 * accepts any unambiguous prefix, so a verb's options depended on the others
 * in its table), and keeps no global state, so the tests call verbs in
 * process.  It reorders argv as getopt does, so that what `kvx run` stores
 * as its command and passes to the per-arch runs it starts is unchanged. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "resolve/resolve.h"
#include "run/run.h"
#include "gpu/worker.h"

const CliVerb *const CLI_VERBS[] = {
    &cmd_plan_verb,  &cmd_gen_verb,     &cmd_compile_verb, &cmd_inspect_verb,
    &cmd_run_verb,   &cmd_table_verb,   &cmd_report_verb,  &cmd_compare_verb,
    &cmd_export_verb, &cmd_import_verb, &cmd_merge_verb,   &cmd_replay_verb,
    &cmd_doctor_verb,
    NULL,
};

/* Every verb's, after its own options. */
static const CliOpt HELP = {"help", 'h', CLI_FLAG, .help = "this text"};

/* ---- values ---------------------------------------------------------------------------- */

/* What a good value of o looks like, for the message about a bad one. */
static void expectation(const CliOpt *o, char *buf, size_t n)
{
    char lo[32], hi[32];
    num_bound_text(o->lo, lo, sizeof lo);
    num_bound_text(o->hi, hi, sizeof hi);
    const char *what = o->kind == CLI_DOUBLE ? "a number" : "a whole number";
    if (o->expect)
        snprintf(buf, n, "%s", o->expect);
    else if (o->kind == CLI_UINT64)
        snprintf(buf, n, "a whole number below 2^64");
    else if (o->kind == CLI_PATH)
        snprintf(buf, n, "a path");
    else if (o->kind == CLI_CHOICE) {
        size_t at = 0;
        for (const CliChoice *c = o->choices; c->name && at < n; c++)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", c == o->choices ? "" : c[1].name ? ", " : " or ",
                                   c->name);
    } else if (o->hi >= 1e18 || isinf(o->hi))
        snprintf(buf, n, "%s >= %s", what, lo);
    else if (o->lo == 0)
        snprintf(buf, n, "%s up to %s", what, hi);
    else
        snprintf(buf, n, "%s from %s to %s", what, lo, hi);
}

/* value, checked as o's kind says, into field.  0 or -1. */
static int store_kind(const CliOpt *o, const char *value, void *field)
{
    uint64_t u;
    double d;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)field = 1;
        return 0;
    case CLI_PATH:
        if (!*value)
            return -1;
        /* fall through */
    case CLI_STRING:
        *(const char **)field = value;
        return 0;
    case CLI_INT:
        if (num_read_u64(value, &u) || u > INT_MAX || (double)u < o->lo || (double)u > o->hi)
            return -1;
        *(int *)field = (int)u;
        return 0;
    case CLI_INT64:
        if (num_read_u64(value, &u) || u > INT64_MAX || (double)u < o->lo || (double)u > o->hi)
            return -1;
        *(int64_t *)field = (int64_t)u;
        return 0;
    case CLI_UINT64:
        if (num_read_u64(value, &u))
            return -1;
        *(uint64_t *)field = u;
        return 0;
    case CLI_DOUBLE:
        if (num_read_double(value, &d) || d < o->lo || d > o->hi)
            return -1;
        *(double *)field = d;
        return 0;
    case CLI_CHOICE:
        for (const CliChoice *c = o->choices; c->name; c++)
            if (!strcmp(c->name, value)) {
                *(int *)field = c->value;
                return 0;
            }
        return -1;
    }
    return -1;
}

/* ---- parsing ------------------------------------------------------------------------- */

static void usage_line(const CliVerb *v, FILE *f)
{
    fprintf(f, "usage: kvx %s%s%s%s\n", v->name, *v->operands ? " " : "", v->operands,
            v->opts[0].name ? " [options]" : "");
}

static int vfail(const CliVerb *v, const char *fmt, va_list ap) KVX_PRINTF(2, 0);
static int vfail(const CliVerb *v, const char *fmt, va_list ap)
{
    fprintf(stderr, "kvx %s: ", v->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    usage_line(v, stderr);
    fprintf(stderr, "(kvx %s --help says more)\n", v->name);
    return 2;
}

int cli_fail(const CliVerb *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(v, fmt, ap);
    va_end(ap);
    return rc;
}

static const CliOpt *find_long(const CliVerb *v, const char *name, size_t len)
{
    for (const CliOpt *o = v->opts; o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len))
            return o;
    return len == 4 && !strncmp(name, "help", 4) ? &HELP : NULL;
}

static const CliOpt *find_short(const CliVerb *v, char c)
{
    for (const CliOpt *o = v->opts; o->name; o++)
        if (o->letter && o->letter == c)
            return o;
    return c == 'h' ? &HELP : NULL;
}

/* The value of o as the user wrote it: checked and stored (or given to its
 * setter), its `given` marked.  0, or 2 after the message. */
static int store(const CliVerb *v, const CliOpt *o, const char *spelled, const char *value, void *opts)
{
    CliSet s = {.opts = opts, .field = (char *)opts + o->at, .value = value};
    if (o->set ? o->set(&s) : store_kind(o, value, s.field)) {
        if (o->set)
            return cli_fail(v, "%s", s.why);
        char want[256];
        expectation(o, want, sizeof want);
        return cli_fail(v, "%s is '%s' (expected %s)", spelled, value, want);
    }
    if (o->given)
        *(int *)((char *)opts + o->given - 1) = 1;
    return 0;
}

/* A CLI_AND option given again: "(prev) && (value)", so that every
 * condition holds (the last alone once won, silently).  The joined text
 * lives until exit, as argv does: the one thing the parser keeps. */
static const char *join_and(const CliOpt *o, const char *value, void *opts, const void *defaults)
{
    static Arena *kept;
    if (!(o->flags & CLI_AND))
        return value;   /* the field may be no pointer at all */
    const char *prev = *(const char *const *)((const char *)opts + o->at);
    if (!prev || prev == *(const char *const *)((const char *)defaults + o->at))
        return value;
    if (!kept)
        kept = arena_new();
    return arena_printf(kept, "(%s) && (%s)", prev, value);
}

/* The option at argv[i] and its value into opts; *used gets 1 when the value
 * was the next word.  0, 2 after a usage error, or -1 after --help, whose
 * defaults are those of defaults. */
static int take_option(const CliVerb *v, int argc, char **argv, int i, void *opts, const void *defaults,
                       int *used)
{
    const char *w = argv[i], *value = NULL;
    const CliOpt *o;
    char spelled[64];
    if (w[1] == '-') {
        const char *eq = strchr(w + 2, '=');
        size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
        if (!(o = find_long(v, w + 2, len)))
            return cli_fail(v, "unknown option '%.*s'", (int)len + 2, w);
        snprintf(spelled, sizeof spelled, "--%s", o->name);
        value = eq ? eq + 1 : NULL;
    } else {
        if (!(o = find_short(v, w[1])))
            return cli_fail(v, "unknown option '-%c'", w[1]);
        snprintf(spelled, sizeof spelled, "-%c", o->letter);
        value = w[2] ? w + 2 : NULL;
    }
    if (o == &HELP) {
        cli_usage(v, defaults, stdout);
        return -1;
    }
    if (o->kind == CLI_FLAG && value)
        return cli_fail(v, "%s takes no value (got '%s')", spelled, value);
    if (o->kind != CLI_FLAG && !value) {
        if (o->implied)
            value = o->implied;
        else if (i + 1 < argc)
            value = argv[i + 1], *used = 1;
        else
            return o->arg ? cli_fail(v, "%s needs a value (%s)", spelled, o->arg)
                          : cli_fail(v, "%s needs a value", spelled);
    }
    return store(v, o, spelled, join_and(o, value, opts, defaults), opts);
}

/* The operands as a message quotes them: the first three, "none" when there
 * are none.  Returns buf. */
static const char *operands_text(const CliArgs *a, char *buf, size_t size)
{
    snprintf(buf, size, "none");
    for (int k = 0, at = 0; k < a->noperands && k < 3; k++)
        at += snprintf(buf + at, size - (size_t)at, "%s'%.40s'", k ? ", " : "", a->operand[k]);
    if (a->noperands > 3)
        snprintf(buf + strlen(buf), size - strlen(buf), ", ...");
    return buf;
}

/* After the options: the operands' count and the required options.  0 or 2. */
static int check_complete(const CliVerb *v, const CliArgs *a, const void *opts)
{
    int n = a->noperands;
    if (n < v->min_operands || (v->max_operands >= 0 && n > v->max_operands)) {
        char got[200];
        return cli_fail(v, "expected %s, got %s", v->operands_are, operands_text(a, got, sizeof got));
    }
    for (const CliOpt *o = v->opts; o->name; o++)
        if ((o->flags & CLI_REQUIRED) && !*(const char *const *)((const char *)opts + o->at))
            return cli_fail(v, "--%s %s is required", o->name, o->arg ? o->arg : "");
    return 0;
}

int cli_parse(const CliVerb *v, int argc, char **argv, void *opts, CliArgs *a)
{
    char **words = mem_alloc(sizeof(char *) * (size_t)(argc + 1)), **ops = words + argc;
    void *defaults = mem_alloc(v->opts_size);
    int nwords = 0, nops = 0, rc = 0, i;
    *a = (CliArgs){0};
    memcpy(defaults, opts, v->opts_size);
    /* Operands fill ops downwards from the end, options words upwards. */
    for (i = 1; i < argc && rc == 0; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) {
            words[nwords++] = argv[i++];
            break;
        }
        if (w[0] != '-' || !w[1]) {
            *--ops = argv[i], nops++;
            continue;
        }
        int used = 0;
        rc = take_option(v, argc, argv, i, opts, defaults, &used);
        for (int k = 0; k <= used; k++)
            words[nwords++] = argv[i + k];
        i += used;
    }
    for (; i < argc && rc == 0; i++)
        *--ops = argv[i], nops++;
    if (rc == 0) {
        /* argv[1..]: the options in order, then the operands in order. */
        memmove(argv + 1, words, sizeof(char *) * (size_t)nwords);
        for (int k = 0; k < nops; k++)
            argv[1 + nwords + k] = ops[nops - 1 - k];
        a->operand = argv + 1 + nwords;
        a->noperands = nops;
        rc = check_complete(v, a, opts);
    }
    free(words);
    free(defaults);
    a->status = rc < 0 ? 0 : rc;
    return rc ? -1 : 0;
}

/* ---- usage ----------------------------------------------------------------------------- */

enum { USAGE_COL = 28, USAGE_WIDTH = 100 };

/* "  -j, --jobs N" or "      --flush-l2[=read|write]". */
static void option_head(const CliOpt *o, char *buf, size_t n)
{
    int at = o->letter ? snprintf(buf, n, "  -%c, --%s", o->letter, o->name)
                       : snprintf(buf, n, "      --%s", o->name);
    if (o->kind == CLI_FLAG)
        return;
    char arg[128] = "";
    if (o->arg)
        snprintf(arg, sizeof arg, "%s", o->arg);
    for (const CliChoice *c = o->kind == CLI_CHOICE && !o->arg ? o->choices : NULL; c && c->name; c++)
        snprintf(arg + strlen(arg), sizeof arg - strlen(arg), "%s%s", c == o->choices ? "" : "|", c->name);
    snprintf(buf + at, n - (size_t)at, o->implied ? "[=%s]" : " %s", arg);
}

/* head, then text wrapped at USAGE_WIDTH in a column of its own. */
static void put_wrapped(FILE *f, const char *head, const char *text)
{
    int at = fprintf(f, "%s", head);
    if (at >= USAGE_COL - 1) {
        fputc('\n', f);
        at = 0;
    }
    fprintf(f, "%*s", USAGE_COL - at, "");
    at = USAGE_COL;
    for (const char *p = text; *p;) {
        int w = (int)strcspn(p, " ");
        if (at > USAGE_COL && at + 1 + w > USAGE_WIDTH) {
            fprintf(f, "\n%*s", USAGE_COL, "");
            at = USAGE_COL;
        } else if (at > USAGE_COL) {
            fputc(' ', f);
            at++;
        }
        at += fprintf(f, "%.*s", w, p);
        p += w;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}

/* The name of a choice option's value, "?" when it has none. */
static const char *choice_name(const CliOpt *o, int value)
{
    const char *name = "?";
    for (const CliChoice *c = o->choices; c->name; c++)
        if (c->value == value)
            name = c->name;
    return name;
}

/* The value a field holds before parsing, as the usage's default. */
static void field_text(const CliOpt *o, const void *field, char *buf, size_t n)
{
    switch (o->kind) {
    case CLI_INT: snprintf(buf, n, "%d", *(const int *)field); break;
    case CLI_INT64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)field); break;
    case CLI_UINT64: snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case CLI_DOUBLE: snprintf(buf, n, "%g", *(const double *)field); break;
    case CLI_STRING:
    case CLI_PATH: snprintf(buf, n, "%s", *(const char *const *)field); break;
    case CLI_CHOICE: snprintf(buf, n, "%s", choice_name(o, *(const int *)field)); break;
    case CLI_FLAG: snprintf(buf, n, "%s", *(const int *)field ? "on" : "off"); break;
    }
}

static void usage_option(const CliOpt *o, const void *opts, FILE *f)
{
    char head[160], def[160] = "";
    if (o->heading)
        fprintf(f, "\n%s\n", o->heading);
    option_head(o, head, sizeof head);
    if (o->flags & CLI_SHOW_DEFAULT)
        field_text(o, (const char *)opts + o->at, def, sizeof def);
    else if (o->def)
        snprintf(def, sizeof def, "%s", o->def);
    StrBuf text;
    sb_init(&text);
    sb_puts(&text, o->help);
    if (o->flags & CLI_REQUIRED)
        sb_puts(&text, " (required)");
    else if (*def)
        sb_printf(&text, " (default: %s)", def);
    put_wrapped(f, head, sb_str(&text));
    sb_free(&text);
}

void cli_usage(const CliVerb *v, const void *opts, FILE *f)
{
    usage_line(v, f);
    fprintf(f, "%s\n\n", v->summary);
    for (const CliOpt *o = v->opts; o->name; o++)
        usage_option(o, opts, f);
    usage_option(&HELP, opts, f);
    if (v->notes)
        fprintf(f, "\n%s", v->notes);
}

/* ---- what the spec verbs share ---------------------------------------------------------- */

int cli_parse_spec(const CliVerb *v, int argc, char **argv, CliSpecOpts *o, int *status)
{
    CliArgs a;
    memset(o, 0, sizeof *o);
    o->format = CLI_TEXT;
    if (cli_parse(v, argc, argv, o, &a)) {
        *status = a.status;
        return -1;
    }
    o->spec_path = a.operand[0];
    DeviceFacts f;
    if (o->gpu && o->archs && (facts_for_gpu(o->gpu, &f) || strcmp(o->archs, f.arch))) {
        *status = cli_fail(v, "--gpu %s is an %s part: --arch %s contradicts it (give one or the other)",
                           o->gpu, f.arch, o->archs);
        return -1;
    }
    return 0;
}

int cli_split_archs(const char *list, char archs[][16], int max, KvxError *err)
{
    int n = 0;
    char *copy = mem_strdup(list), *save = NULL;
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

/* --arch with at most max archs.  0 or -1 with s->why. */
static int set_archs_max(CliSet *s, int max)
{
    char archs[16][16];
    KvxError err = {0};
    int n = cli_split_archs(s->value, archs, 16, &err);
    if (n < 0)
        snprintf(s->why, sizeof s->why, "--arch: %.400s", err.msg);
    else if (n > max)
        snprintf(s->why, sizeof s->why,
                 "--arch takes one arch here, not '%s' (compile and inspect take several)", s->value);
    else
        *(const char **)s->field = s->value;
    kvx_error_clear(&err);
    return n < 0 || n > max ? -1 : 0;
}

int cli_set_arch(CliSet *s)
{
    return set_archs_max(s, 1);
}

int cli_set_archs(CliSet *s)
{
    return set_archs_max(s, 16);
}

int cli_set_shard(CliSet *s)
{
    Shard sh;
    KvxError err = {0};
    int rc = shard_parse(s->value, &sh, &err);
    if (rc)
        snprintf(s->why, sizeof s->why, "%.400s", err.msg);
    else
        *(const char **)s->field = s->value;
    kvx_error_clear(&err);
    return rc;
}

/* "a, b or c": the GPU names --gpu knows, written at buf + at (size bytes in
 * all).  Returns the new end. */
static int put_gpu_names(char *buf, size_t size, int at)
{
    for (int i = 0; facts_gpu_name(i) && at < (int)size; i++) {
        const char *sep = i == 0 ? "" : facts_gpu_name(i + 1) ? ", " : " or ";
        at += snprintf(buf + at, size - (size_t)at, "%s%s", sep, facts_gpu_name(i));
    }
    return at;
}

int cli_set_gpu(CliSet *s)
{
    DeviceFacts f;
    if (facts_for_gpu(s->value, &f) == 0) {
        *(const char **)s->field = s->value;
        return 0;
    }
    int at = snprintf(s->why, sizeof s->why, "--gpu: no target named '%.80s' (expected ", s->value);
    at = put_gpu_names(s->why, sizeof s->why, at);
    if (at < (int)sizeof s->why)
        snprintf(s->why + at, sizeof s->why - (size_t)at, ")");
    return -1;
}

int cli_archs(const CliSpecOpts *o, char archs[][16], int max)
{
    DeviceFacts f;
    if (!o->archs && o->gpu && facts_for_gpu(o->gpu, &f) == 0) {
        snprintf(archs[0], 16, "%s", f.arch);
        return 1;
    }
    if (!o->archs) {
        int gpu;
        cli_default_arch(archs[0], &gpu);
        return 1;
    }
    KvxError err = {0};
    int n = cli_split_archs(o->archs, archs, max, &err);
    KVX_ASSERT(n > 0);  /* checked when parsed */
    kvx_error_clear(&err);
    return n;
}

int cli_load_plan(const char *path, const char *where, const char *arch, const char *gpu, Spec **spec,
                  Plan *plan, PlanRef *ref, unsigned char **sel)
{
    KvxError err = {0};
    DeviceFacts f;
    *sel = NULL;
    memset(plan, 0, sizeof *plan);
    memset(ref, 0, sizeof *ref);
    if (gpu ? facts_for_gpu(gpu, &f) != 0 : facts_for_arch(arch, &f) != 0) {
        fprintf(stderr, "kvx: unknown arch '%s'\n", arch);
        return 2;
    }
    *spec = spec_load(path, &err);
    if (!*spec || plan_build(*spec, &f, plan, &err) != 0 || plan_ref_build(plan, ref, &err) != 0 ||
        !(*sel = plan_select(plan, where, &err)) || resolve_plan(plan, ref, *sel, &err) != 0) {
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
