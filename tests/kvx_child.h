/* kvx_child.h: helpers for tests that run the kvx binary as a child process,
 * as a user runs it, and read its database back (test_gpu_run.c,
 * test_gpu_peers.c, test_run_fake.c).  Header-only, every function static.  The including test
 * includes <cmocka.h> first and writes its scratch directory into tmp before
 * using tmp_path().  kvx_wait() kills the child's process group once the
 * child has exited too: a hung worker must not outlive the command that
 * started it.  KVX_HANG_S is when a command (or a wait for what one writes)
 * is taken to hang: a hang, not a slow machine, is what it catches, so it
 * is far above any command's time (the slowest, test_search's and
 * test_run_fake's runs, take seconds to a minute on a loaded 2-core
 * machine) and below ctest's TIMEOUT, so that the group is killed and the
 * log shown before ctest ends the test. */
#ifndef KVX_TESTS_KVX_CHILD_H
#define KVX_TESTS_KVX_CHILD_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#define KVX_HANG_S 600

static char tmp[512];

/* A test's environment free of what a caller's shell may hold: Slurm's
 * array variables (kvx reads them as --shard) and the fake driver's knobs
 * (each test sets its own). */
static inline void child_env_clean(void)
{
    static const char *const names[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                                        "KVX_FAKE_LOG", "KVX_FAKE_NS_PER_BYTE", "KVX_FAKE_FAULT_LAUNCH",
                                        "KVX_FAKE_MEM_FREE", "KVX_FAKE_CALL_LOG", "KVX_TEST_WORKER_MODULES"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

/* The test's directory, $TMPDIR/NAME-XXXXXX (or under /tmp), as tmp, its
 * path printed.  0, or -1 after saying why. */
static inline int child_dir_make(const char *name)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp, sizeof tmp, "%s/%s-XXXXXX", base, name);
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

/* The end of a test's main: its directory removed when nothing failed, kept
 * for a look (and named) otherwise.  Returns failed. */
static inline int child_dir_done(int failed)
{
    if (failed) {
        printf("  kept %s for a look\n", tmp);
        return failed;
    }
    char cmd[sizeof tmp + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", tmp);
    return failed;
}

/* A path in the test's directory; the strings live until exit. */
static const char *tmp_path(const char *name)
{
    static char *paths[128];
    static int npaths;
    for (int i = 0; i < npaths; i++)
        if (!strcmp(strrchr(paths[i], '/') + 1, name))
            return paths[i];
    assert_true(npaths < 128);
    size_t len = strlen(tmp) + strlen(name) + 2;
    paths[npaths] = mem_alloc(len);
    snprintf(paths[npaths], len, "%s/%s", tmp, name);
    return paths[npaths++];
}

/* ---- running kvx ------------------------------------------------------------ */

/* Start KVX_BINARY with argv (argv[0] is the verb) in a process group of its
 * own, stdout and stderr to log.  Returns the pid. */
static pid_t kvx_start(const char *log, const char *const *argv)
{
    const char *args[32] = {"kvx"};
    int n = 1;
    for (; argv[n - 1] && n < 31; n++)
        args[n] = argv[n - 1];
    args[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
        execv(KVX_BINARY, (char *const *)args);
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so that a kill right after the fork finds the group */
    return pid;
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void dump(const char *log)
{
    size_t len = 0;
    char *text = file_read(log, &len);
    printf("---- %s ----\n%s\n----\n", log, text ? (len > 6000 ? text + len - 6000 : text) : "(unreadable)");
    free(text);
}

/* Wait for pid, killing its group past the deadline.  The exit code, or
 * 128 + signal.  The group is killed in any case afterwards: a hung fake
 * worker outlives a parent that did not kill it. */
static int kvx_wait(pid_t pid, const char *log)
{
    double end = wall_now_ms() + KVX_HANG_S * 1000.0;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            kill(-pid, SIGKILL);
            return exit_code(status);
        }
        assert_true(r == 0 || errno == EINTR);
        if (wall_now_ms() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            dump(log);
            fail_msg("kvx did not finish in %d s: taken to hang", KVX_HANG_S);
        }
        usleep(20 * 1000);
    }
}

/* Run kvx VERB ARGS... (NULL-terminated) to completion; the exit code. */
static int kvx(const char *log, ...)
{
    const char *argv[32];
    int n = 0;
    va_list ap;
    va_start(ap, log);
    while (n < 31 && (argv[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    argv[n] = NULL;
    return kvx_wait(kvx_start(log, argv), log);
}

static int log_has(const char *log, const char *text)
{
    char *s = file_read(log, NULL);
    int found = s && strstr(s, text);
    free(s);
    return found;
}

/* ---- reading the database ------------------------------------------------------ */

static sqlite3 *db_open(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 2000);
    return db;
}

/* One number from sql over the database at path; -1 when there is no
 * database or table yet. */
static double db_num(const char *path, const char *sql)
{
    sqlite3 *db = db_open(path);
    sqlite3_stmt *q = NULL;
    double v = -1;
    if (db && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

static int db_int(const char *path, const char *sql) { return (int)db_num(path, sql); }

/* The first text column of every row of sql, in order; *n gets the count. */
static char **db_strings(const char *path, const char *sql, int *n)
{
    sqlite3 *db = db_open(path);
    sqlite3_stmt *q = NULL;
    assert_non_null(db);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s: %s", path, sql, sqlite3_errmsg(db));
    int cap = 64;
    char **v = mem_alloc(sizeof(char *) * (size_t)cap);
    *n = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap)
            v = mem_realloc(v, sizeof(char *) * (size_t)(cap *= 2));
        const char *t = (const char *)sqlite3_column_text(q, 0);
        v[(*n)++] = mem_strdup(t ? t : "");
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

static void strings_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int strings_have(char **v, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

/* ---- shards ---------------------------------------------------------------------- */

/* The two shard databases s1 and s2 share no case key and split no workload
 * group.  *nkeys1: s1's cases; *nwork1, *nwork2: each one's workload groups. */
static void check_shards_disjoint(const char *s1, const char *s2, int *nkeys1, int *nwork1, int *nwork2)
{
    int nk1, nk2, nw1, nw2;
    char **k1 = db_strings(s1, "SELECT key FROM cases", &nk1), **k2 = db_strings(s2, "SELECT key FROM cases", &nk2);
    char **w1 = db_strings(s1, "SELECT DISTINCT workload FROM cases", &nw1);
    char **w2 = db_strings(s2, "SELECT DISTINCT workload FROM cases", &nw2);
    for (int i = 0; i < nk1; i++)
        if (strings_have(k2, nk2, k1[i]))
            fail_msg("case %s is in both shards", k1[i]);
    for (int i = 0; i < nw1; i++)
        if (strings_have(w2, nw2, w1[i]))
            fail_msg("workload %s is split between the shards", w1[i]);
    strings_free(k1, nk1);
    strings_free(k2, nk2);
    strings_free(w1, nw1);
    strings_free(w2, nw2);
    *nkeys1 = nk1, *nwork1 = nw1, *nwork2 = nw2;
}

/* `kvx merge all s1 s2` succeeds, and sql (one text column, ordered) gives
 * the same `points` rows over all as over plain.  log: the merge's output. */
static void check_merge_is_plain(const char *log, const char *all, const char *s1, const char *s2,
                                 const char *plain, const char *sql, int points)
{
    int rc = kvx(log, "merge", all, s1, s2, NULL);
    if (rc != 0) {
        dump(log);
        fail_msg("kvx merge exited %d", rc);
    }
    int na, np;
    char **ka = db_strings(all, sql, &na);
    char **kp = db_strings(plain, sql, &np);
    assert_int_equal(na, points);
    assert_int_equal(np, points);
    for (int i = 0; i < na; i++)
        if (strcmp(ka[i], kp[i]))
            fail_msg("merged shards and the plain run differ at row %d: %s vs %s", i, ka[i], kp[i]);
    strings_free(ka, na);
    strings_free(kp, np);
}

/* The GPUs `kvx doctor` counts (0 without a driver), and in why its GPUs
 * line, for a gpu test's skip message.  Unused by the cpu tests that share
 * this header. */
__attribute__((unused)) static int doctor_gpus(char *why, size_t len)
{
    FILE *p = popen("'" KVX_BINARY "' doctor 2>&1", "r");
    char line[512];
    int n = 0;
    snprintf(why, len, "kvx doctor printed no GPUs line");
    if (!p)
        return 0;
    while (fgets(line, sizeof line, p)) {
        if (strncmp(line, "GPUs", 4) != 0)
            continue;
        line[strcspn(line, "\n")] = 0;
        snprintf(why, len, "kvx doctor: %s", line);
        if (sscanf(line + 4, "%d", &n) != 1)
            n = 0;
    }
    pclose(p);
    return n;
}

#endif
