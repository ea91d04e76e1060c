/* json: JSON string text, written one way for every stage (reports, exports,
 * inspect facts, the axis values that go into case keys, imported cells).
 *
 * Invariant: JSON_BYTES output is byte-for-byte what run_cases.c, inspect.c
 * and results_io.c wrote before this file existed; stored case keys hash it
 * and stored columns hold it, so it changes only with a migration. */
#ifndef KVX_JSON_H
#define KVX_JSON_H

#include "core/util.h"

#include <stddef.h>

typedef enum {
    JSON_TEXT,   /* \n and \t short, other controls \u00XX, bad UTF-8 as \ufffd */
    JSON_BYTES   /* every control as \u00XX, bytes >= 0x80 as they are */
} JsonMode;

/* The length of the UTF-8 sequence at s (1 to 4), or 0 when s does not start
 * one (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF).
 * s holds n bytes, or a NUL within them. */
int json_utf8_len(const char *s, size_t n);

/* s (NULL as "") as a quoted JSON string appended to b. */
void json_put_str(StrBuf *b, const char *s, JsonMode mode);

/* json_put_str(JSON_TEXT) written to out. */
void json_write_str(FILE *out, const char *s);

#endif
