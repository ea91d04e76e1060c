/* fuzz_expr: the expression parser, evaluator and printer on arbitrary bytes.
 *
 * Properties checked on every input: nothing crashes or leaks; a tree that
 * parses prints to text that parses again and prints identically (the printer
 * is canonical); evaluation of the original and of the reprinted tree agree
 * (same value, or both fail with the same message).  Built with libFuzzer
 * (-DKVX_FUZZ=ON) or with tests/fuzz/replay_main.c, which replays the corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup(void *ctx, const char *name, Value *out, KvxError *err)
{
    (void)ctx;
    static const struct { const char *name; Value v; } names[] = {
        {"n", {VAL_INT, 1 << 24, 0, NULL}},
        {"x", {VAL_INT, -3, 0, NULL}},
        {"big", {VAL_INT, INT64_MAX, 0, NULL}},
        {"hit_rate", {VAL_FLOAT, 0, 0.05, NULL}},
        {"T", {VAL_STR, 0, 0, "u32"}},
        {"s", {VAL_STR, 0, 0, "abc"}},
        {"ok", {VAL_BOOL, 1, 0, NULL}},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].v;
            return 1;
        }
    if (strcmp(name, "broken") == 0) {
        kvx_error_set(err, KVX_EINPUT, NULL, "broken on purpose");
        return -1;
    }
    return 0;
}

static void die(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_expr: %s\n  first:  %s\n  second: %s\n", what, a, b);
    abort();
}

/* Value (or error) as text, for comparing two evaluations. */
static const char *outcome(Arena *arena, const Expr *e)
{
    ExprEnv env = {lookup, NULL, arena};
    KvxError err = {0};
    Value v;
    const char *r;
    if (expr_eval(e, &env, &v, &err) < 0) {
        if (!err.code)
            die("eval failed without an error", "", "");
        r = arena_printf(arena, "error: %s", err.msg);
    } else {
        r = arena_printf(arena, "%d:%s", (int)v.kind, val_text(arena, v));
    }
    kvx_error_clear(&err);
    return r;
}

static void visit(void *ctx, const Expr *id)
{
    if (!id || id->kind != EX_IDENT || !id->name[0])
        abort();
    ++*(int *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0; /* an embedded NUL ends the expression early, as in a C string */
    Arena *arena = arena_new();
    SrcPos pos = {"fuzz.yaml", 1, 1};
    KvxError err = {0};
    Expr *e = expr_parse(arena, text, &pos, &err);
    if (!e) {
        if (!err.code || err.line < 1 || err.col < 1)
            die("parse failed without a positioned error", text, err.msg);
        goto done;
    }
    int nidents = 0;
    expr_visit_idents(e, visit, &nidents);
    StrBuf once, twice;
    sb_init(&once);
    sb_init(&twice);
    expr_print(e, &once);
    Expr *again = expr_parse(arena, sb_str(&once), &pos, &err);
    if (!again)
        die("printed text does not parse", text, sb_str(&once));
    expr_print(again, &twice);
    if (strcmp(sb_str(&once), sb_str(&twice)) != 0)
        die("printing is not canonical", sb_str(&once), sb_str(&twice));
    const char *a = outcome(arena, e), *b = outcome(arena, again);
    if (strcmp(a, b) != 0)
        die("reprinted expression evaluates differently", a, b);
    sb_free(&once);
    sb_free(&twice);
done:
    kvx_error_clear(&err);
    arena_free(arena);
    free(text);
    return 0;
}
