/* cli: the verbs of the kvx binary and what they share (loading a spec into a
 * plan for an arch, option parsing helpers, the cache location). */
#ifndef KVX_CLI_H
#define KVX_CLI_H

#include "../gen/plan.h"
#include "../gen/plan_ref.h"
#include "jit.h"

/* Options common to the verbs that take a spec. */
typedef struct CliSpecOpts {
    const char *spec_path;
    const char *archs;          /* "sm_80,sm_90"; NULL: the local GPU's, else sm_90 */
    const char *where;          /* --where filter over points */
    const char *out;            /* --out DIR */
    const char *cache_dir;      /* NULL: cli_default_cache_dir() */
    int no_cache;
    int jobs;                   /* -j: compile threads; 0 = cores */
    int points;                 /* plan --points: list every point */
    const char *show;           /* inspect --show source|ptx|sass */
    const char *shard;          /* --shard K/N */
} CliSpecOpts;

/* Parse the common options; unknown options are an error (exit 2).  Returns 0,
 * or 2 after printing usage to stderr. */
int cli_parse_spec_opts(const char *verb, int argc, char **argv, CliSpecOpts *o);

/* $KVX_CACHE_DIR, $XDG_CACHE_HOME/kvx or ~/.cache/kvx; malloc'd. */
char *cli_default_cache_dir(void);

/* Split "sm_80,sm_90" into at most max archs validated against facts_for_arch.
 * Returns the count or -1 with err. */
int cli_split_archs(const char *list, char archs[][16], int max, KvxError *err);

/* The arch to use when none is given: the first GPU's (probed in a child
 * process), else sm_90.  *from_gpu says which. */
void cli_default_arch(char arch[16], int *from_gpu);

/* Load a spec, plan it for arch with its references, select the points of
 * --where (where may be NULL) and resolve every selected point as a run would
 * (resolve_plan).  0, or 2 after printing the error (nothing to free then);
 * on success free *ref with plan_ref_free. */
int cli_load_plan(const char *path, const char *where, const char *arch, Spec **spec, Plan *plan,
                  PlanRef *ref, unsigned char **sel);

/* The archs of --arch (validated), or the default one.  The count, or -1
 * after printing the error. */
int cli_archs(const CliSpecOpts *o, char archs[][16], int max);

/* Points selected by --where (all when NULL): a malloc'd 0/1 array, or NULL with err. */
unsigned char *cli_select_points(const Plan *p, const char *where, KvxError *err);

int cmd_plan(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif
