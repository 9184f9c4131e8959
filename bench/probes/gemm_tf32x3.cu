/* gemm_tf32x3.cu — can a tensor-core GEMM with fp32 accuracy beat cuBLAS's fp32 SGEMM on the H200?
 *
 * fp32 on the H200 runs on the CUDA cores (about 67 TF/s at most; cuBLAS reaches 40-48 at
 * attn_block's shapes); the tensor cores run TF32 (10-bit mantissa) far faster. Splitting each
 * operand x = big + small, both TF32 (big = x rounded to TF32, small = the rest rounded to TF32),
 * and summing small*big + big*small + big*big (small*small, ~2^-22 of the product, dropped) gives
 * products about as exact as fp32's ("3xTF32", as CUTLASS calls it). That holds while the parts
 * stay normal numbers: for operands outside [2^-50, 2^50] (and Inf, NaN, denormals) the block that
 * met one recomputes its tile with plain fp32 FMAs, so special values follow fp32 exactly.
 *
 * Prints, per shape: cuBLAS SGEMM's time and TF/s, each kernel variant's, and the worst error of
 * each against a double-precision product over sampled outputs, as a fraction of sum |a||b| (the
 * scale fp32's own rounding works at); then a special-value check against a host fp32 product.
 * Build: nvcc -O3 -arch=sm_90 gemm_tf32x3.cu -lcublas (bench/probes/gemm_tf32x3.sh). */
#include <cublas_v2.h>

#include "probe_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>


/* |x|'s bits inside [2^-50, 2^50): the split's parts and their products stay normal numbers */
#define RANGE_LO (77u << 23)
#define RANGE_HI (177u << 23)

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* x's parts; lo/hi track the smallest nonzero and the largest |x| bits seen (NaN > Inf > finite) */
__device__ __forceinline__ void split(float x, uint32_t &big, uint32_t &small, uint32_t &lo, uint32_t &hi) {
  const uint32_t u = __float_as_uint(x) & 0x7fffffffu;
  lo = min(lo, u - 1u); /* 0 wraps to the largest: zeros never count as small */
  hi = max(hi, u);
  big = to_tf32(x);
  small = to_tf32(x - __uint_as_float(big));
}

/* C (M x N, row-major) = A (M x K, row-major) * B (K x N, row-major); M % BM == N % BN == K % BK == 0 */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int X>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm_tc(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N, int K) {
  constexpr bool X3 = X == 3; /* 1: plain TF32 (the tensor cores' rate, for reference) */
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int MT = WM / 16, NT = WN / 8;
  constexpr int AS = BK + 4, BS = BN + 8; /* padded rows: fragment reads hit 32 banks */
  extern __shared__ __align__(16) float smem[];
  float *As = smem, *Bs = smem + STAGES * BM * AS;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N, g = lane >> 2, t = lane & 3;
  const int tiles_n = N / BN;
  const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
  const float *Ag = A + (size_t)m0 * K, *Bg = B + n0;
  auto load_tile = [&](int stage, int kt) {
    float *as = As + stage * BM * AS, *bs = Bs + stage * BK * BS;
    const int k0 = kt * BK;
#pragma unroll
    for (int c = tid; c < BM * BK / 4; c += THREADS) {
      const int r = c / (BK / 4), q = c % (BK / 4) * 4;
      cp_async16(as + r * AS + q, Ag + (size_t)r * K + k0 + q);
    }
#pragma unroll
    for (int c = tid; c < BK * BN / 4; c += THREADS) {
      const int r = c / (BN / 4), q = c % (BN / 4) * 4;
      cp_async16(bs + r * BS + q, Bg + (size_t)(k0 + r) * N + q);
    }
  };
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
  uint32_t lo = 0xffffffffu, hi = 0;
  const int KT = K / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < KT) load_tile(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < KT; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (kt + STAGES - 1 < KT) load_tile((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
    cp_async_commit();
    const float *as = As + (kt % STAGES) * BM * AS, *bs = Bs + (kt % STAGES) * BK * BS;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      uint32_t ab[MT][4], asm_[MT][4];
#pragma unroll
      for (int i = 0; i < MT; i++) {
        const float *p = as + (wm * WM + i * 16 + g) * AS + kk + t;
        const float v[4] = {p[0], p[8 * AS], p[4], p[8 * AS + 4]};
#pragma unroll
        for (int e = 0; e < 4; e++) {
          if (X3) split(v[e], ab[i][e], asm_[i][e], lo, hi);
          else ab[i][e] = to_tf32(v[e]);
        }
      }
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const float *p = bs + (kk + t) * BS + wn * WN + j * 8 + g;
        uint32_t bb[2], bsm[2];
        if (X3) {
          split(p[0], bb[0], bsm[0], lo, hi);
          split(p[4 * BS], bb[1], bsm[1], lo, hi);
        } else {
          bb[0] = to_tf32(p[0]);
          bb[1] = to_tf32(p[4 * BS]);
        }
#pragma unroll
        for (int i = 0; i < MT; i++) {
          if (X3) {
            mma_tf32(acc[i][j], asm_[i], bb);
            mma_tf32(acc[i][j], ab[i], bsm);
          }
          mma_tf32(acc[i][j], ab[i], bb);
        }
      }
    }
  }
  cp_async_wait<0>();
  const bool odd = X3 && __syncthreads_or(lo < RANGE_LO - 1u || hi >= RANGE_HI);
  if (odd) { /* an operand out of the split's range: this tile in plain fp32, k in order */
    for (int e = tid; e < BM * BN; e += THREADS) {
      const int r = m0 + e / BN, c = n0 + e % BN;
      float s = 0.f;
      for (int k = 0; k < K; k++) s = fmaf(A[(size_t)r * K + k], B[(size_t)k * N + c], s);
      C[(size_t)r * N + c] = s;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) {
      const int r = m0 + wm * WM + i * 16 + g, c = n0 + wn * WN + j * 8 + 2 * t;
      *(float2 *)&C[(size_t)r * N + c] = make_float2(acc[i][j][0], acc[i][j][1]);
      *(float2 *)&C[(size_t)(r + 8) * N + c] = make_float2(acc[i][j][2], acc[i][j][3]);
    }
}

typedef void (*launch_fn)(const float *, const float *, float *, int, int, int, cudaStream_t);
struct variant {
  const char *name;
  int bm, bn, bk;
  launch_fn launch;
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int X>
void launch(const float *A, const float *B, float *C, int M, int N, int K, cudaStream_t s) {
  constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  const size_t bytes = (size_t)STAGES * (BM * (BK + 4) + BK * (BN + 8)) * sizeof(float);
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(gemm_tc<BM, BN, BK, WM, WN, STAGES, X>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    set = true;
  }
  gemm_tc<BM, BN, BK, WM, WN, STAGES, X><<<(M / BM) * (N / BN), THREADS, bytes, s>>>(A, B, C, M, N, K);
}

#define V(bm, bn, bk, wm, wn, st, x3) \
  {#bm "x" #bn "x" #bk " w" #wm "x" #wn " s" #st " " #x3, bm, bn, bk, launch<bm, bn, bk, wm, wn, st, x3>}
static const variant variants[] = {
    V(128, 128, 32, 64, 64, 3, 3),  V(128, 128, 32, 64, 32, 3, 3), V(128, 128, 16, 64, 32, 4, 3),
    V(128, 64, 32, 64, 32, 3, 3),   V(64, 128, 32, 32, 64, 3, 3),  V(256, 128, 32, 64, 64, 3, 3),
    V(128, 256, 32, 64, 64, 3, 3),  V(128, 128, 32, 64, 32, 3, 1),
};

template <class F> static float time_ms(F f) { return probe_ms(f, 1, 15); }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float randn() {
  auto u = [] {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
  };
  return (float)(sqrt(-2 * log(u())) * cos(6.283185307179586 * u()));
}

/* the worst |c - exact| / sum|a||b| over sampled outputs */
static double worst_error(const std::vector<float> &a, const std::vector<float> &b, const std::vector<float> &c, int M, int N,
                          int K) {
  double worst = 0;
  for (int s = 0; s < 400; s++) {
    const int r = (int)((uint64_t)s * 2654435761u % M), col = (int)((uint64_t)s * 40503u % N);
    double exact = 0, scale = 0;
    for (int k = 0; k < K; k++) {
      exact += (double)a[(size_t)r * K + k] * b[(size_t)k * N + col];
      scale += fabs((double)a[(size_t)r * K + k] * b[(size_t)k * N + col]);
    }
    worst = std::max(worst, fabs(c[(size_t)r * N + col] - exact) / scale);
  }
  return worst;
}

static void shape(cublasHandle_t h, int M, int N, int K) {
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
  for (auto &x : a) x = randn();
  for (auto &x : b) x = randn() / sqrtf((float)K);
  float *A, *B, *C;
  CK(cudaMalloc(&A, a.size() * 4));
  CK(cudaMalloc(&B, b.size() * 4));
  CK(cudaMalloc(&C, c.size() * 4));
  CK(cudaMemcpy(A, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  const double flop = 2.0 * M * N * K;
  const float one = 1, zero = 0;
  /* row-major C = A B is column-major C^T = B^T A^T */
  auto sgemm = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N); };
  const float tb = time_ms(sgemm);
  CK(cudaMemcpy(c.data(), C, c.size() * 4, cudaMemcpyDeviceToHost));
  printf("M %d N %d K %d: cuBLAS SGEMM %.1f us %.1f TF/s err %.2e\n", M, N, K, tb * 1e3, flop / tb / 1e9, worst_error(a, b, c, M, N, K));
  for (const variant &v : variants) {
    if (M % v.bm || N % v.bn || K % v.bk) continue;
    CK(cudaMemset(C, 0, c.size() * 4));
    const float tv = time_ms([&] { v.launch(A, B, C, M, N, K, 0); });
    CK(cudaMemcpy(c.data(), C, c.size() * 4, cudaMemcpyDeviceToHost));
    printf("  %-28s %7.1f us %6.1f TF/s %.3fx cuBLAS err %.2e\n", v.name, tv * 1e3, flop / tv / 1e9, tb / tv,
           worst_error(a, b, c, M, N, K));
  }
  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
}

/* Inf, NaN, a denormal, a huge and a tiny value planted in a few rows and columns: every output
 * must match a host fp32 product in class (NaN, sign of Inf) and, when finite, to 1e-5 of scale */
static void specials() {
  const int M = 256, N = 256, K = 256;
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
  for (auto &x : a) x = randn();
  for (auto &x : b) x = randn();
  a[3 * K + 5] = INFINITY;
  a[130 * K + 7] = NAN;
  b[9 * N + 200] = -INFINITY;
  a[200 * K + 1] = 1e-40f; /* denormal */
  b[1 * N + 20] = 1e30f;
  a[40 * K + 2] = 3e-20f;
  float *A, *B, *C;
  CK(cudaMalloc(&A, a.size() * 4));
  CK(cudaMalloc(&B, b.size() * 4));
  CK(cudaMalloc(&C, c.size() * 4));
  CK(cudaMemcpy(A, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  launch<128, 128, 32, 64, 64, 3, 3>(A, B, C, M, N, K, 0);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(c.data(), C, c.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0, nan = 0, inf = 0;
  for (int r = 0; r < M; r++)
    for (int col = 0; col < N; col++) {
      float s = 0;
      double scale = 0;
      for (int k = 0; k < K; k++) {
        s = fmaf(a[(size_t)r * K + k], b[(size_t)k * N + col], s);
        scale += fabs((double)a[(size_t)r * K + k] * b[(size_t)k * N + col]);
      }
      const float g = c[(size_t)r * N + col];
      nan += std::isnan(s), inf += std::isinf(s);
      const bool ok = std::isnan(s) ? std::isnan(g) : std::isinf(s) ? g == s : fabs(g - s) <= 1e-5 * scale;
      if (!ok && bad++ < 5) printf("  special mismatch at (%d,%d): got %g, fp32 %g\n", r, col, g, s);
    }
  printf("specials: %d of %d outputs differ from fp32 (%d NaN, %d Inf expected)\n", bad, M * N, nan, inf);
  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
}

int main() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  specials();
  const int shapes[][3] = {{4096, 2304, 768}, {4096, 768, 768}, {4096, 3072, 768}, {4096, 768, 3072}, {8192, 4096, 1024}, {8192, 1024, 4096}};
  for (auto &s : shapes) shape(h, s[0], s[1], s[2]);
  return 0;
}
