/* test_hostile: kvx as a careless or hostile user runs it (issue 16).  Every
 * input here once crashed kvx, hung it, took gigabytes, gave a silently wrong
 * value or left a half-written file; each test runs the kvx binary on it and
 * checks for a clear message, the exit status the README states, an answer
 * within seconds, and nothing written that should not be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/stat.h>

/* The shard checks of kvx_child.h are not used here. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kvx_child.h"
#include "hostile_fixture.h"
#include "bounds.h"

/* ---- the spec loader ----------------------------------------------------------- */

static void test_spec_files(void **state)
{
    (void)state;
    EXPECT(2, "/tmp: cannot open spec: it is a directory", "plan", "/tmp");
    EXPECT(2, "/dev/zero: cannot open spec: it is not a regular file", "plan", "/dev/zero");
}

static void test_yaml_hostile(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "kvx: 1\nname: x\nbad: ");
    for (int i = 0; i < 200000; i++)
        sb_putc(&b, '[');
    for (int i = 0; i < 200000; i++)
        sb_putc(&b, ']');
    sb_putc(&b, '\n');
    EXPECT(2, "deep.yaml:3:69: nesting deeper than 64 levels", "plan", put("deep.yaml", b.p, b.len));
    sb_free(&b);
    EXPECT(2, "two.yaml:3:1: a second YAML document", "plan",
           put("two.yaml", "kvx: 1\nname: x\n---\nkvx: 1\n", 0));
    EXPECT(2, "nul.yaml:3:8: bad YAML: control characters are not allowed", "plan",
           put("nul.yaml", "kvx: 1\nname: x\ndoc: ab\0c\n", 25));
    EXPECT(2, "utf.yaml:3:8: bad YAML: invalid leading UTF-8 octet", "plan",
           put("utf.yaml", "kvx: 1\nname: x\ndoc: ab\xff\xfe" "c\n", 0));
}

static void test_integer_range(void **state)
{
    (void)state;
    /* 18446744073709551716 once wrapped to 100. */
    EXPECT(2, "big.yaml:9:13: integer literal out of range '18446744073709551716'", "plan",
           tiny_with("big.yaml", "n: [4K, 16K, 64K, 256K]", "n: [2^16, 18446744073709551716]"));
}

/* A 10 MB doc: once 7 s in printing it (a strlen per line). */
static void test_long_doc(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "doc: ");
    for (int i = 0; i < 2000000; i++)
        sb_puts(&b, "word ");
    sb_puts(&b, "40 quick");
    const char *spec = tiny_with("doc.yaml", "doc: 40 quick", sb_str(&b));
    sb_free(&b);
    double t0 = wall_now_ms();
    EXPECT(0, "word word", "plan", spec);
    double ms = wall_now_ms() - t0;
    KVX_BOUND(ms < 5000, "a doc of 2,000,000 words planned in %.0f ms (bound 5000 ms)", ms);
}

/* An axis of 10^6 values plans (every point resolved) in seconds, not the
 * hours a quadratic path would take: the bound (held by bench/bounds.sh) is
 * loose so that a loaded or sanitized build keeps it, and tight enough to
 * catch n^2. */
static void test_million_values(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "  hit_rate: [0.5]\n  n: [4K]\n  rep: [1");
    for (int i = 2; i <= 1000000; i++)
        sb_printf(&b, ", %d", i);
    sb_puts(&b, "]");
    const char *spec = tiny_with("million.yaml", "  hit_rate: [0, 0.1, 0.25, 0.5, 0.75]\n  n: [4K, 16K, 64K, 256K]",
                                 sb_str(&b));
    sb_free(&b);
    double t0 = wall_now_ms();
    EXPECT(0, "points    2000000 in the full grid", "plan", spec);
    double ms = wall_now_ms() - t0;
    KVX_BOUND(ms < 120000, "planned 2,000,000 points in %.1f s (bound 120 s)", ms / 1000);
}

/* ---- the template engine ------------------------------------------------------ */

/* A spec like tiny whose template is name, with the given text. */
static const char *template_spec(const char *spec, const char *name, const char *text, size_t len)
{
    put(name, text, len);
    char line[128];
    snprintf(line, sizeof line, "template: %s", name);
    return tiny_with(spec, "template: tiny.cu", line);
}

static void test_template_hostile(void **state)
{
    (void)state;
    /* 5,000 nested #if once overflowed the stack. */
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "extern \"C\" __global__ void count(const int *in, long long n, int thresh,"
                " unsigned int *out) {}\n");
    for (int i = 0; i < 5000; i++)
        sb_puts(&b, "{{#if true}}");
    for (int i = 0; i < 5000; i++)
        sb_puts(&b, "{{/if}}");
    EXPECT(2, "deep.cu:2:775: #if nests deeper than 64", "plan",
           template_spec("ifs.yaml", "deep.cu", b.p, b.len));
    /* 100,000 placeholders once took a minute (a position counted from the start each time). */
    sb_reset(&b);
    sb_puts(&b, "extern \"C\" __global__ void count(const int *in, long long n, int thresh,"
                " unsigned int *out) {}\n");
    for (int i = 0; i < 100000; i++)
        sb_puts(&b, "// {{strategy}}\n");
    const char *many = template_spec("many.yaml", "many.cu", b.p, b.len);
    sb_free(&b);
    double t0 = wall_now_ms();
    EXPECT(0, "tiny__strategy-naive.cu", "plan", many);
    double ms = wall_now_ms() - t0;
    KVX_BOUND(ms < 10000, "100,000 placeholders planned in %.0f ms (bound 10000 ms)", ms);
    EXPECT(2, "#include '/etc/passwd' is outside the spec's and the template's folders", "plan",
           template_spec("passwd.yaml", "passwd.cu", "{{#include \"/etc/passwd\"}}\n", 0));
    EXPECT(2, "#include '/dev/zero' is outside", "plan",
           template_spec("zero.yaml", "zero.cu", "{{#include \"/dev/zero\"}}\n", 0));
    assert_int_equal(mkfifo(tmp_path("fifo.cuh"), 0600), 0);
    EXPECT(2, "cannot read template", "plan",
           template_spec("fifo.yaml", "fifo.cu", "{{#include \"fifo.cuh\"}}\n", 0));
    assert_true(log_has(tmp_path("log"), "it is not a regular file"));
}

/* Four includes per level over 15 levels once reached 3.6 GB. */
static void test_include_fanout(void **state)
{
    (void)state;
    char pad[4097];
    memset(pad, ' ', 4096);
    pad[4096] = 0;
    for (int level = 0; level < 15; level++) {
        char name[32], text[5000];
        snprintf(name, sizeof name, "f%d.cuh", level);
        if (level < 14)
            snprintf(text, sizeof text, "%s\n{{#include \"f%d.cuh\"}}\n{{#include \"f%d.cuh\"}}\n"
                     "{{#include \"f%d.cuh\"}}\n{{#include \"f%d.cuh\"}}\n", pad, level + 1,
                     level + 1, level + 1, level + 1);
        else
            snprintf(text, sizeof text, "%s\n", pad);
        put(name, text, 0);
    }
    EXPECT(2, "the template and its includes pass 16777216 bytes in all", "plan",
           template_spec("fan.yaml", "fan.cu", "{{#include \"f0.cuh\"}}\n", 0));
}

/* ---- import ------------------------------------------------------------------------ */

static void test_import_hostile(void **state)
{
    (void)state;
    static const struct { const char *name, *csv; size_t len; const char *msg; } bad[] = {
        /* These three once crashed (a field read past a short row). */
        {"short.csv", "strategy,counter,hit_rate,median_ms\nnaive,u64\n", 0,
         "short.csv:2:1: 2 fields, the header has 4"},
        {"quote.csv", "strategy,median_ms\n\"naive,1\n", 0,
         "quote.csv:2:1: a quote is never closed"},
        {"nul.csv", "strategy,median_ms\nna\0ive,1\n", 27, "nul.csv:2:3: a NUL byte"},
        /* Once stored as Inf, then exported as invalid JSON. */
        {"inf.csv", "strategy,median_ms\nnaive,1e400\n", 0,
         "inf.csv:2:7: median_ms: '1e400' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *csv = put(bad[i].name, bad[i].csv, bad[i].len);
        unlink(tmp_path("imp.db"));
        EXPECT(2, bad[i].msg, "import", csv, "--name", "r", "--db", tmp_path("imp.db"));
        assert_int_equal(db_int(tmp_path("imp.db"), "SELECT count(*) FROM runs"), 0);
    }
    EXPECT(2, "it is not a regular file", "import", "/dev/zero", "--name", "r", "--db",
           tmp_path("imp.db"));
}

/* 200,000 rows: once over two minutes (a commit per row, quadratic checks). */
static void test_import_many(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "a,b,median_ms\n");
    for (int i = 0; i < 200000; i++)
        sb_printf(&b, "%d,x%d,%d.5\n", i, i % 7, i % 1000);
    const char *csv = put("many.csv", b.p, b.len);
    sb_free(&b);
    unlink(tmp_path("many.db"));
    double t0 = wall_now_ms();
    EXPECT(0, "imported 200000 rows", "import", csv, "--name", "r", "--db", tmp_path("many.db"));
    double ms = wall_now_ms() - t0;
    KVX_BOUND(ms < 30000, "200,000 rows imported in %.1f s (bound 30 s)", ms / 1000);
    assert_int_equal(db_int(tmp_path("many.db"), "SELECT count(*) FROM cases"), 200000);
    assert_int_equal(db_int(tmp_path("many.db"), "SELECT json_array_length(axes_json, '$.b')"
                                                 " FROM runs"), 7);
}

/* A stored Inf (an older kvx imported 1e400) exports as null, valid JSON. */
static void test_export_nonfinite(void **state)
{
    (void)state;
    const char *csv = put("fin.csv", "strategy,median_ms\nnaive,1\nwarp,2\n", 0);
    const char *db = tmp_path("fin.db");
    unlink(db);
    EXPECT(0, "imported 2 rows", "import", csv, "--name", "r", "--db", db);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), 0);
    assert_int_equal(sqlite3_exec(h, "UPDATE cases SET median_ms = 9e999 WHERE label ="
                                     " 'strategy=naive'", NULL, NULL, NULL), 0);
    sqlite3_close(h);
    EXPECT(0, "\"median_ms\": null", "export", "--db", db, "--format", "json");
    char *out = file_read(tmp_path("log"), NULL);
    assert_null(strstr(out, "inf"));
    free(out);
}

/* ---- outputs and exit statuses ------------------------------------------------------ */

static void test_outputs(void **state)
{
    (void)state;
    const char *db = tmp_path("out.db");
    unlink(db);
    EXPECT(0, "imported 2 rows", "import", put("out.csv", "strategy,median_ms\nnaive,1\nwarp,2\n", 0),
           "--name", "r", "--db", db);
    /* These once said "cannot write" and exited 0, or replaced the link or device. */
    const char *dir = tmp_path("adir");
    assert_int_equal(mkdir(dir, 0700), 0);
    EXPECT(3, "it is a directory", "export", "--db", db, "--out", dir);
    EXPECT(3, "it is a directory", "table", "--db", db, "--out", dir);
    EXPECT(3, "it is a directory", "compare", db, db, "--out", dir);
    const char *link = tmp_path("link.csv");
    assert_int_equal(symlink(tmp_path("target.csv"), link), 0);
    EXPECT(3, "it is a symbolic link", "export", "--db", db, "--out", link);
    assert_int_equal(access(tmp_path("target.csv"), F_OK), -1);
    EXPECT(3, "it is not a regular file", "export", "--db", db, "--out", "/dev/null");
    /* Once an empty CSV and exit 0 where table said no such spec. */
    EXPECT(2, "no cases of spec 'nosuch'", "export", "--db", db, "--spec", "nosuch");
    EXPECT(0, "", "export", "--db", db, "--out", tmp_path("ok.csv"));
    assert_true(log_has(tmp_path("ok.csv"), "strategy=warp"));
    /* A read verb leaves nothing beside the database. */
    assert_int_equal(access(tmp_path("out.db-wal"), F_OK), -1);
    assert_int_equal(access(tmp_path("out.db-shm"), F_OK), -1);
    /* The writer of report files and caches: never through a link or over a device. */
    assert_int_equal(file_write_atomic(link, "x", 1), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(access(tmp_path("target.csv"), F_OK), -1);
    assert_int_equal(file_write_atomic(dir, "x", 1), -1);
    assert_int_equal(errno, EISDIR);
    /* A missing input once left an empty new.db. */
    EXPECT(2, "cannot read", "merge", tmp_path("new.db"), tmp_path("missing.db"));
    assert_int_equal(access(tmp_path("new.db"), F_OK), -1);
}

/* 200 flipped bytes once read as "no cases stored". */
static void test_corrupt_db(void **state)
{
    (void)state;
    const char *db = tmp_path("bad.db");
    unlink(db);
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "a,median_ms\n");
    for (int i = 0; i < 2000; i++)
        sb_printf(&b, "%d,%d\n", i, i);
    EXPECT(0, "imported 2000 rows", "import", put("c.csv", b.p, b.len), "--name", "r", "--db", db);
    sb_free(&b);
    size_t len;
    char *bytes = file_read(db, &len);
    srand(16);
    for (int i = 0; i < 200; i++)
        bytes[4096 + (size_t)rand() % (len - 4096)] ^= 0x5a;
    assert_int_equal(file_write_atomic(db, bytes, len), 0);
    free(bytes);
    EXPECT(3, "the database is corrupt", "table", "--db", db);
}

int main(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-hostile"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    /* The tiny spec's template beside the copies made of it. */
    char *cu = file_read(KVX_SOURCE_DIR "/tests/data/specs/tiny.cu", NULL);
    put("tiny.cu", cu, 0);
    free(cu);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_files),
        cmocka_unit_test(test_yaml_hostile),
        cmocka_unit_test(test_integer_range),
        cmocka_unit_test(test_long_doc),
        cmocka_unit_test(test_million_values),
        cmocka_unit_test(test_template_hostile),
        cmocka_unit_test(test_include_fanout),
        cmocka_unit_test(test_import_hostile),
        cmocka_unit_test(test_import_many),
        cmocka_unit_test(test_export_nonfinite),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_corrupt_db),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(rc);
}
