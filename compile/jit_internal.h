/* jit_internal: what compile/jit.c shares with compile/jitproc.c; nothing
 * outside compile/ includes it. */
#ifndef KVX_JIT_INTERNAL_H
#define KVX_JIT_INTERNAL_H

#include "jit.h"

/* Run NVRTC on job with the full option list, filling ok, log, ptx, cubin,
 * compile_ms and the ptxas report.  0 when NVRTC ran (ok says whether the
 * source compiled), -1 with err otherwise (options rejected, NVRTC failed). */
int jit_nvrtc_compile(JitJob *job, const char *const *opts, int nopts, KvxError *err);

/* A compile's SASS facts (inspect_job_facts) into job->inspect_json, when it
 * made a CUBIN and they could be made; left NULL otherwise. */
void jit_fresh_facts(JitJob *job);

#endif
