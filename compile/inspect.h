/* inspect: what the compiler made of a variant's atomics, read from its PTX and
 * its SASS.
 *
 * The PTX that NVRTC emits keeps one atom/red per call site; the interesting
 * decisions (warp aggregation, CAS-loop emulation of 16-bit adds, the
 * shared-memory fallback of a generic packed atomic) are taken by ptxas and are
 * visible only in SASS.  So inspection is two passes over text:
 *
 *   inspect_ptx   counts atom/red by kind (operation, type, state space, scope,
 *                 vector width) and finds CAS loops written in the source;
 *   inspect_sass  counts ATOM/ATOMG/ATOMS/RED/REDG/REDAS by kind and classifies
 *                 the sites (heuristics below), from nvdisasm -c or cuobjdump
 *                 -sass text, sm_75 .. sm_120.
 *
 * SASS comes from nvdisasm on the CUBIN (inspect_disassemble); where no
 * disassembler exists, the PTX facts stand alone and has_sass stays 0.
 *
 * SASS heuristics (each documented where it is coded in inspect.c):
 *  - warp aggregation: a predicated atomic preceded, inside its window, by a
 *    vote (VOTE.ANY / VOTEU.ANY), a leader find (FLO / UFLO) and a population
 *    count (POPC / UPOPC): one lane adds the warp's count.
 *  - REDUX aggregation: as above with REDUX.* (sm_80+) instead of the count:
 *    one lane adds the warp's reduced value.
 *  - shuffle-tree aggregation: a predicated atomic preceded inside its window
 *    by at least five SHFL.BFLY/SHFL.DOWN steps (what ptxas does for a varying
 *    integer add on sm_75, where REDUX does not exist, on full warps).
 *  - CAS loop: a CAS atomic with a later branch of the same function whose
 *    target lies at or before it (a backward branch around the CAS).
 *  - hardware shared-memory increment: ATOMS.POPC.INC.
 *  - generic fallback: a QSPC (state-space query) followed by a shared-memory
 *    atomic: the path ptxas adds beside a generic packed atomic in case the
 *    address is shared.  Its ATOMS.CAST.SPIN loop is the fallback's, not
 *    counted as a CAS loop.
 * The window of an atomic is the instructions before it in the same basic
 * block: back to the nearest label that a branch names (BRA, BSSY) or an
 * unconditional BRA/EXIT/RET, at most INSPECT_WINDOW instructions.
 * Conditional EXITs do not end it. */
#ifndef KVX_INSPECT_H
#define KVX_INSPECT_H

#include "core/util.h"
#include "jit.h"

#define INSPECT_MAX_KINDS 16    /* distinct kinds kept per side; more -> kinds_other */
#define INSPECT_WINDOW 32       /* instructions looked back from an atomic */

/* One kind of atomic instruction and how many times it occurs, e.g.
 * "atom.global.add.u32" (PTX) or "REDG.ADD.64" (SASS, with .E, .STRONG, .GPU,
 * .RN, .FTZ dropped). */
typedef struct InspectKind {
    char name[48];
    int count;
} InspectKind;

typedef struct InspectPtx {
    int atom, red;                        /* instructions */
    int global, shared, cluster, generic; /* by state space (cluster: shared::cluster) */
    int cas;                              /* atom.cas */
    int b16;                              /* scalar 16-bit (.b16/.u16/.s16/.f16/.bf16) */
    int packed;                           /* .f16x2 / .bf16x2 */
    int vector;                           /* .v2 / .v4 / .v8 */
    int b64;                              /* 64-bit scalar (.b64/.u64/.s64/.f64) */
    int scope_cta, scope_cluster, scope_sys; /* explicit non-gpu scopes */
    int cas_loop;                         /* atom.cas with a backward bra around it */
    int nkinds, kinds_other;
    InspectKind kinds[INSPECT_MAX_KINDS]; /* in order of first appearance */
} InspectPtx;

typedef struct InspectSass {
    char arch[16];                        /* from the listing's .target / arch line */
    int total;                            /* atomic instructions, all opcodes */
    int atom, atomg, atoms, red, redg, redas; /* by opcode (ATOM/RED: generic, or
                                             global before sm_90) */
    int smem_inc;                         /* ATOMS.POPC.INC */
    int cas;                              /* .CAS / .CAST forms */
    int b16;                              /* scalar 16-bit forms */
    int packed_f16x2, packed_bf16x2;      /* native packed 16-bit */
    int vector;                           /* .F32x2/.F32x4/.128/V2/V4 ... */
    int b64;                              /* .64 */
    int scope_sys, scope_cta;             /* .SYS, .SM/.CTA */
    int plain;                            /* atomics in no recognised pattern:
                                             one per executing thread */
    int nkinds, kinds_other;
    InspectKind kinds[INSPECT_MAX_KINDS];
} InspectSass;

/* One atomic call site: what the source does there (from the PTX before it
 * in its function) and what ptxas made of it (from the SASS), apart.
 * Source: "per-thread", "one per warp" (a ballot and popc, a redux.sync or a
 * shuffle tree before it), "one per block" (a global atomic after a
 * bar.sync), heuristics like those of the SASS.  ptxas: "none",
 * "warp-aggregated", "REDUX", "shuffle tree", "CAS loop", "HW increment",
 * "generic-address" (a generic atomic with its shared-memory fallback). */
#define INSPECT_MAX_SITES 128    /* kept per variant; more are counted in sites_more */
typedef struct InspectSite {
    char space[8];              /* "global" or "shared" (PTX generic counts as global) */
    char source[16];
    char ptxas[20];             /* "" until the SASS is read */
    char sass[48];              /* the SASS kind, "REDG.ADD" */
    int per_warp;               /* global atomic instructions per warp execution of
                                   the site: 1 or 32 (a full warp); 0 for shared */
} InspectSite;

/* The global and shared loads and stores: LDG/STG/LDS/STS in SASS, ld/st
 * .global and .shared in PTX (generic, local, param and const accesses are
 * not counted).  What a vectorised copy became: LDG.E.128 moves 16 bytes a
 * thread, LDG.E 4.  From the SASS where there is one, else from the PTX;
 * source says which. */
typedef struct InspectMemKind {
    char name[48];              /* "LDG.E.128", "ld.global.nc.v4.f32" */
    int bytes;                  /* per thread and instruction */
    int count;
} InspectMemKind;

typedef struct InspectMem {
    char source[8];             /* "SASS", "PTX" */
    int ld_global, st_global, ld_shared, st_shared;  /* instructions */
    int ld_global_bytes, st_global_bytes, ld_shared_bytes, st_shared_bytes; /* the widest,
                                   bytes per thread; 0 without one */
    int nkinds, kinds_other;
    InspectMemKind kinds[INSPECT_MAX_KINDS]; /* in order of first appearance */
} InspectMem;

typedef struct InspectFacts {
    int has_ptx, has_sass;
    InspectMem mem;                       /* loads and stores (inspect_mem.c) */
    InspectPtx ptx;
    InspectSass sass;
    /* classifications from SASS: numbers of sites (0 = absent) */
    int warp_aggregated;                  /* vote + leader + popc -> predicated atomic */
    int redux_aggregated;                 /* vote + leader + REDUX -> predicated atomic */
    int shfl_aggregated;                  /* shuffle tree -> predicated atomic */
    int cas_loop;                         /* CAS in a loop (generic fallback excluded) */
    int smem_hw_inc;                      /* ATOMS.POPC.INC */
    int generic_fallback;                 /* QSPC-guarded shared-memory path */
    char tool[64];                        /* the disassembler: "nvdisasm 13.5.37"; "" without SASS */
    InspectSite sites[INSPECT_MAX_SITES]; /* in PTX order; SASS atomics matched in order by space */
    int nsites;
    int sites_more;                       /* sites past INSPECT_MAX_SITES: counted, not kept */
    char agg_seq[96];                     /* first aggregated site, e.g.
                                             "VOTEU.ANY+UFLO.U32+POPC" */
    /* compile figures (compile/jit.h JitJob), -1 when unknown */
    int regs;
    int spill_stores, spill_loads;        /* bytes */
    int smem_static;                      /* bytes */
} InspectFacts;

/* Zero the facts, compile figures to -1. */
void inspect_facts_init(InspectFacts *f);

/* Copy the ptxas figures (registers, spills, static shared memory) of job. */
void inspect_set_compile(InspectFacts *f, const JitJob *job);

/* Analyse PTX text into f->ptx and set f->has_ptx.  Returns the number of
 * atom/red instructions found. */
int inspect_ptx(const char *ptx, InspectFacts *f);

/* The loads and stores as one line: "SASS: 1 LDG.E.128 (16 B), 1 STG.E.128
 * (16 B)"; "PTX: no global or shared loads or stores"; nothing without facts. */
void inspect_memory(const InspectFacts *f, StrBuf *out);

/* Analyse a SASS listing (nvdisasm -c or cuobjdump -sass text) into f->sass and
 * the classifications, and set f->has_sass.  Returns the number of atomic
 * instructions, or -1 (f untouched) when the text holds no instruction line. */
int inspect_sass(const char *sass, InspectFacts *f);

/* The disassembler: $KVX_NVDISASM, then nvdisasm in $CUDA_HOME/bin,
 * $CUDA_PATH/bin, the toolkit kvx was built against, /usr/local/cuda/bin, then
 * PATH; failing those, cuobjdump in the same places.  Looked up once
 * (thread-safe); the string is static.  NULL when none exists. */
const char *inspect_find_disassembler(void);
/* Where it was found ("the CUDA toolkit", "PATH", "$KVX_NVDISASM", "the PyPI
 * package nvidia-cuda-nvdisasm in kvx's tools folder"); "" when none. */
const char *inspect_disassembler_origin(void);
/* Its version as it reports it ("13.5.37"), "unknown" when it does not say;
 * asked once. */
const char *inspect_disassembler_version(void);
/* The version of any tool that answers --version as the CUDA tools do. */
void inspect_tool_version(const char *tool, char *out, size_t n);

/* Disassemble a CUBIN with the found tool (nvdisasm -c, or cuobjdump -sass)
 * through a temporary file.  Returns the malloc'd listing; NULL with err set
 * when the tool fails (its stderr attached); NULL with err untouched when no
 * disassembler exists. */
char *inspect_disassemble(const void *cubin, size_t len, KvxError *err);
/* The same with an explicit tool path; the flavour (nvdisasm or cuobjdump) is
 * taken from the file name, anything else is run as nvdisasm. */
char *inspect_disassemble_with(const char *tool, const void *cubin, size_t len,
                               KvxError *err);

/* The job's SASS listing, malloc'd: the one its cache entry keeps (a warm
 * inspect runs no disassembler), else its CUBIN disassembled, cut to its own
 * functions where it is a grouped program's member, and kept in the entry.
 * NULL with err set when the tool fails, NULL with err untouched without a
 * disassembler or CUBIN. */
char *inspect_job_sass(const JitJob *job, KvxError *err);

/* A listing made with the compile (JitJob.sass) kept in the job's entry
 * under the name inspect_job_sass looks up: 0, or -1 as jit_cache_put. */
int inspect_job_keep_sass(const JitJob *job, const char *sass);

/* inspect_job's JSON from a listing already made (NULL: none), not
 * disassembling: the members of a grouped program share one disassembly. */
void inspect_job_facts_from(const JitJob *job, const char *listing, StrBuf *out);

/* Inspect a compiled job: PTX, then SASS when a disassembler exists, then the
 * compile figures.  0, or -1 with err when the disassembler failed (the PTX
 * facts are still filled). */
int inspect_job(const JitJob *job, InspectFacts *f, KvxError *err);

/* Bump when the classifier or the JSON changes: cached results of an older
 * classifier are then not reused. */
#define INSPECT_SCHEMA 4

/* inspect_job as the JSON of inspect_to_json, into out (appended), kept in
 * the job's cache entry (job->dir, when it has one) as
 * inspect-KEY.json (jit_cache_put: checksummed with the entry), KEY naming
 * the disassembler (path, size, mtime), the extractor's sources (not the commit) and INSPECT_SCHEMA: a
 * second run disassembles nothing.  Safe to call on several threads.  0, or
 * -1 with err as inspect_job (nothing cached then). */
int inspect_job_json(const JitJob *job, StrBuf *out, KvxError *err);

/* Its two halves: inspect_job as JSON into out (appended), the cache not
 * read (0, or -1 with err as inspect_job); and that JSON kept in the job's
 * entry under the name inspect_job_json looks up (0, or -1 as
 * jit_cache_put).  The compile processes (jitproc.c) make the facts of each
 * fresh compile and the parent keeps them, so that a run the cache serves
 * disassembles nothing. */
int inspect_job_facts(const JitJob *job, StrBuf *out, KvxError *err);
int inspect_job_keep(const JitJob *job, const char *json, size_t len);

/* ---- kernel by kernel (inspect_kernels.c) ---- */

#define INSPECT_NAME_MAX 128
#define INSPECT_MAX_KERNELS 16

/* The entry points of ptx, in its order, at most max: the count. */
int inspect_entries(const char *ptx, char names[][INSPECT_NAME_MAX], int max);

/* The part of a listing (PTX, or SASS when is_sass: nvdisasm -c or cuobjdump
 * -sass) that is kernel's, after the lines before the first function,
 * appended to out.  0, or -1 when the listing has no such function. */
int inspect_kernel_part(const char *listing, int is_sass, const char *kernel, StrBuf *out);

/* The lines before a SASS listing's first function, then each function part
 * whose name keep(name, ctx) accepts, in order, appended to out (a listing
 * of no function whole).  The number of parts kept.  A grouped program's
 * listing cut to one member's functions (compile/jit_group.c). */
int inspect_listing_keep(const char *listing, int (*keep)(const char *name, void *ctx), void *ctx,
                         StrBuf *out);

/* The facts of one kernel of job into f: its PTX and SASS parts (sass NULL:
 * none) and its own ptxas figures. */
void inspect_kernel_facts(const JitJob *job, const char *sass, const char *kernel, InspectFacts *f);

/* The sites, one per line: "global REDG.ADD: source one per warp; ptxas none;
 * 1 global atomic per warp", then "N more sites (over INSPECT_MAX_SITES)" when
 * there were more.  Nothing when there are none. */
void inspect_sites(const InspectFacts *f, StrBuf *out);

/* The classification as a short comma-separated text, the cell of
 * inspect_table: "warp-aggregated", "CAS loop (ptxas)", "native f16x2,
 * generic fallback", "per-thread", "no atomics", "no SASS". */
void inspect_tags(const InspectFacts *f, StrBuf *out);

/* The facts as one JSON object with a stable key order (stored per variant,
 * store/store.h StoreVariant.inspect_json).  Keys: sass_available, arch, tags,
 * warp_aggregated, redux_aggregated, shfl_aggregated, cas_loop, smem_hw_inc,
 * generic_fallback, agg_seq, regs, spill_stores, spill_loads, smem_static
 * (null when unknown), ptx {...counts, kinds{}}, sass {...counts, kinds{}}
 * (null without SASS). */
void inspect_to_json(const InspectFacts *f, StrBuf *out);

/* One line, e.g. "SASS: 1 REDG.ADD (ptxas warp-aggregated: VOTEU.ANY+UFLO.U32
 * +POPC); PTX: 1 atom.global.add.u32; 16 regs".  Without SASS it ends the PTX
 * part with "; no SASS (needs nvdisasm)". */
void inspect_summary(const InspectFacts *f, StrBuf *out);

/* The listing with a gutter: ">> " on atomic instructions, " * " on the
 * instructions of an aggregation sequence, a loop's backward branch or a
 * generic fallback, "   " elsewhere; atomic lines get a trailing
 * "// kvx: ..." note naming what was recognised. */
void inspect_mark(const char *listing, int is_sass, StrBuf *out);

/* Markdown table of inspect_tags: one row per variant, one column per arch;
 * facts[v * narch + a]. */
void inspect_table(const char *const *labels, int nvar, const char *const *archs,
                   int narch, const InspectFacts *facts, StrBuf *out);

#endif
