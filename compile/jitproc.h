/* jitproc: NVRTC in processes.  NVRTC serialises compiles inside the library
 * (16 threads gained 1.3x over one on a 16-core machine, 8 processes about
 * 7x), so jit_compile_all hands each fresh compile to a pool of compile
 * processes: the binary re-executed as `kvx __compile`, one per compile
 * thread, started on the first cache miss (a run the cache serves starts
 * none), stopped when jit_compile_all returns.
 *
 * The parent keeps the key, the cache, the scratch, the order and the error
 * reports (compile/jit.c); a child gets an arch, the full NVRTC option list
 * and one or more sources (name and text: a grouped program's members,
 * compile/jit_group.c), and answers with what NVRTC made of each (log, PTX,
 * the ptxas report, the compile time, its symbol), the CUBINs once each
 * (the members of a program share one), and the SASS facts, which the
 * parent keeps in the entries.
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

/* The most sources one frame carries (a grouped program's members). */
#define JITPROC_MAX_GROUP 256

/* Where one frame's time went, ms of wall: the child's start (when this
 * frame started it), the round trip, and the child's work inside it (the
 * rest of the trip is the pipes and the framing). */
typedef struct JitTrip {
    double start_ms, wall_ms, work_ms;
} JitTrip;

/* Compile jobs[0..n) with the NVRTC options opts on an idle child (started
 * when none is): one source alone (n 1), or n as one program
 * (jit_group_compile), filling what jit_nvrtc_compile fills and each job's
 * inspect_json.  Safe on as many threads as the pool has children.  0 as
 * jit_nvrtc_compile; 1 when a child died on them (a program's members are
 * then compiled again one by one: only the one it dies on is a failed
 * compile, ok 0, crashed, its log saying how: not to be cached); -1 with
 * err when NVRTC failed outside the sources or no child could be started. */
int jitproc_compile(JitProcs *ps, JitJob **jobs, int n, const char *const *opts, int nopts, JitTrip *trip,
                    KvxError *err);

/* The child: compile the jobs read from in, answer each on out, until in
 * ends.  The exit status. */
int jitproc_main(int in, int out);

#endif
