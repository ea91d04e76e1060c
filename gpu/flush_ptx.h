/* flush_ptx: the read L2 flush, shared by kvx's worker (worker_time.c loads
 * it, worker.c's worker_prepare_launch launches it) and bench/peers.cu
 * (kvx-peers), so that a library call is timed after the same flush as a
 * kvx variant.  Plain C and C++: a string and constants, nothing else.
 *
 * The kernel: every thread of a grid-stride loop loads 16-byte words of the
 * buffer into L2 (ld.global.cg: L2 only, not L1) and folds them into a
 * register, stored only when it equals a constant, so the loads cannot be
 * removed.  PTX for sm_50 and later, compiled by the driver for the device:
 * no NVRTC where it is used.  Its parameters: the buffer, its size in 16-byte
 * words, and where the folded value would go (the buffer itself).
 *
 * The launch (worker.c spells the same numbers): FLUSH_BLOCKS_PER_SM blocks
 * per SM (FLUSH_BLOCKS_DEFAULT when the SM count is unknown) of FLUSH_THREADS
 * threads, over a buffer of FLUSH_L2_FACTOR times the L2 size
 * (FLUSH_BYTES_DEFAULT when the L2 size is unknown), zeroed once and never
 * written again (docs/measurement.md, "The L2 flush"). */
#ifndef KVX_FLUSH_PTX_H
#define KVX_FLUSH_PTX_H

#define FLUSH_KERNEL "kvx_l2_flush"
#define FLUSH_THREADS 256
#define FLUSH_BLOCKS_PER_SM 4
#define FLUSH_BLOCKS_DEFAULT 256
#define FLUSH_L2_FACTOR 2
#define FLUSH_BYTES_DEFAULT (64u << 20)

static const char flush_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry kvx_l2_flush(.param .u64 buf, .param .u64 n16, .param .u64 out)\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<12>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [buf];\n"
    "    ld.param.u64 %rd2, [n16];\n"
    "    ld.param.u64 %rd3, [out];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mad.lo.u32 %r4, %r1, %r2, %r3;\n"
    "    cvt.u64.u32 %rd4, %r4;\n"
    "    mov.u32 %r5, %nctaid.x;\n"
    "    mul.lo.u32 %r6, %r5, %r2;\n"
    "    cvt.u64.u32 %rd5, %r6;\n"
    "    mov.u32 %r7, 0;\n"
    "    setp.ge.u64 %p1, %rd4, %rd2;\n"
    "    @%p1 bra DONE;\n"
    "LOOP:\n"
    "    shl.b64 %rd6, %rd4, 4;\n"
    "    add.s64 %rd7, %rd1, %rd6;\n"
    "    ld.global.cg.v4.u32 {%r8, %r9, %r10, %r11}, [%rd7];\n"
    "    xor.b32 %r7, %r7, %r8;\n"
    "    xor.b32 %r7, %r7, %r9;\n"
    "    xor.b32 %r7, %r7, %r10;\n"
    "    xor.b32 %r7, %r7, %r11;\n"
    "    add.s64 %rd4, %rd4, %rd5;\n"
    "    setp.lt.u64 %p2, %rd4, %rd2;\n"
    "    @%p2 bra LOOP;\n"
    "DONE:\n"
    "    setp.ne.u32 %p1, %r7, 0x9e3779b9;\n"
    "    @%p1 bra END;\n"
    "    st.global.u32 [%rd3], %r7;\n"
    "END:\n"
    "    ret;\n"
    "}\n";

#endif
