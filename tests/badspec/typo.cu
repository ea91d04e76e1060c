extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
    if (in[0] < {{thresold}})
        atomicAdd(out, 1);
}
