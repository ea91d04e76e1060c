/* hostile_fixture: what the test_hostile*.c files share: files written into
 * the test directory (kvx_child.h's tmp_path), a shipped file with one piece
 * replaced, and EXPECT, a kvx command's exit status and message.  Include it
 * after kvx_child.h. */
#ifndef KVX_HOSTILE_FIXTURE_H
#define KVX_HOSTILE_FIXTURE_H

/* Write text (len bytes, or strlen when len is 0) to the test directory. */
static const char *put(const char *name, const char *text, size_t len)
{
    const char *p = tmp_path(name);
    assert_int_equal(file_write_atomic(p, text, len ? len : strlen(text)), 0);
    return p;
}

/* The file at KVX_SOURCE_DIR/src with one piece replaced (from -> to),
 * written as name in the test directory. */
static const char *copy_with(const char *name, const char *src, const char *from, const char *to)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KVX_SOURCE_DIR, src);
    char *base = file_read(path, NULL);
    assert_non_null(base);
    char *at = strstr(base, from);
    assert_non_null(at);
    StrBuf b;
    sb_init(&b);
    sb_put(&b, base, (size_t)(at - base));
    sb_puts(&b, to);
    sb_puts(&b, at + strlen(from));
    const char *p = put(name, sb_str(&b), b.len);
    sb_free(&b);
    free(base);
    return p;
}

/* The tiny spec with one piece replaced (from -> to), written as name. */
static const char *tiny_with(const char *name, const char *from, const char *to)
{
    return copy_with(name, "tests/data/specs/tiny.yaml", from, to);
}

/* kvx ARGS... must exit with rc and say msg (on stdout or stderr). */
#define EXPECT(rc, msg, ...)                                                     \
    do {                                                                         \
        const char *log_ = tmp_path("log");                                      \
        int got_ = kvx(log_, __VA_ARGS__, NULL);                                 \
        if (got_ != (rc) || !log_has(log_, (msg))) {                             \
            dump(log_);                                                          \
            fail_msg("exit %d (expected %d) or no '%s'", got_, (rc), (msg));     \
        }                                                                        \
    } while (0)

#endif
