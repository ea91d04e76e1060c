/* bounds: a bound on a duration (or on a share of one) that a test prints
 * and, only under KVX_BOUNDS=1, holds: no verdict of the suite depends on
 * wall time, since a loaded or sanitized machine must never fail `make test`
 * for time alone; bench/bounds.sh runs the tests that hold bounds with
 * KVX_BOUNDS=1 on a quiet machine, where a bound catches a path gone
 * quadratic or a profile that names too little.  The including test
 * includes <cmocka.h> first.
 *
 *   KVX_BOUND(ms < 5000, "planned in %.0f ms (bound 5000 ms)", ms);
 */
#ifndef KVX_TESTS_BOUNDS_H
#define KVX_TESTS_BOUNDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the bounds are held (KVX_BOUNDS=1). */
static inline int bounds_held(void)
{
    const char *v = getenv("KVX_BOUNDS");
    return v && !strcmp(v, "1");
}

/* Print what was measured, and fail on cond false under KVX_BOUNDS=1. */
#define KVX_BOUND(cond, ...)                                                                       \
    do {                                                                                           \
        int held_ = (cond);                                                                        \
        printf("  bound %s: ", held_ ? "kept" : bounds_held() ? "BROKEN" : "not kept (not held)");  \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        if (!held_ && bounds_held())                                                               \
            fail_msg("a bound broken under KVX_BOUNDS=1: %s", #cond);                              \
    } while (0)

#endif
