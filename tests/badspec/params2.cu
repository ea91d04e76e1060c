{{! More scalar parameter spellings for the range checks of kernel arguments
    (134-135_arg_*.yaml, issue 22 item 3).  No placeholders. }}
extern "C" __global__ void params2(unsigned int *out, const long unsigned int a, unsigned char c)
{
    out[0] = (unsigned int)a + c;
}
