/* main: the kvx binary and its verbs.
 *
 * kvx plan|gen|compile|inspect SPEC   need no GPU
 * kvx run SPEC                        measures on the GPUs (supervised workers)
 * kvx table|report|compare|export|import|merge   read and combine results
 * kvx doctor                          what this machine has
 * kvx __worker N                      internal: the measuring process for GPU N
 * kvx __counters N FILE               internal: the cases of FILE once each, under ncu */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "results.h"
#include "worker.h"

typedef struct Verb {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} Verb;

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

static const Verb verbs[] = {
    {"plan", cmd_plan, "the space: axes, code/workload, sizes, distinct sources"},
    {"gen", cmd_gen, "write one .cu per distinct source and an index (--out DIR)"},
    {"compile", cmd_compile, "NVRTC to PTX and CUBIN per arch, with the ptxas report and cache"},
    {"inspect", cmd_inspect, "what the compiler made of the atomics (PTX, SASS), per arch"},
    {"run", cmd_run, "verify and measure every case on the GPU; results to SQLite"},
    {"table", cmd_table, "pivot stored results: any axes to rows and columns"},
    {"report", cmd_report, "a Markdown report with tables and plots for a spec"},
    {"compare", cmd_compare, "two result sets side by side (GPUs, toolkits, runs)"},
    {"export", cmd_export, "every stored row as CSV or JSON"},
    {"import", cmd_import, "published reference figures (CSV) as a named run"},
    {"merge", cmd_merge, "combine result databases (one row per case key)"},
    {"doctor", cmd_doctor, "NVRTC, CUDA headers, driver, GPUs, disassembler"},
    {"__worker", cmd_worker, NULL},
    {"__counters", cmd_counters, NULL},
    {"__probe", cmd_probe, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "kvx %s: a CUDA kernel variant explorer\n\nusage: kvx VERB [options]  (kvx VERB --help)\n\n",
            KVX_VERSION);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (verbs[i].help)
            fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].help);
    fprintf(f, "\ndocs/spec.md describes specs; docs/results-schema.md the results database.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("kvx %s\n", KVX_VERSION);
        return 0;
    }
    /* A worker that dies mid-write must not take the parent with it: writes to
     * its pipe then fail with EPIPE and the case is recorded as a fault. */
    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(argv[1], verbs[i].name))
            return verbs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kvx: unknown verb '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
