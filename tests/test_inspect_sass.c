/* test_inspect_sass: the PTX/SASS atomic classifier (compile/inspect.c) on real
 * SASS listings captured with nvdisasm by tests/data/inspect/capture.sh (sass/,
 * checked in; format samples and PTX are test_inspect.c's).  A test whose
 * listing is missing skips and says how to capture it; the program then exits
 * 77 if nothing failed.  The disassembler plumbing runs a stand-in tool (a
 * shell script) so that it is tested on machines without nvdisasm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/inspect_fixture.h"

static int g_missing;           /* captured listings not found */

/* Facts of kernel.arch from both its PTX and its captured SASS; 0 and a skip
 * when the listing has not been captured. */
static int captured(const char *kernel, const char *arch, InspectFacts *f)
{
    char name[128];
    snprintf(name, sizeof name, "%s.%s", kernel, arch);
    char *sass = load("sass", name, "sass");
    if (!sass) {
        print_message("listing %s/sass/%s.sass is missing: run tests/data/inspect/capture.sh "
                      "on a machine with nvdisasm (CUDA toolkit) and check in sass/\n",
                      DATA, name);
        g_missing++;
        return 0;
    }
    *f = ptx_file(name);
    assert_true(inspect_sass(sass, f) > 0);
    assert_string_equal(f->sass.arch, arch);
    free(sass);
    return 1;
}
#define CAPTURED(k, a, f) do { if (!captured(k, a, f)) { skip(); return; } } while (0)

static const char *const ARCHS[] = {"sm_75", "sm_80", "sm_90", "sm_120"};

/* Same-address +1: aggregated by ptxas on every arch, into REDG from sm_90
 * and into the older RED form before. */
static void captured_counter_aggregated(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("counter_u32", ARCHS[a], &f);
        assert_int_equal(f.warp_aggregated, 1);
        assert_int_equal(f.sass.total, 1);
        assert_int_equal(a >= 2 ? f.sass.redg : f.sass.red, 1);
        assert_non_null(strstr(f.agg_seq, "VOTEU.ANY"));
        assert_non_null(strstr(f.agg_seq, "FLO"));
        assert_non_null(strstr(f.agg_seq, "POPC"));
        assert_tags(&f, "warp-aggregated");

        CAPTURED("counter_u64", ARCHS[a], &f);
        assert_int_equal(f.warp_aggregated, 1);
        assert_int_equal(f.sass.b64, 1);
        assert_non_null(strstr(f.agg_seq, "UPOPC"));

        CAPTURED("ticket_u32", ARCHS[a], &f);      /* result used: ATOMG */
        assert_int_equal(f.warp_aggregated, 1);
        assert_int_equal(f.sass.atomg, 1);
    }
}

/* A float add of varying values is left one per thread. */
static void captured_float_not_aggregated(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("float_add", ARCHS[a], &f);
        assert_int_equal(f.warp_aggregated + f.redux_aggregated + f.shfl_aggregated, 0);
        assert_int_equal(f.sass.plain, 1);
        assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds,
                                    a >= 2 ? "REDG.ADD.F32" : "RED.ADD.F32"), 1);
        assert_tags(&f, "per-thread");
        CAPTURED("float_add_sys", ARCHS[a], &f);
        assert_int_equal(f.sass.scope_sys, 1);
    }
}

/* 16-bit adds: a CAS loop everywhere.  bf16 below sm_90 and the hand-written
 * 16-bit max loop in the source already; scalar bf16 on sm_90+ and scalar half
 * on every arch built by ptxas from a single PTX atom. */
static void captured_cas16_loops(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("cas16_max", ARCHS[a], &f);
        assert_int_equal(f.cas_loop, 1);
        assert_int_equal(f.ptx.cas_loop, 1);
        assert_tags(&f, "CAS loop");

        CAPTURED("bf16_add", ARCHS[a], &f);
        assert_int_equal(f.cas_loop, 1);
        assert_int_equal(f.sass.b16, 0);          /* no 16-bit SASS atomic exists */
        assert_tags(&f, a >= 2 ? "CAS loop (ptxas)" : "CAS loop");

        CAPTURED("half_add", ARCHS[a], &f);
        assert_int_equal(f.cas_loop, 1);
        assert_int_equal(f.ptx.b16, 1);
        assert_tags(&f, "CAS loop (ptxas)");

        CAPTURED("cas_u32", ARCHS[a], &f);        /* one CAS, no loop */
        assert_int_equal(f.sass.cas, 1);
        assert_int_equal(f.cas_loop, 0);
    }
}

/* Packed half2 is native on every arch; the generic address adds a shared
 * fallback.  bf16x2 is native from sm_90 and a CAS loop before. */
static void captured_packed(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("half2_add", ARCHS[a], &f);
        assert_int_equal(f.sass.packed_f16x2, 1);
        assert_int_equal(f.generic_fallback, 1);
        assert_int_equal(f.cas_loop, 0);
        assert_tags(&f, "per-thread, native f16x2, generic fallback");

        CAPTURED("bf16x2_add", ARCHS[a], &f);
        if (a >= 2) {
            assert_int_equal(f.sass.packed_bf16x2, 1);
            assert_int_equal(f.cas_loop, 0);
        } else {
            assert_int_equal(f.sass.packed_bf16x2, 0);
            assert_int_equal(f.cas_loop, 1);
        }
    }
}

/* Shared +1: the hardware increment from sm_80; on sm_75 ptxas aggregates an
 * ATOMS.ADD instead. */
static void captured_smem_increment(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("smem_inc", ARCHS[a], &f);
        assert_int_equal(f.smem_hw_inc, a >= 1);
        assert_int_equal(f.warp_aggregated, a == 0);
        assert_int_equal(f.sass.atoms, 1);
        assert_tags(&f, a >= 1 ? "smem HW inc" : "warp-aggregated");
    }
}

/* Varying int sum: REDUX from sm_80; on sm_75 a shuffle tree for full warps
 * and one atomic per thread otherwise. */
static void captured_redux(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("redux_sum", ARCHS[a], &f);
        if (a == 0) {
            assert_int_equal(f.redux_aggregated, 0);
            assert_int_equal(f.shfl_aggregated, 1);
            assert_int_equal(f.sass.plain, 1);
            assert_int_equal(f.sass.total, 2);
        } else {
            assert_int_equal(f.redux_aggregated, 1);
            assert_int_equal(f.sass.total, 1);
            assert_non_null(strstr(f.agg_seq, "REDUX.SUM"));
        }
    }
}

static void captured_vector_and_generic(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++) {
        InspectFacts f;
        CAPTURED("vec_f32x4", ARCHS[a], &f);
        assert_int_equal(f.sass.vector, a >= 2);
        assert_int_equal(f.sass.total, a >= 2 ? 1 : 4);
        CAPTURED("generic_add", ARCHS[a], &f);
        assert_int_equal(f.sass.atom, 1);         /* the generic pointer's ATOM */
        assert_int_equal(f.generic_fallback, 0);  /* u32 add needs no fallback */
        assert_int_equal(f.ptx.generic, 1);
    }
}

/* Loads and stores from the SASS, replacing the PTX's: the float4 atomic
 * kernel's input load is one 16-byte LDG.E.128 on sm_90; the shared counter
 * kernel's STS and LDS are 4 bytes each. */
static void captured_memory(void **state)
{
    (void)state;
    InspectFacts f;
    CAPTURED("vec_f32x4", "sm_90", &f);
    assert_string_equal(f.mem.source, "SASS");
    assert_int_equal(f.mem.ld_global, 1);
    assert_int_equal(f.mem.ld_global_bytes, 16);
    assert_int_equal(f.mem.st_global, 0);
    StrBuf b;
    sb_init(&b);
    inspect_memory(&f, &b);
    assert_string_equal(sb_str(&b), "SASS: 1 LDG.E.128 (16 B)");
    sb_reset(&b);
    inspect_to_json(&f, &b);
    assert_non_null(strstr(sb_str(&b), ",\"mem\":{\"source\":\"SASS\",\"ld_global\":1,\"st_global\":0,"
                                       "\"ld_shared\":0,\"st_shared\":0,\"ld_global_bytes\":16,"));
    assert_non_null(strstr(sb_str(&b), "\"kinds\":{\"LDG.E.128\":1},\"kinds_other\":0}"));
    CAPTURED("smem_inc", "sm_90", &f);
    sb_reset(&b);
    inspect_memory(&f, &b);
    assert_string_equal(sb_str(&b), "SASS: 1 STS (4 B), 1 LDG.E (4 B), 1 LDS (4 B)");
    assert_int_equal(f.mem.ld_shared, 1);
    assert_int_equal(f.mem.st_shared, 1);
    sb_free(&b);
}

static void captured_summary_and_json(void **state)
{
    (void)state;
    InspectFacts f;
    CAPTURED("counter_u32", "sm_90", &f);
    f.regs = 12;
    f.spill_stores = f.spill_loads = 0;
    f.smem_static = 0;
    StrBuf b;
    sb_init(&b);
    inspect_summary(&f, &b);
    assert_string_equal(sb_str(&b),
                        "SASS sm_90: 1 REDG.ADD (ptxas warp-aggregated: "
                        "VOTEU.ANY+UFLO.U32+POPC); PTX: 1 atom.global.add.u32; 12 regs");
    sb_reset(&b);
    inspect_to_json(&f, &b);
    assert_string_equal(sb_str(&b),
        "{\"sass_available\":true,\"arch\":\"sm_90\",\"disassembler\":\"\",\"tags\":\"warp-aggregated\","
        "\"warp_aggregated\":1,\"redux_aggregated\":0,\"shfl_aggregated\":0,\"cas_loop\":0,"
        "\"smem_hw_inc\":0,\"generic_fallback\":0,\"agg_seq\":\"VOTEU.ANY+UFLO.U32+POPC\",\"sites\":[{\"space\":\"global\",\"source\":\"per-thread\",\"ptxas\":\"warp-aggregated\",\"sass\":\"REDG.ADD\",\"per_warp\":1}],\"sites_more\":0,"
        "\"regs\":12,\"spill_stores\":0,\"spill_loads\":0,\"smem_static\":0,"
        "\"ptx\":{\"atom\":1,\"red\":0,\"global\":1,\"shared\":0,\"cluster\":0,\"generic\":0,"
        "\"cas\":0,\"b16\":0,\"packed\":0,\"vector\":0,\"b64\":0,\"scope_cta\":0,"
        "\"scope_cluster\":0,\"scope_sys\":0,\"cas_loop\":0,"
        "\"kinds\":{\"atom.global.add.u32\":1},\"kinds_other\":0},"
        "\"sass\":{\"total\":1,\"ATOM\":0,\"ATOMG\":0,\"ATOMS\":0,\"RED\":0,\"REDG\":1,"
        "\"REDAS\":0,\"smem_inc\":0,\"cas\":0,\"b16\":0,\"packed_f16x2\":0,"
        "\"packed_bf16x2\":0,\"vector\":0,\"b64\":0,\"scope_sys\":0,\"scope_cta\":0,"
        "\"plain\":0,\"kinds\":{\"REDG.ADD\":1},\"kinds_other\":0},"
        "\"mem\":{\"source\":\"SASS\",\"ld_global\":1,\"st_global\":0,\"ld_shared\":0,\"st_shared\":0,"
        "\"ld_global_bytes\":4,\"st_global_bytes\":0,\"ld_shared_bytes\":0,\"st_shared_bytes\":0,"
        "\"kinds\":{\"LDG.E\":1},\"kinds_other\":0}}");

    /* without SASS: the PTX stands, one line says what SASS needs */
    InspectFacts p = ptx_file("counter_u32.sm_90");
    sb_reset(&b);
    inspect_summary(&p, &b);
    assert_non_null(strstr(sb_str(&b), "PTX: 1 atom.global.add.u32; no SASS (needs nvdisasm)"));
    sb_reset(&b);
    inspect_to_json(&p, &b);
    assert_non_null(strstr(sb_str(&b), "\"sass_available\":false"));
    assert_non_null(strstr(sb_str(&b), "\"regs\":null"));
    assert_non_null(strstr(sb_str(&b), "\"sass\":null,\"mem\":{\"source\":\"PTX\",\"ld_global\":1,"));
    sb_free(&b);
}

/* --show: the gutter marks the atomic and the sequence; nothing else moves. */
static void captured_mark(void **state)
{
    (void)state;
    char *sass = load("sass", "counter_u32.sm_90", "sass");
    if (!sass) {
        g_missing++;
        print_message("listing counter_u32.sm_90.sass missing: run tests/data/inspect/capture.sh\n");
        skip();
        return;
    }
    StrBuf b;
    sb_init(&b);
    inspect_mark(sass, 1, &b);
    int in_lines = 0, out_lines = 0, atomics = 0, seq = 0;
    for (const char *c = sass; *c; c++)
        in_lines += *c == '\n';
    const char *p = sb_str(&b);
    while (*p) {
        const char *e = strchr(p, '\n');
        out_lines++;
        if (strncmp(p, ">> ", 3) == 0) {
            atomics++;
            const char *note = strstr(p, "// kvx: ptxas warp aggregation");
            assert_non_null(note);
            assert_true(note < e);
            assert_non_null(strstr(p, "REDG.E.ADD.STRONG.GPU"));
        } else if (strncmp(p, " * ", 3) == 0) {
            seq++;
        } else {
            assert_memory_equal(p, "   ", 3);
        }
        p = e + 1;
    }
    assert_int_equal(out_lines, in_lines);
    assert_int_equal(atomics, 1);
    assert_int_equal(seq, 3);                   /* VOTEU.ANY, UFLO.U32, POPC */
    sb_free(&b);
    free(sass);

    char *ptx = load("ptx", "bf16_add.sm_80", "ptx");
    assert_non_null(ptx);
    sb_init(&b);
    inspect_mark(ptx, 0, &b);
    assert_non_null(strstr(sb_str(&b), ">> \tatom.global.cas.b16"));
    assert_non_null(strstr(sb_str(&b), "// kvx: CAS loop (bra $L__BB0_2)"));
    assert_non_null(strstr(sb_str(&b), " * \t@%p2 bra \t$L__BB0_2;"));
    sb_free(&b);
    free(ptx);
}

/* The cross-architecture table from the captured listings. */
static void captured_table(void **state)
{
    (void)state;
    static const char *const kernels[] = {"counter_u32", "float_add", "bf16_add", "redux_sum"};
    InspectFacts facts[4 * 4];
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 4; a++)
            CAPTURED(kernels[k], ARCHS[a], &facts[k * 4 + a]);
    StrBuf b;
    sb_init(&b);
    inspect_table(kernels, 4, ARCHS, 4, facts, &b);
    assert_string_equal(sb_str(&b),
        "| variant | sm_75 | sm_80 | sm_90 | sm_120 |\n"
        "|---|---|---|---|---|\n"
        "| counter_u32 | warp-aggregated | warp-aggregated | warp-aggregated | warp-aggregated |\n"
        "| float_add | per-thread | per-thread | per-thread | per-thread |\n"
        "| bf16_add | CAS loop | CAS loop | CAS loop (ptxas) | CAS loop (ptxas) |\n"
        "| redux_sum | shfl-aggregated | REDUX-aggregated | REDUX-aggregated | REDUX-aggregated |\n");
    sb_free(&b);
}

/* ==== 4. live compiles, classified with every disassembler at hand ========== */

/* The disassemblers a user may have: the toolkit's nvdisasm and the PyPI
 * package's in kvx's tools folder.  The count found (at most max). */
static int disassemblers(char tools[][1024], int max)
{
    const char *home = getenv("CUDA_HOME");
    char cand[4][1024];
    int nc = 0, n = 0;
    snprintf(cand[nc++], 1024, "%s/bin/nvdisasm", home && *home ? home : "/usr/local/cuda");
    snprintf(cand[nc++], 1024, "%s/.kvx/tools/nvdisasm/nvidia/cu13/bin/nvdisasm", KVX_SOURCE_DIR);
    snprintf(cand[nc++], 1024, "%s/.kvx/tools/nvdisasm/nvidia/cu12/bin/nvdisasm", KVX_SOURCE_DIR);
    for (int i = 0; i < nc && n < max; i++)
        if (access(cand[i], X_OK) == 0)
            snprintf(tools[n++], 1024, "%s", cand[i]);
    return n;
}

/* Each fixture kernel compiled with NVRTC for sm_80 and sm_90 and
 * disassembled by each disassembler found must get the classification of its
 * captured listing (CUDA 13.0's nvdisasm): a newer nvdisasm, such as the PyPI
 * package's, must not change what kvx says ptxas did. */
static void live_disassemblers_agree(void **state)
{
    (void)state;
    char tools[3][1024];
    int nt = disassemblers(tools, 3);
    if (nt == 0) {
        print_message("no nvdisasm (toolkit or .kvx/tools): make build installs the PyPI one\n");
        skip();
    }
    static const char *const kernels[] = {"counter_u32", "counter_u64", "ticket_u32", "float_add",
                                          "redux_sum", "bf16_add", "half_add", "cas16_max",
                                          "half2_add", "smem_inc", "generic_add", "cas_u32"};
    static const char *const archs[] = {"sm_80", "sm_90"};
    int compared = 0;
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/kernels/%s.cu", DATA, kernels[k]);
        char *src = file_read(path, NULL);
        assert_non_null(src);
        for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
            InspectFacts want;
            if (!captured(kernels[k], archs[a], &want))
                continue;
            JitJob job = {.name = kernels[k], .source = src, .arch = archs[a]};
            JitOptions jo = {0};
            KvxError err = {0};
            if (jit_compile(&job, &jo, &err) != 0 || !job.ok)
                fail_msg("%s for %s does not compile: %s", kernels[k], archs[a], err.msg);
            for (int t = 0; t < nt; t++) {
                char *sass = inspect_disassemble_with(tools[t], job.cubin, job.cubin_len, &err);
                if (!sass)
                    fail_msg("%s on %s.%s: %s", tools[t], kernels[k], archs[a], err.msg);
                InspectFacts got = ptx_facts(job.ptx);
                assert_true(inspect_sass(sass, &got) > 0);
                char *g = tags_of(&got), *w = tags_of(&want);
                if (strcmp(g, w))
                    fail_msg("%s.%s with %s: '%s' (the captured listing: '%s')", kernels[k], archs[a],
                             tools[t], g, w);
                free(g);
                free(w);
                free(sass);
                compared++;
            }
            jit_job_release(&job);
        }
        free(src);
    }
    print_message("%d classifications compared with %d disassembler(s)\n", compared, nt);
    assert_true(compared > 0);
}

/* With no nvdisasm in the toolkit or on PATH, kvx finds the PyPI package's
 * that `make` installs into .kvx/tools, by itself (no PATH change): `kvx
 * doctor` names it, its version and where it came from. */
static void pypi_disassembler_found(void **state)
{
    (void)state;
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/.kvx/tools/nvdisasm/nvidia/cu13/bin/nvdisasm", KVX_SOURCE_DIR);
    const char *home = getenv("CUDA_HOME");
    char kit[1024];
    snprintf(kit, sizeof kit, "%s/bin/nvdisasm", home && *home ? home : "/usr/local/cuda");
    if (access(tool, X_OK) != 0 || access(kit, X_OK) == 0 ||
        access("/usr/local/cuda/bin/nvdisasm", X_OK) == 0) {
        print_message("needs the PyPI nvdisasm in .kvx/tools and none in the toolkit\n");
        skip();
    }
    char cmd[2048], line[4096];
    snprintf(cmd, sizeof cmd, "env -u KVX_NVDISASM PATH=/usr/bin:/bin '%s' doctor 2>&1", KVX_BINARY);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int found = 0;
    while (fgets(line, sizeof line, p))
        if (!strncmp(line, "SASS", 4)) {
            found = 1;
            if (!strstr(line, tool) || !strstr(line, "from the PyPI package nvidia-cuda-nvdisasm"))
                fail_msg("kvx doctor: %s", line);
        }
    pclose(p);
    assert_true(found);
}

/* ==== disassembler plumbing (a stand-in tool) ================================ */

static char g_dir[256];

/* A tool script in g_dir: prints its first argument and a listing (the
 * hand-written uniform-aggregation sample), or fails with a message when the
 * CUBIN starts with "bad". */
static void write_tool(const char *name)
{
    char path[512], body[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    snprintf(body, sizeof body,
             "#!/bin/sh\n"
             "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.5, V13.5.37'; exit 0; fi\n"
             "if grep -q '^bad' \"$2\"; then echo 'fatal: not a cubin' >&2; exit 3; fi\n"
             "echo \"// flag $1\"\n"
             "cat '%s/listing.sass'\n", g_dir);
    assert_int_equal(file_write_atomic(path, body, strlen(body)), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

static int tool_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/kvx-test-inspect-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/listing.sass", g_dir);
    if (file_write_atomic(path, SAMPLE_UNIFORM_AGG, strlen(SAMPLE_UNIFORM_AGG)) != 0)
        return -1;
    write_tool("nvdisasm");
    write_tool("cuobjdump");
    snprintf(path, sizeof path, "%s/nvdisasm", g_dir);
    setenv("KVX_NVDISASM", path, 1);            /* before the first lookup */
    return 0;
}

static int tool_teardown(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/nvdisasm", g_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/cuobjdump", g_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/listing.sass", g_dir);
    unlink(path);
    rmdir(g_dir);
    return 0;
}

static void tool_found_and_run(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/nvdisasm", g_dir);
    assert_string_equal(inspect_find_disassembler(), path);
    assert_string_equal(inspect_disassembler_origin(), "$KVX_NVDISASM");
    assert_string_equal(inspect_disassembler_version(), "13.5.37");
    KvxError err = {0};
    char *text = inspect_disassemble("\x7f" "ELF", 4, &err);
    assert_non_null(text);
    assert_int_equal(err.code, 0);
    assert_true(strncmp(text, "// flag -c\n", 11) == 0);
    InspectFacts f;
    inspect_facts_init(&f);
    assert_int_equal(inspect_sass(text, &f), 1);
    assert_int_equal(f.warp_aggregated, 1);
    free(text);

    snprintf(path, sizeof path, "%s/cuobjdump", g_dir);
    text = inspect_disassemble_with(path, "\x7f" "ELF", 4, &err);
    assert_non_null(text);
    assert_true(strncmp(text, "// flag -sass\n", 14) == 0);
    free(text);
}

static void tool_failure(void **state)
{
    (void)state;
    KvxError err = {0};
    char *text = inspect_disassemble("bad cubin\n", 10, &err);
    assert_null(text);
    assert_int_equal(err.code, KVX_EIO);
    assert_non_null(strstr(err.msg, "exit status 3"));
    assert_non_null(err.log);
    assert_non_null(strstr(err.log, "fatal: not a cubin"));
    kvx_error_clear(&err);

    text = inspect_disassemble_with("/nonexistent/nvdisasm", "x", 1, &err);
    assert_null(text);
    assert_int_equal(err.code, KVX_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/nvdisasm"));
    kvx_error_clear(&err);
}

static void tool_inspect_job(void **state)
{
    (void)state;
    char *ptx = load("ptx", "counter_u32.sm_90", "ptx");
    assert_non_null(ptx);
    JitJob job;
    memset(&job, 0, sizeof job);
    job.ptx = ptx;
    job.cubin = (void *)"\x7f" "ELF";
    job.cubin_len = 4;
    job.regs = 10;
    job.spill_stores = 0;
    job.spill_loads = 0;
    job.smem_static = 4;
    InspectFacts f;
    KvxError err = {0};
    assert_int_equal(inspect_job(&job, &f, &err), 0);
    assert_true(f.has_ptx && f.has_sass);
    assert_int_equal(f.warp_aggregated, 1);
    assert_int_equal(f.regs, 10);
    assert_int_equal(f.smem_static, 4);

    job.cubin = (void *)"bad";
    job.cubin_len = 3;
    assert_int_equal(inspect_job(&job, &f, &err), -1);
    assert_int_equal(err.code, KVX_EIO);
    assert_true(f.has_ptx);                     /* the PTX facts stand */
    assert_false(f.has_sass);
    assert_int_equal(f.ptx.atom, 1);
    kvx_error_clear(&err);
    free(ptx);
}

int main(void)
{
    const struct CMUnitTest listings[] = {
        cmocka_unit_test(captured_counter_aggregated),
        cmocka_unit_test(captured_float_not_aggregated),
        cmocka_unit_test(captured_cas16_loops),
        cmocka_unit_test(captured_packed),
        cmocka_unit_test(captured_smem_increment),
        cmocka_unit_test(captured_redux),
        cmocka_unit_test(captured_vector_and_generic),
        cmocka_unit_test(captured_memory),
        cmocka_unit_test(captured_summary_and_json),
        cmocka_unit_test(captured_mark),
        cmocka_unit_test(captured_table),
        cmocka_unit_test(live_disassemblers_agree),
        cmocka_unit_test(pypi_disassembler_found),
    };
    const struct CMUnitTest tool[] = {
        cmocka_unit_test(tool_found_and_run),
        cmocka_unit_test(tool_failure),
        cmocka_unit_test(tool_inspect_job),
    };
    /* The plumbing first: its fake tool must be the process's first lookup
     * (the finder keeps what it found), and the listings' live check compiles,
     * which looks the disassembler up for the stored facts. */
    int failed = cmocka_run_group_tests_name("disassembler plumbing", tool, tool_setup, tool_teardown);
    unsetenv("KVX_NVDISASM");
    failed += cmocka_run_group_tests_name("captured nvdisasm listings", listings, NULL, NULL);
    if (failed)
        return 1;
    if (g_missing) {
        printf("test_inspect_sass: %d captured listing(s) missing: skipped (see above)\n", g_missing);
        return 77;
    }
    return 0;
}
