/* fill_host_main: kvx_fill's source run on the host (fill_host.cpp) against
 * inputs_fill, for every case of tests/fill_cases.h as every element type;
 * the first differing element of each failing pair is named.  And
 * kvx_mset_hash's source against its twin verify_mset_host (the fake
 * driver's stand-in) for every integer type: the same sums for an output and
 * its reversal, other sums once one element is changed.  Exit 0 when all
 * match.  Built and run by tests/devio/test_devio_host.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/inputs.h"
#include "host/verify.h"
#include "tests/fill_cases.h"

void fill_host(void *out, unsigned long long n, const void *plan);
unsigned long long fill_host_plan_size(void);
void mset_host(const void *a, const void *b, unsigned long long n, unsigned code, unsigned long long *sums);

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

/* kvx_mset_hash of a and b (n elements of t) is the twin's of each, and
 * says same exactly when want_same.  1 when not. */
static int mset_one(const ElemType *t, const void *a, const void *b, uint64_t n, int want_same)
{
    unsigned long long got[4] = {0, 0, 0, 0};
    uint64_t ha[2], hb[2];
    mset_host(a, b, n, (unsigned)t->id, got);
    verify_mset_host(t, a, n, ha);
    verify_mset_host(t, b, n, hb);
    int same = got[0] == got[2] && got[1] == got[3];
    if (got[0] == ha[0] && got[1] == ha[1] && got[2] == hb[0] && got[3] == hb[1] && same == want_same)
        return 0;
    printf("kvx_mset_hash as %s: sums %016llx %016llx | %016llx %016llx, twin %016llx %016llx | %016llx %016llx%s\n",
           t->name, got[0], got[1], got[2], got[3], (unsigned long long)ha[0], (unsigned long long)ha[1],
           (unsigned long long)hb[0], (unsigned long long)hb[1], want_same ? " (expected the same)" : "");
    return 1;
}

/* Every integer type: random bits, their reversal (the same multiset), and
 * the reversal with one element changed (not a permutation). */
static int mset_all(void)
{
    enum { M = 3 * 65536 + 1234 };
    int bad = 0;
    for (int id = 0; id < ET_COUNT; id++) {
        const ElemType *t = &elem_types[id];
        if (t->is_float)
            continue;
        size_t sz = (size_t)t->size;
        unsigned char *a = malloc(M * sz), *b = malloc(M * sz);
        uint64_t s = 42;
        for (uint64_t i = 0; i < M; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = s >> 20;
            memcpy(a + i * sz, &v, sz); /* little-endian: the low bytes */
        }
        for (uint64_t i = 0; i < M; i++)
            memcpy(b + i * sz, a + (M - 1 - i) * sz, sz);
        bad += mset_one(t, a, b, M, 1);
        b[17 * sz] ^= 0x80; /* one value in place of another */
        bad += mset_one(t, a, b, M, 0);
        free(a);
        free(b);
    }
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
    int mbad = mset_all();
    printf("kvx_mset_hash: %d type checks differ from verify_mset_host\n", mbad);
    return bad != 0 || mbad != 0;
}
