/* fill_cases: initialisers that reach every branch of the input generator
 * (every init kind; rounding, saturation, a 2^64 and a 2^64 + 1 wide integer
 * range, a zero-width float range, a hot fraction of 1, runs of 1; zipf from
 * its table: one rank, a few, 2^20 below zero, and 2^24, the table's most).  Each is filled as every element
 * type by test_inputs (the plan's host twin against inputs_fill) and
 * test_gpu_fill (kvx_fill on a GPU against inputs_fill). */
#ifndef KVX_TEST_FILL_CASES_H
#define KVX_TEST_FILL_CASES_H

#include "host/inputs.h"

enum { FILL_CASES = 21 };

static void fill_cases(InitParams *ps)
{
    for (int k = 0; k < FILL_CASES; k++)
        ps[k] = (InitParams){.seed = 0x5eed0000ull + (uint64_t)k};
    ps[0].kind = INIT_CONST; ps[0].value = 7;
    ps[1].kind = INIT_CONST; ps[1].value = -3.7;
    ps[2].kind = INIT_CONST; ps[2].value = 1e6;
    ps[3].kind = INIT_IOTA; ps[3].value = 3;
    ps[4].kind = INIT_IOTA; ps[4].value = -100.25;
    ps[5].kind = INIT_IOTA; ps[5].value = 250;
    ps[6].kind = INIT_UNIFORM; ps[6].lo = -50; ps[6].hi = 1000;
    ps[7].kind = INIT_UNIFORM; ps[7].lo = 0.1; ps[7].hi = 0.2;
    ps[8].kind = INIT_UNIFORM; ps[8].lo = -1e300; ps[8].hi = 1e300;
    ps[9].kind = INIT_UNIFORM; ps[9].lo = 0; ps[9].hi = 0x1p64;          /* 2^64 + 1 values */
    ps[10].kind = INIT_UNIFORM; ps[10].lo = -0x1p63; ps[10].hi = 0x1p63; /* 2^64 values, exact */
    ps[10].exact = 6; ps[10].ilo = INT64_MIN; ps[10].ihi = INT64_MAX;
    ps[11].kind = INIT_HOT; ps[11].lo = 0; ps[11].hi = 999; ps[11].value = 5; ps[11].fraction = 0.3;
    ps[12].kind = INIT_HOT; ps[12].lo = -10; ps[12].hi = 10; ps[12].value = -2; ps[12].fraction = 1;
    ps[13].kind = INIT_RUNS; ps[13].lo = 0; ps[13].hi = 99; ps[13].length = 37;
    ps[14].kind = INIT_RUNS; ps[14].lo = -5.5; ps[14].hi = 5.5; ps[14].length = 1;
    ps[15].kind = INIT_TEXT;
    ps[16].kind = INIT_UNIFORM; ps[16].lo = 42; ps[16].hi = 42;
    ps[17].kind = INIT_ZIPF; ps[17].lo = 0; ps[17].hi = 255; ps[17].exponent = 1.1;
    ps[18].kind = INIT_ZIPF; ps[18].lo = -(1 << 20); ps[18].hi = -1; ps[18].exponent = 0.7;
    ps[19].kind = INIT_ZIPF; ps[19].lo = 7; ps[19].hi = 7; ps[19].exponent = 2;
    ps[20].kind = INIT_ZIPF; ps[20].lo = 1000; ps[20].hi = 1000 + (1 << 24) - 1; ps[20].exponent = 1.0;
}

#endif
