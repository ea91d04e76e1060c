{{! op_cas.cuh: cas_add(p, d), an addition built from atomicCAS.  Needs T. }}
/* Add d by compare-and-swap: propose old + d and retry with what the slot held
 * until no other thread changed it in between.  Under contention every
 * failure costs another round trip, which is what this op measures. */
__device__ __forceinline__ void cas_add(T *p, T d)
{
    T old = *(volatile T *)p;
    for (;;) {
        const T seen = atomicCAS(p, old, (T)(old + d));
        if (seen == old)
            return;
        old = seen;
    }
}
