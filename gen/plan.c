/* plan: points of a spec, their evaluation environment, templates, and the
 * grouping of points into distinct sources.
 *
 * Invariants: plan_build is deterministic (same spec and facts -> the same
 * points in the same order and byte-identical sources); a source's code axes are
 * exactly the axes the template consulted for it; every point belongs to one
 * source. */
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_MAX_POINTS 10000000 /* a grid beyond this is almost surely a typo */

/* ---- the environment of a point --------------------------------------------- */

const SetEntry *point_set_var(const PointEnv *pe, const char *var)
{
    const Spec *s = pe->spec;
    for (int i = 0; i < s->nsets; i++)
        if (s->sets[i].value == pe->vals[s->sets[i].axis] && strcmp(s->sets[i].var, var) == 0)
            return &s->sets[i];
    return NULL;
}

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
    const SetEntry *se = point_set_var(pe, name);
    if (se) {
        *out = se->v;
        pe->used |= 1ULL << se->axis;
        return 1;
    }
    int l = spec_let_find(s, name);
    if (l >= 0) {
        if (pe->let_state[l] == 1) {
            kvx_error_set(err, KVX_EINPUT, &s->lets[l].pos, "let '%s' depends on itself", name);
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
        return 1;
    }
    if (pe->facts && facts_lookup(pe->facts, name, out)) {
        pe->used_facts = 1;
        return 1;
    }
    if (pe->extra && pe->extra(pe->extra_ctx, name, out))
        return 1;
    return 0;
}

void point_env_init(PointEnv *pe, const Spec *s, const int *vals, const DeviceFacts *f, Arena *a)
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

int point_eval(PointEnv *pe, const Expr *e, Value *out, KvxError *err)
{
    return expr_eval(e, &pe->env, out, err);
}

int point_eval_int(PointEnv *pe, const Expr *e, int64_t *out, KvxError *err)
{
    Value v;
    if (point_eval(pe, e, &v, err))
        return -1;
    if (v.kind == VAL_INT) {
        *out = v.i;
        return 0;
    }
    if (v.kind == VAL_FLOAT && v.d == (double)(int64_t)v.d) {
        *out = (int64_t)v.d;
        return 0;
    }
    kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a whole number, got %s",
                  val_text(pe->arena, v));
    return -1;
}

/* ---- templates ----------------------------------------------------------------- */

typedef enum { TN_TEXT, TN_EXPR, TN_IF, TN_INCLUDE } TNodeKind;

typedef struct TNode {
    TNodeKind kind;
    const char *text;           /* TN_TEXT */
    size_t len;
    Expr *e;                    /* TN_EXPR */
    /* TN_IF: branches; a NULL condition is the else branch */
    int nbranch;
    Expr **conds;
    struct TList *bodies;
    struct TList *inc;          /* TN_INCLUDE */
} TNode;

typedef struct TList {
    TNode *v;
    int n, cap;
} TList;

struct Template {
    Arena *arena;
    TList root;
    int if_depth;            /* #if nesting, across includes, while parsing */
    size_t bytes;            /* of every file read, includes counted each time */
    char *roots[2];          /* realpaths of the spec's and the template's folders */
};

typedef enum { TOK_TEXT, TOK_EXPR, TOK_IF, TOK_ELIF, TOK_ELSE, TOK_ENDIF, TOK_INCLUDE } TokKind;

typedef struct Tok {
    TokKind kind;
    const char *text;   /* TEXT: slice; EXPR/IF/ELIF: expression text; INCLUDE: path */
    size_t len;
    SrcPos pos;         /* of the directive, or of the expression text */
} Tok;

typedef struct Lexer {
    Arena *arena;
    const char *file;
    const char *src;
    Tok *toks;
    int ntoks, cap;
    const char *at;     /* pos_at's last pointer and its position: lex asks in order */
    SrcPos at_pos;
} Lexer;

static void tl_push(Arena *a, TList *l, TNode n)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        TNode *v = arena_alloc(a, sizeof(TNode) * (size_t)cap);
        if (l->n)
            memcpy(v, l->v, sizeof(TNode) * (size_t)l->n);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
}

static void tok_push(Lexer *lx, Tok t)
{
    if (lx->ntoks == lx->cap) {
        lx->cap = lx->cap ? lx->cap * 2 : 64;
        lx->toks = xrealloc(lx->toks, sizeof(Tok) * (size_t)lx->cap);
    }
    lx->toks[lx->ntoks++] = t;
}

/* The position of p, counted on from the last one asked for: from the start
 * each time, 10^5 placeholders took minutes. */
static SrcPos pos_at(Lexer *lx, const char *p)
{
    if (!lx->at || p < lx->at) {
        lx->at = lx->src;
        lx->at_pos = (SrcPos){lx->file, 1, 1};
    }
    SrcPos sp = lx->at_pos;
    for (const char *q = lx->at; q < p; q++) {
        if (*q == '\n') {
            sp.line++;
            sp.col = 1;
        } else {
            sp.col++;
        }
    }
    lx->at = p;
    lx->at_pos = sp;
    return sp;
}

/* The next "{{" from p, or NULL.  A loop, not strstr: ASan's strstr measures
 * the whole rest of the text on each call, quadratic over 10^5 placeholders. */
static const char *find_open(const char *p)
{
    for (; *p; p++)
        if (p[0] == '{' && p[1] == '{')
            return p;
    return NULL;
}

/* Split a template into text and directive tokens.  A directive (not a value
 * placeholder) alone on its line takes the whole line with it. */
static int lex(Lexer *lx, KvxError *err)
{
    const char *p = lx->src, *text = p;
    while ((p = find_open(p)) != NULL) {
        const char *open = p, *q = p + 2;
        while (*q == ' ' || *q == '\t')
            q++;
        /* A comment is prose: an apostrophe in it is not a string. */
        int comment = *q == '!';
        char quote = 0;
        for (; *q; q++) {
            if (comment) {
                if (q[0] == '}' && q[1] == '}')
                    break;
            } else if (quote) {
                if (*q == '\\' && q[1])
                    q++;
                else if (*q == quote)
                    quote = 0;
            } else if (*q == '"' || *q == '\'') {
                quote = *q;
            } else if (q[0] == '}' && q[1] == '}') {
                break;
            }
        }
        if (!*q) {
            SrcPos sp = pos_at(lx, open);
            kvx_error_set(err, KVX_EINPUT, &sp, "unclosed '{{' (expected '}}')");
            return -1;
        }
        const char *in = open + 2, *in_end = q, *close = q + 2;
        while (in < in_end && (*in == ' ' || *in == '\t'))
            in++;
        while (in_end > in && (in_end[-1] == ' ' || in_end[-1] == '\t'))
            in_end--;
        Tok t = {0};
        t.pos = pos_at(lx, in);
        int directive = 1;
        size_t n = (size_t)(in_end - in);
        if (n >= 3 && !strncmp(in, "#if", 3) && (n == 3 || in[3] == ' ')) {
            t.kind = TOK_IF;
            in += 3;
        } else if (n >= 5 && !strncmp(in, "#elif", 5) && (n == 5 || in[5] == ' ')) {
            t.kind = TOK_ELIF;
            in += 5;
        } else if (n == 5 && !strncmp(in, "#else", 5)) {
            t.kind = TOK_ELSE;
            in += 5;
        } else if (n == 3 && !strncmp(in, "/if", 3)) {
            t.kind = TOK_ENDIF;
            in += 3;
        } else if (n >= 8 && !strncmp(in, "#include", 8)) {
            t.kind = TOK_INCLUDE;
            in += 8;
        } else if (n >= 1 && in[0] == '!') {
            t.kind = TOK_TEXT; /* a comment: dropped, but it may take its line */
            in = in_end;
        } else if (n >= 1 && (in[0] == '#' || in[0] == '/')) {
            kvx_error_set(err, KVX_EINPUT, &t.pos, "unknown directive '%.*s' (expected #if, #elif, "
                          "#else, /if, #include or !comment)", (int)n, in);
            return -1;
        } else if (n == 0) {
            kvx_error_set(err, KVX_EINPUT, &t.pos, "empty placeholder '{{}}' (expected an expression)");
            return -1;
        } else {
            t.kind = TOK_EXPR;
            directive = 0;
        }
        while (in < in_end && *in == ' ')
            in++;
        if (t.kind != TOK_TEXT)
            t.pos = pos_at(lx, in);
        t.text = in;
        t.len = (size_t)(in_end - in);
        if ((t.kind == TOK_IF || t.kind == TOK_ELIF) && t.len == 0) {
            kvx_error_set(err, KVX_EINPUT, &t.pos, "#if without a condition (expected an expression)");
            return -1;
        }
        if (t.kind == TOK_INCLUDE) {
            if (t.len < 2 || t.text[0] != '"' || t.text[t.len - 1] != '"') {
                kvx_error_set(err, KVX_EINPUT, &t.pos, "#include needs a quoted path (expected "
                              "{{#include \"pieces/name.cuh\"}})");
                return -1;
            }
            t.text++;
            t.len -= 2;
        }

        /* Standalone line?  Whitespace from the line start to the directive and
         * from the directive to the newline. */
        const char *ls = open;
        while (ls > text && (ls[-1] == ' ' || ls[-1] == '\t'))
            ls--;
        int at_line_start = ls == lx->src || ls[-1] == '\n';
        const char *le = close;
        while (*le == ' ' || *le == '\t' || *le == '\r')
            le++;
        int at_line_end = *le == '\n' || *le == 0;
        int standalone = directive && at_line_start && at_line_end && ls >= text;
        const char *text_end = standalone ? ls : open;
        if (text_end > text)
            tok_push(lx, (Tok){TOK_TEXT, text, (size_t)(text_end - text), {0}});
        if (t.kind != TOK_TEXT)
            tok_push(lx, t);
        p = standalone ? (*le == '\n' ? le + 1 : le) : close;
        text = p;
    }
    size_t rest = strlen(text);
    if (rest)
        tok_push(lx, (Tok){TOK_TEXT, text, rest, {0}});
    return 0;
}

static int load_file(Template *t, const Spec *s, const char *path, int depth, TList *out,
                     const SrcPos *from, KvxError *err);

/* Parse tokens [*i, ntoks) into list until an ELIF/ELSE/ENDIF (returned in *stop). */
static int parse_list(Template *t, const Spec *s, Lexer *lx, int *i, int depth, TList *out,
                      TokKind *stop, KvxError *err)
{
    while (*i < lx->ntoks) {
        Tok *k = &lx->toks[*i];
        switch (k->kind) {
        case TOK_TEXT:
            tl_push(t->arena, out, (TNode){.kind = TN_TEXT, .text = k->text, .len = k->len});
            (*i)++;
            break;
        case TOK_EXPR: {
            char *src = arena_strndup(t->arena, k->text, k->len);
            Expr *e = expr_parse(t->arena, src, &k->pos, err);
            if (!e)
                return -1;
            tl_push(t->arena, out, (TNode){.kind = TN_EXPR, .e = e});
            (*i)++;
            break;
        }
        case TOK_INCLUDE: {
            char *rel = arena_strndup(t->arena, k->text, k->len);
            char *dir = path_dir(lx->file);
            char *path = path_join(dir, rel);
            free(dir);
            TList *inc = arena_alloc(t->arena, sizeof(TList));
            SrcPos from = k->pos;
            int rc = load_file(t, s, path, depth + 1, inc, &from, err);
            free(path);
            if (rc)
                return -1;
            tl_push(t->arena, out, (TNode){.kind = TN_INCLUDE, .inc = inc});
            (*i)++;
            break;
        }
        case TOK_IF: {
            TNode n = {.kind = TN_IF};
            Expr *conds[64];
            TList bodies[64];
            SrcPos if_pos = k->pos;
            TokKind kind = TOK_IF;
            /* Parsing, checking and emitting recurse once per level: 4,700
             * nested #if overflowed the stack. */
            if (++t->if_depth > PLAN_MAX_IF_DEPTH) {
                kvx_error_set(err, KVX_EINPUT, &k->pos, "#if nests deeper than %d",
                              PLAN_MAX_IF_DEPTH);
                return -1;
            }
            for (;;) {
                if (n.nbranch == 64) {
                    kvx_error_set(err, KVX_EINPUT, &k->pos, "too many #elif branches (at most 63)");
                    return -1;
                }
                Tok *c = &lx->toks[*i];
                conds[n.nbranch] = NULL;
                if (kind != TOK_ELSE) {
                    char *src = arena_strndup(t->arena, c->text, c->len);
                    if (!(conds[n.nbranch] = expr_parse(t->arena, src, &c->pos, err)))
                        return -1;
                }
                memset(&bodies[n.nbranch], 0, sizeof(TList));
                (*i)++;
                TokKind st = TOK_TEXT;
                if (parse_list(t, s, lx, i, depth, &bodies[n.nbranch], &st, err))
                    return -1;
                n.nbranch++;
                if (st == TOK_ENDIF) {
                    (*i)++;
                    break;
                }
                if (st == TOK_TEXT) {
                    kvx_error_set(err, KVX_EINPUT, &if_pos, "#if is never closed (expected {{/if}})");
                    return -1;
                }
                if (kind == TOK_ELSE) {
                    kvx_error_set(err, KVX_EINPUT, &lx->toks[*i].pos,
                                  "#%s after #else (expected {{/if}})", st == TOK_ELSE ? "else" : "elif");
                    return -1;
                }
                kind = st;
            }
            n.conds = arena_alloc(t->arena, sizeof(Expr *) * (size_t)n.nbranch);
            n.bodies = arena_alloc(t->arena, sizeof(TList) * (size_t)n.nbranch);
            memcpy(n.conds, conds, sizeof(Expr *) * (size_t)n.nbranch);
            memcpy(n.bodies, bodies, sizeof(TList) * (size_t)n.nbranch);
            tl_push(t->arena, out, n);
            t->if_depth--;
            break;
        }
        case TOK_ELIF:
        case TOK_ELSE:
        case TOK_ENDIF:
            if (!stop) {
                kvx_error_set(err, KVX_EINPUT, &k->pos, "%s without #if",
                              k->kind == TOK_ENDIF ? "/if" : k->kind == TOK_ELSE ? "#else" : "#elif");
                return -1;
            }
            *stop = k->kind;
            return 0;
        }
    }
    return 0;
}

/* An include must resolve, after symbolic links, inside the spec's folder
 * tree or the top template's (docs/spec.md, Includes): a template is code
 * pasted into every variant, and /etc/passwd is not. */
static int include_allowed(const Template *t, const char *real)
{
    for (int i = 0; i < 2; i++) {
        size_t n = t->roots[i] ? strlen(t->roots[i]) : 0;
        if (n && !strncmp(real, t->roots[i], n) && (real[n] == '/' || real[n] == 0 ||
                                                   t->roots[i][n - 1] == '/'))
            return 1;
    }
    return 0;
}

static int load_file(Template *t, const Spec *s, const char *path, int depth, TList *out,
                     const SrcPos *from, KvxError *err)
{
    const SrcPos *at = from ? from : &(SrcPos){s->path, 0, 0};
    if (depth > PLAN_MAX_INCLUDE_DEPTH) {
        kvx_error_set(err, KVX_EINPUT, from, "includes nest deeper than %d (an include cycle?)",
                      PLAN_MAX_INCLUDE_DEPTH);
        return -1;
    }
    if (depth > 0) {
        char *real = realpath(path, NULL);
        int ok = real && include_allowed(t, real);
        if (!real)
            kvx_error_set(err, KVX_EINPUT, from, "#include '%s' not found", path);
        else if (!ok)
            kvx_error_set(err, KVX_EINPUT, from, "#include '%s' is outside the spec's and the"
                          " template's folders (expected a file under %s or %s)", path,
                          t->roots[0] ? t->roots[0] : "?", t->roots[1] ? t->roots[1] : "?");
        free(real);
        if (!ok)
            return -1;
    }
    size_t len = 0;
    char *text = file_read_max(path, PLAN_MAX_TEMPLATE_BYTES, &len);
    if (!text) {
        char why[64];
        kvx_error_set(err, KVX_EINPUT, at, "cannot read template '%s': %s", path,
                      file_read_why(errno, PLAN_MAX_TEMPLATE_BYTES, why, sizeof why));
        return -1;
    }
    /* Each include is read and kept again where it appears: a fan-out of 4
     * per level over 15 levels reached 3.6 GB before this cap. */
    t->bytes += len;
    if (t->bytes > PLAN_MAX_INCLUDED_BYTES) {
        kvx_error_set(err, KVX_EINPUT, at, "the template and its includes pass %u bytes in all"
                      " (an include fan-out?)", PLAN_MAX_INCLUDED_BYTES);
        free(text);
        return -1;
    }
    Lexer lx = {.arena = t->arena, .file = arena_strdup(t->arena, path),
                .src = arena_strdup(t->arena, text)};
    free(text);
    int i = 0, rc = lex(&lx, err);
    if (rc == 0)
        rc = parse_list(t, s, &lx, &i, depth, out, NULL, err);
    free(lx.toks);
    return rc;
}

/* Every name a template uses must be known to the spec, even in branches that no
 * point takes: a typo should not wait for the one point that reaches it. */
typedef struct NameCtx {
    const Spec *s;
    KvxError *err;
    int failed;
} NameCtx;

static void check_template_name(void *ctx, const Expr *id)
{
    NameCtx *nc = ctx;
    Value v;
    if (nc->failed || spec_axis_find(nc->s, id->name) >= 0 || spec_let_find(nc->s, id->name) >= 0 ||
        facts_lookup(&(DeviceFacts){0}, id->name, &v))
        return;
    for (int i = 0; i < nc->s->nsets; i++)
        if (strcmp(nc->s->sets[i].var, id->name) == 0)
            return;
    kvx_error_set(nc->err, KVX_EINPUT, &id->pos,
                  "unresolved placeholder name '%s' (expected an axis, set variable, let or device fact "
                  "of spec %s)", id->name, nc->s->path);
    nc->failed = 1;
}

/* Names first, then the values compared with axes (spec_check_axis_values). */
static void check_expr(const Expr *e, NameCtx *nc)
{
    expr_visit_idents(e, check_template_name, nc);
    if (!nc->failed && spec_check_axis_values(nc->s, e, nc->err))
        nc->failed = 1;
}

static int check_list(const TList *l, NameCtx *nc)
{
    for (int i = 0; i < l->n && !nc->failed; i++) {
        const TNode *n = &l->v[i];
        if (n->kind == TN_EXPR)
            check_expr(n->e, nc);
        else if (n->kind == TN_INCLUDE)
            check_list(n->inc, nc);
        else if (n->kind == TN_IF)
            for (int b = 0; b < n->nbranch && !nc->failed; b++) {
                if (n->conds[b])
                    check_expr(n->conds[b], nc);
                check_list(&n->bodies[b], nc);
            }
    }
    return nc->failed ? -1 : 0;
}

int template_load(const Spec *s, Template **out, KvxError *err)
{
    Template *t = xcalloc(1, sizeof *t);
    t->arena = arena_new();
    char *dirs[2] = {path_dir(s->path), path_dir(s->template_path)};
    for (int i = 0; i < 2; i++) {
        t->roots[i] = realpath(dirs[i], NULL);
        free(dirs[i]);
    }
    NameCtx nc = {s, err, 0};
    if (load_file(t, s, s->template_path, 0, &t->root, NULL, err) || check_list(&t->root, &nc)) {
        template_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void template_free(Template *t)
{
    if (!t)
        return;
    arena_free(t->arena);
    free(t->roots[0]);
    free(t->roots[1]);
    free(t);
}

static int emit_list(const TList *l, PointEnv *pe, StrBuf *out, KvxError *err)
{
    for (int i = 0; i < l->n; i++) {
        const TNode *n = &l->v[i];
        switch (n->kind) {
        case TN_TEXT:
            sb_put(out, n->text, n->len);
            break;
        case TN_EXPR: {
            Value v;
            if (point_eval(pe, n->e, &v, err))
                return -1;
            sb_puts(out, val_text(pe->arena, v));
            break;
        }
        case TN_INCLUDE:
            if (emit_list(n->inc, pe, out, err))
                return -1;
            break;
        case TN_IF:
            for (int b = 0; b < n->nbranch; b++) {
                if (n->conds[b]) {
                    Value c;
                    if (point_eval(pe, n->conds[b], &c, err))
                        return -1;
                    if (c.kind != VAL_BOOL) {
                        kvx_error_set(err, KVX_EINPUT, &n->conds[b]->pos,
                                      "#if condition is %s (expected a boolean)", val_text(pe->arena, c));
                        return -1;
                    }
                    if (!c.i)
                        continue;
                }
                if (emit_list(&n->bodies[b], pe, out, err))
                    return -1;
                break;
            }
            break;
        }
    }
    return 0;
}

int template_emit(const Template *t, PointEnv *pe, StrBuf *out, KvxError *err)
{
    pe->used = 0;
    pe->used_facts = 0;
    return emit_list(&t->root, pe, out, err);
}

/* ---- the plan --------------------------------------------------------------------- */

const int *plan_point(const Plan *p, int i) { return p->vals + (size_t)i * (size_t)p->spec->naxes; }

static void value_literal(StrBuf *b, Value v)
{
    if (v.kind == VAL_STR) {
        sb_putc(b, '"');
        for (const char *c = v.s; *c; c++) {
            if (*c == '"' || *c == '\\')
                sb_putc(b, '\\');
            sb_putc(b, *c);
        }
        sb_putc(b, '"');
    } else {
        Arena *a = arena_new();
        sb_puts(b, val_text(a, v));
        arena_free(a);
    }
}

char *plan_point_label(const Plan *p, int i, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, i);
    StrBuf b;
    sb_init(&b);
    for (int a = 0; a < s->naxes; a++)
        if (mask & (1ULL << a))
            sb_printf(&b, "%s%s=%s", b.len ? " " : "", s->axes[a].name, s->axes[a].vals[v[a]].text);
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
    for (size_t k = 0; k < b.len; k++) {
        char c = b.p[k];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            b.p[k] = '_';
    }
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

/* Enumerate the full product, in declaration order with the last unit fastest;
 * a zip group is one unit standing where its first axis stands. */
static int enumerate(Plan *p, KvxError *err)
{
    Spec *s = p->spec;
    int unit_of[SPEC_MAX_AXES], nunits = 0, unit_size[SPEC_MAX_AXES];
    for (int a = 0; a < s->naxes; a++) {
        int u = -1;
        if (s->axes[a].zip >= 0)
            for (int b = 0; b < a; b++)
                if (s->axes[b].zip == s->axes[a].zip)
                    u = unit_of[b];
        if (u < 0) {
            u = nunits++;
            unit_size[u] = s->axes[a].nvals;
        }
        unit_of[a] = u;
    }
    double full = 1;
    for (int u = 0; u < nunits; u++)
        full *= unit_size[u];
    if (full > PLAN_MAX_POINTS) {
        kvx_error_set(err, KVX_EINPUT, &s->axes[0].pos, "the grid has %.0f points (at most %d)", full,
                      PLAN_MAX_POINTS);
        return -1;
    }
    p->nfull = (int)full;
    int idx[SPEC_MAX_AXES] = {0};
    int vals[SPEC_MAX_AXES];
    int cap = 64;
    p->vals = xmalloc(sizeof(int) * (size_t)cap * (size_t)s->naxes);
    Arena *scratch = arena_new();
    int rc = 0;
    for (int k = 0; k < p->nfull; k++) {
        for (int a = 0; a < s->naxes; a++)
            vals[a] = idx[unit_of[a]];
        PointEnv pe;
        point_env_init(&pe, s, vals, &p->facts, scratch);
        int keep = 1;
        for (int w = 0; w < s->nwhere && keep; w++) {
            Value v;
            if (point_eval(&pe, s->where[w], &v, err)) {
                rc = -1;
                goto done;
            }
            if (v.kind != VAL_BOOL) {
                kvx_error_set(err, KVX_EINPUT, &s->where[w]->pos, "where: constraint is %s (expected "
                              "a boolean)", val_text(scratch, v));
                rc = -1;
                goto done;
            }
            keep = (int)v.i;
        }
        if (keep) {
            if (p->npoints == cap) {
                cap *= 2;
                p->vals = xrealloc(p->vals, sizeof(int) * (size_t)cap * (size_t)s->naxes);
            }
            memcpy(p->vals + (size_t)p->npoints * (size_t)s->naxes, vals, sizeof(int) * (size_t)s->naxes);
            p->npoints++;
        }
        for (int u = nunits - 1; u >= 0; u--) {
            if (++idx[u] < unit_size[u])
                break;
            idx[u] = 0;
        }
        if ((k & 1023) == 1023) {
            arena_free(scratch);
            scratch = arena_new();
        }
    }
    if (p->npoints == 0) {
        SrcPos wp = s->nwhere ? s->where[0]->pos : s->axes[0].pos;
        kvx_error_set(err, KVX_EINPUT, &wp, "where: leaves no point of the %d in the grid", p->nfull);
        rc = -1;
    }
done:
    arena_free(scratch);
    return rc;
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

int plan_build(Spec *s, const DeviceFacts *f, Plan *p, KvxError *err)
{
    memset(p, 0, sizeof *p);
    HashIdx by_hash = {0}, by_file = {0};
    Memo memo = {0};
    p->spec = s;
    p->facts = *f;
    Template *t = NULL;
    Arena *scratch = NULL;
    StrBuf body, text;
    sb_init(&body);
    sb_init(&text);
    if (enumerate(p, err) || template_load(s, &t, err))
        goto fail;
    const char *spec_base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
    const char *template_rel = s->template_path;
    size_t dl = strlen(s->dir);
    if (strcmp(s->dir, ".") != 0 && strncmp(template_rel, s->dir, dl) == 0 && template_rel[dl] == '/')
        template_rel += dl + 1;
    p->point_src = xmalloc(sizeof(int) * (size_t)p->npoints);
    int cap = 16;
    p->srcs = xcalloc((size_t)cap, sizeof(Source));
    scratch = arena_new();
    for (int i = 0; i < p->npoints; i++) {
        int known = memo_find(&memo, p, i);
        if (known >= 0) {
            p->srcs[known].npoints++;
            p->point_src[i] = known;
            continue;
        }
        PointEnv pe;
        point_env_init(&pe, s, plan_point(p, i), &p->facts, scratch);
        sb_reset(&body);
        if (template_emit(t, &pe, &body, err))
            goto fail;
        if (body.len > PLAN_MAX_SOURCE_BYTES) {
            char *what = plan_point_label(p, i, ~0ull);
            kvx_error_set(err, KVX_EINPUT, &(SrcPos){s->template_path, 0, 0},
                          "the source of %s is %zu bytes (expected at most %u)", what, body.len,
                          PLAN_MAX_SOURCE_BYTES);
            free(what);
            goto fail;
        }
        uint64_t mask = pe.used;
        sb_reset(&text);
        char *label = plan_point_label(p, i, mask);
        char *filter = point_filter(p, i, mask);
        /* The header names the spec by its file name and the template as the
         * spec writes it, not by the path kvx was given: the same spec reached by
         * another path must give the same source, hash, cache entry and keys. */
        sb_printf(&text, "// Generated by kvx from %s (template %s): edit those, not this file.\n",
                  spec_base, template_rel);
        sb_printf(&text, "// Variant: %s\n", mask ? label : "(no code axes)");
        sb_printf(&text, "// Reproduce: kvx gen %s", spec_base);
        if (mask) {
            sb_puts(&text, " --where ");
            quote_shell(&text, filter);
        }
        if (pe.used_facts)
            sb_printf(&text, " --arch %s", p->facts.arch);
        sb_puts(&text, " --out DIR\n\n");
        sb_put(&text, body.p ? body.p : "", body.len);
        char hash[65];
        sha256_hex(text.p, text.len, hash);
        int src = hidx_add(&by_hash, hash_bytes(hash, 64), p->nsrcs, same_hash,
                           &(NewSource){p->srcs, hash});
        if (src < 0) {
            if (p->nsrcs == cap) {
                p->srcs = xrealloc(p->srcs, sizeof(Source) * (size_t)(cap *= 2));
                memset(p->srcs + p->nsrcs, 0, sizeof(Source) * (size_t)(cap - p->nsrcs));
            }
            Source *so = &p->srcs[src = p->nsrcs++];
            memcpy(so->hash, hash, 65);
            so->text = xstrdup(sb_str(&text));
            so->file = source_file_name(p, i, mask);
            so->label = label;
            label = NULL;
            so->code_axes = mask;
            so->first_point = i;
            if (hidx_add(&by_file, hash_bytes(so->file, strlen(so->file)), src, same_file,
                         &(NewSource){p->srcs, so->file}) >= 0) {
                /* Two values sanitised to one name: keep both files apart. */
                char *dot = strrchr(so->file, '.');
                *dot = 0;
                char *renamed = xmalloc(strlen(so->file) + 16);
                sprintf(renamed, "%s__%.8s.cu", so->file, hash);
                free(so->file);
                so->file = renamed;
            }
        }
        free(label);
        free(filter);
        p->srcs[src].npoints++;
        p->point_src[i] = src;
        p->code_axes |= mask;
        memo_add(&memo, p, i, mask);
        if ((i & 255) == 255) {
            arena_free(scratch);
            scratch = arena_new();
        }
    }
    arena_free(scratch);
    template_free(t);
    sb_free(&body);
    sb_free(&text);
    hidx_free(&by_hash);
    hidx_free(&by_file);
    memo_free(&memo);
    return 0;
fail:
    arena_free(scratch);
    template_free(t);
    sb_free(&body);
    sb_free(&text);
    hidx_free(&by_hash);
    hidx_free(&by_file);
    memo_free(&memo);
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
    point_env_init(&pe, p->spec, plan_point(p, i), &p->facts, a);
    Value v;
    int rc = point_eval(&pe, filter, &v, err);
    if (rc == 0 && v.kind != VAL_BOOL) {
        kvx_error_set(err, KVX_EINPUT, &filter->pos, "--where is %s (expected a boolean)",
                      val_text(a, v));
        rc = -1;
    }
    int match = rc == 0 ? (int)v.i : -1;
    arena_free(a);
    return match;
}
