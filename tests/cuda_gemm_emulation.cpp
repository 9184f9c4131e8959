// cuda_gemm_emulation.cpp — inductor-cuda's generated GEMM run on the CPU, for CI without a GPU
// (test_inductor_cuda.c: generated_gemm_emulated writes kernels.inc, compiles this with the
// system's C++ compiler and runs it). The generated kernels are CUDA C++ over a handful of CUDA
// names, defined here: a block's threads are std::threads, __syncthreads a std::barrier, and
// __shared__ arrays function statics (blocks run one after another, so a block's threads share
// them and nobody else uses them meanwhile). Each case fills A and B, runs the kernel over the
// grid gemm.c would launch, and compares every byte of C (outside the product too: nothing else
// may be written) with a reference that sums the same FMAs in the same order of k: the kernel's
// results are deterministic and exactly these. A vector load from an address the kernel did not
// check for alignment aborts.
#include "cuda_emulation.h"

#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct double2 {
  double x, y;
};
static double2 make_double2(double a, double b) { return {a, b}; }
// The prelude's GEMM helpers (plugins/inductor-cuda/prelude/tc_cuda_prelude.cuh), alignment checked.
static void tc_load4(const float *p, float *v) {
  aligned16(p);
  const float4 w = *(const float4 *)p;
  v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
}
static void tc_load4(const double *p, double *v) {
  aligned16(p);
  const double2 w0 = *(const double2 *)p, w1 = *(const double2 *)(p + 2);
  v[0] = w0.x, v[1] = w0.y, v[2] = w1.x, v[3] = w1.y;
}
static void tc_store4(float *p, const float *v) {
  aligned16(p);
  *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
}
static void tc_store4(double *p, const double *v) {
  aligned16(p);
  *(double2 *)p = make_double2(v[0], v[1]);
  *(double2 *)(p + 2) = make_double2(v[2], v[3]);
}
static float tc_fma(float a, float b, float c) { return std::fmaf(a, b, c); }
static double tc_fma(double a, double b, double c) { return std::fma(a, b, c); }

#include "kernels.inc" // gemm_f32_64, gemm_f32_128, gemm_f64_64, gemm_f64_128

typedef void (*kernel)(tc_cu_args);

// gemm.c's grid: a block per tile, the batches along z (at most gz_cap: the kernel strides).
static void launch(kernel k, int tile, tc_cu_args a, long long m, long long n, long long batches, unsigned gz_cap) {
  if (m <= 0 || n <= 0 || batches <= 0) return;
  const unsigned tiles = (unsigned)(((m + tile - 1) / tile) * ((n + tile - 1) / tile));
  const unsigned gz = (unsigned)(batches < gz_cap ? batches : gz_cap), threads = (unsigned)(tile / 8 * (tile / 8));
  gridDim = {tiles, 1, gz};
  blockDim = {threads, 1, 1};
  for (unsigned bz = 0; bz < gz; bz++)
    for (unsigned bx = 0; bx < tiles; bx++) {
      std::barrier<> bar((std::ptrdiff_t)threads);
      block_barrier = &bar;
      std::vector<std::thread> th;
      for (unsigned t = 0; t < threads; t++)
        th.emplace_back([=] {
          threadIdx = {t, 0, 0};
          blockIdx = {bx, 0, bz};
          k(a);
        });
      for (auto &x : th) x.join();
    }
}

// One operand's layout: offset, batch2 and batch strides, row and column strides.
struct layout {
  long long off, s2, s1, sr, sc;
};
static long long span(layout l, long long b2, long long b1, long long r, long long c) {
  long long e = l.off + (b2 - 1) * l.s2 + (b1 - 1) * l.s1 + (r > 0 ? (r - 1) * l.sr : 0) + (c > 0 ? (c - 1) * l.sc : 0) + 1;
  return e < 1 ? 1 : e;
}

template <typename T>
static int run_case(const char *name, kernel k, int tile, long long b2, long long b1, long long m, long long n, long long kk,
                    layout la, layout lb, layout lc, unsigned gz_cap = 65535) {
  const long long na = span(la, b2, b1, m, kk), nb = span(lb, b2, b1, kk, n), nc = span(lc, b2, b1, m, n);
  std::vector<T> A(na + 8), B(nb + 8), C(nc + 8, (T)-777), R(nc + 8, (T)-777);
  srand(42);
  for (auto &x : A) x = (T)((rand() % 2001 - 1000) / 997.0);
  for (auto &x : B) x = (T)((rand() % 2001 - 1000) / 991.0);
  for (long long i2 = 0; i2 < b2; i2++)
    for (long long i1 = 0; i1 < b1; i1++)
      for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
          T acc = 0;
          for (long long p = 0; p < kk; p++)
            acc = tc_fma(A[la.off + i2 * la.s2 + i1 * la.s1 + i * la.sr + p * la.sc],
                         B[lb.off + i2 * lb.s2 + i1 * lb.s1 + p * lb.sr + j * lb.sc], acc);
          R[lc.off + i2 * lc.s2 + i1 * lc.s1 + i * lc.sr + j * lc.sc] = acc;
        }
  tc_cu_args a = {};
  a.buf[0] = A.data(), a.buf[1] = B.data(), a.buf[2] = C.data();
  // test_inductor_cuda.c's gemm_symbolic_list: s0..s19 in this order
  const long long s[20] = {b2,    b1,    m,     n,     kk,    la.off, la.s2, la.s1, la.sr, la.sc,
                           lb.off, lb.s2, lb.s1, lb.sr, lb.sc, lc.off, lc.s2, lc.s1, lc.sr, lc.sc};
  for (int i = 0; i < 20; i++) a.s[i] = s[i];
  launch(k, tile, a, m, n, b1 * b2, gz_cap);
  long long bad = 0;
  for (long long i = 0; i < nc + 8; i++)
    if (memcmp(&C[i], &R[i], sizeof(T))) {
      if (bad < 3) fprintf(stderr, "  %s: C[%lld] = %.9g, want %.9g\n", name, i, (double)C[i], (double)R[i]);
      bad++;
    }
  printf("%-36s %s tile %3d: %s\n", name, sizeof(T) == 4 ? "f32" : "f64", tile, bad ? "WRONG" : "ok");
  return bad != 0;
}

template <typename T>
static int all_cases(kernel k, int tile) {
  int wrong = 0;
  // A (m x k), B (k x n), C (m x n): {offset, batch2 stride, batch stride, row stride, column stride}
  wrong += run_case<T>("row-major, edges of m, n, k", k, tile, 1, 1, 70, 45, 37, {0, 0, 0, 37, 1}, {0, 0, 0, 45, 1},
                       {0, 0, 0, 45, 1});
  wrong += run_case<T>("row-major, aligned: vector loads", k, tile, 1, 1, 64, 136, 32, {0, 0, 0, 32, 1}, {0, 0, 0, 136, 1},
                       {0, 0, 0, 136, 1});
  wrong += run_case<T>("x . W^T (B contiguous along k)", k, tile, 1, 1, 33, 130, 40, {0, 0, 0, 40, 1}, {0, 0, 0, 1, 40},
                       {0, 0, 0, 130, 1});
  wrong += run_case<T>("A^T (A contiguous along m)", k, tile, 1, 1, 72, 20, 19, {0, 0, 0, 1, 72}, {0, 0, 0, 20, 1},
                       {0, 0, 0, 20, 1});
  wrong += run_case<T>("A^T and B^T, aligned", k, tile, 1, 1, 128, 64, 24, {0, 0, 0, 1, 128}, {0, 0, 0, 1, 24},
                       {0, 0, 0, 64, 1});
  wrong += run_case<T>("no unit stride anywhere", k, tile, 1, 1, 17, 23, 13, {3, 0, 0, 29, 2}, {1, 0, 0, 3, 41},
                       {0, 0, 0, 23, 1});
  wrong += run_case<T>("column-major C", k, tile, 1, 1, 21, 34, 9, {0, 0, 0, 9, 1}, {0, 0, 0, 34, 1}, {0, 0, 0, 1, 21});
  wrong += run_case<T>("two batch levels, B broadcast", k, tile, 2, 3, 40, 36, 28, {4, 3 * 40 * 28, 40 * 28, 28, 1},
                       {8, 0, 0, 36, 1}, {2, 3 * 40 * 36, 40 * 36, 36, 1});
  wrong += run_case<T>("batches beyond gridDim.z", k, tile, 2, 3, 9, 70, 12, {1, 3 * 9 * 12, 9 * 12, 12, 1},
                       {0, 70 * 12, 0, 70, 1}, {0, 3 * 9 * 70, 9 * 70, 70, 1}, 4);
  wrong += run_case<T>("k = 0: zeros", k, tile, 1, 2, 10, 11, 0, {0, 0, 0, 1, 1}, {0, 0, 0, 1, 1}, {0, 0, 110, 11, 1});
  wrong += run_case<T>("m = n = 1", k, tile, 1, 1, 1, 1, 50, {0, 0, 0, 50, 1}, {0, 0, 0, 1, 1}, {0, 0, 0, 1, 1});
  wrong += run_case<T>("two tiles each way, k of 5 steps", k, tile, 1, 1, 2 * tile + 3, 2 * tile - 1, 40, {0, 0, 0, 40, 1},
                       {0, 0, 0, 2 * tile - 1, 1}, {0, 0, 0, 2 * tile - 1, 1});
  return wrong;
}

int main() {
  int wrong = all_cases<float>(gemm_f32_64, 64) + all_cases<float>(gemm_f32_128, 128) +
              all_cases<double>(gemm_f64_64, 64) + all_cases<double>(gemm_f64_128, 128);
  printf("%s\n", wrong ? "WRONG RESULTS" : "all exact");
  return wrong != 0;
}
