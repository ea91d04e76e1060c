/* jit_internal: what compile/jit.c shares with compile/jitproc.c and its
 * cache, compile/jit_cache.c; nothing outside compile/ includes it. */
#ifndef KVX_JIT_INTERNAL_H
#define KVX_JIT_INTERNAL_H

#include "jit.h"

/* Run NVRTC on job with the full option list, filling ok, log, ptx, cubin,
 * compile_ms and the ptxas report.  0 when NVRTC ran (ok says whether the
 * source compiled), -1 with err otherwise (options rejected, NVRTC failed). */
int jit_nvrtc_compile(JitJob *job, const char *const *opts, int nopts, KvxError *err);

/* 1 when source has an #include line (a header NVRTC parses: the slow
 * compiles, whose headers a process precompiles once). */
int jit_source_includes(const char *source);

/* A compile's SASS facts (inspect_job_facts) into job->inspect_json, when it
 * made a CUBIN and they could be made; left NULL otherwise. */
void jit_fresh_facts(JitJob *job);

/* The job's name in messages: its file name, or "kernel.cu". */
const char *jit_job_name(const JitJob *job);

/* ---- the cache (jit_cache.c) ---------------------------------------------------- */

/* The cache key; the options are the full list passed to NVRTC. */
void jit_cache_key(const JitJob *job, const char *const *opts, int nopts, char key[65]);

/* ROOT/KE/KEY, malloc'd. */
char *jit_cache_entry_path(const char *root, const char *key);

/* Load a complete entry into job.  0 on a hit, -1 when absent or unusable (a
 * file that does not match its checksum says so on stderr: it is compiled
 * again). */
int jit_cache_load(JitJob *job, const char *dir);

/* Write job's outputs as the entry `dir`.  overwrite: replace an existing entry
 * that does not match its checksum; otherwise an entry published first by
 * another process wins, being the same compile.  0 or -1 with err. */
int jit_cache_store(JitJob *job, const char *const *opts, int nopts, const char *dir, int overwrite,
                    KvxError *err);

/* The scratch directory, made on first use; NULL with err when it cannot be. */
const char *jit_scratch_dir(JitScratch *s, KvxError *err);

#endif
