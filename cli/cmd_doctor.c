/* cmd_doctor: `kvx doctor`, what this machine has for kvx: NVRTC and its
 * archs, the CUDA headers, the compile cache, the disassembler, gnuplot, the
 * driver and the GPUs.  Exit 1 when kvx cannot compile here. */
#include "cli.h"
#include "core/version.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/inspect.h"
#include "gpu/worker.h"

typedef struct DoctorOpts {
    int format;                 /* CLI_TEXT or a ResultsFormat */
} DoctorOpts;

#define AT(field) offsetof(DoctorOpts, field)
static const CliOpt doctor_opts[] = {
    CLI_OPT_FORMAT("the checks (check, status, detail)", AT(format)),
    {0},
};

const CliVerb cmd_doctor_verb = {
    .name = "doctor",
    .operands = "",
    .operands_are = "no operands",
    .min_operands = 0,
    .max_operands = 0,
    .summary = "NVRTC, CUDA headers, driver, GPUs, disassembler",
    .opts_size = sizeof(DoctorOpts),
    .opts = doctor_opts,
    .notes = "What this machine has: NVRTC and its archs, the CUDA headers, the compile cache, the\n"
             "disassembler, gnuplot, the driver and the GPUs.  Exit 1 when kvx cannot compile here.\n",
    .run = cmd_doctor,
};

/* Where the findings go: a line each, or a row each of --format's table
 * (check, status: ok, missing or problem, detail). */
typedef struct Doctor {
    ResultsRows *rows;
    int problems;
} Doctor;

static void say(Doctor *d, const char *check, const char *status, const char *fmt, ...)
    KVX_PRINTF(4, 5);
static void say(Doctor *d, const char *check, const char *status, const char *fmt, ...)
{
    StrBuf b;
    sb_init(&b);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    if (d->rows)
        results_rows_add(d->rows, (const char *const[]){check, status, sb_str(&b)});
    else if (check[0] == ' ')
        printf("%s%s\n", check, sb_str(&b));
    else
        printf("%-11s %s\n", check, sb_str(&b));
    d->problems += !strcmp(status, "problem");
    sb_free(&b);
}

/* NVRTC and the headers it needs. */
static void doctor_compiler(Doctor *d)
{
    int major = 0, minor = 0;
    if (jit_nvrtc_version(&major, &minor) == 0) {
        char *archs = jit_supported_archs();
        say(d, "NVRTC", "ok", "%d.%d; archs %s", major, minor, archs ? archs : "(unknown)");
        free(archs);
    } else {
        say(d, "NVRTC", "problem", "NOT WORKING: kvx cannot compile");
    }
    char *inc = jit_find_cuda_include();
    if (inc)
        say(d, "CUDA headers", "ok", "%s", inc);
    else
        say(d, "CUDA headers", "problem", "NOT FOUND: set CUDA_HOME (cuda_fp16.h etc. will not resolve)");
    if (inc) {
        char *cccl = path_join(inc, "cccl/cub/cub.cuh");
        struct stat st;
        int found = stat(cccl, &st) == 0;
        say(d, "CCCL", found ? "ok" : "missing", "%s", found ? "found (headers: [cccl] works)" : "not found");
        free(cccl);
    }
    free(inc);
}

/* The cache, the disassembler, gnuplot. */
static void doctor_tools(Doctor *d)
{
    char *cache = jit_default_cache_dir();
    say(d, "cache", "ok", "%s", cache);
    free(cache);
    const char *dis = inspect_find_disassembler();
    if (dis)
        say(d, "SASS", "ok", "%s (%s, from %s)", dis, inspect_disassembler_version(),
            inspect_disassembler_origin());
    else
        say(d, "SASS", "missing", "no nvdisasm or cuobjdump: inspect gives the PTX analysis only (make build "
            "installs the PyPI package nvidia-cuda-nvdisasm into .kvx/tools)");
    char path[4096];
    int gp = path_search("gnuplot", path, sizeof path) != 0;
    say(d, "gnuplot", gp ? "ok" : "missing", "%s", gp ? path : "not found: reports without plots");
}

/* The driver and the GPUs, probed in a child. */
static void doctor_gpus(Doctor *d)
{
    KvxError err = {0};
    DeviceInfo info[16];
    int n = 0;
    if (worker_probe(info, 16, &n, &err) != 0) {
        say(d, "driver", "missing", "%s", err.msg);
        say(d, "GPUs", "missing", "none: plan, gen, compile and inspect work; measuring (kvx run) needs a GPU");
        kvx_error_clear(&err);
        return;
    }
    say(d, "driver", "ok", "CUDA %d.%d", info[0].driver_version / 1000, info[0].driver_version % 1000 / 10);
    say(d, "GPUs", "ok", "%d", n);
    for (int i = 0; i < n; i++) {
        const DeviceInfo *g = &info[i];
        char check[16];
        snprintf(check, sizeof check, d->rows ? "GPU %d" : "  %d: ", i);
        say(d, check, "ok", "%s (%s), sm_%d%d, %d SMs, L2 %.0f MiB, %.1f GiB, peak %.0f GB/s, SM clock %d MHz",
            g->name, g->uuid, g->cc_major, g->cc_minor, g->sm_count, g->l2_bytes / 1048576.0,
            g->mem_bytes / 1073741824.0, g->peak_gbs, g->clock_khz / 1000);
    }
}

int cmd_doctor(int argc, char **argv)
{
    CliArgs a;
    DoctorOpts o = {.format = CLI_TEXT};
    if (cli_parse(&cmd_doctor_verb, argc, argv, &o, &a))
        return a.status;
    Doctor d = {0};
    if (o.format != CLI_TEXT)
        d.rows = results_rows_open(stdout, (ResultsFormat)o.format, (const char *const[]){"check", "status", "detail"},
                                   3);
    if (d.rows)
        say(&d, "kvx", "ok", "%s", version_text());
    else
        printf("kvx %s\n", version_text());
    doctor_compiler(&d);
    doctor_tools(&d);
    doctor_gpus(&d);
    results_rows_close(d.rows);
    return d.problems ? 1 : 0;
}
