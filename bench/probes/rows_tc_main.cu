/* rows_tc_main.cu — times variants of an inductor-cuda row kernel as generated (made by
 * ln_gelu_tc.sh or softmax_tc.sh, each its own object compiled like the plugin's modules:
 * --fmad=false) against cudaMemcpy: 20 back-to-back launches between events, the median of 7.
 * Which of the generated kernel's traits cost bandwidth? The script writes variants.h:
 * VARIANTS(X), and LN_GELU (ln_gelu, 8192 x 4096: x, gamma, beta -> y; a block of 256 per row)
 * or SOFTMAX (softmax, 32768 x 1024: x -> y; a warp per row, 4 rows a block of 128). */
#include <cmath>

#include "probe_cuda.h"

typedef struct tc_cu_args {
  void *buf[32];
  long long s[32];
} tc_cu_args;
#include "variants.h"
#define DECL(n) extern "C" __global__ void n(const tc_cu_args a);
VARIANTS(DECL)


#ifdef LN_GELU
enum { M = 8192, N = 4096, BLOCK = 256, ROWS_PER_BLOCK = 1 };
#else
enum { M = 32768, N = 1024, BLOCK = 128, ROWS_PER_BLOCK = 4 };
#endif

/* GB/s of one launch (bytes read + written), 20 back-to-back launches a round, the median of 7 */
template <class F> static double gbps(F launch) { return 2.0 * M * N * 4 / (probe_ms(launch, 20, 7) * 1e-3) / 1e9; }

int main() {
  std::vector<float> hx((size_t)M * N), hg(N), hb(N);
  unsigned s = 12345;
  for (auto &v : hx) s = s * 1664525u + 1013904223u, v = ((s >> 8) * (1.0f / 16777216.0f) - 0.5f) * 4;
  for (int i = 0; i < N; i++) hg[i] = 1 + 0.001f * (i % 7), hb[i] = 0.01f * (i % 5);
  float *x, *y, *g, *b;
  CK(cudaMalloc(&x, hx.size() * 4));
  CK(cudaMalloc(&y, hx.size() * 4));
  CK(cudaMalloc(&g, N * 4));
  CK(cudaMalloc(&b, N * 4));
  CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, hg.data(), N * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), N * 4, cudaMemcpyHostToDevice));
  tc_cu_args args = {};
#ifdef LN_GELU
  args.buf[0] = x, args.buf[1] = g, args.buf[2] = b, args.buf[3] = y;
#else
  args.buf[0] = x, args.buf[1] = y;
#endif
  args.s[0] = M;
  std::vector<float> ref;
  for (int round = 0; round < 2; round++) {
    printf("cudaMemcpy %.0f GB/s\n", gbps([&] { cudaMemcpyAsync(y, x, hx.size() * 4, cudaMemcpyDeviceToDevice); }));
#define RUN(n)                                                                                           \
  {                                                                                                      \
    const double r = gbps([&] { n<<<M / ROWS_PER_BLOCK, BLOCK>>>(args); });                                                 \
    std::vector<float> out(hx.size());                                                                   \
    CK(cudaMemcpy(out.data(), y, out.size() * 4, cudaMemcpyDeviceToHost));                               \
    if (ref.empty()) ref = out;                                                                          \
    double worst = 0;                                                                                    \
    for (size_t i = 0; i < out.size(); i += 97) worst = std::max(worst, (double)fabsf(out[i] - ref[i])); \
    printf("  %-14s %6.0f GB/s  max diff to the first %.1e\n", #n, r, worst);                           \
  }
    VARIANTS(RUN)
  }
  return 0;
}
