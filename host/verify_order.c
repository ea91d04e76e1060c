/* verify_order: comparisons where the kernel chooses the order or the
 * length: a stream compaction writes its kept elements in whatever order its
 * threads take slots from an atomic counter, and how many it kept is a count
 * it writes beside them.
 *
 * A prefix of the output (its first n elements, n read from a verified
 * scalar output by the worker) is compared with the same prefix of the
 * reference; in order, as verify.c's verify_compare does, or as a multiset: integers
 * exactly (each distinct value written as often as expected), floats after
 * sorting both sides, by verify_compare's norm-wise tolerance.  A multiset
 * mismatch lists values written more or fewer times than expected, so a
 * variant that writes one kept element twice and drops another shows both. */
#include "verify_internal.h"

#include <stdlib.h>

/* Integer order of two's-complement values of t: signed ones with the sign
 * bit flipped sort as unsigned. */
static uint64_t sort_key(const ElemType *t, uint64_t v)
{
    return t->is_signed ? v ^ (1ull << 63) : v;
}

/* v[0..n) ascending: LSD radix sort by 16-bit digits, a pass skipped where
 * every key has the same digit (a 32-bit type's upper half).  qsort took
 * 3.3 s on 2 x 16M keys, per case; this is linear. */
static void sort_u64(uint64_t *v, uint64_t n)
{
    uint64_t *tmp = mem_alloc(sizeof *tmp * (n ? n : 1)), *src = v, *dst = tmp;
    uint64_t *cnt = mem_alloc(sizeof *cnt * 65536);
    for (int shift = 0; shift < 64; shift += 16) {
        memset(cnt, 0, sizeof *cnt * 65536);
        for (uint64_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 0xffff]++;
        if (n == 0 || cnt[(src[0] >> shift) & 0xffff] == n)
            continue;
        for (uint64_t d = 0, sum = 0; d < 65536; d++) {
            uint64_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xffff]++] = src[i];
        uint64_t *t = src;
        src = dst, dst = t;
    }
    if (src != v)
        memcpy(v, src, sizeof *v * n);
    free(cnt);
    free(tmp);
}

/* Ascending, NaNs last (as one value: a NaN matches a NaN). */
static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* Walk the sorted keys of out (got) and of the reference (want): every value
 * whose counts differ is a mismatch, counted by the elements in excess on
 * either side and listed as "BUF: V written A times, expected B". */
static void multiset_ints(const ElemType *t, const uint64_t *got, const uint64_t *want, uint64_t n,
                          const char *bufname, VerifyReport *rep, StrBuf *sb, int *listed)
{
    uint64_t i = 0, j = 0;
    while (i < n || j < n) {
        uint64_t k = i < n && (j == n || got[i] <= want[j]) ? got[i] : want[j];
        uint64_t a = 0, b = 0;
        while (i < n && got[i] == k)
            i++, a++;
        while (j < n && want[j] == k)
            j++, b++;
        if (a == b)
            continue;
        rep->nmismatch += a > b ? a - b : b - a;
        if (*listed >= 4)
            continue;
        uint64_t v = sort_key(t, k);
        sb_printf(sb, "%s%s: ", (*listed)++ ? "; " : "", bufname);
        if (t->is_signed)
            sb_printf(sb, "%lld", (long long)v);
        else
            sb_printf(sb, "%llu", (unsigned long long)v);
        sb_printf(sb, " written %llu time%s, expected %llu", (unsigned long long)a, a == 1 ? "" : "s",
                  (unsigned long long)b);
    }
}

/* rep from the sorted keys of out (got) and of the reference (want). */
static void multiset_report(const ElemType *t, const uint64_t *got, const uint64_t *want, uint64_t n,
                            const char *bufname, VerifyReport *rep)
{
    StrBuf sb;
    sb_init(&sb);
    int listed = 0;
    multiset_ints(t, got, want, n, bufname, rep, &sb, &listed);
    rep->rel_err = rep->nmismatch ? 1 : 0;
    rep->ok = rep->nmismatch == 0;
    if (rep->nmismatch > (uint64_t)listed && listed)
        sb_puts(&sb, "; ...");
    snprintf(rep->first, sizeof rep->first, "%s", sb_str(&sb));
    sb_free(&sb);
}

static void compare_multiset_ints(const Expected *exp, const ElemType *t, const void *out, uint64_t n,
                                  const char *bufname, VerifyReport *rep)
{
    uint64_t *got = mem_alloc(sizeof *got * (n ? n : 1)), *want = mem_alloc(sizeof *want * (n ? n : 1));
    for (uint64_t i = 0; i < n; i++) {
        got[i] = sort_key(t, load_u(t, out, i));
        want[i] = sort_key(t, wrap(t, exp->u[i]));
    }
    sort_u64(got, n);
    sort_u64(want, n);
    multiset_report(t, got, want, n, bufname, rep);
    free(want);
    free(got);
}

void verify_multiset_sorted(const ElemType *t, const void *got, const void *want, uint64_t n, const char *bufname,
                            VerifyReport *rep)
{
    uint64_t *g = mem_alloc(sizeof *g * (n ? n : 1)), *w = mem_alloc(sizeof *w * (n ? n : 1));
    for (uint64_t i = 0; i < n; i++) {
        g[i] = sort_key(t, load_u(t, got, i));
        w[i] = sort_key(t, load_u(t, want, i));
    }
    memset(rep, 0, sizeof *rep);
    multiset_report(t, g, w, n, bufname, rep);
    free(w);
    free(g);
}

/* Both sides sorted as doubles, then compared in order under the tolerance;
 * the listing names positions in sorted order. */
static void compare_multiset_floats(const Expected *exp, const ElemType *t, const void *out,
                                    uint64_t n, const char *bufname, double rtol, VerifyReport *rep)
{
    double *got = mem_alloc(sizeof *got * (n ? n : 1));
    Expected sorted = *exp;
    sorted.count = n;
    sorted.f = mem_alloc(sizeof *sorted.f * (n ? n : 1));
    for (uint64_t i = 0; i < n; i++)
        got[i] = load_f(t, out, i);
    memcpy(sorted.f, exp->f, sizeof *sorted.f * n);
    qsort(got, n, sizeof *got, cmp_f64);
    qsort(sorted.f, n, sizeof *sorted.f, cmp_f64);
    char name[96];
    snprintf(name, sizeof name, "%s sorted", bufname);
    verify_compare(&sorted, &elem_types[ET_F64], got, name, rtol, rep);
    free(sorted.f);
    free(got);
}

int verify_length(const ElemType *lt, const void *data, const char *lenname, uint64_t cap,
                  uint64_t *n, char *why, size_t nwhy)
{
    uint64_t v = load_u(lt, data, 0);
    if (lt->is_float)
        snprintf(why, nwhy, "length %s is of a float type", lenname);
    else if (lt->is_signed && (int64_t)v < 0)
        snprintf(why, nwhy, "length %s = %lld is negative", lenname, (long long)v);
    else if (v > cap)
        snprintf(why, nwhy, "length %s = %llu is past its %llu elements", lenname,
                 (unsigned long long)v, (unsigned long long)cap);
    else {
        *n = v;
        return 0;
    }
    return -1;
}

void verify_compare_prefix(const Expected *exp, const ElemType *t, const void *out, uint64_t n,
                           int order_any, const char *bufname, double rtol, VerifyReport *rep)
{
    KVX_ASSERT(n <= exp->count);
    memset(rep, 0, sizeof *rep);
    /* A set of allowed values is already free of order; an address-wise set
     * (member_vals) is not, and keeps the whole buffer. */
    if (exp->kind == EXPECT_MEMBER && exp->member_vals) {
        verify_compare(exp, t, out, bufname, rtol, rep);
        return;
    }
    if (!order_any || exp->kind == EXPECT_MEMBER) {
        Expected head = *exp;
        head.count = n;
        verify_compare(&head, t, out, bufname, rtol, rep);
        return;
    }
    if (exp->is_float)
        compare_multiset_floats(exp, t, out, n, bufname, rtol, rep);
    else
        compare_multiset_ints(exp, t, out, n, bufname, rep);
}
