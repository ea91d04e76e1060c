/* wall: elapsed (wall-clock, not CPU) time in milliseconds (util.h) for runs,
 * compiles and test deadlines; monotonic, so that a clock step never shows as a time. */
#include "util.h"

#include <time.h>

double wall_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
