/* proc: kvx's child processes that talk over a pipe pair: a worker
 * (run/run.c) and a compile process (compile/jitproc.c) are kvx itself,
 * exec'd afresh.
 *
 * Invariants: both pipe pairs are close-on-exec from their creation, so a
 * child started later never inherits another child's ends (closing ours
 * would then never give that child EOF); a child dies with the thread that
 * started it (PR_SET_PDEATHSIG), and one whose parent is already gone exits
 * before its exec. */
#ifndef KVX_PROC_H
#define KVX_PROC_H

#include "core/util.h"

#include <sys/types.h>

typedef struct ProcPipes {
    pid_t pid;
    int to;      /* the child's stdin */
    int from;    /* the child's stdout */
} ProcPipes;

/* Fork and exec exe with argv (NULL-terminated); the child's stdin and
 * stdout are the pipes, its stderr ours.  0 with *p filled, or -1 with err
 * ("WHAT: pipe: ..." / "WHAT: fork: ...", or without "WHAT: " when what is
 * NULL) and nothing left open. */
int proc_start(ProcPipes *p, const char *exe, char *const argv[], const char *what, KvxError *err);

#endif
