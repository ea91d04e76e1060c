{{! h16_pairing.cuh: the alignment-aware pairing of a 16-bit atomicAdd. }}
{{! Placeholders: ZERO (set: the element type's zero).  Needs T and T2 (the }}
{{! 32-bit pair type) declared by the including template. }}
/* Add v to base[off] in a table of len 16-bit elements with the 32-bit packed
 * atomic whenever the element shares an aligned 4-byte word with a neighbour
 * inside the table; the neighbour's lane adds zero.  Packed 16-bit atomics are
 * atomic per lane, so the zero lane cannot disturb a concurrent update of the
 * neighbour (it may turn a -0 there into +0, which compares equal).  Where the
 * word's other half lies outside the table (the first element at an odd
 * address, the last at an even one) it falls back to the 16-bit atomic: memory
 * outside the buffer is not ours even to add zero to.  This is the rule of
 * PyTorch's fastAtomicAdd. */
__device__ __forceinline__ void h16_add_paired(T *base, unsigned off, unsigned len, T v)
{
    T *p = base + off;
    const T zero = {{ZERO}};
    if ((reinterpret_cast<size_t>(p) & 3) == 0) {
        if (off + 1 < len) {
            T2 pair;
            pair.x = v;
            pair.y = zero;
            atomicAdd(reinterpret_cast<T2 *>(p), pair);
            return;
        }
    } else if (off > 0) {
        T2 pair;
        pair.x = zero;
        pair.y = v;
        atomicAdd(reinterpret_cast<T2 *>(p - 1), pair);
        return;
    }
    atomicAdd(p, v);
}
