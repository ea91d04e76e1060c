/* walk: a trace of kvx's own function calls, for bench/walk.sh (a case's walk
 * from hand-out to its stored row, counted in functions and files).  Linked
 * into kvx only when built with -DKVX_WALK=ON, which compiles kvx's stage
 * folders with -finstrument-functions: every function entry and exit of the
 * process's main thread calls the hooks below, which append (address, +1 or
 * -1) records to $KVX_WALK_DIR/walk-PID.bin, addresses relative to the
 * executable's load address so that addr2line names them.  Other threads
 * (the compile thread, the host references ahead) are not recorded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NO_TRACE __attribute__((no_instrument_function))

static FILE *walk_out;
static uintptr_t walk_base;
static int walk_state;      /* 0 not opened, 1 recording, -1 off */

NO_TRACE static void walk_open(void *fn)
{
    const char *dir = getenv("KVX_WALK_DIR");
    walk_state = -1;
    if (!dir || !*dir)
        return;
    Dl_info info;
    if (!dladdr(fn, &info))
        return;
    walk_base = (uintptr_t)info.dli_fbase;
    char path[4096];
    snprintf(path, sizeof path, "%s/walk-%ld.bin", dir, (long)getpid());
    if ((walk_out = fopen(path, "wb")))
        walk_state = 1;
}

NO_TRACE static void walk_put(void *fn, int64_t dir)
{
    if (syscall(SYS_gettid) != getpid())
        return;
    if (walk_state == 0)
        walk_open(fn);
    if (walk_state != 1)
        return;
    int64_t rec[2] = {(int64_t)((uintptr_t)fn - walk_base), dir};
    fwrite(rec, sizeof rec, 1, walk_out);
}

NO_TRACE void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    walk_put(fn, 1);
}

NO_TRACE void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    walk_put(fn, -1);
}

/* The file is flushed when the process exits (exit() flushes stdio); a worker
 * ended by a signal leaves a partial file, which the parent's walk does not need. */
