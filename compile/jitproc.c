/* jitproc: the compile processes of jit_compile_all (jitproc.h): the parent's
 * side (start a child, send a job, read the answer, notice a death) and the
 * child's loop.
 *
 * Invariants:
 * - A child is used by one compile thread at a time (busy); a dead one is
 *   reaped and its slot started again on the next job.
 * - A child's pipe ends are close-on-exec in the parent, so that a child (or
 *   a run's GPU worker) started later holds none of them: closing ours gives
 *   the child EOF, and it exits. */
#define _GNU_SOURCE     /* pipe2: close-on-exec from the start, as other threads fork too */
#include "jitproc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit_internal.h"
#include "core/proc.h"

#define TAG_JOB 0x6b6a6f62u     /* "kjob" */
#define TAG_DONE 0x6b646f6eu    /* "kdon" */

/* A message larger than this is a broken peer, not a compile. */
#define MSG_MAX ((uint64_t)1 << 32)

typedef struct JitProc {
    pid_t pid;                  /* 0: not started */
    int to, from;               /* its stdin, its stdout */
    int busy;
    double start_ms;            /* its start's wall time, not yet counted by a trip */
} JitProc;

struct JitProcs {
    pthread_mutex_t mu;         /* guards busy and the choice of a slot */
    JitProc *p;
    int n;
};

static char g_exe[PATH_MAX];

void jitproc_enable(const char *exe)
{
    snprintf(g_exe, sizeof g_exe, "%s", exe ? exe : "");
}

int jitproc_enabled(void)
{
    return g_exe[0] != 0;
}

/* ---- framing -------------------------------------------------------------------- */

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *data, size_t n)
{
    char *p = data;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r, n -= (size_t)r;
    }
    return 0;
}

static int frame_send(int fd, uint32_t tag, const StrBuf *body)
{
    uint64_t n = body->len;
    if (write_all(fd, &tag, sizeof tag) || write_all(fd, &n, sizeof n))
        return -1;
    return n ? write_all(fd, body->p, n) : 0;
}

/* The body of a frame with tag, malloc'd, its length in *len; NULL on EOF, an
 * error, another tag or a size no message has. */
static char *frame_recv(int fd, uint32_t tag, size_t *len)
{
    uint32_t t = 0;
    uint64_t n = 0;
    if (read_all(fd, &t, sizeof t) || t != tag || read_all(fd, &n, sizeof n) || n >= MSG_MAX)
        return NULL;
    char *body = mem_alloc((size_t)n + 1);
    if (read_all(fd, body, (size_t)n)) {
        free(body);
        return NULL;
    }
    *len = (size_t)n;
    return body;
}

/* ---- fields ----------------------------------------------------------------------- */

static void put_i32(StrBuf *b, int32_t v)
{
    sb_put(b, (const char *)&v, sizeof v);
}

static void put_f64(StrBuf *b, double v)
{
    sb_put(b, (const char *)&v, sizeof v);
}

static void put_blob(StrBuf *b, const void *data, size_t len)
{
    uint64_t n = data ? (uint64_t)len + 1 : 0;
    sb_put(b, (const char *)&n, sizeof n);
    if (data && len)
        sb_put(b, data, len);
}

static void put_str(StrBuf *b, const char *s)
{
    put_blob(b, s, s ? strlen(s) : 0);
}

/* A reader over a frame's body; bad is set by a read past its end. */
typedef struct Cursor {
    const char *p, *end;
    int bad;
} Cursor;

static void get_raw(Cursor *c, void *out, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, c->p, n);
    c->p += n;
}

static int32_t get_i32(Cursor *c)
{
    int32_t v;
    get_raw(c, &v, sizeof v);
    return v;
}

static double get_f64(Cursor *c)
{
    double v;
    get_raw(c, &v, sizeof v);
    return v;
}

/* A blob, malloc'd with a NUL after it, its length in *len (may be NULL);
 * NULL when absent or past the end. */
static char *get_blob(Cursor *c, size_t *len)
{
    uint64_t n = 0;
    get_raw(c, &n, sizeof n);
    if (c->bad || n == 0 || n - 1 > (uint64_t)(c->end - c->p)) {
        c->bad |= n != 0;
        return NULL;
    }
    char *s = mem_alloc((size_t)n);
    memcpy(s, c->p, (size_t)n - 1);
    s[n - 1] = 0;
    c->p += n - 1;
    if (len)
        *len = (size_t)n - 1;
    return s;
}

/* ---- the child --------------------------------------------------------------------- */

/* The answer to one member: what NVRTC made for it and its facts; its CUBIN
 * as an index into the answer's shared CUBINs (blob >= 0) or its own. */
static void answer_member(StrBuf *b, const JitJob *j, int blob)
{
    put_i32(b, j->ok);
    put_f64(b, j->compile_ms);
    const int figures[] = {j->regs, j->spill_stores, j->spill_loads, j->smem_static, j->stack, j->cmem,
                           j->group};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        put_i32(b, figures[i]);
    const double parts[] = {j->facts_ms, j->fe_ms, j->nvvm_ms, j->ptxas_ms};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        put_f64(b, parts[i]);
    put_str(b, j->symbol);
    put_str(b, j->log);
    put_blob(b, j->ptx, j->ptx_len);
    put_i32(b, blob);
    put_blob(b, blob < 0 ? j->cubin : NULL, blob < 0 ? j->cubin_len : 0);
    put_str(b, j->inspect_json);
    put_str(b, j->sass);
}

/* The answer to a frame of n members: the status and the error outside the
 * sources, the time worked, the programs' CUBINs the members share, then
 * each member. */
static void answer(StrBuf *b, int rc, const KvxError *e, const JitJob *j, int n, double work_ms)
{
    put_i32(b, rc);
    put_i32(b, e->code);
    put_str(b, e->msg);
    put_str(b, e->log);
    put_f64(b, work_ms);
    const JitBlob **blobs = mem_calloc((size_t)n, sizeof *blobs);
    int *of = mem_alloc(sizeof *of * (size_t)n), nb = 0;
    for (int i = 0; i < n; i++) {
        of[i] = -1;
        for (int k = 0; k < nb && j[i].cubin_blob; k++)
            if (blobs[k] == j[i].cubin_blob)
                of[i] = k;
        if (of[i] < 0 && j[i].cubin_blob)
            blobs[of[i] = nb++] = j[i].cubin_blob;
    }
    put_i32(b, nb);
    for (int k = 0; k < nb; k++)
        put_blob(b, blobs[k]->data, blobs[k]->len);
    for (int i = 0; i < n; i++)
        answer_member(b, &j[i], of[i]);
    free(of);
    free(blobs);
}

/* The precompiled headers' folder of compile process pid. */
static void pch_dir(pid_t pid, char *out, size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, n, "%s/kvx-pch-%ld", t && *t ? t : "/tmp", (long)pid);
}

/* Remove that folder and its files (a process that crashed left them). */
static void pch_dir_remove(pid_t pid)
{
    char dir[PATH_MAX + 32];
    pch_dir(pid, dir, sizeof dir);
    file_remove_dir(dir);
}

/* The test hooks (tests only): $KVX_TEST_COMPILE_CRASH=TEXT, a child given a
 * source whose name contains TEXT dies of SIGSEGV; $KVX_TEST_COMPILE_DELAY=
 * TEXT:MS, such a source takes MS longer, as a slow one would. */
static void test_hooks(const char *name)
{
    const char *crash = getenv("KVX_TEST_COMPILE_CRASH");
    if (crash && *crash && name && strstr(name, crash)) {
        signal(SIGSEGV, SIG_DFL);       /* die of it, also under ASan's handler */
        raise(SIGSEGV);
    }
    const char *d = getenv("KVX_TEST_COMPILE_DELAY"), *colon = d ? strrchr(d, ':') : NULL;
    if (!colon || colon == d || !name || !memmem(name, strlen(name), d, (size_t)(colon - d)))
        return;
    long ms = strtol(colon + 1, NULL, 10);
    if (ms > 0)
        usleep((useconds_t)(ms * 1000));
}

/* NVRTC's automatic precompiled headers, where the parent puts -pch first on
 * the line (jit.c's pch_mark): the first source of a process that includes
 * a header set pays about 0.4 s more, the next ones with the same headers
 * and arch skip most of the front-end (CUB's block histogram: 3.0 s, then
 * 0.5 s, here).  The PCH lives in this process only (NVRTC ties it to its
 * heap), and the PTX and CUBIN are the same bytes with or without it
 * (checked on every source of specs/contention.yaml and specs/histogram.yaml
 * for sm_80, sm_90 and sm_120), so the cache key does not carry it.  The
 * options to compile with, malloc'd (the strings are opts' or dir_opt), their
 * count in *n. */
static const char **pch_options(char **opts, int nopts, char *dir_opt, size_t cap, int *n)
{
    char dir[PATH_MAX + 32];
    pch_dir(getpid(), dir, sizeof dir);
    snprintf(dir_opt, cap, "-pch-dir=%s", dir);
    int asked = nopts > 0 && strcmp(opts[0], "-pch") == 0;
    int pch = asked && (mkdir(dir, 0700) == 0 || errno == EEXIST) ? 2 : 0;
    const char **all = mem_calloc((size_t)nopts + 2, sizeof *all);
    int k = 0;
    if (pch) {
        all[k++] = opts[0];
        all[k++] = "-pch-messages=false"; /* else "creating precompiled header" reaches the stored log */
        all[k++] = dir_opt;
    }
    /* without its folder, no PCH: the same bytes, only slower */
    for (int i = asked; i < nopts; i++)
        all[k++] = opts[i];
    *n = k;
    return all;
}

/* The members of a frame compiled (one program, or one source alone) and
 * answered into b. */
static void child_compile(JitJob *jobs, int n, char **opts, int nopts, StrBuf *b)
{
    GroupMember *m = mem_calloc((size_t)n, sizeof *m);
    StrBuf *macros = mem_calloc((size_t)n, sizeof *macros);
    for (int i = 0; i < n; i++) {
        test_hooks(jobs[i].name);
        jit_job_release(&jobs[i]);
        const char *why;
        m[i].job = &jobs[i];
        m[i].nentries = n > 1 ? jit_group_entries(jobs[i].source, m[i].entries, JIT_MAX_KERNELS, &macros[i], &why)
                              : 0;
        m[i].macros = sb_str(&macros[i]);
    }
    char dir_opt[PATH_MAX + 48];
    int nall;
    const char **all = pch_options(opts, nopts, dir_opt, sizeof dir_opt, &nall);
    KvxError e = {0};
    double t0 = wall_now_ms();
    int r = jit_group_compile(m, n, all, nall, &e);
    answer(b, r, &e, jobs, n, wall_now_ms() - t0);
    kvx_error_clear(&e);
    free(all);
    for (int i = 0; i < n; i++)
        sb_free(&macros[i]);
    free(macros);
    free(m);
}

/* One frame (arch, options, then each member's name and source) compiled
 * into the answer b.  -1 on a malformed frame. */
static int child_job(const char *body, size_t len, StrBuf *b)
{
    Cursor c = {body, body + len, 0};
    char *arch = get_blob(&c, NULL);
    int nopts = get_i32(&c), n = get_i32(&c);
    int nj = !c.bad && arch && nopts >= 0 && nopts < 4096 && n > 0 && n <= JITPROC_MAX_GROUP ? n : 0;
    char **opts = mem_calloc(nj ? (size_t)nopts + 1 : 1, sizeof *opts);
    JitJob *jobs = mem_calloc(nj ? (size_t)nj : 1, sizeof *jobs);
    for (int i = 0; nj && i < nopts; i++)
        opts[i] = get_blob(&c, NULL);
    int ok = nj > 0;
    for (int i = 0; i < nj; i++) {
        jobs[i].name = get_blob(&c, NULL);
        jobs[i].source = get_blob(&c, NULL);
        jobs[i].arch = arch;
        ok = ok && jobs[i].source != NULL;
    }
    ok = ok && !c.bad;
    if (ok)
        child_compile(jobs, nj, opts, nopts, b);
    for (int i = 0; i < nj; i++) {
        jit_job_release(&jobs[i]);
        free((char *)jobs[i].name);
        free((char *)jobs[i].source);
    }
    for (int i = 0; nj && i < nopts; i++)
        free(opts[i]);
    free(opts);
    free(jobs);
    free(arch);
    return ok ? 0 : -1;
}

int jitproc_main(int in, int out)
{
    StrBuf b;
    sb_init(&b);
    size_t len = 0;
    char *body;
    int rc = 0;
    while ((body = frame_recv(in, TAG_JOB, &len))) {
        sb_reset(&b);
        rc = child_job(body, len, &b) != 0 || frame_send(out, TAG_DONE, &b) != 0;
        free(body);
        if (rc)
            break;
    }
    sb_free(&b);
    return rc;
}

/* ---- the parent --------------------------------------------------------------------- */

JitProcs *jitproc_new(int n)
{
    JitProcs *ps = mem_calloc(1, sizeof *ps);
    pthread_mutex_init(&ps->mu, NULL);
    ps->n = n > 0 ? n : 1;
    ps->p = mem_calloc((size_t)ps->n, sizeof *ps->p);
    return ps;
}

/* Close a child's pipes and reap it; its wait status, or -1. */
static int stop(JitProc *c)
{
    int status = -1;
    if (!c->pid)
        return -1;
    close(c->to);
    close(c->from);
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    pch_dir_remove(c->pid);
    c->pid = 0;
    return status;
}

void jitproc_free(JitProcs *ps)
{
    if (!ps)
        return;
    for (int i = 0; i < ps->n; i++)
        stop(&ps->p[i]);
    pthread_mutex_destroy(&ps->mu);
    free(ps->p);
    free(ps);
}

/* Fork and exec `EXE __compile` on new pipes.  0, or -1 with err. */
static int start(JitProc *c, KvxError *err)
{
    char *argv[] = {"kvx", "__compile", NULL};
    ProcPipes pp;
    double t0 = wall_now_ms();
    if (proc_start(&pp, g_exe, argv, "cannot start a compile process", err) != 0)
        return -1;
    *c = (JitProc){.pid = pp.pid, .to = pp.to, .from = pp.from, .busy = 1, .start_ms = wall_now_ms() - t0};
    return 0;
}

/* An idle child, marked busy: a started one when there is one, else a slot
 * started now.  NULL with err when it cannot be started. */
/* The child this compile thread used last (of which JitProcs): taken again
 * while idle, so that the jobs of one thread, a chain of sources sharing
 * headers among them (jit.c), reuse the headers it precompiled. */
static __thread const JitProcs *t_owner;
static __thread int t_last = -1;

static JitProc *take(JitProcs *ps, KvxError *err)
{
    pthread_mutex_lock(&ps->mu);
    JitProc *got = NULL;
    if (t_owner == ps && t_last >= 0 && !ps->p[t_last].busy && ps->p[t_last].pid)
        got = &ps->p[t_last];
    for (int i = 0; i < ps->n && !got; i++)
        if (!ps->p[i].busy && ps->p[i].pid)
            got = &ps->p[i];
    for (int i = 0; i < ps->n && !got; i++)
        if (!ps->p[i].busy)
            got = &ps->p[i];
    KVX_ASSERT(got);    /* no more compile threads than children */
    got->busy = 1;
    t_owner = ps;
    t_last = (int)(got - ps->p);
    pthread_mutex_unlock(&ps->mu);
    if (!got->pid && start(got, err) != 0) {
        pthread_mutex_lock(&ps->mu);
        got->busy = 0;
        pthread_mutex_unlock(&ps->mu);
        return NULL;
    }
    return got;
}

static void give(JitProcs *ps, JitProc *c)
{
    pthread_mutex_lock(&ps->mu);
    c->busy = 0;
    pthread_mutex_unlock(&ps->mu);
}

/* One member's answer read into job; blobs: the answer's shared CUBINs. */
static void read_member(Cursor *c, JitJob *job, JitBlob **blobs, int nb)
{
    job->ok = get_i32(c);
    job->compile_ms = get_f64(c);
    int *figures[] = {&job->regs, &job->spill_stores, &job->spill_loads, &job->smem_static, &job->stack,
                      &job->cmem, &job->group};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        *figures[i] = get_i32(c);
    double *parts[] = {&job->facts_ms, &job->fe_ms, &job->nvvm_ms, &job->ptxas_ms};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        *parts[i] = get_f64(c);
    char *symbol = get_blob(c, NULL);
    snprintf(job->symbol, sizeof job->symbol, "%s", symbol ? symbol : "");
    free(symbol);
    job->log = get_blob(c, NULL);
    job->ptx = get_blob(c, &job->ptx_len);
    int blob = get_i32(c);
    job->cubin = get_blob(c, &job->cubin_len);
    if (blob >= 0 && blob < nb && !job->cubin) {
        jit_blob_ref(blobs[blob]);
        job->cubin_blob = blobs[blob];
        job->cubin = blobs[blob]->data;
        job->cubin_len = blobs[blob]->len;
    } else if (blob >= 0) {
        c->bad = 1;
    }
    job->inspect_json = get_blob(c, NULL);
    job->sass = get_blob(c, NULL);
}

/* The answer read into jobs[0..n) (NVRTC's outputs and the facts), the
 * child's working time into *work_ms.  The rc of the child's compile, or -2
 * on a malformed answer. */
static int read_answer(const char *body, size_t len, JitJob **jobs, int n, double *work_ms, KvxError *err)
{
    Cursor c = {body, body + len, 0};
    int rc = get_i32(&c);
    KvxError e = {.code = get_i32(&c)};
    char *msg = get_blob(&c, NULL), *log = get_blob(&c, NULL);
    *work_ms = get_f64(&c);
    int nb = get_i32(&c);
    if (nb < 0 || nb > n)
        nb = 0, c.bad = 1;
    JitBlob **blobs = mem_calloc((size_t)nb + 1, sizeof *blobs);
    for (int k = 0; k < nb && !c.bad; k++) {
        size_t blen = 0;
        char *data = get_blob(&c, &blen);
        blobs[k] = jit_blob_new(data, data ? blen : 0);
        free(data);
    }
    for (int i = 0; i < n && !c.bad; i++)
        read_member(&c, jobs[i], blobs, nb);
    for (int k = 0; k < nb; k++)
        jit_blob_unref(blobs[k]);
    free(blobs);
    if (c.bad)
        rc = -2;
    else if (rc != 0) {
        kvx_error_set(err, e.code ? e.code : KVX_ECOMPILE, &(SrcPos){jobs[0]->name, 0, 0}, "%s",
                      msg ? msg : "NVRTC failed");
        if (log)
            kvx_error_attach_log(err, log, strlen(log));
    }
    free(msg);
    free(log);
    return rc;
}

/* The job a child died on: a failed compile whose log says how. */
static void died(JitJob *job, pid_t pid, int status)
{
    char key[sizeof job->key];
    memcpy(key, job->key, sizeof key);
    jit_job_release(job);
    memcpy(job->key, key, sizeof key);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "kvx: the compile process (pid %ld) ", (long)pid);
    if (status >= 0 && WIFSIGNALED(status))
        sb_printf(&b, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (status >= 0 && WIFEXITED(status))
        sb_printf(&b, "exited with status %d", WEXITSTATUS(status));
    else
        sb_puts(&b, "broke off");
    sb_printf(&b, " while compiling %s; the other sources compile on\n", job->name ? job->name : "kernel.cu");
    job->log = sb_take(&b);
    job->ok = 0;
    job->crashed = 1;
}

/* The frame of jobs[0..n) into b: arch, options, each name and source. */
static void frame_jobs(StrBuf *b, JitJob **jobs, int n, const char *const *opts, int nopts)
{
    put_str(b, jobs[0]->arch);
    put_i32(b, nopts);
    put_i32(b, n);
    for (int i = 0; i < nopts; i++)
        put_str(b, opts[i]);
    for (int i = 0; i < n; i++) {
        put_str(b, jobs[i]->name);
        put_str(b, jobs[i]->source);
    }
}

/* One frame's round trip on child c: 0, rc of the compile (-1), or -2 when
 * the child died or broke the protocol (then reaped: *pid, *status). */
static int round_trip(JitProc *c, JitJob **jobs, int n, const char *const *opts, int nopts,
                      JitTrip *trip, pid_t *pid, int *status, KvxError *err)
{
    StrBuf b;
    sb_init(&b);
    frame_jobs(&b, jobs, n, opts, nopts);
    size_t len = 0;
    double t0 = wall_now_ms();
    char *body = frame_send(c->to, TAG_JOB, &b) == 0 ? frame_recv(c->from, TAG_DONE, &len) : NULL;
    int rc = body ? read_answer(body, len, jobs, n, &trip->work_ms, err) : -2;
    trip->wall_ms = wall_now_ms() - t0;
    if (rc == -2) {
        *pid = c->pid;
        kill(c->pid, SIGKILL);  /* a malformed answer: a child not to be trusted further */
        *status = stop(c);
    }
    free(body);
    sb_free(&b);
    return rc;
}

int jitproc_compile(JitProcs *ps, JitJob **jobs, int n, const char *const *opts, int nopts, JitTrip *trip,
                    KvxError *err)
{
    JitProc *c = take(ps, err);
    if (!c)
        return -1;
    *trip = (JitTrip){.start_ms = c->start_ms};
    c->start_ms = 0;
    pid_t pid = 0;
    int status = -1;
    int rc = round_trip(c, jobs, n, opts, nopts, trip, &pid, &status, err);
    give(ps, c);
    if (rc != -2)
        return rc;
    if (n == 1) {
        died(jobs[0], pid, status);
        return 1;
    }
    /* A program's process died: each member alone, so that only the source
     * that kills it is a failed compile. */
    for (int i = 0; i < n; i++) {
        JitTrip one;
        jit_job_release(jobs[i]);
        int r = jitproc_compile(ps, &jobs[i], 1, opts, nopts, &one, err);
        trip->start_ms += one.start_ms, trip->wall_ms += one.wall_ms, trip->work_ms += one.work_ms;
        if (r < 0)
            return -1;
    }
    return 1;
}
