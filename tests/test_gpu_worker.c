/* gpu: the worker process on a real GPU.  Kernels are compiled here with NVRTC
 * for the GPU's own arch, written as cubins to a temporary directory, and run by
 * worker_main in a child (this binary exec'ed as `__worker DEVICE`, stdin and
 * stdout its pipes), as kvx's supervisor runs it.
 *
 * Checked: a correct kernel is ok and sampled; a wrong one is a mismatch (and
 * still timed); differential checks against a stored baseline; clusters and
 * opt-in shared memory; limits give skipped; a missing kernel is a load_error;
 * an illegal address, __trap() and a misaligned 16-byte load are faults that
 * end the worker with WORKER_EXIT_FAULT; a hang is killed by the test, as the
 * supervisor would; a kernel slower than the budget is launched once (its
 * verified launch is its sample); kept output allocations are reset for every case.
 * Without a GPU the test exits 77 with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <nvrtc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/cudadl.h"
#include "gpu/worker.h"

static DeviceInfo gpu;
static char tmpdir[256];

static const char kernels_src[] =
    "extern \"C\" __global__ void count_below(const int *in, unsigned long long n, int thr,\n"
    "                                        unsigned int *out)\n"
    "{\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n && in[i] < thr) atomicAdd(out, 1u);\n"
    "}\n"
    /* wrong on purpose: <= instead of < */
    "extern \"C\" __global__ void count_below_wrong(const int *in, unsigned long long n, int thr,\n"
    "                                              unsigned int *out)\n"
    "{\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n && in[i] <= thr) atomicAdd(out, 1u);\n"
    "}\n"
    /* stages through dynamic shared memory, to need the opt-in past 48 KiB */
    "extern \"C\" __global__ void count_below_smem(const int *in, unsigned long long n, int thr,\n"
    "                                             unsigned int *out)\n"
    "{\n"
    "    extern __shared__ int stage[];\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    stage[threadIdx.x * 64] = i < n ? in[i] : thr;\n"
    "    __syncthreads();\n"
    "    if (stage[threadIdx.x * 64] < thr) atomicAdd(out, 1u);\n"
    "}\n"
    /* reads n16 16-byte words grid-stride: bandwidth-bound; out stays 0 */
    "extern \"C\" __global__ void read16(const uint4 *in, unsigned long long n16, unsigned int *out)\n"
    "{\n"
    "    unsigned s = 0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n16;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        uint4 v = in[i];\n"
    "        s += v.x ^ v.y ^ v.z ^ v.w;\n"
    "    }\n"
    "    if (s == 0x9e3779b9u) atomicAdd(out, 1u);\n"
    "}\n"
    "extern \"C\" __global__ void sum_f32(const float *in, unsigned long long n, float *out)\n"
    "{\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) atomicAdd(out, in[i]);\n"
    "}\n"
    /* the address comes in as an argument so that the compiler cannot see it */
    "extern \"C\" __global__ void write_at(unsigned long long addr, unsigned int *out)\n"
    "{\n"
    "    *(volatile int *)addr = 1;\n"
    "    out[0] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void spin(const int *flag, unsigned int *out)\n"
    "{\n"
    "    while (*(volatile const int *)flag == 0) { }\n"
    "    out[0] = 1;\n"
    "}\n"
    /* busy for ns nanoseconds of the GPU's global timer, then out[0] = 1 */
    "extern \"C\" __global__ void sleep_ns(unsigned long long ns, unsigned int *out)\n"
    "{\n"
    "    unsigned long long t0, t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "    out[0] = 1;\n"
    "}\n"
    /* adds one to every element: what it finds there is what the reset left */
    "extern \"C\" __global__ void add_one(unsigned long long n, unsigned int *out)\n"
    "{\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] += 1u;\n"
    "}\n"
    "extern \"C\" __global__ void trap(unsigned int *out)\n"
    "{\n"
    "    if (threadIdx.x == 0) __trap();\n"
    "    out[0] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void load16(const int *in, float *out)\n"
    "{\n"
    "    const float4 *p = (const float4 *)(in + 1);   /* 4 bytes past 16-byte alignment */\n"
    "    float4 v = *p;\n"
    "    out[0] = v.x + v.y + v.z + v.w;\n"
    "}\n";

static char cubin_path[512];

/* Compile kernels_src for the GPU's arch and write the cubin.  0, or -1 with
 * the reason printed. */
static int compile_kernels(void)
{
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", gpu.cc_major, gpu.cc_minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, kernels_src, "kernels.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return -1;
    nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
    size_t n = 0;
    if (rc != NVRTC_SUCCESS) {
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n + 1);
        nvrtcGetProgramLog(prog, log);
        printf("NVRTC (%s): %s\n%s\n", arch, nvrtcGetErrorString(rc), log);
        free(log);
        nvrtcDestroyProgram(&prog);
        return -1;
    }
    nvrtcGetCUBINSize(prog, &n);
    char *cubin = malloc(n);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);
    snprintf(cubin_path, sizeof cubin_path, "%s/kernels.cubin", tmpdir);
    int ok = file_write_atomic(cubin_path, cubin, n) == 0;
    free(cubin);
    return ok ? 0 : -1;
}

/* ---- a worker in a child process ------------------------------------------ */

typedef struct Child {
    pid_t pid;
    int to, from;
    DeviceInfo info;
} Child;

static void child_start(Child *w)
{
    int a[2], b[2];
    assert_int_equal(pipe(a), 0);
    assert_int_equal(pipe(b), 0);
    fflush(NULL);
    w->pid = fork();
    assert_true(w->pid >= 0);
    if (w->pid == 0) {
        /* exec'ed as kvx's supervisor does: this process ran NVRTC, after which
         * a merely forked child cannot initialise CUDA */
        char dev[16];
        snprintf(dev, sizeof dev, "%d", gpu.ordinal);
        dup2(a[0], 0);
        dup2(b[1], 1);
        close(a[0]);
        close(a[1]);
        close(b[0]);
        close(b[1]);
        execl("/proc/self/exe", "test_gpu_worker", "__worker", dev, (char *)NULL);
        _exit(127);
    }
    close(a[0]);
    close(b[1]);
    w->to = a[1];
    w->from = b[0];
    KvxError err = {0};
    if (worker_start_read(w->from, &w->info, &err) < 0)
        fail_msg("worker did not start: %s", err.msg);
    assert_string_equal(w->info.uuid, gpu.uuid);
}

/* Close the pipes and reap; the exit status, or 128 + signal. */
static int child_stop(Child *w)
{
    close(w->to);
    close(w->from);
    int st = 0;
    assert_int_equal(waitpid(w->pid, &st, 0), w->pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Send a case and wait up to timeout_ms for its result: 0, or -1 when none came. */
static int exchange(Child *w, const CaseDesc *c, CaseResult *r, int timeout_ms)
{
    assert_int_equal(case_write(w->to, c), 0);
    struct pollfd p = {.fd = w->from, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return -1;
    return case_result_read(w->from, r);
}

static CaseResult run_case_ok(Child *w, const CaseDesc *c)
{
    CaseResult r;
    if (exchange(w, c, &r, 120000) < 0)
        fail_msg("no result for case %lld", (long long)c->id);
    printf("  case %lld %s: %s  median %.4f ms (%d samples, noise %.3f) %s\n", (long long)c->id,
           c->kernel, case_status_names[r.status], r.median_ms, r.samples, r.noise, r.detail);
    return r;
}

/* ---- cases ------------------------------------------------------------------ */

static void case_init(CaseDesc *c, int64_t id, const char *kernel)
{
    memset(c, 0, sizeof *c);
    c->id = id;
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s", cubin_path);
    snprintf(c->kernel, sizeof c->kernel, "%s", kernel);
    for (int d = 0; d < 3; d++)
        c->grid[d] = c->block[d] = c->cluster[d] = 1;
    c->measure.warmup = 2;
    c->measure.min_samples = 5;
    c->measure.max_samples = 30;
    c->measure.noise = 0.5;
    c->measure.budget_ms = 5000;
    c->measure.flush_l2 = MEASURE_FLUSH_READ;
    c->measure.timeout_s = 30;
    c->measure.seed = 1;
    c->measure.warmup_ms = 10;
    c->measure.sample_batch = 8;
}

static int buf_add(CaseDesc *c, const char *name, ElemTypeId t, uint64_t count, InitParams init,
                   int checked)
{
    CaseBuf *b = &c->bufs[c->nbufs];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->type = t;
    b->count = count;
    b->init = init;
    b->checked = checked;
    inputs_key(&elem_types[t], count, &init, b->input_key);
    return c->nbufs++;
}

static void arg_buf(CaseDesc *c, int buf)
{
    c->args[c->nargs].buf = buf;
    c->args[c->nargs].size = c->args[c->nargs].align = 8;
    c->nargs++;
}

static void arg_scalar(CaseDesc *c, uint64_t v, int size)
{
    CaseArg *a = &c->args[c->nargs++];
    a->buf = -1;
    a->size = a->align = size;
    for (int k = 0; k < size; k++)
        a->bytes[k] = (unsigned char)(v >> (8 * k));
}

static InitParams init_const(double v)
{
    InitParams p = {.kind = INIT_CONST, .value = v, .seed = 7};
    return p;
}

static InitParams init_uniform(double lo, double hi)
{
    InitParams p = {.kind = INIT_UNIFORM, .lo = lo, .hi = hi, .seed = 11};
    return p;
}

enum { N = 1 << 20, THR = 500 };

/* count_below-style case: in (i32 uniform 0..999), n, thr, out (u32, checked). */
static void count_case(CaseDesc *c, int64_t id, const char *kernel, const char *ref)
{
    case_init(c, id, kernel);
    int in = buf_add(c, "in", ET_I32, N, init_uniform(0, 999), 0);
    int out = buf_add(c, "out", ET_U32, 1, init_const(0), 1);
    arg_buf(c, in);
    arg_scalar(c, N, 8);
    arg_scalar(c, THR, 4);
    arg_buf(c, out);
    c->grid[0] = N / 256;
    c->block[0] = 256;
    CaseCheck *k = &c->checks[c->nchecks++];
    k->buf = out;
    k->rtol = -1;
    snprintf(k->ref, sizeof k->ref, "%s", ref);
    if (strcmp(ref, "count_below") == 0) {
        k->nargs = 2;
        k->args[0].is_buf = 1;
        k->args[0].count = N;
        k->argbuf[0] = in;
        k->args[1].v = (Value){.kind = VAL_INT, .i = THR};
        k->argbuf[1] = -1;
    }
    snprintf(c->workload_key, sizeof c->workload_key, "count-n%d-thr%d", N, THR);
}

/* A one-buffer kernel(args..., out) case with the output checked against 1. */
static void fault_case(CaseDesc *c, int64_t id, const char *kernel)
{
    case_init(c, id, kernel);
    c->block[0] = 32;
}

static void test_ok_and_mismatch(void **state)
{
    (void)state;
    Child w;
    child_start(&w);
    CaseDesc *c = malloc(sizeof *c);

    count_case(c, 1, "count_below", "count_below");
    CaseResult r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    assert_true(r.samples >= c->measure.min_samples && r.samples <= c->measure.max_samples);
    assert_true(r.min_ms > 0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
    assert_true(r.mean_ms > 0 && r.stdev_ms >= 0 && r.noise >= 0);
    assert_true(isnan(r.rel_err)); /* integer check */
    assert_true(r.t_verify_ms > 0 && r.t_measure_ms > 0);

    /* the same input one element past alignment; no L2 flush */
    c->id = 2;
    c->bufs[0].offset = 1;
    c->measure.flush_l2 = MEASURE_FLUSH_OFF;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);

    count_case(c, 3, "count_below_wrong", "count_below");
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_mismatch);
    assert_non_null(strstr(r.detail, "out"));
    assert_true(r.samples >= c->measure.min_samples); /* timed anyway */

    /* float sum: ok, with its relative error reported */
    case_init(c, 4, "sum_f32");
    int in = buf_add(c, "x", ET_F32, 1 << 16, init_uniform(0, 1), 0);
    int out = buf_add(c, "s", ET_F32, 1, init_const(0), 1);
    arg_buf(c, in);
    arg_scalar(c, 1 << 16, 8);
    arg_buf(c, out);
    c->grid[0] = (1 << 16) / 256;
    c->block[0] = 256;
    c->checks[0].buf = out;
    c->checks[0].rtol = 1e-4;
    snprintf(c->checks[0].ref, sizeof c->checks[0].ref, "sum");
    c->checks[0].nargs = 1;
    c->checks[0].args[0].is_buf = 1;
    c->checks[0].args[0].count = 1 << 16;
    c->checks[0].argbuf[0] = in;
    c->nchecks = 1;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    assert_true(isfinite(r.rel_err) && r.rel_err < 1e-4);

    /* a missing kernel and a missing cubin are load errors; the worker goes on */
    count_case(c, 5, "no_such_kernel", "count_below");
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_load_error);
    assert_non_null(strstr(r.detail, "no_such_kernel"));
    count_case(c, 6, "count_below", "count_below");
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s/missing.cubin", tmpdir);
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_load_error);

    free(c);
    assert_int_equal(child_stop(&w), 0);
}

/* The L2 flush empties L2 of the case's data: a 32 MB input (inside the
 * H200's 60 MiB L2) read by a bandwidth-bound kernel with no flush comes
 * from L2 after the first sample; with either flush it comes from memory,
 * which takes longer.  The write flush leaves L2 full of dirty lines that
 * the timed kernel writes back as it evicts them: slower than the read flush. */
static void test_flush_evicts(void **state)
{
    (void)state;
    enum { BIG = 32 << 20 };    /* bytes */
    if (gpu.l2_bytes <= (int64_t)BIG) {
        printf("  skipped: L2 of %lld bytes is too small for a 32 MB resident input\n",
               (long long)gpu.l2_bytes);
        return;
    }
    Child w;
    child_start(&w);
    CaseDesc *c = malloc(sizeof *c);
    static const int modes[] = {MEASURE_FLUSH_OFF, MEASURE_FLUSH_READ, MEASURE_FLUSH_WRITE};
    double median[3];
    for (int m = 0; m < 3; m++) {
        case_init(c, 100 + m, "read16");
        int in = buf_add(c, "in", ET_U32, BIG / 4, init_uniform(0, 999), 0);
        int out = buf_add(c, "out", ET_U32, 1, init_const(0), 1);
        arg_buf(c, in);
        arg_scalar(c, BIG / 16, 8);
        arg_buf(c, out);
        c->grid[0] = (unsigned)(gpu.sm_count > 0 ? 8 * gpu.sm_count : 1024);
        c->block[0] = 256;
        snprintf(c->workload_key, sizeof c->workload_key, "flush-%d", BIG);
        c->measure.flush_l2 = modes[m];
        c->measure.min_samples = 20;
        c->measure.max_samples = 50;
        CaseResult r = run_case_ok(&w, c);
        assert_int_equal(r.status, CASE_ok);
        median[m] = r.median_ms;
    }
    printf("  32 MB read: no flush %.4f ms, read flush %.4f ms, write flush %.4f ms\n", median[0],
           median[1], median[2]);
    assert_true(median[1] > 1.2 * median[0]);
    assert_true(median[2] > 1.2 * median[0]);
    assert_true(median[2] > 1.1 * median[1]);
    free(c);
    child_stop(&w);
}

static void test_baseline_and_limits(void **state)
{
    (void)state;
    Child w;
    child_start(&w);
    CaseDesc *c = malloc(sizeof *c);

    /* differential: nothing stored yet -> skipped; then the baseline, a match, a mismatch */
    count_case(c, 10, "count_below", "baseline");
    CaseResult r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_skipped);
    c->is_baseline = 1;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    count_case(c, 11, "count_below_smem", "baseline");
    c->smem = 256 * 64 * 4; /* 64 KiB: past the 48 KiB default */
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    count_case(c, 12, "count_below_wrong", "baseline");
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_mismatch);

    /* limits */
    count_case(c, 13, "count_below", "count_below");
    c->block[0] = 2048;
    c->grid[0] = N / 2048;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_skipped);
    assert_non_null(strstr(r.detail, "2048"));
    count_case(c, 14, "count_below_smem", "count_below");
    c->smem = (uint32_t)gpu.smem_block_optin + 1024;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_skipped);
    assert_non_null(strstr(r.detail, "shared memory"));

    /* clusters, where the GPU has them */
    count_case(c, 15, "count_below", "count_below");
    c->cluster[0] = 2;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, gpu.cluster_launch ? CASE_ok : CASE_skipped);
    if (gpu.cluster_launch) {
        c->id = 16;
        c->cluster[0] = 3; /* 4096 blocks are not a multiple of 3 */
        r = run_case_ok(&w, c);
        assert_int_equal(r.status, CASE_skipped);
    }

    /* still alive after all that */
    count_case(c, 17, "count_below", "count_below");
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    free(c);
    assert_int_equal(child_stop(&w), 0);
}

/* Run one faulting case in a fresh worker: the result says fault and names the
 * error, and the worker exits with WORKER_EXIT_FAULT. */
static void expect_fault(CaseDesc *c, const char *error)
{
    Child w;
    child_start(&w);
    CaseResult r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_fault);
    if (error && !strstr(r.detail, error))
        fail_msg("expected %s in \"%s\"", error, r.detail);
    assert_int_equal(child_stop(&w), WORKER_EXIT_FAULT);
}

static void test_illegal_address(void **state)
{
    (void)state;
    CaseDesc *c = malloc(sizeof *c);
    fault_case(c, 20, "write_at");
    arg_scalar(c, 0x10, 8);
    arg_buf(c, buf_add(c, "out", ET_U32, 1, init_const(0), 1));
    c->nchecks = 1;
    c->checks[0].buf = 0;
    c->checks[0].constant = (Value){.kind = VAL_INT, .i = 1};
    expect_fault(c, "CUDA_ERROR_ILLEGAL_ADDRESS");
    free(c);
}

static void test_trap(void **state)
{
    (void)state;
    CaseDesc *c = malloc(sizeof *c);
    fault_case(c, 21, "trap");
    arg_buf(c, buf_add(c, "out", ET_U32, 1, init_const(0), 1));
    expect_fault(c, NULL); /* the driver's name for a trap has varied */
    free(c);
}

static void test_misaligned(void **state)
{
    (void)state;
    CaseDesc *c = malloc(sizeof *c);
    fault_case(c, 22, "load16");
    arg_buf(c, buf_add(c, "in", ET_I32, 64, init_const(1), 0));
    arg_buf(c, buf_add(c, "out", ET_F32, 1, init_const(0), 1));
    expect_fault(c, "CUDA_ERROR_MISALIGNED_ADDRESS");
    free(c);
}

static void test_hang_is_killed(void **state)
{
    (void)state;
    CaseDesc *c = malloc(sizeof *c);
    fault_case(c, 23, "spin");
    arg_buf(c, buf_add(c, "flag", ET_I32, 1, init_const(0), 0));
    arg_buf(c, buf_add(c, "out", ET_U32, 1, init_const(0), 1));
    Child w;
    child_start(&w);
    CaseResult r;
    assert_int_equal(exchange(&w, c, &r, 3000), -1);
    kill(w.pid, SIGKILL);
    assert_int_equal(child_stop(&w), 128 + SIGKILL);
    free(c);
}

/* A kernel slower than the budget is launched once: its verified launch,
 * timed by events, is its one sample (samples = 1, no warm-up, the spread
 * unknown). */
static void test_slow_kernel_launches(void **state)
{
    (void)state;
    enum { NS = 300 * 1000 * 1000 }; /* 300 ms */
    CaseDesc *c = malloc(sizeof *c);
    fault_case(c, 30, "sleep_ns");
    arg_scalar(c, NS, 8);
    arg_buf(c, buf_add(c, "out", ET_U32, 1, init_const(0), 1));
    c->nchecks = 1;
    c->checks[0].buf = 0;
    c->checks[0].constant = (Value){.kind = VAL_INT, .i = 1};
    c->measure.warmup = 3;
    c->measure.budget_ms = 200;
    Child w;
    child_start(&w);
    CaseResult r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    assert_int_equal(r.samples, 1);
    assert_int_equal(r.warmups, 0);
    assert_int_equal(r.launches, 1);
    assert_true(isnan(r.noise));
    assert_true(r.launch_ms >= 290 && r.median_ms == r.launch_ms && r.gpu_ms == r.launch_ms);
    /* Under a budget of 2 s it warms up once (warmup_ms 10 < 300 ms) and
     * samples until the budget: 1 + 1 + a few launches, not 3 warm-ups. */
    c->id = 31;
    c->measure.budget_ms = 2000;
    r = run_case_ok(&w, c);
    assert_int_equal(r.status, CASE_ok);
    assert_int_equal(r.warmups, 1);
    assert_true(r.samples >= 1 && r.samples <= 6);
    assert_true(r.t_measure_ms < 2500);
    free(c);
    assert_int_equal(child_stop(&w), 0);
}

/* Output allocations are kept from case to case: every case must still see
 * its own init before every launch.  add_one finds what the reset left, so a
 * leak from the case before (another init, or a value its kernel wrote)
 * shows as a mismatch. */
static void test_outputs_reused_reset(void **state)
{
    (void)state;
    enum { M = 4096 };
    CaseDesc *c = malloc(sizeof *c);
    Child w;
    child_start(&w);
    const double inits[] = {0, 5, 0, 41, 0};
    for (int k = 0; k < 5; k++) {
        case_init(c, 40 + k, "add_one");
        arg_scalar(c, M, 8);
        arg_buf(c, buf_add(c, "out", ET_U32, M, init_const(inits[k]), 1));
        c->grid[0] = M / 256;
        c->block[0] = 256;
        c->nchecks = 1;
        c->checks[0].buf = 0;
        c->checks[0].rtol = -1;
        c->checks[0].constant = (Value){.kind = VAL_INT, .i = (int64_t)inits[k] + 1};
        CaseResult r = run_case_ok(&w, c);
        if (r.status != CASE_ok)
            fail_msg("case %d (init %g): %s %s", k, inits[k], case_status_names[r.status], r.detail);
        /* launched past the stop inside a batch: at most one batch's worth */
        assert_true(r.launches >= 1 + r.warmups + r.samples &&
                    r.launches <= 1 + r.warmups + r.samples + c->measure.sample_batch);
    }
    /* and between the count kernel's output and add_one's, at one size */
    count_case(c, 50, "count_below", "count_below");
    assert_int_equal(run_case_ok(&w, c).status, CASE_ok);
    free(c);
    assert_int_equal(child_stop(&w), 0);
}

static void test_probe(void **state)
{
    (void)state;
    DeviceInfo all[WORKER_MAX_DEVICES];
    int n = 0;
    KvxError err = {0};
    assert_int_equal(worker_probe(all, WORKER_MAX_DEVICES, &n, &err), 0);
    assert_true(n >= 1);
    assert_int_equal(strncmp(all[0].uuid, "GPU-", 4), 0);
    assert_int_equal(strlen(all[0].uuid), 40);
    assert_true(all[0].sm_count > 0 && all[0].warp == 32 && all[0].l2_bytes > 0);
    assert_true(all[0].smem_block_optin >= all[0].smem_block);
    assert_true(all[0].driver_version >= 12000);
    DeviceFacts f;
    worker_device_info_facts(&all[0], &f);
    assert_int_equal(f.cc, all[0].cc_major * 10 + all[0].cc_minor);
    printf("  %s %s sm_%d%d, %d SMs, L2 %lld B, %.0f GB/s (mem %d kHz x %d bits), driver %d\n",
           all[0].name, all[0].uuid, all[0].cc_major, all[0].cc_minor, all[0].sm_count,
           (long long)all[0].l2_bytes, all[0].peak_gbs, all[0].mem_clock_khz, all[0].bus_width,
           all[0].driver_version);
}

int main(int argc, char **argv)
{
    /* this binary is also its own worker and probe, like kvx */
    if (argc == 3 && strcmp(argv[1], "__worker") == 0)
        return worker_main(atoi(argv[2]), 0, 1);
    if (argc == 3 && strcmp(argv[1], "__probe") == 0)
        return worker_probe_main(atoi(argv[2]));
    KvxError err = {0};
    if (cudadl_load(&err) < 0) {
        printf("skipped: %s\n", err.msg);
        return 77;
    }
    int n = 0;
    if (worker_probe(&gpu, 1, &n, &err) < 0) {
        printf("skipped: %s\n", err.msg);
        return 77;
    }
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kvx-gpu-worker-XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    if (compile_kernels() < 0) {
        printf("cannot compile the test kernels for sm_%d%d\n", gpu.cc_major, gpu.cc_minor);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_kernel_launches),
        cmocka_unit_test(test_outputs_reused_reset),
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_ok_and_mismatch),
        cmocka_unit_test(test_flush_evicts),
        cmocka_unit_test(test_baseline_and_limits),
        cmocka_unit_test(test_illegal_address),
        cmocka_unit_test(test_trap),
        cmocka_unit_test(test_misaligned),
        cmocka_unit_test(test_hang_is_killed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(cubin_path);
    rmdir(tmpdir);
    return rc;
}
