/* mem: the allocators that never return NULL (util.h; the rest of util.h is
 * kvx_error.c, arena.c, sb.c, file.c, path.c, hidx.c, sha256.c and wall.c). */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "kvx: out of memory (asked for %zu bytes)\n", n);
    abort();
}

void *mem_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *mem_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *mem_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *mem_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = mem_alloc(n);
    memcpy(p, s, n);
    return p;
}
