/* test_cli_doc: the man page and the bash completion (cli/cli_doc.c) list
 * every verb of CLI_VERBS and, under each, every option of its table and no
 * other; a choice's values and the --gpu targets complete; the man page has
 * no line that roff would take as a request by accident. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"

static char *written(void (*fn)(FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    fn(f);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The part of text from the line starting with `from` to the next line
 * starting with `next` (or the end): malloc'd. */
static char *section(const char *text, const char *from, const char *next)
{
    const char *a = strstr(text, from);
    if (!a)
        fail_msg("no '%s'", from);
    const char *b = strstr(a + strlen(from), next);
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = malloc(n + 1);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* How many options of any verb the text names as `dash` + name + end. */
static int options_named(const char *text, const char *dash, const char *ends)
{
    int n = 0;
    for (const char *p = strstr(text, dash); p; p = strstr(p + 1, dash)) {
        const char *q = p + strlen(dash);
        size_t w = strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789-");
        n += w > 0 && strchr(ends, q[w]) != NULL;
    }
    return n;
}

static void test_man_lists_the_tables(void **state)
{
    char *man = written(cli_doc_man);
    assert_non_null(strstr(man, ".TH KVX 1"));
    for (const CliVerb *const *v = CLI_VERBS; *v; v++) {
        char head[80];
        snprintf(head, sizeof head, ".SS \"kvx %s", (*v)->name);
        char *sec = section(man, head, v[1] ? ".SS " : ".SH ");
        int n = 0;
        for (const CliOpt *o = (*v)->opts; o->name; o++, n++) {
            char want[120];
            StrBuf esc;
            sb_init(&esc);
            for (const char *c = o->name; *c; c++)
                sb_puts(&esc, *c == '-' ? "\\-" : (char[]){*c, 0});
            snprintf(want, sizeof want, "\\fB\\-\\-%s\\fR", sb_str(&esc));
            sb_free(&esc);
            if (!strstr(sec, want))
                fail_msg("man page: kvx %s has no %s", (*v)->name, want);
        }
        if (options_named(sec, "\\fB\\-\\-", "\\") != n)
            fail_msg("man page: kvx %s names %d options, its table %d", (*v)->name,
                     options_named(sec, "\\fB\\-\\-", "\\"), n);
        free(sec);
    }
    /* A body line starting with '.' or '\'' would be a roff request. */
    for (const char *l = man; *l; l += strcspn(l, "\n"), l += *l == '\n')
        if (*l == '\'')
            fail_msg("man page line starts with a quote: %.60s", l);
    free(man);
}

static void test_completion_lists_the_tables(void **state)
{
    char *bash = written(cli_doc_bash);
    const char *words = strstr(bash, "compgen -W \"");
    assert_non_null(words);
    for (const CliVerb *const *v = CLI_VERBS; *v; v++) {
        char want[80], head[80];
        snprintf(want, sizeof want, "%s ", (*v)->name);
        if (!strstr(words, want))
            fail_msg("completion: verb %s is not offered", (*v)->name);
        snprintf(head, sizeof head, "\n    %s)\n", (*v)->name);
        char *sec = section(bash, head, "esac;;");
        char *opts = section(sec, "opts=\"", "\"\n");
        int n = 0;
        for (const CliOpt *o = (*v)->opts; o->name; o++, n++) {
            snprintf(want, sizeof want, "--%s%s ", o->name, o->kind != CLI_FLAG && o->implied ? "=" : "");
            if (!strstr(opts, want))
                fail_msg("completion: kvx %s does not offer %s", (*v)->name, want);
        }
        assert_int_equal(options_named(opts, "--", " =\""), n + 1);   /* and --help */
        free(opts);
        free(sec);
    }
    assert_non_null(strstr(bash, "--show) words=\"source ptx sass\";;"));
    assert_non_null(strstr(bash, "--gpu) words=\"H200-SXM-141GB H100-SXM5-80GB A100-SXM4-80GB\";;"));
    assert_non_null(strstr(bash, "complete -o filenames -o bashdefault -F _kvx kvx"));
    free(bash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_man_lists_the_tables),
        cmocka_unit_test(test_completion_lists_the_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
