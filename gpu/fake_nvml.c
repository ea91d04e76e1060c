/* fake_nvml: the fake driver's NVML (fake.h): the subset nvml.c calls, for
 * the fake devices, whose clocks are FAKE_SM_MHZ and FAKE_MEM_MHZ, always at
 * their maximum (so never throttled). */
#include "fake.h"

#include <stdio.h>
#include <string.h>

/* nvml.c's subset, with its ABI: 0 is NVML_SUCCESS, 2 NVML_ERROR_INVALID_ARGUMENT,
 * clock type 1 the SM's, 2 the memory's; a device handle is ordinal + 1. */
static int nvml_ok(void) { return 0; }
static const char *nvml_error_string(int r) { return r ? "invalid argument (fake NVML)" : "success"; }

static int nvml_by_uuid(const char *uuid, void **dev)
{
    unsigned ordinal = 0;
    if (sscanf(uuid, "GPU-6b767866-0000-0000-0000-%12x", &ordinal) != 1 || ordinal >= FAKE_MAX_GPUS)
        return 2;
    *dev = (void *)(uintptr_t)(ordinal + 1);
    return 0;
}

static int nvml_by_pci(const char *bus, void **dev)
{
    unsigned id = 0;
    if (sscanf(bus, "0000:%2x:00.0", &id) != 1 || id < 0x10 || id >= 0x10 + FAKE_MAX_GPUS)
        return 2;
    *dev = (void *)(uintptr_t)(id - 0x10 + 1);
    return 0;
}

static int nvml_clock(void *dev, int type, unsigned *mhz)
{
    if (!dev || (type != 1 && type != 2))
        return 2;
    *mhz = type == 1 ? FAKE_SM_MHZ : FAKE_MEM_MHZ;
    return 0;
}

void *fake_nvml_sym(const char *name)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } syms[] = {
        {"nvmlInit_v2", (void (*)(void))nvml_ok},
        {"nvmlShutdown", (void (*)(void))nvml_ok},
        {"nvmlErrorString", (void (*)(void))nvml_error_string},
        {"nvmlDeviceGetHandleByUUID", (void (*)(void))nvml_by_uuid},
        {"nvmlDeviceGetHandleByPciBusId_v2", (void (*)(void))nvml_by_pci},
        {"nvmlDeviceGetClockInfo", (void (*)(void))nvml_clock},
        {"nvmlDeviceGetMaxClockInfo", (void (*)(void))nvml_clock},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (strcmp(syms[i].name, name) == 0)
            return (void *)(uintptr_t)syms[i].fn;
    return NULL;
}
