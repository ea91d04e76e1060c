/* template: the template engine of the plan stage.  A template (and every
 * piece it includes) is lexed and parsed once per spec into a tree of text,
 * placeholders, #if chains and includes; every name in it is checked against
 * the spec, and every comparison of an axis against the axis's values; each
 * point then emits its source from the tree (template_emit), recording the
 * axes it consulted.  Includes resolve inside the spec's or the template's
 * folder, files are read capped in size, #if nests at most
 * PLAN_MAX_IF_DEPTH deep.  The interface is template.h. */
#include "template.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- templates ----------------------------------------------------------------- */

typedef enum { TN_TEXT, TN_EXPR, TN_IF, TN_INCLUDE } TNodeKind;

typedef struct TNode {
    TNodeKind kind;
    const char *text;           /* TN_TEXT */
    size_t len;
    SrcPos pos;                 /* TN_TEXT: where text starts in its file */
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
        lx->toks = mem_realloc(lx->toks, sizeof(Tok) * (size_t)lx->cap);
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

/* The "}}" that closes the placeholder opened at open: quotes are skipped
 * (a string may hold "}}"), except in a comment, which is prose (an
 * apostrophe in it is not a string).  NULL with err when there is none. */
static const char *lex_close(Lexer *lx, const char *open, KvxError *err)
{
    const char *q = open + 2;
    while (*q == ' ' || *q == '\t')
        q++;
    int comment = *q == '!';
    char quote = 0;
    for (; *q; q++) {
        if (comment) {
            if (q[0] == '}' && q[1] == '}')
                return q;
        } else if (quote) {
            if (*q == '\\' && q[1])
                q++;
            else if (*q == quote)
                quote = 0;
        } else if (*q == '"' || *q == '\'') {
            quote = *q;
        } else if (q[0] == '}' && q[1] == '}') {
            return q;
        }
    }
    SrcPos sp = pos_at(lx, open);
    kvx_error_set(err, KVX_EINPUT, &sp, "unclosed '{{' (expected '}}')");
    return NULL;
}

/* What the placeholder [in, in_end) (trimmed) is: its kind into t, and
 * *in past the directive's keyword.  0, or -1 with err for an unknown
 * directive or an empty placeholder. */
static int lex_kind(const char **in, const char *in_end, Tok *t, KvxError *err)
{
    static const struct { const char *word; size_t len; TokKind kind; int arg; } words[] = {
        {"#if", 3, TOK_IF, 1}, {"#elif", 5, TOK_ELIF, 1}, {"#else", 5, TOK_ELSE, 0},
        {"/if", 3, TOK_ENDIF, 0}, {"#include", 8, TOK_INCLUDE, 2},
    };
    const char *p = *in;
    size_t n = (size_t)(in_end - p);
    /* arg 1: a word of its own (#if x, #elif x); 0: the whole placeholder;
     * 2: a prefix (#include"x" is accepted). */
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (n >= words[w].len && !strncmp(p, words[w].word, words[w].len) &&
            (words[w].arg == 2 || n == words[w].len || (words[w].arg == 1 && p[words[w].len] == ' '))) {
            t->kind = words[w].kind;
            *in = p + words[w].len;
            return 0;
        }
    if (n >= 1 && p[0] == '!') {
        t->kind = TOK_TEXT; /* a comment: dropped, but it may take its line */
        *in = in_end;
    } else if (n >= 1 && (p[0] == '#' || p[0] == '/')) {
        kvx_error_set(err, KVX_EINPUT, &t->pos, "unknown directive '%.*s' (expected #if, #elif, "
                      "#else, /if, #include or !comment)", (int)n, p);
        return -1;
    } else if (n == 0) {
        kvx_error_set(err, KVX_EINPUT, &t->pos, "empty placeholder '{{}}' (expected an expression)");
        return -1;
    } else {
        t->kind = TOK_EXPR;
    }
    return 0;
}

/* The token of the placeholder between open and close ("}}"): its kind, and
 * its text (expression, condition or include path) with its position. */
static int lex_token(Lexer *lx, const char *open, const char *close, Tok *t, KvxError *err)
{
    const char *in = open + 2, *in_end = close;
    while (in < in_end && (*in == ' ' || *in == '\t'))
        in++;
    while (in_end > in && (in_end[-1] == ' ' || in_end[-1] == '\t'))
        in_end--;
    memset(t, 0, sizeof *t);
    t->pos = pos_at(lx, in);
    if (lex_kind(&in, in_end, t, err))
        return -1;
    while (in < in_end && *in == ' ')
        in++;
    if (t->kind != TOK_TEXT)
        t->pos = pos_at(lx, in);
    t->text = in;
    t->len = (size_t)(in_end - in);
    if ((t->kind == TOK_IF || t->kind == TOK_ELIF) && t->len == 0) {
        kvx_error_set(err, KVX_EINPUT, &t->pos, "#if without a condition (expected an expression)");
        return -1;
    }
    if (t->kind == TOK_INCLUDE) {
        if (t->len < 2 || t->text[0] != '"' || t->text[t->len - 1] != '"') {
            kvx_error_set(err, KVX_EINPUT, &t->pos, "#include needs a quoted path (expected "
                          "{{#include \"pieces/name.cuh\"}})");
            return -1;
        }
        t->text++;
        t->len -= 2;
    }
    return 0;
}

/* Split a template into text and directive tokens.  A directive (not a value
 * placeholder) alone on its line takes the whole line with it: whitespace
 * from the line start to the directive and from the directive to the
 * newline. */
static int lex(Lexer *lx, KvxError *err)
{
    const char *p = lx->src, *text = p;
    while ((p = find_open(p)) != NULL) {
        SrcPos tpos = pos_at(lx, text);  /* before the directive's: pos_at goes forward */
        const char *open = p, *q = lex_close(lx, open, err);
        if (!q)
            return -1;
        const char *close = q + 2;
        Tok t;
        if (lex_token(lx, open, q, &t, err))
            return -1;
        int directive = t.kind != TOK_EXPR;
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
            tok_push(lx, (Tok){TOK_TEXT, text, (size_t)(text_end - text), tpos});
        if (t.kind != TOK_TEXT)
            tok_push(lx, t);
        p = standalone ? (*le == '\n' ? le + 1 : le) : close;
        text = p;
    }
    size_t rest = strlen(text);
    if (rest)
        tok_push(lx, (Tok){TOK_TEXT, text, rest, pos_at(lx, text)});
    return 0;
}

static int load_file(Template *t, const Spec *s, const char *path, int depth, TList *out,
                     const SrcPos *from, KvxError *err);

static int parse_list(Template *t, const Spec *s, Lexer *lx, int *i, int depth, TList *out,
                      TokKind *stop, KvxError *err);

/* {{#include "rel"}}: the file, relative to the file that includes it,
 * loaded (lexed, parsed) into a node of its own. */
static int parse_include(Template *t, const Spec *s, Lexer *lx, const Tok *k, int depth,
                         TList *out, KvxError *err)
{
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
    return 0;
}

/* The branches of one #if from token *i (the #if) through its /if: each
 * branch's condition (NULL for #else) and body, into n's arrays (in t's
 * arena). */
static int parse_if_branches(Template *t, const Spec *s, Lexer *lx, int *i, int depth, TNode *n,
                             KvxError *err)
{
    enum { MAX_BRANCH = 64 };
    Expr *conds[MAX_BRANCH];
    TList bodies[MAX_BRANCH];
    const Tok *k = &lx->toks[*i];
    SrcPos if_pos = k->pos;
    TokKind kind = TOK_IF;
    for (;;) {
        if (n->nbranch == MAX_BRANCH) {
            kvx_error_set(err, KVX_EINPUT, &k->pos, "too many #elif branches (at most 63)");
            return -1;
        }
        Tok *c = &lx->toks[*i];
        conds[n->nbranch] = NULL;
        if (kind != TOK_ELSE) {
            char *src = arena_strndup(t->arena, c->text, c->len);
            if (!(conds[n->nbranch] = expr_parse(t->arena, src, &c->pos, err)))
                return -1;
        }
        memset(&bodies[n->nbranch], 0, sizeof(TList));
        (*i)++;
        TokKind st = TOK_TEXT;
        if (parse_list(t, s, lx, i, depth, &bodies[n->nbranch], &st, err))
            return -1;
        n->nbranch++;
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
    n->conds = arena_alloc(t->arena, sizeof(Expr *) * (size_t)n->nbranch);
    n->bodies = arena_alloc(t->arena, sizeof(TList) * (size_t)n->nbranch);
    memcpy(n->conds, conds, sizeof(Expr *) * (size_t)n->nbranch);
    memcpy(n->bodies, bodies, sizeof(TList) * (size_t)n->nbranch);
    return 0;
}

/* An #if chain at token *i into a TN_IF node of out.  Parsing, checking and
 * emitting recurse once per level: 4,700 nested #if overflowed the stack. */
static int parse_if(Template *t, const Spec *s, Lexer *lx, int *i, int depth, TList *out,
                    KvxError *err)
{
    if (++t->if_depth > PLAN_MAX_IF_DEPTH) {
        kvx_error_set(err, KVX_EINPUT, &lx->toks[*i].pos, "#if nests deeper than %d",
                      PLAN_MAX_IF_DEPTH);
        return -1;
    }
    TNode n = {.kind = TN_IF};
    if (parse_if_branches(t, s, lx, i, depth, &n, err))
        return -1;
    tl_push(t->arena, out, n);
    t->if_depth--;
    return 0;
}

/* Parse tokens [*i, ntoks) into list until an ELIF/ELSE/ENDIF (returned in
 * *stop; one with stop NULL, at the top, is an error). */
static int parse_list(Template *t, const Spec *s, Lexer *lx, int *i, int depth, TList *out,
                      TokKind *stop, KvxError *err)
{
    while (*i < lx->ntoks) {
        Tok *k = &lx->toks[*i];
        switch (k->kind) {
        case TOK_TEXT:
            tl_push(t->arena, out, (TNode){.kind = TN_TEXT, .text = k->text, .len = k->len, .pos = k->pos});
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
        case TOK_INCLUDE:
            if (parse_include(t, s, lx, k, depth, out, err))
                return -1;
            (*i)++;
            break;
        case TOK_IF:
            if (parse_if(t, s, lx, i, depth, out, err))
                return -1;
            break;
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

/* The lexer reads text up to a NUL: one in a template once hid the rest of
 * the file, with its unknown names and unclosed #if, from every check. */
static int refuse_nul(Lexer *lx, size_t len, KvxError *err)
{
    const char *nul = memchr(lx->src, 0, len);
    if (!nul)
        return 0;
    SrcPos sp = pos_at(lx, nul);
    kvx_error_set(err, KVX_EINPUT, &sp, "a NUL byte in the template (expected text)");
    return -1;
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
                .src = arena_strndup(t->arena, text, len)};
    free(text);
    if (refuse_nul(&lx, len, err))
        return -1;
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
    Template *t = mem_calloc(1, sizeof *t);
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

/* Where each emitted line came from, as template_emit's origins: lines
 * counts the newlines emitted so far, mapped the lines given an origin. */
typedef struct LineMap {
    StrBuf *origins;            /* NULL: not asked for */
    int lines, mapped;
} LineMap;

/* Text from pos (or a placeholder at pos) goes out: the line it starts on,
 * when no earlier node gave that line its origin, and each line that starts
 * inside it take their template lines.  A line that text ends just after is
 * left to the node that starts it. */
static void map_text(LineMap *m, SrcPos pos, const char *text, size_t len)
{
    if (!m->origins)
        return;
    if (m->mapped == m->lines && len) {
        sb_printf(m->origins, "%s:%d\n", pos.file ? pos.file : "", pos.line);
        m->mapped++;
    }
    for (size_t k = 0; k < len; k++) {
        if (text[k] != '\n')
            continue;
        m->lines++;
        if (k + 1 < len) {
            sb_printf(m->origins, "%s:%d\n", pos.file ? pos.file : "", ++pos.line);
            m->mapped++;
        } else {
            pos.line++;
        }
    }
}

static int emit_list(const TList *l, PointEnv *pe, StrBuf *out, LineMap *m, KvxError *err);

static int emit_if(const TNode *n, PointEnv *pe, StrBuf *out, LineMap *m, KvxError *err)
{
    for (int b = 0; b < n->nbranch; b++) {
        if (n->conds[b]) {
            Value c;
            if (plan_point_eval(pe, n->conds[b], &c, err))
                return -1;
            if (c.kind != VAL_BOOL) {
                kvx_error_set(err, KVX_EINPUT, &n->conds[b]->pos,
                              "#if condition is %s (expected a boolean)", val_text(pe->arena, c));
                return -1;
            }
            if (!c.i)
                continue;
        }
        return emit_list(&n->bodies[b], pe, out, m, err);
    }
    return 0;
}

static int emit_list(const TList *l, PointEnv *pe, StrBuf *out, LineMap *m, KvxError *err)
{
    for (int i = 0; i < l->n; i++) {
        const TNode *n = &l->v[i];
        switch (n->kind) {
        case TN_TEXT:
            sb_put(out, n->text, n->len);
            map_text(m, n->pos, n->text, n->len);
            break;
        case TN_EXPR: {
            Value v;
            if (plan_point_eval(pe, n->e, &v, err))
                return -1;
            const char *t = val_text(pe->arena, v);
            sb_puts(out, t);
            map_text(m, n->e->pos, t, strlen(t));
            break;
        }
        case TN_INCLUDE:
            if (emit_list(n->inc, pe, out, m, err))
                return -1;
            break;
        case TN_IF:
            if (emit_if(n, pe, out, m, err))
                return -1;
            break;
        }
    }
    return 0;
}

int template_emit(const Template *t, PointEnv *pe, StrBuf *out, StrBuf *origins, KvxError *err)
{
    pe->used = 0;
    pe->used_facts = 0;
    LineMap m = {origins, 0, 0};
    return emit_list(&t->root, pe, out, &m, err);
}
