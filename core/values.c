/* values: the value names of core/values.h, as arrays and a lookup. */
#include "values.h"

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

int spec_value_find(const char *name)
{
    for (int i = 0; i < SPEC_VALUE_COUNT; i++)
        if (!strcmp(spec_value_names[i], name))
            return i;
    return -1;
}

const char *spec_value_list(void)
{
#define X(n, doc) ", " #n
    /* Built at compile time; +2 skips the first ", ". */
    static const char list[] = "" SPEC_VALUES(X);
#undef X
    return list + 2;
}
