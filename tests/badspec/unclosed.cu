extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
{{#if strategy == "naive"}}
    atomicAdd(out, 1);
}
