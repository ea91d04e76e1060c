/* json: the one JSON string writer (json.h). */
#include "core/json.h"

int json_utf8_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char lo = 0x80, hi = 0xbf;     /* the second byte's range */
    int len;
    if (n == 0)
        return 0;
    if (u[0] < 0x80)
        return 1;
    if (u[0] >= 0xc2 && u[0] <= 0xdf)
        len = 2;
    else if (u[0] >= 0xe0 && u[0] <= 0xef)
        len = 3, lo = u[0] == 0xe0 ? 0xa0 : lo, hi = u[0] == 0xed ? 0x9f : hi;
    else if (u[0] >= 0xf0 && u[0] <= 0xf4)
        len = 4, lo = u[0] == 0xf0 ? 0x90 : lo, hi = u[0] == 0xf4 ? 0x8f : hi;
    else
        return 0;
    if ((size_t)len > n || u[1] < lo || u[1] > hi)
        return 0;
    /* A NUL fails each test before the byte after it is read. */
    for (int i = 2; i < len; i++)
        if ((u[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

void json_put_str(StrBuf *b, const char *s, JsonMode mode)
{
    sb_putc(b, '"');
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int len = ch < 0x80 || mode == JSON_BYTES ? 1 : json_utf8_len(s, 4);
        if (ch == '"' || ch == '\\')
            sb_printf(b, "\\%c", ch);
        else if (mode == JSON_TEXT && ch == '\n')
            sb_puts(b, "\\n");
        else if (mode == JSON_TEXT && ch == '\t')
            sb_puts(b, "\\t");
        else if (ch < 0x20)
            sb_printf(b, "\\u%04x", ch);
        else if (len == 0)  /* not UTF-8: a JSON reader would refuse the whole document */
            sb_puts(b, "\\ufffd");
        else
            sb_put(b, s, (size_t)len), s += len - 1;
    }
    sb_putc(b, '"');
}

void json_write_str(FILE *out, const char *s)
{
    StrBuf b;
    sb_init(&b);
    json_put_str(&b, s, JSON_TEXT);
    fwrite(sb_str(&b), 1, b.len, out);
    sb_free(&b);
}
