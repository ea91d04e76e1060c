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

static void write_shortest(char *buf, size_t n, double d)
{
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(buf, n, "%.*e", digits - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    snprintf(buf, n, "%.*e", digits - 1, d);
    const char *e = strchr(buf, 'e');
    int exp10 = e ? atoi(e + 1) : 0;
    if (isfinite(d) && exp10 >= -4 && exp10 < 17)
        snprintf(buf, n, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, d);
    else
        snprintf(buf, n, "%.*g", digits, d);
}

void num_write_double(char *buf, size_t n, double d, NumLayout layout)
{
    if (layout == NUM_SHORTEST) {
        write_shortest(buf, n, d);
        return;
    }
    snprintf(buf, n, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, n, "%.17g", d);
}
