/* cudadl: the CUDA driver API, loaded at run time.
 *
 * kvx never links libcuda: the same binary plans, generates, compiles and
 * inspects on a machine without a GPU and says plainly that it cannot measure.
 * cudadl_load() dlopens libcuda.so.1, looks up only cuGetProcAddress_v2 with
 * dlsym, and fetches every other entry point through it, each with the ABI
 * version whose typedef (cudaTypedefs.h, PFN_cuXxx_vNNNNN) is the one the CUDA 13
 * cuda.h maps the plain name to: cuMemAlloc is cuMemAlloc_v2 (3020),
 * cuEventElapsedTime is cuEventElapsedTime_v2 (12080), and so on.  Asking for
 * each entry point at its own ABI version, rather than 13000 for all, returns
 * the same functions on a CUDA 13 driver and also works on a 12.x driver (a
 * cudaVersion above the driver's makes cuGetProcAddress fail outright).
 *
 * Only worker processes call cuInit: the parent may call cudadl_load (it does
 * not initialise CUDA), but never anything that needs a context. */
#ifndef KVX_CUDADL_H
#define KVX_CUDADL_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "core/util.h"

/* X(name, ABI version of the typedef used).  Keep in step with cuda.h's
 * name -> versioned-name defines.  cuCtxSynchronize is deliberately absent: in
 * CUDA 13 it became cuCtxSynchronize_v2(CUcontext) (13000); kvx synchronises its
 * own stream instead. */
#define CUDADL_FUNCS(X)                         \
    X(cuGetErrorName, 6000)                     \
    X(cuGetErrorString, 6000)                   \
    X(cuInit, 2000)                             \
    X(cuDriverGetVersion, 2020)                 \
    X(cuDeviceGetCount, 2000)                   \
    X(cuDeviceGet, 2000)                        \
    X(cuDeviceGetName, 2000)                    \
    X(cuDeviceGetUuid, 11040)                   \
    X(cuDeviceGetPCIBusId, 4010)                \
    X(cuDeviceGetAttribute, 2000)               \
    X(cuDeviceTotalMem, 3020)                   \
    X(cuDevicePrimaryCtxRetain, 7000)           \
    X(cuDevicePrimaryCtxRelease, 11000)         \
    X(cuCtxSetCurrent, 4000)                    \
    X(cuModuleLoadData, 2000)                   \
    X(cuModuleUnload, 2000)                     \
    X(cuModuleGetFunction, 2000)                \
    X(cuFuncGetAttribute, 2020)                 \
    X(cuFuncSetAttribute, 9000)                 \
    X(cuMemAlloc, 3020)                         \
    X(cuMemFree, 3020)                          \
    X(cuMemcpyHtoDAsync, 3020)                  \
    X(cuMemcpyDtoH, 3020)                       \
    X(cuMemcpyDtoDAsync, 3020)                  \
    X(cuMemsetD8Async, 3020)                    \
    X(cuMemsetD16Async, 3020)                   \
    X(cuMemsetD32Async, 3020)                   \
    X(cuStreamCreate, 2000)                     \
    X(cuStreamDestroy, 4000)                    \
    X(cuStreamSynchronize, 2000)                \
    X(cuStreamQuery, 2000)                      \
    X(cuEventCreate, 2000)                      \
    X(cuEventDestroy, 4000)                     \
    X(cuEventRecord, 2000)                      \
    X(cuEventSynchronize, 2000)                 \
    X(cuEventElapsedTime, 12080)                \
    X(cuLaunchKernel, 4000)                     \
    X(cuLaunchKernelEx, 11060)

/* The entry points, named as in cuda.h: cu.cuMemAlloc(&p, n). */
typedef struct CudaApi {
#define X(name, ver) PFN_##name##_v##ver name;
    CUDADL_FUNCS(X)
#undef X
    int driver_version;     /* cuDriverGetVersion: 13000 = CUDA 13.0 */
    int loaded;
} CudaApi;

extern CudaApi cu;

/* Load libcuda.so.1 and every entry point (idempotent).  0, or -1 with err
 * (code KVX_EFAIL): "no CUDA driver (libcuda.so.1 not found): measuring needs a
 * GPU" where there is no driver, or which entry point the driver lacks. */
int cudadl_load(KvxError *err);

/* "CUDA_ERROR_ILLEGAL_ADDRESS" and "an illegal memory access was encountered";
 * never NULL (a code the driver does not name prints as "CUresult 999"). */
const char *cudadl_error_name(CUresult r);
const char *cudadl_error_string(CUresult r);

/* Check a driver call: 0 on CUDA_SUCCESS, else -1 with err set to
 * "FILE:LINE: CALL failed: CUDA_ERROR_X (message)" (code KVX_ECUDA). */
int cudadl_check(CUresult r, const char *call, const char *file, int line, KvxError *err);
#define CU_CHECK(err, call) cudadl_check((call), #call, __FILE__, __LINE__, (err))

#endif
