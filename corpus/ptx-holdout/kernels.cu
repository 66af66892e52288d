#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void softmax(const float* x, float* y, int n) {
    extern __shared__ float s[];
    int t = threadIdx.x; float m = -1e30f;
    for (int i = t; i < n; i += blockDim.x) m = fmaxf(m, x[blockIdx.x * n + i]);
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if ((t & 31) == 0) s[t >> 5] = m; __syncthreads();
    m = s[0]; for (int k = 1; k < blockDim.x / 32; k++) m = fmaxf(m, s[k]);
    float sum = 0; for (int i = t; i < n; i += blockDim.x) sum += __expf(x[blockIdx.x * n + i] - m);
    for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, o);
    __syncthreads(); if ((t & 31) == 0) s[t >> 5] = sum; __syncthreads();
    sum = 0; for (int k = 0; k < blockDim.x / 32; k++) sum += s[k];
    for (int i = t; i < n; i += blockDim.x) y[blockIdx.x * n + i] = __expf(x[blockIdx.x * n + i] - m) / sum;
}
extern "C" __global__ void layernorm(const __half* x, const float* g, const float* b, __nv_bfloat16* y, int n, float eps) {
    int row = blockIdx.x; float mean = 0, var = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) { float v = __half2float(x[row * n + i]); mean += v; var += v * v; }
    for (int o = 16; o; o >>= 1) { mean += __shfl_down_sync(~0u, mean, o); var += __shfl_down_sync(~0u, var, o); }
    mean = __shfl_sync(~0u, mean, 0) / n; var = __shfl_sync(~0u, var, 0) / n - mean * mean;
    float r = rsqrtf(var + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) y[row * n + i] = __float2bfloat16((__half2float(x[row * n + i]) - mean) * r * g[i] + b[i]);
}
extern "C" __global__ void histo(const unsigned char* d, unsigned* h, long n) {
    __shared__ unsigned sh[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) sh[i] = 0; __syncthreads();
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) atomicAdd(&sh[d[i]], 1u);
    __syncthreads(); for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&h[i], sh[i]);
}
extern "C" __global__ void scan64(const long long* a, long long* out, double* dd, int n) {
    __shared__ long long t[1024]; int i = threadIdx.x; t[i] = i < n ? a[i] : 0; __syncthreads();
    for (int o = 1; o < blockDim.x; o <<= 1) { long long v = i >= o ? t[i - o] : 0; __syncthreads(); t[i] += v; __syncthreads(); }
    if (i < n) { out[i] = t[i]; dd[i] = (double)t[i] / 3.0 + sqrt((double)i); }
}
extern "C" __global__ void gemm_naive(const __half2* A, const __half2* B, __half2* C, int N) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 acc = __float2half2_rn(0.f);
    for (int k = 0; k < N; k++) acc = __hfma2(A[r * N + k], B[k * N + c], acc);
    C[r * N + c] = __hmax2(acc, __float2half2_rn(0.f));
}
extern "C" __global__ void transpose(const float* in, float* out, int w, int h) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
extern "C" __global__ void gemv_bf16(const __nv_bfloat162* A, const __nv_bfloat162* x, float* y, int n2) {
    int row = blockIdx.x; float acc = 0;
    const float4* a4 = reinterpret_cast<const float4*>(A + (size_t)row * n2);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int i = threadIdx.x; i < n2 / 4; i += blockDim.x) {
        float4 av = __ldg(a4 + i), xv = __ldg(x4 + i);
        const __nv_bfloat162* ap = reinterpret_cast<const __nv_bfloat162*>(&av);
        const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&xv);
        for (int k = 0; k < 4; k++) { float2 p = __bfloat1622float2(__hmul2(ap[k], xp[k])); acc += p.x + p.y; }
    }
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(y + row, acc);
}
extern "C" __global__ void atomics64(unsigned long long* c, long long* m, double* d, const int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
    atomicAdd(c, (unsigned long long)v[i]); atomicMax(m, (long long)v[i] * 3); atomicMin(m + 1, (long long)v[i] - 7);
    atomicAdd(d, (double)v[i] * 0.5); atomicCAS(c + 1, (unsigned long long)i, (unsigned long long)v[i]);
    atomicExch(c + 2, (unsigned long long)v[i]); atomicAnd(c + 3, (unsigned long long)v[i]); atomicOr(c + 4, 1ull << (v[i] & 63));
}
extern "C" __global__ void int8dot(const char4* a, const char4* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; int s = 0;
    for (int k = i; k < n; k += gridDim.x * blockDim.x) { char4 x = a[k], y = b[k]; s = __dp4a(*(const int*)&x, *(const int*)&y, s); }
    s = __reduce_add_sync(~0u, s); if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
    unsigned m = __match_any_sync(~0u, s & 7); if (m == ~0u) out[1] = __popc(m) + __clz(s) + __ffs(s) + __brev(s);
}
