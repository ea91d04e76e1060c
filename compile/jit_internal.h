/* jit_internal: what compile/jit.c shares with compile/jitproc.c and its
 * cache, compile/jit_cache.c; nothing outside compile/ includes it. */
#ifndef KVX_JIT_INTERNAL_H
#define KVX_JIT_INTERNAL_H

#include "jit.h"

#include <pthread.h>
#include <stdatomic.h>

/* Run NVRTC on job with the full option list, filling ok, log, ptx, cubin,
 * compile_ms and the ptxas report.  0 when NVRTC ran (ok says whether the
 * source compiled), -1 with err otherwise (options rejected, NVRTC failed). */
int jit_nvrtc_compile(JitJob *job, const char *const *opts, int nopts, KvxError *err);

/* The same with NVRTC headers: header_names[i]'s text is headers[i] (the
 * members of a grouped program, jit_group.c). */
int jit_nvrtc_compile_with(JitJob *job, int nheaders, const char *const *headers,
                           const char *const *header_names, const char *const *opts, int nopts,
                           KvxError *err);

/* 1 when source has an #include line (a header NVRTC parses: the slow
 * compiles, whose headers a process precompiles once). */
int jit_source_includes(const char *source);

/* A compile's SASS facts (inspect_job_facts) into job->inspect_json, when it
 * made a CUBIN and they could be made; left NULL otherwise. */
void jit_fresh_facts(JitJob *job);

/* The job's name in messages: its file name, or "kernel.cu". */
const char *jit_job_name(const JitJob *job);

/* ---- grouped programs (jit_group.c) ---------------------------------------------- */

#define JIT_NAME_MAX 128
#define JIT_GROUP_SUFFIX "__kvx"        /* entry point K of member I is K__kvxI */
#define JIT_GROUP_NS "kvx_g"            /* member I's namespace: kvx_gI */

/* A member of a grouped program: its job and its entry points. */
typedef struct GroupMember {
    JitJob *job;
    char entries[JIT_MAX_KERNELS][JIT_NAME_MAX];
    int nentries;
    const char *macros;         /* the names its source #defines, one a line (the
                                   program #undefs them after it); NULL: none */
} GroupMember;

/* A CUBIN shared by a program's members: job->cubin points into data while
 * job->cubin_blob holds a reference.  path: where the first entry that kept
 * it wrote it (the others link that file: one copy on disk). */
struct JitBlob {
    atomic_int refs;
    pthread_mutex_t mu;         /* guards path */
    char *path;
    size_t len;
    unsigned char data[];
};
JitBlob *jit_blob_new(const void *data, size_t len);    /* one reference */
void jit_blob_ref(JitBlob *b);
void jit_blob_unref(JitBlob *b);                        /* accepts NULL */

/* Whether source can be a member (compile/jit_group.c's head says when):
 * its entry points' names into names (at most max) and the macros it
 * defines appended to macros (one a line; may be NULL), the count; -1 with
 * *why (static text) when it must compile alone. */
int jit_group_entries(const char *source, char (*names)[JIT_NAME_MAX], int max, StrBuf *macros,
                      const char **why);

/* The program's text (its members as NVRTC headers of their own names),
 * malloc'd. */
char *jit_group_program(const GroupMember *m, int n);

/* The member a symbol belongs to ("k__kvx3", "_ZN6kvx_g34stepEv": 3), -1. */
int jit_group_owner(const char *name, size_t n);

/* Member's PTX from the program's: the header, the items its entry points
 * reach, its names written back; malloc'd, its length in *len. */
char *jit_group_ptx(const char *ptx, int member, size_t *len);

/* A member job's part of the program's SASS listing (the functions its PTX
 * names), its names written back; malloc'd. */
char *jit_group_sass(const char *listing, const JitJob *job);

/* Compile m[0..n) as one program with the full option list opts (n 1: the
 * job alone, as jit_nvrtc_compile and jit_fresh_facts), filling each job as
 * its own compile would, its CUBIN the program's; members a failure names
 * compile alone, the rest as a program again.  0, or -1 with err when
 * NVRTC failed outside the sources. */
int jit_group_compile(GroupMember *m, int n, const char *const *opts, int nopts, KvxError *err);

/* ---- one job's compile (jit.c), shared with the batch (jit_batch.c) ----------- */

/* The full NVRTC option list of job (in a) and its cache key into job->key;
 * the count in *nopts.  opt->cuda_include must be set (or NULL: none). */
const char **jit_prepare(JitJob *job, const JitOptions *opt, Arena *a, int *nopts);

/* The job's cache entry, CACHE/KE/KEY, into *dir (malloc'd; NULL without a
 * cache or with --no-cache, which never touches it).  1 when the entry was
 * loaded into job; else 0, with *overwrite saying whether a compile must
 * replace what is there (an entry that does not match its checksum). */
int jit_cache_lookup(JitJob *job, const JitOptions *opt, char **dir, int *overwrite);

/* A fresh compile's files kept (the cache entry dir when store allows, else
 * opt->scratch), then its facts beside them, so that a run the cache serves
 * disassembles nothing.  0 or -1 with err (the scratch could not take it). */
int jit_keep_fresh(JitJob *job, const JitOptions *opt, const char *const *opts, int nopts,
                   const char *dir, int overwrite, int store, KvxError *err);

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
