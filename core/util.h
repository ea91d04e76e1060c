/* util: the error slot, arenas, string builders and hashing shared by every
 * stage of kvx.
 *
 * Invariants: a KvxError is filled at most once per failure (the first, most
 * precise message wins: kvx_error_set on an already-set error is a no-op), and
 * its attached log is owned by the error.  Arena memory lives until arena_free;
 * nothing allocated from an arena is freed on its own. */
#ifndef KVX_UTIL_H
#define KVX_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>


#if defined(__GNUC__)
#define KVX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KVX_PRINTF(f, a)
#endif

/* Error codes double as process exit statuses where a command fails whole. */
typedef enum {
    KVX_OK = 0,
    KVX_EFAIL = 1,     /* a command ran but found failures (e.g. no GPU) */
    KVX_EINPUT = 2,    /* bad spec, bad template, bad command line */
    KVX_EIO = 3,       /* files, databases, processes */
    KVX_ECOMPILE = 4,  /* NVRTC */
    KVX_ECUDA = 5,     /* the driver API */
    KVX_EINTERNAL = 6, /* a broken invariant caught without aborting */
} KvxCode;

/* A source position: file, 1-based line and column (0 when unknown). */
typedef struct SrcPos {
    const char *file;
    int line;
    int col;
} SrcPos;

typedef struct KvxError {
    int code;        /* KvxCode; 0 while unset */
    char file[512];  /* empty when the error has no position */
    int line, col;
    char msg[1536];
    char *log;       /* optional attached log (NVRTC's), malloc'd, owned */
} KvxError;

void kvx_error_set(KvxError *e, int code, const SrcPos *pos, const char *fmt, ...)
    KVX_PRINTF(4, 5);
void kvx_error_vset(KvxError *e, int code, const SrcPos *pos, const char *fmt, va_list ap)
    KVX_PRINTF(4, 0);
/* Attach a copy of log (len bytes) to an error already set. */
void kvx_error_attach_log(KvxError *e, const char *log, size_t len);
void kvx_error_clear(KvxError *e);
/* "file:line:col: msg" (or "kvx: msg" without a position), then the log. */
void kvx_error_print(const KvxError *e, FILE *f);

/* A broken invariant: names the expression and file:line, then aborts. */
#define KVX_ASSERT(x)                                                          \
    ((x) ? (void)0 : kvx_error_assert_fail(#x, __FILE__, __LINE__))
_Noreturn void kvx_error_assert_fail(const char *expr, const char *file, int line);

/* malloc/calloc/realloc that abort on exhaustion: kvx treats out-of-memory as
 * fatal rather than threading it through every caller. */
void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t n);
char *mem_strdup(const char *s);

/* ---- arena ---------------------------------------------------------------- */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);                       /* accepts NULL */
void *arena_alloc(Arena *a, size_t n);           /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) KVX_PRINTF(2, 3);

/* ---- string builder ------------------------------------------------------ */
typedef struct StrBuf {
    char *p;     /* always NUL-terminated once anything was added */
    size_t len;
    size_t cap;
} StrBuf;
void sb_init(StrBuf *b);
void sb_free(StrBuf *b);
void sb_reset(StrBuf *b);                        /* len = 0, keeps memory */
void sb_put(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_putc(StrBuf *b, char c);
void sb_printf(StrBuf *b, const char *fmt, ...) KVX_PRINTF(2, 3);
void sb_vprintf(StrBuf *b, const char *fmt, va_list ap) KVX_PRINTF(2, 0);
const char *sb_str(const StrBuf *b);             /* "" when empty */
char *sb_take(StrBuf *b);                        /* caller frees; b is reset */

/* The first control character of s (below 0x20, or DEL; with lines_ok,
 * newline and tab are allowed), or NULL. */
const char *sb_first_control(const char *s, int lines_ok);
/* s with each control character written as an escape (\n, \t, \r, \xNN), so
 * that a value put on a line of a source, a comment or a TSV stays on it. */
void sb_put_escaped(StrBuf *b, const char *s);

/* ---- files ---------------------------------------------------------------- */
/* Read a whole file; returns malloc'd NUL-terminated text or NULL with errno. */
char *file_read(const char *path, size_t *len);
/* Read a whole regular file of at most max bytes, checked before reading (a
 * device such as /dev/zero never ends).  NULL with errno: EISDIR for a
 * directory, EINVAL for anything else that is not a regular file, EFBIG when
 * it is larger than max; file_read_why() words it. */
char *file_read_max(const char *path, size_t max, size_t *len);
/* Why file_read_max failed, for "cannot read 'x': WHY": errno's text, or
 * "it is a directory", "it is not a regular file", "it is larger than N bytes". */
const char *file_read_why(int errnum, size_t max, char *buf, size_t n);
/* Write atomically: to path.tmp.PID, then rename, and only over a regular
 * file or nothing (a directory: EISDIR; a link or a device: EINVAL).  0 or -1
 * (errno set). */
int file_write_atomic(const char *path, const void *data, size_t len);
/* The same of n parts written one after the other (a part of size 0 is
 * skipped).  0 or -1 (errno). */
int file_write_atomic_parts(const char *path, const void *const parts[], const uint64_t sizes[], int n);
/* Remove a folder and the files in it (not folders in it); quiet. */
void file_remove_dir(const char *dir);
/* mkdir -p.  0 or -1. */
int file_mkdir_p(const char *path);
/* The directory part of path ("." when none), malloc'd. */
char *path_dir(const char *path);
/* dir/rel unless rel is absolute, malloc'd. */
char *path_join(const char *dir, const char *rel);
/* 1 when dir/name is a regular file this process may execute, its path then
 * in out (n bytes); else 0.  An empty dir is no directory. */
int path_exe_at(const char *dir, const char *name, char *out, size_t n);
/* path_exe_at over $PATH's entries in order, the first found in out; 0 when
 * none.  Empty entries are skipped: a tool is never taken from wherever kvx
 * happens to be started. */
int path_search(const char *name, char *out, size_t n);

/* ---- hashing -------------------------------------------------------------- */
typedef struct Sha256 {
    uint32_t h[8];
    uint64_t nbytes;
    uint8_t buf[64];
    size_t nbuf;
} Sha256;
void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t n);
void sha256_final(Sha256 *s, uint8_t out[32]);
/* Hex digest of data, written to hex[65]. */
void sha256_hex(const void *data, size_t n, char hex[65]);
/* Hex digest of the concatenation of NUL-separated parts (NULL-terminated). */
void sha256_hex_parts(const char *const *parts, char hex[65]);

/* FNV-1a of n bytes: for hash tables, not for identity (that is sha256). */
uint64_t hidx_hash(const void *data, size_t n);

/* An open-addressing table of indices into the caller's array, so that a
 * duplicate check over n items is linear, not quadratic.  Zeroed is empty. */
typedef struct HashIdx {
    uint64_t *hash;
    int *idx;        /* -1: empty slot */
    size_t cap, n;
} HashIdx;
/* The stored index whose hash is h and which same(stored, ctx) accepts; else
 * stores idx under h and returns -1. */
int hidx_add(HashIdx *t, uint64_t h, int idx, int (*same)(int stored, const void *ctx),
             const void *ctx);
void hidx_free(HashIdx *t);

/* Monotonic clock in milliseconds. */
double wall_now_ms(void);

#endif
