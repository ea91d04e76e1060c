/* test_expr: the expression language as a spec author meets it: values,
 * precedence, the int/float rules, errors with their exact positions, the
 * functions, and the printer's round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/expr.h"

/* ---- fixture: an environment with a few names ------------------------------ */

static int lookup(void *ctx, const char *name, Value *out, KvxError *err)
{
    (void)ctx;
    if (strcmp(name, "n") == 0) { *out = val_int(1024); return 1; }
    if (strcmp(name, "x") == 0) { *out = val_int(3); return 1; }
    if (strcmp(name, "hit_rate") == 0) { *out = val_float(0.05); return 1; }
    if (strcmp(name, "s") == 0) { *out = val_str("abc"); return 1; }
    if (strcmp(name, "T") == 0) { *out = val_str("u32"); return 1; }
    if (strcmp(name, "ok") == 0) { *out = val_bool(1); return 1; }
    if (strcmp(name, "broken") == 0) {
        SrcPos p = {"let.yaml", 3, 9};
        kvx_error_set(err, KVX_EINPUT, &p, "let 'broken' failed");
        return -1;
    }
    return 0;
}

static Arena *arena;
static const SrcPos base = {"x.yaml", 7, 12};

static int setup(void **state) { (void)state; arena = arena_new(); return 0; }
static int teardown(void **state) { (void)state; arena_free(arena); return 0; }

/* Parse and evaluate; on failure err holds the message. */
static int run(const char *text, Value *out, KvxError *err)
{
    ExprEnv env = {lookup, NULL, arena};
    kvx_error_clear(err);
    Expr *e = expr_parse(arena, text, &base, err);
    if (!e)
        return -1;
    return expr_eval(e, &env, out, err);
}

static Value ev(const char *text)
{
    KvxError err = {0};
    Value v = {0};
    if (run(text, &v, &err) < 0) {
        kvx_error_print(&err, stderr);
        fail_msg("'%s' failed: %s", text, err.msg);
    }
    return v;
}

static void check_int(const char *text, int64_t want)
{
    Value v = ev(text);
    if (v.kind != VAL_INT || v.i != want)
        fail_msg("'%s': want int %lld, got kind %d (%s)", text, (long long)want, v.kind,
                 val_text(arena, v));
}

static void check_float(const char *text, double want)
{
    Value v = ev(text);
    if (v.kind != VAL_FLOAT || fabs(v.d - want) > 1e-12 * fabs(want))
        fail_msg("'%s': want float %.17g, got kind %d (%s)", text, want, v.kind, val_text(arena, v));
}

static void check_bool(const char *text, int want)
{
    Value v = ev(text);
    if (v.kind != VAL_BOOL || v.i != want)
        fail_msg("'%s': want %s, got kind %d (%s)", text, want ? "true" : "false", v.kind,
                 val_text(arena, v));
}

static void check_str(const char *text, const char *want)
{
    Value v = ev(text);
    if (v.kind != VAL_STR || strcmp(v.s, want) != 0)
        fail_msg("'%s': want \"%s\", got kind %d (%s)", text, want, v.kind, val_text(arena, v));
}

/* The expression fails (parsing or evaluating) with a message starting with
 * msg, at x.yaml:line:col. */
static void check_err(const char *text, const char *msg, int line, int col)
{
    KvxError err = {0};
    Value v;
    if (run(text, &v, &err) == 0)
        fail_msg("'%s' should fail with '%s' but gave %s", text, msg, val_text(arena, v));
    if (strncmp(err.msg, msg, strlen(msg)) != 0 || err.line != line || err.col != col ||
        strcmp(err.file, "x.yaml") != 0 || err.code != KVX_EINPUT)
        fail_msg("'%s': want %d:%d: %s...\n got %s:%d:%d: %s (code %d)", text, line, col, msg,
                 err.file, err.line, err.col, err.msg, err.code);
    kvx_error_clear(&err);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_precedence(void **state)
{
    (void)state;
    check_int("2^3^2", 512);
    check_int("(2^3)^2", 64);
    check_int("-2^2", -4);
    check_int("(-2)^2", 4);
    check_int("1 + 2 * 3", 7);
    check_int("(1 + 2) * 3", 9);
    check_int("10 - 3 - 2", 5);
    check_int("100 / 10 / 5", 2);
    check_int("2 * 3^2", 18);
    check_int("7 // 2 * 2", 6);
}

static void test_int_float_rules(void **state)
{
    (void)state;
    check_float("2^-1 * 4", 2.0);
    check_int("1 + 1", 2);
    check_float("1 + 1.0", 2.0);
    check_float("7 / 2", 3.5);
    check_int("8 / 2", 4);
    check_float("8.0 / 2", 4.0);
    check_int("7 // 2", 3);
    check_int("-7 // 2", -4);
    check_float("7.5 // 2", 3.0);
    check_int("-7 % 3", 2);  /* floor modulo, consistent with // */
    check_int("7 % -3", -2);
    check_int("2^10", 1024);
    check_float("2.0^3", 8.0);
    check_float("1e3", 1000.0);
    check_float(".5", 0.5);
    check_float("hit_rate * 1000", 50.0);
    check_int("round(hit_rate * 1000)", 50);
    check_int("-(-5)", 5);
    check_int("+x", 3);
    check_float("-1.5 + 0", -1.5);
    check_bool("1 == 1.0", 1);
    check_bool("2 < 2.5", 1);
    check_int("9223372036854775807", INT64_MAX);
    check_int("-9223372036854775807 - 1", INT64_MIN);
}

static void test_suffixes_and_hex(void **state)
{
    (void)state;
    check_bool("16M == 2^24", 1);
    check_int("4K", 4096);
    check_int("1G", 1073741824);
    check_int("3M + 1", 3 * 1048576 + 1);
    check_int("0x10", 16);
    check_int("0x2A", 42);
    check_int("0XfF", 255);
    check_int("0x10K", 16384);
    check_err("16k", "malformed number '16k'", 7, 12);
    check_err("1.5K", "a size suffix (K, M, G) needs an integer '1.5K'", 7, 12);
    check_err("1 + 0x", "malformed number '0x'", 7, 16);
    check_err("1.2.3", "malformed number", 7, 12);
    check_err("9223372036854775808", "integer literal out of range", 7, 12);
    check_err("0x8000000000000000", "integer literal out of range", 7, 12);
    check_err("8G * 1G * 1G", "integer overflow: 8589934592 * 1073741824", 7, 15);
    check_err("1e999", "number out of range", 7, 12);
}

static void test_overflow(void **state)
{
    (void)state;
    check_int("2^62", (int64_t)1 << 62);
    check_err("2^63", "integer overflow: 2 ^ 63 does not fit in 64 bits", 7, 13);
    check_err("9223372036854775807 + 1", "integer overflow: 9223372036854775807 + 1", 7, 32);
    check_err("-9223372036854775807 - 2", "integer overflow", 7, 33);
    check_err("3037000500 * 3037000500", "integer overflow", 7, 23);
    check_err("-(-9223372036854775807 - 1)", "integer overflow: -(-9223372036854775808)", 7, 12);
    check_err("(-9223372036854775807 - 1) // -1", "integer overflow", 7, 39);
    check_err("1e308 * 10", "float overflow: 1e+308 * 10 is not finite", 7, 18);
    check_err("round(1e300)", "round: 1e+300 does not fit in a 64-bit integer", 7, 12);
    check_err("int(1e19)", "int: 1e+19 does not fit", 7, 12);
    check_err("abs(-9223372036854775807 - 1)", "integer overflow: abs(", 7, 12);
    check_err("pow2(63)", "integer overflow: pow2(63)", 7, 12);
    check_err("align_up(9223372036854775807, 2)", "integer overflow: align_up(", 7, 12);
}

static void test_division(void **state)
{
    (void)state;
    check_err("1 / 0", "'/' by zero", 7, 14);
    check_err("n // (x - 3)", "'//' by zero", 7, 14);
    check_err("5 % 0", "'%' by zero", 7, 14);
    check_err("1.0 / 0.0", "'/' by zero", 7, 16);
    check_err("5.5 % 2", "'%' needs integers", 7, 16);
    check_err("ceil_div(n, 0)", "'ceil_div' by zero", 7, 12);
    check_int("ceil_div(10, 3)", 4);
    check_int("ceil_div(9, 3)", 3);
    check_int("ceil_div(-10, 3)", -3);
    check_int("ceil_div(n, 256)", 4);
    check_err("ceil_div(n, 2.5)", "'ceil_div' expects an integer for argument 2, got float 2.5", 7, 24);
}

static void test_strings(void **state)
{
    (void)state;
    check_bool("\"abc\" == 'abc'", 1);
    check_bool("s == \"abc\"", 1);
    check_bool("s != \"abd\"", 1);
    check_bool("\"abc\" < \"abd\"", 1);
    check_bool("'b' >= 'a'", 1);
    check_str("'it\\'s'", "it's");
    check_str("\"a\\\"b\\\\c\\n\\t\"", "a\"b\\c\n\t");
    check_err("s == 1", "type mismatch: string == number", 7, 14);
    check_err("1 < 'a'", "type mismatch: number < string", 7, 14);
    check_err("s + 1", "type mismatch: string + number", 7, 14);
    check_err("ok == 1", "type mismatch: boolean == number", 7, 15);
    check_err("ok < true", "type mismatch: boolean < boolean", 7, 15);
    check_bool("ok == true", 1);
    check_err("'abc", "unterminated string", 7, 12);
    check_err("1 + \"a\\qb\"", "unknown escape '\\q'", 7, 18);
}

static void test_conditional(void **state)
{
    (void)state;
    check_int("true ? 1 : 2", 1);
    check_str("x > 2 ? \"big\" : \"small\"", "big");
    check_int("false ? 1 : true ? 2 : 3", 2);
    check_int("(x > 5 ? 10 : 20) + 1", 21);
    check_int("ok ? n : undefined_name", 1024); /* the other branch is not evaluated */
    check_err("1 ? 2 : 3", "expected a boolean before '?', got number 1", 7, 12);
    check_err("true ? 1", "unexpected end of expression (expected ':' of the conditional)", 7, 20);
}

static void test_logic(void **state)
{
    (void)state;
    check_bool("false && undefined_name", 0);
    check_bool("true || undefined_name", 1);
    check_bool("x > 1 && x < 5", 1);
    check_bool("!(x > 1) || s == 'abc'", 1);
    check_bool("!ok", 0);
    check_bool("true && false || true", 1);
    check_err("true && undefined_name", "unknown name 'undefined_name'", 7, 20);
    check_err("1 && ok", "expected a boolean on the left of '&&', got number 1", 7, 12);
    check_err("!ok || x", "expected a boolean on the right of '||', got number 3", 7, 19);
    check_err("!x", "expected a boolean after '!', got number 3", 7, 13);
    check_err("-ok", "type mismatch: '-' needs a number, got a boolean", 7, 12);
}

static void test_functions(void **state)
{
    (void)state;
    check_int("min(3, 1, 2)", 1);
    check_float("max(1, 2.5)", 2.5);
    check_int("max(4, 2.5)", 4); /* the chosen argument keeps its type */
    check_int("round(2.5)", 3);
    check_int("round(-2.5)", -3);
    check_int("round(7)", 7);
    check_int("floor(-1.5)", -2);
    check_int("ceil(1.2)", 2);
    check_int("abs(-3)", 3);
    check_float("abs(-1.5)", 1.5);
    check_int("log2(1024)", 10);
    check_int("log2(0.25)", -2);
    check_float("log2(1000)", log2(1000.0));
    check_err("log2(0)", "'log2' of a non-positive number (0)", 7, 12);
    check_int("pow2(10)", 1024);
    /* issue 22 item 3: a fraction from pow2 was rounded where it landed */
    check_err("pow2(-2)", "'pow2' of a negative exponent (pow2(-2) is not an integer; write 2^-2", 7, 12);
    check_float("2^-2", 0.25);
    check_float("float(2^53)", 9007199254740992.0);
    check_err("float(2^53 + 1)", "'float' of 9007199254740993 would round it", 7, 12);
    check_int("clamp(5, 0, 3)", 3);
    check_int("clamp(-1, 0, 3)", 0);
    check_float("clamp(1.5, 0, 3)", 1.5);
    check_err("clamp(1, 3, 0)", "'clamp' with lo > hi (3 > 0)", 7, 12);
    check_int("align_up(100, 64)", 128);
    check_int("align_up(128, 64)", 128);
    check_int("align_up(-5, 4)", -4);
    check_err("align_up(1, 0)", "'align_up' needs a positive alignment, got 0", 7, 24);
    check_int("int(3.9)", 3);
    check_int("int(-3.9)", -3);
    check_int("int(\"0x10\")", 16);
    check_int("int('-42')", -42);
    check_int("int(true)", 1);
    check_float("float(2)", 2.0);
    check_float("float('1e-3')", 0.001);
    check_err("int('12abc')", "'int' cannot convert \"12abc\": malformed number", 7, 12);
    check_err("float(s)", "'float' cannot convert \"abc\": not a number", 7, 12);
    check_str("str(1.5)", "1.5");
    check_str("str(n)", "1024");
    check_str("str(ok)", "true");
    check_str("ctype(\"u64\")", "unsigned long long");
    check_str("ctype(T)", "unsigned int");
    check_str("ctype('bf16')", "__nv_bfloat16");
    check_str("ctype('unsigned short')", "unsigned short");
    check_int("sizeof('f16')", 2);
    check_int("sizeof(T) * n", 4096);
    check_bool("is_float('bf16')", 1);
    check_bool("is_float(T)", 0);
    check_str("hex(255)", "0xff");
    check_str("hex(97 * 0x01010101)", "0x61616161");
    check_str("hex(0)", "0x0");
    check_err("hex(-1)", "hex() wants a non-negative integer, not -1", 7, 12);
    check_err("hex(1.5)", "hex() wants a non-negative integer, not 1.5", 7, 12);
    check_err("ctype('u33')", "'ctype' expects a type name, got string \"u33\" (expected one of: i8, u8,", 7, 18);
    check_err("sizeof(4)", "'sizeof' expects a type name, got number 4", 7, 19);
    check_err("min(1, 's')", "'min' expects a number for argument 2, got string \"s\"", 7, 19);
    check_err("min", "'min' is a function; call it as min(...)", 7, 12);
}

static void test_references(void **state)
{
    (void)state;
    static const char *calls[] = {
        "count_below(in, 10)", "count_if(in, '<', 3)", "count_below_by(in, 5, keys, 16)",
        "histogram(in, 10, 0, 99)", "sum(in)", "dot(a, b)", "sum_by(v, k, 8)",
        "index_add(idx, v, rows, 4)", "reduce('add', in, 1, 0)", "wrap_count('inc', n, 4, 0, 7)",
        "tally(n, 4, 0)", "slice(in, 0, 4)", "baseline()",
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        KvxError err = {0};
        Expr *e = expr_parse(arena, calls[i], &base, &err);
        if (!e)
            fail_msg("'%s' should parse: %s", calls[i], err.msg);
        assert_true(expr_is_reference(e->name));
    }
    assert_false(expr_is_reference("min"));
    assert_false(expr_is_reference("nope"));
    assert_false(expr_is_reference(NULL));
    check_err("histogram(in, 10, 0, 99)", "'histogram' is a reference; it belongs in check:", 7, 12);
    check_err("1 + sum(in)", "'sum' is a reference; it belongs in check:", 7, 16);
    /* a reference's arity is checked by the spec loader, against its signature */
    check_err("histogram(in, 10)", "'histogram' is a reference; it belongs in check:", 7, 12);
    check_err("baseline(1)", "'baseline' takes 0 arguments, got 1", 7, 12);
    /* the function list for messages has no references and ends in NULL */
    int n = 0;
    for (; expr_function_names[n]; n++)
        assert_false(expr_is_reference(expr_function_names[n]));
    assert_int_equal(n, 18);
    assert_string_equal(expr_function_names[0], "ceil_div");
}

static void test_arity(void **state)
{
    (void)state;
    check_err("ceil_div(1)", "'ceil_div' takes 2 arguments, got 1", 7, 12);
    check_err("1 + round(1, 2)", "'round' takes 1 argument, got 2", 7, 16);
    check_err("min(1)", "'min' takes at least 2 arguments, got 1", 7, 12);
    check_err("clamp()", "'clamp' takes 3 arguments, got 0", 7, 12);
    check_int("max(1, 2, 3, 4, 5, 6, 7, 8, 9)", 9);
}

static void test_error_positions(void **state)
{
    (void)state;
    check_err("1 + ceildiv(n, 4)",
              "unknown function 'ceildiv' (expected one of: ceil_div, min, max, round, floor, ceil, "
              "abs, log2, pow2, clamp, align_up, int, float, str, ctype, sizeof, is_float, "
              "hex, count_below,", 7, 16);
    check_err("hitrate * 2", "unknown name 'hitrate'", 7, 12);
    check_err("n + hitrate", "unknown name 'hitrate'", 7, 16);
    check_err("(1 + )", "unexpected ')' (expected an operand)", 7, 17);
    check_err("", "unexpected end of expression (expected an operand)", 7, 12);
    check_err("1 +", "unexpected end of expression (expected an operand)", 7, 15);
    check_err("(1 + 2", "unexpected end of expression (expected ')' to close the '(' at 7:12)", 7, 18);
    check_err("1 2", "unexpected '2' (expected an operator or the end of the expression)", 7, 14);
    check_err("min(1 2)", "unexpected '2' (expected ',' or ')')", 7, 18);
    check_err("1 < 2 < 3", "unexpected '<'", 7, 18);
    check_err("x = 1", "unexpected '=' (did you mean '=='?)", 7, 14);
    check_err("a & b", "unexpected '&' (did you mean '&&'?)", 7, 14);
    check_err("1 # 2", "unexpected character '#'", 7, 14);
    check_err("n + $T", "unexpected character '$'", 7, 16);
    /* a newline moves to the next line, column 1 */
    check_err("1 +\n  )", "unexpected ')' (expected an operand)", 8, 3);
    check_err("x +\n\n hitrate", "unknown name 'hitrate'", 9, 2);
    check_err("1 /\n 0", "'/' by zero", 7, 14);   /* operator before the newline */
    check_err("1\n  // 0", "'//' by zero", 8, 3); /* operator after it */
    /* evaluation errors point at the operator or the node */
    check_err("1 + x / (n - n)", "'/' by zero (3 / 0)", 7, 18);
    /* the environment's own error wins */
    KvxError err = {0};
    Value v;
    assert_int_equal(run("1 + broken", &v, &err), -1);
    assert_string_equal(err.msg, "let 'broken' failed");
    assert_string_equal(err.file, "let.yaml");
    assert_int_equal(err.line, 3);
    kvx_error_clear(&err);
}

static void test_limits(void **state)
{
    (void)state;
    char *deep = malloc(4000);
    memset(deep, '(', 1000);
    strcpy(deep + 1000, "1");
    memset(deep + 1001, ')', 1000);
    deep[2001] = 0;
    check_err(deep, "expression nested too deeply", 7, 12 + 100);
    memset(deep, '-', 3000);
    strcpy(deep + 3000, "1");
    check_err(deep, "expression nested too deeply", 7, 12 + 199);
    /* a long chain is fine up to the height limit, an error past it */
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, "1");
    for (int i = 0; i < 900; i++)
        sb_puts(&sb, "+1");
    check_int(sb_str(&sb), 901);
    for (int i = 0; i < 200; i++)
        sb_puts(&sb, "+1");
    KvxError err = {0};
    Value v;
    assert_int_equal(run(sb_str(&sb), &v, &err), -1);
    assert_non_null(strstr(err.msg, "too long or nested too deeply"));
    kvx_error_clear(&err);
    sb_free(&sb);
    free(deep);
}

/* ---- printing -------------------------------------------------------------- */

static int tree_equal(const Expr *a, const Expr *b)
{
    if (a->kind != b->kind || a->op != b->op)
        return 0;
    switch (a->kind) {
    case EX_LIT: return a->lit.kind == b->lit.kind && val_equal(a->lit, b->lit);
    case EX_IDENT: return strcmp(a->name, b->name) == 0;
    case EX_UNARY: return tree_equal(a->a, b->a);
    case EX_BINARY: return tree_equal(a->a, b->a) && tree_equal(a->b, b->b);
    case EX_COND: return tree_equal(a->a, b->a) && tree_equal(a->b, b->b) && tree_equal(a->c, b->c);
    case EX_CALL:
        if (strcmp(a->name, b->name) != 0 || a->nargs != b->nargs)
            return 0;
        for (int i = 0; i < a->nargs; i++)
            if (!tree_equal(a->args[i], b->args[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* Print text, check the canonical form (when want is given) and that it
 * re-parses to an equal tree. */
static void check_print(const char *text, const char *want)
{
    KvxError err = {0};
    Expr *e = expr_parse(arena, text, &base, &err);
    if (!e)
        fail_msg("'%s' should parse: %s", text, err.msg);
    StrBuf sb;
    sb_init(&sb);
    expr_print(e, &sb);
    if (want && strcmp(sb_str(&sb), want) != 0)
        fail_msg("'%s' printed as '%s', want '%s'", text, sb_str(&sb), want);
    Expr *again = expr_parse(arena, sb_str(&sb), &base, &err);
    if (!again)
        fail_msg("'%s' printed as '%s', which does not parse: %s", text, sb_str(&sb), err.msg);
    if (!tree_equal(e, again))
        fail_msg("'%s' printed as '%s', which parses to another tree", text, sb_str(&sb));
    sb_free(&sb);
}

static void test_print(void **state)
{
    (void)state;
    check_print("2^3^2", "2^3^2");
    check_print("(2^3)^2", "(2^3)^2");
    check_print("-2^2", "-2^2");
    check_print("(-2)^2", "(-2)^2");
    check_print("2^-x", "2^-x");
    check_print("1+2*3", "1 + 2 * 3");
    check_print("(1+2)*3", "(1 + 2) * 3");
    check_print("a-(b-c)", "a - (b - c)");
    check_print("(a-b)-c", "a - b - c");
    check_print("a/(b*c)", "a / (b * c)");
    check_print("a//b%c", "a // b % c");
    check_print("1.0", "1.0");
    check_print("1e3", "1000.0");
    check_print("1e-3", "0.001");
    check_print("0.05", "0.05");
    check_print(".5", "0.5");
    check_print("1.5e300", "1.5e+300");
    check_print("16M", "16777216");
    check_print("0x2A", "42");
    check_print("'it\\'s'", "\"it's\"");
    check_print("\"a\\\"b\\\\c\\n\\td\"", "\"a\\\"b\\\\c\\n\\td\"");
    check_print("a ? b : c ? d : e", "a ? b : c ? d : e");
    check_print("(a ? b : c) ? d : e", "(a ? b : c) ? d : e");
    check_print("a ? (b ? c : d) : e", "a ? b ? c : d : e");
    check_print("(a ? b : c) + 1", "(a ? b : c) + 1");
    check_print("!(a && b) || c", "!(a && b) || c");
    check_print("a && (b || c)", "a && (b || c)");
    check_print("(a < b) == true", "(a < b) == true");
    check_print("a < (b == c)", "a < (b == c)");
    check_print("- - x", "--x");
    check_print("+x", "+x");
    check_print("-(x + 1)", "-(x + 1)");
    check_print("min( a , b,c )", "min(a, b, c)");
    check_print("baseline( )", "baseline()");
    check_print("ceil_div(n, 256) * 256", "ceil_div(n, 256) * 256");
    check_print("x\n+\n1", "x + 1");
    static const char *more[] = {
        "strategy != \"block_smem_warp\" || counter == \"u64\"",
        "round(hit_rate*1000)",
        "sizeof(T)*n + 4K",
        "n >= 2^20 && (x % 2 == 0 || !ok)",
        "clamp(-x, -(1), 2^-2^2)",
        "((((1))))",
        "-(-(2))^-(3)",
        "a ? -b : !c",
        "f16 == 'f16' ? 0.01 : 1e-5",
        "count_below(in, round(hit_rate * 1000))",
        "x // -2 // +3",
        "1 - -1 - - 1",
        "0.1 + 0.2",
        "123456789012345678",
        "1e-300 * 4.9406564584124654e-324",
        "true != false",
        "align_up(n * sizeof(T), 128) / 4",
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        check_print(more[i], NULL);
}

static void test_print_negative_literal(void **state)
{
    (void)state;
    /* callers may build literal nodes with negative values; they print so
     * that they re-read with the same meaning */
    Expr lit = {.kind = EX_LIT, .lit = val_int(-2)};
    Expr two = {.kind = EX_LIT, .lit = val_int(2)};
    Expr pw = {.kind = EX_BINARY, .op = '^', .a = &lit, .b = &two};
    StrBuf sb;
    sb_init(&sb);
    expr_print(&pw, &sb);
    assert_string_equal(sb_str(&sb), "(-2)^2");
    sb_free(&sb);
    check_int("(-2)^2", 4);
}

static void test_val_text(void **state)
{
    (void)state;
    assert_string_equal(val_text(arena, val_float(0.05)), "0.05");
    assert_string_equal(val_text(arena, val_float(1e-3)), "0.001");
    assert_string_equal(val_text(arena, val_float(1.0)), "1");
    assert_string_equal(val_text(arena, val_float(0.1 + 0.2)), "0.30000000000000004");
    assert_string_equal(val_text(arena, val_float(1e20)), "1e+20");
    assert_string_equal(val_text(arena, val_float(1000.0)), "1000");
    assert_string_equal(val_text(arena, val_float(123.456)), "123.456");
    assert_string_equal(val_text(arena, val_float(1e16)), "10000000000000000");
    assert_string_equal(val_text(arena, val_float(1e17)), "1e+17");
    assert_string_equal(val_text(arena, val_float(1e-5)), "1e-05");
    assert_string_equal(val_text(arena, val_float(0.0001)), "0.0001");
    assert_string_equal(val_text(arena, val_float(-2.5)), "-2.5");
    assert_string_equal(val_text(arena, val_int(-7)), "-7");
    assert_string_equal(val_text(arena, val_int(INT64_MIN)), "-9223372036854775808");
    assert_string_equal(val_text(arena, val_bool(1)), "true");
    assert_string_equal(val_text(arena, val_bool(0)), "false");
    assert_string_equal(val_text(arena, val_str("a b")), "a b");
    assert_true(val_equal(val_int(1), val_float(1.0)));
    assert_false(val_equal(val_str("1"), val_int(1)));
    assert_false(val_equal(val_bool(1), val_int(1)));
    assert_true(val_equal(val_str("ab"), val_str("ab")));
    assert_true(val_is_num(val_float(1)));
    assert_false(val_is_num(val_bool(1)));
    assert_true(val_num(val_int(3)) == 3.0);
    assert_true(val_num(val_str("3")) == 0.0);
}

static void visit(void *ctx, const Expr *id)
{
    StrBuf *sb = ctx;
    sb_printf(sb, "%s@%d ", id->name, id->pos.col);
}

static void test_visit_idents(void **state)
{
    (void)state;
    KvxError err = {0};
    Expr *e = expr_parse(arena, "a + min(b, c) * (d ? e : a) - ctype(T)", &base, &err);
    assert_non_null(e);
    StrBuf sb;
    sb_init(&sb);
    expr_visit_idents(e, visit, &sb);
    assert_string_equal(sb_str(&sb), "a@12 b@20 c@23 d@29 e@33 a@37 T@48 ");
    sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_int_float_rules),
        cmocka_unit_test(test_suffixes_and_hex),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_division),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_conditional),
        cmocka_unit_test(test_logic),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_references),
        cmocka_unit_test(test_arity),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_print_negative_literal),
        cmocka_unit_test(test_val_text),
        cmocka_unit_test(test_visit_idents),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
