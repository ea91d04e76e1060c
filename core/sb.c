/* sb: the growable string builder (util.h). */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(StrBuf *b) { memset(b, 0, sizeof *b); }

void sb_free(StrBuf *b)
{
    if (!b)
        return;
    free(b->p);
    memset(b, 0, sizeof *b);
}

void sb_reset(StrBuf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = 0;
}

static void grow(StrBuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->p = mem_realloc(b->p, cap);
    b->cap = cap;
}

void sb_put(StrBuf *b, const char *s, size_t n)
{
    grow(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_putc(StrBuf *b, char c) { sb_put(b, &c, 1); }

void sb_vprintf(StrBuf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    grow(b, (size_t)n);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
    va_end(aq);
    b->len += (size_t)n;
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *sb_str(const StrBuf *b) { return b->p ? b->p : ""; }

char *sb_take(StrBuf *b)
{
    char *p = b->p ? b->p : mem_strdup("");
    memset(b, 0, sizeof *b);
    return p;
}

/* A control character (below 0x20, or DEL) starts a new line, moves the
 * cursor or hides what follows on a terminal: text that reaches a line of
 * output must carry none.  lines_ok lets newline and tab through (prose). */
const char *sb_first_control(const char *s, int lines_ok)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 || c == 0x7f) && !(lines_ok && (c == '\n' || c == '\t')))
            return s;
    }
    return NULL;
}

void sb_put_escaped(StrBuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            sb_puts(b, "\\n");
        else if (c == '\t')
            sb_puts(b, "\\t");
        else if (c == '\r')
            sb_puts(b, "\\r");
        else if (c < 0x20 || c == 0x7f)
            sb_printf(b, "\\x%02x", c);
        else
            sb_putc(b, (char)c);
    }
}
