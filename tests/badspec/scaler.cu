{{! 41_template_axis_value: a compared value that is not one of the axis's.
    Placeholders: T, pack (scalar, vec2). }}
extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
{{#if pack == "scalar"}}
    if (in[0] < thresh)
        atomicAdd(out, 1);
{{#elif "vec2" != pack && "scaler" == pack}}
    if (in[1] < thresh)
        atomicAdd(out, 1);
{{/if}}
}
