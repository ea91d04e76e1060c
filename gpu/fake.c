/* fake: a fake CUDA driver behind the `CudaApi` table, for running the real
 * worker without a GPU (a test hook; fake.h says what it
 * does and how it is switched on).
 *
 * One worker process, one context, one stream: work runs on the host as it is
 * enqueued, so a stream is always in order and an event is a stamp of the
 * virtual clock (fk.clock_ms) taken when it is recorded.  What a real GPU does
 * later, the fake does at the next synchronisation: report a fault, hang, or
 * spend KVX_FAKE_NS_PER_BYTE's wall time.  A sticky error is kept in fk.sticky
 * and returned by every call that needs the context, as a real driver does
 * after an illegal address. */
#include "fake.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef enum { DO_OK, DO_HANG, DO_CRASH, DO_FAULT, DO_MISMATCH, DO_LOAD_ERROR } Behaviour;

/* Markers: ELF symbols (`__device__ int kvx_fake_hang;`), NUL-terminated as in
 * a string table; the first found wins.  Log names by Behaviour. */
static const struct {
    const char *symbol;
    Behaviour what;
} markers[] = {
    {"kvx_fake_hang", DO_HANG},
    {"kvx_fake_crash", DO_CRASH},
    {"kvx_fake_fault", DO_FAULT},
    {"kvx_fake_mismatch", DO_MISMATCH},
};
static const char *const behaviour_names[] = {"ok", "hang", "crash", "fault", "mismatch",
                                              "load_error"};
_Static_assert(sizeof behaviour_names / sizeof behaviour_names[0] == DO_LOAD_ERROR + 1,
               "behaviour_names follows Behaviour");

struct CUmod_st {
    unsigned char *image;       /* a copy, for function lookups */
    size_t len;
    int is_elf;
    uint64_t hash;              /* of the image: part of each kernel's time */
    Behaviour what;
    int counter_bytes;          /* FakeLaunch's */
    struct CUfunc_st *funcs;    /* looked up so far, freed with the module */
};

/* The last launch of a function, to replay while nothing it reads changed:
 * the worker launches one case up to max_samples times on the same inputs,
 * with its outputs reset to the same init, and a stand-in over 2^26 elements
 * costs what a sample should not.  Inputs ('p') are known by allocation and
 * version (any write makes a new one); outputs ('o') by their contents from
 * the pointer to the end of their allocation, before and after. */
#define MEMO_ARGS 8
typedef struct Memo {
    int valid;
    uint32_t grid[3], block[3];
    uint64_t arg[MEMO_ARGS];        /* scalars' bits; inputs' pointers */
    uint64_t version[MEMO_ARGS];    /* inputs' allocation versions */
    uint64_t out_bytes[MEMO_ARGS];
    unsigned char *pre[MEMO_ARGS], *post[MEMO_ARGS];
} Memo;

struct CUfunc_st {
    struct CUmod_st *mod;
    char name[128];
    const FakeKernel *k;        /* NULL: no stand-in, the launch fails */
    int counter_bytes;          /* FakeLaunch's: its own PTX's, else its module's */
    Memo memo;
    struct CUfunc_st *next;
};

struct CUevent_st {
    double t;                   /* virtual ms when recorded */
    int recorded;
};

struct CUstream_st {
    int unused;
};

struct CUctx_st {
    int device;
};

typedef struct Block {
    unsigned char *p;
    uint64_t bytes;
    uint64_t version;           /* fk.versions at its last write */
} Block;

/* The process's one fake GPU. */
static struct {
    int inited;
    Block *blocks;
    int nblocks, cap;
    uint64_t mem_used, mem_free;    /* KVX_FAKE_MEM_FREE: what allocations may take */
    double clock_ms;                /* virtual */
    double wall_ms;                 /* owed at the next synchronisation */
    double ns_per_byte;             /* KVX_FAKE_NS_PER_BYTE */
    long launches, fault_at;        /* KVX_FAKE_FAULT_LAUNCH */
    uint64_t versions;              /* of allocations, never reused */
    int hang;                       /* a hung kernel is queued */
    CUresult sticky;
    struct CUctx_st ctx[FAKE_MAX_GPUS];
} fk;

#define FAKE_MEM_DEFAULT (141ULL << 30)
#define FAKE_PEAK_BYTES_PER_MS 4.8e9    /* 4800 GB/s */
#define FAKE_HASH_BYTES 64              /* of each pointer argument, into a kernel's time */

int fake_gpus(void)
{
    static int warned;
    const char *v = getenv("KVX_FAKE_GPUS");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!errno && !*end && n >= 0 && n <= FAKE_MAX_GPUS)
        return (int)n;
    if (!warned++)
        fprintf(stderr, "kvx: KVX_FAKE_GPUS is '%s' (expected 0 .. %d); using the real driver\n", v,
                FAKE_MAX_GPUS);
    return 0;
}

static double env_number(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double x = v && *v ? strtod(v, &end) : dflt;
    return v && *v && (*end || !(x >= 0)) ? dflt : x;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* ---- the logs (test hooks: KVX_FAKE_LOG, KVX_FAKE_CALL_LOG) ------------------------ */

/* Append one line of n bytes to path: one write, O_APPEND, so that the lines
 * of several processes do not interleave. */
static void log_append(const char *path, const char *line, int n)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        fprintf(stderr, "kvx fake driver: cannot append to %s\n", path);
    close(fd);
}

/* "<pid> " and the formatted call, a line of $KVX_FAKE_CALL_LOG when set. */
static void call_log(const char *fmt, ...) KVX_PRINTF(1, 2);
static void call_log(const char *fmt, ...)
{
    const char *path = getenv("KVX_FAKE_CALL_LOG");
    if (!path || !*path)
        return;
    char what[200], line[256];  /* line: room for any pid and what, so never cut */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    log_append(path, line, snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), what));
}

/* ---- errors ----------------------------------------------------------------- */

static const struct {
    CUresult r;
    const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error (fake)"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument (fake)"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory (fake)"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error (fake)"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal (fake)"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid (fake)"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle (fake)"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found (fake)"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready (fake)"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered (fake)"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported (fake: no host stand-in for this kernel)"},
};

static CUresult get_error_name(CUresult r, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].r == r) {
            *s = errors[i].name;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult get_error_string(CUresult r, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].r == r) {
            *s = errors[i].text;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* ---- the device ---------------------------------------------------------------- */

static CUresult init(unsigned flags)
{
    (void)flags;
    if (!fk.inited) {
        fk.inited = 1;
        fk.mem_free = (uint64_t)env_number("KVX_FAKE_MEM_FREE", (double)FAKE_MEM_DEFAULT);
        fk.ns_per_byte = env_number("KVX_FAKE_NS_PER_BYTE", 0);
        fk.fault_at = (long)env_number("KVX_FAKE_FAULT_LAUNCH", 0);
    }
    return CUDA_SUCCESS;
}

static CUresult driver_get_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult device_get_count(int *n)
{
    if (!fk.inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    *n = fake_gpus();
    return CUDA_SUCCESS;
}

static CUresult device_get(CUdevice *d, int ordinal)
{
    if (!fk.inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= fake_gpus())
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

static CUresult device_get_name(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "kvx fake device");
    return CUDA_SUCCESS;
}

/* "kvxf" then zeros, the ordinal last: GPU-6b767866-0000-0000-0000-00000000000D. */
static CUresult device_get_uuid(CUuuid *u, CUdevice d)
{
    memset(u, 0, sizeof *u);
    memcpy(u->bytes, "kvxf", 4);
    u->bytes[15] = (char)d;
    return CUDA_SUCCESS;
}

static CUresult device_get_pci_bus_id(char *bus, int len, CUdevice d)
{
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + d);
    return CUDA_SUCCESS;
}

/* The fake device's attributes: an sm_90 part of 132 SMs. */
static const struct {
    CUdevice_attribute attr;
    int value;
} attributes[] = {
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 60 << 20},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 0x7fffffff},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 48 << 10},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 227 << 10},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 228 << 10},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000},
    {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 3125000},
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6144},
    {CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, 1},
};

static CUresult device_get_attribute(int *v, CUdevice_attribute attr, CUdevice d)
{
    (void)d;
    for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; i++)
        if (attributes[i].attr == attr) {
            *v = attributes[i].value;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult device_total_mem(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = (size_t)FAKE_MEM_DEFAULT;
    return CUDA_SUCCESS;
}

static CUresult primary_ctx_retain(CUcontext *ctx, CUdevice d)
{
    if (d < 0 || d >= FAKE_MAX_GPUS)
        return CUDA_ERROR_INVALID_DEVICE;
    fk.ctx[d].device = d;
    *ctx = &fk.ctx[d];
    return CUDA_SUCCESS;
}

static CUresult primary_ctx_release(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

static CUresult ctx_set_current(CUcontext ctx)
{
    return ctx ? fk.sticky : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- memory ------------------------------------------------------------------- */

void *fake_mem(CUdeviceptr p, uint64_t bytes)
{
    for (int i = 0; i < fk.nblocks; i++) {
        uintptr_t base = (uintptr_t)fk.blocks[i].p;
        if (p >= base && p - base <= fk.blocks[i].bytes && bytes <= fk.blocks[i].bytes - (p - base))
            return fk.blocks[i].p + (p - base);
    }
    return NULL;
}

/* The allocation p points into, or NULL. */
static Block *block_of(CUdeviceptr p)
{
    for (int i = 0; i < fk.nblocks; i++) {
        uintptr_t base = (uintptr_t)fk.blocks[i].p;
        if (p >= base && p - base < fk.blocks[i].bytes)
            return &fk.blocks[i];
    }
    return NULL;
}

static CUresult dev_alloc(CUdeviceptr *p, size_t bytes)
{
    if (fk.sticky)
        return fk.sticky;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk.mem_used > fk.mem_free || bytes > fk.mem_free - fk.mem_used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* Every block at a 2 MiB boundary, as the driver places large ones, so
     * that the worker's placement (WORKER_BUF_ALIGN) costs no second block;
     * the pages past `bytes` are never touched. */
    const size_t page = 2u << 20;
    unsigned char *host = aligned_alloc(page, (bytes + page - 1) / page * page);
    if (!host)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* Not zero: what a kernel reads before anything wrote it is garbage on a GPU. */
    memset(host, 0xa5, bytes);
    if (fk.nblocks == fk.cap) {
        fk.cap = fk.cap ? 2 * fk.cap : 64;
        fk.blocks = mem_realloc(fk.blocks, sizeof *fk.blocks * (size_t)fk.cap);
    }
    fk.blocks[fk.nblocks++] = (Block){host, bytes, ++fk.versions};
    fk.mem_used += bytes;
    *p = (CUdeviceptr)(uintptr_t)host;
    return CUDA_SUCCESS;
}

static CUresult dev_free(CUdeviceptr p)
{
    for (int i = 0; i < fk.nblocks; i++)
        if ((uintptr_t)fk.blocks[i].p == p) {
            free(fk.blocks[i].p);
            fk.mem_used -= fk.blocks[i].bytes;
            fk.blocks[i] = fk.blocks[--fk.nblocks];
            if (!fk.nblocks) {
                free(fk.blocks);
                fk.blocks = NULL;
                fk.cap = 0;
            }
            return fk.sticky;
        }
    return fk.sticky ? fk.sticky : CUDA_ERROR_INVALID_VALUE;
}

/* The virtual time of moving bytes at the peak bandwidth. */
static void clock_bytes(uint64_t bytes)
{
    fk.clock_ms += (double)bytes / FAKE_PEAK_BYTES_PER_MS;
}

static CUresult memcpy_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    (void)s;
    void *d = fake_mem(dst, n);
    if (fk.sticky || !d)
        return fk.sticky ? fk.sticky : CUDA_ERROR_INVALID_VALUE;
    memcpy(d, src, n);
    block_of(dst)->version = ++fk.versions;
    clock_bytes(n);
    return CUDA_SUCCESS;
}

static CUresult memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    void *d = fake_mem(dst, n);
    const void *from = fake_mem(src, n);
    if (fk.sticky || !d || !from)
        return fk.sticky ? fk.sticky : CUDA_ERROR_INVALID_VALUE;
    memmove(d, from, n);
    call_log("dtod %zu", n);
    block_of(dst)->version = ++fk.versions;
    clock_bytes(2 * (uint64_t)n);
    return CUDA_SUCCESS;
}

static CUresult memset_async(CUdeviceptr dst, uint32_t v, int size, size_t n)
{
    unsigned char *d = fake_mem(dst, (uint64_t)n * (uint64_t)size);
    if (fk.sticky || !d)
        return fk.sticky ? fk.sticky : CUDA_ERROR_INVALID_VALUE;
    if (size == 1)
        memset(d, (int)v, n);
    for (size_t i = 0; size > 1 && i < n; i++)
        memcpy(d + i * (size_t)size, &v, (size_t)size);   /* little-endian: the low bytes */
    call_log("memset%d %x %zu", 8 * size, v, n);
    if (n)
        block_of(dst)->version = ++fk.versions;
    clock_bytes((uint64_t)n * (uint64_t)size);
    return CUDA_SUCCESS;
}

static CUresult memset_d8_async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    return memset_async(dst, v, 1, n);
}

static CUresult memset_d16_async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
    (void)s;
    return memset_async(dst, v, 2, n);
}

static CUresult memset_d32_async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
    (void)s;
    return memset_async(dst, v, 4, n);
}

/* ---- streams, events and synchronisation ---------------------------------------- */

/* A kernel that never returns: silence until the parent's timeout kills the
 * process; FAKE_HANG_S bounds a stray one. */
_Noreturn static void hang(void)
{
    struct timespec t = {FAKE_HANG_S, 0};
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
    _exit(0);
}

/* Wait for everything enqueued: the hung kernel never ends, the owed wall
 * time passes, a fault is reported. */
static CUresult sync_all(void)
{
    if (fk.hang)
        hang();
    if (fk.wall_ms > 0) {
        double ms = fk.wall_ms;
        struct timespec t = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
        while (nanosleep(&t, &t) < 0 && errno == EINTR)
            ;
        fk.wall_ms = 0;
    }
    return fk.sticky;
}

static CUresult stream_create(CUstream *s, unsigned flags)
{
    (void)flags;
    if (fk.sticky)
        return fk.sticky;
    *s = mem_calloc(1, sizeof **s);
    return CUDA_SUCCESS;
}

static CUresult stream_destroy(CUstream s)
{
    free(s);
    return fk.sticky;
}

static CUresult stream_synchronize(CUstream s)
{
    (void)s;
    return sync_all();
}

static CUresult stream_query(CUstream s)
{
    (void)s;
    if (fk.sticky)
        return fk.sticky;
    return fk.hang ? CUDA_ERROR_NOT_READY : sync_all();
}

static CUresult memcpy_dtoh(void *dst, CUdeviceptr src, size_t n)
{
    CUresult r = sync_all();
    const void *s = fake_mem(src, n);
    if (r != CUDA_SUCCESS || !s)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, s, n);
    clock_bytes(n);
    return CUDA_SUCCESS;
}

static CUresult event_create(CUevent *e, unsigned flags)
{
    (void)flags;
    if (fk.sticky)
        return fk.sticky;
    *e = mem_calloc(1, sizeof **e);
    return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent e)
{
    free(e);
    return fk.sticky;
}

static CUresult event_record(CUevent e, CUstream s)
{
    (void)s;
    if (fk.sticky)
        return fk.sticky;
    e->t = fk.clock_ms;
    e->recorded = 1;
    return CUDA_SUCCESS;
}

static CUresult event_synchronize(CUevent e)
{
    (void)e;
    return sync_all();
}

static CUresult event_elapsed_time(float *ms, CUevent a, CUevent b)
{
    if (fk.sticky)
        return fk.sticky;
    if (!a->recorded || !b->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(b->t - a->t);
    return CUDA_SUCCESS;
}

/* ---- modules ------------------------------------------------------------------- */

/* The bytes of an image: an ELF cubin's extent from its headers, else PTX
 * text up to its NUL.  cuModuleLoadData gets no length either. */
static size_t image_size(const unsigned char *p)
{
    if (memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64)
        return strlen((const char *)p);
    Elf64_Ehdr eh;
    memcpy(&eh, p, sizeof eh);
    uint64_t end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
    if (eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > end)
        end = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, p + eh.e_shoff + (uint64_t)i * eh.e_shentsize, sizeof sh);
        if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > end)
            end = sh.sh_offset + sh.sh_size;
    }
    return (size_t)end;
}

static int bytes_find(const unsigned char *hay, size_t len, const char *needle, size_t n)
{
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (hay[i] == (unsigned char)needle[0] && memcmp(hay + i, needle, n) == 0)
            return 1;
    return 0;
}

/* A string-table entry `name` in an ELF image, or `.entry name(` in PTX. */
static int image_has(const unsigned char *image, size_t len, int is_elf, const char *name)
{
    char want[160];
    int n = is_elf ? snprintf(want, sizeof want, "%c%s%c", 0, name, 0)
                   : snprintf(want, sizeof want, ".entry %s(", name);
    return n > 0 && (size_t)n < sizeof want && bytes_find(image, len, want, (size_t)n);
}

static Behaviour image_behaviour(const unsigned char *image, size_t len, int is_elf)
{
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++)
        if (image_has(image, len, is_elf, markers[i].symbol))
            return markers[i].what;
    return DO_OK;
}

static CUresult module_load_data(CUmodule *m, const void *image)
{
    if (fk.sticky)
        return fk.sticky;
    const unsigned char *p = image;
    size_t len = image_size(p);
    if (len == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    CUmodule mod = mem_calloc(1, sizeof *mod);
    mod->image = mem_alloc(len);
    memcpy(mod->image, p, len);
    mod->len = len;
    mod->is_elf = memcmp(p, ELFMAG, SELFMAG) == 0;
    mod->hash = fnv1a(1469598103934665603ULL, p, len);
    mod->what = image_behaviour(mod->image, len, mod->is_elf);
    /* 64-bit counters are added (atomics), or stored (two_pass's partial counts) */
    mod->counter_bytes = bytes_find(mod->image, len, "global.add.u64", 14) ||
                         bytes_find(mod->image, len, "st.global.u64", 13) ? 8 : 4;
    *m = mod;
    call_log("load %016llx", (unsigned long long)mod->hash);
    return CUDA_SUCCESS;
}

static void memo_clear(Memo *m)
{
    for (int i = 0; i < MEMO_ARGS; i++) {
        free(m->pre[i]);
        free(m->post[i]);
    }
    memset(m, 0, sizeof *m);
}

static CUresult module_unload(CUmodule m)
{
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    call_log("unload %016llx", (unsigned long long)m->hash);
    while (m->funcs) {
        CUfunction f = m->funcs;
        m->funcs = f->next;
        memo_clear(&f->memo);
        free(f);
    }
    free(m->image);
    free(m);
    return fk.sticky;
}

/* The counter width of function name from its own part of the PTX the
 * image carries (NVRTC's CUBIN holds the program's PTX: a grouped program
 * holds its members', 32- and 64-bit ones side by side); the module's where
 * the image holds no such part. */
static int function_counter_bytes(const CUmodule m, const char *name)
{
    char want[160];
    int n = snprintf(want, sizeof want, ".entry %s(", name);
    const unsigned char *end = m->image + m->len, *at = NULL;
    for (const unsigned char *p = m->image; n > 0 && (size_t)n < sizeof want && p + n <= end && !at; p++)
        if (*p == '.' && !memcmp(p, want, (size_t)n))
            at = p;
    if (!at)
        return m->counter_bytes;
    const unsigned char *stop = at + n;
    while (stop + 7 <= end && memcmp(stop, ".entry ", 7))
        stop++;
    size_t len = (size_t)(stop - at);
    return bytes_find(at, len, "global.add.u64", 14) || bytes_find(at, len, "st.global.u64", 13) ? 8 : 4;
}

static CUresult module_get_function(CUfunction *out, CUmodule m, const char *name)
{
    if (fk.sticky)
        return fk.sticky;
    for (CUfunction f = m->funcs; f; f = f->next)
        if (strcmp(f->name, name) == 0) {
            *out = f;
            return CUDA_SUCCESS;
        }
    if (strlen(name) >= sizeof m->funcs->name || !image_has(m->image, m->len, m->is_elf, name))
        return CUDA_ERROR_NOT_FOUND;
    CUfunction f = mem_calloc(1, sizeof *f);
    f->mod = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    /* a grouped program's member: its stand-in is its kernel's, K of K__kvxI */
    char plain[sizeof f->name];
    snprintf(plain, sizeof plain, "%s", name);
    char *suffix = strstr(plain, "__kvx");
    if (suffix && suffix[5] && strspn(suffix + 5, "0123456789") == strlen(suffix + 5))
        *suffix = 0;
    f->k = fake_kernel_find(plain);
    f->counter_bytes = function_counter_bytes(m, name);
    f->next = m->funcs;
    m->funcs = f;
    *out = f;
    return CUDA_SUCCESS;
}

/* A compiled kernel's attributes: 32 registers, no static shared memory. */
static CUresult func_get_attribute(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 48 << 10; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return fk.sticky;
}

static CUresult func_set_attribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && v > 227 << 10)
        return CUDA_ERROR_INVALID_VALUE;
    return fk.sticky;
}

/* ---- launches ------------------------------------------------------------------ */

/* The launch's virtual time, 0.010 .. 0.020 ms (fake.h says from what), and
 * the bytes of the allocations its pointer arguments point into. */
static double kernel_ms(CUfunction f, const FakeLaunch *l, uint64_t *bytes)
{
    uint64_t h = fnv1a(f->mod->hash, f->name, strlen(f->name));
    h = fnv1a(h, l->grid, sizeof l->grid);
    h = fnv1a(h, l->block, sizeof l->block);
    *bytes = 0;
    for (int i = 0; f->k->params[i]; i++) {
        char kind = f->k->params[i];
        if (kind != 'p' && kind != 'o') {
            h = fnv1a(h, l->params[i], kind == 'q' ? 8 : 4);
            continue;
        }
        CUdeviceptr p;
        memcpy(&p, l->params[i], sizeof p);
        const Block *b = block_of(p);
        if (!b)
            continue;
        uint64_t left = b->bytes - (p - (uintptr_t)b->p);
        h = fnv1a(h, (const void *)(uintptr_t)p, left < FAKE_HASH_BYTES ? left : FAKE_HASH_BYTES);
        *bytes += b->bytes;
    }
    return 0.010 + (double)(h % 10001) * 1e-6;
}

/* An argument's bits (scalars zero-extended; pointers whole). */
static uint64_t arg_bits(char kind, void *param)
{
    uint64_t v = 0;
    memcpy(&v, param, kind == 'i' ? 4 : 8);
    return v;
}

/* The bytes from output pointer p to the end of its allocation; NULL without one. */
static unsigned char *out_region(void *param, uint64_t *bytes)
{
    CUdeviceptr p;
    memcpy(&p, param, sizeof p);
    const Block *b = block_of(p);
    *bytes = b ? b->bytes - (p - (uintptr_t)b->p) : 0;
    return b ? (unsigned char *)(uintptr_t)p : NULL;
}

/* 1 when l is f's last launch on the same inputs and output contents: the
 * outputs are then set to what it left.  0: run the stand-in. */
static int memo_replay(CUfunction f, const FakeLaunch *l)
{
    const Memo *m = &f->memo;
    if (!m->valid || memcmp(m->grid, l->grid, sizeof m->grid) || memcmp(m->block, l->block, sizeof m->block))
        return 0;
    const char *kinds = f->k->params;
    for (int i = 0; kinds[i]; i++) {
        uint64_t bytes = 0;
        unsigned char *out = kinds[i] == 'o' ? out_region(l->params[i], &bytes) : NULL;
        if (kinds[i] == 'o' && (!out || bytes != m->out_bytes[i] || memcmp(out, m->pre[i], bytes)))
            return 0;
        if (kinds[i] != 'o' && arg_bits(kinds[i], l->params[i]) != m->arg[i])
            return 0;
        if (kinds[i] == 'p' && (!block_of(m->arg[i]) || block_of(m->arg[i])->version != m->version[i]))
            return 0;
    }
    for (int i = 0; kinds[i]; i++)
        if (kinds[i] == 'o') {
            uint64_t bytes = 0;
            unsigned char *out = out_region(l->params[i], &bytes);
            memcpy(out, m->post[i], m->out_bytes[i]);
            block_of(arg_bits('o', l->params[i]))->version = ++fk.versions;
        }
    return 1;
}

/* Run f's stand-in for l, remembering the launch for memo_replay.  0, or -1
 * on an illegal address. */
static int run_standin(CUfunction f, const FakeLaunch *l)
{
    Memo *m = &f->memo;
    const char *kinds = f->k->params;
    memo_clear(m);
    KVX_ASSERT(strlen(kinds) <= MEMO_ARGS);
    for (int i = 0; kinds[i]; i++) {
        unsigned char *out = kinds[i] == 'o' ? out_region(l->params[i], &m->out_bytes[i]) : NULL;
        m->arg[i] = arg_bits(kinds[i], l->params[i]);
        if (kinds[i] == 'p' && block_of(m->arg[i]))
            m->version[i] = block_of(m->arg[i])->version;
        if (out) {
            m->pre[i] = mem_alloc(m->out_bytes[i]);
            memcpy(m->pre[i], out, m->out_bytes[i]);
        }
    }
    if (f->k->run(l) < 0) {
        memo_clear(m);
        return -1;
    }
    for (int i = 0; kinds[i]; i++)
        if (m->pre[i]) {
            unsigned char *out = out_region(l->params[i], &m->out_bytes[i]);
            m->post[i] = mem_alloc(m->out_bytes[i]);
            memcpy(m->post[i], out, m->out_bytes[i]);
            block_of(m->arg[i])->version = ++fk.versions;
        }
    memcpy(m->grid, l->grid, sizeof m->grid);
    memcpy(m->block, l->block, sizeof m->block);
    m->valid = 1;
    return 0;
}

static CUresult launch(CUfunction f, const uint32_t grid[3], const uint32_t block[3], void **params)
{
    if (fk.sticky)
        return fk.sticky;
    if (!f || !params)
        return CUDA_ERROR_INVALID_VALUE;
    call_log("launch %016llx %s", (unsigned long long)f->mod->hash, f->name);
    Behaviour what = ++fk.launches == fk.fault_at ? DO_FAULT : f->mod->what;
    if (!f->k)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (what == DO_CRASH)
        _exit(9);
    if (what == DO_HANG)
        fk.hang = 1;
    if (what == DO_FAULT)
        fk.sticky = CUDA_ERROR_ILLEGAL_ADDRESS; /* reported by the calls that follow */
    if (what == DO_HANG || what == DO_FAULT)
        return CUDA_SUCCESS;
    FakeLaunch l;
    memcpy(l.grid, grid, sizeof l.grid);
    memcpy(l.block, block, sizeof l.block);
    l.params = params;
    l.mismatch = what == DO_MISMATCH;
    l.counter_bytes = f->counter_bytes;
    uint64_t bytes = 0;
    double ms = kernel_ms(f, &l, &bytes);
    if (!memo_replay(f, &l) && run_standin(f, &l) < 0) {
        fk.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        return CUDA_SUCCESS;
    }
    fk.clock_ms += ms;
    fk.wall_ms += fk.ns_per_byte * (double)bytes / 1e6;
    return CUDA_SUCCESS;
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                              void **extra)
{
    (void)smem;
    (void)s;
    (void)extra;
    const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return launch(f, grid, block, params);
}

static CUresult launch_kernel_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    (void)extra;
    const uint32_t grid[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    const uint32_t block[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    return launch(f, grid, block, params);
}

void fake_cuda_api(CudaApi *api)
{
    *api = (CudaApi){
        .cuGetErrorName = get_error_name,           .cuGetErrorString = get_error_string,
        .cuInit = init,                             .cuDriverGetVersion = driver_get_version,
        .cuDeviceGetCount = device_get_count,       .cuDeviceGet = device_get,
        .cuDeviceGetName = device_get_name,         .cuDeviceGetUuid = device_get_uuid,
        .cuDeviceGetPCIBusId = device_get_pci_bus_id,
        .cuDeviceGetAttribute = device_get_attribute,
        .cuDeviceTotalMem = device_total_mem,       .cuDevicePrimaryCtxRetain = primary_ctx_retain,
        .cuDevicePrimaryCtxRelease = primary_ctx_release,
        .cuCtxSetCurrent = ctx_set_current,         .cuModuleLoadData = module_load_data,
        .cuModuleUnload = module_unload,            .cuModuleGetFunction = module_get_function,
        .cuFuncGetAttribute = func_get_attribute,   .cuFuncSetAttribute = func_set_attribute,
        .cuMemAlloc = dev_alloc,                    .cuMemFree = dev_free,
        .cuMemcpyHtoDAsync = memcpy_htod_async,     .cuMemcpyDtoH = memcpy_dtoh,
        .cuMemcpyDtoDAsync = memcpy_dtod_async,
        .cuMemsetD8Async = memset_d8_async,         .cuMemsetD16Async = memset_d16_async,
        .cuMemsetD32Async = memset_d32_async,       .cuStreamCreate = stream_create,
        .cuStreamDestroy = stream_destroy,          .cuStreamSynchronize = stream_synchronize,
        .cuStreamQuery = stream_query,              .cuEventCreate = event_create,
        .cuEventDestroy = event_destroy,            .cuEventRecord = event_record,
        .cuEventSynchronize = event_synchronize,    .cuEventElapsedTime = event_elapsed_time,
        .cuLaunchKernel = launch_kernel,            .cuLaunchKernelEx = launch_kernel_ex,
        .driver_version = 13000,                    .loaded = 1,
    };
}

/* ---- the case log ----------------------------------------------------------------- */

void fake_log_case(int device, const CaseDesc *c)
{
    const char *path = getenv("KVX_FAKE_LOG");
    if (!path || !*path)
        return;
    size_t len = 0;
    unsigned char *image = (unsigned char *)file_read(c->cubin_path, &len);
    Behaviour b = image ? image_behaviour(image, len, memcmp(image, ELFMAG, SELFMAG) == 0)
                        : DO_LOAD_ERROR;
    free(image);
    char line[256];
    int n = snprintf(line, sizeof line, "%ld %s %d %s\n", (long)getpid(), c->workload_key, device,
                     behaviour_names[b]);
    log_append(path, line, n);
}
