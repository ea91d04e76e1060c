/* pool: a fixed thread pool with a FIFO of tasks; used for NVRTC compiles and
 * host-side input generation and references. */
#ifndef KVX_POOL_H
#define KVX_POOL_H

typedef struct Pool Pool;
Pool *pool_new(int threads);            /* threads <= 0: pool_cores() */
void pool_submit(Pool *p, void (*fn)(void *arg), void *arg);
void pool_wait(Pool *p);                /* until every submitted task is done */
void pool_free(Pool *p);                /* waits, then joins; accepts NULL */
/* The CPUs this process may run on (its affinity mask: a Slurm job's
 * allocation, taskset's), at least 1; every pool kvx sizes by itself. */
int pool_cores(void);

/* Run fn(i, arg) for i in [0, n) on the pool in chunks; returns when done. */
void pool_for(Pool *p, long n, void (*fn)(long i, void *arg), void *arg);

#endif
