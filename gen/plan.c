/* plan: points of a spec, their evaluation environment, and the grouping of
 * points into distinct sources (the template engine is gen/template.c).
 *
 * Invariants: plan_build is deterministic (same spec and facts -> the same
 * points in the same order and byte-identical sources); a source's code axes are
 * exactly the axes the template consulted for it; every point belongs to one
 * source. */
#include "plan.h"
#include "template.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_MAX_POINTS 10000000 /* a grid beyond this is almost surely a typo */

/* ---- the environment of a point --------------------------------------------- */

const SetEntry *plan_point_set_var(const PointEnv *pe, const char *var)
{
    const Spec *s = pe->spec;
    for (int i = 0; i < s->nsets; i++)
        if (s->sets[i].value == pe->vals[s->sets[i].axis] && strcmp(s->sets[i].var, var) == 0)
            return &s->sets[i];
    return NULL;
}

/* The value of let l at this point, evaluated once: the axes it read are
 * cached with it and added to pe->used on every use.  0 or -1 with err (its
 * expression fails, or it depends on itself). */
static int let_value(PointEnv *pe, int l, Value *out, KvxError *err)
{
    const Spec *s = pe->spec;
    if (pe->let_state[l] == 1) {
        kvx_error_set(err, KVX_EINPUT, &s->lets[l].pos, "let '%s' depends on itself",
                      s->lets[l].name);
        return -1;
    }
    if (pe->let_state[l] == 0) {
        uint64_t saved = pe->used;
        pe->used = 0;
        pe->let_state[l] = 1;
        if (expr_eval(s->lets[l].e, &pe->env, &pe->let_val[l], err) != 0) {
            pe->let_state[l] = 0;
            pe->used = saved;
            return -1;
        }
        pe->let_state[l] = 2;
        pe->let_used[l] = pe->used;
        pe->used = saved;
    }
    pe->used |= pe->let_used[l];
    *out = pe->let_val[l];
    return 0;
}

/* ExprEnv lookup: axes, then set: variables, lets and device facts.  1 found,
 * 0 unknown, -1 with err. */
static int pe_lookup(void *ctx, const char *name, Value *out, KvxError *err)
{
    PointEnv *pe = ctx;
    const Spec *s = pe->spec;
    int a = spec_axis_find(s, name);
    if (a >= 0) {
        *out = s->axes[a].vals[pe->vals[a]].v;
        pe->used |= 1ULL << a;
        return 1;
    }
    const SetEntry *se = plan_point_set_var(pe, name);
    if (se) {
        *out = se->v;
        pe->used |= 1ULL << se->axis;
        return 1;
    }
    int l = spec_let_find(s, name);
    if (l >= 0)
        return let_value(pe, l, out, err) ? -1 : 1;
    if (pe->facts && facts_lookup(pe->facts, name, out)) {
        pe->used_facts = 1;
        return 1;
    }
    return 0;
}

void plan_point_env_init(PointEnv *pe, const Spec *s, const int *vals, const DeviceFacts *f, Arena *a)
{
    memset(pe, 0, sizeof *pe);
    pe->spec = s;
    pe->vals = vals;
    pe->facts = f;
    pe->arena = a;
    int n = s->nlets ? s->nlets : 1;
    pe->let_val = arena_alloc(a, sizeof(Value) * (size_t)n);
    pe->let_used = arena_alloc(a, sizeof(uint64_t) * (size_t)n);
    pe->let_state = arena_alloc(a, sizeof(int) * (size_t)n);
    pe->env.lookup = pe_lookup;
    pe->env.ctx = pe;
    pe->env.arena = a;
}

int plan_point_eval(PointEnv *pe, const Expr *e, Value *out, KvxError *err)
{
    return expr_eval(e, &pe->env, out, err);
}

int plan_point_eval_int(PointEnv *pe, const Expr *e, int64_t *out, KvxError *err)
{
    Value v;
    if (plan_point_eval(pe, e, &v, err))
        return -1;
    if (v.kind == VAL_INT) {
        *out = v.i;
        return 0;
    }
    if (v.kind == VAL_FLOAT && v.d >= -0x1p63 && v.d < 0x1p63 && v.d == trunc(v.d)) {
        *out = (int64_t)v.d;
        return 0;
    }
    kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a whole number, got %s",
                  val_text(pe->arena, v));
    return -1;
}

/* ---- the plan --------------------------------------------------------------------- */

const int *plan_point(const Plan *p, int i) { return p->vals + (size_t)i * (size_t)p->spec->naxes; }

/* s as a string literal of the expression language. */
static void string_literal(StrBuf *b, const char *s)
{
    sb_putc(b, '"');
    for (const char *c = s; *c; c++) {
        if (*c == '"' || *c == '\\')
            sb_putc(b, '\\');
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            sb_put_escaped(b, (char[2]){*c, 0});   /* the command stays on its comment line */
        else
            sb_putc(b, *c);
    }
    sb_putc(b, '"');
}

static void value_literal(StrBuf *b, Value v)
{
    if (v.kind == VAL_STR) {
        string_literal(b, v.s);
        return;
    }
    Arena *a = arena_new();
    sb_puts(b, val_text(a, v));
    arena_free(a);
}

char *plan_point_label(const Plan *p, int i, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, i);
    StrBuf b;
    sb_init(&b);
    /* Escaped: the label is a line of the source's header and of listings. */
    for (int a = 0; a < s->naxes; a++)
        if (mask & (1ULL << a)) {
            sb_printf(&b, "%s%s=", b.len ? " " : "", s->axes[a].name);
            sb_put_escaped(&b, s->axes[a].vals[v[a]].text);
        }
    return sb_take(&b);
}

char *plan_point_key_text(const Plan *p, int i)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, i);
    StrBuf b;
    sb_init(&b);
    for (int a = 0; a < s->naxes; a++)
        sb_printf(&b, "%s%s=%s", a ? " " : "", s->axes[a].name, s->axes[a].vals[v[a]].text);
    return sb_take(&b);
}

/* The --where text that selects exactly the given axes' values of point i. */
static char *point_filter(const Plan *p, int i, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, i);
    StrBuf b;
    sb_init(&b);
    for (int a = 0; a < s->naxes; a++) {
        if (!(mask & (1ULL << a)))
            continue;
        sb_printf(&b, "%s%s == ", b.len ? " && " : "", s->axes[a].name);
        value_literal(&b, s->axes[a].vals[v[a]].v);
    }
    return sb_take(&b);
}

/* Whether c may stand in a source's file name as is: any other byte of an
 * axis value becomes '_', so that a name needs no quoting in a shell. */
static int file_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

static char *source_file_name(const Plan *p, int i, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, i);
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, s->name);
    for (int a = 0; a < s->naxes; a++)
        if (mask & (1ULL << a))
            sb_printf(&b, "__%s-%s", s->axes[a].name, s->axes[a].vals[v[a]].text);
    for (size_t k = 0; k < b.len; k++)
        if (!file_name_char(b.p[k]))
            b.p[k] = '_';
    sb_puts(&b, ".cu");
    return sb_take(&b);
}

static void quote_shell(StrBuf *b, const char *s)
{
    sb_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            sb_puts(b, "'\\''");
        else
            sb_putc(b, *s);
    }
    sb_putc(b, '\'');
}

/* The grid's units: a zip group is one unit standing where its first axis
 * stands, every other axis a unit of its own. */
typedef struct Units {
    int n;
    int of[SPEC_MAX_AXES];      /* unit of each axis */
    int size[SPEC_MAX_AXES];    /* values of each unit */
} Units;

/* The unit of an axis before a in a's zip group, or -1 (a stands first). */
static int zip_unit(const Spec *s, const Units *u, int a)
{
    if (s->axes[a].zip < 0)
        return -1;
    for (int b = 0; b < a; b++)
        if (s->axes[b].zip == s->axes[a].zip)
            return u->of[b];
    return -1;
}

static void units_find(const Spec *s, Units *u)
{
    u->n = 0;
    for (int a = 0; a < s->naxes; a++) {
        int k = zip_unit(s, u, a);
        if (k < 0) {
            k = u->n++;
            u->size[k] = s->axes[a].nvals;
        }
        u->of[a] = k;
    }
}

/* Does the point of value indices vals satisfy every where:?  1, 0, or -1
 * with err (a constraint that fails or is not a boolean). */
static int point_kept(const Plan *p, const int *vals, Arena *scratch, KvxError *err)
{
    const Spec *s = p->spec;
    PointEnv pe;
    plan_point_env_init(&pe, s, vals, &p->facts, scratch);
    for (int w = 0; w < s->nwhere; w++) {
        Value v;
        if (plan_point_eval(&pe, s->where[w], &v, err))
            return -1;
        if (v.kind != VAL_BOOL) {
            kvx_error_set(err, KVX_EINPUT, &s->where[w]->pos, "where: constraint is %s (expected "
                          "a boolean)", val_text(scratch, v));
            return -1;
        }
        if (!v.i)
            return 0;
    }
    return 1;
}

static void points_add(Plan *p, const int *vals, int *cap)
{
    size_t na = (size_t)p->spec->naxes;
    if (p->npoints == *cap) {
        *cap *= 2;
        p->vals = mem_realloc(p->vals, sizeof(int) * (size_t)*cap * na);
    }
    memcpy(p->vals + (size_t)p->npoints * na, vals, sizeof(int) * na);
    p->npoints++;
}

/* Enumerate the full product, in declaration order with the last unit fastest,
 * keeping the points that satisfy where:.  0 or -1 with err (the grid is too
 * large, a constraint fails, or no point is left). */
static int enumerate(Plan *p, KvxError *err)
{
    Spec *s = p->spec;
    Units u;
    units_find(s, &u);
    double full = 1;
    for (int k = 0; k < u.n; k++)
        full *= u.size[k];
    if (full > PLAN_MAX_POINTS) {
        kvx_error_set(err, KVX_EINPUT, &s->axes[0].pos, "the grid has %.0f points (at most %d)", full,
                      PLAN_MAX_POINTS);
        return -1;
    }
    p->nfull = (int)full;
    int idx[SPEC_MAX_AXES] = {0};
    int vals[SPEC_MAX_AXES];
    int cap = 64;
    p->vals = mem_alloc(sizeof(int) * (size_t)cap * (size_t)s->naxes);
    Arena *scratch = arena_new();
    int keep = 1;
    for (int k = 0; k < p->nfull && keep >= 0; k++) {
        for (int a = 0; a < s->naxes; a++)
            vals[a] = idx[u.of[a]];
        if ((keep = point_kept(p, vals, scratch, err)) > 0)
            points_add(p, vals, &cap);
        for (int x = u.n - 1; x >= 0; x--) {
            if (++idx[x] < u.size[x])
                break;
            idx[x] = 0;
        }
        if ((k & 1023) == 1023) {
            arena_free(scratch);
            scratch = arena_new();
        }
    }
    arena_free(scratch);
    if (keep < 0)
        return -1;
    if (p->npoints == 0) {
        SrcPos wp = s->nwhere ? s->where[0]->pos : s->axes[0].pos;
        kvx_error_set(err, KVX_EINPUT, &wp, "where: leaves no point of the %d in the grid", p->nfull);
        return -1;
    }
    return 0;
}

/* The sources so far and a new source's hash or file name, for the tables
 * that keep plan_build linear in the number of sources. */
typedef struct NewSource { const Source *srcs; const char *s; } NewSource;

static int same_hash(int stored, const void *ctx)
{
    const NewSource *n = ctx;
    return strcmp(n->srcs[stored].hash, n->s) == 0;
}

static int same_file(int stored, const void *ctx)
{
    const NewSource *n = ctx;
    return strcmp(n->srcs[stored].file, n->s) == 0;
}

/* Points already emitted, by the values of the axes their template read: a
 * point that agrees with one of them on those axes reads the same axes and
 * emits the same text, so its source is known without emitting it again
 * (a million-value workload axis planned in seconds, not half a minute). */
#define MEMO_MASKS 8
typedef struct Memo {
    int n;
    uint64_t mask[MEMO_MASKS];
    HashIdx pts[MEMO_MASKS];   /* point index -> its source through p->point_src */
} Memo;

typedef struct MemoKey { const Plan *p; uint64_t mask; int i; } MemoKey;

static uint64_t memo_hash(const Plan *p, uint64_t mask, int i)
{
    const int *v = plan_point(p, i);
    uint64_t h = mask;
    for (int a = 0; a < p->spec->naxes; a++)
        if (mask >> a & 1)
            h = (h ^ (uint64_t)v[a]) * 1099511628211ull;
    return h;
}

static int memo_same(int stored, const void *ctx)
{
    const MemoKey *k = ctx;
    const int *a = plan_point(k->p, stored), *b = plan_point(k->p, k->i);
    for (int x = 0; x < k->p->spec->naxes; x++)
        if ((k->mask >> x & 1) && a[x] != b[x])
            return 0;
    return 1;
}

/* The source of a point emitted before that agrees with i, or -1. */
static int memo_find(Memo *m, const Plan *p, int i)
{
    for (int k = 0; k < m->n; k++) {
        MemoKey key = {p, m->mask[k], i};
        HashIdx *t = &m->pts[k];
        uint64_t h = memo_hash(p, m->mask[k], i);
        /* A lookup without inserting: probe as hidx_add does. */
        for (size_t j = t->cap ? h & (t->cap - 1) : 0; t->cap && t->idx[j] >= 0;
             j = (j + 1) & (t->cap - 1))
            if (t->hash[j] == h && memo_same(t->idx[j], &key))
                return p->point_src[t->idx[j]];
    }
    return -1;
}

static void memo_add(Memo *m, const Plan *p, int i, uint64_t mask)
{
    int k = 0;
    while (k < m->n && m->mask[k] != mask)
        k++;
    if (k == m->n) {
        if (m->n == MEMO_MASKS)
            return;   /* more shapes than that: emit the rest, as before */
        m->mask[m->n++] = mask;
    }
    hidx_add(&m->pts[k], memo_hash(p, mask, i), i, memo_same, &(MemoKey){p, mask, i});
}

static void memo_free(Memo *m)
{
    for (int k = 0; k < m->n; k++)
        hidx_free(&m->pts[k]);
}

/* One plan_build: the template, the tables that find a source by hash and by
 * file name, the memo of emitted points, and scratch for one point's body and
 * text.  Zeroed, so that build_close frees whatever a failed stage left. */
typedef struct Build {
    Plan *p;
    Template *t;
    Arena *scratch;             /* per point; renewed every 256 points */
    StrBuf body, text;
    HashIdx by_hash, by_file;
    Memo memo;
    int cap;                    /* of p->srcs */
    size_t bytes;               /* of the distinct sources' text so far */
    const char *spec_base;      /* the spec's file name */
    const char *template_rel;   /* the template as the spec writes it */
} Build;

/* The header names the spec by its file name and the template as the spec
 * writes it, not by the path kvx was given: the same spec reached by another
 * path must give the same source, hash, cache entry and keys. */
static void build_names(Build *b)
{
    const Spec *s = b->p->spec;
    b->spec_base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
    b->template_rel = s->template_path;
    size_t dl = strlen(s->dir);
    if (strcmp(s->dir, ".") != 0 && strncmp(b->template_rel, s->dir, dl) == 0 &&
        b->template_rel[dl] == '/')
        b->template_rel += dl + 1;
}

/* Emit point i's body into b->body; pe gets the axes and facts it read.
 * 0 or -1 with err (the template fails, or the source is too large). */
static int build_emit(Build *b, int i, PointEnv *pe, KvxError *err)
{
    Plan *p = b->p;
    plan_point_env_init(pe, p->spec, plan_point(p, i), &p->facts, b->scratch);
    sb_reset(&b->body);
    if (template_emit(b->t, pe, &b->body, NULL, err))
        return -1;
    if (b->body.len > PLAN_MAX_SOURCE_BYTES) {
        char *what = plan_point_label(p, i, ~0ull);
        kvx_error_set(err, KVX_EINPUT, &(SrcPos){p->spec->template_path, 0, 0},
                      "the source of %s is %zu bytes (expected at most %u)", what, b->body.len,
                      PLAN_MAX_SOURCE_BYTES);
        free(what);
        return -1;
    }
    return 0;
}

/* b->text: the header (the spec, the variant, the command that reproduces
 * it, run from the spec's folder) and the body of point i. */
static void build_text(Build *b, int i, const PointEnv *pe, const char *label)
{
    const Plan *p = b->p;
    uint64_t mask = pe->used;
    StrBuf *text = &b->text;
    sb_reset(text);
    /* File names are escaped as values are: a path may hold a newline. */
    sb_puts(text, "// Generated by kvx from ");
    sb_put_escaped(text, b->spec_base);
    sb_puts(text, " (template ");
    sb_put_escaped(text, b->template_rel);
    sb_puts(text, "): edit those, not this file.\n");
    sb_printf(text, "// Variant: %s\n", mask ? label : "(no code axes)");
    /* The spec by file name (above): the command runs from the spec's folder,
     * and says so, wherever kvx was run. */
    sb_puts(text, "// Reproduce (from the folder of ");
    sb_put_escaped(text, b->spec_base);
    sb_puts(text, "): kvx gen ");
    sb_put_escaped(text, b->spec_base);
    if (mask) {
        char *filter = point_filter(p, i, mask);
        sb_puts(text, " --where ");
        quote_shell(text, filter);
        free(filter);
    }
    /* The facts it was planned with: a named part's are not its arch's. */
    if (pe->used_facts && p->facts.gpu[0])
        sb_printf(text, " --gpu %s", p->facts.gpu);
    else if (pe->used_facts)
        sb_printf(text, " --arch %s", p->facts.arch);
    sb_puts(text, " --out DIR\n\n");
    sb_put(text, b->body.p ? b->body.p : "", b->body.len);
}

/* so->origins: "" for each line of the header, then the template lines of
 * the body as point i emits it again with the map (once per distinct source:
 * the points' own emits skip it).  The emit succeeded once: it cannot fail. */
static void build_origins(Build *b, int i, Source *so)
{
    Plan *p = b->p;
    StrBuf body, map;
    sb_init(&body), sb_init(&map);
    for (size_t k = 0; k < b->text.len - b->body.len; k++)
        if (b->text.p[k] == '\n')
            sb_putc(&map, '\n');
    PointEnv pe;
    KvxError err = {0};
    plan_point_env_init(&pe, p->spec, plan_point(p, i), &p->facts, b->scratch);
    template_emit(b->t, &pe, &body, &map, &err);
    kvx_error_clear(&err);
    so->origins = sb_take(&map);
    sb_free(&body);
}

/* A new source for b->text, first emitted by point i; takes label.  Two
 * values sanitised to one file name keep their files apart by the hash. */
static int build_new_source(Build *b, int i, uint64_t mask, const char *hash, char *label)
{
    Plan *p = b->p;
    if (p->nsrcs == b->cap) {
        p->srcs = mem_realloc(p->srcs, sizeof(Source) * (size_t)(b->cap *= 2));
        memset(p->srcs + p->nsrcs, 0, sizeof(Source) * (size_t)(b->cap - p->nsrcs));
    }
    int src = p->nsrcs++;
    Source *so = &p->srcs[src];
    memcpy(so->hash, hash, 65);
    so->text = mem_strdup(sb_str(&b->text));
    so->file = source_file_name(p, i, mask);
    so->label = label;
    so->code_axes = mask;
    so->first_point = i;
    build_origins(b, i, so);
    if (hidx_add(&b->by_file, hidx_hash(so->file, strlen(so->file)), src, same_file,
                 &(NewSource){p->srcs, so->file}) >= 0) {
        char *dot = strrchr(so->file, '.');
        *dot = 0;
        char *renamed = mem_alloc(strlen(so->file) + 16);
        sprintf(renamed, "%s__%.8s.cu", so->file, hash);
        free(so->file);
        so->file = renamed;
    }
    return src;
}

/* Room for b->text as one more distinct source.  Each source stays under
 * its own cap, so only the total stops a large template over a long code
 * axis: 3.3 MB times 100 values once took 59 s and 2 GB before anything was
 * said.  0, or -1 with err naming the point where the total passed. */
static int room_for_source(Build *b, int i, KvxError *err)
{
    b->bytes += b->text.len;
    if (b->bytes <= PLAN_MAX_PLAN_BYTES)
        return 0;
    char *what = plan_point_label(b->p, i, ~0ull);
    kvx_error_set(err, KVX_EINPUT, &(SrcPos){b->p->spec->template_path, 0, 0},
                  "the distinct sources pass %u bytes in all at source %d (%s, %zu bytes) "
                  "(expected at most %u in all: prune the axes that change the code with where:)",
                  PLAN_MAX_PLAN_BYTES, b->p->nsrcs + 1, what, b->text.len, PLAN_MAX_PLAN_BYTES);
    free(what);
    return -1;
}

/* Point i's source: one an agreeing point emitted before, the stored source
 * with the same text, or a new one.  0 or -1 with err. */
static int build_point(Build *b, int i, KvxError *err)
{
    Plan *p = b->p;
    int src = memo_find(&b->memo, p, i);
    if (src >= 0) {
        p->srcs[src].npoints++;
        p->point_src[i] = src;
        return 0;
    }
    PointEnv pe;
    if (build_emit(b, i, &pe, err))
        return -1;
    uint64_t mask = pe.used;
    char *label = plan_point_label(p, i, mask);
    build_text(b, i, &pe, label);
    char hash[65];
    sha256_hex(b->text.p, b->text.len, hash);
    src = hidx_add(&b->by_hash, hidx_hash(hash, 64), p->nsrcs, same_hash,
                   &(NewSource){p->srcs, hash});
    if (src < 0 && room_for_source(b, i, err)) {
        free(label);
        return -1;
    }
    if (src < 0)
        src = build_new_source(b, i, mask, hash, label);
    else
        free(label);
    p->srcs[src].npoints++;
    p->point_src[i] = src;
    p->code_axes |= mask;
    memo_add(&b->memo, p, i, mask);
    return 0;
}

static void build_close(Build *b)
{
    arena_free(b->scratch);
    template_free(b->t);
    sb_free(&b->body);
    sb_free(&b->text);
    hidx_free(&b->by_hash);
    hidx_free(&b->by_file);
    memo_free(&b->memo);
}

int plan_build(Spec *s, const DeviceFacts *f, Plan *p, KvxError *err)
{
    memset(p, 0, sizeof *p);
    p->spec = s;
    p->facts = *f;
    Build b = {.p = p, .cap = 16};
    sb_init(&b.body);
    sb_init(&b.text);
    if (enumerate(p, err) || template_load(s, &b.t, err))
        goto fail;
    build_names(&b);
    p->point_src = mem_alloc(sizeof(int) * (size_t)p->npoints);
    p->srcs = mem_calloc((size_t)b.cap, sizeof(Source));
    b.scratch = arena_new();
    for (int i = 0; i < p->npoints; i++) {
        if (build_point(&b, i, err))
            goto fail;
        if ((i & 255) == 255) {
            arena_free(b.scratch);
            b.scratch = arena_new();
        }
    }
    build_close(&b);
    return 0;
fail:
    build_close(&b);
    plan_free(p);
    return -1;
}

void plan_free(Plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nsrcs; i++) {
        free(p->srcs[i].text);
        free(p->srcs[i].file);
        free(p->srcs[i].label);
        free(p->srcs[i].origins);
    }
    free(p->srcs);
    free(p->vals);
    free(p->point_src);
    memset(p, 0, sizeof *p);
}

int plan_point_matches(const Plan *p, int i, const Expr *filter, KvxError *err)
{
    Arena *a = arena_new();
    PointEnv pe;
    plan_point_env_init(&pe, p->spec, plan_point(p, i), &p->facts, a);
    Value v;
    int rc = plan_point_eval(&pe, filter, &v, err);
    if (rc == 0 && v.kind != VAL_BOOL) {
        kvx_error_set(err, KVX_EINPUT, &filter->pos, "--where is %s (expected a boolean)",
                      val_text(a, v));
        rc = -1;
    }
    int match = rc == 0 ? (int)v.i : -1;
    arena_free(a);
    return match;
}

unsigned char *plan_select(const Plan *p, const char *where, KvxError *err)
{
    unsigned char *sel = mem_alloc((size_t)p->npoints + 1);
    memset(sel, 1, (size_t)p->npoints + 1);
    if (!where)
        return sel;
    Arena *a = arena_new();
    SrcPos pos = {"--where", 1, 1};
    Expr *e = expr_parse(a, where, &pos, err);
    /* The rule of where: a value an axis does not have is a typo, not an
     * empty selection. */
    int rc = e && spec_check_axis_values(p->spec, e, err) == 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < p->npoints; i++) {
        int m = plan_point_matches(p, i, e, err);
        if (m < 0)
            rc = -1;
        else
            sel[i] = (unsigned char)m;
    }
    arena_free(a);
    if (rc) {
        free(sel);
        return NULL;
    }
    return sel;
}
