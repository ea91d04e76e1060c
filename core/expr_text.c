/* expr_text: the text forms of the kvx expression language: the forms that
 * messages quote (expr_fmt_value, expr_kind_name), and trees
 * printed back as canonical source (expr_print), with the other tree walk,
 * expr_visit_idents.  Floats print as the shortest text that reads back as
 * the same double, so everything printed re-parses to the same value. */
#include "expr_internal.h"
#include "num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void expr_fmt_value(char *buf, size_t n, Value v)
{
    switch (v.kind) {
    case VAL_INT: snprintf(buf, n, "%lld", (long long)v.i); break;
    case VAL_FLOAT: num_write_double(buf, n, v.d, NUM_SHORTEST); break;
    case VAL_STR: snprintf(buf, n, "\"%.40s%s\"", v.s, strlen(v.s) > 40 ? "..." : ""); break;
    case VAL_BOOL: snprintf(buf, n, "%s", v.i ? "true" : "false"); break;
    default: snprintf(buf, n, "nothing"); break;
    }
}

const char *expr_kind_name(Value v)
{
    switch (v.kind) {
    case VAL_INT: case VAL_FLOAT: return "number";
    case VAL_STR: return "string";
    case VAL_BOOL: return "boolean";
    default: return "nothing";
    }
}

/* ---- operators ------------------------------------------------------------ */

const char *expr_op_text(int op)
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
        num_write_double(buf, sizeof buf, v.d, NUM_SHORTEST);
        sb_puts(out, buf);
        if (!strpbrk(buf, ".en")) /* "1" would read back as an integer */
            sb_puts(out, ".0");
        break;
    default:
        expr_fmt_value(buf, sizeof buf, v);
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
        sb_puts(out, expr_op_text(e->op));
        print(e->a, PREC_UNARY, out);
        break;
    case EX_BINARY:
        if (p == PREC_POW) { /* primary '^' unary */
            print(e->a, PREC_ATOM, out);
            sb_putc(out, '^');
            print(e->b, PREC_UNARY, out);
        } else { /* left-associative; comparisons do not chain at all */
            print(e->a, p == PREC_CMP ? p + 1 : p, out);
            sb_printf(out, " %s ", expr_op_text(e->op));
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
