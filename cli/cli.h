/* cli: the command line of the kvx binary.
 *
 * Every verb is one CliVerb: its operands, a summary, and one table of
 * options (CliOpt: long name, short name, kind of value, default, help, where
 * the value goes).  cli_parse reads a verb's arguments from that table and
 * cli_usage writes its --help from it, so a verb takes exactly the options it
 * lists and says so.  Every usage error (an unknown option, a missing value, a
 * bad number, operands missing or extra) is one line `kvx VERB: ...` on stderr
 * and exit status 2; --help and -h print the usage on stdout, exit 0.
 *
 * The verbs are cmd.h's, by family in the cmd_*.c files; main.c dispatches
 * through CLI_VERBS.
 *
 * Also what the spec verbs share (cli.c): a spec loaded into a plan for an
 * arch, the archs of --arch, the compile cache's place. */
#ifndef KVX_CLI_H
#define KVX_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "gen/plan.h"
#include "gen/plan_ref.h"
#include "compile/jit.h"
#include "report/results_rows.h"

/* ---- option tables ----------------------------------------------------------------- */

/* What an option's value is.  Numbers are read strictly: decimal digits
 * (and for CLI_DOUBLE a fraction and an exponent), nothing before or after,
 * within the option's bounds. */
typedef enum CliKind {
    CLI_FLAG,       /* no value: the int at `at` becomes 1 */
    CLI_STRING,     /* any text: const char * */
    CLI_PATH,       /* a file or folder, not empty: const char * */
    CLI_INT,        /* a whole number in [lo, hi]: int */
    CLI_INT64,      /* a whole number in [lo, hi]: int64_t */
    CLI_UINT64,     /* a whole number below 2^64: uint64_t */
    CLI_DOUBLE,     /* a finite number in [lo, hi]: double */
    CLI_CHOICE,     /* one of `choices`: its value, into an int */
} CliKind;

typedef struct CliChoice {
    const char *name;
    int value;
} CliChoice;

/* Flags of an option. */
enum {
    CLI_REQUIRED = 1,       /* the verb needs it (a CLI_STRING or CLI_PATH, NULL until given) */
    CLI_SHOW_DEFAULT = 2,   /* the usage shows the field's value before parsing as the default */
    CLI_AND = 4,            /* a CLI_STRING given again joins the earlier: (A) && (B) */
};

/* What a setter gets: it checks value and stores it, and returns 0, or -1
 * with the message (what follows "kvx VERB: ") in why. */
typedef struct CliSet {
    void *opts;                 /* the verb's options */
    void *field;                /* opts + the option's `at` */
    const char *value;          /* NULL for a CLI_FLAG */
    char why[512];
} CliSet;

/* One option.  Without a setter the value is checked as the kind says and
 * stored at `at` in the verb's options struct; with one, the setter checks
 * and stores it (the kind then says only whether the option takes a value). */
typedef struct CliOpt {
    const char *name;       /* long name, without "--" */
    char letter;            /* short name (-j), or 0 */
    CliKind kind;
    const char *arg;        /* the value's name in the usage (N, PATH); NULL for a flag or a choice */
    const char *def;        /* the default the usage shows, or NULL */
    const char *help;
    size_t at;              /* offsetof the field */
    size_t given;           /* CLI_GIVEN(T, field): an int set to 1 when given; 0: none */
    double lo, hi;          /* bounds of CLI_INT, CLI_INT64, CLI_DOUBLE */
    const CliChoice *choices;   /* CLI_CHOICE: ended by {0} */
    const char *implied;    /* CLI_CHOICE: the value when none is given (--flush-l2), or NULL */
    const char *expect;     /* what a bad value should have been, when the kind's words do not say it */
    const char *heading;    /* a line the usage puts before this option, or NULL */
    int flags;
    int (*set)(CliSet *s);
} CliOpt;

/* A table entry: the seven fields every option has, then designated ones
 * (.lo = 1, .set = ...). */
#define CLI_OPT(name_, letter_, kind_, arg_, def_, help_, at_, ...)                                        \
    {.name = name_, .letter = letter_, .kind = kind_, .arg = arg_, .def = def_, .help = help_, .at = at_, \
     __VA_ARGS__}

/* The `given` of a field: its offset plus one, so that 0 means none. */
#define CLI_GIVEN(T, field) (offsetof(T, field) + 1)

typedef struct CliVerb {
    const char *name;
    const char *operands;       /* in the usage line: "SPEC", "A B", "" */
    const char *operands_are;   /* in a message: "one SPEC file", "no operands" */
    int min_operands, max_operands;     /* max -1: any number */
    const char *summary;        /* one line: kvx --help's, and the usage's second */
    size_t opts_size;           /* sizeof the options struct its table fills */
    const CliOpt *opts;         /* ended by {0}; --help and -h are every verb's */
    const char *notes;          /* lines after the options, or NULL */
    int (*run)(int argc, char **argv);
} CliVerb;

/* The verbs kvx --help lists, in its order, ended by NULL. */
extern const CliVerb *const CLI_VERBS[];

typedef struct CliArgs {
    char **operand;             /* the operands, at the end of argv */
    int noperands;
    int status;                 /* when cli_parse returns -1: 0 after --help, 2 after a usage error */
} CliArgs;

/* Parse argv[1..argc-1] (argv[0] is the verb's name) into opts, which holds
 * the defaults (v->opts_size bytes; --help shows them as they were).
 * Options come anywhere before a "--"; as getopt does, argv is reordered so
 * that the options come first, in their order, then the operands (every word
 * stays: a verb that re-executes itself passes them on).  Returns 0 with
 * a->operand, or -1 when the verb is done: --help printed the usage on stdout
 * (a->status 0), or a usage error was printed on stderr (a->status 2). */
int cli_parse(const CliVerb *v, int argc, char **argv, void *opts, CliArgs *a);

/* The usage of v, its defaults from opts (the struct cli_parse would fill). */
void cli_usage(const CliVerb *v, const void *opts, FILE *f);

/* A usage error of v after parsing: "kvx VERB: message" and the usage line
 * on stderr.  Returns 2, the exit status. */
int cli_fail(const CliVerb *v, const char *fmt, ...) KVX_PRINTF(2, 3);

/* ---- what the spec verbs share ------------------------------------------------------- */

/* What --show prints. */
enum { CLI_SHOW_NONE, CLI_SHOW_SOURCE, CLI_SHOW_PTX, CLI_SHOW_SASS };

/* --format of the verbs that list things (plan, compile, inspect, doctor):
 * text, their summary for a reader (the default), or one table as md, csv
 * or json (report/results_rows.h), as the result verbs write theirs.  The
 * value is CLI_TEXT or a ResultsFormat. */
enum { CLI_TEXT = -1 };
extern const CliChoice cli_list_formats[];
#define CLI_OPT_FORMAT(what_, at_)                                                                          \
    CLI_OPT("format", 0, CLI_CHOICE, NULL, "text", "text, or " what_ " as one table: md, csv or json", at_, \
            .choices = cli_list_formats)

/* The options of plan, gen, compile and inspect; each verb's table names the
 * ones it takes. */
typedef struct CliSpecOpts {
    const char *spec_path;
    const char *archs;          /* "sm_80,sm_90"; NULL: the local GPU's, else sm_90 */
    const char *gpu;            /* --gpu NAME: a named target's facts and arch (facts_for_gpu) */
    const char *where;          /* --where filter over points */
    const char *out;            /* --out DIR */
    const char *cache_dir;      /* NULL: jit_default_cache_dir() */
    int no_cache;
    int jobs;                   /* -j: compile processes; 0 = the cores it may use */
    int group;                  /* --group: sources per NVRTC program; 0 = chosen per batch */
    int profile;                /* --profile: where the compile's time went */
    int points;                 /* plan --points: list every point */
    int resolve;                /* plan --resolve: every selected point's resolved case */
    int show;                   /* inspect --show: CLI_SHOW_* */
    const char *shard;          /* --shard K/N */
    int format;                 /* --format: CLI_TEXT or a ResultsFormat (plan, compile, inspect) */
} CliSpecOpts;

/* cli_parse into o (zeroed first) and the one operand into o->spec_path.
 * --gpu and --arch together must name the same one arch (a usage error
 * otherwise).  0, or -1 when the verb is done with the exit status *status
 * (CliArgs). */
int cli_parse_spec(const CliVerb *v, int argc, char **argv, CliSpecOpts *o, int *status);

/* Setters of --arch (one arch, or a list of at most 16) and --shard K/N into
 * a const char * field: the value is checked as it is parsed, so a bad one is
 * a usage error. */
int cli_set_arch(CliSet *s);
int cli_set_archs(CliSet *s);
int cli_set_shard(CliSet *s);
/* Setter of --gpu NAME: one of the named targets (facts_for_gpu). */
int cli_set_gpu(CliSet *s);

/* Split "sm_80,sm_90" into at most max archs validated against facts_for_arch.
 * Returns the count or -1 with err. */
int cli_split_archs(const char *list, char archs[][16], int max, KvxError *err);

/* The arch to use when none is given: the first GPU's (probed in a child
 * process), else sm_90.  *from_gpu says which. */
void cli_default_arch(char arch[16], int *from_gpu);

/* Load a spec, plan it for arch (or, with gpu, the named target's facts)
 * with its references, select the points of
 * --where (where may be NULL) and resolve every selected point as a run would
 * (resolve_plan).  0, or 2 after printing the error (nothing to free then);
 * on success free *ref with plan_ref_free. */
int cli_load_plan(const char *path, const char *where, const char *arch, const char *gpu, Spec **spec,
                  Plan *plan, PlanRef *ref, unsigned char **sel);

/* The archs of --arch (checked when parsed), else the --gpu target's, else
 * the default one.  The count. */
int cli_archs(const CliSpecOpts *o, char archs[][16], int max);

/* ---- documents from the tables (cli_doc.c) --------------------------------------------- */

/* The man page kvx(1), roff, and the bash completion script: every verb of
 * CLI_VERBS with every option of its table (kvx __man, kvx __bash-completion). */
void cli_doc_man(FILE *f);
void cli_doc_bash(FILE *f);

/* The verbs (cmd.h: each family's cmd_*.c defines its own). */
#include "cmd.h"

#endif
