/* num: numbers as text (num.h). */
#include "num.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGITS "0123456789"

int num_read_u64(const char *s, uint64_t *out)
{
    if (!*s || strspn(s, DIGITS) != strlen(s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int num_read_double(const char *s, double *out)
{
    const char *p = s + (*s == '-');
    size_t whole = strspn(p, DIGITS), frac = 0;
    p += whole;
    if (*p == '.')
        p += 1 + (frac = strspn(p + 1, DIGITS));
    if (whole + frac == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        size_t exp = strspn(p, DIGITS);
        if (!exp)
            return -1;
        p += exp;
    }
    errno = 0;
    double v = strtod(s, NULL);
    if (*p || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

void num_bound_text(double v, char *buf, size_t n)
{
    int k = (int)log10(v);
    if (v >= 1e6 && pow(10, k) == v)
        snprintf(buf, n, "10^%d", k);
    else
        snprintf(buf, n, "%g", v);
}
