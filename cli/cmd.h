/* cmd: the verbs of the kvx binary, by family: cmd_spec.c (plan, gen,
 * compile), cmd_inspect.c (inspect), cmd_run.c (run), cmd_results.c (table,
 * report, compare, export, import, merge), cmd_replay.c (replay),
 * cmd_doctor.c (doctor).  Each defines its verb's CliVerb (cli.h: its option
 * table) and its entry; cli.c lists them in CLI_VERBS. */
#ifndef KVX_CMD_H
#define KVX_CMD_H

#include "cli.h"

/* ---- the verbs ---------------------------------------------------------------------- */

extern const CliVerb cmd_plan_verb, cmd_gen_verb, cmd_compile_verb, cmd_inspect_verb, cmd_run_verb,
    cmd_table_verb, cmd_report_verb, cmd_compare_verb, cmd_export_verb, cmd_import_verb,
    cmd_merge_verb, cmd_doctor_verb, cmd_replay_verb;

/* Each verb's entry: argv[0] is its name.  The exit status: 0 ok, 1 some
 * cases or checks failed (run, compile, doctor), 2 bad usage or input, 3 a
 * file or database failure. */
/* cmd_spec_rows.c: the tables of --format.  plan: a row per selected point
 * (its source and axis values; with --resolve, its launch and metrics), 0 or
 * 2 after the error.  compile: a row per compiled source. */
int cmd_spec_plan_rows(const CliSpecOpts *o, const Plan *p, const PlanRef *ref, const unsigned char *sel,
                       FILE *out);
extern const char *const cmd_spec_compile_cols[];
extern const int cmd_spec_compile_ncols;
void cmd_spec_compile_row(ResultsRows *t, const char *arch, const Source *so, const JitJob *j);

int cmd_plan(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_table(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_replay(int argc, char **argv);

#endif
