/* facts: device facts visible to expressions, and the nominal figures used when
 * no GPU is present (plan, gen, compile on a build machine).
 *
 * The nominal rows describe one representative part per architecture; they only
 * shape emitted sources and launch geometry at plan time.  A run always uses the
 * figures the driver reports for the GPU it runs on. */
#include "facts.h"

#include <stdio.h>
#include <string.h>

typedef struct NominalRow {
    int cc;
    const char *part;
    int sm_count;
    int64_t l2_bytes;
    int64_t smem_block, smem_sm;
    int max_threads_sm;
    double peak_gbs;
    int64_t mem_bytes;
} NominalRow;

#define KiB 1024LL
#define MiB (1024LL * 1024)
#define GiB (1024LL * 1024 * 1024)

/* Datasheet figures; bandwidth in GB/s (1e9 B/s). */
static const NominalRow nominal[] = {
    {75, "Tesla T4", 40, 4 * MiB, 64 * KiB, 64 * KiB, 1024, 320, 16 * GiB},
    {80, "A100-SXM4-80GB", 108, 40 * MiB, 163 * KiB, 164 * KiB, 2048, 2039, 80 * GiB},
    {86, "GeForce RTX 3090", 82, 6 * MiB, 99 * KiB, 100 * KiB, 1536, 936, 24 * GiB},
    {87, "Jetson AGX Orin", 16, 4 * MiB, 163 * KiB, 164 * KiB, 1536, 205, 32 * GiB},
    {89, "GeForce RTX 4090", 128, 72 * MiB, 99 * KiB, 100 * KiB, 1536, 1008, 24 * GiB},
    {90, "H100-SXM5-80GB", 132, 50 * MiB, 227 * KiB, 228 * KiB, 2048, 3352, 80 * GiB},
    {100, "B200", 148, 126 * MiB, 227 * KiB, 228 * KiB, 2048, 8000, 180 * GiB},
    {103, "B300", 148, 126 * MiB, 227 * KiB, 228 * KiB, 2048, 8000, 270 * GiB},
    {110, "Jetson Thor", 20, 32 * MiB, 227 * KiB, 228 * KiB, 1536, 273, 128 * GiB},
    {120, "GeForce RTX 5090", 170, 96 * MiB, 99 * KiB, 100 * KiB, 1536, 1792, 32 * GiB},
    {121, "DGX Spark GB10", 48, 24 * MiB, 99 * KiB, 100 * KiB, 1536, 273, 128 * GiB},
};

/* Named targets for planning without the GPU (--gpu NAME): the figures the
 * driver reports for the part, so that a plan for it agrees with a run on it.
 * H200-SXM-141GB: measured by kvx on one (results/h200/histogram.db, runs:
 *   132 SMs, L2 62914560, cuDeviceTotalMem 150109880320, 1980 / 3201 MHz,
 *   5120-bit bus: 2 x 3201 MHz x 640 B = 4814 GB/s).
 * H100-SXM5-80GB: NVIDIA H100 datasheet and Hopper whitepaper (132 SMs, 50 MB
 *   L2, 1980 MHz boost, 3.35 TB/s: 2619 MHz x 5120 bits); memory as nvidia-smi
 *   reports it, 81559 MiB (modal-labs/modal-client PR #2797).
 * A100-SXM4-80GB: NVIDIA A100 datasheet and Ampere whitepaper (108 SMs, 40 MB
 *   L2, 1410 MHz boost, 2039 GB/s: 1593 MHz x 5120 bits); memory 81920 MiB
 *   as nvidia-smi reports it (same source).
 * Clocks enter as peak_gbs (memory clock x bus width); no fact reads the SM
 * clock. */
static const NominalRow named[] = {
    {90, "H200-SXM-141GB", 132, 60 * MiB, 227 * KiB, 228 * KiB, 2048, 4814.304, 150109880320LL},
    {90, "H100-SXM5-80GB", 132, 50 * MiB, 227 * KiB, 228 * KiB, 2048, 3352, 81559 * MiB},
    {80, "A100-SXM4-80GB", 108, 40 * MiB, 163 * KiB, 164 * KiB, 2048, 2039, 81920 * MiB},
};

static void fill(DeviceFacts *f, const char *arch, const NominalRow *row)
{
    memset(f, 0, sizeof *f);
    snprintf(f->arch, sizeof f->arch, "%s", arch);
    f->cc = row->cc;
    f->sm_count = row->sm_count;
    f->l2_bytes = row->l2_bytes;
    f->warp = 32;
    f->max_threads = 1024;
    f->smem_block = row->smem_block;
    f->smem_sm = row->smem_sm;
    f->regs_sm = 65536;
    f->max_threads_sm = row->max_threads_sm;
    f->peak_gbs = row->peak_gbs;
    f->mem_bytes = row->mem_bytes;
    f->nominal = 1;
}

int facts_for_gpu(const char *name, DeviceFacts *f)
{
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(named[i].part, name)) {
            char arch[16];
            snprintf(arch, sizeof arch, "sm_%d", named[i].cc);
            fill(f, arch, &named[i]);
            snprintf(f->name, sizeof f->name, "%s named target", name);
            snprintf(f->gpu, sizeof f->gpu, "%s", name);
            return 0;
        }
    return -1;
}

const char *facts_gpu_name(int i)
{
    return i >= 0 && (size_t)i < sizeof named / sizeof named[0] ? named[i].part : NULL;
}

int facts_for_arch(const char *arch, DeviceFacts *f)
{
    int cc = 0;
    char suffix = 0;
    if (sscanf(arch, "sm_%d%c", &cc, &suffix) < 1 || cc < 10)
        return -1;
    const NominalRow *row = NULL;
    for (size_t i = 0; i < sizeof nominal / sizeof nominal[0]; i++)
        if (nominal[i].cc == cc)
            row = &nominal[i];
    if (!row)
        return -1;
    fill(f, arch, row);
    f->cc = cc;
    snprintf(f->name, sizeof f->name, "nominal %s (%s)", arch, row->part);
    return 0;
}

const char *const facts_names[] = {"sm_count", "l2_bytes", "warp", "cc", "max_threads", "smem_block",
                                   "smem_sm", "regs_sm", "max_threads_sm", "peak_gbs", "mem_bytes", NULL};

int facts_lookup(const DeviceFacts *f, const char *name, Value *out)
{
    if (!strcmp(name, "sm_count")) *out = val_int(f->sm_count);
    else if (!strcmp(name, "l2_bytes")) *out = val_int(f->l2_bytes);
    else if (!strcmp(name, "warp")) *out = val_int(f->warp);
    else if (!strcmp(name, "cc")) *out = val_int(f->cc);
    else if (!strcmp(name, "max_threads")) *out = val_int(f->max_threads);
    else if (!strcmp(name, "smem_block")) *out = val_int(f->smem_block);
    else if (!strcmp(name, "smem_sm")) *out = val_int(f->smem_sm);
    else if (!strcmp(name, "regs_sm")) *out = val_int(f->regs_sm);
    else if (!strcmp(name, "max_threads_sm")) *out = val_int(f->max_threads_sm);
    else if (!strcmp(name, "peak_gbs")) *out = val_float(f->peak_gbs);
    else if (!strcmp(name, "mem_bytes")) *out = val_int(f->mem_bytes);
    else return 0;
    return 1;
}
