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

/* How num_write_double lays a double out.  Both read back as the same double;
 * both are hashed into keys (labels into case keys, imported axis values into
 * reference keys), so neither changes without a key migration. */
typedef enum {
    NUM_SHORTEST,   /* fewest digits, laid out as "%.17g" would: 0.05, 1e+20 */
    NUM_G15         /* "%.15g", else "%.17g" where 15 digits do not read back */
} NumLayout;

/* d as text that reads back as d, into buf of n bytes (32 is enough). */
void num_write_double(char *buf, size_t n, double d, NumLayout layout);

/* A bound as messages write it: 10^9 rather than 1e+09, else %g. */
void num_bound_text(double v, char *buf, size_t n);

#endif
