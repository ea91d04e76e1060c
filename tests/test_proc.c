/* test_proc: core/proc.c's child on a pipe pair, as a worker and a compile
 * process are started: it talks over the pipes, a child started later holds
 * none of an earlier child's pipe ends (or that child would never see EOF),
 * and it dies with the process that started it. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/proc.h"

/* All of fd until EOF, into buf (NUL-terminated). */
static void read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    ssize_t k;
    while (got + 1 < n && (k = read(fd, buf + got, n - 1 - got)) > 0)
        got += (size_t)k;
    buf[got] = '\0';
}

static void finish(ProcPipes *p)
{
    int status = 0;
    close(p->to);
    close(p->from);
    assert_int_equal(waitpid(p->pid, &status, 0), p->pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_talks(void **state)
{
    (void)state;
    KvxError err = {0};
    ProcPipes p;
    char *argv[] = {"cat", NULL}, buf[64];
    assert_int_equal(proc_start(&p, "/bin/cat", argv, "test", &err), 0);
    assert_int_equal(write(p.to, "ping\n", 5), 5);
    close(p.to);
    read_all(p.from, buf, sizeof buf);
    assert_string_equal(buf, "ping\n");
    p.to = dup(p.from);
    finish(&p);
}

static void pipe_name(int fd, char *out, size_t n)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, out, n - 1);
    assert_true(k > 0);
    out[k] = '\0';
}

static void test_no_inherited_ends(void **state)
{
    (void)state;
    KvxError err = {0};
    ProcPipes a, b;
    char *cat[] = {"cat", NULL};
    char *list[] = {"sh", "-c", "for f in /proc/$$/fd/*; do readlink $f; done; true", NULL};
    char to[64], from[64], buf[4096];
    assert_int_equal(proc_start(&a, "/bin/cat", cat, NULL, &err), 0);
    pipe_name(a.to, to, sizeof to);
    pipe_name(a.from, from, sizeof from);
    assert_int_equal(proc_start(&b, "/bin/sh", list, NULL, &err), 0);
    read_all(b.from, buf, sizeof buf);
    if (strstr(buf, to) || strstr(buf, from))
        fail_msg("the second child holds the first's pipe (%s, %s):\n%s", to, from, buf);
    assert_non_null(strstr(buf, "pipe:"));   /* its own stdin and stdout */
    finish(&b);
    finish(&a);
}

/* Gone, or a zombie that nobody has reaped yet (PID 1 of a container may
 * never reap). */
static int is_gone(pid_t pid)
{
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');
    return !end || end[1] != ' ' || end[2] == 'Z' || end[2] == 'X';
}

/* A parent killed mid-run takes its child with it. */
static void test_dies_with_parent(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t mid = fork();
    assert_true(mid >= 0);
    if (mid == 0) {
        KvxError err = {0};
        ProcPipes p;
        char *argv[] = {"sleep", "30", NULL};
        if (proc_start(&p, "/bin/sleep", argv, NULL, &err) != 0)
            _exit(2);
        (void)!write(report[1], &p.pid, sizeof p.pid);
        pause();
        _exit(0);
    }
    pid_t child = 0;
    assert_int_equal(read(report[0], &child, sizeof child), (ssize_t)sizeof child);
    close(report[0]), close(report[1]);
    kill(mid, SIGKILL);
    waitpid(mid, NULL, 0);
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {
        gone = is_gone(child);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (!gone) {
        kill(child, SIGKILL);
        fail_msg("the child outlived its killed parent by 2 s");
    }
}

static void test_exec_failure(void **state)
{
    (void)state;
    KvxError err = {0};
    ProcPipes p;
    char *argv[] = {"x", NULL}, buf[8];
    int status = 0;
    assert_int_equal(proc_start(&p, "/nonexistent/kvx", argv, NULL, &err), 0);
    read_all(p.from, buf, sizeof buf);
    close(p.to), close(p.from);
    assert_int_equal(waitpid(p.pid, &status, 0), p.pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_talks),
        cmocka_unit_test(test_no_inherited_ends),
        cmocka_unit_test(test_dies_with_parent),
        cmocka_unit_test(test_exec_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
