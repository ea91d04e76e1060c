/* jitproc: NVRTC in processes.  NVRTC serialises compiles inside the library
 * (16 threads gained 1.3x over one on a 16-core machine, 8 processes about
 * 7x), so jit_compile_all hands each fresh compile to a pool of compile
 * processes: the binary re-executed as `kvx __compile`, one per compile
 * thread, started on the first cache miss (a run the cache serves starts
 * none), stopped when jit_compile_all returns.
 *
 * The parent keeps the key, the cache, the scratch, the order and the error
 * reports (compile/jit.c); a child gets a job's name, source, arch and full
 * NVRTC option list, and answers with what NVRTC made (log, PTX, CUBIN, the
 * ptxas report, the compile time) and the SASS facts of a CUBIN
 * (inspect_job_facts), which the parent keeps in the entry.
 *
 * Wire: each message is a frame: a tag (u32), a byte count (u64), the bytes;
 * the fields inside are u32/i32/f64 in host order and blobs (u64 length + 1,
 * 0 for absent, then the bytes).  Parent and child are the same binary.
 *
 * A child that dies (a crash inside NVRTC) makes that job a failed compile
 * whose log says so, not cached; the next job starts a new child.
 * $KVX_TEST_COMPILE_CRASH (tests only): a child given a job whose name
 * contains that text kills itself with SIGSEGV before compiling it.
 * $KVX_TEST_COMPILE_DELAY=TEXT:MS (tests only): a child given a job whose
 * name contains TEXT sleeps MS before compiling it. */
#ifndef KVX_JITPROC_H
#define KVX_JITPROC_H

#include "jit.h"

typedef struct JitProcs JitProcs;

/* Compile in processes from now on: exe is this binary, which runs
 * jitproc_main for `EXE __compile` (cli/main.c).  Never called: compiles stay
 * on threads of this process (the library's tests). */
void jitproc_enable(const char *exe);
int jitproc_enabled(void);

/* Room for n children, none started.  jitproc_free stops them; accepts NULL. */
JitProcs *jitproc_new(int n);
void jitproc_free(JitProcs *ps);

/* Compile job with the NVRTC options opts on an idle child (started when
 * none is), filling what jit_nvrtc_compile fills and job->inspect_json.
 * Safe on as many threads as the pool has children.  0 as jit_nvrtc_compile;
 * 1 when the child died on it (job->ok 0, the log says how: not to be
 * cached); -1 with err when NVRTC failed outside the source or no child
 * could be started. */
int jitproc_compile(JitProcs *ps, JitJob *job, const char *const *opts, int nopts, KvxError *err);

/* The child: compile the jobs read from in, answer each on out, until in
 * ends.  The exit status. */
int jitproc_main(int in, int out);

#endif
