/* test_hostile_cache: the compile cache under careless and hostile use (issue
 * 22, items 5 and 12).  The kvx binary runs as a child, on the fake device
 * for `kvx run` (KVX_FAKE_GPUS=2, gpu/fake.h), with NVRTC real:
 * - item 5: every file of a cache entry is checked before it is trusted; an
 *   edited figure in meta.txt or an edited inspect-KEY.json is a miss with a
 *   warning, compiled again and replaced;
 * - item 12: the cache is best-effort; one that cannot be written costs one
 *   warning, and compile and run go on without it (every case stored, exit
 *   0); --no-cache never touches the cache directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

/* The shard checks of kvx_child.h are not used here. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kvx_child.h"
#include "hostile_fixture.h"

#define CASES 12            /* ok.yaml: strategies base, alt x 3 sizes x 2 modes */

/* fake.yaml with its failing strategies dropped: every case ends ok. */
static const char *ok_spec(void)
{
    static const char *path;
    if (path)
        return path;
    char *base = file_read(KVX_SOURCE_DIR "/tests/data/specs/fake.yaml", NULL);
    const char *from = "strategy: [base, alt, hang, crash, fault, mismatch]";
    assert_non_null(base);
    char *at = strstr(base, from);
    assert_non_null(at);
    StrBuf b;
    sb_init(&b);
    sb_put(&b, base, (size_t)(at - base));
    sb_puts(&b, "strategy: [base, alt]");
    sb_puts(&b, at + strlen(from));
    path = put("ok.yaml", sb_str(&b), b.len);
    sb_free(&b);
    free(base);
    return path;
}

/* How many times text occurs in the file log. */
static int log_count(const char *log, const char *text)
{
    char *s = file_read(log, NULL);
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, text)); p += strlen(text))
        n++;
    free(s);
    return n;
}

/* The paths of the files under dir, `depth` levels of directories down (a
 * cache's entries: 2), whose names start with prefix; *n gets the count. */
static void files_under(const char *dir, int depth, const char *prefix, char ***v, int *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = path_join(dir, e->d_name);
        if (depth > 0) {
            files_under(p, depth - 1, prefix, v, n);
        } else if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            *v = mem_realloc(*v, sizeof(char *) * (size_t)(*n + 1));
            (*v)[(*n)++] = mem_strdup(p);
        }
        free(p);
    }
    if (d)
        closedir(d);
}

/* The entries of a cache directory left empty: nothing at all in it. */
static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n == 0;
}

/* kvx ARGS... must exit with rc; the log's path. */
static const char *expect_rc(int rc, const char *name, const char *const *argv)
{
    const char *log = tmp_path(name);
    int got = kvx_wait(kvx_start(log, argv), log);
    if (got != rc) {
        dump(log);
        fail_msg("kvx %s exited %d (expected %d)", argv[0], got, rc);
    }
    return log;
}

/* In every file of v, the first "key=" or "\"key\":" value's first digit
 * replaced by another: an edit by hand. */
static void edit_digit(char **v, int n, const char *key)
{
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *text = file_read(v[i], &len);
        assert_non_null(text);
        char *at = strstr(text, key);
        if (!at)
            fail_msg("%s has no %s", v[i], key);
        at += strlen(key);
        *at = *at == '9' ? '8' : '9';
        assert_int_equal(file_write_atomic(v[i], text, len), 0);
        free(text);
    }
}

/* Item 5: an edited regs=99 in meta.txt was served as a hit, the checksum
 * covering the log, PTX and CUBIN only. */
static void test_meta_edited(void **state)
{
    (void)state;
    const char *cache = tmp_path("cache-meta");
    const char *const argv[] = {"compile", ok_spec(), "--cache", cache, "--out", tmp_path("out-meta"), NULL};
    expect_rc(0, "meta-1.log", argv);
    char **metas = NULL;
    int n = 0;
    files_under(cache, 2, "meta.txt", &metas, &n);
    assert_int_equal(n, 2);
    edit_digit(metas, n, "\nregs=");
    const char *log = expect_rc(0, "meta-2.log", argv);
    if (log_count(log, "is corrupt (its files do not match the checksum in meta.txt): compiling") != 2 ||
        log_has(log, " hit ")) {
        dump(log);
        fail_msg("an edited meta.txt was not a miss with a warning");
    }
    /* Replaced by the compile's own figures, then hits. */
    for (int i = 0; i < n; i++) {
        char *meta = file_read(metas[i], NULL);
        assert_non_null(meta);
        assert_null(strstr(meta, "\nregs=9"));
        free(meta);
    }
    log = expect_rc(0, "meta-3.log", argv);
    assert_int_equal(log_count(log, " hit "), 2);
    assert_int_equal(log_count(log, "corrupt"), 0);
    strings_free(metas, n);
}

/* Item 5: the SASS facts kept in an entry (inspect-KEY.json) were served
 * whatever they said. */
static void test_inspect_edited(void **state)
{
    (void)state;
    const char *cache = tmp_path("cache-inspect"), *db = tmp_path("inspect.db");
    const char *const argv[] = {"run", ok_spec(), "--db", db, "--cache", cache, "--rerun", NULL};
    expect_rc(0, "inspect-1.log", argv);
    char **facts = NULL;
    int n = 0;
    files_under(cache, 2, "inspect-", &facts, &n);
    assert_int_equal(n, 2);
    edit_digit(facts, 1, "\"regs\":");
    char *edited = file_read(facts[0], NULL);
    const char *log = expect_rc(0, "inspect-2.log", argv);
    if (log_count(log, "does not match its checksum): compiling") != 1 || !log_has(log, "inspect-")) {
        dump(log);
        fail_msg("an edited inspect-KEY.json was not a miss with a warning");
    }
    char *now = file_read(facts[0], NULL);
    assert_non_null(now);
    assert_string_not_equal(now, edited);
    free(now);
    free(edited);
    /* Every case stored and ok, measured again by the second run. */
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), CASES);
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs"), 2);
    strings_free(facts, n);
}

/* Item 12: `kvx compile` with a cache it cannot write listed every source ok
 * and exited 3, writing nothing under --out.  One warning, for two archs. */
static void test_compile_unwritable(void **state)
{
    (void)state;
    const char *out = tmp_path("out-unwritable");
    char cache[600];
    snprintf(cache, sizeof cache, "%s/sub", put("a-file", "not a directory\n", 0));
    const char *const argv[] = {"compile", ok_spec(), "--arch", "sm_80,sm_90", "--cache", cache, "--out", out, NULL};
    const char *log = expect_rc(0, "compile-unwritable.log", argv);
    if (log_count(log, "warning: the compile cache cannot be written") != 1 ||
        !log_has(log, "Not a directory): compiling without it")) {
        dump(log);
        fail_msg("no one warning about the unwritable cache");
    }
    char **cubins = NULL;
    int n = 0;
    files_under(out, 1, "fake__strategy-", &cubins, &n);
    assert_int_equal(n, 2 * 2 * 3); /* .cu, .ptx and .cubin per source and arch */
    strings_free(cubins, n);
}

/* Item 12: `kvx run` measured nothing when the cache could not be written
 * (a read-only home on a compute node), --no-cache or not. */
static void test_run_unwritable(void **state)
{
    (void)state;
    char cache[600];
    snprintf(cache, sizeof cache, "%s/sub", put("b-file", "not a directory\n", 0));
    const char *db = tmp_path("unwritable.db");
    const char *const argv[] = {"run", ok_spec(), "--db", db, "--cache", cache, NULL};
    const char *log = expect_rc(0, "run-unwritable.log", argv);
    if (log_count(log, "warning: the compile cache cannot be written") != 1) {
        dump(log);
        fail_msg("not one warning about the unwritable cache");
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE status = 'ok'"), CASES);
    /* The scratch the compiles went to is gone. */
    assert_true(dir_is_empty(getenv("TMPDIR")));

    /* --no-cache: not a word about the cache. */
    const char *db2 = tmp_path("unwritable-no-cache.db");
    const char *const argv2[] = {"run", ok_spec(), "--db", db2, "--cache", cache, "--no-cache", NULL};
    log = expect_rc(0, "run-unwritable-no-cache.log", argv2);
    assert_int_equal(log_count(log, "compile cache"), 0);
    assert_int_equal(db_int(db2, "SELECT count(*) FROM cases WHERE status = 'ok'"), CASES);
    assert_true(dir_is_empty(getenv("TMPDIR")));
}

/* Item 12: --no-cache compiled everything and still wrote every entry. */
static void test_no_cache_untouched(void **state)
{
    (void)state;
    const char *cache = tmp_path("cache-untouched");
    assert_int_equal(mkdir(cache, 0755), 0);
    const char *const compile[] = {"compile", ok_spec(), "--cache", cache, "--no-cache", "--out",
                                   tmp_path("out-untouched"), NULL};
    expect_rc(0, "untouched-1.log", compile);
    assert_true(dir_is_empty(cache));
    const char *const run[] = {"run", ok_spec(), "--db", tmp_path("untouched.db"), "--cache", cache,
                               "--no-cache", NULL};
    expect_rc(0, "untouched-2.log", run);
    assert_true(dir_is_empty(cache));
    assert_int_equal(db_int(tmp_path("untouched.db"), "SELECT count(*) FROM cases WHERE status = 'ok'"), CASES);
}

int main(void)
{
    child_env_clean();
    unsetenv("KVX_CACHE_DIR");
    setenv("KVX_FAKE_GPUS", "2", 1);
    if (child_dir_make("kvx-hostile-cache"))
        return 1;
    /* fake.yaml's template beside the copy made of it. */
    char *cu = file_read(KVX_SOURCE_DIR "/tests/data/specs/fake.cu", NULL);
    put("fake.cu", cu, 0);
    free(cu);
    /* The children's TMPDIR, where kvx run's scratch goes: empty after each. */
    assert_int_equal(mkdir(tmp_path("tmpdir"), 0755), 0);
    setenv("TMPDIR", tmp_path("tmpdir"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meta_edited),
        cmocka_unit_test(test_inspect_edited),
        cmocka_unit_test(test_compile_unwritable),
        cmocka_unit_test(test_run_unwritable),
        cmocka_unit_test(test_no_cache_untouched),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
