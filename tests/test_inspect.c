/* test_inspect: the PTX/SASS atomic classifier (driver/inspect.c).
 *
 * Three kinds of input, kept apart:
 *  1. hand-written format samples: short SASS/PTX snippets typed here in the
 *     nvdisasm/cuobjdump format, to pin each heuristic and its edge cases
 *     (window limits, predicates, function boundaries, cuobjdump syntax);
 *  2. PTX produced by nvcc from tests/data/inspect/kernels/ (ptx/, checked in);
 *  3. real SASS listings captured with nvdisasm by tests/data/inspect/capture.sh
 *     (sass/, checked in).  A test whose listing is missing skips and says how
 *     to capture it; the program then exits 77 if nothing failed.
 * The disassembler plumbing runs a stand-in tool (a shell script) so that it is
 * tested on machines without nvdisasm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/inspect.h"

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif
#define DATA KVX_SOURCE_DIR "/tests/data/inspect"

static int g_missing;           /* captured listings not found */

static InspectFacts sass_facts(const char *text)
{
    InspectFacts f;
    inspect_facts_init(&f);
    assert_true(inspect_sass(text, &f) >= 0);
    return f;
}

static InspectFacts ptx_facts(const char *text)
{
    InspectFacts f;
    inspect_facts_init(&f);
    inspect_ptx(text, &f);
    return f;
}

static int kind_count(const InspectKind *k, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0)
            return k[i].count;
    return 0;
}

/* inspect_tags of f, malloc'd. */
static char *tags_of(const InspectFacts *f)
{
    StrBuf b;
    sb_init(&b);
    inspect_tags(f, &b);
    char *t = xstrdup(sb_str(&b));
    sb_free(&b);
    return t;
}

static void assert_tags(const InspectFacts *f, const char *want)
{
    StrBuf b;
    sb_init(&b);
    inspect_tags(f, &b);
    assert_string_equal(sb_str(&b), want);
    sb_free(&b);
}

/* ==== 1. hand-written format samples (not captured output) ================== */

/* sm_90-style uniform-datapath aggregation of a +1 counter. */
static const char SAMPLE_UNIFORM_AGG[] =
    "\t.target\tsm_90\n"
    "counter:\n"
    "        /*0100*/                   S2R R0, SR_LANEID ;\n"
    "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
    "        /*0120*/                   UPOPC UR6, UR4 ;\n"
    "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
    "        /*0140*/                   ISETP.EQ.U32.AND P0, PT, R0, UR5, PT ;\n"
    "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n"
    "        /*0160*/                   EXIT ;\n";

static void sample_uniform_aggregation(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(SAMPLE_UNIFORM_AGG);
    assert_int_equal(f.sass.total, 1);
    assert_int_equal(f.sass.redg, 1);
    assert_int_equal(f.warp_aggregated, 1);
    assert_int_equal(f.sass.plain, 0);
    assert_string_equal(f.agg_seq, "VOTEU.ANY+UPOPC+UFLO.U32");
    assert_string_equal(f.sass.arch, "sm_90");
    assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds, "REDG.ADD"), 1);
    assert_tags(&f, "warp-aggregated");
}

/* The non-uniform form (VOTE.ANY + FLO + POPC into R registers). */
static void sample_vector_datapath_aggregation(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*00c0*/                   VOTE.ANY R6, PT, PT ;\n"
        "        /*00d0*/                   FLO.U32 R4, R6 ;\n"
        "        /*00e0*/                   POPC R0, R6 ;\n"
        "        /*00f0*/                   ISETP.EQ.U32.AND P0, PT, R4, R3, PT ;\n"
        "        /*0100*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R7, [R8.64], R0 ;\n"
        "        /*0110*/                   SHFL.IDX PT, R2, R7, R4, 0x1f ;\n");
    assert_int_equal(f.warp_aggregated, 1);
    assert_int_equal(f.sass.atomg, 1);
    assert_string_equal(f.agg_seq, "VOTE.ANY+FLO.U32+POPC");
}

/* Without a predicate the atomic is executed by every lane: no aggregation,
 * whatever precedes it. */
static void sample_unpredicated_is_not_aggregated(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0120*/                   UPOPC UR6, UR4 ;\n"
        "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
        "        /*0150*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n");
    assert_int_equal(f.warp_aggregated, 0);
    assert_int_equal(f.sass.plain, 1);
    assert_tags(&f, "per-thread");
}

/* The window stops at a label (another basic block) and at an unconditional
 * branch, but not at a conditional EXIT. */
static void sample_window_limits(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0120*/                   UPOPC UR6, UR4 ;\n"
        "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
        ".L_x_3:\n"
        "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n"
        "        /*0160*/              @!P2 BRA `(.L_x_3) ;\n");
    assert_int_equal(f.warp_aggregated, 0);

    /* A label nothing branches to starts no block (nvdisasm 13.5 puts such
     * labels in NVRTC's cubins). */
    f = sass_facts(
        "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0120*/                   UPOPC UR6, UR4 ;\n"
        "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
        ".L_x_3:\n"
        "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n");
    assert_int_equal(f.warp_aggregated, 1);

    f = sass_facts(
        "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0120*/                   UPOPC UR6, UR4 ;\n"
        "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
        "        /*0140*/                   BRA `(.L_x_9) ;\n"
        "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n");
    assert_int_equal(f.warp_aggregated, 0);

    f = sass_facts(
        "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0120*/                   UPOPC UR6, UR4 ;\n"
        "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
        "        /*0140*/              @!P1 EXIT ;\n"
        "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n");
    assert_int_equal(f.warp_aggregated, 1);
}

/* Sites: what the source does (PTX) and what ptxas did (SASS), apart.  A
 * leader's atomic after a ballot and popc is one per warp by the source, even
 * when ptxas adds nothing; a global atomic after bar.sync is one per block; a
 * bare one is per-thread: 32 per warp unless ptxas aggregates it. */
static void sample_sites(void **state)
{
    (void)state;
    InspectFacts f = ptx_facts(
        ".visible .entry hand(\n"
        "    vote.sync.ballot.b32 %r1, %p1, -1;\n"
        "    popc.b32 %r2, %r1;\n"
        "    @%p2 atom.global.add.u32 %r3, [%rd1], %r2;\n"
        "}\n"
        ".visible .entry blocky(\n"
        "    atom.shared.add.u32 %r3, [%rd2], 1;\n"
        "    bar.sync 0;\n"
        "    @%p2 red.global.add.u32 [%rd1], %r2;\n"
        "}\n"
        ".visible .entry bare(\n"
        "    red.global.add.u32 [%rd1], 1;\n"
        "}\n");
    assert_int_equal(f.nsites, 4);
    assert_string_equal(f.sites[0].source, "one per warp");
    assert_string_equal(f.sites[1].space, "shared");
    assert_string_equal(f.sites[1].source, "per-thread");
    assert_string_equal(f.sites[2].source, "one per block");
    assert_string_equal(f.sites[3].source, "per-thread");
    assert_true(inspect_sass(
        "hand:\n"
        "        /*0000*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "blocky:\n"
        "        /*0000*/                   ATOMS.ADD RZ, [R0], R1 ;\n"
        "        /*0010*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "bare:\n"
        "        /*0000*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n", &f) == 4);
    assert_string_equal(f.sites[0].ptxas, "none");
    assert_string_equal(f.sites[0].sass, "REDG.ADD");
    assert_int_equal(f.sites[0].per_warp, 1);
    assert_int_equal(f.sites[1].per_warp, 0);
    assert_int_equal(f.sites[2].per_warp, 1);
    assert_int_equal(f.sites[3].per_warp, 32);
    assert_tags(&f, "one per warp (source)");
    StrBuf b;
    sb_init(&b);
    inspect_sites(&f, &b);
    assert_non_null(strstr(sb_str(&b), "global REDG.ADD: source one per warp; ptxas none; 1 global atomic per warp\n"));
    assert_non_null(strstr(sb_str(&b), "global REDG.ADD: source per-thread; ptxas none; 32 global atomics per warp\n"));
    sb_free(&b);
}

/* A sequence at the end of one function does not feed the first atomic of the
 * next (both start at offset 0 in nvdisasm -c output). */
static void sample_function_boundary(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "a:\n"
        "        /*0000*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*0010*/                   UPOPC UR6, UR4 ;\n"
        "        /*0020*/                   UFLO.U32 UR5, UR4 ;\n"
        "b:\n"
        "        /*0000*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n"
        "        /*0010*/                   EXIT ;\n");
    assert_int_equal(f.warp_aggregated, 0);
    assert_int_equal(f.sass.plain, 1);
}

static void sample_redux(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*00d0*/                   VOTEU.ANY UR4, UPT, PT ;\n"
        "        /*00f0*/                   UFLO.U32 UR4, UR4 ;\n"
        "        /*0100*/                   ISETP.EQ.U32.AND P0, PT, R0, UR4, PT ;\n"
        "        /*0110*/                   REDUX.SUM UR5, R2 ;\n"
        "        /*0120*/                   MOV R7, UR5 ;\n"
        "        /*0130*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR6][R4.64], R7 ;\n");
    assert_int_equal(f.redux_aggregated, 1);
    assert_int_equal(f.warp_aggregated, 0);
    assert_int_equal(f.sass.total, 1);          /* REDUX itself is not an atomic */
    assert_string_equal(f.agg_seq, "VOTEU.ANY+UFLO.U32+REDUX.SUM");
    assert_tags(&f, "REDUX-aggregated");
}

static void sample_smem_increment(void **state)
{
    (void)state;
    InspectFacts f = sass_facts("        /*0190*/                   ATOMS.POPC.INC.32 RZ, [UR4] ;\n");
    assert_int_equal(f.smem_hw_inc, 1);
    assert_int_equal(f.sass.atoms, 1);
    assert_int_equal(f.sass.smem_inc, 1);
    assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds, "ATOMS.POPC.INC.32"), 1);
    assert_tags(&f, "smem HW inc");
}

static const char SAMPLE_CAS_LOOP[] =
    ".L_x_0:\n"
    "        /*0170*/                   HADD2.BF16_V2 R3, R7, R2.H0_H0 ;\n"
    "        /*0190*/                   ATOMG.E.CAS.STRONG.GPU PT, R7, [R2.64], R4, R5 ;\n"
    "        /*01a0*/                   ISETP.NE.U32.AND P0, PT, R6, R7, PT ;\n"
    "        /*01c0*/               @P0 BRA `(.L_x_0) ;\n"
    "        /*01d0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*01e0*/                   BRA `(.L_x_1);\n";

static void sample_cas_loop(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(SAMPLE_CAS_LOOP);
    assert_int_equal(f.sass.cas, 1);
    assert_int_equal(f.cas_loop, 1);
    assert_tags(&f, "CAS loop");

    /* the loop's label on the CAS itself: the branch targets the CAS */
    f = sass_facts(
        "        /*0180*/                   MOV R4, R7 ;\n"
        ".L_x_2:\n"
        "        /*0190*/                   ATOMG.E.CAS.STRONG.GPU PT, R7, [R2.64], R4, R5 ;\n"
        "        /*01a0*/                   ISETP.NE.U32.AND P0, PT, R4, R7, PT ;\n"
        "        /*01b0*/               @P0 BRA `(.L_x_2) ;\n");
    assert_int_equal(f.cas_loop, 1);

    /* the same CAS with the branch going forward: a single attempt */
    f = sass_facts(
        "        /*0190*/                   ATOMG.E.CAS.STRONG.GPU PT, R7, [R2.64], R4, R5 ;\n"
        "        /*01c0*/               @P0 BRA `(.L_x_0) ;\n"
        ".L_x_0:\n"
        "        /*01d0*/                   EXIT ;\n");
    assert_int_equal(f.sass.cas, 1);
    assert_int_equal(f.cas_loop, 0);
    assert_tags(&f, "per-thread");
}

/* cuobjdump -sass: encoding comments after each instruction and on a line of
 * their own, "Function : name" headers, hex branch targets. */
static void sample_cuobjdump_format(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "\tcode for sm_80\n"
        "\t\tFunction : loop\n"
        "\t.headerflags\t@\"EF_CUDA_SM80 EF_CUDA_PTX_SM(EF_CUDA_SM80)\"\n"
        "        /*0170*/                   LDS R6, [R2] ;                  /* 0x0000000002067984 */\n"
        "                                                                  /* 0x000e240000000800 */\n"
        "        /*0180*/                   ATOMG.E.CAS.STRONG.GPU PT, R7, [R2.64], R4, R5 ;  /* 0x00000004020773a9 */\n"
        "                                                                  /* 0x000e2800001ee105 */\n"
        "        /*0190*/               @P0 BRA 0x170 ;                     /* 0xffffffd000000947 */\n"
        "                                                                  /* 0x000fea000383ffff */\n"
        "        /*01a0*/                   EXIT ;                          /* 0x000000000000794d */\n");
    assert_int_equal(f.sass.total, 1);
    assert_int_equal(f.cas_loop, 1);
}

static void sample_packed_vector_wide_scope(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*0100*/                   ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, R4, [R2.64], R5 ;\n"
        "        /*0110*/                   REDG.E.ADD.BF16x2.RN.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "        /*0120*/                   REDG.E.ADD.F32x4.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R8 ;\n"
        "        /*0130*/                   ATOMG.E.CAS.128.STRONG.GPU PT, R8, [R2.64], R12, R16 ;\n"
        "        /*0140*/                   REDG.E.ADD.64.STRONG.SYS desc[UR4][R2.64], R4 ;\n"
        "        /*0150*/                   RED.E.ADD.F32.FTZ.RN.STRONG.SM [R2.64], R4 ;\n");
    assert_int_equal(f.sass.total, 6);
    assert_int_equal(f.sass.packed_f16x2, 1);
    assert_int_equal(f.sass.packed_bf16x2, 1);
    assert_int_equal(f.sass.vector, 2);
    assert_int_equal(f.sass.b64, 1);
    assert_int_equal(f.sass.scope_sys, 1);
    assert_int_equal(f.sass.scope_cta, 1);
    assert_int_equal(f.sass.cas, 1);
    assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds, "ATOMG.ADD.F16x2"), 1);
    assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds, "REDG.ADD.64.SYS"), 1);
    assert_int_equal(kind_count(f.sass.kinds, f.sass.nkinds, "RED.ADD.F32.SM"), 1);
    assert_tags(&f, "per-thread, native f16x2, native bf16x2, vector");
}

/* The generic packed atomic's shared-memory path: QSPC, then an ATOMS.CAST.SPIN
 * loop.  It is a fallback, not a CAS loop of the main path. */
static void sample_generic_fallback(void **state)
{
    (void)state;
    InspectFacts f = sass_facts(
        "        /*0110*/                   ATOM.E.ADD.F16x2.RN.STRONG.GPU P0, RZ, desc[UR4][R2.64], R5 ;\n"
        "        /*0120*/               @P0 EXIT ;\n"
        "        /*0130*/                   QSPC.E.S P0, RZ, [R2] ;\n"
        "        /*0140*/              @!P0 BRA `(.L_x_0) ;\n"
        ".L_x_1:\n"
        "        /*0160*/                   LDS R6, [R2] ;\n"
        "        /*0180*/                   ATOMS.CAST.SPIN R7, [R2], R6, R7 ;\n"
        "        /*0190*/                   ISETP.EQ.U32.AND P0, PT, R7, 0x1, PT ;\n"
        "        /*01a0*/              @!P0 BRA `(.L_x_1) ;\n"
        "        /*01b0*/                   EXIT ;\n"
        ".L_x_0:\n"
        "        /*01c0*/                   LD.E R0, desc[UR4][R2.64] ;\n");
    assert_int_equal(f.generic_fallback, 1);
    assert_int_equal(f.cas_loop, 0);
    assert_int_equal(f.sass.atom, 1);
    assert_int_equal(f.sass.atoms, 1);
    assert_tags(&f, "per-thread, native f16x2, generic fallback");
}

static void sample_not_a_listing(void **state)
{
    (void)state;
    InspectFacts f;
    inspect_facts_init(&f);
    assert_int_equal(inspect_sass("nvdisasm fatal : Input file 'x' is not a cubin\n", &f), -1);
    assert_int_equal(f.has_sass, 0);
    assert_int_equal(inspect_sass("", &f), -1);
    assert_tags(&f, "not inspected");
}

/* PTX snippets, hand-written: forms nvcc did not emit for the kernels. */
static void sample_ptx_forms(void **state)
{
    (void)state;
    InspectFacts f = ptx_facts(
        "\tred.global.add.u64 \t[%rd1], %rd2;\n"
        "\t@%p1 red.relaxed.cta.shared.add.u32 \t[%r1], 1;\n"
        "\tatom.shared::cluster.add.u32 \t%r2, [%r3], 1;\n"
        "\tatom.global.v2.f16x2.add.noftz \t{%r4, %r5}, [%rd4], {%r6, %r7};\n"
        "\t// atom.global.add.u32 in a comment is not counted\n"
        "\tatom.exch.b64 \t%rd5, [%rd6], %rd7;\n");
    assert_int_equal(f.ptx.red, 2);
    assert_int_equal(f.ptx.atom, 3);
    assert_int_equal(f.ptx.global, 2);
    assert_int_equal(f.ptx.shared, 1);
    assert_int_equal(f.ptx.cluster, 1);
    assert_int_equal(f.ptx.generic, 1);
    assert_int_equal(f.ptx.b64, 2);
    assert_int_equal(f.ptx.packed, 1);
    assert_int_equal(f.ptx.vector, 1);
    assert_int_equal(f.ptx.scope_cta, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "red.global.add.u64"), 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "red.shared.cta.add.u32"), 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.shared::cluster.add.u32"), 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.add.v2.f16x2"), 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.exch.b64"), 1);
}

static void sample_many_kinds_overflow(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    static const char *const ops[] = {"add", "min", "max", "and", "or", "xor", "exch", "inc", "dec"};
    static const char *const types[] = {"u32", "s32"};
    for (int o = 0; o < 9; o++)
        for (int t = 0; t < 2; t++)
            sb_printf(&b, "\tatom.global.%s.%s %%r1, [%%rd1], 1;\n", ops[o], types[t]);
    InspectFacts f = ptx_facts(sb_str(&b));
    assert_int_equal(f.ptx.atom, 18);
    assert_int_equal(f.ptx.nkinds, INSPECT_MAX_KINDS);
    assert_int_equal(f.ptx.kinds_other, 18 - INSPECT_MAX_KINDS);
    sb_free(&b);
}

/* ==== 2. PTX from nvcc (tests/data/inspect/ptx) ============================== */

static char *load(const char *dir, const char *name, const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, DATA "/%s/%s.%s", dir, name, ext);
    return file_read(path, NULL);
}

static InspectFacts ptx_file(const char *name)
{
    char *t = load("ptx", name, "ptx");
    if (!t)
        fail_msg("%s/ptx/%s.ptx missing: regenerate with tests/data/inspect/capture.sh", DATA,
                 name);
    InspectFacts f = ptx_facts(t);
    free(t);
    return f;
}

static void ptx_counter_and_float(void **state)
{
    (void)state;
    InspectFacts f = ptx_file("counter_u32.sm_90");
    assert_int_equal(f.ptx.atom, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.add.u32"), 1);
    f = ptx_file("counter_u64.sm_75");
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.add.u64"), 1);
    assert_int_equal(f.ptx.b64, 1);
    f = ptx_file("float_add_sys.sm_90");
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.sys.add.f32"), 1);
    assert_int_equal(f.ptx.scope_sys, 1);
    f = ptx_file("smem_inc.sm_80");
    assert_int_equal(f.ptx.shared, 1);
    assert_int_equal(f.ptx.global, 1);
}

/* The 16-bit add: a CAS loop in the PTX below sm_90 (cuda_bf16.hpp's
 * emulation); one scalar atom.add.bf16 from sm_90, with no loop in the PTX. */
static void ptx_bf16_cas_loop(void **state)
{
    (void)state;
    InspectFacts f = ptx_file("bf16_add.sm_80");
    assert_int_equal(f.ptx.cas, 1);
    assert_int_equal(f.ptx.b16, 1);
    assert_int_equal(f.ptx.cas_loop, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.cas.b16"), 1);
    f = ptx_file("bf16_add.sm_90");
    assert_int_equal(f.ptx.cas, 0);
    assert_int_equal(f.ptx.cas_loop, 0);
    assert_int_equal(f.ptx.generic, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.add.bf16"), 1);
    f = ptx_file("cas_u32.sm_120");             /* atom.relaxed.global.cas.b32, no loop */
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.cas.b32"), 1);
    assert_int_equal(f.ptx.cas_loop, 0);
}

static void ptx_packed_and_vector(void **state)
{
    (void)state;
    InspectFacts f = ptx_file("half2_add.sm_75");       /* inline asm "{ atom...; }" */
    assert_int_equal(f.ptx.packed, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.add.f16x2"), 1);
    f = ptx_file("vec_f32x4.sm_90");
    assert_int_equal(f.ptx.vector, 1);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.add.v4.f32"), 1);
    f = ptx_file("vec_f32x4.sm_80");
    assert_int_equal(f.ptx.vector, 0);
    assert_int_equal(kind_count(f.ptx.kinds, f.ptx.nkinds, "atom.global.add.f32"), 4);
}

/* The point: the PTX keeps one atom per call site for every arch. */
static void ptx_keeps_one_atom_per_site(void **state)
{
    (void)state;
    static const char *const archs[] = {"sm_75", "sm_80", "sm_90", "sm_120"};
    for (int a = 0; a < 4; a++) {
        char name[64];
        snprintf(name, sizeof name, "counter_u32.%s", archs[a]);
        InspectFacts f = ptx_file(name);
        assert_int_equal(f.ptx.atom + f.ptx.red, 1);
        snprintf(name, sizeof name, "redux_sum.%s", archs[a]);
        f = ptx_file(name);
        assert_int_equal(f.ptx.atom + f.ptx.red, 1);
    }
}

/* ==== 3. real nvdisasm listings (tests/data/inspect/sass) ==================== */

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
        "\"smem_hw_inc\":0,\"generic_fallback\":0,\"agg_seq\":\"VOTEU.ANY+UFLO.U32+POPC\",\"sites\":[{\"space\":\"global\",\"source\":\"per-thread\",\"ptxas\":\"warp-aggregated\",\"sass\":\"REDG.ADD\",\"per_warp\":1}],"
        "\"regs\":12,\"spill_stores\":0,\"spill_loads\":0,\"smem_static\":0,"
        "\"ptx\":{\"atom\":1,\"red\":0,\"global\":1,\"shared\":0,\"cluster\":0,\"generic\":0,"
        "\"cas\":0,\"b16\":0,\"packed\":0,\"vector\":0,\"b64\":0,\"scope_cta\":0,"
        "\"scope_cluster\":0,\"scope_sys\":0,\"cas_loop\":0,"
        "\"kinds\":{\"atom.global.add.u32\":1},\"kinds_other\":0},"
        "\"sass\":{\"total\":1,\"ATOM\":0,\"ATOMG\":0,\"ATOMS\":0,\"RED\":0,\"REDG\":1,"
        "\"REDAS\":0,\"smem_inc\":0,\"cas\":0,\"b16\":0,\"packed_f16x2\":0,"
        "\"packed_bf16x2\":0,\"vector\":0,\"b64\":0,\"scope_sys\":0,\"scope_cta\":0,"
        "\"plain\":0,\"kinds\":{\"REDG.ADD\":1},\"kinds_other\":0}}");

    /* without SASS: the PTX stands, one line says what SASS needs */
    InspectFacts p = ptx_file("counter_u32.sm_90");
    sb_reset(&b);
    inspect_summary(&p, &b);
    assert_non_null(strstr(sb_str(&b), "PTX: 1 atom.global.add.u32; no SASS (needs nvdisasm)"));
    sb_reset(&b);
    inspect_to_json(&p, &b);
    assert_non_null(strstr(sb_str(&b), "\"sass_available\":false"));
    assert_non_null(strstr(sb_str(&b), "\"regs\":null"));
    assert_non_null(strstr(sb_str(&b), "\"sass\":null}"));
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
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(sample_uniform_aggregation),
        cmocka_unit_test(sample_vector_datapath_aggregation),
        cmocka_unit_test(sample_unpredicated_is_not_aggregated),
        cmocka_unit_test(sample_window_limits),
        cmocka_unit_test(sample_function_boundary),
        cmocka_unit_test(sample_sites),
        cmocka_unit_test(sample_redux),
        cmocka_unit_test(sample_smem_increment),
        cmocka_unit_test(sample_cas_loop),
        cmocka_unit_test(sample_cuobjdump_format),
        cmocka_unit_test(sample_packed_vector_wide_scope),
        cmocka_unit_test(sample_generic_fallback),
        cmocka_unit_test(sample_not_a_listing),
        cmocka_unit_test(sample_ptx_forms),
        cmocka_unit_test(sample_many_kinds_overflow),
    };
    const struct CMUnitTest ptx[] = {
        cmocka_unit_test(ptx_counter_and_float),
        cmocka_unit_test(ptx_bf16_cas_loop),
        cmocka_unit_test(ptx_packed_and_vector),
        cmocka_unit_test(ptx_keeps_one_atom_per_site),
    };
    const struct CMUnitTest listings[] = {
        cmocka_unit_test(captured_counter_aggregated),
        cmocka_unit_test(captured_float_not_aggregated),
        cmocka_unit_test(captured_cas16_loops),
        cmocka_unit_test(captured_packed),
        cmocka_unit_test(captured_smem_increment),
        cmocka_unit_test(captured_redux),
        cmocka_unit_test(captured_vector_and_generic),
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
    int failed = cmocka_run_group_tests_name("hand-written format samples", samples, NULL, NULL);
    failed += cmocka_run_group_tests_name("nvcc PTX", ptx, NULL, NULL);
    failed += cmocka_run_group_tests_name("captured nvdisasm listings", listings, NULL, NULL);
    failed += cmocka_run_group_tests_name("disassembler plumbing", tool, tool_setup,
                                          tool_teardown);
    if (failed)
        return 1;
    if (g_missing) {
        printf("test_inspect: %d captured listing(s) missing: skipped (see above)\n", g_missing);
        return 77;
    }
    return 0;
}
