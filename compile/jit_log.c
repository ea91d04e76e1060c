/* jit_log: what kvx reads out of an NVRTC log for the user: a hint where the
 * log shows a known mistake of the spec (a CCCL header without `headers:
 * [cccl]`), the warnings of a compile that succeeded (NVRTC's and ptxas's,
 * not ptxas's info lines), which would otherwise sit unseen in the cache
 * entry's log.txt, and NVRTC's line numbers of the generated file mapped
 * back to the template's FILE:LINE (JitJob.origins).  The cache keeps the
 * log as NVRTC wrote it: the map is applied where a log is shown. */
#include "jit.h"
#include "jit_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What NVRTC names when a header of CCCL is not on its include path: the
 * libcu++ headers (cuda/std/...), CUB, Thrust, and cooperative groups, whose
 * headers include libcu++ since CUDA 13. */
static const char *const CCCL_MISSING[] = {
    "cannot open source file \"cuda/", "cannot open source file \"cub/",
    "cannot open source file \"thrust/", "cannot open source file \"cooperative_groups",
    "cannot open source file \"nv/", NULL,
};

void jit_log_hint(JitJob *job)
{
    if (job->ok || job->use_cccl || !job->log)
        return;
    int cccl = 0;
    for (int i = 0; CCCL_MISSING[i] && !cccl; i++)
        cccl = strstr(job->log, CCCL_MISSING[i]) != NULL;
    if (!cccl)
        return;
    static const char hint[] =
        "kvx: hint: a CCCL header (cuda/std, CUB, Thrust, cooperative groups) is not on NVRTC's include"
        " path: add `headers: [cccl]` to the spec (docs/spec.md)\n";
    size_t n = strlen(job->log);
    job->log = mem_realloc(job->log, n + sizeof hint + 1);
    if (n && job->log[n - 1] != '\n')
        job->log[n++] = '\n';
    memcpy(job->log + n, hint, sizeof hint);
}

/* A warning line: NVRTC's "name(12): warning #177-D: ..." or ptxas's
 * "ptxas warning : ...". */
static int is_warning(const char *line, size_t len)
{
    static const char *const marks[] = {": warning", "ptxas warning", NULL};
    for (int i = 0; marks[i]; i++) {
        size_t m = strlen(marks[i]);
        for (size_t k = 0; k + m <= len; k++)
            if (!memcmp(line + k, marks[i], m))
                return 1;
    }
    return 0;
}

char *jit_log_warnings(const char *log)
{
    StrBuf b;
    sb_init(&b);
    for (const char *p = log ? log : ""; *p;) {
        size_t len = strcspn(p, "\n");
        if (is_warning(p, len)) {
            /* NVRTC follows a warning with the source line and a caret. */
            const char *q = p + len + (p[len] == '\n');
            sb_printf(&b, "%.*s\n", (int)len, p);
            for (int k = 0; k < 3 && *q && *q != '\n' && !is_warning(q, strcspn(q, "\n")) &&
                            strncmp(q, "ptxas", 5) && strncmp(q, "Remark", 6);
                 k++) {
                size_t ql = strcspn(q, "\n");
                sb_printf(&b, "%.*s\n", (int)ql, q);
                q += ql + (q[ql] == '\n');
            }
            p = q;
            continue;
        }
        p += len + (p[len] == '\n');
    }
    if (!b.len) {
        sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

/* The origin of line n (1-based) of origins, "FILE:LINE", into out[cap];
 * 0 when there is none. */
static int origin_of(const char *origins, long n, char *out, size_t cap)
{
    const char *p = origins;
    for (long k = 1; k < n && p; k++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p || *p == '\n')
        return 0;
    size_t len = strcspn(p, "\n");
    snprintf(out, cap, "%.*s", (int)len, p);
    return 1;
}

char *jit_log_map(const JitJob *job, const char *log)
{
    if (!log)
        return mem_strdup("");
    if (!job->origins)
        return mem_strdup(log);
    const char *name = jit_job_name(job);
    size_t nl = strlen(name);
    StrBuf b;
    sb_init(&b);
    for (const char *p = log; *p;) {
        size_t len = strcspn(p, "\n");
        char *end;
        char where[1100];
        if (len > nl + 2 && !strncmp(p, name, nl) && p[nl] == '(') {
            long n = strtol(p + nl + 1, &end, 10);
            if (end > p + nl + 1 && *end == ')' && origin_of(job->origins, n, where, sizeof where))
                sb_printf(&b, "%s: ", where);
        }
        sb_printf(&b, "%.*s\n", (int)len, p);
        p += len + (p[len] == '\n');
    }
    return sb_take(&b);
}
