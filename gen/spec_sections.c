/* spec_sections: the sections of a spec that describe the launches of a
 * variant and how it is judged: buffers and their initialisers, launch, check,
 * metrics, baseline, measure and report.  Each loader reads its node into the
 * Spec under the conventions of spec_internal.h; load_root (spec.c) calls them
 * after the axes and names they may refer to are known, and checks the names
 * inside their expressions once everything is loaded. */
#include "spec_internal.h"
#include "core/values.h"

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

/* A scalar or a list of 1..3 scalars: launch dimensions. */
static int parse_dims(Loader *L, yaml_node_t *n, Expr *out[3], const char *what)
{
    if (is_scalar(n))
        return (out[0] = spec_loader_expr(L, n, what)) ? 0 : -1;
    if (n->type != YAML_SEQUENCE_NODE)
        return spec_loader_fail(L, n, "%s is %s (expected an expression or a list of 1 to 3)", what, kind_name(n));
    int k = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (k < 1 || k > 3)
        return spec_loader_fail(L, n, "%s has %d dimensions (expected 1 to 3)", what, k);
    for (int i = 0; i < k; i++)
        if (!(out[i] = spec_loader_expr(L, node(L, n->data.sequence.items.start[i]), what)))
            return -1;
    return 0;
}

static const struct {
    const char *key;
    InitKind kind;
    const char *params; /* accepted parameter keys, in order */
} init_kinds[] = {
    {"iota", INIT_IOTA, ""},
    {"uniform", INIT_UNIFORM, "lo hi"},
    {"zipf", INIT_ZIPF, "exponent lo hi"},
    {"hot", INIT_HOT, "fraction value lo hi"},
    {"runs", INIT_RUNS, "length lo hi"},
    {"text", INIT_TEXT, ""},
};

static Expr **init_slot(InitSpec *in, const char *name)
{
    if (!strcmp(name, "value")) return &in->value;
    if (!strcmp(name, "lo")) return &in->lo;
    if (!strcmp(name, "hi")) return &in->hi;
    if (!strcmp(name, "exponent")) return &in->exponent;
    if (!strcmp(name, "fraction")) return &in->fraction;
    if (!strcmp(name, "length")) return &in->length;
    return NULL;
}

static int load_init(Loader *L, yaml_node_t *n, InitSpec *in, const char *buf);

/* init: {by: AXIS, VALUE: INIT, ...}: one initialiser per value of the axis. */
static int load_init_by(Loader *L, yaml_node_t *n, InitSpec *in, const char *buf)
{
    Spec *s = L->s;
    yaml_node_t *by = get(L, n, "by");
    int a = spec_loader_axis_index(L, by, "init by");
    if (a < 0)
        return -1;
    in->by_axis = a;
    in->alts = arena_alloc(s->arena, sizeof(InitSpec) * (size_t)s->axes[a].nvals);
    char *seen = arena_alloc(s->arena, (size_t)s->axes[a].nvals);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        if (!is_scalar(k))
            return spec_loader_fail(L, k, "a key of init by '%s' is %s (expected a value of the axis)", s->axes[a].name,
                        kind_name(k));
        if (!strcmp(scalar(k), "by"))
            continue;
        int v = spec_loader_value_index(L, a, k, "an init by key");
        if (v < 0)
            return -1;
        if (seen[v])
            return spec_loader_fail(L, k, "duplicate init for %s=%s", s->axes[a].name, s->axes[a].vals[v].text);
        seen[v] = 1;
        yaml_node_t *sub = node(L, p->value);
        if (sub->type == YAML_MAPPING_NODE && get(L, sub, "by"))
            return spec_loader_fail(L, sub, "init by nests only one level");
        if (load_init(L, sub, &in->alts[v], buf))
            return -1;
    }
    for (int v = 0; v < s->axes[a].nvals; v++)
        if (!seen[v])
            return spec_loader_fail(L, n, "init of buffer '%s' has no initialiser for %s=%s", buf, s->axes[a].name,
                        s->axes[a].vals[v].text);
    return 0;
}

const InitSpec *spec_init_at(const InitSpec *in, const int *vals)
{
    return in->by_axis >= 0 ? &in->alts[vals[in->by_axis]] : in;
}

static int load_init(Loader *L, yaml_node_t *n, InitSpec *in, const char *buf)
{
    in->pos = node_pos(L, n);
    in->by_axis = -1;
    if (n->type == YAML_MAPPING_NODE && get(L, n, "by"))
        return load_init_by(L, n, in, buf);
    if (is_scalar(n)) {
        in->kind = INIT_CONST;
        return (in->value = spec_loader_expr(L, n, "init")) ? 0 : -1;
    }
    if (n->type != YAML_MAPPING_NODE ||
        n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
        return spec_loader_fail(L, n, "init of buffer '%s' is %s (expected a value or one of {iota: X}, "
                    "{uniform: [lo, hi]}, {zipf: {...}}, {hot: {...}}, {runs: {...}}, {text: english})",
                    buf, kind_name(n));
    yaml_node_t *k = node(L, n->data.mapping.pairs.start->key);
    yaml_node_t *v = node(L, n->data.mapping.pairs.start->value);
    size_t nk = sizeof init_kinds / sizeof init_kinds[0];
    size_t i;
    for (i = 0; i < nk; i++)
        if (is_scalar(k) && strcmp(scalar(k), init_kinds[i].key) == 0)
            break;
    if (i == nk)
        return spec_loader_fail(L, k, "unknown init '%s' (expected one of: iota, uniform, zipf, hot, runs, text, or by: AXIS)",
                    is_scalar(k) ? scalar(k) : "?");
    in->kind = init_kinds[i].kind;
    switch (in->kind) {
    case INIT_IOTA:
        return (in->value = spec_loader_expr(L, v, "iota")) ? 0 : -1;
    case INIT_TEXT:
        if (!is_scalar(v) || strcmp(scalar(v), "english") != 0)
            return spec_loader_fail(L, v, "text init is '%s' (expected english)", is_scalar(v) ? scalar(v) : "?");
        return 0;
    default:
        break;
    }
    char params[64];
    snprintf(params, sizeof params, "%s", init_kinds[i].params);
    if (in->kind == INIT_UNIFORM && v->type == YAML_SEQUENCE_NODE) {
        /* {uniform: [lo, hi]} */
        if (v->data.sequence.items.top - v->data.sequence.items.start != 2)
            return spec_loader_fail(L, v, "uniform takes [lo, hi]");
        in->lo = spec_loader_expr(L, node(L, v->data.sequence.items.start[0]), "uniform lo");
        in->hi = in->lo ? spec_loader_expr(L, node(L, v->data.sequence.items.start[1]), "uniform hi") : NULL;
        return in->hi ? 0 : -1;
    }
    KeyDoc keys[5] = {{0}};
    int nkeys = 0;
    for (char *save = NULL, *t = strtok_r(params, " ", &save); t; t = strtok_r(NULL, " ", &save))
        keys[nkeys++] = (KeyDoc){arena_strdup(L->s->arena, t), 1};
    char what[96];
    snprintf(what, sizeof what, "%s init of buffer '%s'", init_kinds[i].key, buf);
    if (spec_loader_check_keys(L, v, keys, what))
        return -1;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++)
        if (!(*init_slot(in, scalar(node(L, p->key))) = spec_loader_expr(L, node(L, p->value), what)))
            return -1;
    return 0;
}

/* scratch: true (a buffer only the launches read and write) and its init,
 * which may be `none` there: allocated, never written by kvx. */
static int load_scratch(Loader *L, yaml_node_t *v, BufferSpec *b)
{
    yaml_node_t *n = get(L, v, "scratch"), *init = get(L, v, "init");
    if (n && spec_loader_bool(L, n, "scratch", &b->scratch))
        return -1;
    if (is_scalar(init) && !strcmp(scalar(init), "none")) {
        if (!b->scratch)
            return spec_loader_fail(L, init, "buffer '%s' has init: none but is not scratch (expected "
                                    "scratch: true, or an initialiser: inputs and outputs start from one)",
                                    b->name);
        b->uninit = 1;
        b->init.by_axis = -1;
        b->init.pos = node_pos(L, init);
        return 0;
    }
    return load_init(L, init, &b->init, b->name);
}

/* The expression under key of map into *out, which stays NULL when the key is
 * absent.  0 or -1. */
static int optional_expr(Loader *L, yaml_node_t *map, const char *key, Expr **out)
{
    yaml_node_t *n = get(L, map, key);
    return n && !(*out = spec_loader_expr(L, n, key)) ? -1 : 0;
}

int spec_sections_buffers(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    static const KeyDoc keys[] = {{"type", 1}, {"count", 1}, {"init", 1}, {"offset", 0}, {"scratch", 0}, {0}};
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "buffers") || spec_loader_unique_keys(L, map, "buffers"))
        return -1;
    int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n == 0)
        return spec_loader_fail(L, map, "buffers is empty (expected at least one buffer)");
    s->bufs = arena_alloc(s->arena, sizeof(BufferSpec) * (size_t)n);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
        if (!is_scalar(k) || !is_ident(scalar(k)))
            return spec_loader_fail(L, k, "buffer name is not a name (expected letters, digits and _)");
        if (spec_loader_name_taken(s, scalar(k)))
            return spec_loader_fail(L, k, "buffer '%s' would hide an axis, variable or fact of that name", scalar(k));
        BufferSpec *b = &s->bufs[s->nbufs];
        b->name = arena_strdup(s->arena, scalar(k));
        b->pos = node_pos(L, k);
        char what[96];
        snprintf(what, sizeof what, "buffer '%s'", b->name);
        if (spec_loader_check_keys(L, v, keys, what))
            return -1;
        yaml_node_t *t = get(L, v, "type");
        if (!is_scalar(t))
            return spec_loader_fail(L, t, "type of buffer '%s' is %s (expected a type name)", b->name, kind_name(t));
        const char *tn = scalar(t);
        if (tn[0] == '$') {
            int known = spec_axis_find(s, tn + 1) >= 0;
            for (int i = 0; i < s->nsets && !known; i++)
                known = strcmp(s->sets[i].var, tn + 1) == 0;
            if (!known)
                return spec_loader_fail(L, t, "type '%s' names no set variable or axis", tn);
            /* Each value it can take must be a type name. */
            for (int i = 0; i < s->nsets; i++)
                if (strcmp(s->sets[i].var, tn + 1) == 0 &&
                    (s->sets[i].v.kind != VAL_STR || !elem_type_find(s->sets[i].v.s))) {
                    SrcPos sp = s->sets[i].pos;
                    kvx_error_set(L->err, KVX_EINPUT, &sp,
                                  "set variable '%s' is used as the type of buffer '%s' but is '%s' "
                                  "(expected one of: %s)", tn + 1, b->name,
                                  val_text(s->arena, s->sets[i].v), elem_type_names());
                    return -1;
                }
        } else if (!elem_type_find(tn)) {
            return spec_loader_fail(L, t, "unknown type '%s' (expected one of: %s)", tn, elem_type_names());
        }
        b->type = arena_strdup(s->arena, tn);
        if (!(b->count = spec_loader_expr(L, get(L, v, "count"), "count")))
            return -1;
        if (optional_expr(L, v, "offset", &b->offset) || load_scratch(L, v, b))
            return -1;
        s->nbufs++;
    }
    return 0;
}

static int load_launch(Loader *L, yaml_node_t *map, LaunchSpec *l, const char *what, int in_list)
{
    static const KeyDoc keys[] = {{"grid", 1}, {"block", 1}, {"smem", 0}, {"cluster", 0}, {"args", 1}, {0}};
    static const KeyDoc list_keys[] = {{"kernel", 0}, {"when", 0}, {"grid", 1}, {"block", 1},
                                       {"smem", 0}, {"cluster", 0}, {"args", 1}, {0}};
    if (spec_loader_check_keys(L, map, in_list ? list_keys : keys, what))
        return -1;
    l->pos = node_pos(L, map);
    yaml_node_t *n;
    if ((n = get(L, map, "kernel"))) {
        if (spec_loader_string(L, n, "kernel", &l->kernel))
            return -1;
        if (!is_ident(l->kernel))
            return spec_loader_fail(L, n, "kernel '%s' is not a C identifier", l->kernel);
    }
    if ((n = get(L, map, "when")) && !(l->when = spec_loader_expr(L, n, "when")))
        return -1;
    if (parse_dims(L, get(L, map, "grid"), l->grid, "grid") ||
        parse_dims(L, get(L, map, "block"), l->block, "block"))
        return -1;
    if ((n = get(L, map, "cluster")) && parse_dims(L, n, l->cluster, "cluster"))
        return -1;
    if ((n = get(L, map, "smem")) && !(l->smem = spec_loader_expr(L, n, "smem")))
        return -1;
    n = get(L, map, "args");
    if (spec_loader_want(L, n, YAML_SEQUENCE_NODE, "args"))
        return -1;
    l->nargs = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    l->args = arena_alloc(L->s->arena, sizeof(Expr *) * (size_t)(l->nargs ? l->nargs : 1));
    for (int i = 0; i < l->nargs; i++)
        if (!(l->args[i] = spec_loader_expr(L, node(L, n->data.sequence.items.start[i]), "an argument")))
            return -1;
    return 0;
}

/* launch: one launch (a mapping, the spec's kernel), or a list of launches
 * run in order, each with its kernel: (default the spec's) and an optional
 * when: that leaves it out at the points where it is false. */
int spec_sections_launch(Loader *L, yaml_node_t *n)
{
    Spec *s = L->s;
    if (n->type == YAML_MAPPING_NODE) {
        s->launches = arena_alloc(s->arena, sizeof(LaunchSpec));
        s->nlaunches = 1;
        return load_launch(L, n, &s->launches[0], "launch", 0);
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return spec_loader_fail(L, n, "launch is %s (expected a mapping {grid, block, args, ...} or a list "
                                "of them)", kind_name(n));
    int k = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (k < 1 || k > SPEC_MAX_LAUNCHES)
        return spec_loader_fail(L, n, "launch lists %d launches (expected 1 to %d)", k, SPEC_MAX_LAUNCHES);
    s->launches = arena_alloc(s->arena, sizeof(LaunchSpec) * (size_t)k);
    for (int i = 0; i < k; i++) {
        yaml_node_t *e = node(L, n->data.sequence.items.start[i]);
        char what[32];
        snprintf(what, sizeof what, "launch %d", i + 1);
        if (spec_loader_want(L, e, YAML_MAPPING_NODE, what) || load_launch(L, e, &s->launches[i], what, 1))
            return -1;
        s->nlaunches++;
    }
    return 0;
}

/* A reference runs one launch: its own, or the spec's when the spec has
 * exactly one that always runs (a list would leave it to guess which). */
static int reference_launch_known(Loader *L, const ReferenceSpec *r)
{
    const Spec *s = L->s;
    if (r->has_launch || (s->nlaunches == 1 && !s->launches[0].when))
        return 0;
    kvx_error_set(L->err, KVX_EINPUT, &r->pos, "a reference without a launch of its own runs the spec's "
                  "launch, but the spec's launch is a list (expected {kernel: NAME, launch: {...}} in "
                  "reference)");
    return -1;
}

/* reference: {AXIS: VALUE, ...} (a point of the code axes), or {kernel: NAME,
 * template: PATH, launch: {...}} (a kernel of its own). */
int spec_sections_reference(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    ReferenceSpec *r = &s->reference;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "reference"))
        return -1;
    r->present = 1;
    r->pos = node_pos(L, map);
    if (!get(L, map, "kernel")) {
        if (get(L, map, "template") || get(L, map, "launch"))
            return spec_loader_fail(L, map, "a reference with a template or launch needs a kernel: "
                               "(expected {kernel: NAME, template: PATH, launch: {...}} or {AXIS: VALUE, ...})");
        int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
        if (n == 0)
            return spec_loader_fail(L, map, "reference is empty (expected {AXIS: VALUE, ...} or {kernel: NAME, ...})");
        r->point = arena_alloc(s->arena, sizeof(BaselineEntry) * (size_t)n);
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
            int a = spec_loader_axis_index(L, node(L, p->key), "reference");
            if (a < 0)
                return -1;
            int v = spec_loader_value_index(L, a, node(L, p->value), "reference value");
            if (v < 0)
                return -1;
            r->point[r->npoint++] = (BaselineEntry){a, v};
        }
        return reference_launch_known(L, r);
    }
    static const KeyDoc keys[] = {{"kernel", 1}, {"template", 0}, {"launch", 0}, {0}};
    if (spec_loader_check_keys(L, map, keys, "a reference kernel"))
        return -1;
    yaml_node_t *n = get(L, map, "kernel");
    if (spec_loader_string(L, n, "kernel", &r->kernel))
        return -1;
    if (!is_ident(r->kernel))
        return spec_loader_fail(L, n, "kernel '%s' is not a C identifier", r->kernel);
    if ((n = get(L, map, "template")) && spec_loader_template(L, n, &r->template_path))
        return -1;
    if ((n = get(L, map, "launch"))) {
        r->has_launch = 1;
        if (load_launch(L, n, &r->launch, "a reference's launch", 0))
            return -1;
    }
    return reference_launch_known(L, r);
}

/* What a check's value is: `reference`, an input buffer, or an expression. */
static int check_kind(Loader *L, yaml_node_t *v, CheckSpec *c)
{
    Spec *s = L->s;
    const Expr *e = c->ref;
    if (e->kind != EX_IDENT)
        return 0;
    if (strcmp(e->name, "reference") == 0 && spec_buffer_find(s, "reference") < 0) {
        if (!s->reference.present)
            return spec_loader_fail(L, v, "check of '%s' compares with the reference, but the spec has "
                               "none (expected a reference: section)", s->bufs[c->buffer].name);
        c->kind = CHECK_REFERENCE;
        return 0;
    }
    int b = spec_buffer_find(s, e->name);
    if (b < 0)
        return 0;
    c->kind = CHECK_BUFFER;
    c->other = b;
    if (b == c->buffer)
        return spec_loader_fail(L, v, "check of '%s' compares it with itself (expected an input buffer)",
                           e->name);
    return 0;
}

/* `length: BUF` or `length: BUF[0]`: the buffer, checked later (check_links)
 * to be a checked scalar output. */
static int check_length(Loader *L, yaml_node_t *n, CheckSpec *c)
{
    const Spec *s = L->s;
    const char *text;
    if (spec_loader_string(L, n, "length", &text))
        return -1;
    size_t len = strlen(text);
    if (len > 3 && strcmp(text + len - 3, "[0]") == 0)
        len -= 3;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), text);
    c->length = spec_buffer_find(s, name);
    c->length_pos = node_pos(L, n);
    if (c->length < 0)
        return spec_loader_fail(L, n, "check of '%s': length '%s' is not a buffer (expected a scalar "
                           "output, as `length: count` or `length: count[0]`)",
                           s->bufs[c->buffer].name, text);
    return 0;
}

/* The keys of `BUF: {ref: FORM, rtol: R, order: any, length: COUNT}`. */
static int check_options(Loader *L, yaml_node_t *v, CheckSpec *c)
{
    static const KeyDoc keys[] = {{"ref", 1}, {"rtol", 0}, {"order", 0}, {"length", 0}, {0}};
    if (spec_loader_check_keys(L, v, keys, "a check"))
        return -1;
    if (!(c->ref = spec_loader_expr(L, get(L, v, "ref"), "a check")))
        return -1;
    yaml_node_t *n = get(L, v, "rtol");
    if (n && spec_loader_double(L, n, "rtol", &c->rtol))
        return -1;
    const char *order;
    if ((n = get(L, v, "order"))) {
        if (spec_loader_string(L, n, "order", &order))
            return -1;
        if (strcmp(order, "any") && strcmp(order, "index"))
            return spec_loader_fail(L, n, "check of '%s': order '%s' (expected any or index)",
                               L->s->bufs[c->buffer].name, order);
        c->order_any = strcmp(order, "any") == 0;
    }
    return (n = get(L, v, "length")) ? check_length(L, n, c) : 0;
}

/* A host reference reads the inputs as generated: an output named as its
 * argument would be read before the launch (its init), never what the
 * kernel wrote, so it is refused rather than silently compared with that. */
static int check_host_args(Loader *L, const CheckSpec *c)
{
    const Spec *s = L->s;
    const Expr *r = c->ref;
    if (c->kind != CHECK_EXPR || r->kind != EX_CALL || !expr_is_reference(r->name))
        return 0;
    for (int j = 0; j < r->nargs; j++) {
        const Expr *x = r->args[j];
        int b = x->kind == EX_IDENT ? spec_buffer_find(s, x->name) : -1;
        if (b >= 0 && s->bufs[b].scratch) {
            kvx_error_set(L->err, KVX_EINPUT, &x->pos, "check of '%s': %s reads '%s', a scratch buffer "
                          "(host references read the inputs as generated; scratch holds only what the "
                          "launches leave there)", s->bufs[c->buffer].name, r->name, x->name);
            return -1;
        }
        if (b < 0 || !s->bufs[b].checked)
            continue;
        kvx_error_set(L->err, KVX_EINPUT, &x->pos, "check of '%s': %s reads '%s', an output (host "
                      "references read the inputs as generated, before the launch; compare outputs "
                      "with `reference` or `baseline()`)", s->bufs[c->buffer].name,
                      r->name, x->name);
        return -1;
    }
    return 0;
}

/* A length is a checked output other than c's, itself compared whole (its
 * check is verified before the prefix that depends on it). */
static int check_length_link(Loader *L, const CheckSpec *c)
{
    const Spec *s = L->s;
    if (c->length < 0)
        return 0;
    const char *name = s->bufs[c->buffer].name, *len = s->bufs[c->length].name;
    const char *why = NULL;
    if (c->length == c->buffer)
        why = "is the buffer itself";
    else if (!s->bufs[c->length].checked)
        why = "is not a checked output (expected a scalar output with a check of its own)";
    for (int i = 0; i < s->nchecks && !why; i++)
        if (s->checks[i].buffer == c->length && s->checks[i].length >= 0)
            why = "has a length of its own (expected a scalar output compared whole)";
    if (!why)
        return 0;
    kvx_error_set(L->err, KVX_EINPUT, &c->length_pos, "check of '%s': length '%s' %s", name, len, why);
    return -1;
}

/* What a check refers to, once every check is loaded. */
static int check_links(Loader *L)
{
    const Spec *s = L->s;
    for (int i = 0; i < s->nchecks; i++) {
        const CheckSpec *c = &s->checks[i];
        /* An output compared with another buffer: that one must be an input. */
        if (c->kind == CHECK_BUFFER && s->bufs[c->other].scratch) {
            kvx_error_set(L->err, KVX_EINPUT, &c->ref->pos, "check of '%s' compares it with '%s', a "
                          "scratch buffer (expected an input buffer)", s->bufs[c->buffer].name,
                          s->bufs[c->other].name);
            return -1;
        }
        if (c->kind == CHECK_BUFFER && s->bufs[c->other].checked) {
            kvx_error_set(L->err, KVX_EINPUT, &c->ref->pos, "check of '%s' compares it with '%s', "
                          "which is checked too (expected an input buffer: outputs are reset before "
                          "every launch)", s->bufs[c->buffer].name, s->bufs[c->other].name);
            return -1;
        }
        if (check_host_args(L, c) || check_length_link(L, c))
            return -1;
    }
    return 0;
}

int spec_sections_check(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "check"))
        return -1;
    int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    s->checks = arena_alloc(s->arena, sizeof(CheckSpec) * (size_t)(n ? n : 1));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
        int b = is_scalar(k) ? spec_buffer_find(s, scalar(k)) : -1;
        if (b < 0)
            return spec_loader_fail(L, k, "check names '%s', which is not a buffer", is_scalar(k) ? scalar(k) : "?");
        if (s->bufs[b].checked)
            return spec_loader_fail(L, k, "buffer '%s' is checked twice", scalar(k));
        if (s->bufs[b].scratch)
            return spec_loader_fail(L, k, "buffer '%s' is scratch and cannot be checked (expected an "
                                    "output: drop scratch: true)", scalar(k));
        CheckSpec *c = &s->checks[s->nchecks++];
        c->buffer = b;
        c->rtol = -1;
        c->length = -1;
        c->pos = node_pos(L, k);
        s->bufs[b].checked = 1;
        if (v->type == YAML_MAPPING_NODE) {
            if (check_options(L, v, c))
                return -1;
        } else if (!(c->ref = spec_loader_expr(L, v, "a check"))) {
            return -1;
        }
        if (check_kind(L, v, c))
            return -1;
    }
    return check_links(L);
}

int spec_sections_metrics(Loader *L, yaml_node_t *map)
{
    static const KeyDoc keys[] = {{"bytes", 0}, {"atomics", 0}, {"elements", 0}, {0}};
    if (spec_loader_check_keys(L, map, keys, "metrics"))
        return -1;
    MetricsSpec *m = &L->s->metrics;
    return optional_expr(L, map, "bytes", &m->bytes) || optional_expr(L, map, "atomics", &m->atomics) ||
                   optional_expr(L, map, "elements", &m->elements) ? -1 : 0;
}

/* A baseline: mapping (the spec's, or a report table's: what names it), each
 * key an axis and each value one of its values, into *out (in the arena). */
static int baseline_map(Loader *L, yaml_node_t *map, const char *what, BaselineEntry **out, int *count)
{
    Spec *s = L->s;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, what) || spec_loader_unique_keys(L, map, what))
        return -1;
    int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    *out = arena_alloc(s->arena, sizeof(BaselineEntry) * (size_t)(n ? n : 1));
    *count = 0;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        int a = spec_loader_axis_index(L, node(L, p->key), what);
        if (a < 0)
            return -1;
        int v = spec_loader_value_index(L, a, node(L, p->value), "baseline value");
        if (v < 0)
            return -1;
        (*out)[(*count)++] = (BaselineEntry){a, v};
    }
    return 0;
}

int spec_sections_baseline(Loader *L, yaml_node_t *map)
{
    return baseline_map(L, map, "baseline", &L->s->baseline, &L->s->nbaseline);
}

/* measure: every key a row of core/measure.h's table, its value checked by
 * the same rule as the flag's (measure_set), so a spec and the command line
 * accept the same values. */
int spec_sections_measure(Loader *L, yaml_node_t *map)
{
    KeyDoc keys[MEASURE_COUNT + 1] = {{0}};
    for (int i = 0; i < MEASURE_COUNT; i++)
        keys[i].key = measure_fields[i].key;
    if (spec_loader_check_keys(L, map, keys, "measure"))
        return -1;
    MeasureSettings *m = &L->s->measure;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(L, p->key));
        yaml_node_t *v = node(L, p->value);
        char expect[128];
        if (!is_scalar(v))
            return spec_loader_fail(L, v, "%s is a %s (expected a scalar)", k, kind_name(v));
        if (measure_set(m, measure_find(k), scalar(v), expect, sizeof expect))
            return spec_loader_fail(L, v, "%s is '%s' (expected %s)", k, scalar(v), expect);
    }
    if (m->max_samples < m->min_samples)
        return spec_loader_fail(L, map, "max_samples (%d) is below min_samples (%d)", m->max_samples, m->min_samples);
    return 0;
}

/* ---- report ----------------------------------------------------------------- */

/* value: a name of core/values.h, inspect.KEY (a key of the variants' PTX/SASS
 * facts, values_inspect_valid: a misspelt key would tabulate as empty cells), or
 * counter.METRIC (any ncu metric name: which were collected is the run's). */
static int check_report_value(Loader *L, yaml_node_t *n, const char *v)
{
    if (values_find(v) >= 0)
        return 0;
    if (!strncmp(v, "inspect.", 8)) {
        if (values_inspect_valid(v + 8))
            return 0;
        return spec_loader_fail(L, n, "unknown inspect fact '%s' (expected inspect. and one of: %s)", v, values_inspect_list());
    }
    if (!strncmp(v, "counter.", 8)) {
        if (values_counter_valid(v + 8))
            return 0;
        return spec_loader_fail(L, n, "bad counter '%s' (expected counter.METRIC with an ncu metric name "
                                "such as counter.dram__bytes_read.sum)", v);
    }
    return spec_loader_fail(L, n, "unknown report value '%s' (expected one of: %s, inspect.KEY)", v,
                       values_list());
}

typedef struct WhereNames {
    Loader *L;
    int failed;
} WhereNames;

/* The names a report's where: may use are those kvx table --where accepts
 * (report/results.c): axes, the spec's lets, status and the value names. */
static void check_where_name(void *ctx, const Expr *id)
{
    WhereNames *wn = ctx;
    const Spec *s = wn->L->s;
    if (wn->failed || spec_axis_find(s, id->name) >= 0 || spec_let_find(s, id->name) >= 0 ||
        !strcmp(id->name, "status") || values_find(id->name) >= 0)
        return;
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < s->naxes; i++)
        sb_printf(&b, "%s, ", s->axes[i].name);
    for (int i = 0; i < s->nlets; i++)
        sb_printf(&b, "%s, ", s->lets[i].name);
    kvx_error_set(wn->L->err, KVX_EINPUT, &id->pos, "unknown name '%s' in a report where (expected an "
                  "axis, let, status or value name: %sstatus, %s)", id->name, sb_str(&b), values_list());
    sb_free(&b);
    wn->failed = 1;
}

/* where: parsed now, so that a bad name or compared value names its place in
 * the spec rather than surfacing as "Not tabulated" in a report; the driver
 * compiles the text to SQL again when it tabulates. */
static int check_report_where(Loader *L, yaml_node_t *n)
{
    Expr *e = spec_loader_expr(L, n, "a report where");
    if (!e)
        return -1;
    WhereNames wn = {L, 0};
    expr_visit_idents(e, check_where_name, &wn);
    return wn.failed || spec_check_axis_values(L->s, e, L->err) ? -1 : 0;
}

/* A report table's rows: or cols: (name is which), one axis or a list of
 * axes, each one the spec has. */
static int report_axes(Loader *L, yaml_node_t *n, const char *name, const char ***list, int *count)
{
    Spec *s = L->s;
    if (is_scalar(n)) {
        *list = arena_alloc(s->arena, sizeof(char *));
        (*list)[0] = arena_strdup(s->arena, scalar(n));
        *count = 1;
    } else if (spec_loader_strings(L, n, name, list, count)) {
        return -1;
    }
    yaml_node_t *items = n->type == YAML_SEQUENCE_NODE ? n : NULL;
    for (int m = 0; m < *count; m++)
        if (spec_axis_find(s, (*list)[m]) < 0)
            return spec_loader_fail(L, items ? node(L, items->data.sequence.items.start[m]) : n,
                        "unknown axis '%s' in report %s", (*list)[m], name);
    return 0;
}

/* A report table's keys but rows and cols: title, value, where, ratio or
 * speedup, best, beside, failed_values, baseline. */
static int report_options(Loader *L, yaml_node_t *t, ReportTable *r)
{
    yaml_node_t *n;
    if ((n = get(L, t, "title")) && spec_loader_string(L, n, "title", &r->title))
        return -1;
    if ((n = get(L, t, "value")) &&
        (spec_loader_string(L, n, "value", &r->value) || check_report_value(L, n, r->value)))
        return -1;
    if ((n = get(L, t, "where")) &&
        (spec_loader_string(L, n, "where", &r->where) || (*r->where && check_report_where(L, n))))
        return -1;
    if ((n = get(L, t, "ratio")) && spec_loader_bool(L, n, "ratio", &r->ratio))
        return -1;
    int speedup = 0;
    if ((n = get(L, t, "speedup")) && spec_loader_bool(L, n, "speedup", &speedup))
        return -1;
    if (speedup)
        r->ratio = 2;
    if ((n = get(L, t, "best")) && spec_loader_bool(L, n, "best", &r->best))
        return -1;
    if ((n = get(L, t, "beside")) && spec_loader_string(L, n, "beside", &r->beside))
        return -1;
    if (r->beside && !r->best)
        return spec_loader_fail(L, n, "beside: goes with best: true");
    if ((n = get(L, t, "failed_values")) && spec_loader_bool(L, n, "failed_values", &r->failed_values))
        return -1;
    if ((n = get(L, t, "baseline")) && baseline_map(L, n, "a report table's baseline", &r->baseline, &r->nbaseline))
        return -1;
    if (r->nbaseline && !r->ratio)
        r->ratio = 1;   /* as kvx table --baseline: a baseline alone means a ratio */
    return 0;
}

/* One table of report: into the next of s->tables. */
static int report_table(Loader *L, yaml_node_t *t)
{
    static const KeyDoc keys[] = {{"title", 0}, {"rows", 1}, {"cols", 0}, {"value", 0},
                                  {"ratio", 0}, {"speedup", 0}, {"best", 0}, {"beside", 0}, {"failed_values", 0},
                                  {"where", 0}, {"baseline", 0}, {0}};
    if (spec_loader_check_keys(L, t, keys, "a report table"))
        return -1;
    ReportTable *r = &L->s->tables[L->s->ntables++];
    r->pos = node_pos(L, t);
    r->value = "median_ms";
    if (report_options(L, t, r))
        return -1;
    /* A pivot needs columns; a best-per-row table has none. */
    yaml_node_t *cols = get(L, t, "cols");
    if (r->best && cols)
        return spec_loader_fail(L, cols, "a best: table has rows only (drop cols)");
    if (!r->best && !cols)
        return spec_loader_fail(L, t, "missing key 'cols' in a report table (or best: true for a"
                           " best-per-row table)");
    if (report_axes(L, get(L, t, "rows"), "rows", &r->rows, &r->nrows))
        return -1;
    return cols ? report_axes(L, cols, "cols", &r->cols, &r->ncols) : 0;
}

/* One axis name of a plot (x, series), or NULL for a key absent. */
static int plot_axis(Loader *L, yaml_node_t *t, const char *key, const char **out)
{
    yaml_node_t *n = get(L, t, key);
    *out = NULL;
    if (!n)
        return 0;
    if (spec_loader_string(L, n, key, out))
        return -1;
    if (spec_axis_find(L->s, *out) >= 0)
        return 0;
    StrBuf b;
    sb_init(&b);
    for (int a = 0; a < L->s->naxes; a++)
        sb_printf(&b, "%s%s", a ? ", " : "", L->s->axes[a].name);
    spec_loader_fail(L, n, "unknown axis '%s' as a report plot's %s: (expected one of: %s)", *out, key, sb_str(&b));
    sb_free(&b);
    return -1;
}

/* One plot of report: into the next of s->plots.  x, series and panels are
 * axes, each once. */
static int report_plot(Loader *L, yaml_node_t *t)
{
    static const KeyDoc keys[] = {{"plot", 1}, {"title", 0}, {"series", 0}, {"panels", 0}, {"value", 0},
                                  {"ratio", 0}, {"speedup", 0}, {"where", 0}, {0}};
    if (spec_loader_check_keys(L, t, keys, "a report plot"))
        return -1;
    ReportPlot *p = &L->s->plots[L->s->nplots++];
    ReportTable opts = {.value = "median_ms"};
    p->pos = node_pos(L, t);
    p->npanels = -1;
    if (report_options(L, t, &opts) || plot_axis(L, t, "plot", &p->x) || plot_axis(L, t, "series", &p->series))
        return -1;
    p->title = opts.title, p->value = opts.value, p->ratio = opts.ratio, p->where = opts.where;
    yaml_node_t *n = get(L, t, "panels");
    if (n && report_axes(L, n, "panels", &p->panels, &p->npanels))
        return -1;
    if (p->series && !strcmp(p->series, p->x))
        return spec_loader_fail(L, get(L, t, "series"), "a plot's series '%s' is its x axis", p->series);
    for (int i = 0; i < (p->npanels > 0 ? p->npanels : 0); i++)
        if (!strcmp(p->panels[i], p->x) || (p->series && !strcmp(p->panels[i], p->series)))
            return spec_loader_fail(L, n, "a plot's panels name '%s', its x or series axis", p->panels[i]);
    return 0;
}

int spec_sections_report(Loader *L, yaml_node_t *seq)
{
    Spec *s = L->s;
    if (spec_loader_want(L, seq, YAML_SEQUENCE_NODE, "report"))
        return -1;
    int k = (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    s->tables = arena_alloc(s->arena, sizeof(ReportTable) * (size_t)(k ? k : 1));
    s->plots = arena_alloc(s->arena, sizeof(ReportPlot) * (size_t)(k ? k : 1));
    for (int i = 0; i < k; i++) {
        yaml_node_t *t = node(L, seq->data.sequence.items.start[i]);
        int plot = t && t->type == YAML_MAPPING_NODE && get(L, t, "plot");
        if (plot ? report_plot(L, t) : report_table(L, t))
            return -1;
    }
    return 0;
}
