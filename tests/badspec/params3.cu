{{! 16-bit float parameters for the range checks of kernel arguments
    (137_arg_half_range.yaml, issue 22 item 3).  No placeholders. }}
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void params3(float *out, __half h, __nv_bfloat16 b)
{
    out[0] = __half2float(h) + __bfloat162float(b);
}
