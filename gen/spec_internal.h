/* spec_internal: what the files of the spec loader share; nothing outside
 * gen/spec*.c includes it.
 *
 *   spec.c           the loader core: reading the YAML document, checking keys
 *                    and scalars, axes, zip, set, let, where, the name checks
 *                    across all sections, the top level and spec_load
 *   spec_sections.c  buffers and their initialisers, launch, check, metrics,
 *                    baseline, measure and report
 *   spec_options.c   options: (what may reach NVRTC's command line)
 *
 * Convention for every helper and loader below: on success 0 (or an index, or
 * a non-NULL pointer); on bad input L->err is set with code KVX_EINPUT and the
 * offending node's file:line:col, and the result is -1 (or NULL).  The first
 * error ends the load, so nothing is ever reported twice.  Whatever they
 * allocate lives in L->s->arena. */
#ifndef KVX_SPEC_INTERNAL_H
#define KVX_SPEC_INTERNAL_H

#include "spec.h"

#include <ctype.h>
#include <string.h>
#include <yaml.h>

/* The state of one spec_load: the Spec being filled, the parsed document and
 * the error slot. */
typedef struct Loader {
    Spec *s;
    const char *text;   /* the spec file, for looking at what ended a scalar */
    size_t len;
    yaml_document_t doc;
    const char *file;
    KvxError *err;
} Loader;

/* One allowed key of a mapping, for check_keys; arrays end with {0}. */
typedef struct KeyDoc {
    const char *key;
    int required;
} KeyDoc;

/* ---- nodes and positions (static inline: each file gets its own copy) ------ */

/* The 1-based file:line:col of a node (libyaml's marks are 0-based). */
static inline SrcPos node_pos(const Loader *L, const yaml_node_t *n)
{
    SrcPos p = {L->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
    return p;
}

/* Position of the first character of a scalar's text (after a quote). */
static inline SrcPos text_pos(const Loader *L, const yaml_node_t *n)
{
    SrcPos p = node_pos(L, n);
    if (n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                                        n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        p.col++;
    return p;
}

/* "a scalar", "a list", "a mapping": what a message says n is. */
static inline const char *kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

/* The node with id in the document; NULL for an id of 0 (absent). */
static inline yaml_node_t *node(Loader *L, int id) { return yaml_document_get_node(&L->doc, id); }

/* 1 when n exists and is a scalar (safe on NULL). */
static inline int is_scalar(const yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE; }

/* The text of a scalar node, and whether it was quoted (n must be a scalar). */
static inline const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static inline int is_quoted(const yaml_node_t *n)
{
    return n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
           n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

/* The value node of key in a mapping, or NULL when the key is absent.  The
 * mapping's keys must be scalars: call after check_keys (or want). */
static inline yaml_node_t *get(Loader *L, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (strcmp(scalar(node(L, p->key)), key) == 0)
            return node(L, p->value);
    return NULL;
}

/* 1 when s is a C identifier: a letter or _, then letters, digits and _. */
static inline int is_ident(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* ---- checks and scalars (spec.c) ------------------------------------------- */

/* Set L->err at n's position (at the file alone when n is NULL) from fmt.
 * Always returns -1, so that a loader can `return spec_loader_fail(...)`. */
int spec_loader_fail(Loader *L, const yaml_node_t *n, const char *fmt, ...) KVX_PRINTF(3, 4);

/* 0 when n is of type t; else -1 with "WHAT is a list (expected a mapping)". */
int spec_loader_want(Loader *L, const yaml_node_t *n, yaml_node_type_t t, const char *what);

/* Check a mapping's keys against keys (ended by {0}): scalars, known, not
 * repeated, and every required key present.  0 or -1; an unknown key's message
 * lists the expected ones. */
int spec_loader_check_keys(Loader *L, yaml_node_t *map, const KeyDoc *keys, const char *what);
/* A mapping whose keys are names of the user's (set:, buffers:, baseline:,
 * tolerance:): no key twice, the error at the second.  0 or -1. */
int spec_loader_unique_keys(Loader *L, const yaml_node_t *map, const char *what);

/* A number written in any form docs/spec.md lists (2^24, 16M, 0x10, 1e-3). */
int spec_loader_double(Loader *L, const yaml_node_t *n, const char *what, double *out);
/* Unquoted true or false. */
int spec_loader_bool(Loader *L, const yaml_node_t *n, const char *what, int *out);
/* Any scalar, copied into the arena. */
int spec_loader_string(Loader *L, const yaml_node_t *n, const char *what, const char **out);
/* A template: path (relative to the spec), a regular .cu or .cuh file,
 * into *path (the arena's). */
int spec_loader_template(Loader *L, yaml_node_t *n, const char **path);
/* A list of scalars into an arena array *out of *n strings. */
int spec_loader_strings(Loader *L, yaml_node_t *seq, const char *what, const char ***out, int *n);

/* Parse a scalar as an expression; error columns point into the text the user
 * typed (after a quote).  NULL on error, with a hint when YAML cut a plain
 * scalar short at a comma. */
Expr *spec_loader_expr(Loader *L, const yaml_node_t *n, const char *what);
/* An axis value as written: numbers in every form docs/spec.md lists,
 * booleans, else a string; quoted scalars are always strings. */
Value spec_loader_scalar_value(Loader *L, const yaml_node_t *n);

/* ---- names (spec.c) -------------------------------------------------------- */

/* The index of the axis named by scalar k, or -1 when k names no axis. */
int spec_loader_axis_index(Loader *L, yaml_node_t *k, const char *what);
/* The index of scalar vn among the values of axis axis, or -1 (the message
 * lists the values). */
int spec_loader_value_index(Loader *L, int axis, yaml_node_t *vn, const char *what);
/* 1 when name is already an axis, let, set variable or device fact (never an
 * error by itself: the caller words the message). */
int spec_loader_name_taken(const Spec *s, const char *name);

/* ---- sections (spec_sections.c) -------------------------------------------- */

/* Each reads the node of its top-level key into L->s.  load_root calls them in
 * this order, after axes, zip, set, let and where, so that each may refer to
 * what came before (a buffer's init to axes, a check to buffers). */
/* The space (spec_space.c): axes, zip, set, let, where.  0 or -1. */
int spec_space_load(Loader *L, yaml_node_t *root);
int spec_sections_buffers(Loader *L, yaml_node_t *map);
int spec_sections_launch(Loader *L, yaml_node_t *map);
int spec_sections_check(Loader *L, yaml_node_t *map);
int spec_sections_reference(Loader *L, yaml_node_t *map);
int spec_sections_metrics(Loader *L, yaml_node_t *map);
int spec_sections_baseline(Loader *L, yaml_node_t *map);
int spec_sections_measure(Loader *L, yaml_node_t *map);
int spec_sections_report(Loader *L, yaml_node_t *seq);
/* options: (spec_options.c): NVRTC options that touch no file, -I confined. */
int spec_options_load(Loader *L, yaml_node_t *seq);

#endif
