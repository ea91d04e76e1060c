/* worker: the process that owns one GPU and runs cases on it.
 *
 * The parent never initialises CUDA (a forked child of a process that did cannot
 * use it, and a sticky fault would take the whole run down).  It starts one
 * worker per GPU (`kvx __worker DEVICE`, fork + exec of /proc/self/exe, whose
 * main calls worker_main; exec matters: a process that has run NVRTC cannot
 * give CUDA to a merely forked child) and talks to it over two pipes:
 *
 *   worker -> parent   a start frame: the device's DeviceInfo, or why the
 *                      worker could not start (read it with worker_start_read)
 *   parent -> worker   CaseDesc (case_write)
 *   worker -> parent   CaseResult (case_result_write), one per case, in order
 *
 * until the parent closes its end.  After a sticky fault (illegal address,
 * trap, misaligned access, ...) the context is unusable: the worker sends the
 * result with status fault and exits with WORKER_EXIT_FAULT; the parent starts
 * a new one.  A case that hangs is the parent's to kill (measure.timeout_s).
 *
 * Caches in a worker, each bounded:
 *   - modules by cubin path (at most WORKER_MAX_MODULES, least recently used
 *     unloaded first);
 *   - inputs (buffers not checked) by input_key: the device copy (generated
 *     there by kvx_fill, or uploaded: zipf) and, only where a host reference
 *     reads it, the host copy, least recently used evicted first past
 *     WORKER_INPUT_CACHE_BYTES; the parent sends the variants of one workload
 *     point one after another: they then share one generated input;
 *   - output allocations (reset before every launch, so reuse shows nothing of
 *     an earlier case) and their host copies;
 *   - the baseline variant's outputs under workload_key (the last
 *     WORKER_MAX_BASELINES points).
 *
 * A buffer that is not checked is an input: generated once (on the device
 * where it can be, worker_compare.c's worker_fill_device) and never reset, so a kernel must not
 * write a buffer that is not named in check:
 * (a scratch counter that must start at zero is a checked buffer). */
#ifndef KVX_WORKER_H
#define KVX_WORKER_H

#include "host/case.h"

#define WORKER_EXIT_FAULT 3     /* exit status after a sticky fault */
#define WORKER_MAX_MODULES 256
#define WORKER_MAX_BASELINES 4
#define WORKER_MAX_DEVICES 64

/* A case's buffers start at this boundary (plus the buffer's `offset:`), the
 * same on every run and machine: where a few counters sit within the L2's
 * address interleave sets how many slices serve their atomics, up to 2x in
 * time on an H200 (docs/measurement.md, "Where buffers are placed"), and the
 * driver's own placement of a small allocation depends on what was allocated
 * before it. */
#define WORKER_BUF_ALIGN (2ULL << 20)

typedef struct DeviceInfo {
    int ordinal;                /* CUDA device number */
    char name[256];             /* "NVIDIA H200" */
    char uuid[48];              /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi */
    char pci_bus[32];           /* "0000:17:00.0" */
    int cc_major, cc_minor;
    int sm_count;
    int64_t l2_bytes;
    int64_t mem_bytes;          /* total global memory */
    int max_threads_block;
    int max_block[3];           /* per dimension */
    int max_grid[3];
    int64_t smem_block;         /* per block without opt-in (48 KiB), bytes */
    int64_t smem_block_optin;   /* per block with opt-in, static + dynamic, bytes */
    int64_t smem_sm;            /* per SM, bytes */
    int regs_sm, regs_block;    /* 32-bit registers */
    int max_threads_sm;
    int warp;
    int clock_khz;              /* SM clock, kHz */
    int mem_clock_khz;          /* peak memory clock, kHz */
    int bus_width;              /* memory bus, bits */
    /* Theoretical memory bandwidth, GB/s (1e9 bytes/s): two transfers per
     * memory clock (DDR, as the driver reports the HBM/GDDR clock) times the bus
     * width in bytes: 2 * mem_clock_khz * 1e3 * bus_width / 8 / 1e9. */
    double peak_gbs;
    int cluster_launch;         /* 1: thread-block clusters (sm_90+) */
    int driver_version;         /* cuDriverGetVersion: 13000 = CUDA 13.0 */
    char clocks_note[192];      /* a worker's: why it records no clocks (NVML); "" = it does */
} DeviceInfo;

/* One DeviceInfo frame (case.h's framing).  0 or -1. */
int worker_device_info_write(int fd, const DeviceInfo *d);
int worker_device_info_read(int fd, DeviceInfo *d);

/* The device as expression facts (sm_count, l2_bytes, ...; nominal = 0). */
void worker_device_info_facts(const DeviceInfo *d, DeviceFacts *f);

/* Peak memory bandwidth, GB/s: two transfers per memory clock times the bus
 * width in bytes (what pct_peak divides by; kvx-peers uses it too). */
double worker_device_peak_gbs(int mem_clock_khz, int bus_width_bits);

/* The worker process's body: load the driver, cuInit, retain the primary
 * context of `device`, send the start frame, then run cases until in_fd ends.
 * Returns the process exit status: 0 after EOF, 1 when it could not start (the
 * reason was sent).  Exits by itself with WORKER_EXIT_FAULT after a sticky
 * fault. */
int worker_main(int device, int in_fd, int out_fd);

/* `kvx __counters DEVICE FILE`: run each CaseDesc of cases_fd (case_write
 * frames) once, untimed and unchecked, for a profiler that wraps the
 * process (counters.c runs it under Nsight Compute): one kernel launch per
 * case, in order.  Stops at the first case that cannot run (its reason on
 * stderr): 0 when every case ran, else non-zero. */
int worker_counters_main(int device, int cases_fd);

/* Parent side: read a worker's start frame.  0 with d filled, or -1 with err:
 * the worker's own reason (no driver, no such device) or that it died first. */
int worker_start_read(int fd, DeviceInfo *d, KvxError *err);

/* Every GPU's DeviceInfo, gathered by a child process so that the caller never
 * initialises CUDA: fork + exec of `/proc/self/exe __probe FD`, whose main must
 * return worker_probe_main(FD).  (A plain fork is not enough: once a process
 * has run an NVRTC 13 compile, cuInit fails in its forked children with
 * CUDA_ERROR_NOT_INITIALIZED; workers are exec'ed for the same reason.)  Fills
 * at most max entries and *n with the number of GPUs.  0, or -1 with err (no
 * driver, no GPU, the probe died). */
int worker_probe(DeviceInfo *out, int max, int *n, KvxError *err);
/* The body of `__probe FD`: writes the answer to out_fd; the exit status. */
int worker_probe_main(int out_fd);

#endif
