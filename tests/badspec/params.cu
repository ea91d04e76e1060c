{{! Scalar parameters of several C types, for the range checks of kernel
    arguments (130-133_arg_*.yaml, issue 22 item 3).  No placeholders. }}
extern "C" __global__ void params(unsigned int *out, unsigned n, short s, bool b, float f)
{
    out[0] = n + s + b + (unsigned)f;
}
