/* test_pool: the thread pool runs every task once, in FIFO order on one
 * thread, and pool_for covers every index exactly once, including when called
 * from inside a pool task with every worker busy; pool_cores counts the CPUs
 * the process may run on (a Slurm allocation, taskset), not the machine's. */
#define _GNU_SOURCE     /* sched_setaffinity */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/pool.h"
#include "core/util.h"

typedef struct Cover {
    long n;
    atomic_int *hits;
} Cover;

static void cover_one(long i, void *arg)
{
    Cover *c = arg;
    if (i >= 0 && i < c->n)
        atomic_fetch_add(&c->hits[i], 1);
}

static void check_cover(Pool *p, long n)
{
    Cover c = { n, mem_calloc((size_t)(n > 0 ? n : 1), sizeof(atomic_int)) };
    pool_for(p, n, cover_one, &c);
    for (long i = 0; i < n; i++) {
        if (atomic_load(&c.hits[i]) != 1)
            fail_msg("n=%ld: index %ld ran %d times", n, i, atomic_load(&c.hits[i]));
    }
    free(c.hits);
}

static void test_pool_for_covers_each_index_once(void **state)
{
    (void)state;
    static const int threads[] = { 1, 2, 3, 8 };
    static const long sizes[] = { 0, 1, 2, 7, 64, 1000, 100003 };
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        Pool *p = pool_new(threads[t]);
        assert_non_null(p);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            check_cover(p, sizes[s]);
        pool_free(p);
    }
}

typedef struct Nested {
    Pool *pool;
    int ok;
} Nested;

static void nested_task(void *arg)
{
    Nested *nt = arg;
    Cover c = { 5000, mem_calloc(5000, sizeof(atomic_int)) };
    pool_for(nt->pool, c.n, cover_one, &c);
    nt->ok = 1;
    for (long i = 0; i < c.n; i++)
        if (atomic_load(&c.hits[i]) != 1)
            nt->ok = 0;
    free(c.hits);
}

/* Every worker runs a task that itself calls pool_for: the inner loops must
 * finish without a free worker (no deadlock) and still cover every index. */
static void test_pool_for_nested_in_tasks(void **state)
{
    (void)state;
    Pool *p = pool_new(2);
    Nested nt[4];
    for (int i = 0; i < 4; i++) {
        nt[i].pool = p;
        nt[i].ok = 0;
        pool_submit(p, nested_task, &nt[i]);
    }
    pool_wait(p);
    for (int i = 0; i < 4; i++)
        assert_int_equal(nt[i].ok, 1);
    pool_free(p);
}

typedef struct Order {
    int seen[64];
    int n;                      /* only touched by the single worker */
} Order;

typedef struct OrderArg {
    Order *o;
    int id;
} OrderArg;

static void record(void *arg)
{
    OrderArg *a = arg;
    a->o->seen[a->o->n++] = a->id;
}

static void test_pool_fifo_and_wait(void **state)
{
    (void)state;
    Pool *p = pool_new(1);
    Order o = { .n = 0 };
    OrderArg args[64];
    for (int i = 0; i < 64; i++) {
        args[i] = (OrderArg){ &o, i };
        pool_submit(p, record, &args[i]);
    }
    pool_wait(p);
    assert_int_equal(o.n, 64);
    for (int i = 0; i < 64; i++)
        assert_int_equal(o.seen[i], i);
    pool_free(p);
}

static void bump(void *arg)
{
    usleep(1000);
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* pool_free waits for tasks still queued; pool_free(NULL) is a no-op. */
static void test_pool_free_drains(void **state)
{
    (void)state;
    atomic_int count;
    atomic_init(&count, 0);
    Pool *p = pool_new(0);
    for (int i = 0; i < 50; i++)
        pool_submit(p, bump, &count);
    pool_free(p);
    assert_int_equal(atomic_load(&count), 50);
    pool_free(NULL);
    assert_true(pool_cores() >= 1);
}

/* In a child restricted to one CPU (as `taskset -c N` or a one-CPU Slurm
 * job does), pool_cores is 1 and a default pool is one thread. */
static void test_pool_cores_follow_affinity(void **state)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    assert_int_equal(pool_cores(), CPU_COUNT(&set));
    int first = 0;
    while (!CPU_ISSET(first, &set))
        first++;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            _exit(3);
        _exit(pool_cores() == 1 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_for_covers_each_index_once),
        cmocka_unit_test(test_pool_for_nested_in_tasks),
        cmocka_unit_test(test_pool_fifo_and_wait),
        cmocka_unit_test(test_pool_free_drains),
        cmocka_unit_test(test_pool_cores_follow_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
