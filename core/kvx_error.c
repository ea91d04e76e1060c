/* kvx_error: the error slot every stage fills, and the assertion (util.h). */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kvx_error_vset(KvxError *e, int code, const SrcPos *pos, const char *fmt, va_list ap)
{
    if (!e || e->code)
        return; /* the first, innermost message is the most precise */
    e->code = code ? code : KVX_EINTERNAL;
    e->file[0] = 0;
    e->line = e->col = 0;
    if (pos && pos->file) {
        snprintf(e->file, sizeof e->file, "%s", pos->file);
        e->line = pos->line;
        e->col = pos->col;
    }
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

void kvx_error_set(KvxError *e, int code, const SrcPos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvx_error_vset(e, code, pos, fmt, ap);
    va_end(ap);
}

void kvx_error_attach_log(KvxError *e, const char *log, size_t len)
{
    if (!e || !log)
        return;
    free(e->log);
    e->log = mem_alloc(len + 1);
    memcpy(e->log, log, len);
    e->log[len] = 0;
}

void kvx_error_clear(KvxError *e)
{
    if (!e)
        return;
    free(e->log);
    memset(e, 0, sizeof *e);
}

void kvx_error_print(const KvxError *e, FILE *f)
{
    if (!e || !e->code)
        return;
    if (e->file[0]) {
        if (e->line > 0)
            fprintf(f, "%s:%d:%d: %s\n", e->file, e->line, e->col, e->msg);
        else
            fprintf(f, "%s: %s\n", e->file, e->msg);
    } else {
        fprintf(f, "kvx: %s\n", e->msg);
    }
    if (e->log && e->log[0])
        fprintf(f, "%s%s", e->log, e->log[strlen(e->log) - 1] == '\n' ? "" : "\n");
}

_Noreturn void kvx_error_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: kvx internal error: assertion '%s' failed\n", file, line, expr);
    abort();
}
