/* nvtx: the calls of NVTX3's C API behind nvtx.h (the only file that
 * includes it). */
#include "nvtx.h"

#include <stdarg.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

void nvtx_push(const char *fmt, ...)
{
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxRangePushA(name);
}

void nvtx_pop(void)
{
    nvtxRangePop();
}
