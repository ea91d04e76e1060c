/* expr: the one small expression language of kvx.
 *
 * It serves constraints (`where:`), sizes, launch geometry, kernel arguments,
 * checks, metrics, `let:` definitions and template placeholders.  Grammar, from
 * loosest to tightest binding:
 *
 *   expr    := cond
 *   cond    := or ( '?' expr ':' expr )?
 *   or      := and ( '||' and )*
 *   and     := cmp ( '&&' cmp )*
 *   cmp     := add ( ('=='|'!='|'<'|'<='|'>'|'>=') add )?
 *   add     := mul ( ('+'|'-') mul )*
 *   mul     := unary ( ('*'|'/'|'//'|'%') unary )*
 *   unary   := ('-'|'!'|'+') unary | pow
 *   pow     := primary ( '^' unary )?          right-associative
 *   primary := NUMBER | STRING | 'true' | 'false' | IDENT | IDENT '(' args ')'
 *            | '(' expr ')'
 *
 * Numbers: 42, 0x2A, 1.5, .5, 1e-3, 2^24, and binary size suffixes K, M, G on
 * integers (16M = 16777216; upper-case only, so 1e6 stays a float).
 * Strings: "..." or '...' with \\ \" \' \n \t escapes.
 *
 * Values are 64-bit integers, doubles, strings or booleans.  + - * % ^ on two
 * integers stay integers (overflow is an error; % is floor modulo, matching //);
 * / is real division whose result is turned back into an integer when both
 * operands are integers and it is exact; // is floor division.  Numbers are not
 * booleans: && || ! and ?: need true/false (`n != 0`), and && || short-circuit.
 * Comparisons of a number with a string are a type error, never false.
 *
 * Identifiers are resolved by the caller's environment (axes, `let:` names,
 * device facts, buffer names); functions are a fixed set (expr_function_names).
 * Every error carries the source position of the offending token: the caller
 * gives the position of the expression's first character. */
#ifndef KVX_EXPR_H
#define KVX_EXPR_H

#include "util.h"

typedef enum { VAL_NONE = 0, VAL_INT, VAL_FLOAT, VAL_STR, VAL_BOOL } ValKind;

typedef struct Value {
    ValKind kind;
    int64_t i;       /* VAL_INT, and VAL_BOOL as 0/1 */
    double d;        /* VAL_FLOAT */
    const char *s;   /* VAL_STR: arena-owned or static */
} Value;

Value val_int(int64_t i);
Value val_float(double d);
Value val_str(const char *s);
Value val_bool(int b);
/* Numeric value as double (ints converted); 0 for strings. */
double val_num(Value v);
int val_is_num(Value v);
/* Text form: integers in decimal, floats shortest round-trip laid out as
 * "%.17g" would (0.05, 0.001, 1e-05, 1e+20; an integral float prints like an
 * integer: 1.0 -> "1"; expr_print writes float literals as "1.0" so that they
 * stay floats), strings as is, booleans true/false.  Arena-allocated (strings
 * are returned as is). */
const char *val_text(Arena *a, Value v);
/* Equality as the language defines it (1 == 1.0 is true, "a" == 1 is 0). */
int val_equal(Value a, Value b);

typedef enum {
    EX_LIT,    /* lit */
    EX_IDENT,  /* name */
    EX_UNARY,  /* op, a */
    EX_BINARY, /* op, a, b */
    EX_COND,   /* a ? b : c */
    EX_CALL,   /* name(args[0..nargs)) */
} ExprKind;

/* Operators are stored as their first character, or one of these codes. */
enum {
    OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_AND, OP_OR, OP_IDIV,
};

typedef struct Expr {
    ExprKind kind;
    int op;
    Value lit;
    const char *name;
    struct Expr *a, *b, *c;
    struct Expr **args;
    int nargs;
    SrcPos pos;        /* where this node's token starts */
} Expr;

/* The environment an expression is evaluated in. */
typedef struct ExprEnv {
    /* Resolve an identifier: return 1 and fill *out when known, 0 when not,
     * -1 after filling err (e.g. a `let:` that failed to evaluate). */
    int (*lookup)(void *ctx, const char *name, Value *out, KvxError *err);
    void *ctx;
    Arena *arena;      /* for strings made during evaluation */
} ExprEnv;

/* Parse text (the whole string must be one expression).  pos is the position of
 * text[0]; nodes and strings live in arena.  NULL with err set on a syntax
 * error, an unknown function or a wrong argument count. */
Expr *expr_parse(Arena *arena, const char *text, const SrcPos *pos, KvxError *err);

/* Evaluate.  0 or -1 with err set (position of the failing node): unknown
 * identifier, type mismatch, division by zero, overflow, domain errors. */
int expr_eval(const Expr *e, const ExprEnv *env, Value *out, KvxError *err);

/* Call visit for every identifier node (not function names), in source order. */
void expr_visit_idents(const Expr *e, void (*visit)(void *ctx, const Expr *ident), void *ctx);

/* Print the expression back in canonical form (fully parenthesised where
 * needed); used for reproducing commands and golden files. */
void expr_print(const Expr *e, StrBuf *out);

/* Functions of the language, NULL-terminated, for messages and docs. */
extern const char *const expr_function_names[];

/* Reference functions (count_below, histogram, sum, ...) are parsed as calls
 * like any other but are not evaluated by expr_eval: they name host reference
 * computations that verify.c performs on buffers.  expr_is_reference() says
 * whether a call name is one of them. */
int expr_is_reference(const char *name);

#endif
