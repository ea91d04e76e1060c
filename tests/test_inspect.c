/* test_inspect: the PTX/SASS atomic classifier (compile/inspect.c) on two of its
 * three kinds of input (the third, captured listings, and the disassembler
 * plumbing are test_inspect_sass.c's):
 *  1. hand-written format samples: short SASS/PTX snippets typed here in the
 *     nvdisasm/cuobjdump format, to pin each heuristic and its edge cases
 *     (window limits, predicates, function boundaries, cuobjdump syntax);
 *  2. PTX produced by nvcc from tests/data/inspect/kernels/ (ptx/, checked in). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/inspect_fixture.h"

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

/* A variant of two kernels (a launch list): each kernel's PTX and SASS
 * part, the header with each, so that an atomic of one kernel is that
 * kernel's and not the other's; nvdisasm's sections and cuobjdump's
 * "Function :" both cut; a device function's section is no kernel. */
static void kernels_cut_apart(void **state)
{
    (void)state;
    static const char PTX[] =
        ".version 8.8\n.target sm_90\n"
        ".visible .entry first(\n\t.param .u64 first_param_0\n)\n{\n"
        "\tatom.global.add.u32 \t%r1, [%rd1], 1;\n}\n"
        ".visible .entry second(\n\t.param .u64 second_param_0\n)\n{\n"
        "\tst.global.u32 \t[%rd1], %r1;\n}\n";
    static const char SASS[] =
        "\t.target\tsm_90\n\n"
        "//--------------------- .text.second --------------------------\n"
        "second:\n"
        "        /*0000*/                   STG.E desc[UR4][R2.64], R5 ;\n"
        "        /*0010*/                   EXIT ;\n"
        "//--------------------- .text.helper --------------------------\n"
        "helper:\n"
        "        /*0000*/                   RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "//--------------------- .text.first --------------------------\n"
        "first:\n"
        "        /*0000*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "        /*0010*/                   EXIT ;\n";
    static const char CUOBJDUMP[] =
        "\tcode for sm_90\n"
        "\t\tFunction : first\n"
        "        /*0000*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
        "\t\tFunction : second\n"
        "        /*0000*/                   EXIT ;\n";
    char names[4][INSPECT_NAME_MAX];
    assert_int_equal(inspect_entries(PTX, names, 4), 2);
    assert_string_equal(names[0], "first");
    assert_string_equal(names[1], "second");
    StrBuf b;
    sb_init(&b);
    const char *kernel[] = {"first", "second"};
    const int atoms[] = {1, 0};
    for (int k = 0; k < 2; k++) {
        InspectFacts f;
        inspect_facts_init(&f);
        sb_reset(&b);
        assert_int_equal(inspect_kernel_part(PTX, 0, kernel[k], &b), 0);
        assert_non_null(strstr(sb_str(&b), ".target sm_90"));
        inspect_ptx(sb_str(&b), &f);
        assert_int_equal(f.ptx.atom, atoms[k]);
        sb_reset(&b);
        assert_int_equal(inspect_kernel_part(SASS, 1, kernel[k], &b), 0);
        assert_true(inspect_sass(sb_str(&b), &f) >= 0);
        assert_int_equal(f.sass.total, atoms[k]);   /* helper's RED is neither's */
        assert_string_equal(f.sass.arch, "sm_90");
        sb_reset(&b);
        assert_int_equal(inspect_kernel_part(CUOBJDUMP, 1, kernel[k], &b), 0);
        assert_int_equal(strstr(sb_str(&b), "REDG") != NULL, atoms[k]);
    }
    sb_reset(&b);
    assert_int_equal(inspect_kernel_part(PTX, 0, "third", &b), -1);
    sb_free(&b);
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

/* Loads and stores from the PTX (no SASS): the width is the vector count
 * times the type's size; predicated ones count, param/local/generic do not. */
static void ptx_memory(void **state)
{
    (void)state;
    InspectFacts f = ptx_file("vec_f32x4.sm_90");
    assert_string_equal(f.mem.source, "PTX");
    assert_int_equal(f.mem.ld_global, 1);
    assert_int_equal(f.mem.ld_global_bytes, 16);
    StrBuf b;
    sb_init(&b);
    inspect_memory(&f, &b);
    assert_string_equal(sb_str(&b), "PTX: 1 ld.global.v4.f32 (16 B)");
    f = ptx_facts("\tld.param.u64 %rd1, [p];\n"
                  "\t@%p1 ld.global.nc.v2.u64 {%rd2, %rd3}, [%rd1];\n"
                  "\tst.shared.u16 [%r1], %rs1;\n"
                  "\tld.shared::cta.v4.b32 {%r2, %r3, %r4, %r5}, [%r1];\n"
                  "\tst.global.cs.b8 [%rd1], %rs2;\n"
                  "\tld.u32 %r6, [%rd4];\n"
                  "\tld.local.u32 %r7, [%rd5];\n");
    sb_reset(&b);
    inspect_memory(&f, &b);
    assert_string_equal(sb_str(&b), "PTX: 1 ld.global.nc.v2.u64 (16 B), 1 st.shared.u16 (2 B), 1 "
                                    "ld.shared::cta.v4.b32 (16 B), 1 st.global.b8 (1 B)");
    assert_int_equal(f.mem.ld_shared_bytes, 16);
    assert_int_equal(f.mem.st_global_bytes, 1);
    f = ptx_facts("\tret;\n");
    sb_reset(&b);
    inspect_memory(&f, &b);
    assert_string_equal(sb_str(&b), "PTX: no global or shared loads or stores");
    sb_free(&b);
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

/* A coalesced group's leader (cooperative groups) adds the group's size: the
 * PTX reads the active mask, the lanes below (thread_rank() == 0) and a popc
 * (size()) before the atomic, on every arch: one per warp by the source, so 1
 * global atomic per warp where ptxas leaves it alone. */
static void ptx_cg_leader_one_per_warp(void **state)
{
    (void)state;
    static const char *const archs[] = {"sm_75", "sm_80", "sm_90", "sm_120"};
    for (int a = 0; a < 4; a++) {
        char name[64];
        snprintf(name, sizeof name, "cg_leader.%s", archs[a]);
        InspectFacts f = ptx_file(name);
        assert_int_equal(f.nsites, 1);
        if (strcmp(f.sites[0].source, "one per warp"))
            fail_msg("%s: source %s (expected one per warp)", name, f.sites[0].source);
        assert_true(inspect_sass("cg_leader:\n"
                                 "        /*0000*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R7 ;\n",
                                 &f) == 1);
        assert_int_equal(f.sites[0].per_warp, 1);
        assert_tags(&f, "one per warp (source)");
    }
    /* The mask alone, then a per-thread atomic: no leader, no claim. */
    InspectFacts f = ptx_facts(".visible .entry masked(\n"
                               "    activemask.b32 %r1;\n"
                               "    atom.global.add.u32 %r3, [%rd1], %r1;\n"
                               "}\n");
    assert_string_equal(f.sites[0].source, "per-thread");
}

/* PTX of n sites, each a global add. */
static char *many_sites(int n)
{
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, ".visible .entry many(\n");
    for (int i = 0; i < n; i++)
        sb_printf(&b, "    red.global.add.u32 [%%rd%d], 1;\n", i);
    sb_puts(&b, "}\n");
    return b.p;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Every site is listed (40: more than the 16 once kept), and past the 128
 * kept a line counts the rest. */
static void sample_many_sites(void **state)
{
    (void)state;
    char *ptx = many_sites(40);
    InspectFacts f = ptx_facts(ptx);
    free(ptx);
    assert_int_equal(f.nsites, 40);
    assert_int_equal(f.sites_more, 0);
    StrBuf b;
    sb_init(&b);
    inspect_sites(&f, &b);
    assert_int_equal(count_lines(sb_str(&b), "global (no SASS): source per-thread"), 40);
    assert_null(strstr(sb_str(&b), "more site"));
    ptx = many_sites(INSPECT_MAX_SITES + 3);
    f = ptx_facts(ptx);
    free(ptx);
    assert_int_equal(f.nsites, INSPECT_MAX_SITES);
    assert_int_equal(f.sites_more, 3);
    sb_reset(&b);
    inspect_sites(&f, &b);
    assert_int_equal(count_lines(sb_str(&b), "global (no SASS): source per-thread"), INSPECT_MAX_SITES);
    assert_non_null(strstr(sb_str(&b), "3 more sites (over 128, not listed)\n"));
    sb_reset(&b);
    inspect_to_json(&f, &b);
    assert_non_null(strstr(sb_str(&b), "],\"sites_more\":3"));
    sb_free(&b);
}

/* ==== 3. real nvdisasm listings (tests/data/inspect/sass) ==================== */

int main(void)
{
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(sample_uniform_aggregation),
        cmocka_unit_test(sample_vector_datapath_aggregation),
        cmocka_unit_test(sample_unpredicated_is_not_aggregated),
        cmocka_unit_test(sample_window_limits),
        cmocka_unit_test(sample_function_boundary),
        cmocka_unit_test(kernels_cut_apart),
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
        cmocka_unit_test(sample_many_sites),
    };
    const struct CMUnitTest ptx[] = {
        cmocka_unit_test(ptx_counter_and_float),
        cmocka_unit_test(ptx_bf16_cas_loop),
        cmocka_unit_test(ptx_packed_and_vector),
        cmocka_unit_test(ptx_memory),
        cmocka_unit_test(ptx_keeps_one_atom_per_site),
        cmocka_unit_test(ptx_cg_leader_one_per_warp),
    };
    int failed = cmocka_run_group_tests_name("hand-written format samples", samples, NULL, NULL);
    failed += cmocka_run_group_tests_name("nvcc PTX", ptx, NULL, NULL);
    return failed ? 1 : 0;
}
