{{! sgemm.cu: C = A B for row-major f32 matrices (M x K times K x N), the
    tiled kernel people tune.  A block computes a BM x BN tile of C, stepping
    through K by BK: it stages an A tile and a B tile in shared memory, then
    each thread accumulates a TM x TN sub-tile in registers.  Placeholders:
      BM, BN   the block's tile of C (16 .. 128)
      BK       the depth staged per step (8, 16, 32)
      TM, TN   the thread's sub-tile (1 .. 8); a block is (BM/TM) x (BN/TN) threads
      VEC      the width of the global loads that stage A and B (1, 2 or 4 floats)
      a_smem   mk: the A tile kept row-major, as loaded; km: transposed while
               stored, so the inner loop reads a thread's TM values of A along
               a shared-memory row
    A thread's sub-tile is strided (rows ty + i*TY, columns tx + j*TX), so a
    warp's reads of B in shared memory are consecutive words. }}
{{#if VEC == 4}}
typedef float4 vec_t;
{{#else}}
{{#if VEC == 2}}
typedef float2 vec_t;
{{#else}}
typedef float vec_t;
{{/if}}
{{/if}}

#define BM {{BM}}
#define BN {{BN}}
#define BK {{BK}}
#define TM {{TM}}
#define TN {{TN}}
#define VEC {{VEC}}
#define TX (BN / TN)
#define TY (BM / TM)
#define THREADS (TX * TY)

__device__ __forceinline__ float vec_at(const vec_t &v, int j)
{
    return reinterpret_cast<const float *>(&v)[j];
}

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N, int K)
{
{{#if a_smem == "km"}}
    __shared__ __align__(16) float As[BK][BM];
#define AS(r, k) As[k][r]
{{#else}}
    __shared__ __align__(16) float As[BM][BK];
#define AS(r, k) As[r][k]
{{/if}}
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int v = tid; v < BM * BK / VEC; v += THREADS) {
            const int r = v / (BK / VEC), c = (v % (BK / VEC)) * VEC;
            const vec_t x = *reinterpret_cast<const vec_t *>(&A[(size_t)(row0 + r) * K + k0 + c]);
#pragma unroll
            for (int j = 0; j < VEC; ++j)
                AS(r, c + j) = vec_at(x, j);
        }
        for (int v = tid; v < BK * BN / VEC; v += THREADS) {
            const int r = v / (BN / VEC), c = (v % (BN / VEC)) * VEC;
            *reinterpret_cast<vec_t *>(&Bs[r][c]) =
                *reinterpret_cast<const vec_t *>(&B[(size_t)(k0 + r) * N + col0 + c]);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = AS(ty + i * TY, k);
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[k][tx + j * TX];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            C[(size_t)(row0 + ty + i * TY) * N + col0 + tx + j * TX] = acc[i][j];
}
