/* proc: fork+exec on a pipe pair (proc.h). */
#define _GNU_SOURCE     /* pipe2 */
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void fail_errno(KvxError *err, const char *what, const char *call)
{
    kvx_error_set(err, KVX_EIO, NULL, "%s%s%s: %s", what ? what : "", what ? ": " : "", call,
                  strerror(errno));
}

/* In the child: never returns. */
static void exec_child(pid_t parent, const int down[2], const int up[2], const char *exe,
                       char *const argv[])
{
    /* Not to outlive a killed kvx: EOF on stdin reaches only an idle child,
     * and one stuck in a kernel or a long compile would hold its GPU or its
     * core.  The signal follows the thread that forked. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    /* dup2 clears close-on-exec on the child's own stdin and stdout. */
    dup2(down[0], STDIN_FILENO);
    dup2(up[1], STDOUT_FILENO);
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    execv(exe, argv);
    _exit(127);
}

int proc_start(ProcPipes *p, const char *exe, char *const argv[], const char *what, KvxError *err)
{
    int down[2] = {-1, -1}, up[2] = {-1, -1};
    /* From the start (pipe2, not pipe then fcntl): other threads fork
     * meanwhile. */
    if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC)) {
        fail_errno(err, what, "pipe");
        goto fail;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fail_errno(err, what, "fork");
        goto fail;
    }
    if (pid == 0)
        exec_child(parent, down, up, exe, argv);
    close(down[0]);
    close(up[1]);
    *p = (ProcPipes){.pid = pid, .to = down[1], .from = up[0]};
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (down[i] >= 0)
            close(down[i]);
        if (up[i] >= 0)
            close(up[i]);
    }
    return -1;
}
