/* expr_lex: the lexer of the kvx expression language: tokens, number and
 * string literals (syntax in expr.h), and the source position of any byte of
 * the expression for messages.  The parser (expr.c) pulls one token at a time
 * with expr_lex; the Parser it fills is in expr_internal.h.
 *
 * A size suffix (K M G) applies to integer literals only. */
#include "expr_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- lexer ---------------------------------------------------------------- */

static int is_ident_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
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
SrcPos expr_lex_pos_at(Parser *p, size_t off)
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

int expr_lex_fail_at(Parser *p, size_t off, const char *fmt, ...)
{
    SrcPos pos = expr_lex_pos_at(p, off);
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(p->err, KVX_EINPUT, &pos, fmt, ap);
    va_end(ap);
    return -1;
}

/* The digits of a hex literal after its 0x, at *q (moved past them). */
static int number_hex(const char **q, uint64_t *u, const char **why)
{
    if (hex_value((unsigned char)**q) < 0) {
        *why = "malformed number";
        return -1;
    }
    for (; hex_value((unsigned char)**q) >= 0; (*q)++) {
        if (*u > (uint64_t)INT64_MAX >> 4) {
            *why = "integer literal out of range";
            return -1;
        }
        *u = *u * 16 + (uint64_t)hex_value((unsigned char)**q);
    }
    return 0;
}

/* A decimal literal from s, *q moved past it: an integer into *u, or with a
 * fraction or an exponent a float (*is_float = 1) into *d. */
static int number_decimal(const char *s, const char **q, uint64_t *u, double *d, int *is_float,
                          const char **why)
{
    const char *c = *q;
    for (; is_digit(*c); c++) {
        /* Compared before multiplying: u * 10 itself may pass 2^64 and wrap
         * (18446744073709551716 would be 100). */
        if (*is_float < 0 || *u > ((uint64_t)INT64_MAX - (uint64_t)(*c - '0')) / 10)
            *is_float = -1; /* too large for an int: an error unless it is a float */
        else
            *u = *u * 10 + (uint64_t)(*c - '0');
    }
    if (*c == '.' && is_digit(c[1])) {
        *is_float = 1;
        for (c++; is_digit(*c); c++)
            ;
    }
    if ((*c == 'e' || *c == 'E') &&
        (is_digit(c[1]) || ((c[1] == '+' || c[1] == '-') && is_digit(c[2])))) {
        *is_float = 1;
        for (c += 2; is_digit(*c); c++)
            ;
    }
    *q = c;
    if (*is_float < 0) {
        *why = "integer literal out of range";
        return -1;
    }
    if (*is_float) {
        errno = 0;
        *d = strtod(s, NULL);
        if (isinf(*d)) {
            *why = "number out of range";
            return -1;
        }
    }
    return 0;
}

/* A size suffix at *q: K, M or G multiplies an integer by 2^10, 2^20, 2^30. */
static int number_suffix(const char **q, uint64_t *u, int is_float, const char **why)
{
    if (**q != 'K' && **q != 'M' && **q != 'G')
        return 0;
    int shift = **q == 'K' ? 10 : **q == 'M' ? 20 : 30;
    if (is_float) {
        *why = "a size suffix (K, M, G) needs an integer";
        return -1;
    }
    if (*u > (uint64_t)INT64_MAX >> shift) {
        *why = "integer literal out of range";
        return -1;
    }
    *u <<= shift;
    (*q)++;
    return 0;
}

int expr_lex_number(const char *s, size_t *len, Value *out, const char **why)
{
    const char *q = s;
    int is_float = 0;
    uint64_t u = 0;
    double d = 0;
    int rc;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        q += 2;
        rc = number_hex(&q, &u, why);
    } else {
        rc = number_decimal(s, &q, &u, &d, &is_float, why);
    }
    if (!rc)
        rc = number_suffix(&q, &u, is_float, why);
    if (!rc && (is_ident_char(*q) || *q == '.')) {
        *why = "malformed number";
        rc = -1;
    }
    if (rc) {
        /* The whole malformed word, for the message. */
        while (is_ident_char(*q) || *q == '.')
            q++;
        *len = (size_t)(q - s);
        return -1;
    }
    *len = (size_t)(q - s);
    *out = is_float ? val_float(d) : val_int((int64_t)u);
    return 0;
}

/* A string literal at byte i (its quote): escapes \\ \" \' \n \t. */
static int lex_string(Parser *p, size_t i, Token *k)
{
    const char *t = p->text;
    int c = (unsigned char)t[i];
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
        case 0: return expr_lex_fail_at(p, i, "unterminated string");
        default:
            return expr_lex_fail_at(p, j - 1, "unknown escape '\\%c' in string (expected one of: \\\\ \\\" \\' \\n \\t)",
                                t[j]);
        }
    }
    if (!t[j])
        return expr_lex_fail_at(p, i, "unterminated string");
    s[n] = 0;
    k->kind = T_STR;
    k->len = j + 1 - i;
    k->v = val_str(s);
    return 0;
}

/* An operator at byte i, two characters before one; any other character is
 * an error naming it. */
static int lex_op(Parser *p, size_t i, Token *k)
{
    static const struct { const char *text; int op; } ops[] = {
        {"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
        {"&&", OP_AND}, {"||", OP_OR}, {"//", OP_IDIV},
    };
    const char *t = p->text;
    int c = (unsigned char)t[i];
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
        return expr_lex_fail_at(p, i, "unexpected '%c' (did you mean '%c%c'?)", c, c, c);
    if (c >= 0x20 && c < 0x7f)
        return expr_lex_fail_at(p, i, "unexpected character '%c'", c);
    return expr_lex_fail_at(p, i, "unexpected byte 0x%02x", (unsigned)c);
}

int expr_lex(Parser *p)
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
        if (expr_lex_number(t + i, &k->len, &k->v, &why) < 0)
            return expr_lex_fail_at(p, i, "%s '%.*s'", why, (int)(k->len > 40 ? 40 : k->len), t + i);
        return 0;
    }
    if (is_ident_start(c)) {
        k->kind = T_IDENT;
        while (is_ident_char(t[i + k->len]))
            k->len++;
        return 0;
    }
    if (c == '"' || c == '\'')
        return lex_string(p, i, k);
    return lex_op(p, i, k);
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

int expr_lex_unexpected(Parser *p, const char *expected)
{
    char buf[64];
    return expr_lex_fail_at(p, p->tok.off, "unexpected %s (expected %s)", tok_desc(p, buf, sizeof buf), expected);
}
