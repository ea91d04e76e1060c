/* test_jit: NVRTC compiles for real archs (PTX, CUBIN, ptxas report), the disk
 * cache (hits, keys, failed compiles, concurrent publishers), the ptxas report
 * and PTX parameter parsers against real NVRTC 13 text, and jit_compile_all.
 * Needs NVRTC and the toolkit headers, not a GPU. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <ftw.h>
#include <unistd.h>

#include "compile/jit.h"

static char cache_root[] = "/tmp/kvx-test-jit-XXXXXX";

static const char ATOMIC_SRC[] =
    "extern \"C\" __global__ void count(unsigned long long *out, int n, float f,\n"
    "                                  unsigned int u, short s)\n"
    "{\n"
    "    if (threadIdx.x < n)\n"
    "        atomicAdd(out, 1ull + (unsigned)f + u + s);\n"
    "}\n";

/* 256 __half of shared memory: ptxas must report 512 bytes smem. */
static const char HALF_SRC[] =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void halve(__half *out, const float *in, int n)\n"
    "{\n"
    "    __shared__ __half tile[256];\n"
    "    tile[threadIdx.x] = __float2half(in[threadIdx.x] * 0.5f);\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x < n)\n"
    "        out[threadIdx.x] = tile[255 - threadIdx.x];\n"
    "}\n";

static const char BROKEN_SRC[] =
    "extern \"C\" __global__ void broken(int *out)\n"
    "{\n"
    "    int x = ;\n"
    "    out[0] = x;\n"
    "}\n";

static JitOptions cache_opts(void)
{
    JitOptions o = { 0 };
    o.cache_dir = cache_root;
    o.threads = 2;
    o.use_cache = 1;
    return o;
}

static JitJob make_job(const char *name, const char *src, const char *arch)
{
    JitJob j;
    memset(&j, 0, sizeof j);
    j.name = name;
    j.source = src;
    j.arch = arch;
    return j;
}

static void compile_ok(JitJob *j, const JitOptions *o)
{
    KvxError e = { 0 };
    int rc = jit_compile(j, o, &e);
    if (rc != 0) {
        kvx_error_print(&e, stderr);
        kvx_error_clear(&e);
        fail_msg("jit_compile returned -1 for %s", j->name);
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(cache_root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(cache_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_versions(void **state)
{
    (void)state;
    int ma = 0, mi = -1;
    assert_int_equal(jit_nvrtc_version(&ma, &mi), 0);
    assert_true(ma >= 12);
    assert_true(mi >= 0);
    char *archs = jit_supported_archs();
    assert_non_null(archs);
    assert_non_null(strstr(archs, "sm_80,"));
    assert_non_null(strstr(archs, "sm_90"));
    assert_int_equal(strncmp(archs, "sm_", 3), 0);
    free(archs);
    char *inc = jit_find_cuda_include();
    assert_non_null(inc);
    free(inc);
}

/* Fresh compile for two real archs, then the same job again from the cache. */
static void test_compile_and_cache_hit(void **state)
{
    (void)state;
    static const char *const archs[] = { "sm_80", "sm_90" };
    JitOptions o = cache_opts();
    for (int a = 0; a < 2; a++) {
        JitJob j = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&j, &o);
        assert_int_equal(j.ok, 1);
        assert_int_equal(j.cached, 0);
        assert_non_null(strstr(j.ptx, ".visible .entry count("));
        char target[32];
        snprintf(target, sizeof target, ".target %s", archs[a]);
        assert_non_null(strstr(j.ptx, target));
        assert_non_null(strstr(j.ptx, "atom.global.add.u64"));
        assert_true(j.cubin_len > 64);
        assert_memory_equal(j.cubin, "\x7f" "ELF", 4);
        assert_true(j.regs > 0);
        assert_int_equal(j.spill_stores, 0);
        assert_int_equal(j.spill_loads, 0);
        assert_int_equal(j.stack, 0);
        assert_int_equal(j.smem_static, 0);
        assert_true(j.compile_ms > 0);
        assert_int_equal((int)strlen(j.key), 64);
        assert_non_null(strstr(j.log, "Used "));
        /* The worker loads kernel.cubin from job->dir. */
        assert_non_null(j.dir);
        char *path = path_join(j.dir, "kernel.cubin");
        size_t len = 0;
        char *cubin = file_read(path, &len);
        free(path);
        assert_non_null(cubin);
        assert_int_equal(len, j.cubin_len);
        assert_memory_equal(cubin, j.cubin, len);
        free(cubin);

        JitJob k = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&k, &o);
        assert_int_equal(k.ok, 1);
        assert_int_equal(k.cached, 1);
        assert_string_equal(k.key, j.key);
        assert_string_equal(k.dir, j.dir);
        assert_int_equal(k.ptx_len, j.ptx_len);
        assert_string_equal(k.ptx, j.ptx);
        assert_int_equal(k.cubin_len, j.cubin_len);
        assert_memory_equal(k.cubin, j.cubin, j.cubin_len);
        assert_string_equal(k.log, j.log);
        assert_int_equal(k.regs, j.regs);
        assert_int_equal(k.smem_static, j.smem_static);
        assert_int_equal(k.cmem, j.cmem);
        assert_true(k.compile_ms > j.compile_ms - 0.01 && k.compile_ms < j.compile_ms + 0.01);

        /* use_cache=0 (--no-cache) compiles again and leaves the entry alone:
         * no entry for the job, the next lookup still the first compile's. */
        JitOptions fresh = o;
        fresh.use_cache = 0;
        JitJob f = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&f, &fresh);
        assert_int_equal(f.ok, 1);
        assert_int_equal(f.cached, 0);
        assert_null(f.dir);
        assert_string_equal(f.key, j.key);
        assert_string_equal(f.ptx, j.ptx);
        JitJob g = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&g, &o);
        assert_int_equal(g.cached, 1);
        assert_true(g.compile_ms > j.compile_ms - 0.01 && g.compile_ms < j.compile_ms + 0.01);

        /* A byte of the cached CUBIN flipped by hand: a miss, compiled again
         * and replaced, then a hit with the right bytes. */
        path = path_join(g.dir, "kernel.cubin");
        cubin = file_read(path, &len);
        cubin[len / 2] ^= 0x5a;
        assert_int_equal(file_write_atomic(path, cubin, len), 0);
        free(cubin);
        free(path);
        JitJob h = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&h, &o);
        assert_int_equal(h.cached, 0);
        assert_memory_equal(h.cubin, j.cubin, j.cubin_len);
        JitJob i = make_job("count.cu", ATOMIC_SRC, archs[a]);
        compile_ok(&i, &o);
        assert_int_equal(i.cached, 1);
        assert_memory_equal(i.cubin, j.cubin, j.cubin_len);

        jit_job_release(&j);
        jit_job_release(&k);
        jit_job_release(&f);
        jit_job_release(&g);
        jit_job_release(&h);
        jit_job_release(&i);
    }
    /* The two archs are two entries. */
    JitJob x = make_job("count.cu", ATOMIC_SRC, "sm_80");
    JitJob y = make_job("count.cu", ATOMIC_SRC, "sm_90");
    compile_ok(&x, &o);
    compile_ok(&y, &o);
    assert_string_not_equal(x.key, y.key);
    jit_job_release(&x);
    jit_job_release(&y);
}

static void test_half_and_smem(void **state)
{
    (void)state;
    JitOptions o = cache_opts();
    JitJob j = make_job("halve.cu", HALF_SRC, "sm_90");
    compile_ok(&j, &o);
    if (!j.ok)
        fail_msg("cuda_fp16.h kernel failed:\n%s", j.log);
    assert_non_null(strstr(j.ptx, ".entry halve("));
    assert_non_null(strstr(j.ptx, "cvt.rn.f16.f32"));
    assert_int_equal(j.smem_static, 512);
    assert_true(j.regs > 0);
    jit_job_release(&j);
}

static void test_syntax_error(void **state)
{
    (void)state;
    JitOptions o = cache_opts();
    JitJob j = make_job("broken.cu", BROKEN_SRC, "sm_90");
    compile_ok(&j, &o);             /* the job ran: a source error is a result */
    assert_int_equal(j.ok, 0);
    assert_null(j.ptx);
    assert_null(j.cubin);
    assert_non_null(j.log);
    assert_non_null(strstr(j.log, "broken.cu(3): error"));
    assert_int_equal(j.regs, -1);
    /* Cached too: the second run does not retry it. */
    JitJob k = make_job("broken.cu", BROKEN_SRC, "sm_90");
    compile_ok(&k, &o);
    assert_int_equal(k.ok, 0);
    assert_int_equal(k.cached, 1);
    assert_string_equal(k.log, j.log);
    jit_job_release(&j);
    jit_job_release(&k);
}

/* Over 48 KB of static shared memory: ptxas fails with only info lines in
 * NVRTC's log; kvx says what went wrong. */
static void test_static_smem_limit(void **state)
{
    (void)state;
    static const char src[] =
        "extern \"C\" __global__ void big(const unsigned *in, unsigned *out)\n"
        "{\n"
        "    __shared__ unsigned s[16384];\n"
        "    s[threadIdx.x] = in[threadIdx.x];\n"
        "    __syncthreads();\n"
        "    out[threadIdx.x] = s[(threadIdx.x * 7) % 16384];\n"
        "}\n";
    JitOptions o = cache_opts();
    JitJob j = make_job("big.cu", src, "sm_90");
    compile_ok(&j, &o);
    assert_int_equal(j.ok, 0);
    assert_non_null(j.log);
    /* NVRTC 13 logs no error line here; should a later one, its own suffices. */
    if (!strstr(j.log, "65536 bytes of static shared memory: more than the 48 KB") &&
        !strstr(j.log, "error"))
        fail_msg("log does not explain the failure:\n%s", j.log);
    jit_job_release(&j);
}

/* A bad option is the spec's fault, not the variant's: -1 with NVRTC's text. */
static void test_invalid_option(void **state)
{
    (void)state;
    JitOptions o = cache_opts();
    static const char *const bad[] = { "--no-such-option" };
    JitJob j = make_job("count.cu", ATOMIC_SRC, "sm_90");
    j.options = bad;
    j.noptions = 1;
    KvxError e = { 0 };
    assert_int_equal(jit_compile(&j, &o, &e), -1);
    assert_int_equal(e.code, KVX_EINPUT);
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "--no-such-option"));
    kvx_error_clear(&e);
    jit_job_release(&j);
}

static void test_key_covers_options(void **state)
{
    (void)state;
    JitOptions o = { 0 };           /* no cache: the key is still computed */
    static const char *const opt_a[] = { "-DFOO=1" };
    static const char *const opt_b[] = { "-DFOO=2" };
    static const char *const opt_ab[] = { "-DFOO=1", "-DBAR=1" };
    static const char *const opt_ba[] = { "-DBAR=1", "-DFOO=1" };
    struct { const char *const *opts; int n; int cccl; } cases[] = {
        { NULL, 0, 0 }, { opt_a, 1, 0 }, { opt_b, 1, 0 },
        { opt_ab, 2, 0 }, { opt_ba, 2, 0 }, { NULL, 0, 1 },
    };
    enum { N = sizeof cases / sizeof *cases };
    char keys[N][65];
    for (int i = 0; i < N; i++) {
        JitJob j = make_job("count.cu", ATOMIC_SRC, "sm_90");
        j.options = cases[i].opts;
        j.noptions = cases[i].n;
        j.use_cccl = cases[i].cccl;
        compile_ok(&j, &o);
        assert_int_equal(j.ok, 1);
        assert_null(j.dir);
        memcpy(keys[i], j.key, 65);
        jit_job_release(&j);
    }
    for (int i = 0; i < N; i++)
        for (int k = i + 1; k < N; k++)
            if (!strcmp(keys[i], keys[k]))
                fail_msg("cases %d and %d share key %s", i, k, keys[i]);
}

/* Real NVRTC 13 logs: sm_80 prints cmem[0]; sm_90 does not; a spilling kernel
 * with a non-inlined helper; a log with no report. */
static void test_parse_ptxas(void **state)
{
    (void)state;
    static const char SM80[] =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers, used 0 barriers, 374 bytes cmem[0]\n"
        "ptxas info    : Compile time = 3.204 ms\n";
    static const char SM90_SMEM[] =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'h' for 'sm_90'\n"
        "ptxas info    : Function properties for h\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 72 registers, used 1 barriers, 1024 bytes smem\n"
        "ptxas info    : Compile time = 58.365 ms\n";
    static const char SPILL[] =
        "ptxas info    : Overriding maximum register limit 256 for 'spill' with  24 of maxrregcount option\n"
        "ptxas info    : 0 bytes gmem, 256 bytes cmem[3]\n"
        "ptxas info    : Compiling entry function 'spill' for 'sm_80'\n"
        "ptxas info    : Function properties for spill\n"
        "ptxas         .     608 bytes stack frame, 328 bytes spill stores, 404 bytes spill loads\n"
        "ptxas info    : Used 24 registers, used 0 barriers, 608 bytes cumulative stack size, 372 bytes cmem[0]\n"
        "ptxas info    : Compile time = 77.459 ms\n"
        "ptxas info    : Function properties for _Z6helperPfi\n"
        "ptxas         .     0 bytes stack frame, 208 bytes spill stores, 244 bytes spill loads\n";
    JitJob j;
    memset(&j, 0, sizeof j);
    jit_parse_ptxas(SM80, &j);
    assert_int_equal(j.regs, 8);
    assert_int_equal(j.cmem, 374);
    assert_int_equal(j.smem_static, 0);
    assert_int_equal(j.stack, 0);
    assert_int_equal(j.spill_stores, 0);
    assert_int_equal(j.spill_loads, 0);
    jit_parse_ptxas(SM90_SMEM, &j);
    assert_int_equal(j.regs, 72);
    assert_int_equal(j.smem_static, 1024);
    assert_int_equal(j.cmem, -1);
    jit_parse_ptxas(SPILL, &j);
    assert_int_equal(j.regs, 24);
    assert_int_equal(j.stack, 608);
    assert_int_equal(j.spill_stores, 328);
    assert_int_equal(j.spill_loads, 404);
    assert_int_equal(j.cmem, 372);      /* cmem[3] is not bank 0 */
    assert_int_equal(j.smem_static, 0);
    jit_parse_ptxas("broken.cu(3): error: expected an expression\n", &j);
    assert_int_equal(j.regs, -1);
    assert_int_equal(j.smem_static, -1);
    assert_int_equal(j.spill_stores, -1);
    jit_parse_ptxas("", &j);
    assert_int_equal(j.regs, -1);
}

/* A source of two kernels (a launch list): each entry function with its own
 * figures, in the report's order; the JSON stored as variants.kernels_json. */
static void test_ptxas_kernels(void **state)
{
    (void)state;
    static const char TWO[] =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'filter_count_sum' for 'sm_90'\n"
        "ptxas info    : Function properties for filter_count_sum\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 14 registers, used 1 barriers, 8192 bytes smem\n"
        "ptxas info    : Compile time = 13.784 ms\n"
        "ptxas info    : Compiling entry function 'filter_count_blocks' for 'sm_90'\n"
        "ptxas info    : Function properties for filter_count_blocks\n"
        "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 32 registers, used 1 barriers, 32 bytes smem\n";
    JitKernelFacts k[4];
    assert_int_equal(jit_ptxas_kernels(TWO, k, 4), 2);
    assert_string_equal(k[0].name, "filter_count_sum");
    assert_int_equal(k[0].regs, 14);
    assert_int_equal(k[0].smem_static, 8192);
    assert_int_equal(k[0].spill_stores, 0);
    assert_string_equal(k[1].name, "filter_count_blocks");
    assert_int_equal(k[1].regs, 32);
    assert_int_equal(k[1].stack, 8);
    assert_int_equal(k[1].spill_stores, 4);
    assert_int_equal(k[1].spill_loads, 12);
    assert_int_equal(jit_ptxas_kernels(TWO, k, 1), 1);
    assert_int_equal(jit_ptxas_kernels("", k, 4), 0);
    StrBuf b;
    sb_init(&b);
    jit_ptxas_kernels(TWO, k, 4);
    jit_kernels_json(k, 2, &b);
    assert_string_equal(sb_str(&b),
                        "[{\"kernel\":\"filter_count_sum\",\"regs\":14,\"spill_stores\":0,\"spill_loads\":0,"
                        "\"smem_static\":8192,\"stack\":0},{\"kernel\":\"filter_count_blocks\",\"regs\":32,"
                        "\"spill_stores\":4,\"spill_loads\":12,\"smem_static\":32,\"stack\":8}]");
    sb_free(&b);
}

static void test_ptx_params(void **state)
{
    (void)state;
    JitOptions o = { 0 };
    JitJob j = make_job("count.cu", ATOMIC_SRC, "sm_90");
    compile_ok(&j, &o);
    assert_int_equal(j.ok, 1);
    PtxParam p[8];
    /* (unsigned long long *, int, float, unsigned int, short) */
    static const PtxParam want[] = { { 8, 0, 8 }, { 4, 0, 4 }, { 4, 1, 4 }, { 4, 0, 4 }, { 2, 0, 2 } };
    assert_int_equal(jit_ptx_params(j.ptx, "count", p, 8), 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(p[i].size, want[i].size);
        assert_int_equal(p[i].is_float, want[i].is_float);
        assert_int_equal(p[i].align, want[i].align);
    }
    assert_int_equal(jit_ptx_params(j.ptx, "cou", p, 8), -1);
    assert_int_equal(jit_ptx_params(j.ptx, "absent", p, 8), -1);
    /* max smaller than the count: the count is still the whole list */
    assert_int_equal(jit_ptx_params(j.ptx, "count", p, 2), 5);
    jit_job_release(&j);

    /* A by-value struct { double a, b; } as NVRTC 13 writes it, a .ptr param,
     * a second kernel whose name extends the first, and an empty list. */
    static const char PTX[] =
        ".visible .entry kk(\n"
        "\t.param .u32 kk_param_0\n)\n{\n\tret;\n}\n"
        ".visible .entry k(\n"
        "\t.param .align 8 .b8 k_param_0[16],\n"
        "\t.param .u64 .ptr .global .align 4 k_param_1,\n"
        "\t.param .f64 k_param_2\n"
        ")\n{\n\tret;\n}\n"
        ".visible .entry none()\n{\n\tret;\n}\n";
    assert_int_equal(jit_ptx_params(PTX, "k", p, 8), 3);
    assert_int_equal(p[0].size, 16);
    assert_int_equal(p[0].align, 8);
    assert_int_equal(p[0].is_float, 0);
    assert_int_equal(p[1].size, 8);
    assert_int_equal(p[1].align, 8);
    assert_int_equal(p[2].size, 8);
    assert_int_equal(p[2].is_float, 1);
    assert_int_equal(jit_ptx_params(PTX, "kk", p, 8), 1);
    assert_int_equal(p[0].size, 4);
    assert_int_equal(jit_ptx_params(PTX, "none", p, 8), 0);
}

typedef struct Done {
    int calls;
    int ok;
} Done;

static void on_done(void *ctx, JitJob *job)
{
    Done *d = ctx;
    d->calls++;
    d->ok += job->ok;
}

static int count_entries(const char *root, int *tmp_left)
{
    int n = 0;
    DIR *d = opendir(root);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *shard = path_join(root, e->d_name);
        DIR *s = opendir(shard);
        struct dirent *f;
        while (s && (f = readdir(s))) {
            if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
                continue;
            if (f->d_name[0] == '.')
                (*tmp_left)++;
            else
                n++;
        }
        if (s)
            closedir(s);
        free(shard);
    }
    closedir(d);
    return n;
}

/* 8 jobs on 2 threads, pairs of identical sources: the two threads take a
 * pair's jobs at once; the second waits for the first's compile (jit.c's
 * compiles in flight) and takes its entry from the cache: NVRTC runs once a
 * key.  Both end ok, sharing one entry, with no leftovers. */
static void test_compile_all(void **state)
{
    (void)state;
    char root[] = "/tmp/kvx-test-jit-all-XXXXXX";
    assert_non_null(mkdtemp(root));
    JitOptions o = cache_opts();
    o.cache_dir = root;
    char srcs[4][256];
    JitJob jobs[8];
    for (int i = 0; i < 4; i++)
        snprintf(srcs[i], sizeof srcs[i],
                 "extern \"C\" __global__ void add%d(unsigned int *out)\n"
                 "{ atomicAdd(out, %du); }\n", i, i + 1);
    for (int i = 0; i < 8; i++)
        jobs[i] = make_job("add.cu", srcs[i / 2], "sm_90");
    Done d = { 0, 0 };
    KvxError e = { 0 };
    assert_int_equal(jit_compile_all(jobs, 8, &o, on_done, &d, &e), 0);
    assert_int_equal(d.calls, 8);
    assert_int_equal(d.ok, 8);
    for (int i = 0; i < 8; i += 2) {
        assert_string_equal(jobs[i].key, jobs[i + 1].key);
        assert_string_equal(jobs[i].dir, jobs[i + 1].dir);
        assert_string_equal(jobs[i].ptx, jobs[i + 1].ptx);
        /* The loser of the publish holds the winner's checksum, so that what
         * it adds (jit_cache_put) matches the entry on disk. */
        assert_string_equal(jobs[i].sum, jobs[i + 1].sum);
        assert_int_equal(jobs[i].cached + jobs[i + 1].cached, 1);
    }
    int tmp_left = 0;
    assert_int_equal(count_entries(root, &tmp_left), 4);
    assert_int_equal(tmp_left, 0);

    /* Again: everything from the cache. */
    Done d2 = { 0, 0 };
    for (int i = 0; i < 8; i++)
        jit_job_release(&jobs[i]);
    assert_int_equal(jit_compile_all(jobs, 8, &o, on_done, &d2, &e), 0);
    assert_int_equal(d2.calls, 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(jobs[i].cached, 1);
        jit_job_release(&jobs[i]);
    }
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Files added to an entry (jit_cache_put) come back while they match their
 * checksum; an edited one is absent to jit_cache_get and makes the entry a
 * miss.  Without a cache, a scratch directory takes the entry. */
static void test_cache_files(void **state)
{
    (void)state;
    JitOptions o = cache_opts();
    JitJob j = make_job("count.cu", ATOMIC_SRC, "sm_80");
    compile_ok(&j, &o);
    assert_int_equal(jit_cache_put(&j, "facts.json", "{\"n\":1}", 7), 0);
    size_t len = 0;
    char *got = jit_cache_get(&j, "facts.json", &len);
    assert_non_null(got);
    assert_int_equal(len, 7);
    assert_string_equal(got, "{\"n\":1}");
    free(got);
    JitJob k = make_job("count.cu", ATOMIC_SRC, "sm_80");
    compile_ok(&k, &o);
    assert_int_equal(k.cached, 1);
    char *path = path_join(k.dir, "facts.json");
    char *text = file_read(path, &len);
    text[len - 2] = '2';
    assert_int_equal(file_write_atomic(path, text, len), 0);
    free(text);
    assert_null(jit_cache_get(&k, "facts.json", &len));
    JitJob m = make_job("count.cu", ATOMIC_SRC, "sm_80");
    compile_ok(&m, &o);
    assert_int_equal(m.cached, 0);          /* replaced, without facts.json */
    assert_int_equal(access(path, F_OK), -1);
    free(path);

    JitScratch *scratch = jit_scratch_new();
    JitOptions none = { 0 };
    none.scratch = scratch;
    JitJob s = make_job("count.cu", ATOMIC_SRC, "sm_80");
    compile_ok(&s, &none);
    assert_non_null(s.dir);
    assert_non_null(strstr(s.dir, "/kvx-scratch-"));
    path = path_join(s.dir, "kernel.cubin");
    assert_int_equal(access(path, R_OK), 0);
    free(path);
    jit_scratch_free(scratch);
    assert_int_equal(access(s.dir, F_OK), -1);
    jit_job_release(&j);
    jit_job_release(&k);
    jit_job_release(&m);
    jit_job_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_parse_ptxas),
        cmocka_unit_test(test_ptxas_kernels),
        cmocka_unit_test(test_compile_and_cache_hit),
        cmocka_unit_test(test_cache_files),
        cmocka_unit_test(test_half_and_smem),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_static_smem_limit),
        cmocka_unit_test(test_invalid_option),
        cmocka_unit_test(test_key_covers_options),
        cmocka_unit_test(test_ptx_params),
        cmocka_unit_test(test_compile_all),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
