/* main: the kvx binary: finds the verb and hands it the rest of the command
 * line.  The verbs are cli.h's CLI_VERBS, each with its option table.
 *
 * kvx plan|gen|compile|inspect SPEC   need no GPU
 * kvx run SPEC                        measures on the GPUs (supervised workers)
 * kvx table|report|compare|export|import|merge   read and combine results
 * kvx doctor                          what this machine has
 * kvx __worker N                      internal: the measuring process for GPU N
 * kvx __counters N FILE               internal: the cases of FILE once each, under ncu
 * kvx __probe FD                      internal: the GPUs, probed in a process of their own
 * kvx __compile                       internal: a compile process (compile/jitproc.h)
 * kvx __man, __bash-completion        build: the man page and the completion script (cli_doc.c) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "compile/jitproc.h"
#include "core/version.h"
#include "gpu/worker.h"

static int close_stdout(const char *verb, int rc);

/* The verbs kvx starts itself; not listed. */
typedef struct Internal {
    const char *name;
    int (*fn)(int argc, char **argv);
} Internal;

static int cmd_worker(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "kvx __worker: internal verb (expected a GPU ordinal)\n");
        return 2;
    }
    return worker_main(atoi(argv[1]), STDIN_FILENO, STDOUT_FILENO);
}

static int cmd_counters(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "kvx __counters: internal verb (expected a GPU ordinal and a case file)\n");
        return 2;
    }
    int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "kvx __counters: %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    int rc = worker_counters_main(atoi(argv[1]), fd);
    close(fd);
    return rc;
}

static int cmd_probe(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "kvx __probe: internal verb (expected a file descriptor)\n");
        return 2;
    }
    return worker_probe_main(atoi(argv[1]));
}

static int cmd_compile_child(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "kvx __compile: internal verb (takes no arguments)\n");
        return 2;
    }
    return jitproc_main(STDIN_FILENO, STDOUT_FILENO);
}

static int cmd_man(int argc, char **argv)
{
    cli_doc_man(stdout);
    return close_stdout("kvx __man", 0);
}

static int cmd_bash(int argc, char **argv)
{
    cli_doc_bash(stdout);
    return close_stdout("kvx __bash-completion", 0);
}

static const Internal internals[] = {
    {"__worker", cmd_worker},
    {"__counters", cmd_counters},
    {"__probe", cmd_probe},
    {"__compile", cmd_compile_child},
    {"__man", cmd_man},
    {"__bash-completion", cmd_bash},
};

static void usage(FILE *f)
{
    fprintf(f, "kvx %s: a CUDA kernel variant explorer\n\nusage: kvx VERB [options]  (kvx VERB --help)\n\n",
            version_text());
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        fprintf(f, "  %-9s %s\n", (*v)->name, (*v)->summary);
    fprintf(f, "\ndocs/cli.md lists every verb's options, docs/spec.md describes specs,\n"
            "docs/results-schema.md the results database.\n");
}

/* Whether stdout is a pipe whose reader has gone (`kvx plan SPEC | head`):
 * POLLERR on its write end. */
static int reader_gone(void)
{
    struct pollfd p = {.fd = 1, .events = POLLOUT};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* The exit status once stdout is flushed and closed: output lost to a full
 * disk or >&- is a failure, exit 3, with one message for every verb and
 * --help, where each verb's own writes went unchecked.  A reader that
 * stopped reading (a closed pipe: SIGPIPE is ignored) wanted no more: that
 * ends quietly, with the verb's own status.  A failure of the verb itself
 * (2, 3) stays its status.  verb: "kvx" or "kvx VERB". */
static int close_stdout(const char *verb, int rc)
{
    int bad = ferror(stdout), saved = EIO;  /* the error of an earlier write is gone */
    if (fflush(stdout) != 0)
        bad = 1, saved = errno;
    int gone = bad && (saved == EPIPE || reader_gone());
    /* A stdout closed (>&-) that was never written to is no loss (EBADF). */
    if (fclose(stdout) != 0 && errno != EBADF && errno != EPIPE)
        bad = 1, saved = errno;
    if (!bad || gone)
        return rc;
    fprintf(stderr, "%s: cannot write standard output: %s\n", verb, strerror(saved));
    return rc >= 2 ? rc : 3;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return close_stdout("kvx", argc < 2 ? 2 : 0);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("kvx %s\n", version_text());
        return close_stdout("kvx", 0);
    }
    if (argv[1][0] == '-') {
        fprintf(stderr, "kvx: '%s' before the verb: options go after it (kvx VERB [options]; kvx --help "
                "lists the verbs)\n", argv[1]);
        return 2;
    }
    /* A worker that dies mid-write must not take the parent with it: writes to
     * its pipe then fail with EPIPE and the case is recorded as a fault. */
    signal(SIGPIPE, SIG_IGN);
    /* NVRTC serialises the compiles of one process: compile in processes. */
    jitproc_enable("/proc/self/exe");
    for (const CliVerb *const *v = CLI_VERBS; *v; v++)
        if (!strcmp(argv[1], (*v)->name)) {
            char verb[64];
            snprintf(verb, sizeof verb, "kvx %s", (*v)->name);
            return close_stdout(verb, (*v)->run(argc - 1, argv + 1));
        }
    for (size_t i = 0; i < sizeof internals / sizeof internals[0]; i++)
        if (!strcmp(argv[1], internals[i].name))
            return internals[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kvx: unknown verb '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
