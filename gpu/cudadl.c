/* cudadl: dlopen the CUDA driver and fetch its entry points through
 * cuGetProcAddress_v2 (see cudadl.h for the versioning rule). */
#include "cudadl.h"
#include "fake.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

CudaApi cu;

typedef struct EntryPoint {
    const char *name;   /* base name, as cuGetProcAddress wants it */
    int version;        /* ABI version of the typedef the pointer has */
    void **slot;
} EntryPoint;

/* Older drivers: an entry point whose older ABI has the identical signature may
 * be taken at that version when the driver predates the newer one.
 * cuEventElapsedTime_v2 (12.8) only stopped reporting errors of unrelated
 * pending work; its v1 returns the same times. */
static const struct { const char *name; int version; } same_abi_fallbacks[] = {
    {"cuEventElapsedTime", 2000},
};

static int fallback_version(const char *name)
{
    for (size_t i = 0; i < sizeof same_abi_fallbacks / sizeof same_abi_fallbacks[0]; i++)
        if (strcmp(same_abi_fallbacks[i].name, name) == 0)
            return same_abi_fallbacks[i].version;
    return 0;
}

static const char *query_result_text(CUdriverProcAddressQueryResult q)
{
    switch (q) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "found";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "symbol not found";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "version not sufficient";
    default: return "unknown query result";
    }
}

/* dlopen the driver.  The handle stays open for the life of the process:
 * the pointers in cu point into it.  NULL with err. */
static void *driver_open(KvxError *err)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        return lib;
    const char *why = dlerror();
    if (!why || strstr(why, "No such file"))
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "no CUDA driver (libcuda.so.1 not found): measuring needs a GPU");
    else
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "cannot load the CUDA driver libcuda.so.1: %s: measuring needs a GPU", why);
    return NULL;
}

/* The driver version first, at the oldest ABI (it exists in every driver),
 * so that entry points newer than the driver are reported by name. */
static int driver_version(PFN_cuGetProcAddress_v12000 get_proc, CudaApi *api, KvxError *err)
{
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = get_proc("cuDriverGetVersion", (void **)&api->cuDriverGetVersion, 2020,
                          CU_GET_PROC_ADDRESS_DEFAULT, &q);
    if (r != CUDA_SUCCESS || !api->cuDriverGetVersion ||
        api->cuDriverGetVersion(&api->driver_version) != CUDA_SUCCESS) {
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "the CUDA driver does not answer cuDriverGetVersion (CUresult %d, %s)",
                      (int)r, query_result_text(q));
        return -1;
    }
    return 0;
}

/* One entry point at its ABI version (or an identical older one the driver
 * has, fallback_version) into its slot.  0 or -1 with err naming it. */
static int entry_fetch(PFN_cuGetProcAddress_v12000 get_proc, int driver, const EntryPoint *e,
                       KvxError *err)
{
    int ver = e->version;
    if (ver > driver && fallback_version(e->name))
        ver = fallback_version(e->name);
    if (ver > driver) {
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "the CUDA driver supports CUDA %d.%d; kvx needs %d.%d or later (for %s)",
                      driver / 1000, driver % 1000 / 10, ver / 1000, ver % 1000 / 10, e->name);
        return -1;
    }
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    *e->slot = NULL;
    CUresult r = get_proc(e->name, e->slot, ver, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    if (r != CUDA_SUCCESS || !*e->slot) {
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "the CUDA driver (CUDA %d.%d) lacks %s at ABI version %d "
                      "(cuGetProcAddress: CUresult %d, %s)",
                      driver / 1000, driver % 1000 / 10, e->name, ver, (int)r,
                      query_result_text(q));
        return -1;
    }
    return 0;
}

int cudadl_load(KvxError *err)
{
    if (cu.loaded)
        return 0;
    /* Test hook (fake.h): host implementations instead of libcuda's. */
    if (fake_gpus() > 0) {
        fake_cuda_api(&cu);
        return 0;
    }
    CudaApi api;
    memset(&api, 0, sizeof api);
    const EntryPoint table[] = {
#define X(n, ver) {#n, ver, (void **)&api.n},
        CUDADL_FUNCS(X)
#undef X
    };
    void *lib = driver_open(err);
    if (!lib)
        return -1;
    PFN_cuGetProcAddress_v12000 get_proc =
        (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
    if (!get_proc) {
        kvx_error_set(err, KVX_EFAIL, NULL,
                      "the CUDA driver is too old (libcuda.so.1 has no cuGetProcAddress_v2): "
                      "kvx needs a driver for CUDA 12.0 or later");
        goto fail;
    }
    if (driver_version(get_proc, &api, err))
        goto fail;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (entry_fetch(get_proc, api.driver_version, &table[i], err))
            goto fail;
    api.loaded = 1;
    cu = api;
    return 0;
fail:
    dlclose(lib);
    return -1;
}

const char *cudadl_error_name(CUresult r)
{
    static _Thread_local char buf[32];
    const char *s = NULL;
    if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

const char *cudadl_error_string(CUresult r)
{
    const char *s = NULL;
    if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown error";
}

int cudadl_check(CUresult r, const char *call, const char *file, int line, KvxError *err)
{
    if (r == CUDA_SUCCESS)
        return 0;
    kvx_error_set(err, KVX_ECUDA, NULL, "%s:%d: %s failed: %s (%s)", file, line, call,
                  cudadl_error_name(r), cudadl_error_string(r));
    return -1;
}
