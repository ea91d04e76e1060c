{{! friction.cu: the compile frictions of tests/data/specs/friction.yaml.
    Placeholders: variant
      warns   compiles, with NVRTC's warning about an unused variable (line 13)
      error   an undeclared name (line 16): NVRTC's error names the generated line
      cg      includes cooperative groups, whose headers need CCCL's }}
{{#if variant == "cg"}}
#include <cooperative_groups.h>
{{/if}}
extern "C" __global__ void count(const int *in, int n, unsigned int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
{{#if variant == "warns"}}
    int unused = 0;
{{/if}}
{{#if variant == "error"}}
    undeclared_name = 1;
{{/if}}
    if (i < n && in[i] < 500)
        atomicAdd(out, 1u);
}
