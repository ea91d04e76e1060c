/* run_ahead: host references computed ahead of the GPU.
 *
 * Once the hand-out order is known (run_order.c, run_order), the parent lists the host
 * references its cases will need (count_below, histogram, ...), once per key
 * (every variant of a workload point checks against the same one), in the
 * order the cases will run, and a thread of its own computes them one after
 * the other, each on all cores, into files of a folder of their own
 * (host/hostref.h); a worker reads a case's reference from there when the
 * case comes, so the GPU waits for one (host_wait_ms) only where this thread
 * is behind the GPU.  The inputs the references read are generated here on
 * the host, kept for the next keys (AHEAD_INPUT_BYTES); the workers generate
 * theirs on the device.  Cases are resolved here as `kvx plan` resolves
 * them, without PTX: a check and its inputs do not depend on the kernel's
 * parameter widths. */
#include "run_internal.h"
#include "host/hostref.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pool.h"

/* Inputs kept across references: contention's at both sizes stay. */
#define AHEAD_INPUT_BYTES (2ULL << 30)
#define AHEAD_MAX_INPUTS 8

/* One reference to compute: the check, with its string arguments in its own
 * storage, and the buffers it reads, by argument. */
typedef struct AheadJob {
    char key[65];
    int first_at;           /* cases listed before its first, in hand-out order */
    CaseCheck k;
    CaseBuf bufs[CASE_MAX_REFARGS];
    ElemTypeId out_type;
    uint64_t out_count;
} AheadJob;

typedef struct AheadInput {
    char key[65];
    void *data;
    uint64_t bytes, used;
} AheadInput;

struct RunAhead {
    pthread_t tid;
    int started;
    char dir[1024];
    AheadJob *jobs;
    int n, cap;
    AheadInput in[AHEAD_MAX_INPUTS];
    int nin;
    uint64_t clock;
    int threads;
    int stop;               /* __atomic: the session ends, compute no more */
    int hold_at;            /* test hook: the hold_at-th reference (1-based) waits for */
    int released;           /* __atomic: run_ahead_release's word, then */
    int hold_ms;            /* this much longer */
    double busy_ms;         /* computing, inputs included */
};

/* ---- the list, on the session's thread ----------------------------------------------- */

static int job_known(const RunAhead *a, const char *key)
{
    for (int i = a->n - 1; i >= 0; i--)
        if (strcmp(a->jobs[i].key, key) == 0)
            return 1;
    return 0;
}

static void job_add(RunAhead *a, const CaseDesc *d, const CaseCheck *k, const char *key, int first_at)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->jobs = mem_realloc(a->jobs, sizeof *a->jobs * (size_t)a->cap);
    }
    AheadJob *j = &a->jobs[a->n++];
    memset(j, 0, sizeof *j);
    memcpy(j->key, key, 65);
    j->first_at = first_at;
    j->k = *k;
    /* A string argument is copied into the job; job_compute points at the
     * copy (the list grows by realloc, so a pointer kept here would not
     * follow the job). */
    for (int q = 0; q < k->nargs; q++) {
        RefArg *arg = &j->k.args[q];
        if (arg->v.kind == VAL_STR) {
            snprintf(j->k.strs[q], sizeof j->k.strs[q], "%s", k->args[q].v.s);
            arg->v.s = NULL;
        }
        if (arg->is_buf)
            j->bufs[q] = d->bufs[k->argbuf[q]];
    }
    j->out_type = d->bufs[k->buf].type;
    j->out_count = d->bufs[k->buf].count;
}

/* Every case in hand-out order: the host references of its resolved case
 * not yet listed are added. */
static void jobs_collect(RunSession *r, RunAhead *a)
{
    int listed = 0;
    for (int u = 0; u < r->queue.nunits; u++) {
        const Range *range = &r->queue.units[r->queue.from_end ? r->queue.nunits - 1 - u : u];
        for (int i = range->cur; i < range->end; i++, listed++) {
            const CaseDesc *d = r->queue.cases[i].desc;
            for (int q = 0; q < d->nchecks; q++) {
                char key[65];
                if (!hostref_is_host(d, &d->checks[q]))
                    continue;
                hostref_key(d, &d->checks[q], key);
                if (!job_known(a, key))
                    job_add(a, d, &d->checks[q], key, listed);
            }
        }
    }
}

/* ---- the thread ------------------------------------------------------------------------ */

static int input_needed(const AheadJob *j, const char *key)
{
    for (int q = 0; q < j->k.nargs; q++)
        if (j->k.args[q].is_buf && strcmp(j->bufs[q].input_key, key) == 0)
            return 1;
    return 0;
}

/* Room for j's inputs: those it does not read go, least recently used first,
 * past the cache's bytes or entries. */
static void inputs_evict(RunAhead *a, const AheadJob *j)
{
    for (;;) {
        uint64_t bytes = 0;
        int lru = -1;
        for (int i = 0; i < a->nin; i++) {
            bytes += a->in[i].bytes;
            if (!input_needed(j, a->in[i].key) && (lru < 0 || a->in[i].used < a->in[lru].used))
                lru = i;
        }
        if (lru < 0 || (bytes <= AHEAD_INPUT_BYTES && a->nin + j->k.nargs <= AHEAD_MAX_INPUTS))
            return;
        free(a->in[lru].data);
        a->in[lru] = a->in[--a->nin];
    }
}

/* b's host content, generated once per input key.  NULL with err. */
static const void *input_get(RunAhead *a, const CaseBuf *b, KvxError *err)
{
    for (int i = 0; i < a->nin; i++)
        if (strcmp(a->in[i].key, b->input_key) == 0) {
            a->in[i].used = ++a->clock;
            return a->in[i].data;
        }
    KVX_ASSERT(a->nin < AHEAD_MAX_INPUTS);
    const ElemType *t = &elem_types[b->type];
    uint64_t bytes = b->count * (uint64_t)t->size;
    void *data = mem_alloc(bytes ? bytes : 1);
    if (inputs_fill(t, data, b->count, &b->init, a->threads, err) < 0) {
        free(data);
        return NULL;
    }
    a->in[a->nin++] = (AheadInput){.data = data, .bytes = bytes, .used = ++a->clock};
    memcpy(a->in[a->nin - 1].key, b->input_key, 65);
    return data;
}

/* Compute the idx-th job (0-based) and publish its result or its failure. */
static void job_compute(RunAhead *a, int idx)
{
    const AheadJob *j = &a->jobs[idx];
    double t0 = wall_now_ms();
    RefArg args[CASE_MAX_REFARGS];
    memcpy(args, j->k.args, sizeof args);
    inputs_evict(a, j);
    KvxError err = {0};
    int rc = 0;
    for (int q = 0; q < j->k.nargs && rc == 0; q++) {
        if (args[q].v.kind == VAL_STR)
            args[q].v.s = j->k.strs[q];
        if (!args[q].is_buf)
            continue;
        args[q].t = &elem_types[j->bufs[q].type];
        if (!args[q].count)
            args[q].count = j->bufs[q].count;
        rc = (args[q].data = input_get(a, &j->bufs[q], &err)) ? 0 : -1;
    }
    Expected exp;
    memset(&exp, 0, sizeof exp);
    if (rc == 0)
        rc = verify_reference_threads(j->k.ref, args, j->k.nargs, &elem_types[j->out_type], j->out_count,
                                      a->threads, &exp, &err);
    if (idx + 1 == a->hold_at) {
        while (!__atomic_load_n(&a->released, __ATOMIC_ACQUIRE) && !__atomic_load_n(&a->stop, __ATOMIC_RELAXED))
            usleep(1000);
        usleep((useconds_t)a->hold_ms * 1000);
    }
    KvxError werr = {0};
    if (hostref_save(a->dir, j->key, rc == 0 ? &exp : NULL, err.msg, &werr) < 0) {
        /* The worker finds no file and computes the reference itself. */
        fprintf(stderr, "kvx run: %s\n", werr.msg);
        kvx_error_clear(&werr);
    }
    verify_expected_free(&exp);
    kvx_error_clear(&err);
    a->busy_ms += wall_now_ms() - t0;
}

static void *ahead_main(void *arg)
{
    RunAhead *a = arg;
    for (int i = 0; i < a->n && !__atomic_load_n(&a->stop, __ATOMIC_RELAXED); i++)
        job_compute(a, i);
    KvxError err = {0};
    if (hostref_finish(a->dir, &err) < 0) {
        fprintf(stderr, "kvx run: %s\n", err.msg);
        kvx_error_clear(&err);
    }
    return NULL;
}

/* ---- the session's side ---------------------------------------------------------------- */

/* $KVX_TEST_HOSTREF_HOLD=N:MS (a test hook): the N-th reference is
 * published only once every case listed before its first case is stored
 * (run_ahead_release), and MS ms after that, so that its case waits for it
 * whatever the machine's load. */
static void hold_read(RunAhead *a)
{
    const char *v = getenv("KVX_TEST_HOSTREF_HOLD");
    if (!v || sscanf(v, "%d:%d", &a->hold_at, &a->hold_ms) != 2 || a->hold_at < 1 || a->hold_at > a->n)
        a->hold_at = a->hold_ms = 0;
}

static void ahead_free(RunAhead *a)
{
    for (int i = 0; i < a->nin; i++)
        free(a->in[i].data);
    if (a->dir[0])
        hostref_dir_remove(a->dir);
    free(a->jobs);
    free(a);
}

void run_ahead_start(RunSession *r)
{
    RunAhead *a = mem_calloc(1, sizeof *a);
    jobs_collect(r, a);
    KvxError err = {0};
    /* Without the folder or the thread the workers compute their own. */
    if (a->n == 0 || hostref_dir_make(a->dir, sizeof a->dir, &err) < 0) {
        kvx_error_clear(&err);
        ahead_free(a);
        return;
    }
    a->threads = pool_cores();
    hold_read(a);
    if (pthread_create(&a->tid, NULL, ahead_main, a) != 0) {
        ahead_free(a);
        return;
    }
    a->started = 1;
    r->ahead = a;
    snprintf(r->hostref_dir, sizeof r->hostref_dir, "%s", a->dir);
    r->holds |= a->hold_at > 0;
}

void run_ahead_release(RunAhead *a, int stored)
{
    if (a && a->hold_at && stored >= a->jobs[a->hold_at - 1].first_at)
        __atomic_store_n(&a->released, 1, __ATOMIC_RELEASE);
}

void run_ahead_stop(RunSession *r)
{
    RunAhead *a = r->ahead;
    if (!a)
        return;
    __atomic_store_n(&a->stop, 1, __ATOMIC_RELAXED);
    if (a->started)
        pthread_join(a->tid, NULL);
    r->prof.ahead_refs += a->n;
    r->prof.ahead_ms += a->busy_ms;
    ahead_free(a);
    r->ahead = NULL;
    r->hostref_dir[0] = 0;
}
