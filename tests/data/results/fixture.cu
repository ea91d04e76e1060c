{{! Template of the report fixture spec (tests only).  Placeholders: T. }}
extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        atomicAdd(out, ({{ctype(T)}})1);
}
