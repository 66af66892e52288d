// Hold-out kernels for `realcode`: compiled to PTX with flags other than corpus/ptx's and
// corpus/ptx-holdout's (see README.md); no census seed comes from them.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void collatz(const unsigned* in, unsigned* steps, unsigned long long* peak, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = in[i], top = x;
    unsigned s = 0;
    while (x != 1 && s < 1000) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        top = x > top ? x : top;
        s++;
    }
    steps[i] = s / 3 + s % 7;
    atomicMax(peak, top);
}

extern "C" __global__ void stencil(const float* in, float* out, int w, int h, float c0, float c1) {
    __shared__ float t[18][18];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
    t[threadIdx.y + 1][threadIdx.x + 1] = in[cy * w + cx];
    if (threadIdx.x == 0) t[threadIdx.y + 1][0] = in[cy * w + max(cx - 1, 0)];
    if (threadIdx.x == 15) t[threadIdx.y + 1][17] = in[cy * w + min(cx + 1, w - 1)];
    if (threadIdx.y == 0) t[0][threadIdx.x + 1] = in[max(cy - 1, 0) * w + cx];
    if (threadIdx.y == 15) t[17][threadIdx.x + 1] = in[min(cy + 1, h - 1) * w + cx];
    __syncthreads();
    float v = c0 * t[threadIdx.y + 1][threadIdx.x + 1] +
              c1 * (t[threadIdx.y][threadIdx.x + 1] + t[threadIdx.y + 2][threadIdx.x + 1] + t[threadIdx.y + 1][threadIdx.x] + t[threadIdx.y + 1][threadIdx.x + 2]);
    if (x < w && y < h) out[y * w + x] = v;
}

extern "C" __global__ void mathfn(const float* a, const double* b, float* fo, double* dout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    fo[i] = sinf(x) + cosf(x) * expf(-x) + logf(fabsf(x) + 1.f) + powf(fabsf(x), 1.7f) + erff(x) + tanhf(x) + atan2f(x, 3.f) + cbrtf(x);
    double y = b[i];
    dout[i] = exp(y) + log1p(fabs(y)) + sin(y) * cos(y) + sqrt(fabs(y)) / (y + 2.0) + floor(y) + fmod(y, 3.0);
}

extern "C" __global__ void convert(const float* f, const double* d, const long long* l, __half* h, __nv_bfloat16* bf,
                                   int* iout, unsigned long long* uout, float* fout, signed char* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    double y = d[i];
    long long z = l[i];
    h[2 * i] = __float2half_rz(x);
    h[2 * i + 1] = __double2half(y);
    bf[2 * i] = __float2bfloat16_rn(x);
    bf[2 * i + 1] = __ll2bfloat16_rn(z);
    iout[3 * i] = __float2int_rd(x) + __double2int_ru(y);
    iout[3 * i + 1] = __half2int_rd(h[2 * i]) + (int)__bfloat162float(bf[2 * i]);
    iout[3 * i + 2] = __float_as_int(__int2float_rz((int)z)) ^ (int)__double2float_rd(y);
    uout[i] = __double2ull_rz(y) + __float2ull_rn(x) + (unsigned long long)__ll2double_rn(z);
    fout[i] = __ll2float_rd(z) + __uint2float_ru((unsigned)z) + __half2float(__float2half(x * 0.5f));
    c[i] = (signed char)max(-128, min(127, __float2int_rn(x)));
}

extern "C" __global__ void warpscan(const int* in, int* out, unsigned* flags, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    int v = i < n ? in[i] : 0;
    for (int o = 1; o < 32; o <<= 1) {
        int u = __shfl_up_sync(~0u, v, o);
        if (lane >= o) v += u;
    }
    unsigned b = __ballot_sync(~0u, v > 0);
    if (lane == 0) flags[i >> 5] = b;
    int total = __shfl_sync(~0u, v, 31);
    if (i < n) out[i] = v * __popc(b) + total + __ffs(b) + __clz(v);
}

extern "C" __global__ void atomics(int* gi, unsigned long long* gu, float* gf, double* gd, const int* key, int n) {
    __shared__ int smin, smax;
    __shared__ unsigned long long sacc;
    if (threadIdx.x == 0) { smin = 1 << 30; smax = -(1 << 30); sacc = 0; }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = key[i];
        atomicMin(&smin, k);
        atomicMax(&smax, k);
        atomicAdd(&sacc, (unsigned long long)k);
        atomicAdd(gf + (k & 15), 1.5f);
        atomicAdd(gd + (k & 7), (double)k);
        atomicCAS(gu + (k & 3), (unsigned long long)k, (unsigned long long)i);
        atomicXor(gi + (k & 31), i);
        atomicSub(gi + 32, 1);
        atomicInc((unsigned*)gi + 33, 1000u);
    }
    __syncthreads();
    if (threadIdx.x == 0) { atomicMin(gi + 34, smin); atomicMax(gi + 35, smax); atomicAdd(gu + 4, sacc); }
}
