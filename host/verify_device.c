/* verify_device: the host's half of a comparison made on the device
 * (gpu/devio.cu's kvx_compare): the verdict from the per-chunk figures that
 * cross to the host, and the first differing elements named from the slices
 * of output and reference that hold them, in verify_compare's words (verify.c).  Also
 * the device's rules on the host (verify_chunk_host, and verify_mset_host
 * for the order-free check's fingerprint), which the fake driver runs in
 * place of the kernels.
 *
 * The rules are verify_compare's with one difference: the float sums are in
 * double (the device's), not long double, so squares past 1e154 overflow to
 * inf and such an output is a mismatch with a NaN error. */
#include "verify_internal.h"

enum { LIST_MAX = 4 };

static uint64_t ref_u(const ElemType *t, const ElemType *ref_t, const void *ref, uint64_t i)
{
    return ref_t->is_float ? (uint64_t)(int64_t)load_f(ref_t, ref, i) : wrap(t, load_u(ref_t, ref, i));
}

/* 1 when element j differs (c, when given, takes its figures). */
static int elem_bad(const ElemType *t, const void *out, const ElemType *ref_t, const void *ref,
                    uint64_t stride, uint64_t j, double rtol, int norm_ok, VerifyChunk *c)
{
    if (!t->is_float)
        return load_u(t, out, j) != ref_u(t, ref_t, ref, j * stride);
    double got = load_f(t, out, j), want = load_f(ref_t, ref, j * stride);
    if (!isfinite(want) || !isfinite(got)) {
        int same = (isnan(want) && isnan(got)) || got == want;
        if (c)
            c->nonfinite += !same;
        return !same;
    }
    double d = got - want, ad = fabs(d);
    if (c) {
        c->dd = fma(d, d, c->dd);
        c->rr = fma(want, want, c->rr);
        c->max_abs = ad > c->max_abs ? ad : c->max_abs;
    }
    return !norm_ok && ad > rtol * (want != 0 ? fabs(want) : 1.0);
}

void verify_chunk_host(const ElemType *t, const void *out, const ElemType *ref_t, const void *ref,
                       uint64_t stride, uint64_t b, uint64_t e, double rtol, int norm_ok,
                       VerifyChunk *c)
{
    memset(c, 0, sizeof *c);
    for (uint64_t j = b; j < e; j++)
        c->bad += (uint64_t)elem_bad(t, out, ref_t, ref, stride, j, rtol, norm_ok, c);
}

static uint64_t splitmix64_fin(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fmix64(uint64_t k)
{
    k = (k ^ (k >> 33)) * 0xff51afd7ed558ccdull;
    k = (k ^ (k >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

void verify_mset_host(const ElemType *t, const void *data, uint64_t n, uint64_t sums[2])
{
    /* the device's load_bits: the element's bytes, not its sign-extended value */
    uint64_t width = t->size == 8 ? ~0ull : (1ull << (8 * t->size)) - 1;
    sums[0] = sums[1] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = load_u(t, data, i) & width;
        sums[0] += splitmix64_fin(x ^ VERIFY_MSET_SALT0);
        sums[1] += fmix64(x ^ VERIFY_MSET_SALT1);
    }
}

void verify_chunks_report(const VerifyChunk *ch, uint64_t n, const ElemType *t, uint64_t count,
                          double rtol, int *norm_ok, VerifyReport *rep)
{
    double dd = 0, rr = 0;
    uint64_t bad = 0, nonfinite = 0;
    rep->max_abs_err = 0;
    for (uint64_t i = 0; i < n; i++) {
        bad += ch[i].bad;
        nonfinite += ch[i].nonfinite;
        dd += ch[i].dd;
        rr += ch[i].rr;
        rep->max_abs_err = ch[i].max_abs > rep->max_abs_err ? ch[i].max_abs : rep->max_abs_err;
    }
    rep->nmismatch = bad;
    if (!t->is_float) {
        rep->rel_err = bad ? 1 : 0;
        *norm_ok = 1;
    } else {
        double num = sqrt(dd), den = sqrt(rr);
        rep->rel_err = den > 0 ? num / den : num;
        if (nonfinite)
            rep->rel_err = rep->max_abs_err = INFINITY;
        int was = *norm_ok;
        *norm_ok = !(rep->rel_err > rtol); /* a NaN error is a failure too */
        if (!*norm_ok && !was && rep->nmismatch == 0)
            rep->nmismatch = count; /* spread thinly: no element stands out */
    }
    rep->ok = rep->nmismatch == 0 && *norm_ok;
}

void verify_list_slice(const ElemType *t, const void *out, const ElemType *ref_t, const void *ref,
                       uint64_t stride, uint64_t base, uint64_t n, double rtol, int norm_ok,
                       const char *bufname, VerifyReport *rep)
{
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, rep->first);
    for (uint64_t j = 0; j < n && rep->listed < LIST_MAX; j++) {
        if (!elem_bad(t, out, ref_t, ref, stride, j, rtol, norm_ok, NULL))
            continue;
        sb_printf(&sb, "%s%s[%llu]: got ", rep->listed ? "; " : "", bufname,
                  (unsigned long long)(base + j));
        verify_put_elem(&sb, t, load_u(t, out, j), t->is_float ? load_f(t, out, j) : 0);
        sb_puts(&sb, ", expected ");
        verify_put_elem(&sb, t, t->is_float ? 0 : ref_u(t, ref_t, ref, j * stride),
                        t->is_float ? load_f(ref_t, ref, j * stride) : 0);
        rep->listed++;
    }
    snprintf(rep->first, sizeof rep->first, "%s", sb_str(&sb));
    sb_free(&sb);
}

void verify_list_close(VerifyReport *rep)
{
    if (rep->nmismatch <= (uint64_t)rep->listed)
        return;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s; ... %llu more", rep->first, (unsigned long long)(rep->nmismatch - rep->listed));
    const char *s = sb_str(&sb);
    size_t n = strlen(s);
    if (n >= sizeof rep->first) { /* keep the tail readable when cut */
        n = sizeof rep->first - 4;
        memcpy(rep->first, s, n);
        memcpy(rep->first + n, "...", 4);
    } else {
        memcpy(rep->first, s, n + 1);
    }
    sb_free(&sb);
}
