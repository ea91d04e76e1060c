{{! peer_hist.cu: a plain global-atomic histogram(in, BINS, LO, HI) (peer_hist.yaml).
    Placeholders: E (input type), BINS, LO, HI. }}
extern "C" __global__ void hist(const {{ctype(E)}} *in, int n, unsigned *hist)
{
    const int width = ({{HI}} - {{LO}} + 1 + {{BINS}} - 1) / {{BINS}};
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] >= {{LO}} && in[i] <= {{HI}})
        atomicAdd(&hist[(in[i] - {{LO}}) / width], 1u);
}
