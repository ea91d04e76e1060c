/* nvml: dlopen NVML and read clocks (see nvml.h).  The declarations below are
 * the subset of nvml.h that kvx calls, with its ABI: nvmlReturn_t is an int
 * enum (NVML_SUCCESS = 0), nvmlDevice_t an opaque pointer, and the clock types
 * NVML_CLOCK_SM = 1 and NVML_CLOCK_MEM = 2.  The _v2 names are the ones nvml.h
 * maps nvmlInit and nvmlDeviceGetHandleByPciBusId to. */
#include "nvml.h"
#include "host/case.h"
#include "fake.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

typedef nvmlReturn_t (*PFN_nvmlInit)(void);
typedef nvmlReturn_t (*PFN_nvmlShutdown)(void);
typedef const char *(*PFN_nvmlErrorString)(nvmlReturn_t);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetHandle)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetClock)(nvmlDevice_t, int, unsigned int *);

/* One process, one device: the entry points are process-wide. */
static struct {
    PFN_nvmlInit init;
    PFN_nvmlShutdown shutdown;
    PFN_nvmlErrorString error_string;
    PFN_nvmlDeviceGetHandle by_uuid, by_pci;
    PFN_nvmlDeviceGetClock clock, max_clock;
} api;

/* Under the fake driver (fake.h, KVX_FAKE_GPUS) its NVML stands in for the
 * library, behind a handle that is no dlopen's. */
static char fake_lib;

static void *lib_open(const char *lib)
{
    return fake_gpus() > 0 ? &fake_lib : dlopen(lib, RTLD_NOW | RTLD_LOCAL);
}

static void *lib_sym(void *lib, const char *name)
{
    return lib == &fake_lib ? fake_nvml_sym(name) : dlsym(lib, name);
}

static void lib_close(void *lib)
{
    if (lib != &fake_lib)
        dlclose(lib);
}

static const char *why(nvmlReturn_t r)
{
    const char *s = api.error_string ? api.error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

static int fetch(Nvml *n, const char *lib)
{
    const struct { const char *name; void **slot; } syms[] = {
        {"nvmlInit_v2", (void **)&api.init},
        {"nvmlShutdown", (void **)&api.shutdown},
        {"nvmlErrorString", (void **)&api.error_string},
        {"nvmlDeviceGetHandleByUUID", (void **)&api.by_uuid},
        {"nvmlDeviceGetHandleByPciBusId_v2", (void **)&api.by_pci},
        {"nvmlDeviceGetClockInfo", (void **)&api.clock},
        {"nvmlDeviceGetMaxClockInfo", (void **)&api.max_clock},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = lib_sym(n->lib, syms[i].name))) {
            snprintf(n->note, sizeof n->note, "%s has no %s", lib, syms[i].name);
            return -1;
        }
    return 0;
}

int nvml_open(Nvml *n, const char *lib, const char *uuid, const char *pci_bus)
{
    memset(n, 0, sizeof *n);
    lib = lib ? lib : NVML_LIBRARY;
    if (!(n->lib = lib_open(lib))) {
        snprintf(n->note, sizeof n->note, "no NVML (%s not found): clocks not recorded", lib);
        return -1;
    }
    nvmlReturn_t r = 0;
    if (fetch(n, lib) < 0)
        goto fail;
    if ((r = api.init()) != NVML_SUCCESS) {
        snprintf(n->note, sizeof n->note, "nvmlInit: %s: clocks not recorded", why(r));
        goto fail;
    }
    nvmlDevice_t dev = NULL;
    r = uuid && uuid[0] ? api.by_uuid(uuid, &dev) : -1;
    if (r != NVML_SUCCESS && pci_bus && pci_bus[0])
        r = api.by_pci(pci_bus, &dev);
    if (r != NVML_SUCCESS) {
        snprintf(n->note, sizeof n->note, "NVML does not know %s (%s): clocks not recorded",
                 uuid ? uuid : "", pci_bus ? pci_bus : "");
        api.shutdown();
        goto fail;
    }
    n->dev = dev;
    unsigned sm = 0, mem = 0;
    if (api.max_clock(dev, NVML_CLOCK_SM, &sm) == NVML_SUCCESS)
        n->sm_max_mhz = (int)sm;
    if (api.max_clock(dev, NVML_CLOCK_MEM, &mem) == NVML_SUCCESS)
        n->mem_max_mhz = (int)mem;
    return 0;
fail:
    lib_close(n->lib);
    n->lib = NULL;
    n->dev = NULL;
    return -1;
}

int nvml_clocks(const Nvml *n, int *sm_mhz, int *mem_mhz)
{
    unsigned sm = 0, mem = 0;
    *sm_mhz = *mem_mhz = 0;
    if (!n || !n->dev)
        return -1;
    if (api.clock(n->dev, NVML_CLOCK_SM, &sm) != NVML_SUCCESS ||
        api.clock(n->dev, NVML_CLOCK_MEM, &mem) != NVML_SUCCESS)
        return -1;
    *sm_mhz = (int)sm;
    *mem_mhz = (int)mem;
    return 0;
}

void nvml_close(Nvml *n)
{
    if (!n || !n->lib)
        return;
    api.shutdown();
    lib_close(n->lib);
    n->lib = NULL;
    n->dev = NULL;
}

int nvml_throttled(int sm_mhz, int sm_max_mhz)
{
    return sm_mhz > 0 && sm_max_mhz > 0 && sm_mhz < CASE_THROTTLE_SHARE * sm_max_mhz;
}
