{{! dedisp_ref.cu: the reference for dedisp.yaml, one thread a (measure,
    sample), the channels in order, nothing clever.  No placeholders. }}
extern "C" __global__ void dedisp_ref(const float *in, float *out, int nin)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x, dm = blockIdx.y;
    if (t >= 8192 || dm >= 256)
        return;
    float acc = 0.0f;
    for (int ch = 0; ch < 1024; ch++)
        acc += in[(size_t)ch * nin + t + dm * ch / 64];
    out[(size_t)dm * 8192 + t] = acc;
}
