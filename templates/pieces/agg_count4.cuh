{{! agg_count4.cuh: count_below4(), the hits among four ints of one 16-byte load. }}
{{! Placeholders: none.                                                           }}
__device__ __forceinline__ unsigned count_below4(int4 v, int thresh)
{
    return (v.x < thresh) + (v.y < thresh) + (v.z < thresh) + (v.w < thresh);
}
