/* values: the value names of core/values.h's table, as arrays and a lookup. */
#include "values.h"

#include <stdio.h>
#include <string.h>

#define VALUES_INFO_OBJ(n, unit, doc) [SPEC_VALUE_##n] = {#n, doc, unit, 1, 1},
#define VALUES_INFO_TAB(n, unit, doc) [SPEC_VALUE_##n] = {#n, doc, unit, 1, 0},
#define VALUES_INFO_FACT(n, unit, doc) [SPEC_VALUE_##n] = {#n, doc, unit, 0, 0},
#define VALUES_INFO_NO(n, unit, doc)
const ValueInfo values_info[SPEC_VALUE_COUNT] = {
#define X(n, from, type, since, tab, unit, imp, doc, meaning) VALUES_INFO_##tab(n, unit, doc)
    KVX_VALUES(X)
#undef X
};

int values_lower_better(ValueUnit u)
{
    return !(u == VALUE_GBS || u == VALUE_PCT || u == VALUE_RATE);
}

int values_find(const char *name)
{
    for (int i = 0; i < SPEC_VALUE_COUNT; i++)
        if (!strcmp(values_info[i].name, name))
            return i;
    return -1;
}

const char *values_list(void)
{
    static _Thread_local char list[1024];
    size_t at = 0;
    for (int i = 0; i < SPEC_VALUE_COUNT && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", values_info[i].name);
    return list;
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
