/* spec: load a YAML spec (schema 1) with libyaml's document API and check it.
 *
 * Every node is checked where it is read: unknown keys, wrong node kinds, empty
 * or duplicate axis values, bad expressions and names that resolve to nothing are
 * errors carrying the node's file:line:col.  Positions from libyaml are 0-based;
 * ours are 1-based.  An expression written as a quoted scalar starts one column
 * after the quote, so its error columns point into the text the user typed.
 *
 * This file is the loader's core: spec_load (the document, its top level and
 * head: kvx, name, doc, template, kernel, headers, options, tolerance, in
 * load_root, then the sections in order) and spec_free; the helpers every
 * section's loader uses (spec_loader_fail, spec_loader_want,
 * spec_loader_check_keys, spec_loader_unique_keys, spec_loader_scalar_value,
 * spec_loader_double, spec_loader_bool, spec_loader_string,
 * spec_loader_strings, spec_loader_expr, spec_loader_template); the name
 * checks across all sections once they are loaded (check_all_names) and
 * spec_check_axis_values; the finders spec_axis_find, spec_buffer_find and
 * spec_let_find.  The space (axes, zip, set, let, where) is spec_space.c's,
 * the sections that describe a variant's launches and checks
 * spec_sections.c's, `options:` spec_options.c's; spec_internal.h is what
 * they share. */
#include "spec_internal.h"
#include "core/refs.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

/* ---- errors and keys -------------------------------------------------------- */

int spec_loader_fail(Loader *L, const yaml_node_t *n, const char *fmt, ...)
{
    SrcPos p = n ? node_pos(L, n) : (SrcPos){L->file, 0, 0};
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(L->err, KVX_EINPUT, &p, fmt, ap);
    va_end(ap);
    return -1;
}

int spec_loader_unique_keys(Loader *L, const yaml_node_t *map, const char *what)
{
    if (map->type != YAML_MAPPING_NODE)
        return 0;   /* the caller's spec_loader_want says what it is */
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        if (!is_scalar(k))
            continue;
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (is_scalar(node(L, q->key)) && !strcmp(scalar(node(L, q->key)), scalar(k)))
                return spec_loader_fail(L, k, "duplicate key '%s' in %s", scalar(k), what);
    }
    return 0;
}

int spec_loader_want(Loader *L, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
    if (n->type == t)
        return 0;
    const char *exp = t == YAML_SCALAR_NODE ? "a scalar" : t == YAML_SEQUENCE_NODE ? "a list" : "a mapping";
    return spec_loader_fail(L, n, "%s is %s (expected %s)", what, kind_name(n), exp);
}

/* Check a mapping's keys against the allowed set: scalars, known, not repeated,
 * and every required key present. */
int spec_loader_check_keys(Loader *L, yaml_node_t *map, const KeyDoc *keys, const char *what)
{
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, what))
        return -1;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        if (!is_scalar(k))
            return spec_loader_fail(L, k, "a key in %s is %s (expected a name)", what, kind_name(k));
        int found = 0;
        for (const KeyDoc *d = keys; d->key; d++)
            found |= strcmp(d->key, scalar(k)) == 0;
        if (!found) {
            StrBuf b;
            sb_init(&b);
            for (const KeyDoc *d = keys; d->key; d++)
                sb_printf(&b, "%s%s", d == keys ? "" : ", ", d->key);
            /* A comma inside {...} or [...] splits an unquoted expression: say so. */
            int split = strpbrk(scalar(k), "()") != NULL;
            spec_loader_fail(L, k, "unknown key '%s' in %s (expected one of: %s)%s", scalar(k), what, sb_str(&b),
                 split ? "; an expression with commas inside {...} or [...] must be quoted" : "");
            sb_free(&b);
            return -1;
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (strcmp(scalar(node(L, q->key)), scalar(k)) == 0)
                return spec_loader_fail(L, k, "duplicate key '%s' in %s", scalar(k), what);
    }
    for (const KeyDoc *d = keys; d->key; d++) {
        if (!d->required)
            continue;
        int found = 0;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
            found |= strcmp(scalar(node(L, p->key)), d->key) == 0;
        if (!found)
            return spec_loader_fail(L, map, "missing key '%s' in %s", d->key, what);
    }
    return 0;
}

/* ---- scalar values --------------------------------------------------------- */

/* Text that reaches generated sources, labels and index.tsv is one line of
 * printable text: a "\n" in a value once wrote "#error injected" as a live
 * line of every variant.  0, or -1 with L->err naming the character. */
static int printable(Loader *L, const yaml_node_t *n, const char *what, int lines_ok)
{
    /* A "\0" escape ends the C string early: the rest would vanish unseen. */
    size_t len = strlen(scalar(n));
    const char *c = len < n->data.scalar.length ? scalar(n) + len : sb_first_control(scalar(n), lines_ok);
    if (!c)
        return 0;
    StrBuf b;
    sb_init(&b);
    sb_put_escaped(&b, scalar(n));
    spec_loader_fail(L, n, "%s \"%s\" has a control character (byte %d) (expected printable text)", what,
                sb_str(&b), (int)(c - scalar(n)) + 1);
    sb_free(&b);
    return -1;
}

/* Parse an axis value as written: numbers in every form docs/spec.md lists,
 * booleans, else a string.  Quoted scalars are always strings. */
Value spec_loader_scalar_value(Loader *L, const yaml_node_t *n)
{
    const char *t = scalar(n);
    if (printable(L, n, "value", 0))
        return val_str(arena_strdup(L->s->arena, t));
    if (is_quoted(n))
        return val_str(arena_strdup(L->s->arena, t));
    if (strcmp(t, "true") == 0)
        return val_bool(1);
    if (strcmp(t, "false") == 0)
        return val_bool(0);
    /* Numbers go through the expression parser so that 2^24, 16M and 0x10 mean
     * here exactly what they mean in expressions.  Only literal-looking text is
     * tried: a name must stay a string. */
    int numeric = isdigit((unsigned char)t[0]) || ((t[0] == '-' || t[0] == '+' || t[0] == '.') &&
                                                   (isdigit((unsigned char)t[1]) || t[1] == '.'));
    if (numeric) {
        KvxError e = {0};
        SrcPos p = text_pos(L, n);
        Expr *x = expr_parse(L->s->arena, t, &p, &e);
        Value v;
        if (x && expr_eval(x, &(ExprEnv){0}, &v, &e) == 0 && val_is_num(v)) {
            kvx_error_clear(&e);
            return v;
        }
        /* A number too large is an error, not the string of its digits: the
         * value would silently stop being a number. */
        if (!L->err->code && strstr(e.msg, "out of range")) {
            *L->err = e;
            return val_str(arena_strdup(L->s->arena, t));
        }
        kvx_error_clear(&e);
    }
    return val_str(arena_strdup(L->s->arena, t));
}

int spec_loader_double(Loader *L, const yaml_node_t *n, const char *what, double *out)
{
    if (!is_scalar(n))
        return spec_loader_fail(L, n, "%s is %s (expected a number)", what, kind_name(n));
    Value v = spec_loader_scalar_value(L, n);
    if (!val_is_num(v))
        return spec_loader_fail(L, n, "%s is '%s' (expected a number)", what, scalar(n));
    *out = val_num(v);
    return 0;
}

int spec_loader_bool(Loader *L, const yaml_node_t *n, const char *what, int *out)
{
    if (!is_scalar(n) || is_quoted(n) ||
        (strcmp(scalar(n), "true") != 0 && strcmp(scalar(n), "false") != 0))
        return spec_loader_fail(L, n, "%s is '%s' (expected true or false)", what,
                    is_scalar(n) ? scalar(n) : kind_name(n));
    *out = strcmp(scalar(n), "true") == 0;
    return 0;
}

/* A string: one line of printable text, or (lines_ok: doc:) prose. */
static int load_string(Loader *L, const yaml_node_t *n, const char *what, int lines_ok,
                       const char **out)
{
    if (!is_scalar(n))
        return spec_loader_fail(L, n, "%s is %s (expected a string)", what, kind_name(n));
    if (printable(L, n, what, lines_ok))
        return -1;
    *out = arena_strdup(L->s->arena, scalar(n));
    return 0;
}

int spec_loader_string(Loader *L, const yaml_node_t *n, const char *what, const char **out)
{
    return load_string(L, n, what, 0, out);
}

Expr *spec_loader_expr(Loader *L, const yaml_node_t *n, const char *what)
{
    if (!is_scalar(n)) {
        spec_loader_fail(L, n, "%s is %s (expected an expression)", what, kind_name(n));
        return NULL;
    }
    if (scalar(n)[0] == 0) {
        spec_loader_fail(L, n, "%s is empty (expected an expression)", what);
        return NULL;
    }
    if (printable(L, n, what, 1))
        return NULL;
    SrcPos p = text_pos(L, n);
    Expr *e = expr_parse(L->s->arena, scalar(n), &p, L->err);
    if (!e && !is_quoted(n) && L->text) {
        /* YAML ends a plain scalar at a comma inside {...} or [...]: the usual
         * cause of an expression cut short there. */
        size_t end = n->end_mark.index;
        int cut = end < L->len && L->text[end] == ',';
        size_t len = strlen(L->err->msg);
        if (cut && len + 80 < sizeof L->err->msg)
            snprintf(L->err->msg + len, sizeof L->err->msg - len,
                     "; an expression with commas inside {...} or [...] must be quoted");
    }
    return e;
}

int spec_loader_strings(Loader *L, yaml_node_t *seq, const char *what, const char ***out, int *n)
{
    if (spec_loader_want(L, seq, YAML_SEQUENCE_NODE, what))
        return -1;
    int k = (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    *out = arena_alloc(L->s->arena, sizeof(char *) * (size_t)(k ? k : 1));
    for (int i = 0; i < k; i++)
        if (spec_loader_string(L, node(L, seq->data.sequence.items.start[i]), what, &(*out)[i]))
            return -1;
    *n = k;
    return 0;
}

/* ---- name checks ------------------------------------------------------------ */

/* check_names' allow_buffers: 0 none, 1 any buffer, NAMES_OUTPUTS checked
 * buffers (metrics, which read scalar outputs). */
enum { NAMES_OUTPUTS = 2 };

typedef struct NameCheck {
    Loader *L;
    int allow_buffers;
    int failed;
} NameCheck;

static void check_ident(void *ctx, const Expr *id)
{
    NameCheck *nc = ctx;
    if (nc->failed)
        return;
    const Spec *s = nc->L->s;
    if (spec_loader_name_taken(s, id->name))
        return;
    int bi = spec_buffer_find(s, id->name);
    if (bi >= 0 && nc->allow_buffers == NAMES_OUTPUTS && !s->bufs[bi].checked) {
        kvx_error_set(nc->L->err, KVX_EINPUT, &id->pos, "metric reads buffer '%s', which is not "
                      "checked (expected an output with a check: a metric reads a scalar output "
                      "after the verified launch)", id->name);
        nc->failed = 1;
        return;
    }
    if (bi >= 0) {
        if (nc->allow_buffers)
            return;
        kvx_error_set(nc->L->err, KVX_EINPUT, &id->pos,
                      "buffer '%s' cannot be used here (expected a value: buffers are allowed in "
                      "launch args and check references)", id->name);
        nc->failed = 1;
        return;
    }
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < s->naxes; i++)
        sb_printf(&b, "%s%s", b.len ? ", " : "", s->axes[i].name);
    for (int i = 0; i < s->nlets; i++)
        sb_printf(&b, "%s%s", b.len ? ", " : "", s->lets[i].name);
    for (int i = 0; i < s->nsets; i++)
        if (!strstr(sb_str(&b), s->sets[i].var))
            sb_printf(&b, "%s%s", b.len ? ", " : "", s->sets[i].var);
    if (nc->allow_buffers)
        for (int i = 0; i < s->nbufs; i++)
            sb_printf(&b, "%s%s", b.len ? ", " : "", s->bufs[i].name);
    sb_puts(&b, ", or a device fact");
    kvx_error_set(nc->L->err, KVX_EINPUT, &id->pos, "unknown name '%s' (expected an axis, let, set "
                  "variable%s: %s)", id->name, nc->allow_buffers ? ", buffer" : "", sb_str(&b));
    sb_free(&b);
    nc->failed = 1;
}

static int check_names(Loader *L, const Expr *e, int allow_buffers)
{
    if (!e)
        return 0;
    NameCheck nc = {L, allow_buffers, 0};
    expr_visit_idents(e, check_ident, &nc);
    return nc.failed || spec_check_axis_values(L->s, e, L->err) ? -1 : 0;
}

/* ---- comparisons with axis values ------------------------------------------- */

static void count_ident(void *ctx, const Expr *ident)
{
    (void)ident;
    ++*(int *)ctx;
}

static int no_names(void *ctx, const char *name, Value *out, KvxError *err)
{
    return 0;
}

/* The constant an operand stands for: a literal, or an expression without
 * names (2^24, -1, pow2(24)).  0 when it is not one, or when it does not
 * evaluate: the evaluator reports that where it matters. */
static int const_operand(const Spec *s, const Expr *e, Value *out)
{
    if (e->kind == EX_LIT) {
        *out = e->lit;
        return 1;
    }
    int nidents = 0;
    expr_visit_idents(e, count_ident, &nidents);
    if (nidents)
        return 0;
    KvxError err = {0};
    ExprEnv env = {no_names, NULL, s->arena};
    int ok = expr_eval(e, &env, out, &err) == 0;
    kvx_error_clear(&err);
    return ok;
}

/* 1 when a and b are both numbers, both strings or both booleans. */
static int same_kind(Value a, Value b)
{
    return val_is_num(a) ? val_is_num(b) : a.kind == b.kind;
}

/* Where the text of e begins: a binary node's position is its operator's. */
static const SrcPos *expr_start(const Expr *e)
{
    while (e->kind == EX_BINARY || e->kind == EX_COND)
        e = e->a;
    return &e->pos;
}

/* id == other (or !=): when id is an axis and other a constant, the constant
 * must be one of the axis's values. */
static int check_axis_cmp(const Spec *s, const Expr *id, const Expr *other, KvxError *err)
{
    Value v;
    int a = id->kind == EX_IDENT ? spec_axis_find(s, id->name) : -1;
    if (a < 0 || !const_operand(s, other, &v))
        return 0;
    const Axis *ax = &s->axes[a];
    int comparable = 0;
    for (int i = 0; i < ax->nvals; i++) {
        if (val_equal(ax->vals[i].v, v))
            return 0;
        comparable |= same_kind(ax->vals[i].v, v);
    }
    /* A constant of a kind no value has (a string axis against 1) is a type
     * mismatch, which the evaluator words itself. */
    if (!comparable)
        return 0;
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < ax->nvals; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", ax->vals[i].text);
    const char *q = v.kind == VAL_STR ? "\"" : "";
    kvx_error_set(err, KVX_EINPUT, expr_start(other), "axis '%s' has no value %s%s%s (expected one of: %s)",
                  ax->name, q, val_text(s->arena, v), q, sb_str(&b));
    sb_free(&b);
    return -1;
}

int spec_check_axis_values(const Spec *s, const Expr *e, KvxError *err)
{
    if (!e)
        return 0;
    if (e->kind == EX_BINARY && (e->op == OP_EQ || e->op == OP_NE) &&
        (check_axis_cmp(s, e->a, e->b, err) || check_axis_cmp(s, e->b, e->a, err)))
        return -1;
    if (spec_check_axis_values(s, e->a, err) || spec_check_axis_values(s, e->b, err) ||
        spec_check_axis_values(s, e->c, err))
        return -1;
    for (int i = 0; i < e->nargs; i++)
        if (spec_check_axis_values(s, e->args[i], err))
            return -1;
    return 0;
}

static int is_buffer_name(void *ctx, const char *name)
{
    return spec_buffer_find(ctx, name) >= 0;
}

/* A kernel's or a reference's arguments: a buffer stands alone as an
 * argument; inside arithmetic it has no value. */
static int check_args(Loader *L, Expr *const *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        const Expr *a = args[i];
        if (a->kind == EX_IDENT && spec_buffer_find(L->s, a->name) >= 0)
            continue;
        if (check_names(L, a, 0))
            return -1;
    }
    return 0;
}

static int check_launch_names(Loader *L, const LaunchSpec *l)
{
    for (int d = 0; d < 3; d++)
        if (check_names(L, l->grid[d], 0) || check_names(L, l->block[d], 0) ||
            check_names(L, l->cluster[d], 0))
            return -1;
    if (check_names(L, l->smem, 0) || check_names(L, l->when, 0))
        return -1;
    return check_args(L, l->args, l->nargs);
}

/* A check's expression: a host reference call against its signature (its
 * buffer arguments stand alone), or a scalar. */
static int check_expr_names(Loader *L, const Expr *r)
{
    if (!(r->kind == EX_CALL && expr_is_reference(r->name)))
        return check_names(L, r, 0);
    if (refs_find(r->name) && refs_check_call(r, is_buffer_name, L->s, L->err))
        return -1;
    return check_args(L, r->args, r->nargs);
}

/* A buffer's count, offset and init: each alternative of an init by axis. */
static int check_buffer_names(Loader *L, const BufferSpec *b)
{
    if (check_names(L, b->count, 0) || check_names(L, b->offset, 0))
        return -1;
    int nin = b->init.by_axis >= 0 ? L->s->axes[b->init.by_axis].nvals : 1;
    for (int k = 0; k < nin; k++) {
        const InitSpec *in = b->init.by_axis >= 0 ? &b->init.alts[k] : &b->init;
        Expr *xs[] = {in->value, in->lo, in->hi, in->exponent, in->fraction, in->length};
        for (size_t j = 0; j < sizeof xs / sizeof xs[0]; j++)
            if (check_names(L, xs[j], 0))
                return -1;
    }
    return 0;
}

static int check_all_names(Loader *L)
{
    Spec *s = L->s;
    for (int i = 0; i < s->nwhere; i++)
        if (check_names(L, s->where[i], 0))
            return -1;
    for (int i = 0; i < s->nlets; i++)
        if (check_names(L, s->lets[i].e, 0))
            return -1;
    for (int i = 0; i < s->nbufs; i++)
        if (check_buffer_names(L, &s->bufs[i]))
            return -1;
    for (int i = 0; i < s->nlaunches; i++)
        if (check_launch_names(L, &s->launches[i]))
            return -1;
    if (s->reference.has_launch && check_launch_names(L, &s->reference.launch))
        return -1;
    int compares_reference = 0;
    for (int i = 0; i < s->nchecks; i++) {
        const CheckSpec *c = &s->checks[i];
        compares_reference |= c->kind == CHECK_REFERENCE;
        if (c->kind == CHECK_EXPR && check_expr_names(L, c->ref))
            return -1;
    }
    if (s->reference.present && !compares_reference) {
        kvx_error_set(L->err, KVX_EINPUT, &s->reference.pos, "the reference is compared with "
                      "nothing (expected a check BUFFER: reference)");
        return -1;
    }
    const Expr *ms[] = {s->metrics.bytes, s->metrics.atomics, s->metrics.elements};
    for (int i = 0; i < 3; i++)
        if (check_names(L, ms[i], NAMES_OUTPUTS))
            return -1;
    return 0;
}

/* ---- top level ---------------------------------------------------------------- */

/* kvx: (the schema version), name:, doc:, kernel: and template: (a regular
 * file, relative to the spec's folder). */
static int load_head(Loader *L, yaml_node_t *root)
{
    Spec *s = L->s;
    yaml_node_t *n = get(L, root, "kvx");
    double version;
    if (spec_loader_double(L, n, "kvx", &version))
        return -1;
    if (version != 1)
        return spec_loader_fail(L, n, "schema version %g is not supported (expected 1)", version);
    n = get(L, root, "name");
    if (spec_loader_string(L, n, "name", &s->name))
        return -1;
    for (const char *c = s->name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-'))
            return spec_loader_fail(L, n, "name '%s' has a '%c' (expected letters, digits, _ and -)", s->name, *c);
    if ((n = get(L, root, "doc")) && load_string(L, n, "doc", 1, &s->doc))
        return -1;
    n = get(L, root, "kernel");
    if (spec_loader_string(L, n, "kernel", &s->kernel))
        return -1;
    if (!is_ident(s->kernel))
        return spec_loader_fail(L, n, "kernel '%s' is not a C identifier", s->kernel);
    return spec_loader_template(L, get(L, root, "template"), &s->template_path);
}

/* What a file that is not a regular one is, for a message. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) || S_ISBLK(m) ? "a device"
           : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Its includes are confined to the spec's and the template's folders; the
 * template itself, which fixes the second folder, must be CUDA source by its
 * name after symbolic links: `template: /etc/passwd` (or a link to a key)
 * would paste a secret into every source, and make its folder a root. */
int spec_loader_template(Loader *L, yaml_node_t *n, const char **path)
{
    const char *tmpl;
    if (spec_loader_string(L, n, "template", &tmpl))
        return -1;
    char *full = path_join(L->s->dir, tmpl);
    *path = arena_strdup(L->s->arena, full);
    free(full);
    struct stat st;
    if (stat(*path, &st) != 0)
        return spec_loader_fail(L, n, "template '%s' not found (looked for %s)", tmpl, *path);
    if (!S_ISREG(st.st_mode))
        return spec_loader_fail(L, n, "template '%s' is %s (expected a regular file)", tmpl,
                           file_kind(st.st_mode));
    char *real = realpath(*path, NULL);
    const char *dot = real ? strrchr(real, '.') : NULL;
    int cuda = dot && !strchr(dot, '/') && (!strcmp(dot, ".cu") || !strcmp(dot, ".cuh"));
    free(real);
    if (!cuda)
        return spec_loader_fail(L, n, "template '%s' is not a .cu or .cuh file (after symbolic links)",
                           tmpl);
    return 0;
}

/* tolerance: { TYPE: X, ... }; a type not named keeps -1 (its default). */
static int load_tolerance(Loader *L, yaml_node_t *n)
{
    Spec *s = L->s;
    for (int t = 0; t < ET_COUNT; t++)
        s->tolerance[t] = -1;
    if (!n)
        return 0;
    if (spec_loader_want(L, n, YAML_MAPPING_NODE, "tolerance") || spec_loader_unique_keys(L, n, "tolerance"))
        return -1;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        const ElemType *t = is_scalar(k) ? elem_type_find(scalar(k)) : NULL;
        if (!t)
            return spec_loader_fail(L, k, "unknown type '%s' in tolerance (expected one of: %s)",
                        is_scalar(k) ? scalar(k) : "?", elem_type_names());
        if (spec_loader_double(L, node(L, p->value), "a tolerance", &s->tolerance[t->id]))
            return -1;
    }
    return 0;
}

/* headers: [cccl]: the only header set there is. */
static int load_headers(Loader *L, yaml_node_t *n)
{
    const char **h;
    int nh;
    if (spec_loader_strings(L, n, "headers", &h, &nh))
        return -1;
    for (int i = 0; i < nh; i++) {
        if (strcmp(h[i], "cccl") != 0)
            return spec_loader_fail(L, node(L, n->data.sequence.items.start[i]),
                        "unknown header set '%s' (expected cccl)", h[i]);
        L->s->use_cccl = 1;
    }
    return 0;
}

/* The sections after the space, in the order spec_internal.h gives, and what
 * they require of each other. */
static int load_sections(Loader *L, yaml_node_t *root)
{
    Spec *s = L->s;
    yaml_node_t *n;
    if (spec_sections_buffers(L, get(L, root, "buffers")))
        return -1;
    if (spec_sections_launch(L, get(L, root, "launch")))
        return -1;
    if ((n = get(L, root, "reference")) && spec_sections_reference(L, n))
        return -1;
    if ((n = get(L, root, "check")) && spec_sections_check(L, n))
        return -1;
    if (load_tolerance(L, get(L, root, "tolerance")))
        return -1;
    if ((n = get(L, root, "differential")) && spec_loader_bool(L, n, "differential", &s->differential))
        return -1;
    if ((n = get(L, root, "metrics")) && spec_sections_metrics(L, n))
        return -1;
    if ((n = get(L, root, "baseline")) && spec_sections_baseline(L, n))
        return -1;
    if (s->differential && s->nbaseline == 0)
        return spec_loader_fail(L, get(L, root, "differential"), "differential: true needs a baseline:");
    measure_defaults(&s->measure);
    if ((n = get(L, root, "measure")) && spec_sections_measure(L, n))
        return -1;
    if ((n = get(L, root, "options")) && spec_options_load(L, n))
        return -1;
    if ((n = get(L, root, "headers")) && load_headers(L, n))
        return -1;
    if ((n = get(L, root, "report")) && spec_sections_report(L, n))
        return -1;
    return 0;
}

static int load_root(Loader *L, yaml_node_t *root)
{
    static const KeyDoc keys[] = {
        {"kvx", 1}, {"name", 1}, {"doc", 0}, {"template", 1}, {"kernel", 1}, {"axes", 1},
        {"zip", 0}, {"where", 0}, {"set", 0}, {"let", 0}, {"buffers", 1}, {"launch", 1},
        {"check", 0}, {"reference", 0}, {"tolerance", 0}, {"differential", 0}, {"metrics", 0}, {"baseline", 0},
        {"measure", 0}, {"options", 0}, {"headers", 0}, {"report", 0}, {0}};
    if (!root)
        return spec_loader_fail(L, NULL, "the spec is empty (expected a mapping with kvx: 1)");
    if (spec_loader_check_keys(L, root, keys, "the spec") || load_head(L, root) ||
        spec_space_load(L, root) || load_sections(L, root))
        return -1;
    if (L->s->nchecks == 0 && !L->s->differential)
        return spec_loader_fail(L, root, "the spec checks nothing (expected check: or differential: true)");
    return check_all_names(L);
}

/* The position of byte off of the text: libyaml's reader errors (bad UTF-8,
 * a NUL or other control character) carry an offset and no mark. */
static SrcPos offset_pos(const Loader *L, size_t off)
{
    SrcPos p = {L->file, 1, 1};
    for (size_t i = 0; i < off && i < L->len; i++) {
        unsigned char c = (unsigned char)L->text[i];
        if (c == '\n')
            p.line++, p.col = 1;
        else if ((c & 0xC0) != 0x80)   /* columns count characters, not bytes */
            p.col++;
    }
    return p;
}

static void yaml_fail(Loader *L, const yaml_parser_t *parser)
{
    SrcPos p;
    if (parser->error == YAML_READER_ERROR) {
        p = offset_pos(L, parser->problem_offset);
    } else {
        const yaml_mark_t *m = parser->problem_mark.line || parser->problem_mark.column
                                   ? &parser->problem_mark : &parser->context_mark;
        p = (SrcPos){L->file, (int)m->line + 1, (int)m->column + 1};
    }
    kvx_error_set(L->err, KVX_EINPUT, &p, "bad YAML: %s%s%s",
                  parser->problem ? parser->problem : "syntax error",
                  parser->context ? " " : "", parser->context ? parser->context : "");
}

/* A pass over the events before the document is built: libyaml's loader
 * recurses once per level of nesting and took minutes on 200,000 '[', so the
 * depth is checked here, where the parser's own stack is flat.  A second
 * document (---) is an error here too: the loader would read the first only. */
static int yaml_prescan(Loader *L, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    int depth = 0, docs = 0, rc = -1;
    if (!yaml_parser_initialize(&parser)) {
        kvx_error_set(L->err, KVX_EINTERNAL, NULL, "libyaml could not initialise a parser");
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    for (;;) {
        if (!yaml_parser_parse(&parser, &ev)) {
            yaml_fail(L, &parser);
            break;
        }
        yaml_event_type_t t = ev.type;
        SrcPos p = {L->file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1};
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT) {
            rc = 0;
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            kvx_error_set(L->err, KVX_EINPUT, &p,
                          "a second YAML document (expected one spec per file)");
            break;
        }
        depth += t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
        depth -= t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT;
        if (depth > SPEC_MAX_YAML_DEPTH) {
            kvx_error_set(L->err, KVX_EINPUT, &p, "nesting deeper than %d levels",
                          SPEC_MAX_YAML_DEPTH);
            break;
        }
    }
    yaml_parser_delete(&parser);
    return rc;
}

Spec *spec_load(const char *path, KvxError *err)
{
    Spec *s = NULL;
    yaml_parser_t parser;
    int have_parser = 0, have_doc = 0;
    Loader L = {0};
    size_t len = 0;
    char *text = file_read_max(path, SPEC_MAX_FILE_BYTES, &len);
    if (!text) {
        char why[64];
        kvx_error_set(err, KVX_EINPUT, &(SrcPos){path, 0, 0}, "cannot open spec: %s",
                      file_read_why(errno, SPEC_MAX_FILE_BYTES, why, sizeof why));
        return NULL;
    }
    L.text = text;
    L.len = len;
    s = mem_calloc(1, sizeof *s);
    s->arena = arena_new();
    s->path = arena_strdup(s->arena, path);
    char *dir = path_dir(path);
    s->dir = arena_strdup(s->arena, dir);
    free(dir);
    L.s = s;
    L.file = s->path;
    L.err = err;

    if (!yaml_parser_initialize(&parser)) {
        kvx_error_set(err, KVX_EINTERNAL, NULL, "libyaml could not initialise a parser");
        goto fail;
    }
    have_parser = 1;
    if (yaml_prescan(&L, text, len))
        goto fail;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &L.doc)) {
        yaml_fail(&L, &parser);
        goto fail;
    }
    have_doc = 1;
    if (load_root(&L, yaml_document_get_root_node(&L.doc)))
        goto fail;
    yaml_document_delete(&L.doc);
    yaml_parser_delete(&parser);
    free(text);
    return s;

fail:
    if (have_doc)
        yaml_document_delete(&L.doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    free(text);
    spec_free(s);
    return NULL;
}

void spec_free(Spec *s)
{
    if (!s)
        return;
    arena_free(s->arena);
    free(s);
}

int spec_axis_find(const Spec *s, const char *name)
{
    for (int i = 0; i < s->naxes; i++)
        if (strcmp(s->axes[i].name, name) == 0)
            return i;
    return -1;
}

int spec_buffer_find(const Spec *s, const char *name)
{
    for (int i = 0; i < s->nbufs; i++)
        if (strcmp(s->bufs[i].name, name) == 0)
            return i;
    return -1;
}

int spec_let_find(const Spec *s, const char *name)
{
    for (int i = 0; i < s->nlets; i++)
        if (strcmp(s->lets[i].name, name) == 0)
            return i;
    return -1;
}
