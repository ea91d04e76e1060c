/* jit_group: several variants compiled as one NVRTC program, a unity build.
 *
 * A compile pays a fixed cost besides its own code: NVRTC's built-in header
 * and set-up (about a third of a header-free kernel's 80 ms here) and, above
 * all, one nvdisasm start for its SASS facts (0.3 to 0.5 s for any sm_90
 * CUBIN, a one-line kernel's too: docs/design.md).  A group pays both once
 * for all its members.
 *
 * The program: each member's source is an NVRTC header of its own name,
 * included inside `namespace kvx_gI { ... }` between `#define K K__kvxI` and
 * `#undef K` for each of its entry points K; the members' #include lines
 * come first, outside every namespace, so that the headers are parsed once
 * and the members' own #include lines find them guarded.  So the member's
 * lines keep their file name and numbers in NVRTC's messages and in the
 * line table, its types and functions cannot meet another member's, and its
 * entry points are K__kvxI in the program's one CUBIN.  The SASS of each
 * function is the same instructions as a compile of the member alone
 * (checked on sgemm variants: only the branch labels' numbers differ).
 *
 * What each member gets back is what a compile of its own gives, taken from
 * the program's (jit_group_compile): its log (its messages, the ptxas lines of
 * its functions, the common ones), its PTX (the header and the items its
 * entry points reach, jit_group_ptx), its ptxas figures (from that log), its
 * SASS facts (the parts of one disassembly its PTX names, jit_group_sass),
 * every K__kvxI written back as K; its CUBIN is the program's, shared
 * (JitBlob), and job->symbol says what its entry points are called there.
 *
 * Only sources that a program can hold unchanged are grouped
 * (jit_group_entries): extern "C" entry points, no preprocessor directive
 * but #include and #pragma (a macro would reach the next member), no
 * __device__, __constant__ or __managed__ variable (its symbol must keep its
 * name: cuModuleGetGlobal, the fake driver's markers).  The others compile
 * alone, as before.
 *
 * A program that fails is not a verdict on its members: the members its
 * errors name compile alone (their own rows, errors and logs, as before),
 * the others as a program again; a failure that names no member halves the
 * program until it does (jit_group_compile). */
#define _GNU_SOURCE     /* memmem */
#include "jit_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

#define GROUP_NAME "kvx_group.cu"

/* ---- the members' sources: may one be grouped, and its entry points ---------- */

typedef enum { TOK_END, TOK_IDENT, TOK_STRING, TOK_PUNCT, TOK_OTHER, TOK_BAD } TokKind;

typedef struct Lex {
    const char *p;
    int bol;                    /* at the start of a line: a '#' starts a directive */
    const char *why;            /* TOK_BAD: what the source has that a program cannot take */
    int directives;             /* directives other than #include seen so far */
    StrBuf *macros;             /* the names it #defines, one a line; NULL: not kept */
} Lex;

typedef struct Tok {
    TokKind kind;
    const char *s;
    size_t n;
} Tok;

static int word_is(const char *p, size_t n, const char *w)
{
    return n == strlen(w) && !memcmp(p, w, n);
}

/* The directive at p: its word read and judged.  #include must come before
 * every other directive (the program includes the headers first, for all
 * its members, so a macro or a condition before one would change it); the
 * names a #define gives are kept, for the program to #undef them after the
 * member; #line would move the member's messages elsewhere.  Past its line
 * (continued lines included), or NULL when the source cannot be a member. */
static const char *directive(Lex *lx, const char *p)
{
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *w = p;
    while (isalpha((unsigned char)*p))
        p++;
    size_t n = (size_t)(p - w);
    static const char *const OTHER[] = {"pragma", "define", "undef", "if", "ifdef", "ifndef", "elif",
                                        "else", "endif", "error", "warning"};
    int other = 0;
    for (size_t i = 0; i < sizeof OTHER / sizeof *OTHER; i++)
        other |= word_is(w, n, OTHER[i]);
    if (word_is(w, n, "include") && lx->directives)
        lx->why = "an #include after another directive";
    else if (!word_is(w, n, "include") && !other && n)
        lx->why = "a #line or unknown directive";
    if (word_is(w, n, "define") && lx->macros) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *m = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        sb_put(lx->macros, m, (size_t)(p - m));
        sb_putc(lx->macros, '\n');
    }
    lx->directives += other;
    for (; *p && !(*p == '\n' && p[-1] != '\\'); p++)
        ;
    return lx->why ? NULL : p;
}

/* Past a comment, string or character literal starting at p (q: its quote). */
static const char *skip_quoted(const char *p, char q)
{
    for (p++; *p && *p != q; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : p;
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Spaces, comments and allowed directives skipped; 0, or -1 at a directive
 * that is not allowed. */
static int skip_space(Lex *lx)
{
    const char *p = lx->p;
    for (;;) {
        if (*p == '\n') {
            lx->bol = 1, p++;
        } else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            p++;
        } else if (*p == '#' && lx->bol) {
            if (!(p = directive(lx, p)))
                return -1;
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else {
            break;
        }
    }
    lx->p = p;
    return 0;
}

static Tok lex_next(Lex *lx)
{
    Tok t = {TOK_END, lx->p, 0};
    if (skip_space(lx) != 0)
        return (Tok){TOK_BAD, lx->p, 0};
    const char *p = lx->p;
    t.s = p;
    lx->bol = 0;
    if (!*p)
        return t;
    if (ident_char(*p) && !isdigit((unsigned char)*p)) {
        while (ident_char(*p))
            p++;
        t.kind = p[0] == '"' && (p[-1] == 'R') ? TOK_BAD : TOK_IDENT;
        if (t.kind == TOK_BAD)
            lx->why = "a raw string literal";
    } else if (isdigit((unsigned char)*p)) {
        while (ident_char(*p) || *p == '.' || *p == '\'' ||
               ((*p == '+' || *p == '-') && strchr("eEpP", p[-1])))
            p++;
        t.kind = TOK_OTHER;
    } else if (*p == '"' || *p == '\'') {
        p = skip_quoted(p, *p);
        t.kind = TOK_STRING;
    } else {
        p++;
        t.kind = TOK_PUNCT;
    }
    t.n = (size_t)(p - t.s);
    lx->p = p;
    return t;
}

static int tok_is(Tok t, const char *s)
{
    return t.n == strlen(s) && !memcmp(t.s, s, t.n);
}

/* Attributes written as calls, which come before a declaration's name. */
static int is_attribute(Tok t)
{
    static const char *const ATTRS[] = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__",
                                        "__align__", "__attribute__", "__declspec", "alignas"};
    for (size_t i = 0; i < sizeof ATTRS / sizeof *ATTRS; i++)
        if (tok_is(t, ATTRS[i]))
            return 1;
    return 0;
}

/* Past the balanced parentheses that start at the '(' just read. */
static int skip_parens(Lex *lx)
{
    for (int depth = 1; depth > 0;) {
        Tok t = lex_next(lx);
        if (t.kind == TOK_END || t.kind == TOK_BAD)
            return -1;
        if (t.kind == TOK_PUNCT)
            depth += t.s[0] == '(' ? 1 : t.s[0] == ')' ? -1 : 0;
    }
    return 0;
}

/* After __global__ or __device__: the declared name (the identifier before
 * the first '(' that opens no attribute) into *name, and whether the
 * declaration is a function.  -1 when it ends first (';', '=', '[', '{'):
 * a variable. */
static int declared(Lex lx, Tok *name)
{
    Tok last = {TOK_END, NULL, 0};
    for (;;) {
        Tok t = lex_next(&lx);
        if (t.kind == TOK_IDENT) {
            last = t;
            continue;
        }
        if (t.kind != TOK_PUNCT)
            return -1;
        if (t.s[0] == '(' && last.kind == TOK_IDENT && is_attribute(last)) {
            if (skip_parens(&lx) != 0)
                return -1;
            last.kind = TOK_END;
            continue;
        }
        if (t.s[0] == '(' && last.kind == TOK_IDENT) {
            *name = last;
            return 0;
        }
        if (strchr(";=[{,)", t.s[0]))
            return -1;
    }
}

/* What scanning the source keeps: where extern "C" holds, and the names. */
typedef struct Entries {
    char (*names)[JIT_NAME_MAX];
    int max, n;
    int c_decl;                 /* the declaration under way is extern "C" */
    int depth;
    unsigned long long c_blocks;        /* bit d: the brace at depth d opened extern "C" { */
    int c_pending;              /* extern "C" just read: a '{' next opens a block */
} Entries;

static int in_c(const Entries *e)
{
    for (int d = 0; d <= e->depth && d < 64; d++)
        if (e->c_blocks >> d & 1)
            return 1;
    return e->c_decl;
}

static int add_entry(Entries *e, Tok name, Lex *lx)
{
    if (!in_c(e)) {
        lx->why = "an entry point without extern \"C\" (its name would change in a namespace)";
        return -1;
    }
    if (e->n == e->max || name.n >= JIT_NAME_MAX) {
        lx->why = "more entry points than a group member may have";
        return -1;
    }
    memcpy(e->names[e->n], name.s, name.n);
    e->names[e->n++][name.n] = 0;
    return 0;
}

/* One token's part in the scan: 0 to go on, -1 with lx->why to stop. */
static int scan_token(Entries *e, Lex *lx, Tok t, Tok prev)
{
    if (t.kind == TOK_STRING && tok_is(prev, "extern") && tok_is(t, "\"C\"")) {
        e->c_pending = e->c_decl = 1;
        return 0;
    }
    if (t.kind == TOK_PUNCT && t.s[0] == '{') {
        e->depth++;
        if (e->c_pending && e->depth < 64)
            e->c_blocks |= 1ull << e->depth;
        e->c_pending = e->c_decl = 0;
    } else if (t.kind == TOK_PUNCT && t.s[0] == '}') {
        if (e->depth < 64)
            e->c_blocks &= ~(1ull << e->depth);
        e->depth -= e->depth > 0;
        e->c_decl = 0;
    } else if (t.kind == TOK_PUNCT && t.s[0] == ';') {
        e->c_decl = 0;
    }
    if (t.kind != TOK_STRING)
        e->c_pending = 0;
    if (t.kind != TOK_IDENT)
        return 0;
    Tok name;
    if (tok_is(t, "__constant__") || tok_is(t, "__managed__") ||
        (tok_is(t, "__device__") && declared(*lx, &name) != 0)) {
        lx->why = "a __device__, __constant__ or __managed__ variable (its symbol keeps its name alone)";
        return -1;
    }
    if (!tok_is(t, "__global__"))
        return 0;
    if (declared(*lx, &name) != 0) {
        lx->why = "a __global__ declaration kvx cannot read";
        return -1;
    }
    return add_entry(e, name, lx);
}

int jit_group_entries(const char *source, char (*names)[JIT_NAME_MAX], int max, StrBuf *macros,
                      const char **why)
{
    Lex lx = {source ? source : "", 1, NULL, 0, macros};
    Entries e = {.names = names, .max = max};
    Tok prev = {TOK_END, NULL, 0};
    *why = NULL;
    if (source && (strstr(source, "__kvx") || strstr(source, "kvx_g"))) {
        *why = "names of kvx's grouped programs (__kvx, kvx_g)";
        return -1;
    }
    for (;;) {
        Tok t = lex_next(&lx);
        if (t.kind == TOK_BAD || (t.kind != TOK_END && scan_token(&e, &lx, t, prev) != 0)) {
            *why = lx.why ? lx.why : "a source kvx cannot read";
            return -1;
        }
        if (t.kind == TOK_END)
            break;
        prev = t;
    }
    if (e.n == 0)
        *why = "no entry point";
    return e.n > 0 ? e.n : -1;
}

/* ---- the program ---------------------------------------------------------------- */

/* The #include lines of the members, each once, in the order first met. */
static void hoisted_includes(const GroupMember *m, int n, StrBuf *out)
{
    size_t start = out->len;
    for (int i = 0; i < n; i++)
        for (const char *p = m[i].job->source; p && *p;) {
            size_t len = strcspn(p, "\n");
            const char *q = p + strspn(p, " \t");
            if (*q == '#' && !strncmp(q + 1 + strspn(q + 1, " \t"), "include", 7)) {
                int seen = 0;   /* a line already there, whole */
                for (const char *o = out->p ? out->p + start : ""; !seen && (o = memmem(o, strlen(o), p, len));
                     o += len)
                    seen = (o == out->p + start || o[-1] == '\n') && o[len] == '\n';
                if (!seen) {
                    sb_put(out, p, len);
                    sb_putc(out, '\n');
                }
            }
            p += len + (p[len] == '\n');
        }
}

char *jit_group_program(const GroupMember *m, int n)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "/* kvx: %d variants in one program (compile/jit_group.c) */\n", n);
    hoisted_includes(m, n, &b);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < m[i].nentries; k++)
            sb_printf(&b, "#define %s %s" JIT_GROUP_SUFFIX "%d\n", m[i].entries[k], m[i].entries[k], i);
        sb_printf(&b, "namespace " JIT_GROUP_NS "%d {\n#include \"%s\"\n}\n", i, jit_job_name(m[i].job));
        for (int k = 0; k < m[i].nentries; k++)
            sb_printf(&b, "#undef %s\n", m[i].entries[k]);
        for (const char *q = m[i].macros; q && *q; q += strcspn(q, "\n") + 1)
            sb_printf(&b, "#undef %.*s\n", (int)strcspn(q, "\n"), q);
    }
    return sb_take(&b);
}

/* ---- which member a name or a message is --------------------------------------- */

/* The member whose entry-point suffix ends name[0, n) ("k__kvx3": 3), or
 * whose namespace its mangled form holds ("_ZN6kvx_g34stepEv": 3); -1. */
/* The number the n digits at p write. */
static int digits_value(const char *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = 10 * v + (p[i] - '0');
    return v;
}

int jit_group_owner(const char *name, size_t n)
{
    /* K__kvxI, and what holds it ("_ZZ7k__kvx1E1s", a variable of its body):
     * a member's source never says __kvx itself (jit_group_entries) */
    static const char suf[] = JIT_GROUP_SUFFIX;
    for (const char *p = name; p < name + n;) {
        const char *at = memmem(p, (size_t)(name + n - p), suf, sizeof suf - 1);
        if (!at)
            break;
        const char *dg = at + sizeof suf - 1;
        int nd = 0;
        while (dg + nd < name + n && nd < 6 && isdigit((unsigned char)dg[nd]))
            nd++;
        if (nd >= 1 && nd <= 5)
            return digits_value(dg, nd);
        p = at + 1;
    }
    /* Itanium mangling: a namespace is <length><name>, kvx_gI being 5 + the
     * digits of I; the length is the shortest run of digits before it that
     * leaves that many digits after it (a name before may end in digits) */
    static const char ns[] = JIT_GROUP_NS;
    for (const char *p = name; p < name + n;) {
        const char *at = memmem(p, (size_t)(name + n - p), ns, sizeof ns - 1);
        if (!at)
            break;
        const char *dg = at + sizeof ns - 1;
        for (int w = 1; w <= 3 && at - w >= name && isdigit((unsigned char)at[-w]); w++) {
            int len = digits_value(at - w, w), nd = len - (int)(sizeof ns - 1);
            int ok = nd >= 1 && nd <= 5 && dg + nd <= name + n;
            for (int k = 0; ok && k < nd; k++)
                ok = isdigit((unsigned char)dg[k]);
            if (ok)
                return digits_value(dg, nd);
        }
        p = at + 1;
    }
    return -1;
}

/* The member an NVRTC or ptxas line names: "NAME(12): error ...", a quoted
 * function of ptxas ("'k__kvx3'"), "Function properties for k__kvx3"; -1
 * for a line of no member; -2 for a ptxas line that names no function (it
 * is the function's that ptxas named last: its figures). */
static int line_owner(const char *line, size_t len, const GroupMember *m, int n)
{
    for (int i = 0; i < n; i++) {
        const char *name = jit_job_name(m[i].job);
        size_t k = strlen(name);
        if (len > k && !memcmp(line, name, k) && line[k] == '(')
            return i;
    }
    if (len < 5 || memcmp(line, "ptxas", 5))
        return -1;
    const char *q = memchr(line, '\'', len);
    const char *e = q ? memchr(q + 1, '\'', (size_t)(line + len - q - 1)) : NULL;
    if (e)
        return jit_group_owner(q + 1, (size_t)(e - q - 1));
    const char *f = memmem(line, len, "properties for ", 15);
    if (f) {
        f += 15;
        return jit_group_owner(f, strcspn(f, " \r\n"));
    }
    return memmem(line, len, "bytes gmem", 10) ? -1 : -2;
}

/* Whether the line starts a message (NVRTC's "FILE(N): ...", ptxas's, the
 * closing count); the lines after one (source excerpt, caret, "detected
 * during") belong to it. */
static int message_start(const char *line, size_t len)
{
    if (len >= 5 && !memcmp(line, "ptxas", 5))
        return 1;
    const char *paren = memchr(line, '(', len);
    if (paren && paren > line && paren[1] && isdigit((unsigned char)paren[1])) {
        const char *c = paren + 1;
        while (isdigit((unsigned char)*c))
            c++;
        return c[0] == ')' && c[1] == ':';
    }
    return len > 0 && line[0] != ' ' && line[0] != '\t';
}

/* The owner of each line of log (-1: no member's) into own[], and whether
 * each member's lines hold an error into err_of[] (n); returns the number of
 * lines, *unowned_error set when an error line is no member's. */
/* An error on line `line` of the program itself (a hoisted #include that
 * cannot be opened) is the error of every member whose source has that
 * line: marked in err_of.  The number marked. */
static int program_line_error(const char *program, long line, const GroupMember *m, int n, int *err_of)
{
    const char *p = program;
    for (long k = 1; k < line && p && *p; k++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    if (!p || !*p)
        return 0;
    size_t len = strcspn(p, "\n");
    int marked = 0;
    for (int i = 0; i < n; i++) {
        const char *src = m[i].job->source;
        for (const char *q = src; (q = memmem(q, strlen(q), p, len)); q += len)
            if ((q == src || q[-1] == '\n') && (q[len] == '\n' || !q[len])) {
                err_of[i] = 1, marked++;
                break;
            }
    }
    return marked;
}

/* The line number of a message of the program's own text ("kvx_group.cu(2):"), 0. */
static long program_line(const char *line, size_t len)
{
    size_t k = sizeof GROUP_NAME - 1;
    if (len <= k + 1 || memcmp(line, GROUP_NAME, k) || line[k] != '(')
        return 0;
    return strtol(line + k + 1, NULL, 10);
}

static int log_owners(const char *log, const char *program, const GroupMember *m, int n, int **own,
                      int *err_of, int *unowned_error)
{
    int lines = 1, k = 0, cur = -1, fn = -1;    /* fn: the function ptxas named last */
    for (const char *c = log; *c; c++)
        lines += *c == '\n';
    *own = mem_calloc((size_t)lines, sizeof **own);
    *unowned_error = 0;
    for (const char *p = log; *p; k++) {
        size_t len = strcspn(p, "\n");
        if (message_start(p, len)) {
            cur = line_owner(p, len, m, n);
            if (cur == -2)
                cur = fn;
            else if (len >= 5 && !memcmp(p, "ptxas", 5))
                fn = cur;
        }
        (*own)[k] = cur;
        int is_err = memmem(p, len, "error", 5) && !memmem(p, len, "errors detected", 15) &&
                     !memmem(p, len, "error detected", 14);
        if (is_err && message_start(p, len)) {
            long pl = program_line(p, len);
            if (cur >= 0)
                err_of[cur] = 1;
            else if (!(pl && program && program_line_error(program, pl, m, n, err_of)) &&
                     !memmem(p, len, "ptxas fatal", 11))
                *unowned_error = 1;
        }
        p += len + (p[len] == '\n');
    }
    return k;
}

/* Every `K__kvxI` of text written back as K (where no digit follows, so
 * that __kvx1 is not __kvx12's start; parameters K__kvxI_param_0 too). */
static char *unsuffix(const char *text, size_t len, int member, size_t *out_len)
{
    char suf[24];
    int sn = snprintf(suf, sizeof suf, JIT_GROUP_SUFFIX "%d", member);
    StrBuf b;
    sb_init(&b);
    const char *p = text, *end = text + len;
    for (const char *at; (at = memmem(p, (size_t)(end - p), suf, (size_t)sn));) {
        const char *after = at + sn;
        sb_put(&b, p, (size_t)(at - p));
        if (after < end && isdigit((unsigned char)*after))
            sb_put(&b, at, (size_t)sn);
        p = after;
    }
    sb_put(&b, p, (size_t)(end - p));
    if (out_len)
        *out_len = b.len;
    char *s = sb_take(&b);
    return s ? s : mem_strdup("");
}

/* Member i's log from the program's: its lines and the lines of no member,
 * less the program's closing count of errors, with its names written back. */
static char *member_log(const char *log, const int *own, int i)
{
    StrBuf b;
    sb_init(&b);
    int k = 0;
    for (const char *p = log; *p; k++) {
        size_t len = strcspn(p, "\n");
        int count = memmem(p, len, "detected in the compilation of", 30) != NULL;
        if ((own[k] == i || own[k] < 0) && !count) {
            sb_put(&b, p, len);
            sb_putc(&b, '\n');
        }
        p += len + (p[len] == '\n');
    }
    char *s = unsuffix(b.p ? b.p : "", b.len, i, NULL);
    sb_free(&b);
    return s;
}

/* ---- the PTX of each member ----------------------------------------------------- */

/* A top-level item of PTX: a declaration or a function (an .entry, a .func),
 * with the comment lines before it; its text [from, to) and the name it
 * declares. */
typedef struct PtxItem {
    const char *from, *to;
    const char *name;
    size_t nlen;
    int member;                 /* jit_group_owner of the name */
    int keep;
} PtxItem;

static int ptx_ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%';
}

/* The name an item declares: after .entry/.func (and a function's return
 * parameters), the identifier before '('; else the last identifier before
 * '[', '=' or ';'. */
static void item_name(PtxItem *it)
{
    const char *p = it->from, *name = NULL;
    size_t nlen = 0;
    int fn = 0;
    while (p < it->to && (*p == '/' || *p == '\n' || *p == ' ' || *p == '\t'))
        p += *p == '/' ? strcspn(p, "\n") : 1;    /* the comments before it */
    for (; p < it->to; p++) {
        if (*p == '.' && (!strncmp(p, ".entry", 6) || !strncmp(p, ".func", 5)))
            fn = 1;
        if (*p == '(' && fn && name)
            break;
        if (*p == '(' && fn) {                      /* the return parameters */
            const char *e = memchr(p, ')', (size_t)(it->to - p));
            p = e ? e : it->to;
            continue;
        }
        if (!fn && (*p == '[' || *p == '=' || *p == ';'))
            break;
        if (ptx_ident_start(*p) && (p == it->from || (!ident_char(p[-1]) && p[-1] != '.'))) {
            const char *s = p++;
            while (p < it->to && ident_char(*p))
                p++;
            name = s, nlen = (size_t)(p - s);
            p--;
        }
    }
    it->name = name;
    it->nlen = name ? nlen : 0;
    it->member = name ? jit_group_owner(name, nlen) : -1;
}

/* Where the line at p ends (past its newline). */
static const char *line_end(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* The items of ptx after its header (.version, .target, .address_size and
 * what comes before them), at most one per top-level declaration.  *header_end
 * is where the header ends.  The count. */
static int ptx_items(const char *ptx, PtxItem **out, const char **header_end)
{
    int n = 0, cap = 64;
    PtxItem *v = mem_alloc(sizeof *v * (size_t)cap);
    const char *p = ptx, *start = NULL, *pend = NULL;
    *header_end = ptx;
    int depth = 0, braced = 0;
    for (; *p; p = line_end(p)) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        int blank = *q == '\n' || *q == 0 || (q[0] == '/' && q[1] == '/');
        if (!start && depth == 0 && (!strncmp(q, ".version", 8) || !strncmp(q, ".target", 7) ||
                                     !strncmp(q, ".address_size", 13))) {
            *header_end = line_end(p);
            pend = NULL;
            continue;
        }
        if (!start && blank) {
            pend = pend ? pend : p;     /* the comments before an item go with it */
            continue;
        }
        if (!start)
            start = pend ? pend : p, pend = NULL;
        for (const char *c = p; c < line_end(p); c++) {
            if (c[0] == '/' && c[1] == '/')
                break;
            depth += *c == '{' ? 1 : *c == '}' ? -1 : 0;
            braced |= *c == '{';
        }
        const char *e = line_end(p);
        const char *last = e;
        while (last > p && (last[-1] == '\n' || last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r'))
            last--;
        int done = depth == 0 && (braced ? 1 : (last > p && last[-1] == ';'));
        if (done) {
            if (n == cap)
                v = mem_realloc(v, sizeof *v * (size_t)(cap *= 2));
            v[n] = (PtxItem){.from = start, .to = e};
            item_name(&v[n++]);
            start = NULL, braced = 0;
        }
    }
    *out = v;
    return n;
}

static int item_cmp(const void *a, const void *b)
{
    const PtxItem *x = *(PtxItem *const *)a, *y = *(PtxItem *const *)b;
    size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->nlen > y->nlen) - (x->nlen < y->nlen);
}

/* The item declaring name[0, n) in by_name (sorted), or NULL. */
static PtxItem *item_find(PtxItem **by_name, int nnamed, const char *name, size_t n)
{
    int lo = 0, hi = nnamed - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const PtxItem *it = by_name[mid];
        size_t k = n < it->nlen ? n : it->nlen;
        int c = memcmp(name, it->name, k);
        c = c ? c : (n > it->nlen) - (n < it->nlen);
        if (c == 0)
            return by_name[mid];
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Mark it and, through the identifiers of its text, every item it reaches. */
static void reach(PtxItem *it, PtxItem **by_name, int nnamed)
{
    PtxItem **stack = mem_alloc(sizeof *stack * (size_t)(nnamed + 1));
    int top = 0;
    it->keep = 1;
    stack[top++] = it;
    while (top > 0) {
        PtxItem *x = stack[--top];
        for (const char *p = x->from; p < x->to; p++) {
            if (!ptx_ident_start(*p) || (p > x->from && (ident_char(p[-1]) || p[-1] == '.')))
                continue;
            const char *s = p++;
            while (p < x->to && ident_char(*p))
                p++;
            PtxItem *y = item_find(by_name, nnamed, s, (size_t)(p - s));
            if (y && !y->keep) {
                y->keep = 1;
                stack[top++] = y;
            }
            p--;
        }
    }
    free(stack);
}

/* Whether a comment line names another member ("// _ZZ7k__kvx2E1s has
 * been demoted", NVVM's notes on each member's variables, gathered before
 * the first entry point). */
static int names_other(const char *line, size_t len, int member)
{
    for (const char *p = line; p < line + len; p++) {
        if (!ptx_ident_start(*p) || (p > line && ident_char(p[-1])))
            continue;
        const char *s = p++;
        while (p < line + len && ident_char(*p))
            p++;
        int o = jit_group_owner(s, (size_t)(p - s));
        if (o >= 0 && o != member)
            return 1;
    }
    return 0;
}

/* An item's text, less the comment lines before it that name another member. */
static void item_put(StrBuf *b, const PtxItem *it, int member)
{
    for (const char *p = it->from; p < it->to;) {
        const char *e = line_end(p);
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t'))
            q++;
        if (!(q[0] == '/' && q[1] == '/' && names_other(q, (size_t)(e - q), member)))
            sb_put(b, p, (size_t)(e - p));
        p = e;
    }
}

char *jit_group_ptx(const char *ptx, int member, size_t *len)
{
    PtxItem *v = NULL;
    const char *header_end;
    int n = ptx_items(ptx, &v, &header_end);
    PtxItem **by_name = mem_alloc(sizeof *by_name * (size_t)(n + 1));
    int nnamed = 0;
    for (int i = 0; i < n; i++)
        if (v[i].name)
            by_name[nnamed++] = &v[i];
    qsort(by_name, (size_t)nnamed, sizeof *by_name, item_cmp);
    for (int i = 0; i < n; i++)
        if (v[i].member == member && v[i].name && memmem(v[i].from, (size_t)(v[i].to - v[i].from), ".entry", 6))
            reach(&v[i], by_name, nnamed);
    StrBuf b;
    sb_init(&b);
    sb_put(&b, ptx, (size_t)(header_end - ptx));
    for (int i = 0; i < n; i++)
        if (v[i].keep)
            item_put(&b, &v[i], member);
    char *out = unsuffix(b.p ? b.p : "", b.len, member, len);
    sb_free(&b);
    free(by_name);
    free(v);
    return out;
}

/* ---- the SASS of each member ---------------------------------------------------- */

typedef struct SassKeep {
    const char *ptx;            /* the member's own PTX (jit_group_ptx) */
    const char *symbol;         /* what its entry points carry */
} SassKeep;

/* A part of the program's listing is the member's where its function is an
 * item of the member's PTX: a device function by its name, an entry point
 * by its name less the member's symbol. */
static int sass_keep(const char *name, void *ctx)
{
    const SassKeep *k = ctx;
    size_t n = strlen(name), s = strlen(k->symbol);
    if (n > s && !strcmp(name + n - s, k->symbol))
        n -= s;
    char *want = mem_alloc(n + 2);
    memcpy(want, name, n);
    want[n] = 0;
    int found = 0;
    for (const char *p = k->ptx; !found && (p = strstr(p, want)); p += n)
        found = (p == k->ptx || !ident_char(p[-1])) && !ident_char(p[n]) &&
                (p > k->ptx && (p[-1] == ' ' || p[-1] == '\t'));
    free(want);
    return found;
}

char *jit_group_sass(const char *listing, const JitJob *job)
{
    StrBuf b;
    sb_init(&b);
    SassKeep k = {job->ptx ? job->ptx : "", job->symbol};
    inspect_listing_keep(listing, sass_keep, &k, &b);
    int member = jit_group_owner(job->symbol, strlen(job->symbol));
    char *out = unsuffix(b.p ? b.p : "", b.len, member, NULL);
    sb_free(&b);
    return out;
}

/* ---- the shared CUBIN ----------------------------------------------------------- */

JitBlob *jit_blob_new(const void *data, size_t len)
{
    JitBlob *b = mem_alloc(sizeof *b + (len ? len : 1));
    atomic_init(&b->refs, 1);
    pthread_mutex_init(&b->mu, NULL);
    b->path = NULL;
    b->len = len;
    if (len)
        memcpy(b->data, data, len);
    return b;
}

void jit_blob_ref(JitBlob *b)
{
    atomic_fetch_add(&b->refs, 1);
}

void jit_blob_unref(JitBlob *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&b->mu);
    free(b->path);
    free(b);
}

/* ---- compiling a program -------------------------------------------------------- */

/* The facts of member job from the program's listing (NULL: no
 * disassembler, the PTX's facts alone, as a compile alone gives), timed. */
static void member_facts(JitJob *job, const char *sass, double share_ms)
{
    double t0 = wall_now_ms();
    if (sass)
        job->sass = jit_group_sass(sass, job);
    StrBuf b;
    sb_init(&b);
    inspect_job_facts_from(job, job->sass, &b);
    job->inspect_json = sb_take(&b);
    job->facts_ms = share_ms + (wall_now_ms() - t0);
}

/* Member i's outputs from the program's compiled job g: its log, PTX,
 * figures, the shared CUBIN, and its facts. */
static void member_fill(const JitJob *g, GroupMember *m, int n, int i, const int *own, JitBlob *blob,
                        const char *sass, double sass_ms)
{
    JitJob *job = m[i].job;
    job->log = member_log(g->log, own, i);
    job->ptx = jit_group_ptx(g->ptx, i, &job->ptx_len);
    jit_parse_ptxas(job->log, job);
    snprintf(job->symbol, sizeof job->symbol, JIT_GROUP_SUFFIX "%d", i);
    job->group = n;
    job->compile_ms = g->compile_ms / n;
    job->fe_ms = g->fe_ms / n, job->nvvm_ms = g->nvvm_ms / n, job->ptxas_ms = g->ptxas_ms / n;
    if (blob) {
        jit_blob_ref(blob);
        job->cubin_blob = blob;
        job->cubin = blob->data;
        job->cubin_len = blob->len;
    }
    job->ok = 1;
    member_facts(job, sass, sass_ms / n);
}

/* The program's one disassembly, NULL without a disassembler or CUBIN; its
 * time in *ms. */
static char *program_sass(const JitJob *g, double *ms)
{
    double t0 = wall_now_ms();
    KvxError e = {0};
    char *sass = g->cubin && g->cubin_len && inspect_find_disassembler()
                     ? inspect_disassemble(g->cubin, g->cubin_len, &e) : NULL;
    kvx_error_clear(&e);
    *ms = wall_now_ms() - t0;
    return sass;
}

/* The program compiled: every member filled from it. */
static void program_ok(JitJob *g, GroupMember *m, int n, const int *own)
{
    double sass_ms = 0;
    char *sass = program_sass(g, &sass_ms);
    JitBlob *blob = g->cubin_len ? jit_blob_new(g->cubin, g->cubin_len) : NULL;
    for (int i = 0; i < n; i++)
        member_fill(g, m, n, i, own, blob, sass, sass_ms);
    jit_blob_unref(blob);
    free(sass);
}

static int compile_alone(GroupMember *m, const char *const *opts, int nopts, KvxError *err)
{
    JitJob *job = m->job;
    if (jit_nvrtc_compile(job, opts, nopts, err) != 0)
        return -1;
    double t0 = wall_now_ms();
    jit_fresh_facts(job);
    job->facts_ms = wall_now_ms() - t0;
    return 0;
}

/* The program failed: the members its errors name alone, the others as a
 * program again; an error of no member's halves it. */
static int program_failed(const JitJob *g, GroupMember *m, int n, const char *const *opts, int nopts,
                          KvxError *err)
{
    int *own = NULL, unowned = 0;
    int *bad = mem_calloc((size_t)n, sizeof *bad);
    log_owners(g->log ? g->log : "", g->source, m, n, &own, bad, &unowned);
    int nbad = 0;
    for (int i = 0; i < n; i++)
        nbad += bad[i];
    /* ptxas fails without an error line over 48 KB of static shared memory
     * (jit.c's note_silent_failure): the members whose figures say so */
    for (int i = 0; i < n && nbad == 0 && !unowned; i++) {
        char *log = member_log(g->log ? g->log : "", own, i);
        JitJob f = {0};
        jit_parse_ptxas(log, &f);
        bad[i] = f.smem_static > 48 * 1024;
        free(log);
    }
    for (int i = 0; i < n && nbad == 0; i++)
        nbad += bad[i];
    /* an error of no member's, inside a header: the members that include one */
    for (int i = 0; i < n && (unowned || nbad == 0); i++)
        bad[i] = jit_source_includes(m[i].job->source);
    int alone = !unowned && nbad > 0, rc = 0;
    GroupMember *rest = mem_alloc(sizeof *rest * (size_t)n), *sus = mem_alloc(sizeof *sus * (size_t)n);
    int nrest = 0, ns = 0;
    for (int i = 0; i < n; i++) {
        if (!bad[i])
            rest[nrest++] = m[i];
        else if (alone)
            rc = rc ? rc : compile_alone(&m[i], opts, nopts, err);
        else
            sus[ns++] = m[i];
    }
    if (!alone && (ns == n || ns == 0)) {      /* nothing tells them apart: halves */
        rc = jit_group_compile(m, n / 2, opts, nopts, err);
        rc = rc ? rc : jit_group_compile(m + n / 2, n - n / 2, opts, nopts, err);
    } else {
        rc = rc ? rc : jit_group_compile(sus, ns, opts, nopts, err);
        rc = rc ? rc : jit_group_compile(rest, nrest, opts, nopts, err);
    }
    free(rest);
    free(sus);
    free(own);
    free(bad);
    return rc;
}

int jit_group_compile(GroupMember *m, int n, const char *const *opts, int nopts, KvxError *err)
{
    if (n <= 0)
        return 0;
    if (n == 1)
        return compile_alone(m, opts, nopts, err);
    const char **src = mem_alloc(sizeof *src * (size_t)n), **names = mem_alloc(sizeof *names * (size_t)n);
    for (int i = 0; i < n; i++)
        src[i] = m[i].job->source, names[i] = jit_job_name(m[i].job);
    char *text = jit_group_program(m, n);
    JitJob g = {.name = GROUP_NAME, .source = text, .arch = m[0].job->arch};
    jit_job_release(&g);
    int rc = jit_nvrtc_compile_with(&g, n, src, names, opts, nopts, err);
    if (rc == 0 && g.ok) {
        int *own = NULL, unowned = 0, *bad = mem_calloc((size_t)n, sizeof *bad);
        log_owners(g.log, NULL, m, n, &own, bad, &unowned);
        program_ok(&g, m, n, own);
        free(own);
        free(bad);
    } else if (rc == 0) {
        rc = program_failed(&g, m, n, opts, nopts, err);
    }
    jit_job_release(&g);
    free(text);
    free(names);
    free(src);
    return rc;
}
