/* spec_space: the space of a spec: its axes, zip groups, set and let
 * variables and where constraints, loaded from the YAML in that order (each
 * may refer to what came before), with their positions for errors.  The
 * sections that follow (buffers, launch, checks, ...) are spec_sections.c's;
 * spec.c drives both. */
#include "spec_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- axes, zip, where, set, let ------------------------------------------- */

/* A hash that agrees with val_equal: numbers by their double (an int and a
 * float that compare equal hash alike), strings by their bytes. */
static uint64_t value_hash(Value v)
{
    if (val_is_num(v)) {
        double d = val_num(v);
        d = d == 0 ? 0 : d;   /* -0 == 0 */
        return hidx_hash(&d, sizeof d);
    }
    if (v.kind == VAL_STR)
        return hidx_hash(v.s, strlen(v.s)) ^ 1;
    return (uint64_t)v.kind * 31 + (uint64_t)v.i;
}

typedef struct NewValue { const AxisValue *vals; int i; } NewValue;

static int same_value(int stored, const void *ctx)
{
    const NewValue *nv = ctx;
    return val_equal(nv->vals[stored].v, nv->vals[nv->i].v);
}

/* Axis k: a name that hides no device fact and no other axis, and a list v
 * of 1 to SPEC_MAX_AXIS_VALUES values.  Returns the count, or -1. */
static int axis_check(Loader *L, yaml_node_t *k, yaml_node_t *v)
{
    const Spec *s = L->s;
    if (!is_scalar(k) || !is_ident(scalar(k)))
        return spec_loader_fail(L, k, "axis name '%s' is not a name (expected letters, digits and _)",
                    is_scalar(k) ? scalar(k) : "?");
    Value dummy;
    if (facts_lookup(&(DeviceFacts){0}, scalar(k), &dummy))
        return spec_loader_fail(L, k, "axis '%s' would hide the device fact of that name", scalar(k));
    if (spec_axis_find(s, scalar(k)) >= 0)
        return spec_loader_fail(L, k, "duplicate axis '%s'", scalar(k));
    if (s->naxes == SPEC_MAX_AXES)
        return spec_loader_fail(L, k, "too many axes (at most %d)", SPEC_MAX_AXES);
    if (v->type != YAML_SEQUENCE_NODE)
        return spec_loader_fail(L, v, "axis '%s' is %s (expected a list of values)", scalar(k), kind_name(v));
    int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0)
        return spec_loader_fail(L, v, "axis '%s' is empty (expected at least one value)", scalar(k));
    if (n > SPEC_MAX_AXIS_VALUES)
        return spec_loader_fail(L, v, "axis '%s' has %d values (expected at most %d)", scalar(k), n,
                           SPEC_MAX_AXIS_VALUES);
    return n;
}

/* The n values of axis a from the list v: scalars, each distinct (seen
 * finds an earlier equal value; the caller frees it). */
static int axis_values(Loader *L, Axis *a, yaml_node_t *v, int n, HashIdx *seen)
{
    Spec *s = L->s;
    for (int i = 0; i < n; i++) {
        yaml_node_t *e = node(L, v->data.sequence.items.start[i]);
        if (!is_scalar(e))
            return spec_loader_fail(L, e, "a value of axis '%s' is %s (expected a number, string or boolean)",
                               a->name, kind_name(e));
        AxisValue *av = &a->vals[i];
        av->v = spec_loader_scalar_value(L, e);
        if (L->err->code)
            return -1;
        av->text = val_text(s->arena, av->v);
        av->pos = node_pos(L, e);
        int j = hidx_add(seen, value_hash(av->v), i, same_value, &(NewValue){a->vals, i});
        if (j >= 0)
            return spec_loader_fail(L, e, "duplicate value '%s' in axis '%s' (first at line %d)", scalar(e),
                               a->name, a->vals[j].pos.line);
    }
    return 0;
}

static int load_axes(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "axes"))
        return -1;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
        int n = axis_check(L, k, v);
        if (n < 0)
            return -1;
        Axis *a = &s->axes[s->naxes];
        a->name = arena_strdup(s->arena, scalar(k));
        a->pos = node_pos(L, k);
        a->zip = -1;
        a->vals = arena_alloc(s->arena, sizeof(AxisValue) * (size_t)n);
        HashIdx seen = {0};
        int rc = axis_values(L, a, v, n, &seen);
        hidx_free(&seen);
        if (rc)
            return -1;
        a->nvals = n;
        s->naxes++;
    }
    if (s->naxes == 0)
        return spec_loader_fail(L, map, "axes is empty (expected at least one axis)");
    return 0;
}

static int axis_value_find(const Axis *a, Value v)
{
    for (int i = 0; i < a->nvals; i++)
        if (val_equal(a->vals[i].v, v))
            return i;
    return -1;
}

int spec_loader_axis_index(Loader *L, yaml_node_t *k, const char *what)
{
    if (!is_scalar(k))
        return spec_loader_fail(L, k, "%s is %s (expected an axis name)", what, kind_name(k));
    int a = spec_axis_find(L->s, scalar(k));
    if (a < 0)
        return spec_loader_fail(L, k, "unknown axis '%s' in %s", scalar(k), what);
    return a;
}

int spec_loader_value_index(Loader *L, int axis, yaml_node_t *vn, const char *what)
{
    const Axis *a = &L->s->axes[axis];
    if (!is_scalar(vn))
        return spec_loader_fail(L, vn, "%s is %s (expected a value of axis '%s')", what, kind_name(vn), a->name);
    int vi = axis_value_find(a, spec_loader_scalar_value(L, vn));
    if (vi < 0) {
        StrBuf b;
        sb_init(&b);
        for (int i = 0; i < a->nvals; i++)
            sb_printf(&b, "%s%s", i ? ", " : "", a->vals[i].text);
        spec_loader_fail(L, vn, "'%s' is not a value of axis '%s' (expected one of: %s)", scalar(vn), a->name,
             sb_str(&b));
        sb_free(&b);
        return -1;
    }
    return vi;
}

static int load_zip(Loader *L, yaml_node_t *seq)
{
    Spec *s = L->s;
    if (spec_loader_want(L, seq, YAML_SEQUENCE_NODE, "zip"))
        return -1;
    for (yaml_node_item_t *g = seq->data.sequence.items.start; g < seq->data.sequence.items.top; g++) {
        yaml_node_t *grp = node(L, *g);
        if (spec_loader_want(L, grp, YAML_SEQUENCE_NODE, "a zip group"))
            return -1;
        int first = -1;
        for (yaml_node_item_t *i = grp->data.sequence.items.start; i < grp->data.sequence.items.top; i++) {
            yaml_node_t *an = node(L, *i);
            int a = spec_loader_axis_index(L, an, "zip");
            if (a < 0)
                return -1;
            if (s->axes[a].zip >= 0)
                return spec_loader_fail(L, an, "axis '%s' is already in a zip group", s->axes[a].name);
            if (first >= 0 && s->axes[a].nvals != s->axes[first].nvals)
                return spec_loader_fail(L, an, "axis '%s' has %d values but '%s' has %d (zipped axes advance together)",
                            s->axes[a].name, s->axes[a].nvals, s->axes[first].name, s->axes[first].nvals);
            if (first < 0)
                first = a;
            s->axes[a].zip = s->nzip;
        }
        if (grp->data.sequence.items.top - grp->data.sequence.items.start < 2)
            return spec_loader_fail(L, grp, "a zip group needs at least two axes");
        s->nzip++;
    }
    return 0;
}

static int load_where(Loader *L, yaml_node_t *n)
{
    Spec *s = L->s;
    if (is_scalar(n)) {
        s->where = arena_alloc(s->arena, sizeof(Expr *));
        s->nwhere = 1;
        return (s->where[0] = spec_loader_expr(L, n, "where")) ? 0 : -1;
    }
    if (spec_loader_want(L, n, YAML_SEQUENCE_NODE, "where"))
        return -1;
    int k = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    s->where = arena_alloc(s->arena, sizeof(Expr *) * (size_t)(k ? k : 1));
    for (int i = 0; i < k; i++)
        if (!(s->where[s->nwhere++] = spec_loader_expr(L, node(L, n->data.sequence.items.start[i]), "where")))
            return -1;
    return 0;
}

/* One variable of a set: entry, vk: vv for value vi of axis a: a name that
 * is not an axis, not bound twice for a value, nor by another axis.  The
 * axis's entries start at first_entry; *cap is s->sets' room. */
static int set_var(Loader *L, int a, int vi, int first_entry, yaml_node_t *vk, yaml_node_t *vv,
                   int *cap)
{
    Spec *s = L->s;
    if (!is_scalar(vk) || !is_ident(scalar(vk)))
        return spec_loader_fail(L, vk, "set variable name is not a name (expected letters, digits and _)");
    if (!is_scalar(vv))
        return spec_loader_fail(L, vv, "set variable '%s' is %s (expected a scalar)", scalar(vk),
                    kind_name(vv));
    if (spec_axis_find(s, scalar(vk)) >= 0)
        return spec_loader_fail(L, vk, "set variable '%s' would hide the axis of that name", scalar(vk));
    for (int e = first_entry; e < s->nsets; e++)
        if (s->sets[e].value == vi && strcmp(s->sets[e].var, scalar(vk)) == 0)
            return spec_loader_fail(L, vk, "duplicate set variable '%s'", scalar(vk));
    for (int e = 0; e < first_entry; e++)
        if (strcmp(s->sets[e].var, scalar(vk)) == 0 && s->sets[e].axis != a)
            return spec_loader_fail(L, vk, "set variable '%s' is already set by axis '%s'", scalar(vk),
                        s->axes[s->sets[e].axis].name);
    /* Grown in the arena (copies are cheap and few), so a failure leaks nothing. */
    if (s->nsets == *cap) {
        SetEntry *grown = arena_alloc(s->arena, sizeof(SetEntry) * (size_t)(*cap *= 2));
        memcpy(grown, s->sets, sizeof(SetEntry) * (size_t)s->nsets);
        s->sets = grown;
    }
    SetEntry *se = &s->sets[s->nsets++];
    se->axis = a;
    se->value = vi;
    se->var = arena_strdup(s->arena, scalar(vk));
    se->v = spec_loader_scalar_value(L, vv);
    se->pos = node_pos(L, vv);
    return L->err->code ? -1 : 0;
}

/* A variable bound for one value of the axis must be bound for all:
 * otherwise a template would fail on some points only, far from here. */
static int set_complete(Loader *L, int a, int first_entry, yaml_node_t *vals)
{
    const Spec *s = L->s;
    for (int e = first_entry; e < s->nsets; e++) {
        for (int vi = 0; vi < s->axes[a].nvals; vi++) {
            int found = 0;
            for (int f = first_entry; f < s->nsets; f++)
                found |= s->sets[f].value == vi && strcmp(s->sets[f].var, s->sets[e].var) == 0;
            if (!found)
                return spec_loader_fail(L, vals, "set variable '%s' is missing for %s=%s", s->sets[e].var,
                            s->axes[a].name, s->axes[a].vals[vi].text);
        }
    }
    return 0;
}

/* set: { AXIS: { VALUE: { VAR: X, ... }, ... }, ... }. */
static int load_set(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "set") || spec_loader_unique_keys(L, map, "set"))
        return -1;
    int cap = 16;
    s->sets = arena_alloc(s->arena, sizeof(SetEntry) * (size_t)cap);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        int a = spec_loader_axis_index(L, node(L, p->key), "set");
        if (a < 0)
            return -1;
        yaml_node_t *vals = node(L, p->value);
        if (spec_loader_want(L, vals, YAML_MAPPING_NODE, "a set: entry"))
            return -1;
        int first_entry = s->nsets;
        for (yaml_node_pair_t *q = vals->data.mapping.pairs.start; q < vals->data.mapping.pairs.top; q++) {
            int vi = spec_loader_value_index(L, a, node(L, q->key), "a set: key");
            if (vi < 0)
                return -1;
            yaml_node_t *vars = node(L, q->value);
            if (spec_loader_want(L, vars, YAML_MAPPING_NODE, "set variables"))
                return -1;
            for (yaml_node_pair_t *r = vars->data.mapping.pairs.start; r < vars->data.mapping.pairs.top; r++)
                if (set_var(L, a, vi, first_entry, node(L, r->key), node(L, r->value), &cap))
                    return -1;
        }
        if (set_complete(L, a, first_entry, vals))
            return -1;
    }
    return 0;
}

int spec_loader_name_taken(const Spec *s, const char *name)
{
    Value v;
    if (spec_axis_find(s, name) >= 0 || spec_let_find(s, name) >= 0 ||
        facts_lookup(&(DeviceFacts){0}, name, &v))
        return 1;
    for (int i = 0; i < s->nsets; i++)
        if (strcmp(s->sets[i].var, name) == 0)
            return 1;
    return 0;
}

static int load_let(Loader *L, yaml_node_t *map)
{
    Spec *s = L->s;
    if (spec_loader_want(L, map, YAML_MAPPING_NODE, "let"))
        return -1;
    int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    s->lets = arena_alloc(s->arena, sizeof(Let) * (size_t)(n ? n : 1));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        if (!is_scalar(k) || !is_ident(scalar(k)))
            return spec_loader_fail(L, k, "let name is not a name (expected letters, digits and _)");
        if (spec_loader_name_taken(s, scalar(k)))
            return spec_loader_fail(L, k, "let '%s' would hide an axis, set variable, let or device fact of that name",
                        scalar(k));
        Let *l = &s->lets[s->nlets];
        l->name = arena_strdup(s->arena, scalar(k));
        l->pos = node_pos(L, k);
        if (!(l->e = spec_loader_expr(L, node(L, p->value), "a let")))
            return -1;
        s->nlets++;
    }
    return 0;
}

/* The space: axes, then zip, set, let and where (each may refer to what came
 * before). */
int spec_space_load(Loader *L, yaml_node_t *root)
{
    yaml_node_t *n;
    if (load_axes(L, get(L, root, "axes")))
        return -1;
    if ((n = get(L, root, "zip")) && load_zip(L, n))
        return -1;
    if ((n = get(L, root, "set")) && load_set(L, n))
        return -1;
    if ((n = get(L, root, "let")) && load_let(L, n))
        return -1;
    if ((n = get(L, root, "where")) && load_where(L, n))
        return -1;
    return 0;
}
