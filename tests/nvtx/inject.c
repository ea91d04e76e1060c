/* inject.c: an NVTX injection library, as Nsight Systems loads one, for
 * tests without a tool (tests/test_run_nsight.c).  A process whose
 * NVTX_INJECTION64_PATH names this library has NVTX3's first call load it
 * and call InitializeInjectionNvtx2, which points the RangePushA and
 * RangePop slots of the core function table here; each range then appends
 * "<pid> push <name>" or "<pid> pop" to $KVX_TEST_NVTX_LOG (one write,
 * O_APPEND: lines of several processes do not interleave). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static void log_line(const char *what, const char *name)
{
    const char *path = getenv("KVX_TEST_NVTX_LOG");
    if (!path)
        return;
    char line[700];
    int n = snprintf(line, sizeof line, "%ld %s%s%.600s\n", (long)getpid(), what, name ? " " : "",
                     name ? name : "");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        fprintf(stderr, "nvtx inject: cannot append to %s\n", path);
    close(fd);
}

static int NVTX_API range_push(const char *message)
{
    log_line("push", message);
    return 0;
}

static int NVTX_API range_pop(void)
{
    log_line("pop", NULL);
    return 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

/* 1: attached; 0: NVTX leaves its calls empty. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb = get_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
        size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)range_push;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)range_pop;
    return 1;
}
