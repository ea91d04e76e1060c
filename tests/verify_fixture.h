/* verify_fixture: the argument makers and the reference calls the host
 * verification tests share (tests/test_verify.c, tests/test_verify_count.c).
 * Include after <cmocka.h>. */
#ifndef KVX_VERIFY_FIXTURE_H
#define KVX_VERIFY_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "host/verify.h"

static inline const ElemType *T(const char *name) { return elem_type_find(name); }

static inline RefArg B(const char *type, const void *data, uint64_t n)
{
    RefArg a = {.is_buf = 1, .t = T(type), .data = data, .count = n};
    return a;
}
static inline RefArg I(int64_t i) { RefArg a = {.v = val_int(i)}; return a; }
static inline RefArg F(double d) { RefArg a = {.v = val_float(d)}; return a; }
static inline RefArg S(const char *s) { RefArg a = {.v = val_str(s)}; return a; }

/* Compute a reference that must succeed. */
static inline void ref(Expected *e, const char *name, const RefArg *args, int nargs, const char *out,
                uint64_t count)
{
    KvxError err = {0};
    int rc = verify_reference(name, args, nargs, T(out), count, e, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, err.msg);
    assert_int_equal(e->count, count);
}

static inline void ref_fails(const char *name, const RefArg *args, int nargs, const char *out,
                      uint64_t count, const char *needle)
{
    KvxError err = {0};
    Expected e;
    assert_int_equal(verify_reference(name, args, nargs, T(out), count, &e, &err), -1);
    assert_int_equal(err.code, KVX_EINPUT);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_null(e.u);
    assert_null(e.f);
}

static inline int64_t U(const Expected *e, uint64_t j) { return (int64_t)e->u[j]; }

#endif
