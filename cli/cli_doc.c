/* cli_doc: the man page (roff) and the bash completion script, written from
 * the same tables as every verb's --help (CLI_VERBS, each verb's CliOpt
 * table), so neither can name an option kvx does not take or miss one it does.
 * The build runs `kvx __man` and `kvx __bash-completion` and installs what
 * they print (CMakeLists.txt); tests/test_cli_doc.c holds both to the tables. */
#include "cli.h"

#include <string.h>

#include "core/version.h"

/* ---- roff ----------------------------------------------------------------------------- */

/* text as roff body text: backslashes escaped, hyphens as \-, a line starting
 * with '.' or '\'' guarded, so no option help turns into a request. */
static void roff(FILE *f, const char *text)
{
    int bol = 1;
    for (const char *p = text; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", f);
        bol = *p == '\n';
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-')
            fputs("\\-", f);
        else
            fputc(*p, f);
    }
}

/* The option's value in the synopsis: "N", "read|write|off". */
static void value_name(const CliOpt *o, char *buf, size_t n)
{
    buf[0] = '\0';
    if (o->kind == CLI_FLAG)
        return;
    if (o->arg) {
        snprintf(buf, n, "%s", o->arg);
        return;
    }
    size_t at = 0;
    for (const CliChoice *c = o->choices; c && c->name && at < n; c++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", c == o->choices ? "" : "|", c->name);
}

static void man_option(FILE *f, const CliOpt *o, const char *verb)
{
    char value[160];
    value_name(o, value, sizeof value);
    fputs(".TP\n", f);
    if (o->letter)
        fprintf(f, "\\fB\\-%c\\fR, ", o->letter);
    fputs("\\fB\\-\\-", f);
    roff(f, o->name);
    fputs("\\fR", f);
    if (*value) {
        fputs(o->implied ? "[=\\fI" : " \\fI", f);
        roff(f, value);
        fputs(o->implied ? "\\fR]" : "\\fR", f);
    }
    fputc('\n', f);
    roff(f, o->help);
    if (o->flags & CLI_REQUIRED)
        fputs(" (required)", f);
    else if (o->def) {
        fputs(" (default: ", f);
        roff(f, o->def);
        fputc(')', f);
    } else if (o->flags & CLI_SHOW_DEFAULT)
        fprintf(f, " (default: as kvx %s \\-\\-help shows it)", verb);
    fputc('\n', f);
}

static void man_verb(FILE *f, const CliVerb *v)
{
    fprintf(f, ".SS \"kvx %s%s%s\"\n", v->name, *v->operands ? " " : "", v->operands);
    roff(f, v->summary);
    fputc('\n', f);
    for (const CliOpt *o = v->opts; o->name; o++) {
        if (o->heading) {
            fputs(".PP\n", f);
            roff(f, o->heading);
            fputc('\n', f);
        }
        man_option(f, o, v->name);
    }
    if (v->notes) {
        fputs(".PP\n.nf\n", f);
        roff(f, v->notes);
        fputs(".fi\n", f);
    }
}

/* A tagged paragraph of the man page: the tag in bold, its text. */
typedef struct ManTag {
    const char *tag, *text;
} ManTag;

/* The exit statuses, as docs/cli.md's table gives them. */
static const ManTag MAN_EXIT[] = {
    {"0", "ok: every case stored ok, a table written (one that nothing matched says so on stderr)"},
    {"1", "some cases or sources not ok: a case not ok in run, a source NVRTC rejected in compile, "
          "doctor when kvx cannot compile here"},
    {"2", "bad usage or bad input: an unknown option, a bad spec or --where (FILE:LINE:COL), no database "
          "at --db, a file that is not a kvx database"},
    {"3", "a file, database or I/O failure: a corrupt database, an output that cannot be written"},
    {"4", "nothing measured: run on a machine with no GPU, no CUDA driver, or a driver that finds no "
          "device (nothing is stored; plan, gen, compile and inspect work there)"},
    {"130, 143", "run stopped by SIGINT or SIGTERM: the cases that had answered are stored"},
};

/* Every environment variable kvx reads, as docs/cli.md's table lists them
 * (tests/docs/test_env_table.sh holds the three to each other). */
static const ManTag MAN_ENV[] = {
    {"KVX_CACHE_DIR", "the compile cache folder (--cache wins); unset: $XDG_CACHE_HOME/kvx"},
    {"XDG_CACHE_HOME", "the compile cache is $XDG_CACHE_HOME/kvx when KVX_CACHE_DIR is unset"},
    {"HOME", "the compile cache is $HOME/.cache/kvx when neither is set"},
    {"CUDA_HOME", "the CUDA toolkit: NVRTC's headers, nvdisasm, ncu"},
    {"CUDA_PATH", "the toolkit where CUDA_HOME has none"},
    {"KVX_NVDISASM", "the disassembler inspect uses"},
    {"KVX_NCU", "the ncu of run --counters"},
    {"KVX_GNUPLOT", "the gnuplot report draws with (empty: none)"},
    {"PATH", "where nvdisasm, ncu and gnuplot are looked for last"},
    {"TMPDIR", "the folder of temporary files (unset: /tmp)"},
    {"SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN",
     "a Slurm array task's shard of run, without --shard"},
    {"NVTX_INJECTION64_PATH", "the tool library that receives the cases' NVTX ranges (Nsight sets it)"},
    {"KVX_FAKE_GPUS", "test hook: N fake GPUs, which run only kvx's own test kernels"},
    {"KVX_FAKE_LOG, KVX_FAKE_CALL_LOG, KVX_FAKE_FILL_LOG, KVX_FAKE_MEM_FREE, KVX_FAKE_NS_PER_BYTE, "
     "KVX_FAKE_FAULT_LAUNCH",
     "test hooks of the fake driver"},
    {"KVX_TEST_COMPILE_CRASH, KVX_TEST_COMPILE_DELAY, KVX_TEST_COMPILE_HOLD, KVX_TEST_HOSTREF_HOLD, "
     "KVX_TEST_WORKER_MODULES",
     "test hooks of compile and run"},
    {"KVX_WALK_DIR", "bench/walk.c's output folder (a -DKVX_WALK=ON build only)"},
};

/* A section of tagged paragraphs: .TP, the tag in bold, the text. */
static void man_tagged(FILE *f, const char *title, const ManTag *t, size_t n)
{
    fprintf(f, ".SH %s\n", title);
    for (size_t i = 0; i < n; i++) {
        fputs(".TP\n\\fB", f);
        roff(f, t[i].tag);
        fputs("\\fR\n", f);
        roff(f, t[i].text);
        fputc('\n', f);
    }
}

void cli_doc_man(FILE *f)
{
    fprintf(f, ".TH KVX 1 \"\" \"kvx %s\" \"User Commands\"\n", version_text());
    fputs(".SH NAME\nkvx \\- a CUDA kernel variant explorer\n"
          ".SH SYNOPSIS\n\\fBkvx\\fR \\fIVERB\\fR [\\fIoptions\\fR] [\\fIoperands\\fR]\n.br\n"
          "\\fBkvx\\fR \\fIVERB\\fR \\-\\-help\n.br\n\\fBkvx\\fR \\-\\-version\n"
          ".SH DESCRIPTION\n"
          "kvx reads a YAML spec of kernel variants, emits one CUDA source per variant from a template,\n"
          "compiles them with NVRTC, runs them on the GPUs in supervised worker processes, verifies\n"
          "every output against a reference, times them and stores every case in SQLite.\n"
          "Each verb's \\-\\-help prints the options below with their defaults.\n"
          ".PP\nWithout a GPU, a spec's kernels plan, compile and inspect but do not run: run exits 4.\n"
          ".SH VERBS\n", f);
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        man_verb(f, *v);
    man_tagged(f, "EXIT STATUS", MAN_EXIT, sizeof MAN_EXIT / sizeof MAN_EXIT[0]);
    man_tagged(f, "ENVIRONMENT", MAN_ENV, sizeof MAN_ENV / sizeof MAN_ENV[0]);
    fputs(".SH FILES\nThe example specs and their templates: share/kvx/specs, share/kvx/templates.\n"
          ".SH SEE ALSO\nThe guides installed with kvx (share/doc/kvx): cli.md (every variable above in\n"
          "its table), spec.md, measurement.md, results\\-schema.md, inspect.md, slurm.md, peers.md.\n", f);
}

/* ---- bash completion --------------------------------------------------------------- */

/* The words a value of o completes to, or NULL for files (a path) or none. */
static void bash_values(FILE *f, const CliOpt *o)
{
    if (o->kind == CLI_CHOICE) {
        fprintf(f, "        --%s) words=\"", o->name);
        for (const CliChoice *c = o->choices; c->name; c++)
            fprintf(f, "%s%s", c == o->choices ? "" : " ", c->name);
        fputs("\";;\n", f);
    } else if (o->set == cli_set_gpu) {
        fprintf(f, "        --%s) words=\"", o->name);
        for (int i = 0; facts_gpu_name(i); i++)
            fprintf(f, "%s%s", i ? " " : "", facts_gpu_name(i));
        fputs("\";;\n", f);
    } else if (o->kind == CLI_PATH)
        fprintf(f, "        --%s) files=1;;\n", o->name);
}

static void bash_verb(FILE *f, const CliVerb *v)
{
    fprintf(f, "    %s)\n        opts=\"", v->name);
    for (const CliOpt *o = v->opts; o->name; o++)
        fprintf(f, "--%s%s ", o->name, o->kind != CLI_FLAG && o->implied ? "=" : "");
    fputs("--help\"\n        case \"$prev\" in\n", f);
    for (const CliOpt *o = v->opts; o->name; o++)
        bash_values(f, o);
    fputs("        esac;;\n", f);
}

void cli_doc_bash(FILE *f)
{
    fputs("# bash completion for kvx, written by `kvx __bash-completion` from its option tables.\n"
          "_kvx()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local verb=${COMP_WORDS[1]} opts=\"\" words=\"\" files=0\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"", f);
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        fprintf(f, "%s ", (*v)->name);
    fputs("--help --version\" -- \"$cur\"))\n        return\n    fi\n    case \"$verb\" in\n", f);
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        bash_verb(f, *v);
    fputs("    esac\n"
          "    if [ -n \"$words\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    elif [ \"$files\" = 1 ] || [[ $cur != -* ]]; then\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -o filenames -o bashdefault -F _kvx kvx\n", f);
}
