/* facts: what expressions know of the target device: DeviceFacts, filled
 * from a table per arch without a GPU (facts_for_arch), from a named part's
 * figures (facts_for_gpu, facts_gpu_name) or by the worker from a GPU, and
 * read by name (facts_lookup, facts_names).  gen/facts.c defines them. */
#ifndef KVX_FACTS_H
#define KVX_FACTS_H

#include <stdint.h>

#include "core/expr.h"

/* Device facts visible to expressions.  Without a GPU they are the nominal
 * figures of a representative part of the target arch (facts_for_arch). */
typedef struct DeviceFacts {
    char arch[16];          /* "sm_90" */
    char name[128];         /* "NVIDIA H200" or "nominal sm_90" */
    int cc;                 /* 90 */
    int sm_count;
    int64_t l2_bytes;
    int warp;
    int max_threads;        /* per block */
    int64_t smem_block;     /* opt-in maximum dynamic + static per block */
    int64_t smem_sm;
    int regs_sm;
    int max_threads_sm;
    double peak_gbs;        /* memory bandwidth, GB/s (1e9 bytes/s) */
    int64_t mem_bytes;
    int nominal;            /* 1: figures are a table's, not a GPU's */
    char gpu[32];           /* the named target they are (--gpu), or "" */
} DeviceFacts;

/* Fill facts with the nominal values for arch ("sm_80"); 0 or -1 if unknown. */
int facts_for_arch(const char *arch, DeviceFacts *f);
/* Fill facts with the figures of a named GPU ("H200-SXM-141GB"), its arch
 * with them; 0 or -1 if no target has that name. */
int facts_for_gpu(const char *name, DeviceFacts *f);
/* The name of named target i (0, 1, ...), or NULL past the last. */
const char *facts_gpu_name(int i);
/* Look up a fact by its expression name (sm_count, l2_bytes, warp, cc,
 * max_threads, smem_block, smem_sm, peak_gbs, ...).  1 found, 0 not. */
int facts_lookup(const DeviceFacts *f, const char *name, Value *out);
extern const char *const facts_names[];

#endif
