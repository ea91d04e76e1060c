/* values: the value names of core/values.h, as arrays and a lookup. */
#include "values.h"

#include <stdio.h>
#include <string.h>

const char *const spec_value_names[] = {
#define X(n, doc) #n,
    SPEC_VALUES(X)
#undef X
    NULL};

const char *const spec_value_docs[] = {
#define X(n, doc) doc,
    SPEC_VALUES(X)
#undef X
};

int values_find(const char *name)
{
    for (int i = 0; i < SPEC_VALUE_COUNT; i++)
        if (!strcmp(spec_value_names[i], name))
            return i;
    return -1;
}

const char *values_list(void)
{
#define X(n, doc) ", " #n
    /* Built at compile time; +2 skips the first ", ". */
    static const char list[] = "" SPEC_VALUES(X);
#undef X
    return list + 2;
}

const char *const inspect_keys[] = {INSPECT_KEYS, NULL};

int values_inspect_valid(const char *key)
{
    for (int i = 0; inspect_keys[i]; i++)
        if (!strcmp(inspect_keys[i], key))
            return 1;
    return 0;
}

const char *values_inspect_list(void)
{
    static _Thread_local char list[2048];
    size_t at = 0;
    for (int i = 0; inspect_keys[i] && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", inspect_keys[i]);
    return list;
}

int values_counter_valid(const char *metric)
{
    size_t n = strlen(metric);
    return n > 0 && n < 128 &&
           strspn(metric, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == n;
}
