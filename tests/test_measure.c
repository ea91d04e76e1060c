/* test_measure: the measurement settings' one table (core/measure.h) as a
 * user meets it: a spec's `measure:` and `kvx run`'s flags accept exactly the
 * same values (each row walked over values at, inside and outside its range),
 * docs/measurement.md's settings table is the code's, and the stored JSON is
 * what earlier versions stored (it is hashed into every case key). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/measure.h"
#include "gen/spec.h"
#include "run/run.h"

static char spec_path[] = "/tmp/kvx-measure-XXXXXX.yaml";

/* The other bound of the sample count, so that any value of KEY is
 * consistent with it: min_samples 1, or max_samples 10^9 when KEY is
 * min_samples. */
static const char *other_bound(const MeasureField *f, const char **value)
{
    int min = !strcmp(f->key, "min_samples");
    *value = min ? "1000000000" : "1";
    return min ? "max_samples" : "min_samples";
}

/* The tiny spec with measure: { OTHER: V, KEY: TEXT }; NULL when it is
 * refused. */
static Spec *load_with(const MeasureField *f, const char *text, MeasureSettings *m)
{
    const char *v, *other = other_bound(f, &v);
    FILE *out = fopen(spec_path, "w");
    assert_non_null(out);
    fprintf(out, "kvx: 1\nname: tiny\ntemplate: %s/tests/data/specs/tiny.cu\nkernel: count\n"
                 "axes: { n: [4K] }\nbuffers:\n  in: { type: i32, count: n, init: 1 }\n"
                 "  out: { type: u32, count: 1, init: 0 }\n"
                 "launch: { grid: 1, block: 32, args: [in, n, 0, out] }\ncheck: { out: 0 }\n"
                 "measure: { %s: %s, %s: %s }\n",
            KVX_SOURCE_DIR, other, v, f->key, text);
    fclose(out);
    KvxError err = {0};
    Spec *s = spec_load(spec_path, &err);
    if (s)
        *m = s->measure;
    kvx_error_clear(&err);
    return s;
}

/* kvx run SPEC --OTHER V --FLAG=TEXT through the verb's own table. */
static int parse_with(const MeasureField *f, const char *text, MeasureSettings *m)
{
    RunOpts o = {0};
    CliArgs a;
    measure_defaults(&o.m);
    char flag[128], other[64];
    const char *v;
    snprintf(flag, sizeof flag, "--%s=%s", f->flag, text);
    snprintf(other, sizeof other, "--%s", measure_find(other_bound(f, &v))->flag);
    char *argv[] = {"run", spec_path, other, (char *)v, flag, NULL};
    int argc = 5;
    FILE *keep = stderr;
    stderr = fopen("/dev/null", "w");
    int rc = cli_parse(&cmd_run_verb, argc, argv, &o, &a);
    fclose(stderr);
    stderr = keep;
    *m = o.m;
    return rc;
}

static void test_spec_and_flags_agree(void **state)
{
    (void)state;
    int fd = mkstemps(spec_path, 5);
    assert_true(fd >= 0);
    close(fd);
    static const char *const tries[] = {"0", "1", "3", "0.5", "2.5", "-1", "1e3", "0.001", "0.0005", "1000000",
                                        "1000001", "1000000000", "1000000001", "2147483648",
                                        "18446744073709551615", "18446744073709551616", "abc", "read",
                                        "write", "off", "true", "false", "clean", NULL};
    int accepted = 0, refused = 0;
    for (int i = 0; i < MEASURE_COUNT; i++) {
        const MeasureField *f = &measure_fields[i];
        for (const char *const *t = tries; *t; t++) {
            MeasureSettings ms, mc;
            Spec *s = load_with(f, *t, &ms);
            int cli_ok = parse_with(f, *t, &mc) == 0;
            if (!!s != cli_ok)
                fail_msg("%s: the spec %s '%s' but --%s %s it", f->key, s ? "accepts" : "refuses", *t,
                         f->flag, cli_ok ? "accepts" : "refuses");
            if (s && memcmp((char *)&ms + f->at, (char *)&mc + f->at,
                            f->kind == MEASURE_DOUBLE || f->kind == MEASURE_U64 ? 8 : sizeof(int)))
                fail_msg("%s '%s': the spec and the flag give different values", f->key, *t);
            accepted += !!s;
            refused += !s;
            spec_free(s);
        }
    }
    /* Both outcomes occur for every kind, so the walk compares something. */
    assert_true(accepted > 30 && refused > 30);
    unlink(spec_path);
}

/* The ranges the issue found disagreeing: --timeout 0, budget_ms 0, a seed
 * past 2^53. */
static void test_known_disagreements(void **state)
{
    (void)state;
    MeasureSettings m;
    measure_defaults(&m);
    char why[128];
    assert_int_equal(measure_set(&m, measure_find("timeout"), "0", why, sizeof why), -1);
    assert_string_equal(why, "a number from 0.001 to 10^6");
    assert_int_equal(measure_set(&m, measure_find("budget_ms"), "0", why, sizeof why), 0);
    assert_int_equal(measure_set(&m, measure_find("seed"), "18446744073709551615", why, sizeof why), 0);
    assert_true(m.seed == UINT64_MAX);
    assert_int_equal(measure_set(&m, measure_find("seed"), "9007199254740993", why, sizeof why), 0);
    assert_true(m.seed == 9007199254740993ull);
}

/* docs/measurement.md's table: one row per setting, as the table says. */
static void test_docs_table(void **state)
{
    (void)state;
    char *doc = file_read(KVX_SOURCE_DIR "/docs/measurement.md", NULL);
    assert_non_null(doc);
    for (int i = 0; i < MEASURE_COUNT; i++) {
        const MeasureField *f = &measure_fields[i];
        char def[32], expect[128], row[320];
        if (f->kind == MEASURE_FLUSH)
            snprintf(def, sizeof def, "%s", measure_flush_name((int)f->def));
        else
            snprintf(def, sizeof def, "%g", f->def);
        measure_expect(f, expect, sizeof expect);
        snprintf(row, sizeof row, "| `%s` | `--%s%s%s` | %s | %s |", f->key, f->flag,
                 f->kind == MEASURE_FLUSH ? "[=read\\|write\\|off]" : " ", f->arg ? f->arg : "", def, expect);
        if (!strstr(doc, row))
            fail_msg("docs/measurement.md has no row\n%s", row);
    }
    free(doc);
}

/* The JSON of the 0.1 defaults (warmup 3; 1 since 0.2.0), byte for byte as
 * kvx stored it before the table: runs stored with those settings keep
 * resuming (with --warmup 3 now). */
static void test_json_unchanged(void **state)
{
    (void)state;
    MeasureSettings m;
    measure_defaults(&m);
    assert_int_equal(m.warmup, 1);
    m.warmup = 3;
    char *j = measure_json(&m);
    assert_string_equal(j, "{\"warmup\":3,\"min_samples\":10,\"max_samples\":200,\"noise\":0.02,\"budget_ms\":2000,"
                           "\"flush_l2\":\"read\",\"timeout_s\":30,\"seed\":1,\"warmup_ms\":10,\"sample_batch\":8,"
                           "\"budget\":\"case\",\"stat\":\"median\",\"timer\":\"cuEvent\"}");
    free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_and_flags_agree),
        cmocka_unit_test(test_known_disagreements),
        cmocka_unit_test(test_docs_table),
        cmocka_unit_test(test_json_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
