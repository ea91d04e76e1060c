/* cmd_doctor: `kvx doctor`, what this machine has for kvx: NVRTC and its
 * archs, the CUDA headers, the compile cache, the disassembler, gnuplot, the
 * driver and the GPUs.  Exit 1 when kvx cannot compile here. */
#include "cli.h"
#include "core/version.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/inspect.h"
#include "gpu/worker.h"

static const CliOpt doctor_opts[] = {{0}};

const CliVerb cmd_doctor_verb = {
    .name = "doctor",
    .operands = "",
    .operands_are = "no operands",
    .min_operands = 0,
    .max_operands = 0,
    .summary = "NVRTC, CUDA headers, driver, GPUs, disassembler",
    .opts_size = sizeof(char),
    .opts = doctor_opts,
    .notes = "What this machine has: NVRTC and its archs, the CUDA headers, the compile cache, the\n"
             "disassembler, gnuplot, the driver and the GPUs.  Exit 1 when kvx cannot compile here.\n",
    .run = cmd_doctor,
};

/* NVRTC and the headers it needs.  The problems found. */
static int doctor_compiler(void)
{
    int major = 0, minor = 0, problems = 0;
    if (jit_nvrtc_version(&major, &minor) == 0) {
        char *archs = jit_supported_archs();
        printf("NVRTC       %d.%d; archs %s\n", major, minor, archs ? archs : "(unknown)");
        free(archs);
    } else {
        printf("NVRTC       NOT WORKING: kvx cannot compile\n");
        problems++;
    }
    char *inc = jit_find_cuda_include();
    printf("CUDA headers %s\n", inc ? inc : "NOT FOUND: set CUDA_HOME (cuda_fp16.h etc. will not resolve)");
    if (inc) {
        char *cccl = path_join(inc, "cccl/cub/cub.cuh");
        struct stat st;
        printf("CCCL        %s\n", stat(cccl, &st) == 0 ? "found (headers: [cccl] works)" : "not found");
        free(cccl);
    } else {
        problems++;
    }
    free(inc);
    return problems;
}

/* The cache, the disassembler, gnuplot. */
static void doctor_tools(void)
{
    char *cache = jit_default_cache_dir();
    printf("cache       %s\n", cache);
    free(cache);
    const char *dis = inspect_find_disassembler();
    if (dis)
        printf("SASS        %s (%s, from %s)\n", dis, inspect_disassembler_version(),
               inspect_disassembler_origin());
    else
        printf("SASS        no nvdisasm or cuobjdump: inspect gives the PTX analysis only (make build "
               "installs the PyPI package nvidia-cuda-nvdisasm into .kvx/tools)\n");
    char path[4096];
    printf("gnuplot     %s\n",
           path_search("gnuplot", path, sizeof path) ? path : "not found: reports without plots");
}

/* The driver and the GPUs, probed in a child. */
static void doctor_gpus(void)
{
    KvxError err = {0};
    DeviceInfo info[16];
    int n = 0;
    if (worker_probe(info, 16, &n, &err) != 0) {
        printf("driver      %s\n", err.msg);
        printf("GPUs        none: plan, gen, compile and inspect work; measuring (kvx run) needs a GPU\n");
        kvx_error_clear(&err);
        return;
    }
    printf("driver      CUDA %d.%d\n", info[0].driver_version / 1000, info[0].driver_version % 1000 / 10);
    printf("GPUs        %d\n", n);
    for (int i = 0; i < n; i++) {
        const DeviceInfo *d = &info[i];
        printf("  %d: %s (%s), sm_%d%d, %d SMs, L2 %.0f MiB, %.1f GiB, peak %.0f GB/s, SM clock %d MHz\n",
               i, d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count, d->l2_bytes / 1048576.0,
               d->mem_bytes / 1073741824.0, d->peak_gbs, d->clock_khz / 1000);
    }
}

int cmd_doctor(int argc, char **argv)
{
    CliArgs a;
    char none = 0;
    if (cli_parse(&cmd_doctor_verb, argc, argv, &none, &a))
        return a.status;
    printf("kvx %s\n", version_text());
    int problems = doctor_compiler();
    doctor_tools();
    doctor_gpus();
    return problems ? 1 : 0;
}
