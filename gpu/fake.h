/* fake: a stand-in GPU so that CI, which has none, can test the supervisor of
 * `kvx run` (run/run.c): worker start-up, hand-out of workload groups,
 * timeouts, crashes, sticky faults, restarts, resume and shards.
 *
 * A TEST HOOK, NOT A FEATURE.  It is switched on by the environment variable
 * KVX_FAKE_GPUS=N (N in 1..16; unset or 0: the real driver).  Then
 *   - worker_probe() answers N fake devices without forking or touching CUDA
 *     (every verb that probes sees them: run, compile's arch, doctor);
 *   - `kvx __worker D` (worker_main) sends the ordinary start frame with fake
 *     device D's DeviceInfo and runs nothing on any GPU.  Everything upstream
 *     of the worker is real: planning, NVRTC into the compile cache, case
 *     resolution from the PTX, the pipes, SQLite.
 *
 * The fake device: name "kvx fake device", uuid "FAKE-000D", sm_90, 132 SMs,
 * 60 MiB L2, 141 GiB, 4800 GB/s peak (3125 MHz x 6144-bit), driver 13000, the
 * usual sm_90 limits.
 *
 * A fake worker decides what each case does from the source it was compiled
 * from, `dirname(cubin_path)/source.cu` (the compile cache entry), by a marker
 * comment a template emits:
 *   kvx-fake: hang      never answers (sleeps; the parent's timeout kills it;
 *                       it gives up by itself after FAKE_HANG_S, so that a
 *                       stray one cannot outlive a CI job)
 *   kvx-fake: crash     exits with status 9 and no result
 *   kvx-fake: fault     status fault, detail "CUDA_ERROR_ILLEGAL_ADDRESS
 *                       (fake)", then exits with WORKER_EXIT_FAULT, as a
 *                       worker does after a sticky error
 *   kvx-fake: mismatch  status mismatch, timed anyway
 *   (none)              ok
 * A source it cannot read is a load_error.  Checks, buffers and launch
 * geometry are not looked at: the fake ignores the spec's check.  An ok or
 * mismatch case gets samples = the clamped min_samples (as the real sampler
 * stops there when the noise target is met), min = median = max = a
 * deterministic time in 0.010 .. 0.020 ms hashed from the name of the cubin's
 * cache entry and the buffers' counts and input keys (the same case gives the
 * same figure in every run, whatever the cache directory), and
 * t_measure_ms = samples x median; its warm-ups are what measure_warmups decides
 * for a launch of that median, its launches 1 + warm-ups + samples, and its
 * clocks FAKE_SM_MHZ and FAKE_MEM_MHZ, both at their maximum (not throttled).
 * A fake worker's profile steps are send, recv (timed as a real worker times
 * them) and stats (all the rest).
 *
 * Two things a real worker does are kept: a check against the baseline's
 * output (a differential spec) is skipped, "no baseline output for ...
 * (fake)", on a worker process that has not run that workload point's
 * baseline; and with KVX_FAKE_NS_PER_BYTE=X an ok case sleeps X ns per byte
 * of its buffers, counted as its samples step and in t_measure_ms, so that a
 * test of the hand-out sees busy workers and groups of unequal cost.
 *
 * When KVX_FAKE_LOG names a file, each case appends one line as it starts
 * (one write, O_APPEND: lines of several workers do not interleave):
 *     <pid> <workload_key> <device> <behaviour>
 * behaviour being ok, hang, crash, fault, mismatch or load_error; so a test
 * can see which worker process, on which device, got which workload group. */
#ifndef KVX_FAKE_H
#define KVX_FAKE_H

#include "worker.h"

#define FAKE_MAX_GPUS 16
#define FAKE_HANG_S 300         /* a hung fake worker gives up after this */
#define FAKE_SM_MHZ 1980        /* the clocks a fake case reports, at their maximum */
#define FAKE_MEM_MHZ 3201

/* KVX_FAKE_GPUS as a count: 1..FAKE_MAX_GPUS, or 0 (unset, "0", or a value
 * that is not such a number: then a warning on stderr, once per process). */
int fake_gpus(void);

/* Fake device `ordinal`'s DeviceInfo.  0, or -1 with err when there is no
 * such fake device. */
int fake_device(int ordinal, DeviceInfo *d, KvxError *err);

/* worker_probe's contract with fake devices: at most max entries filled, *n
 * = fake_gpus().  Always 0 (err is untouched). */
int fake_probe(DeviceInfo *out, int max, int *n, KvxError *err);

/* The case loop of a fake worker for `device`, after the caller has sent the
 * start frame: reads CaseDesc from in_fd and answers on out_fd until in_fd
 * ends or a result cannot be written (the parent is gone), as worker_main
 * does.  Returns the exit status, 0; hang, crash and fault do not return. */
int fake_worker_run(int device, int in_fd, int out_fd);

#endif
