/* val: the values of the kvx expression language (expr.h): constructors,
 * val_num, val_text (display and template substitution) and val_equal, the
 * equality the language defines (1 == 1.0). */
#include "expr_internal.h"

#include <string.h>

Value val_int(int64_t i) { return (Value){.kind = VAL_INT, .i = i}; }
Value val_float(double d) { return (Value){.kind = VAL_FLOAT, .d = d}; }
Value val_str(const char *s) { return (Value){.kind = VAL_STR, .s = s}; }
Value val_bool(int b) { return (Value){.kind = VAL_BOOL, .i = b != 0}; }

int val_is_num(Value v) { return v.kind == VAL_INT || v.kind == VAL_FLOAT; }

double val_num(Value v)
{
    return v.kind == VAL_INT ? (double)v.i : v.kind == VAL_FLOAT ? v.d : 0;
}

/* An integral float prints like an integer here ("1", not "1.0"): val_text is
 * for display and substitution; expr_print keeps a float literal a float. */
const char *val_text(Arena *a, Value v)
{
    char buf[64];
    if (v.kind == VAL_STR)
        return v.s;
    expr_fmt_value(buf, sizeof buf, v);
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
