/* test_formats (e2e): the compile-side verbs for scripts (issue 40 item 6).
 *
 * - `kvx plan`, `compile`, `inspect` and `doctor --format md|csv|json` write
 *   one table on stdout (JSON that parses, CSV and Markdown with their
 *   header), whatever they say besides going to stderr; without --format
 *   they print their summaries;
 * - `kvx table --failures --format json` lists the failed cases;
 * - a reader that stops reading (`kvx plan SPEC | head`, `kvx export | head`)
 *   ends kvx quietly with status 0; a full disk is still exit 3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/search.yaml"

/* CMD run by bash with kvx as $K, in the test's folder; bash's exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[4096], body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "K='%s'; cd '%s' && %s\n", KVX_BINARY, tmp, body);
    assert_int_equal(file_write_atomic(tmp_path("cmd.sh"), cmd, strlen(cmd)), 0);
    snprintf(cmd, sizeof cmd, "bash '%s'", tmp_path("cmd.sh"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* SQLite's reading of file as JSON: the value of sql over it (?1). */
static long long json_of(const char *file, const char *sql)
{
    char *text = file_read(tmp_path(file), NULL);
    assert_non_null(text);
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, text, -1, SQLITE_TRANSIENT);
    long long v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    sqlite3_finalize(q);
    sqlite3_close(db);
    free(text);
    return v;
}

static int file_starts(const char *file, const char *text)
{
    char *s = file_read(tmp_path(file), NULL);
    int ok = s && !strncmp(s, text, strlen(text));
    free(s);
    return ok;
}

static int file_empty(const char *file)
{
    char *s = file_read(tmp_path(file), NULL);
    int empty = s && !*s;
    free(s);
    return empty;
}

static void test_plan(void **state)
{
    (void)state;
    assert_int_equal(sh("$K plan %s --format json > plan.json 2> plan.err", SPEC), 0);
    assert_int_equal(json_of("plan.json", "SELECT json_valid(?1)"), 1);
    assert_true(file_empty("plan.err"));
    /* 42 variants after where:, 2 sizes each. */
    assert_int_equal(json_of("plan.json", "SELECT json_array_length(?1)"), 84);
    assert_int_equal(json_of("plan.json", "SELECT json_extract(?1, '$[1].size')"), 2048);
    assert_int_equal(json_of("plan.json", "SELECT json_type(?1, '$[0].strategy') = 'text'"), 1);
    assert_int_equal(sh("$K plan %s --format json --resolve --where 'size == 1K' > plan.json", SPEC), 0);
    assert_int_equal(json_of("plan.json", "SELECT json_array_length(?1)"), 42);
    assert_int_equal(json_of("plan.json", "SELECT json_extract(?1, '$[0].elements')"), 1024);
    assert_int_equal(json_of("plan.json", "SELECT json_extract(?1, '$[0].grid') = '4x1x1'"), 1);
    assert_int_equal(sh("$K plan %s --format csv > plan.csv", SPEC), 0);
    assert_true(file_starts("plan.csv", "point,source,file,strategy,tile,unroll,vec,size\n0,0,"));
    assert_int_equal(sh("$K plan %s --format md > plan.md", SPEC), 0);
    assert_true(file_starts("plan.md", "| point | source | file | strategy | tile | unroll | vec | size |\n"
                                       "| --- | --- |"));
    assert_int_equal(sh("$K plan %s > plan.txt", SPEC), 0);
    assert_true(file_starts("plan.txt", "spec      "));
}

static void test_compile_inspect_doctor(void **state)
{
    (void)state;
    assert_int_equal(sh("$K compile %s --where 'tile == 8 && vec == 1' --format json --out out > c.json"
                        " 2> c.err", SPEC), 0);
    assert_int_equal(json_of("c.json", "SELECT json_valid(?1)"), 1);
    assert_int_equal(json_of("c.json", "SELECT json_array_length(?1)"), 6);
    assert_int_equal(json_of("c.json", "SELECT count(*) FROM json_each(?1) WHERE json_extract(value, '$.status')"
                                       " = 'ok' AND json_extract(value, '$.arch') = 'sm_90' AND"
                                       " json_type(value, '$.regs') = 'integer'"), 6);
    char *err = file_read(tmp_path("c.err"), NULL);
    assert_non_null(strstr(err, "6 compiles"));     /* the summary: on stderr */
    free(err);
    assert_int_equal(sh("$K inspect %s --where 'tile == 8 && vec == 1' --format json > i.json 2>/dev/null", SPEC),
                     0);
    assert_int_equal(json_of("i.json", "SELECT json_array_length(?1)"), 6);
    assert_int_equal(json_of("i.json", "SELECT json_type(?1, '$[0].facts') = 'object'"), 1);
    assert_int_equal(json_of("i.json", "SELECT json_type(?1, '$[0].facts.regs') = 'integer'"), 1);
    assert_int_equal(sh("$K inspect %s --where 'tile == 8' --format csv --arch sm_80,sm_90 > i.csv 2>/dev/null",
                        SPEC), 0);
    assert_true(file_starts("i.csv", "variant,arch,status,tags,summary,memory,sites,facts,log\n"));
    /* doctor: 1 where kvx cannot compile; here it can. */
    assert_int_equal(sh("$K doctor --format json > d.json"), 0);
    assert_int_equal(json_of("d.json", "SELECT count(*) FROM json_each(?1) WHERE json_extract(value, '$.check')"
                                       " = 'NVRTC' AND json_extract(value, '$.status') = 'ok'"), 1);
    assert_int_equal(sh("$K doctor > d.txt"), 0);
    assert_true(file_starts("d.txt", "kvx 0."));
}

static void test_failures_json(void **state)
{
    (void)state;
    const char *log = tmp_path("run.log");
    if (kvx(log, "run", SPEC, "--db", tmp_path("f.db"), "--where", "tile == 8 && vec == 1 && size == 1K", NULL) != 1) {
        dump(log);
        fail_msg("kvx run of the mismatch variants: expected exit 1");
    }
    assert_int_equal(sh("$K table --db f.db --failures --format json > f.json"), 0);
    assert_int_equal(json_of("f.json", "SELECT json_array_length(?1)"), 3);
    assert_int_equal(json_of("f.json", "SELECT count(*) FROM json_each(?1) WHERE json_extract(value, '$.status')"
                                       " = 'mismatch' AND json_extract(value, '$.detail') LIKE 'out[%'"), 3);
    assert_int_equal(json_of("f.json", "SELECT json_type(?1, '$[0].unroll') = 'integer'"), 1);
}

/* A reader that stops: no message, status 0; a disk that is full: exit 3. */
static void test_closed_pipe(void **state)
{
    (void)state;
    const char *spec = KVX_SOURCE_DIR "/specs/contention.yaml";
    assert_int_equal(sh("set -o pipefail; $K plan %s --points --resolve 2> pipe.err | head -c 100 > /dev/null",
                        spec), 0);
    assert_true(file_empty("pipe.err"));
    assert_int_equal(sh("set -o pipefail; $K plan %s --format json --resolve 2> pipe.err | head -c 100 >"
                        " /dev/null", spec), 0);
    assert_true(file_empty("pipe.err"));
    assert_int_equal(sh("set -o pipefail; $K export --db '" KVX_SOURCE_DIR "/results/h200/sgemm.db' 2> pipe.err |"
                        " head -c 100 > /dev/null"), 0);
    assert_true(file_empty("pipe.err"));
    if (access("/dev/full", W_OK) == 0) {
        assert_int_equal(sh("$K plan %s > /dev/full 2> full.err", spec), 3);
        char *e = file_read(tmp_path("full.err"), NULL);
        assert_non_null(strstr(e, "cannot write standard output"));
        free(e);
    }
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-formats"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_compile_inspect_doctor),
        cmocka_unit_test(test_failures_json),
        cmocka_unit_test(test_closed_pipe),
    };
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
