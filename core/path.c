/* path: paths joined and split, tools found on PATH (util.h). */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return mem_strdup(".");
    if (slash == path)
        return mem_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = mem_alloc(n + 1);
    memcpy(d, path, n);
    d[n] = 0;
    return d;
}

char *path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0)
        return mem_strdup(rel);
    size_t a = strlen(dir), b = strlen(rel);
    char *p = mem_alloc(a + b + 2);
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, rel, b + 1);
    return p;
}

int path_exe_at(const char *dir, const char *name, char *out, size_t n)
{
    struct stat st;
    if (!dir || !*dir || (size_t)snprintf(out, n, "%s/%s", dir, name) >= n)
        return 0;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
}

int path_search(const char *name, char *out, size_t n)
{
    for (const char *p = getenv("PATH"); p && *p;) {
        size_t len = strcspn(p, ":");
        char dir[4096];
        if (len < sizeof dir) {
            memcpy(dir, p, len), dir[len] = '\0';
            if (path_exe_at(dir, name, out, n))
                return 1;
        }
        p += len + (p[len] == ':');
    }
    return 0;
}
