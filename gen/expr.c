/* expr: lexer, recursive-descent parser, evaluator and printer of the kvx
 * expression language (grammar and value rules in expr.h).
 *
 * Invariants: a parsed tree only names known functions with a valid argument
 * count; every node carries the position of its token (operators for unary,
 * binary and conditional nodes, the name for calls); values never become
 * inf or NaN (an operation that would make one is an error), so everything
 * val_text prints re-parses.  Recursion is bounded (EXPR_MAX_NEST while parsing,
 * EXPR_MAX_HEIGHT for the tree that eval and print walk), so no input can
 * exhaust the stack.
 *
 * Choices the header leaves open, made here:
 *  - `%` is floor modulo, consistent with `//`: a == (a // b) * b + a % b.
 *  - `/` turns its result back into an integer only when both operands are
 *    integers and the division is exact; a float operand keeps it a float.
 *  - round() rounds halves away from zero; round/floor/ceil/int return integers.
 *  - A size suffix (K M G) applies to integer literals only.
 *  - ctype/sizeof/is_float take a kvx type name ("u32") or its CUDA spelling
 *    ("unsigned int"), so a `set:` variable may hold either. */
#include "expr.h"

#include "types.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_NEST 200    /* parser recursion: parentheses, unary chains */
#define EXPR_MAX_HEIGHT 1000 /* tree height: long left-associative chains */

/* ---- values --------------------------------------------------------------- */

Value val_int(int64_t i) { return (Value){.kind = VAL_INT, .i = i}; }
Value val_float(double d) { return (Value){.kind = VAL_FLOAT, .d = d}; }
Value val_str(const char *s) { return (Value){.kind = VAL_STR, .s = s}; }
Value val_bool(int b) { return (Value){.kind = VAL_BOOL, .i = b != 0}; }

int val_is_num(Value v) { return v.kind == VAL_INT || v.kind == VAL_FLOAT; }

double val_num(Value v)
{
    return v.kind == VAL_INT ? (double)v.i : v.kind == VAL_FLOAT ? v.d : 0;
}

/* Shortest text that reads back as the same double, laid out as "%.17g"
 * would (plain for exponents -4..16, else d.ddde+XX): 0.05, 1000, 1e+20. */
static void fmt_double(char *buf, size_t n, double d)
{
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(buf, n, "%.*e", digits - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    snprintf(buf, n, "%.*e", digits - 1, d);
    const char *e = strchr(buf, 'e');
    int exp10 = e ? atoi(e + 1) : 0;
    if (isfinite(d) && exp10 >= -4 && exp10 < 17)
        snprintf(buf, n, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, d);
    else
        snprintf(buf, n, "%.*g", digits, d);
}

/* Text of a value for messages: strings quoted and cut short. */
static void fmt_value(char *buf, size_t n, Value v)
{
    switch (v.kind) {
    case VAL_INT: snprintf(buf, n, "%lld", (long long)v.i); break;
    case VAL_FLOAT: fmt_double(buf, n, v.d); break;
    case VAL_STR: snprintf(buf, n, "\"%.40s%s\"", v.s, strlen(v.s) > 40 ? "..." : ""); break;
    case VAL_BOOL: snprintf(buf, n, "%s", v.i ? "true" : "false"); break;
    default: snprintf(buf, n, "nothing"); break;
    }
}

static const char *kind_name(Value v)
{
    switch (v.kind) {
    case VAL_INT: case VAL_FLOAT: return "number";
    case VAL_STR: return "string";
    case VAL_BOOL: return "boolean";
    default: return "nothing";
    }
}

/* An integral float prints like an integer here ("1", not "1.0"): val_text is
 * for display and substitution; expr_print keeps a float literal a float. */
const char *val_text(Arena *a, Value v)
{
    char buf[64];
    if (v.kind == VAL_STR)
        return v.s;
    fmt_value(buf, sizeof buf, v);
    return arena_strdup(a, buf);
}

int val_equal(Value a, Value b)
{
    if (a.kind == VAL_INT && b.kind == VAL_INT)
        return a.i == b.i;
    if (val_is_num(a) && val_is_num(b))
        return val_num(a) == val_num(b);
    if (a.kind == VAL_STR && b.kind == VAL_STR)
        return strcmp(a.s, b.s) == 0;
    if (a.kind == VAL_BOOL && b.kind == VAL_BOOL)
        return a.i == b.i;
    return 0;
}

/* ---- function tables ------------------------------------------------------ */

typedef int (*FnImpl)(const Expr *call, const Value *args, const ExprEnv *env,
                      Value *out, KvxError *err);

/* name, min and max argument count (-1: any number) */
#define EXPR_FUNCTIONS(X)                                                      \
    X(ceil_div, 2, 2) X(min, 2, -1) X(max, 2, -1) X(round, 1, 1)               \
    X(floor, 1, 1) X(ceil, 1, 1) X(abs, 1, 1) X(log2, 1, 1) X(pow2, 1, 1)      \
    X(clamp, 3, 3) X(align_up, 2, 2) X(int, 1, 1) X(float, 1, 1) X(str, 1, 1)  \
    X(ctype, 1, 1) X(sizeof, 1, 1) X(is_float, 1, 1) X(hex, 1, 1)

#define DECLARE_FN(name, lo, hi)                                               \
    static int fn_##name(const Expr *, const Value *, const ExprEnv *, Value *, KvxError *);
EXPR_FUNCTIONS(DECLARE_FN)

typedef struct FnDef {
    const char *name;
    int min_args, max_args;
    FnImpl impl; /* NULL for a reference */
} FnDef;

#define FN_ROW(name, lo, hi) {#name, lo, hi, fn_##name},
#define FN_NAME(name, lo, hi) #name,
static const FnDef functions[] = {EXPR_FUNCTIONS(FN_ROW)};
const char *const expr_function_names[] = {EXPR_FUNCTIONS(FN_NAME) NULL};
#define NFUNCTIONS (int)(sizeof functions / sizeof functions[0])
_Static_assert(sizeof expr_function_names / sizeof expr_function_names[0]
                   == sizeof functions / sizeof functions[0] + 1,
               "expr_function_names and functions[] come from one list");

/* Host references of driver/verify.h: same names and arities as documented
 * there (test_expr checks a call of each parses). */
static const FnDef references[] = {
    {"count_below", 2, 2, NULL},    {"count_if", 3, 3, NULL},  {"count_below_by", 4, 4, NULL},
    {"histogram", 4, 4, NULL},      {"sum", 1, 1, NULL},       {"dot", 2, 2, NULL},
    {"sum_by", 3, 3, NULL},         {"index_add", 4, 4, NULL}, {"reduce", 4, 4, NULL},
    {"wrap_count", 5, 5, NULL},     {"tally", 3, 3, NULL},     {"baseline", 0, 0, NULL},
};
#define NREFERENCES (int)(sizeof references / sizeof references[0])

static const FnDef *function_find(const char *name)
{
    for (int i = 0; i < NFUNCTIONS; i++)
        if (strcmp(functions[i].name, name) == 0)
            return &functions[i];
    for (int i = 0; i < NREFERENCES; i++)
        if (strcmp(references[i].name, name) == 0)
            return &references[i];
    return NULL;
}

int expr_is_reference(const char *name)
{
    const FnDef *f = name ? function_find(name) : NULL;
    return f && !f->impl;
}

/* ---- lexer ---------------------------------------------------------------- */

typedef enum { T_END, T_NUM, T_STR, T_IDENT, T_OP } TokKind;

typedef struct Token {
    TokKind kind;
    int op;          /* T_OP: a character or an OP_* code */
    size_t off, len; /* bytes of text */
    Value v;         /* T_NUM, T_STR */
} Token;

typedef struct Parser {
    Arena *arena;
    const char *text;
    SrcPos base;      /* position of text[0]; file copied into the arena */
    KvxError *err;
    Token tok;        /* the current token */
    int nest;         /* parser recursion depth */
    size_t line_off;  /* position cache: offset of the last position asked for, */
    int line, line_start; /* its line and the offset where that line starts */
} Parser;

static int is_ident_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }
static int hex_value(int c)
{
    return is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
         : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/* Position of byte off: columns count from base.col on the first line and
 * from 1 after a newline.  Offsets mostly increase (a binary node is made
 * after its right operand, but on the same line as a rule), so the scan
 * resumes where it stopped and long expressions stay linear. */
static SrcPos pos_at(Parser *p, size_t off)
{
    if (off < (size_t)p->line_start) { /* back across a newline: rescan */
        p->line_off = 0;
        p->line = 0;
        p->line_start = 0;
    } else if (off < p->line_off) { /* back within the line (an operator
                                       after its right operand): no newline */
        p->line_off = off;
    }
    for (size_t k = p->line_off; k < off; k++)
        if (p->text[k] == '\n') {
            p->line++;
            p->line_start = (int)k + 1;
        }
    p->line_off = off;
    SrcPos pos = p->base;
    if (p->line == 0) {
        pos.col = p->base.col + (int)off;
    } else {
        pos.line = p->base.line + p->line;
        pos.col = 1 + (int)off - p->line_start;
    }
    return pos;
}

static int fail_at(Parser *p, size_t off, const char *fmt, ...) KVX_PRINTF(3, 4);
static int fail_at(Parser *p, size_t off, const char *fmt, ...)
{
    SrcPos pos = pos_at(p, off);
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(p->err, KVX_EINPUT, &pos, fmt, ap);
    va_end(ap);
    return -1;
}

/* Scan a number at s: 42, 0x2A, 1.5, 1e-3, 16M.  *len gets the bytes used.
 * 0, or -1 with *why naming the problem. */
static int scan_number(const char *s, size_t *len, Value *out, const char **why)
{
    const char *q = s;
    int is_float = 0;
    uint64_t u = 0;
    double d = 0;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        q += 2;
        if (hex_value((unsigned char)*q) < 0) {
            *why = "malformed number";
            goto bad;
        }
        for (; hex_value((unsigned char)*q) >= 0; q++) {
            if (u > (uint64_t)INT64_MAX >> 4) {
                *why = "integer literal out of range";
                goto bad;
            }
            u = u * 16 + (uint64_t)hex_value((unsigned char)*q);
        }
    } else {
        for (; is_digit(*q); q++) {
            if (u > ((uint64_t)INT64_MAX - 9) / 10 && u * 10 + (uint64_t)(*q - '0') > (uint64_t)INT64_MAX)
                is_float = -1; /* too large for an int: an error unless it is a float */
            else
                u = u * 10 + (uint64_t)(*q - '0');
        }
        if (*q == '.' && is_digit(q[1])) {
            is_float = 1;
            for (q++; is_digit(*q); q++)
                ;
        }
        if ((*q == 'e' || *q == 'E') &&
            (is_digit(q[1]) || ((q[1] == '+' || q[1] == '-') && is_digit(q[2])))) {
            is_float = 1;
            for (q += 2; is_digit(*q); q++)
                ;
        }
        if (is_float < 0) {
            *why = "integer literal out of range";
            goto bad;
        }
        if (is_float) {
            errno = 0;
            d = strtod(s, NULL);
            if (isinf(d)) {
                *why = "number out of range";
                goto bad;
            }
        }
    }
    if (*q == 'K' || *q == 'M' || *q == 'G') {
        int shift = *q == 'K' ? 10 : *q == 'M' ? 20 : 30;
        if (is_float) {
            *why = "a size suffix (K, M, G) needs an integer";
            goto bad;
        }
        if (u > (uint64_t)INT64_MAX >> shift) {
            *why = "integer literal out of range";
            goto bad;
        }
        u <<= shift;
        q++;
    }
    if (is_ident_char(*q) || *q == '.') {
        *why = "malformed number";
        goto bad;
    }
    *len = (size_t)(q - s);
    *out = is_float ? val_float(d) : val_int((int64_t)u);
    return 0;
bad:
    while (is_ident_char(*q) || *q == '.')
        q++;
    *len = (size_t)(q - s);
    return -1;
}

/* Read the next token into p->tok.  0 or -1 with the error set. */
static int lex(Parser *p)
{
    const char *t = p->text;
    size_t i = p->tok.off + p->tok.len;
    while (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')
        i++;
    Token *k = &p->tok;
    memset(k, 0, sizeof *k);
    k->off = i;
    int c = (unsigned char)t[i];
    if (c == 0) {
        k->kind = T_END;
        return 0;
    }
    if (is_digit(c) || (c == '.' && is_digit(t[i + 1]))) { /* .5 as YAML allows */
        const char *why = NULL;
        k->kind = T_NUM;
        if (scan_number(t + i, &k->len, &k->v, &why) < 0)
            return fail_at(p, i, "%s '%.*s'", why, (int)(k->len > 40 ? 40 : k->len), t + i);
        return 0;
    }
    if (is_ident_start(c)) {
        k->kind = T_IDENT;
        while (is_ident_char(t[i + k->len]))
            k->len++;
        return 0;
    }
    if (c == '"' || c == '\'') {
        size_t j = i + 1, n = 0, end = j;
        while (t[end] && t[end] != c) /* size the copy: escapes only shrink it */
            end += t[end] == '\\' && t[end + 1] ? 2 : 1;
        char *s = arena_alloc(p->arena, end - j + 1);
        for (; t[j] && t[j] != c; j++) {
            if (t[j] != '\\') {
                s[n++] = t[j];
                continue;
            }
            switch (t[++j]) {
            case '\\': s[n++] = '\\'; break;
            case '"': s[n++] = '"'; break;
            case '\'': s[n++] = '\''; break;
            case 'n': s[n++] = '\n'; break;
            case 't': s[n++] = '\t'; break;
            case 0: return fail_at(p, i, "unterminated string");
            default:
                return fail_at(p, j - 1, "unknown escape '\\%c' in string (expected one of: \\\\ \\\" \\' \\n \\t)",
                               t[j]);
            }
        }
        if (!t[j])
            return fail_at(p, i, "unterminated string");
        s[n] = 0;
        k->kind = T_STR;
        k->len = j + 1 - i;
        k->v = val_str(s);
        return 0;
    }
    static const struct { const char *text; int op; } ops[] = {
        {"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
        {"&&", OP_AND}, {"||", OP_OR}, {"//", OP_IDIV},
    };
    k->kind = T_OP;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        if (t[i] == ops[o].text[0] && t[i + 1] == ops[o].text[1]) {
            k->op = ops[o].op;
            k->len = 2;
            return 0;
        }
    if (strchr("+-*/%^<>!?:(),", c)) {
        k->op = c;
        k->len = 1;
        return 0;
    }
    k->len = 1;
    if (c == '=' || c == '&' || c == '|')
        return fail_at(p, i, "unexpected '%c' (did you mean '%c%c'?)", c, c, c);
    if (c >= 0x20 && c < 0x7f)
        return fail_at(p, i, "unexpected character '%c'", c);
    return fail_at(p, i, "unexpected byte 0x%02x", (unsigned)c);
}

/* "'text'" of the current token, or "end of expression". */
static const char *tok_desc(Parser *p, char *buf, size_t n)
{
    if (p->tok.kind == T_END)
        return "end of expression";
    size_t len = p->tok.len > 40 ? 40 : p->tok.len;
    snprintf(buf, n, "'%.*s%s'", (int)len, p->text + p->tok.off, len < p->tok.len ? "..." : "");
    return buf;
}

static int unexpected(Parser *p, const char *expected)
{
    char buf[64];
    return fail_at(p, p->tok.off, "unexpected %s (expected %s)", tok_desc(p, buf, sizeof buf), expected);
}

/* ---- parser --------------------------------------------------------------- */

static const char *op_text(int op)
{
    switch (op) {
    case OP_EQ: return "==";
    case OP_NE: return "!=";
    case OP_LE: return "<=";
    case OP_GE: return ">=";
    case OP_AND: return "&&";
    case OP_OR: return "||";
    case OP_IDIV: return "//";
    case '+': return "+";
    case '-': return "-";
    case '*': return "*";
    case '/': return "/";
    case '%': return "%";
    case '^': return "^";
    case '<': return "<";
    case '>': return ">";
    case '!': return "!";
    case '?': return "?";
    default: return "?op";
    }
}

static int is_cmp(int op)
{
    return op == OP_EQ || op == OP_NE || op == '<' || op == OP_LE || op == '>' || op == OP_GE;
}

static int at_op(const Parser *p, int op) { return p->tok.kind == T_OP && p->tok.op == op; }

/* A node of height h (1 + its tallest child) at byte off. */
static Expr *node(Parser *p, ExprKind kind, int op, size_t off, int h)
{
    if (h > EXPR_MAX_HEIGHT) {
        fail_at(p, off, "expression too long or nested too deeply (more than %d levels)",
                EXPR_MAX_HEIGHT);
        return NULL;
    }
    Expr *e = arena_alloc(p->arena, sizeof *e);
    e->kind = kind;
    e->op = op;
    e->pos = pos_at(p, off);
    return e;
}

static int max2(int a, int b) { return a > b ? a : b; }

static Expr *parse_expr(Parser *p, int *h);

static Expr *binary(Parser *p, int op, size_t off, Expr *a, int ha, Expr *b, int hb, int *h)
{
    *h = 1 + max2(ha, hb);
    Expr *e = node(p, EX_BINARY, op, off, *h);
    if (e) {
        e->a = a;
        e->b = b;
    }
    return e;
}

static Expr *parse_call(Parser *p, const Token *name, int *h)
{
    char *fname = arena_strndup(p->arena, p->text + name->off, name->len);
    const FnDef *f = function_find(fname);
    if (!f) {
        StrBuf sb;
        sb_init(&sb);
        for (int i = 0; i < NFUNCTIONS; i++)
            sb_printf(&sb, "%s, ", functions[i].name);
        for (int i = 0; i < NREFERENCES; i++)
            sb_printf(&sb, "%s%s", references[i].name, i + 1 < NREFERENCES ? ", " : "");
        fail_at(p, name->off, "unknown function '%s' (expected one of: %s)", fname, sb_str(&sb));
        sb_free(&sb);
        return NULL;
    }
    Expr **args = NULL;
    int n = 0, cap = 0, hmax = 0;
    if (lex(p) < 0) /* past '(' */
        goto fail;
    while (!at_op(p, ')')) {
        if (n > 0) {
            if (!at_op(p, ',')) {
                unexpected(p, "',' or ')'");
                goto fail;
            }
            if (lex(p) < 0)
                goto fail;
        }
        int ha;
        Expr *a = parse_expr(p, &ha);
        if (!a)
            goto fail;
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            args = xrealloc(args, (size_t)cap * sizeof *args);
        }
        args[n++] = a;
        hmax = max2(hmax, ha);
    }
    if (n < f->min_args || (f->max_args >= 0 && n > f->max_args)) {
        if (f->min_args == f->max_args)
            fail_at(p, name->off, "'%s' takes %d argument%s, got %d", fname, f->min_args,
                    f->min_args == 1 ? "" : "s", n);
        else
            fail_at(p, name->off, "'%s' takes at least %d arguments, got %d", fname, f->min_args, n);
        goto fail;
    }
    *h = 1 + hmax;
    Expr *e = node(p, EX_CALL, 0, name->off, *h);
    if (!e || lex(p) < 0) /* past ')' */
        goto fail;
    e->name = fname;
    e->nargs = n;
    e->args = arena_alloc(p->arena, (size_t)(n ? n : 1) * sizeof *e->args);
    if (n)
        memcpy(e->args, args, (size_t)n * sizeof *args);
    free(args);
    return e;
fail:
    free(args);
    return NULL;
}

static Expr *parse_primary(Parser *p, int *h)
{
    Token t = p->tok;
    Expr *e;
    *h = 1;
    switch (t.kind) {
    case T_NUM:
    case T_STR:
        if (!(e = node(p, EX_LIT, 0, t.off, 1)))
            return NULL;
        e->lit = t.v;
        return lex(p) < 0 ? NULL : e;
    case T_IDENT:
        if (lex(p) < 0)
            return NULL;
        if (at_op(p, '('))
            return parse_call(p, &t, h);
        if (!(e = node(p, EX_IDENT, 0, t.off, 1)))
            return NULL;
        e->name = arena_strndup(p->arena, p->text + t.off, t.len);
        if (strcmp(e->name, "true") == 0 || strcmp(e->name, "false") == 0) {
            e->kind = EX_LIT;
            e->lit = val_bool(e->name[0] == 't');
            e->name = NULL;
        }
        return e;
    case T_OP:
        if (t.op == '(') {
            if (lex(p) < 0 || !(e = parse_expr(p, h)))
                return NULL;
            if (!at_op(p, ')')) {
                SrcPos open = pos_at(p, t.off);
                char what[64];
                snprintf(what, sizeof what, "')' to close the '(' at %d:%d", open.line, open.col);
                unexpected(p, what);
                return NULL;
            }
            return lex(p) < 0 ? NULL : e;
        }
        break;
    default:
        break;
    }
    unexpected(p, "an operand");
    return NULL;
}

static Expr *parse_unary(Parser *p, int *h)
{
    if (++p->nest > EXPR_MAX_NEST) {
        fail_at(p, p->tok.off, "expression nested too deeply (more than %d levels)", EXPR_MAX_NEST);
        return NULL;
    }
    Expr *e = NULL;
    if (at_op(p, '-') || at_op(p, '!') || at_op(p, '+')) {
        Token t = p->tok;
        int ha;
        Expr *a;
        if (lex(p) < 0 || !(a = parse_unary(p, &ha)))
            goto out;
        *h = 1 + ha;
        if ((e = node(p, EX_UNARY, t.op, t.off, *h)))
            e->a = a;
        goto out;
    }
    /* pow := primary ( '^' unary )? */
    int ha, hb;
    Expr *a = parse_primary(p, &ha), *b;
    if (!a)
        goto out;
    *h = ha;
    e = a;
    if (at_op(p, '^')) {
        size_t off = p->tok.off;
        if (lex(p) < 0 || !(b = parse_unary(p, &hb)))
            e = NULL;
        else
            e = binary(p, '^', off, a, ha, b, hb, h);
    }
out:
    p->nest--;
    return e;
}

/* One left-associative level: operand (OP operand)*, OP among ops. */
typedef Expr *(*ParseFn)(Parser *, int *);

static int at_any(const Parser *p, const int *ops)
{
    for (; *ops; ops++)
        if (at_op(p, *ops))
            return 1;
    return 0;
}

static Expr *parse_left(Parser *p, int *h, ParseFn operand, const int *ops)
{
    Expr *e = operand(p, h);
    while (e && at_any(p, ops)) {
        int op = p->tok.op, hb;
        size_t off = p->tok.off;
        Expr *b;
        if (lex(p) < 0 || !(b = operand(p, &hb)))
            return NULL;
        e = binary(p, op, off, e, *h, b, hb, h);
    }
    return e;
}

static const int mul_ops[] = {'*', '/', OP_IDIV, '%', 0};
static const int add_ops[] = {'+', '-', 0};
static const int cmp_ops[] = {OP_EQ, OP_NE, '<', OP_LE, '>', OP_GE, 0};
static const int and_ops[] = {OP_AND, 0};
static const int or_ops[] = {OP_OR, 0};

static Expr *parse_mul(Parser *p, int *h) { return parse_left(p, h, parse_unary, mul_ops); }
static Expr *parse_add(Parser *p, int *h) { return parse_left(p, h, parse_mul, add_ops); }

/* cmp := add ( CMP add )?  -- comparisons do not chain. */
static Expr *parse_cmp(Parser *p, int *h)
{
    Expr *a = parse_add(p, h), *b;
    if (!a || !at_any(p, cmp_ops))
        return a;
    int op = p->tok.op, ha = *h, hb;
    size_t off = p->tok.off;
    if (lex(p) < 0 || !(b = parse_add(p, &hb)))
        return NULL;
    if (at_any(p, cmp_ops)) {
        unexpected(p, "an operator other than a comparison: comparisons do not chain; "
                      "use && or parentheses");
        return NULL;
    }
    return binary(p, op, off, a, ha, b, hb, h);
}

static Expr *parse_and(Parser *p, int *h) { return parse_left(p, h, parse_cmp, and_ops); }
static Expr *parse_or(Parser *p, int *h) { return parse_left(p, h, parse_and, or_ops); }

static Expr *parse_expr(Parser *p, int *h)
{
    if (++p->nest > EXPR_MAX_NEST) {
        fail_at(p, p->tok.off, "expression nested too deeply (more than %d levels)", EXPR_MAX_NEST);
        return NULL;
    }
    Expr *c = parse_or(p, h), *a = NULL, *b = NULL, *e = c;
    if (c && at_op(p, '?')) {
        size_t off = p->tok.off;
        int hc = *h, ha, hb;
        e = NULL;
        if (lex(p) < 0 || !(a = parse_expr(p, &ha)))
            goto out;
        if (!at_op(p, ':')) {
            unexpected(p, "':' of the conditional");
            goto out;
        }
        if (lex(p) < 0 || !(b = parse_expr(p, &hb)))
            goto out;
        *h = 1 + max2(hc, max2(ha, hb));
        if ((e = node(p, EX_COND, '?', off, *h))) {
            e->a = c;
            e->b = a;
            e->c = b;
        }
    }
out:
    p->nest--;
    return e;
}

Expr *expr_parse(Arena *arena, const char *text, const SrcPos *pos, KvxError *err)
{
    Parser p;
    memset(&p, 0, sizeof p);
    p.arena = arena;
    p.text = text;
    p.err = err;
    if (pos) {
        p.base = *pos;
        if (pos->file)
            p.base.file = arena_strdup(arena, pos->file);
    }
    int h;
    if (lex(&p) < 0)
        return NULL;
    Expr *e = parse_expr(&p, &h);
    if (e && p.tok.kind != T_END) {
        unexpected(&p, "an operator or the end of the expression");
        return NULL;
    }
    return e;
}

/* ---- evaluation ----------------------------------------------------------- */

static int fail_node(KvxError *err, const Expr *e, const char *fmt, ...) KVX_PRINTF(3, 4);
static int fail_node(KvxError *err, const Expr *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(err, KVX_EINPUT, &e->pos, fmt, ap);
    va_end(ap);
    return -1;
}

/* double -> int64 when in range (conversions never saturate silently). */
static int to_int(const Expr *e, const char *what, double d, int64_t *out, KvxError *err)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
        char buf[40];
        fmt_double(buf, sizeof buf, d);
        return fail_node(err, e, "%s: %s does not fit in a 64-bit integer", what, buf);
    }
    *out = (int64_t)d;
    return 0;
}

static int need_bool(const Expr *e, Value v, const char *where, KvxError *err)
{
    if (v.kind == VAL_BOOL)
        return 0;
    char buf[64];
    fmt_value(buf, sizeof buf, v);
    return fail_node(err, e, "expected a boolean %s, got %s %s (numbers and strings are not booleans; "
                             "compare them, e.g. x != 0)", where, kind_name(v), buf);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0; /* INT64_MIN % -1 is undefined in C */
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static int ipow(int64_t b, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r))
            return -1;
        e >>= 1;
        if (e && __builtin_mul_overflow(b, b, &b))
            return -1;
    }
    *out = r;
    return 0;
}

static int arith(const Expr *e, Value a, Value b, Value *out, KvxError *err)
{
    int op = e->op;
    char ta[64], tb[64];
    fmt_value(ta, sizeof ta, a);
    fmt_value(tb, sizeof tb, b);
    if (!val_is_num(a) || !val_is_num(b))
        return fail_node(err, e, "type mismatch: %s %s %s ('%s' needs numbers)", kind_name(a),
                         op_text(op), kind_name(b), op_text(op));
    int zero = b.kind == VAL_INT ? b.i == 0 : b.d == 0;
    if ((op == '/' || op == OP_IDIV || op == '%') && zero)
        return fail_node(err, e, "'%s' by zero (%s %s %s)", op_text(op), ta, op_text(op), tb);
    if (a.kind == VAL_INT && b.kind == VAL_INT) {
        int64_t x = a.i, y = b.i, r = 0;
        int ovf = 0;
        switch (op) {
        case '+': ovf = __builtin_add_overflow(x, y, &r); break;
        case '-': ovf = __builtin_sub_overflow(x, y, &r); break;
        case '*': ovf = __builtin_mul_overflow(x, y, &r); break;
        case '%': r = floor_mod(x, y); break;
        case OP_IDIV:
        case '/':
            if (x == INT64_MIN && y == -1) {
                ovf = 1;
            } else if (op == OP_IDIV) {
                r = floor_div(x, y);
            } else if (x % y == 0) {
                r = x / y;
            } else {
                *out = val_float((double)x / (double)y);
                return 0;
            }
            break;
        case '^':
            if (y < 0) {
                if (x == 0)
                    return fail_node(err, e, "'^': zero to a negative power (%s ^ %s)", ta, tb);
                *out = val_float(pow((double)x, (double)y));
                return 0;
            }
            ovf = ipow(x, y, &r) < 0;
            break;
        }
        if (ovf)
            return fail_node(err, e, "integer overflow: %s %s %s does not fit in 64 bits", ta,
                             op_text(op), tb);
        *out = val_int(r);
        return 0;
    }
    double x = val_num(a), y = val_num(b), r = 0;
    switch (op) {
    case '+': r = x + y; break;
    case '-': r = x - y; break;
    case '*': r = x * y; break;
    case '/': r = x / y; break;
    case OP_IDIV: r = floor(x / y); break;
    case '%':
        return fail_node(err, e, "'%%' needs integers, got %s %% %s", ta, tb);
    case '^':
        if (x == 0 && y < 0)
            return fail_node(err, e, "'^': zero to a negative power (%s ^ %s)", ta, tb);
        if (x < 0 && y != floor(y))
            return fail_node(err, e, "'^': negative number to a fractional power (%s ^ %s)", ta, tb);
        r = pow(x, y);
        break;
    }
    if (!isfinite(r))
        return fail_node(err, e, "float overflow: %s %s %s is not finite", ta, op_text(op), tb);
    *out = val_float(r);
    return 0;
}

static int compare(const Expr *e, Value a, Value b, Value *out, KvxError *err)
{
    int op = e->op, c;
    if (a.kind == VAL_INT && b.kind == VAL_INT) {
        c = (a.i > b.i) - (a.i < b.i);
    } else if (val_is_num(a) && val_is_num(b)) {
        double x = val_num(a), y = val_num(b);
        c = (x > y) - (x < y);
    } else if (a.kind == VAL_STR && b.kind == VAL_STR) {
        c = strcmp(a.s, b.s);
        c = (c > 0) - (c < 0);
    } else if (a.kind == VAL_BOOL && b.kind == VAL_BOOL) {
        if (op != OP_EQ && op != OP_NE)
            return fail_node(err, e, "type mismatch: boolean %s boolean (booleans compare with == and != only)",
                             op_text(op));
        c = (int)(a.i - b.i);
    } else {
        return fail_node(err, e, "type mismatch: %s %s %s", kind_name(a), op_text(op), kind_name(b));
    }
    int r = op == OP_EQ ? c == 0 : op == OP_NE ? c != 0 : op == '<' ? c < 0
          : op == OP_LE ? c <= 0 : op == '>' ? c > 0 : c >= 0;
    *out = val_bool(r);
    return 0;
}

static int eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err);

static int eval_call(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    const FnDef *f = function_find(e->name);
    KVX_ASSERT(f);
    if (!f->impl)
        return fail_node(err, e, "'%s' is a reference; it belongs in check:", e->name);
    Value small[4], *args = e->nargs <= 4 ? small : xmalloc((size_t)e->nargs * sizeof *args);
    int rc = 0;
    for (int i = 0; i < e->nargs && rc == 0; i++)
        rc = eval(e->args[i], env, &args[i], err);
    if (rc == 0)
        rc = f->impl(e, args, env, out, err);
    if (args != small)
        free(args);
    return rc;
}

static int eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    Value a, b;
    switch (e->kind) {
    case EX_LIT:
        *out = e->lit;
        return 0;
    case EX_IDENT: {
        int r = env && env->lookup ? env->lookup(env->ctx, e->name, out, err) : 0;
        if (r < 0) {
            if (err && !err->code) /* the lookup promised an error; never lose the failure */
                fail_node(err, e, "could not evaluate '%s'", e->name);
            return -1;
        }
        if (r == 0) {
            if (function_find(e->name))
                return fail_node(err, e, "'%s' is a function; call it as %s(...)", e->name, e->name);
            return fail_node(err, e, "unknown name '%s'", e->name);
        }
        if (out->kind == VAL_NONE)
            return fail_node(err, e, "name '%s' has no value", e->name);
        return 0;
    }
    case EX_UNARY:
        if (eval(e->a, env, &a, err) < 0)
            return -1;
        if (e->op == '!') {
            if (need_bool(e->a, a, "after '!'", err) < 0)
                return -1;
            *out = val_bool(!a.i);
            return 0;
        }
        if (!val_is_num(a))
            return fail_node(err, e, "type mismatch: '%s' needs a number, got a %s", op_text(e->op),
                             kind_name(a));
        if (e->op == '+' || a.kind == VAL_FLOAT) {
            *out = e->op == '+' ? a : val_float(-a.d);
            return 0;
        }
        if (a.i == INT64_MIN)
            return fail_node(err, e, "integer overflow: -(%lld) does not fit in 64 bits", (long long)a.i);
        *out = val_int(-a.i);
        return 0;
    case EX_BINARY:
        if (eval(e->a, env, &a, err) < 0)
            return -1;
        if (e->op == OP_AND || e->op == OP_OR) {
            const char *where = e->op == OP_AND ? "on the left of '&&'" : "on the left of '||'";
            if (need_bool(e->a, a, where, err) < 0)
                return -1;
            if (a.i == (e->op == OP_OR)) { /* false && x, true || x: x is not evaluated */
                *out = a;
                return 0;
            }
            if (eval(e->b, env, &b, err) < 0)
                return -1;
            where = e->op == OP_AND ? "on the right of '&&'" : "on the right of '||'";
            if (need_bool(e->b, b, where, err) < 0)
                return -1;
            *out = b;
            return 0;
        }
        if (eval(e->b, env, &b, err) < 0)
            return -1;
        return is_cmp(e->op) ? compare(e, a, b, out, err) : arith(e, a, b, out, err);
    case EX_COND:
        if (eval(e->a, env, &a, err) < 0 || need_bool(e->a, a, "before '?'", err) < 0)
            return -1;
        return eval(a.i ? e->b : e->c, env, out, err);
    case EX_CALL:
        return eval_call(e, env, out, err);
    }
    return fail_node(err, e, "internal error: bad expression node %d", (int)e->kind);
}

int expr_eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err)
{
    KVX_ASSERT(e && out);
    return eval(e, env, out, err);
}

/* ---- functions ------------------------------------------------------------ */

static int need_num(const Expr *call, const Value *args, int i, KvxError *err)
{
    if (val_is_num(args[i]))
        return 0;
    char buf[64];
    fmt_value(buf, sizeof buf, args[i]);
    return fail_node(err, call->args[i], "'%s' expects a number for argument %d, got %s %s",
                     call->name, i + 1, kind_name(args[i]), buf);
}

static int need_int(const Expr *call, const Value *args, int i, KvxError *err)
{
    if (args[i].kind == VAL_INT)
        return 0;
    char buf[64];
    fmt_value(buf, sizeof buf, args[i]);
    return fail_node(err, call->args[i], "'%s' expects an integer for argument %d, got %s %s",
                     call->name, i + 1, args[i].kind == VAL_FLOAT ? "float" : kind_name(args[i]), buf);
}

static const ElemType *need_type(const Expr *call, const Value *args, KvxError *err)
{
    char buf[64];
    if (args[0].kind == VAL_STR) {
        const ElemType *t = elem_type_find(args[0].s);
        for (int i = 0; !t && i < ET_COUNT; i++)
            if (strcmp(elem_types[i].ctype, args[0].s) == 0)
                t = &elem_types[i];
        if (t)
            return t;
    }
    fmt_value(buf, sizeof buf, args[0]);
    fail_node(err, call->args[0], "'%s' expects a type name, got %s %s (expected one of: %s)",
              call->name, kind_name(args[0]), buf, elem_type_names());
    return NULL;
}

static int num_less(Value a, Value b)
{
    if (a.kind == VAL_INT && b.kind == VAL_INT)
        return a.i < b.i;
    return val_num(a) < val_num(b);
}

static int fn_ceil_div(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0 || need_int(c, v, 1, err) < 0)
        return -1;
    int64_t a = v[0].i, b = v[1].i;
    if (b == 0)
        return fail_node(err, c, "'ceil_div' by zero (ceil_div(%lld, 0))", (long long)a);
    if (a == INT64_MIN && b == -1)
        return fail_node(err, c, "integer overflow: ceil_div(%lld, -1)", (long long)a);
    int64_t q = a / b, r = a % b;
    *out = val_int(r != 0 && ((r > 0) == (b > 0)) ? q + 1 : q);
    return 0;
}

static int min_max(const Expr *c, const Value *v, Value *out, KvxError *err, int want_max)
{
    Value best = v[0];
    for (int i = 0; i < c->nargs; i++) {
        if (need_num(c, v, i, err) < 0)
            return -1;
        if (want_max ? num_less(best, v[i]) : num_less(v[i], best))
            best = v[i];
    }
    *out = best;
    return 0;
}

static int fn_min(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return min_max(c, v, out, err, 0);
}

static int fn_max(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return min_max(c, v, out, err, 1);
}

/* round/floor/ceil: integers pass through, floats become integers. */
static int to_int_by(const Expr *c, const Value *v, double (*f)(double), Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    if (v[0].kind == VAL_INT) {
        *out = v[0];
        return 0;
    }
    int64_t i = 0;
    if (to_int(c, c->name, f(v[0].d), &i, err) < 0)
        return -1;
    *out = val_int(i);
    return 0;
}

static int fn_round(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, round, out, err);
}

static int fn_floor(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, floor, out, err);
}

static int fn_ceil(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    return to_int_by(c, v, ceil, out, err);
}

static int fn_abs(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    if (v[0].kind == VAL_FLOAT) {
        *out = val_float(fabs(v[0].d));
        return 0;
    }
    if (v[0].i == INT64_MIN)
        return fail_node(err, c, "integer overflow: abs(%lld)", (long long)v[0].i);
    *out = val_int(v[0].i < 0 ? -v[0].i : v[0].i);
    return 0;
}

/* Exact integer for powers of two (log2(1024) = 10, log2(0.5) = -1), else a
 * float. */
static int fn_log2(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_num(c, v, 0, err) < 0)
        return -1;
    double x = val_num(v[0]);
    if (x <= 0) {
        char buf[64];
        fmt_value(buf, sizeof buf, v[0]);
        return fail_node(err, c, "'log2' of a non-positive number (%s)", buf);
    }
    if (v[0].kind == VAL_INT && (v[0].i & (v[0].i - 1)) == 0) {
        *out = val_int(__builtin_ctzll((unsigned long long)v[0].i));
        return 0;
    }
    int ex;
    if (v[0].kind == VAL_FLOAT && frexp(x, &ex) == 0.5) {
        *out = val_int(ex - 1);
        return 0;
    }
    *out = val_float(log2(x));
    return 0;
}

static int fn_pow2(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0)
        return -1;
    int64_t k = v[0].i;
    if (k > 62)
        return fail_node(err, c, "integer overflow: pow2(%lld) does not fit in 64 bits", (long long)k);
    if (k < 0) /* 2^-k: a float, as 2^k with a negative exponent is */
        *out = val_float(ldexp(1.0, k < -1100 ? -1100 : (int)k));
    else
        *out = val_int((int64_t)1 << k);
    return 0;
}

static int fn_clamp(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    for (int i = 0; i < 3; i++)
        if (need_num(c, v, i, err) < 0)
            return -1;
    if (num_less(v[2], v[1])) {
        char lo[64], hi[64];
        fmt_value(lo, sizeof lo, v[1]);
        fmt_value(hi, sizeof hi, v[2]);
        return fail_node(err, c, "'clamp' with lo > hi (%s > %s)", lo, hi);
    }
    *out = num_less(v[0], v[1]) ? v[1] : num_less(v[2], v[0]) ? v[2] : v[0];
    return 0;
}

static int fn_align_up(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (need_int(c, v, 0, err) < 0 || need_int(c, v, 1, err) < 0)
        return -1;
    int64_t x = v[0].i, a = v[1].i, r;
    if (a <= 0)
        return fail_node(err, c->args[1], "'align_up' needs a positive alignment, got %lld", (long long)a);
    int64_t rem = floor_mod(x, a);
    if (rem == 0) {
        *out = v[0];
        return 0;
    }
    if (__builtin_add_overflow(x, a - rem, &r))
        return fail_node(err, c, "integer overflow: align_up(%lld, %lld)", (long long)x, (long long)a);
    *out = val_int(r);
    return 0;
}

/* int()/float() of a string read it as a number literal, with an optional sign. */
static int parse_number_text(const Expr *c, const char *s, Value *out, KvxError *err)
{
    const char *q = s, *why = "not a number";
    int neg = 0;
    size_t len = 0;
    if (*q == '-' || *q == '+')
        neg = *q++ == '-';
    if (is_digit(*q) && scan_number(q, &len, out, &why) == 0 && q[len] == 0) {
        if (neg && out->kind == VAL_FLOAT)
            out->d = -out->d;
        else if (neg)
            out->i = -out->i; /* a literal is at most INT64_MAX */
        return 0;
    }
    return fail_node(err, c, "'%s' cannot convert \"%.40s\": %s", c->name, s,
                     is_digit(*q) ? why : "not a number");
}

static int fn_int(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_STR && parse_number_text(c, x.s, &x, err) < 0)
        return -1;
    switch (x.kind) {
    case VAL_INT: *out = x; return 0;
    case VAL_BOOL: *out = val_int(x.i); return 0;
    case VAL_FLOAT: {
        int64_t i = 0;
        if (to_int(c, "int", trunc(x.d), &i, err) < 0)
            return -1;
        *out = val_int(i);
        return 0;
    }
    default: return need_num(c, v, 0, err);
    }
}

static int fn_float(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_STR && parse_number_text(c, x.s, &x, err) < 0)
        return -1;
    if (x.kind == VAL_BOOL) {
        *out = val_float((double)x.i);
        return 0;
    }
    if (!val_is_num(x))
        return need_num(c, v, 0, err);
    *out = val_float(val_num(x));
    return 0;
}

static int fn_str(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    if (v[0].kind == VAL_STR) {
        *out = v[0];
        return 0;
    }
    if (!env || !env->arena)
        return fail_node(err, c, "internal error: 'str' needs an arena in the environment");
    *out = val_str(val_text(env->arena, v[0]));
    return 0;
}

/* hex(x): the text "0x..." of a non-negative integer, for masks in templates. */
static int fn_hex(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    Value x = v[0];
    if (x.kind == VAL_BOOL)
        x = val_int(x.i);
    if (x.kind != VAL_INT || x.i < 0) {
        char buf[64];
        fmt_value(buf, sizeof buf, v[0]);
        return fail_node(err, c, "hex() wants a non-negative integer, not %s", buf);
    }
    if (!env || !env->arena)
        return fail_node(err, c, "internal error: 'hex' needs an arena in the environment");
    *out = val_str(arena_printf(env->arena, "0x%llx", (unsigned long long)x.i));
    return 0;
}

static int fn_ctype(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_str(t->ctype);
    return 0;
}

static int fn_sizeof(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_int(t->size);
    return 0;
}

static int fn_is_float(const Expr *c, const Value *v, const ExprEnv *env, Value *out, KvxError *err)
{
    const ElemType *t = need_type(c, v, err);
    if (!t)
        return -1;
    *out = val_bool(t->is_float);
    return 0;
}

/* ---- walking and printing ------------------------------------------------- */

void expr_visit_idents(const Expr *e, void (*visit)(void *ctx, const Expr *ident), void *ctx)
{
    if (!e)
        return;
    switch (e->kind) {
    case EX_IDENT: visit(ctx, e); break;
    case EX_UNARY: expr_visit_idents(e->a, visit, ctx); break;
    case EX_BINARY:
        expr_visit_idents(e->a, visit, ctx);
        expr_visit_idents(e->b, visit, ctx);
        break;
    case EX_COND:
        expr_visit_idents(e->a, visit, ctx);
        expr_visit_idents(e->b, visit, ctx);
        expr_visit_idents(e->c, visit, ctx);
        break;
    case EX_CALL:
        for (int i = 0; i < e->nargs; i++)
            expr_visit_idents(e->args[i], visit, ctx);
        break;
    case EX_LIT: break;
    }
}

/* Binding strength, loosest 1 (conditional) to tightest 9 (operands). */
enum { PREC_COND = 1, PREC_OR, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_POW, PREC_ATOM };

static int prec(const Expr *e)
{
    switch (e->kind) {
    case EX_COND: return PREC_COND;
    case EX_UNARY: return PREC_UNARY;
    case EX_LIT: /* a negative number (never parsed, but built by callers) reads as unary minus */
        return (e->lit.kind == VAL_INT && e->lit.i < 0) ||
               (e->lit.kind == VAL_FLOAT && signbit(e->lit.d)) ? PREC_UNARY : PREC_ATOM;
    case EX_BINARY:
        switch (e->op) {
        case OP_OR: return PREC_OR;
        case OP_AND: return PREC_AND;
        case '+': case '-': return PREC_ADD;
        case '*': case '/': case '%': case OP_IDIV: return PREC_MUL;
        case '^': return PREC_POW;
        default: return PREC_CMP;
        }
    default: return PREC_ATOM;
    }
}

static void print_lit(Value v, StrBuf *out)
{
    char buf[64];
    switch (v.kind) {
    case VAL_STR:
        sb_putc(out, '"');
        for (const char *s = v.s; *s; s++) {
            switch (*s) {
            case '"': sb_puts(out, "\\\""); break;
            case '\\': sb_puts(out, "\\\\"); break;
            case '\n': sb_puts(out, "\\n"); break;
            case '\t': sb_puts(out, "\\t"); break;
            default: sb_putc(out, *s); break;
            }
        }
        sb_putc(out, '"');
        break;
    case VAL_FLOAT:
        fmt_double(buf, sizeof buf, v.d);
        sb_puts(out, buf);
        if (!strpbrk(buf, ".en")) /* "1" would read back as an integer */
            sb_puts(out, ".0");
        break;
    default:
        fmt_value(buf, sizeof buf, v);
        sb_puts(out, buf);
        break;
    }
}

/* Print e, parenthesised when it binds looser than need. */
static void print(const Expr *e, int need, StrBuf *out)
{
    int p = prec(e);
    if (p < need)
        sb_putc(out, '(');
    switch (e->kind) {
    case EX_LIT: print_lit(e->lit, out); break;
    case EX_IDENT: sb_puts(out, e->name); break;
    case EX_UNARY:
        sb_puts(out, op_text(e->op));
        print(e->a, PREC_UNARY, out);
        break;
    case EX_BINARY:
        if (p == PREC_POW) { /* primary '^' unary */
            print(e->a, PREC_ATOM, out);
            sb_putc(out, '^');
            print(e->b, PREC_UNARY, out);
        } else { /* left-associative; comparisons do not chain at all */
            print(e->a, p == PREC_CMP ? p + 1 : p, out);
            sb_printf(out, " %s ", op_text(e->op));
            print(e->b, p + 1, out);
        }
        break;
    case EX_COND:
        print(e->a, PREC_OR, out);
        sb_puts(out, " ? ");
        print(e->b, PREC_COND, out);
        sb_puts(out, " : ");
        print(e->c, PREC_COND, out);
        break;
    case EX_CALL:
        sb_printf(out, "%s(", e->name);
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                sb_puts(out, ", ");
            print(e->args[i], PREC_COND, out);
        }
        sb_putc(out, ')');
        break;
    }
    if (p < need)
        sb_putc(out, ')');
}

void expr_print(const Expr *e, StrBuf *out) { print(e, PREC_COND, out); }
