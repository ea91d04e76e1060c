/* pool: a fixed set of worker threads draining one FIFO of tasks.
 *
 * Used for NVRTC compiles (each compile is tens to hundreds of milliseconds of
 * single-threaded work) and for host-side input generation and references.
 *
 * Invariants: tasks start in submission order; `pending` counts tasks queued or
 * running, and pool_wait returns once it reaches zero.  A pool whose threads
 * could not be started (pthread_create failing) still works: it runs each task
 * inline in pool_submit, so callers need no second code path. */
/* sched_getaffinity and CPU_COUNT are GNU extensions. */
#define _GNU_SOURCE
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

typedef struct Task {
    void (*fn)(void *arg);
    void *arg;
    struct Task *next;
} Task;

struct Pool {
    pthread_mutex_t mu;
    pthread_cond_t has_work;    /* signalled when a task is queued or on stop */
    pthread_cond_t idle;        /* signalled when pending drops to zero */
    Task *head, *tail;
    long pending;               /* queued + running */
    int stop;
    int nthreads;               /* threads actually started; 0: run inline */
    pthread_t *threads;
};

/* The cores this process may run on: a Slurm job or taskset gives fewer than
 * the machine has online. */
int pool_cores(void)
{
    /* The CPUs this process may run on, not the machine's: a Slurm job (or
     * taskset, or a container's cpuset) given 4 of 128 cores must not start
     * 128 threads on them. */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static void *worker_main(void *arg)
{
    Pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->has_work, &p->mu);
        if (!p->head)           /* stop requested and nothing left */
            break;
        Task *t = p->head;
        p->head = t->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

Pool *pool_new(int threads)
{
    if (threads <= 0)
        threads = pool_cores();
    Pool *p = mem_calloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->has_work, NULL);
    pthread_cond_init(&p->idle, NULL);
    p->threads = mem_calloc((size_t)threads, sizeof *p->threads);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[p->nthreads], NULL, worker_main, p) != 0)
            break;      /* fewer threads (or none: inline) rather than failing */
        p->nthreads++;
    }
    return p;
}

void pool_submit(Pool *p, void (*fn)(void *arg), void *arg)
{
    if (p->nthreads == 0) {
        fn(arg);
        return;
    }
    Task *t = mem_alloc(sizeof *t);
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    p->pending++;
    pthread_cond_signal(&p->has_work);
    pthread_mutex_unlock(&p->mu);
}

void pool_wait(Pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void pool_free(Pool *p)
{
    if (!p)
        return;
    pool_wait(p);
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->has_work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->has_work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* ---- pool_for --------------------------------------------------------------
 * Chunks are claimed from a shared atomic counter by helper tasks and by the
 * calling thread itself.  The caller waits for chunks to be *done*, not for its
 * helpers to run: a pool_for called from inside a pool task (every worker busy)
 * then still finishes, the caller doing all chunks itself.  Helpers that start
 * late find nothing to claim; the context is reference-counted so that it
 * outlives them. */
typedef struct ForCtx {
    void (*fn)(long i, void *arg);
    void *arg;
    long n, chunk, nchunks;
    atomic_long next;           /* next chunk to claim */
    pthread_mutex_t mu;
    pthread_cond_t done_cv;
    long done;                  /* chunks finished, under mu */
    int refs;                   /* caller + helpers not yet returned, under mu */
} ForCtx;

static void for_release(ForCtx *c)
{
    pthread_mutex_lock(&c->mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last) {
        pthread_cond_destroy(&c->done_cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

static void for_drain(ForCtx *c)
{
    for (;;) {
        long k = atomic_fetch_add(&c->next, 1);
        if (k >= c->nchunks)
            return;
        long lo = k * c->chunk;
        long hi = lo + c->chunk < c->n ? lo + c->chunk : c->n;
        for (long i = lo; i < hi; i++)
            c->fn(i, c->arg);
        pthread_mutex_lock(&c->mu);
        if (++c->done == c->nchunks)
            pthread_cond_broadcast(&c->done_cv);
        pthread_mutex_unlock(&c->mu);
    }
}

static void for_helper(void *arg)
{
    ForCtx *c = arg;
    for_drain(c);
    for_release(c);
}

void pool_for(Pool *p, long n, void (*fn)(long i, void *arg), void *arg)
{
    if (n <= 0)
        return;
    int workers = p->nthreads;
    /* About four chunks per participant: small enough to even out uneven
     * per-index costs, large enough that claiming a chunk costs nothing. */
    long chunk = n / ((long)(workers + 1) * 4);
    if (chunk < 1)
        chunk = 1;
    ForCtx *c = mem_calloc(1, sizeof *c);
    c->fn = fn;
    c->arg = arg;
    c->n = n;
    c->chunk = chunk;
    c->nchunks = (n + chunk - 1) / chunk;
    atomic_init(&c->next, 0);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->done_cv, NULL);
    long helpers = workers < c->nchunks - 1 ? workers : c->nchunks - 1;
    c->refs = 1 + (int)helpers;
    for (long h = 0; h < helpers; h++)
        pool_submit(p, for_helper, c);
    for_drain(c);
    pthread_mutex_lock(&c->mu);
    while (c->done < c->nchunks)
        pthread_cond_wait(&c->done_cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    for_release(c);
}
