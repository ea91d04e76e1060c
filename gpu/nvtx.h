/* nvtx: named ranges for Nsight Systems and Nsight Compute: one around each
 * case a worker runs (and each launch of `kvx __counters`), named by the
 * case's kernel and label, and one inside it around each batch of samples.
 * All the contention variants share the entry point filter_count; the range
 * is what tells them apart on a timeline (nsys) or in a report (ncu --nvtx,
 * --nvtx-include, --print-nvtx-rename kernel).
 *
 * NVTX3 is header-only: the first call reads NVTX_INJECTION64_PATH, which a
 * tool sets, and loads that library; without one every later call returns
 * through an empty function pointer.  Nothing is linked, and a run without a
 * tool formats a name per range and does nothing else. */
#ifndef KVX_NVTX_H
#define KVX_NVTX_H

#include "core/util.h"

/* Push a range named by the format (cut at 512 bytes). */
void nvtx_push(const char *fmt, ...) KVX_PRINTF(1, 2);
/* Pop the innermost range of this thread. */
void nvtx_pop(void);

#endif
