{{! refcount_ref.cu: the reference for refcount.yaml, one thread in total: a
    loop a reader checks at a glance.  No placeholders. }}
extern "C" __global__ void count_serial(const int *in, int n, int thresh, unsigned int *out)
{
    unsigned int hits = 0;
    for (int i = 0; i < n; i++)
        hits += in[i] < thresh;
    *out = hits;
}
