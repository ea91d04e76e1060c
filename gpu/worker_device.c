/* worker_device: what is known of a GPU and how it reaches the parent.  The
 * device's attributes become a DeviceInfo (a data table of driver attributes);
 * a worker's or the probe's first frame says whether it started, and why not;
 * the probe, a child process exec'ed for the purpose, answers with every GPU's
 * DeviceInfo, so that the caller never initialises CUDA itself. */
#include "worker_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAG_START 0x54525453u  /* "STRT": a worker's or the probe's first frame */
#define TAG_DEVICE 0x49564544u /* "DEVI" */
#define TAG_COUNT 0x544e4f43u  /* "CONT": the probe's device count */

/* ---- device info ---------------------------------------------------------- */

/* Attributes read into DeviceInfo.  Optional ones read as 0 where a driver does
 * not report them (CUDA 13 deprecates the clock attributes). */
static const struct {
    CUdevice_attribute attr;
    size_t off;
    int wide;       /* int64_t field */
    int optional;
} device_attrs[] = {
#define A(attr, field, wide, opt) {attr, offsetof(DeviceInfo, field), wide, opt}
    A(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, l2_bytes, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, max_threads_block, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, max_block[0], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, max_block[1], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, max_block[2], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, max_grid[0], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, max_grid[1], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, max_grid[2], 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, smem_block, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, smem_block_optin, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, smem_sm, 1, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, regs_sm, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, regs_block, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, max_threads_sm, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_WARP_SIZE, warp, 0, 0),
    A(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, clock_khz, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, mem_clock_khz, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, bus_width, 0, 1),
    A(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, cluster_launch, 0, 1),
#undef A
};

int worker_device_info_query(int ordinal, DeviceInfo *d, KvxError *err)
{
    CUdevice dev;
    CUuuid u;
    size_t mem = 0;
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    d->driver_version = cu.driver_version;
    if (CU_CHECK(err, cu.cuDeviceGet(&dev, ordinal)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetName(d->name, (int)sizeof d->name, dev)) < 0 ||
        CU_CHECK(err, cu.cuDeviceGetUuid(&u, dev)) < 0 ||
        CU_CHECK(err, cu.cuDeviceTotalMem(&mem, dev)) < 0)
        return -1;
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    if (cu.cuDeviceGetPCIBusId(d->pci_bus, (int)sizeof d->pci_bus, dev) != CUDA_SUCCESS)
        d->pci_bus[0] = 0;
    d->mem_bytes = (int64_t)mem;
    for (size_t i = 0; i < sizeof device_attrs / sizeof device_attrs[0]; i++) {
        int v = 0;
        CUresult r = cu.cuDeviceGetAttribute(&v, device_attrs[i].attr, dev);
        if (r != CUDA_SUCCESS && !device_attrs[i].optional)
            return cudadl_check(r, "cuDeviceGetAttribute", __FILE__, __LINE__, err);
        if (r != CUDA_SUCCESS)
            v = 0;
        char *field = (char *)d + device_attrs[i].off;
        if (device_attrs[i].wide)
            *(int64_t *)(void *)field = v;
        else
            *(int *)(void *)field = v;
    }
    d->peak_gbs = worker_device_peak_gbs(d->mem_clock_khz, d->bus_width);
    return 0;
}

double worker_device_peak_gbs(int mem_clock_khz, int bus_width_bits)
{
    return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

int worker_device_info_write(int fd, const DeviceInfo *d)
{
    return case_wire_send(fd, TAG_DEVICE, d, (uint32_t)sizeof *d);
}

int worker_device_info_read(int fd, DeviceInfo *d)
{
    if (case_wire_recv(fd, TAG_DEVICE, d, (uint32_t)sizeof *d) < 0)
        return -1;
    d->name[sizeof d->name - 1] = 0;
    d->uuid[sizeof d->uuid - 1] = 0;
    d->pci_bus[sizeof d->pci_bus - 1] = 0;
    return 0;
}

void worker_device_info_facts(const DeviceInfo *d, DeviceFacts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->arch, sizeof f->arch, "sm_%d%d", d->cc_major % 100, d->cc_minor % 10);
    snprintf(f->name, sizeof f->name, "%.127s", d->name);
    f->cc = d->cc_major * 10 + d->cc_minor;
    f->sm_count = d->sm_count;
    f->l2_bytes = d->l2_bytes;
    f->warp = d->warp;
    f->max_threads = d->max_threads_block;
    f->smem_block = d->smem_block_optin;
    f->smem_sm = d->smem_sm;
    f->regs_sm = d->regs_sm;
    f->max_threads_sm = d->max_threads_sm;
    f->peak_gbs = d->peak_gbs;
    f->mem_bytes = d->mem_bytes;
    f->nominal = 0;
}

/* ---- start frames and the probe -------------------------------------------- */

typedef struct StartFrame {
    int32_t code;           /* 0: started; else a KvxCode, msg says why */
    char msg[1536];
} StartFrame;

int worker_start_write(int fd, const KvxError *err)
{
    StartFrame s;
    memset(&s, 0, sizeof s);
    if (err && err->code) {
        s.code = err->code;
        memcpy(s.msg, err->msg, sizeof s.msg - 1);
    }
    return case_wire_send(fd, TAG_START, &s, (uint32_t)sizeof s);
}

/* 0 started, 1 the peer reported a failure (err set), -1 the pipe failed. */
static int start_read(int fd, KvxError *err)
{
    StartFrame s;
    if (case_wire_recv(fd, TAG_START, &s, (uint32_t)sizeof s) < 0)
        return -1;
    if (s.code == 0)
        return 0;
    s.msg[sizeof s.msg - 1] = 0;
    kvx_error_set(err, s.code, NULL, "%s", s.msg);
    return 1;
}

int worker_start_read(int fd, DeviceInfo *d, KvxError *err)
{
    int rc = start_read(fd, err);
    if (rc == 0 && worker_device_info_read(fd, d) == 0)
        return 0;
    if (rc != 1)
        kvx_error_set(err, KVX_EIO, NULL, "the GPU worker died before reporting its device");
    return -1;
}

int worker_probe_main(int out_fd)
{
    KvxError err = {0};
    int n = 0;
    if (cudadl_load(&err) == 0 && CU_CHECK(&err, cu.cuInit(0)) == 0 &&
        CU_CHECK(&err, cu.cuDeviceGetCount(&n)) == 0 && n == 0)
        kvx_error_set(&err, KVX_EFAIL, NULL, "the CUDA driver reports no GPU");
    /* Query every device before answering, so that a failure is one message. */
    DeviceInfo *all = mem_calloc((size_t)(n > 0 ? n : 1), sizeof *all);
    for (int i = 0; !err.code && i < n; i++)
        worker_device_info_query(i, &all[i], &err);
    int rc = worker_start_write(out_fd, &err);
    if (rc == 0 && !err.code) {
        int32_t count = n;
        rc = case_wire_send(out_fd, TAG_COUNT, &count, sizeof count);
        for (int i = 0; rc == 0 && i < n; i++)
            rc = worker_device_info_write(out_fd, &all[i]);
    }
    free(all);
    return rc == 0 ? 0 : 1;
}

int worker_probe(DeviceInfo *out, int max, int *n, KvxError *err)
{
    int p[2];
    *n = 0;
    if (pipe(p) < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "GPU probe: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "GPU probe: fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* exec, not just fork: a process that has run NVRTC (13.0) can no
         * longer hand CUDA to a forked child (cuInit: NOT_INITIALIZED). */
        char fd[16];
        close(p[0]);
        snprintf(fd, sizeof fd, "%d", p[1]);
        execl("/proc/self/exe", "kvx", "__probe", fd, (char *)NULL);
        _exit(127);
    }
    close(p[1]);

    int rc = start_read(p[0], err), ok = 0;
    int32_t count = 0;
    if (rc == 0 && case_wire_recv(p[0], TAG_COUNT, &count, sizeof count) == 0) {
        DeviceInfo d;
        ok = 1;
        for (int i = 0; i < count && ok; i++) {
            ok = worker_device_info_read(p[0], &d) == 0;
            if (ok && i < max)
                out[i] = d;
        }
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 1)
        return -1;
    if (!ok) {
        if (WIFSIGNALED(status))
            kvx_error_set(err, KVX_EIO, NULL, "the GPU probe process died (signal %d)",
                          WTERMSIG(status));
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            kvx_error_set(err, KVX_EIO, NULL, "GPU probe: cannot run /proc/self/exe __probe");
        else
            kvx_error_set(err, KVX_EIO, NULL, "the GPU probe process ended without an answer");
        return -1;
    }
    *n = count;
    return 0;
}
