/* fake: a fake CUDA driver, so that CI, which has no GPU, runs the real worker
 * (gpu/worker*.c) and the supervisor of `kvx run` (run/run.c) end to end:
 * worker start-up, buffer layout, resets, batching, the verified launch,
 * reference kernels, sticky faults, restarts, resume and shards.
 *
 * A TEST HOOK, NOT A FEATURE.  It is switched on by the environment variable
 * KVX_FAKE_GPUS=N (N in 1..16; unset or 0: the real driver).  Then
 * cudadl_load() fills the `CudaApi cu` table with the host implementations of
 * fake.c instead of libcuda's, and nvml.c takes fake_nvml.c's NVML; nothing
 * else knows but worker_main's call of fake_log_case (KVX_FAKE_LOG).
 * worker_probe() execs its probe and worker_main() runs its cases as on a
 * GPU: only the driver underneath is made up.
 *
 * The fake device: name "kvx fake device", uuid GPU-6b767866-0000-0000-0000-
 * 00000000000D (D the ordinal; "kvxf" in its first bytes), sm_90, 132 SMs, 60 MiB
 * L2, 141 GiB, 4800 GB/s peak (3125 MHz x 6144-bit), driver 13000, the usual
 * sm_90 limits; NVML clocks FAKE_SM_MHZ and FAKE_MEM_MHZ, at their maximum.
 *
 * The driver (fake.c):
 *   - device memory is host memory (a CUdeviceptr is the block's address);
 *     every access a stand-in makes is checked against the live allocations,
 *     and one outside them is a sticky CUDA_ERROR_ILLEGAL_ADDRESS;
 *   - the one stream runs its work as it is enqueued; events are stamps of a
 *     virtual clock that a memset or copy advances by its bytes at the peak
 *     bandwidth and a kernel by a deterministic time in 0.010 .. 0.020 ms,
 *     hashed from the module image, the entry point, the geometry, the scalar
 *     arguments and the first bytes each pointer argument points at (the same
 *     case gives the same time in every run and every worker process);
 *   - kernels are host stand-ins chosen by entry point name (fake_kernels.c):
 *     they compute the real outputs, so the worker's own check says ok.  An
 *     entry point without a stand-in fails its launch with
 *     CUDA_ERROR_NOT_SUPPORTED (a launch_error row, never a silent ok).  A
 *     launch on the same inputs (unwritten since) and the same output
 *     contents as its function's last one is replayed from that one's
 *     outputs: a case's samples do not each recompute 2^26 elements;
 *   - a module's behaviour comes from a `__device__` variable in it (an ELF
 *     symbol of the cubin) named kvx_fake_<behaviour>:
 *       kvx_fake_hang      the next synchronisation never returns (it gives
 *                          up after FAKE_HANG_S, so that a stray worker cannot
 *                          outlive a CI job): the parent's timeout kills it
 *       kvx_fake_crash     the launch ends the process (status 9, no result)
 *       kvx_fake_fault     the launch faults: every call after it that needs
 *                          the context (the case's next cuEventRecord, or a
 *                          synchronisation) returns the sticky
 *                          CUDA_ERROR_ILLEGAL_ADDRESS
 *       kvx_fake_mismatch  the stand-in writes one wrong value
 *       (none)             the stand-in's outputs
 *     The error strings of the fake driver end in "(fake)".
 *
 * Environment (read by each worker process):
 *   KVX_FAKE_NS_PER_BYTE=X  a launch takes X ns of wall time per byte of the
 *                           allocations its pointer arguments point into,
 *                           spent at the next synchronisation (as waiting for
 *                           a GPU), so that a test sees busy workers;
 *   KVX_FAKE_MEM_FREE=B     the bytes allocations may take (default, and
 *                           always the reported total, 141 GiB; as when other
 *                           processes hold the rest): one past them fails
 *                           with CUDA_ERROR_OUT_OF_MEMORY (fault injection);
 *   KVX_FAKE_FAULT_LAUNCH=N the N-th kernel launch of each worker process
 *                           (every cuLaunchKernel/Ex counts: flushes and
 *                           references too) faults as kvx_fake_fault does
 *                           (fault injection: a sticky error mid-group);
 *   KVX_FAKE_LOG=FILE       the worker appends one line per case as it starts
 *                           (one write, O_APPEND: lines of several workers do
 *                           not interleave):
 *                               <pid> <workload_key> <device> <behaviour>
 *                           behaviour being ok, hang, crash, fault, mismatch
 *                           (the case's module's) or load_error (no cubin);
 *                           so a test can see which worker process, on which
 *                           device, got which workload group;
 *   KVX_FAKE_FILL_LOG=FILE  each kvx_fill launch (an input generated on the
 *                           device) appends "kvx_fill <type> <count>",
 *                           each fingerprint of an order-free check
 *                           (kvx_mset_hash, both sides) "kvx_mset <type>
 *                           <count>", and each sort of one (kvx_sort_key,
 *                           elements to keys) "kvx_sort <type> <count>", so a
 *                           test sees what took the device path;
 *   KVX_FAKE_CALL_LOG=FILE  the driver appends one line per module load and
 *                           unload, kernel launch (replays too), memset and
 *                           device-to-device copy, in the order the worker
 *                           made them:
 *                               <pid> load <module>
 *                               <pid> unload <module>
 *                               <pid> launch <module> <entry point>
 *                               <pid> memset<8|16|32> <value, hex> <elements>
 *                               <pid> dtod <bytes>
 *                           <module> being the hash of the image (16 hex
 *                           digits: every load of one cubin gives the same),
 *                           so a test sees the worker's module cache evict,
 *                           the width of each output reset and the copies
 *                           a baseline's outputs take. */
#ifndef KVX_FAKE_H
#define KVX_FAKE_H

#include "worker.h"
#include "cudadl.h"

#define FAKE_MAX_GPUS 16
#define FAKE_HANG_S 300         /* a hung fake synchronisation gives up after this */
#define FAKE_SM_MHZ 1980        /* the clocks fake NVML reports, at their maximum */
#define FAKE_MEM_MHZ 3201

/* KVX_FAKE_GPUS as a count: 1..FAKE_MAX_GPUS, or 0 (unset, "0", or a value
 * that is not such a number: then a warning on stderr, once per process). */
int fake_gpus(void);

/* Fill api with the fake driver's entry points (driver 13000, loaded). */
void fake_cuda_api(CudaApi *api);

/* The fake NVML's entry point of that name (nvml.c's subset), or NULL
 * (fake_nvml.c). */
void *fake_nvml_sym(const char *name);

/* KVX_FAKE_LOG's line for case c, starting on device (nothing when unset). */
void fake_log_case(int device, const CaseDesc *c);

/* ---- between fake.c and its stand-ins (fake_kernels.c) ---------------------- */

/* One launch as a stand-in sees it.  params as cuLaunchKernel got them. */
typedef struct FakeLaunch {
    uint32_t grid[3], block[3];
    void **params;
    int mismatch;           /* kvx_fake_mismatch: write one wrong value */
    int counter_bytes;      /* 8 where the module's PTX adds or stores 64-bit integers in
                             * global memory (the cubin carries its PTX,
                             * .nv_debug_ptx_txt, as kvx compiles with line info),
                             * else 4 */
} FakeLaunch;

/* A kernel's host stand-in: its entry point, its parameters ('p' a pointer
 * the kernel only reads, 'o' one it writes, 'q' a 64-bit, 'i' a 32-bit
 * integer), and its body: 0, or -1 when it touched memory outside every
 * allocation (a fault).  A launch whose inputs and outputs are as at the
 * function's last launch is replayed, not run again (fake.c, Memo). */
typedef struct FakeKernel {
    const char *name;
    const char *params;
    int (*run)(const FakeLaunch *l);
} FakeKernel;

/* The stand-in for entry point name, or NULL. */
const FakeKernel *fake_kernel_find(const char *name);

/* The host address of device bytes [p, p + bytes), inside one allocation;
 * NULL when they are not (an illegal address). */
void *fake_mem(CUdeviceptr p, uint64_t bytes);

#endif
