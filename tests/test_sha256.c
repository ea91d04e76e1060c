/* test_sha256: core/sha256.c's SHA-256, which names every source, cache entry,
 * input and case key, against FIPS 180-2's known answers and against digests
 * of lengths on each side of the 55/56/64-byte padding edges (Python's
 * hashlib); fed in one call, byte by byte and in odd pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util.h"

/* The digest of data fed in pieces of `step` bytes (0: one call). */
static void digest(const unsigned char *data, size_t n, size_t step, char hex[65])
{
    Sha256 s;
    uint8_t out[32];
    sha256_init(&s);
    if (!step)
        sha256_update(&s, data, n);
    for (size_t at = 0; step && at < n; at += step)
        sha256_update(&s, data + at, n - at < step ? n - at : step);
    sha256_final(&s, out);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", out[i]);
}

static void check(const unsigned char *data, size_t n, const char *want)
{
    static const size_t steps[] = {0, 1, 3, 63, 64, 65};
    char hex[65];
    sha256_hex(data, n, hex);
    if (strcmp(hex, want))
        fail_msg("sha256 of %zu bytes: %s, expected %s", n, hex, want);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        digest(data, n, steps[i], hex);
        if (strcmp(hex, want))
            fail_msg("sha256 of %zu bytes fed %zu at a time: %s, expected %s", n, steps[i], hex, want);
    }
}

static void test_fips_180_2(void **state)
{
    check((const unsigned char *)"", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check((const unsigned char *)"abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check((const unsigned char *)two, strlen(two),
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    unsigned char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    check(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

/* Bytes (7i + 1) mod 256 of each length, digests from hashlib.sha256. */
static void test_padding_edges(void **state)
{
    static const struct { size_t n; const char *hex; } kat[] = {
        {55, "16fa57a0a3423a715d594516339f36189d6b5f93754a9714fef202616a9fabfe"},
        {56, "c37b44e5f1b18554b36966f4f8e08bfbf3164c4b6c10374d12d89850892073c5"},
        {63, "bbba992d2c85af960fb2987a1fd05e0aa82a3db3c740dd8982a9e273b75e36a3"},
        {64, "66bd4633ed6f71c4ecfa4763bf7ba1c8ec7612de9aa6c0578a7b675207c71e0b"},
        {65, "9f7dc47107b750a1f3d35db5d9547f24ef40da5b731b9540d4f43710a154f6c9"},
        {119, "a3ed307b730fa77c07531300c6e4a282330011d4d4caf6bb7b63ae05950f4b66"},
        {120, "8e3b15d9fea7472655aa069620b7f8c2e55ee1499f763200a7515fe826e99d20"},
    };
    unsigned char data[128];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7 + 1);
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++)
        check(data, kat[k].n, kat[k].hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fips_180_2),
        cmocka_unit_test(test_padding_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
