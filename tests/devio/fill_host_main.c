/* fill_host_main: kvx_fill's source run on the host (fill_host.cpp) against
 * inputs_fill, for every case of tests/fill_cases.h as every element type;
 * the first differing element of each failing pair is named.  Exit 0 when
 * all match.  Built and run by tests/devio/test_devio_host.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/inputs.h"
#include "tests/fill_cases.h"

void fill_host(void *out, unsigned long long n, const void *plan);
unsigned long long fill_host_plan_size(void);

static int one(int k, const ElemType *t, const InitParams *p, uint64_t n)
{
    KvxError err = {0};
    InputsPlan plan;
    unsigned char *want = malloc(n * t->size), *got = malloc(n * t->size);
    InputsTable tab = {0};
    int bad = inputs_fill(t, want, n, p, 1, &err) != 0 || inputs_plan(t, n, p, &plan, &err) != 1;
    if (!bad) {
        if (plan.zipf_n)
            inputs_table_make(&plan, 1, &tab);
        fill_host(got, n, &plan);
        uint64_t i = 0;
        while (i < n && !memcmp(want + i * t->size, got + i * t->size, (size_t)t->size))
            i++;
        if ((bad = i < n))
            printf("case %d as %s: element %llu is %.17g from kvx_fill, %.17g from inputs_fill\n", k, t->name,
                   (unsigned long long)i, elem_get_f64(t, got, i), elem_get_f64(t, want, i));
    } else {
        printf("case %d as %s: %s\n", k, t->name, err.msg);
    }
    inputs_table_free(&tab);
    free(want);
    free(got);
    return bad;
}

int main(void)
{
    if (fill_host_plan_size() != sizeof(InputsPlan)) {
        printf("gpu/devio.cu's FillPlan is %llu bytes, host/inputs.h's InputsPlan %zu\n", fill_host_plan_size(),
               sizeof(InputsPlan));
        return 1;
    }
    InitParams ps[FILL_CASES];
    fill_cases(ps);
    int bad = 0;
    for (int k = 0; k < FILL_CASES; k++)
        for (int id = 0; id < ET_COUNT; id++)
            bad += one(k, &elem_types[id], &ps[k], 3 * 65536 + 1234);
    printf("%d of %d differ\n", bad, FILL_CASES * ET_COUNT);
    return bad != 0;
}
