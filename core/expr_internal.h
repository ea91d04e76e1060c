/* expr_internal: what the files of the expression language share; internal
 * to gen/expr*.c (core/expr.h is the public face).
 *
 *   expr.c           parser and evaluator: expr_parse, expr_eval
 *   expr_lex.c       lexer: tokens, literals, source positions
 *   expr_fn.c        the function table (built-ins and reference names) and
 *                    the built-in functions
 *   expr_text.c      values and their text forms, expr_print,
 *                    expr_visit_idents */
#ifndef KVX_EXPR_INTERNAL_H
#define KVX_EXPR_INTERNAL_H

#include "expr.h"

/* ---- lexer (expr_lex.c) --------------------------------------------------- */

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

static inline int is_digit(int c) { return c >= '0' && c <= '9'; }

/* Read the next token into p->tok.  0 or -1 with the error set. */
int expr_lex(Parser *p);
/* The source position of byte off of p->text: p->base on the first line,
 * columns from 1 after a newline. */
SrcPos expr_lex_pos_at(Parser *p, size_t off);
/* Set p->err (KVX_EINPUT) at byte off of p->text; returns -1. */
int expr_lex_fail_at(Parser *p, size_t off, const char *fmt, ...) KVX_PRINTF(3, 4);
/* "unexpected 'TOKEN' (expected <expected>)" at the current token; returns -1. */
int expr_lex_unexpected(Parser *p, const char *expected);
/* Scan a number at s: 42, 0x2A, 1.5, 1e-3, 16M.  *len gets the bytes used.
 * 0, or -1 with *why naming the problem. */
int expr_lex_number(const char *s, size_t *len, Value *out, const char **why);

/* ---- the function table (expr_fn.c) --------------------------------------- */

/* A built-in: args holds call->nargs evaluated arguments (their count already
 * checked).  0 with *out set, or -1 with err set at the call or an argument. */
typedef int (*FnImpl)(const Expr *call, const Value *args, const ExprEnv *env,
                      Value *out, KvxError *err);

typedef struct FnDef {
    const char *name;
    int min_args, max_args;
    FnImpl impl; /* NULL for a reference */
} FnDef;

/* The built-in or reference called name; NULL when there is none. */
const FnDef *expr_fn_find(const char *name);
/* Append the names of all functions, built-ins then references, separated by
 * ", " (for "unknown function" messages). */
void expr_fn_list(StrBuf *sb);

/* ---- evaluation (expr.c) -------------------------------------------------- */

/* Set err (KVX_EINPUT) at e's position; returns -1. */
int expr_fail_node(KvxError *err, const Expr *e, const char *fmt, ...) KVX_PRINTF(3, 4);

/* Floor modulo, the sign of b (b != 0): `%` and align_up. */
static inline int64_t floor_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0; /* INT64_MIN % -1 is undefined in C */
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* ---- text (expr_text.c) --------------------------------------------------- */

/* Text of a value for messages: strings quoted and cut short. */
void expr_fmt_value(char *buf, size_t n, Value v);
/* "number", "string", "boolean" or "nothing", for messages. */
const char *expr_kind_name(Value v);
/* The source spelling of an operator code (Expr.op): "+", "<=", "&&", ... */
const char *expr_op_text(int op);

#endif
