/* python_tools.h: python3 with the modules a test runs (pandas for the docs'
 * example, matplotlib for a report's scripts), where scripts/deps.sh puts
 * them when the system's python3 lacks them (.kvx/tools/python, put on
 * PYTHONPATH here).  Header-only. */
#ifndef KVX_TESTS_PYTHON_TOOLS_H
#define KVX_TESTS_PYTHON_TOOLS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif

/* 1 when `python3 -c 'import MODULES'` works with .kvx/tools/python on
 * PYTHONPATH (set for the test's children too); else 0 after a line that
 * says what did not run, and in CI (CI set, as .ci/run does) the test fails:
 * there scripts/deps.sh has installed them. */
static inline int python_has(const char *modules, const char *what)
{
    static char path[4096];
    const char *pp = getenv("PYTHONPATH");
    if (!strstr(pp ? pp : "", "/.kvx/tools/python")) {
        snprintf(path, sizeof path, "%s/.kvx/tools/python%s%s", KVX_SOURCE_DIR, pp ? ":" : "", pp ? pp : "");
        setenv("PYTHONPATH", path, 1);
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 -c 'import %s' >/dev/null 2>&1", modules);
    if (system(cmd) == 0)
        return 1;
    printf("python3 cannot import %s (scripts/deps.sh installs it): %s not run\n", modules, what);
    if (getenv("CI"))
        fail_msg("CI: python3 cannot import %s; %s must run", modules, what);
    return 0;
}

#endif
