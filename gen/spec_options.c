/* spec_options: the spec's `options:`, the words kvx adds to NVRTC's command.
 *
 * The rule (docs/spec.md, Options): an option is passed only when kvx knows
 * it changes nothing but the generated code or the diagnostics.  An allow
 * list, not a deny list: `--pre-include=FILE` pasted any file into every
 * source past the confinement of includes, and NVRTC and ptxas have more
 * options that read or write files (-include, --use-pch, --create-pch,
 * --pch-dir, --time, --device-time-trace, ptxas's --options-file and
 * --output-file) than a deny list would keep up with.  The one option that
 * names a folder, -I (--include-path), is accepted inside the spec's or the
 * template's folder tree, as an include is, and passed as that folder's real
 * path: NVRTC resolves a relative one from wherever kvx runs. */
#include "spec_internal.h"

#include <stdlib.h>

/* How an option carries its value: none (-G), after '=' (--std=c++17), or
 * attached (-DNAME, -O3); FLAG_OR_EQ takes either of the first two. */
typedef enum { OPT_FLAG, OPT_EQ, OPT_FLAG_OR_EQ, OPT_ATTACHED } OptForm;

typedef struct OptRule {
    const char *name;
    OptForm form;
} OptRule;

/* NVRTC's options that touch no file (CUDA 12's nvrtc documentation). */
static const OptRule NVRTC_OPTS[] = {
    {"--device-c", OPT_FLAG}, {"-dc", OPT_FLAG}, {"--device-w", OPT_FLAG}, {"-dw", OPT_FLAG},
    {"--relocatable-device-code", OPT_EQ}, {"-rdc", OPT_EQ},
    {"--extensible-whole-program", OPT_FLAG}, {"-ewp", OPT_FLAG},
    {"--device-debug", OPT_FLAG}, {"-G", OPT_FLAG},
    {"--generate-line-info", OPT_FLAG}, {"-lineinfo", OPT_FLAG},
    {"--dopt", OPT_EQ}, {"-dopt", OPT_EQ}, {"--maxrregcount", OPT_EQ}, {"-maxrregcount", OPT_EQ},
    {"--ftz", OPT_EQ}, {"-ftz", OPT_EQ}, {"--prec-sqrt", OPT_EQ}, {"-prec-sqrt", OPT_EQ},
    {"--prec-div", OPT_EQ}, {"-prec-div", OPT_EQ}, {"--fmad", OPT_EQ}, {"-fmad", OPT_EQ},
    {"--use_fast_math", OPT_FLAG}, {"-use_fast_math", OPT_FLAG},
    {"--extra-device-vectorization", OPT_FLAG}, {"-extra-device-vectorization", OPT_FLAG},
    {"--modify-stack-limit", OPT_EQ}, {"-modify-stack-limit", OPT_EQ},
    {"--dlink-time-opt", OPT_FLAG}, {"-dlto", OPT_FLAG},
    {"--jump-table-density", OPT_EQ}, {"-jump-table-density", OPT_EQ},
    {"--device-stack-protector", OPT_EQ}, {"-device-stack-protector", OPT_EQ},
    {"--define-macro", OPT_EQ}, {"-D", OPT_ATTACHED}, {"--undefine-macro", OPT_EQ}, {"-U", OPT_ATTACHED},
    {"--std", OPT_EQ}, {"-std", OPT_EQ}, {"-O", OPT_ATTACHED},
    {"--builtin-move-forward", OPT_EQ}, {"-builtin-move-forward", OPT_EQ},
    {"--builtin-initializer-list", OPT_EQ}, {"-builtin-initializer-list", OPT_EQ},
    {"--disable-warnings", OPT_FLAG}, {"-w", OPT_FLAG}, {"--restrict", OPT_FLAG}, {"-restrict", OPT_FLAG},
    {"--device-as-default-execution-space", OPT_FLAG}, {"-default-device", OPT_FLAG},
    {"--device-int128", OPT_FLAG}, {"-device-int128", OPT_FLAG},
    {"--optimization-info", OPT_EQ}, {"-opt-info", OPT_EQ},
    {"--display-error-number", OPT_FLAG}, {"-err-no", OPT_FLAG},
    {"--no-display-error-number", OPT_FLAG}, {"-no-err-no", OPT_FLAG},
    {"--diag-error", OPT_EQ}, {"-diag-error", OPT_EQ}, {"--diag-suppress", OPT_EQ},
    {"-diag-suppress", OPT_EQ}, {"--diag-warn", OPT_EQ}, {"-diag-warn", OPT_EQ},
    {"--brief-diagnostics", OPT_EQ}, {"-brief-diag", OPT_EQ},
    {"--split-compile", OPT_EQ}, {"-split-compile", OPT_EQ},
    {"--fdevice-syntax-only", OPT_FLAG}, {"-fdevice-syntax-only", OPT_FLAG},
    {"--minimal", OPT_FLAG}, {"-minimal", OPT_FLAG}, {"--Werror", OPT_EQ}, {"-Werror", OPT_EQ},
    {NULL, OPT_FLAG},
};

/* ptxas's, inside --ptxas-options=A,B (-Xptxas=A,B): the same rule. */
static const OptRule PTXAS_OPTS[] = {
    {"-v", OPT_FLAG}, {"--verbose", OPT_FLAG}, {"-O", OPT_ATTACHED},
    {"--opt-level", OPT_EQ}, {"--warn-on-spills", OPT_FLAG}, {"-warn-spills", OPT_FLAG},
    {"--warn-on-local-memory-usage", OPT_FLAG}, {"-warn-lmem-usage", OPT_FLAG},
    {"--warn-on-double-precision-use", OPT_FLAG}, {"-warn-double-usage", OPT_FLAG},
    {"--maxrregcount", OPT_EQ}, {"-maxrregcount", OPT_EQ},
    {"--def-load-cache", OPT_EQ}, {"-dlcm", OPT_EQ}, {"--def-store-cache", OPT_EQ}, {"-dscm", OPT_EQ},
    {"--allow-expensive-optimizations", OPT_FLAG_OR_EQ}, {"-allow-expensive-optimizations", OPT_FLAG_OR_EQ},
    {"--disable-optimizer-constants", OPT_FLAG}, {"-disable-optimizer-consts", OPT_FLAG},
    {"--fmad", OPT_EQ}, {"-fmad", OPT_EQ}, {"--sp-bounds-check", OPT_FLAG}, {"-sp-bounds-check", OPT_FLAG},
    {"--suppress-stack-size-warning", OPT_FLAG}, {"-suppress-stack-size-warning", OPT_FLAG},
    {"--Werror", OPT_FLAG}, {"-Werror", OPT_FLAG},
    {NULL, OPT_FLAG},
};

static int rule_matches(const OptRule *r, const char *o)
{
    size_t n = strlen(r->name);
    if (strncmp(o, r->name, n) != 0)
        return 0;
    switch (r->form) {
    case OPT_FLAG: return o[n] == 0;
    case OPT_EQ: return o[n] == '=' && o[n + 1];
    case OPT_FLAG_OR_EQ: return o[n] == 0 || (o[n] == '=' && o[n + 1]);
    case OPT_ATTACHED: return o[n] != 0;
    }
    return 0;
}

static int allowed(const OptRule *rules, const char *o)
{
    for (const OptRule *r = rules; r->name; r++)
        if (rule_matches(r, o))
            return 1;
    return 0;
}

/* Every comma-separated word of a ptxas-options value is ptxas's allowed. */
static int ptxas_allowed(const char *v)
{
    char *copy = mem_strdup(v), *save = NULL;
    int ok = 1;
    for (char *w = strtok_r(copy, ",", &save); w && ok; w = strtok_r(NULL, ",", &save))
        ok = allowed(PTXAS_OPTS, w);
    free(copy);
    return ok;
}

/* Does real lie in the folder tree of dir (both after symbolic links)? */
static int under(const char *real, const char *dir)
{
    char *root = realpath(dir, NULL);
    size_t n = root ? strlen(root) : 0;
    int in = n && !strncmp(real, root, n) && (real[n] == '/' || real[n] == 0 || root[n - 1] == '/');
    free(root);
    return in;
}

/* -I DIR (--include-path=DIR): DIR relative to the spec, inside the spec's or
 * the template's folder tree; *o becomes -I and its real path. */
static int include_path(Loader *L, const yaml_node_t *n, const char *dir, const char **o)
{
    Spec *s = L->s;
    char *full = path_join(s->dir, dir), *real = realpath(full, NULL);
    char *tdir = path_dir(s->template_path);
    int ok = real && (under(real, s->dir) || under(real, tdir));
    if (ok)
        *o = arena_printf(s->arena, "-I%s", real);
    else
        spec_loader_fail(L, n, "option '%s' names a folder %s (expected one inside the spec's or the "
                    "template's folder tree)", *o, real ? "outside both" : "that does not exist");
    free(tdir);
    free(real);
    free(full);
    return ok ? 0 : -1;
}

/* One option at node n, checked (and an include path made real) in *o. */
static int check_option(Loader *L, const yaml_node_t *n, const char **o)
{
    const char *w = *o;
    if (!strncmp(w, "-I", 2) && w[2])
        return include_path(L, n, w + 2, o);
    if (!strncmp(w, "--include-path=", 15) && w[15])
        return include_path(L, n, w + 15, o);
    const char *px = !strncmp(w, "--ptxas-options=", 16) ? w + 16 : !strncmp(w, "-Xptxas=", 8) ? w + 8 : NULL;
    if (px ? *px && ptxas_allowed(px) : allowed(NVRTC_OPTS, w))
        return 0;
    return spec_loader_fail(L, n, "option '%s' is not one kvx passes to NVRTC (expected one that changes only "
                       "the generated code or the diagnostics; options that read or write files are "
                       "refused: docs/spec.md, Options)", w);
}

int spec_options_load(Loader *L, yaml_node_t *seq)
{
    Spec *s = L->s;
    if (spec_loader_strings(L, seq, "options", &s->options, &s->noptions))
        return -1;
    for (int i = 0; i < s->noptions; i++)
        if (check_option(L, node(L, seq->data.sequence.items.start[i]), &s->options[i]))
            return -1;
    return 0;
}
