/* nvml: the GPU's clocks, from NVML loaded at run time.
 *
 * Like the driver (cudadl.h), libnvidia-ml.so.1 is dlopen'ed, never linked, and
 * nvml.h is not needed: the few types and entry points kvx uses are declared in
 * nvml.c.  NVML is optional: without it a case's clocks are 0 (unknown) and
 * nothing is flagged throttled; the reason is kept in note[] so that the run
 * says it once. */
#ifndef KVX_NVML_H
#define KVX_NVML_H

#define NVML_LIBRARY "libnvidia-ml.so.1"

typedef struct Nvml {
    void *lib;                  /* dlopen handle; NULL when NVML is absent */
    void *dev;                  /* nvmlDevice_t */
    int sm_max_mhz, mem_max_mhz;
    char note[192];             /* why there are no clocks; "" when there are */
} Nvml;

/* Load NVML (the library named lib, NVML_LIBRARY when NULL), initialise it and
 * find the device by its uuid ("GPU-..."), else by its PCI bus id.  0, or -1
 * with n->note saying why (n is then inert: nvml_clocks answers 0s). */
int nvml_open(Nvml *n, const char *lib, const char *uuid, const char *pci_bus);

/* The current SM and memory clocks, MHz; 0 when unknown.  0 or -1. */
int nvml_clocks(const Nvml *n, int *sm_mhz, int *mem_mhz);

/* Shut NVML down and unload it; NULL and an inert n are fine. */
void nvml_close(Nvml *n);

/* 1 when an SM clock of sm_mhz is below CASE_THROTTLE_SHARE (0.9) of sm_max_mhz;
 * 0 when it is not, or either is unknown (0). */
int nvml_throttled(int sm_mhz, int sm_max_mhz);

#endif
