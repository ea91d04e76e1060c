/* fake: fake devices and a fake worker for testing the supervisor without a GPU
 * (a test hook; fake.h says what it does and how it is switched on).
 *
 * Nothing here touches CUDA.  A fake worker is a real `kvx __worker` process on
 * the real pipes: only what happens to a case is made up, from a marker in the
 * case's source, so that every way a case can end reaches the parent the way a
 * real worker would deliver it (a result, a result then exit, death, silence). */
#include "fake.h"
#include "host/measure_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef enum { DO_OK, DO_HANG, DO_CRASH, DO_FAULT, DO_MISMATCH, DO_LOAD_ERROR } Behaviour;

/* Markers in source order of precedence; a source without one is ok. */
static const struct {
    const char *marker;
    Behaviour what;
} markers[] = {
    {"kvx-fake: hang", DO_HANG},
    {"kvx-fake: crash", DO_CRASH},
    {"kvx-fake: fault", DO_FAULT},
    {"kvx-fake: mismatch", DO_MISMATCH},
};

/* Log names, by Behaviour. */
static const char *const behaviour_names[] = {"ok", "hang", "crash", "fault", "mismatch",
                                              "load_error"};
_Static_assert(sizeof behaviour_names / sizeof behaviour_names[0] == DO_LOAD_ERROR + 1,
               "behaviour_names follows Behaviour");

int fake_gpus(void)
{
    static int warned;
    const char *v = getenv("KVX_FAKE_GPUS");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!errno && !*end && n >= 0 && n <= FAKE_MAX_GPUS)
        return (int)n;
    if (!warned++)
        fprintf(stderr, "kvx: KVX_FAKE_GPUS is '%s' (expected 0 .. %d); using the real driver\n", v,
                FAKE_MAX_GPUS);
    return 0;
}

int fake_device(int ordinal, DeviceInfo *d, KvxError *err)
{
    int n = fake_gpus();
    if (ordinal < 0 || ordinal >= n) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no CUDA device %d (KVX_FAKE_GPUS gives %d fake ones)",
                      ordinal, n);
        return -1;
    }
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    snprintf(d->name, sizeof d->name, "kvx fake device");
    snprintf(d->uuid, sizeof d->uuid, "FAKE-%04d", ordinal);
    snprintf(d->pci_bus, sizeof d->pci_bus, "0000:%02x:00.0", 0x10 + ordinal);
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sm_count = 132;
    d->l2_bytes = 60LL << 20;
    d->mem_bytes = 141LL << 30;
    d->max_threads_block = 1024;
    d->max_block[0] = 1024;
    d->max_block[1] = 1024;
    d->max_block[2] = 64;
    d->max_grid[0] = 0x7fffffff;
    d->max_grid[1] = 65535;
    d->max_grid[2] = 65535;
    d->smem_block = 48 << 10;
    d->smem_block_optin = 227 << 10;
    d->smem_sm = 228 << 10;
    d->regs_sm = 65536;
    d->regs_block = 65536;
    d->max_threads_sm = 2048;
    d->warp = 32;
    d->clock_khz = 1980000;
    d->mem_clock_khz = 3125000;
    d->bus_width = 6144;
    /* The formula worker.c applies to a real device's attributes: 4800 GB/s. */
    d->peak_gbs = 2.0 * d->mem_clock_khz * 1e3 * (d->bus_width / 8.0) / 1e9;
    d->cluster_launch = 1;
    d->driver_version = 13000;
    return 0;
}

int fake_probe(DeviceInfo *out, int max, int *n, KvxError *err)
{
    *n = fake_gpus();
    for (int i = 0; i < *n && i < max; i++)
        fake_device(i, &out[i], err);
    return 0;
}

/* What the case's source asks for. */
static Behaviour behaviour_of(const CaseDesc *c)
{
    char *dir = path_dir(c->cubin_path);
    char *path = path_join(dir, "source.cu");
    char *src = file_read(path, NULL);
    free(path);
    free(dir);
    if (!src)
        return DO_LOAD_ERROR;
    Behaviour b = DO_OK;
    for (size_t i = 0; i < sizeof markers / sizeof markers[0] && b == DO_OK; i++)
        if (strstr(src, markers[i].marker))
            b = markers[i].what;
    free(src);
    return b;
}

/* One line to $KVX_FAKE_LOG, in one write so that workers' lines stay whole. */
static void log_case(int device, const CaseDesc *c, Behaviour b)
{
    const char *path = getenv("KVX_FAKE_LOG");
    if (!path || !*path)
        return;
    char line[256];
    int len = snprintf(line, sizeof line, "%ld %s %d %s\n", (long)getpid(), c->workload_key, device,
                       behaviour_names[b]);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)len) != len)
        fprintf(stderr, "kvx fake worker: cannot append to %s\n", path);
    close(fd);
}

/* A kernel that never returns: silence until the parent's timeout kills us.
 * Not woken by EOF on in_fd, as a worker stuck in a synchronisation would not
 * be either; FAKE_HANG_S bounds a stray one. */
_Noreturn static void hang(void)
{
    struct timespec t = {FAKE_HANG_S, 0};
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
    _exit(0);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* A stable per-case time in 0.010 .. 0.020 ms, hashed from the compile cache
 * entry's name (the variant, wherever the cache is) and each buffer's count and
 * input key (the workload point). */
static double fake_median_ms(const CaseDesc *c)
{
    char *dir = path_dir(c->cubin_path);
    const char *entry = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    uint64_t h = fnv1a(1469598103934665603ULL, entry, strlen(entry));
    free(dir);
    for (int i = 0; i < c->nbufs; i++) {
        h = fnv1a(h, &c->bufs[i].count, sizeof c->bufs[i].count);
        h = fnv1a(h, c->bufs[i].input_key, strlen(c->bufs[i].input_key));
    }
    return 0.010 + (double)(h % 10001) * 1e-6;
}

/* Timings as the real sampler reports them; samples as measure_case clamps
 * min_samples, warm-ups as measure_warmups decides for a launch of the median
 * with nothing of the budget spent, and the clocks of a device at its maximum. */
static void fake_measure(const CaseDesc *c, CaseResult *res)
{
    const MeasureSettings *m = &c->measure;
    int mins, maxs;
    measure_bounds(m, &mins, &maxs);
    double t = fake_median_ms(c);
    res->samples = mins;
    res->median_ms = res->min_ms = res->max_ms = res->mean_ms = t;
    res->stdev_ms = 0;
    res->noise = mins > 1 ? 0 : NAN;
    res->t_measure_ms = mins * t;
    res->launch_ms = t;
    res->warmups = measure_warmups(m, t, t);
    res->launches = 1 + res->warmups + mins;
    res->gpu_ms = mins * t;
    res->sm_mhz = res->sm_max_mhz = FAKE_SM_MHZ;
    res->mem_mhz = res->mem_max_mhz = FAKE_MEM_MHZ;
}

/* Workload keys whose baseline this process ran: a differential check has
 * the baseline's output only where it ran, as in a real worker (oldest
 * forgotten past FAKE_BASELINES). */
#define FAKE_BASELINES 64
static char baselines[FAKE_BASELINES][65];
static int nbaselines;

/* 1 when c has a check against the baseline's output that this process
 * could not make (res skipped, with a real worker's words); else 0, the
 * baseline itself noted. */
static int baseline_missing(const CaseDesc *c, CaseResult *res)
{
    if (c->is_baseline) {
        snprintf(baselines[nbaselines++ % FAKE_BASELINES], 65, "%s", c->workload_key);
        return 0;
    }
    for (int k = 0; k < c->nchecks; k++) {
        if (strcmp(c->checks[k].ref, "baseline"))
            continue;
        for (int i = 0; i < nbaselines && i < FAKE_BASELINES; i++)
            if (!strcmp(baselines[i], c->workload_key))
                return 0;
        res->status = CASE_skipped;
        snprintf(res->detail, sizeof res->detail, "no baseline output for '%s' at this workload point (the "
                 "baseline variant has not run here, or it failed) (fake)", c->bufs[c->checks[k].buf].name);
        return 1;
    }
    return 0;
}

/* KVX_FAKE_NS_PER_BYTE: an ok case sleeps that long per byte of its buffers,
 * as sampling, so that a test sees busy workers and unequal groups. */
static void fake_sleep(const CaseDesc *c, CaseResult *res)
{
    const char *v = getenv("KVX_FAKE_NS_PER_BYTE");
    double ns = v ? atof(v) : 0, bytes = 0;
    for (int i = 0; i < c->nbufs; i++)
        bytes += (double)c->bufs[i].count * elem_types[c->bufs[i].type].size;
    double ms = ns > 0 ? ns * bytes / 1e6 : 0;
    if (ms <= 0)
        return;
    struct timespec t = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
    res->t_measure_ms += ms;
    res->t_step[CASE_STEP_samples] += ms;
}

/* The case's steps but send and recv, which the caller timed, go to stats
 * (and samples, for KVX_FAKE_NS_PER_BYTE's sleep): a fake worker has no
 * other. */
static void fake_case(int device, const CaseDesc *c, CaseResult *res, int out_fd)
{
    res->id = c->id;
    res->status = CASE_ok;
    res->median_ms = res->min_ms = res->max_ms = res->mean_ms = res->stdev_ms = NAN;
    res->noise = res->rel_err = NAN;
    Behaviour b = behaviour_of(c);
    log_case(device, c, b);
    if ((b == DO_OK || b == DO_MISMATCH) && baseline_missing(c, res))
        return;
    switch (b) {
    case DO_HANG:
        hang();
    case DO_CRASH:
        _exit(9);
    case DO_FAULT:
        res->status = CASE_fault;
        snprintf(res->detail, sizeof res->detail, "CUDA_ERROR_ILLEGAL_ADDRESS (fake)");
        result_write(out_fd, res);
        _exit(WORKER_EXIT_FAULT);
    case DO_LOAD_ERROR:
        res->status = CASE_load_error;
        snprintf(res->detail, sizeof res->detail, "cannot read the source next to %.900s (fake)",
                 c->cubin_path);
        return;
    case DO_MISMATCH:
        res->status = CASE_mismatch;
        snprintf(res->detail, sizeof res->detail,
                 "%s: 1 element differs from the reference (fake) (1 wrong); timed anyway",
                 c->nchecks > 0 ? c->bufs[c->checks[0].buf].name : "output");
        fake_measure(c, res);
        return;
    case DO_OK:
        fake_measure(c, res);
        fake_sleep(c, res);
        return;
    }
}

int fake_worker_run(int device, int in_fd, int out_fd)
{
    CaseDesc *c = xmalloc(sizeof *c);
    CaseResult res;
    double lap = now_ms(), send = 0;
    while (case_read(in_fd, c) == 0) {
        memset(&res, 0, sizeof res);
        double now = now_ms();
        res.t_step[CASE_STEP_send] = send;
        res.t_step[CASE_STEP_recv] = now - lap;
        fake_case(device, c, &res, out_fd);
        double done = now_ms();
        res.t_step[CASE_STEP_stats] = done - now - res.t_step[CASE_STEP_samples];
        if (result_write(out_fd, &res) < 0)
            break;
        lap = now_ms();
        send = lap - done;
    }
    free(c);
    return 0;
}
