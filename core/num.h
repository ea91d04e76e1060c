/* num: numbers as text, read strictly and written for people.  The command
 * line and the spec's scalar settings read numbers through these, so that
 * one spelling means one value everywhere. */
#ifndef KVX_NUM_H
#define KVX_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Decimal digits only, below 2^64 (strtoull alone takes a sign, spaces and
 * wraps "-1").  0 or -1. */
int num_read_u64(const char *s, uint64_t *out);

/* A decimal number: an optional '-', digits with an optional fraction, an
 * optional exponent, nothing else (strtod alone takes spaces, hex, inf and
 * nan).  Finite.  0 or -1. */
int num_read_double(const char *s, double *out);

/* A bound as messages write it: 10^9 rather than 1e+09, else %g. */
void num_bound_text(double v, char *buf, size_t n);

#endif
