/* run_counters: `kvx run --counters`: after the timed run, the cases that ran
 * once more under Nsight Compute, their counters stored beside their times
 * (counters.h says how the pass works). */
#include "run_internal.h"
#include "counters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int run_counters(Store *st, int64_t run_id, const CaseDesc *descs, const char *const *keys, int n,
                 int device)
{
    CaseDesc *ran = xmalloc(sizeof *ran * (size_t)(n ? n : 1));
    int *at = xmalloc(sizeof *at * (size_t)(n ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (keys[i]) {
            ran[m] = descs[i];
            at[m++] = i;
        }
    double (*vals)[COUNTER_COUNT] = xmalloc(sizeof *vals * (size_t)(m ? m : 1));
    double t0 = now_ms();
    KvxError err = {0};
    int got = m ? counters_collect(ran, m, device, vals, &err) : 0;
    int rc = 0;
    for (int i = 0; i < got && rc == 0; i++) {
        KvxError se = {0};
        if (store_put_counters(st, run_id, keys[at[i]], vals[i], &se) != 0) {
            kvx_error_print(&se, stderr);
            kvx_error_clear(&se);
            rc = 3;
        }
    }
    if (got > 0)
        printf("counters %d of %d cases profiled with ncu in %.1f s (%s, %s, %s, %s)\n", got, m,
               (now_ms() - t0) / 1000, counter_metrics[0], counter_metrics[1], counter_metrics[2],
               counter_metrics[3]);
    if (err.code)
        printf("counters %s\n", err.msg);
    kvx_error_clear(&err);
    free(vals);
    free(at);
    free(ran);
    return rc;
}
