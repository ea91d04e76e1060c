{{! sgemm_ref.cu: the reference for sgemm.yaml, one thread an element of C
    and a plain loop over K: the kernel a reader checks at a glance.  No
    placeholders. }}
extern "C" __global__ void sgemm_ref(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(A[(size_t)row * K + k], B[(size_t)k * N + col], acc);
    C[(size_t)row * N + col] = acc;
}
