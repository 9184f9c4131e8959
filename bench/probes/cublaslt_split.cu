/* cublaslt_split.cu — does splitting one of attn_block's linear layers into two products that run
 * side by side on two streams beat the single cuBLASLt call? cublaslt_configs.cu found no single
 * configuration faster for qkv (N 2304: 41 TF/s), proj and W2 (N 768: 39 and 46 TF/s) while W1
 * (N 3072) reaches 51: with one tile size, 288 or 192 equal tiles over 132 SMs leave the last wave
 * part empty. Two products of different shapes get different tiles from the heuristic, whose
 * CTAs can fill each other's gaps. For each shape: the whole product, then N split into column
 * blocks [0, N1) and [N1, N) and M into row blocks [0, M1) and [M1, M), each part with the
 * heuristic's first choice, the two parts on two streams between a fork and a join event.
 * Layout as tc calls it (cublaslt_configs.cu): column-major D (N x M) = W (N x K) · X (K x M) +
 * bias (+ a residual as C, beta 1); a column block offsets W, bias, C and D by N1 (ld N), a row
 * block offsets X by M1*K and C, D by M1*N. */
#include "probe_cublaslt.h"

static cublasLtHandle_t lt;
static void *ws[2];
static const size_t ws_bytes = 32u << 20;

/* One product D[n x m] (ld ldd) = W[n x k] (ld ldw) · X[k x m] (ld k) + bias (+ C), planned once. */
struct part {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
  const float *w, *x, *bias, *c;
  float *d;
  float beta;
  double waves;
  void plan(int n, int m, int k, int ld, const float *w_, const float *x_, const float *bias_, const float *c_, float *d_,
            bool residual) {
    w = w_, x = x_, bias = bias_, c = c_, d = d_, beta = residual ? 1.0f : 0.0f;
    LK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    LK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, k, ld));
    LK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, m, k));
    LK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, ld));
    cublasLtMatmulPreference_t pref;
    LK(cublasLtMatmulPreferenceCreate(&pref));
    LK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    LK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &got));
    if (got < 1) fprintf(stderr, "no algorithm for %d x %d x %d\n", n, m, k), exit(1);
    algo = res.algo, waves = res.wavesCount;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  void run(cudaStream_t s, int wi) const {
    const float alpha = 1.0f;
    cublasLtMatmul(lt, op, &alpha, w, la, x, lb, &beta, c, lc, d, lc, &algo, ws[wi], ws_bytes, s);
  }
};

int main() {
  /* where each of attn_block_linears splits: columns N1 (0: no more), rows M1 */
  const int n1s[4][4] = {{2048, 1920, 1536, 1152}, {512, 384, 640, 0}, {2560, 2048, 1536, 0}, {512, 384, 640, 0}};
  const int m1s[3] = {3584, 3072, 2048};
  LK(cublasLtCreate(&lt));
  CK(cudaMalloc(&ws[0], ws_bytes));
  CK(cudaMalloc(&ws[1], ws_bytes));
  cudaStream_t s1;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  for (int si = 0; si < 4; si++) {
    const linear_shape &s = attn_block_linears[si];
    linear_buffers buf(s);
    float *x = buf.x, *w = buf.w, *bias = buf.bias, *c = buf.c, *d = buf.d;
    const double flops = 2.0 * s.m * s.n * s.k;
    part whole;
    whole.plan(s.n, s.m, s.k, s.n, w, x, bias, c, d, s.residual);
    float t_whole = probe_ms([&] { whole.run(0, 0); }, 10, 9);
    printf("== %s: M %d N %d K %d: whole %.1f us (%.2f TF/s, waves %.2f)\n", s.name, s.m, s.n, s.k, t_whole * 1e3,
           flops / (t_whole * 1e-3) * 1e-12, whole.waves);
    auto pair = [&](const char *what, int at, part &a, part &b) {
      float t = probe_ms(
          [&] {
            cudaEventRecord(fork, 0);
            cudaStreamWaitEvent(s1, fork, 0);
            a.run(0, 0);
            b.run(s1, 1);
            cudaEventRecord(join, s1);
            cudaStreamWaitEvent(0, join, 0);
          },
          10, 9);
      float ta = probe_ms([&] { a.run(0, 0); }, 10, 5), tb = probe_ms([&] { b.run(0, 0); }, 10, 5);
      printf("  %s at %4d: %7.1f us (%.3fx whole; parts alone %.1f + %.1f us, waves %.2f + %.2f)\n", what, at, t * 1e3,
             t / t_whole, ta * 1e3, tb * 1e3, a.waves, b.waves);
    };
    for (int i = 0; i < 4 && n1s[si][i]; i++) {
      int n1 = n1s[si][i];
      part a, b;
      a.plan(n1, s.m, s.k, s.n, w, x, bias, c, d, s.residual);
      b.plan(s.n - n1, s.m, s.k, s.n, w + n1, x, bias + n1, c + n1, d + n1, s.residual);
      pair("N split", n1, a, b);
    }
    for (int i = 0; i < 3; i++) {
      int m1 = m1s[i];
      part a, b;
      a.plan(s.n, m1, s.k, s.n, w, x, bias, c, d, s.residual);
      b.plan(s.n, s.m - m1, s.k, s.n, w, x + (size_t)m1 * s.k, bias, c + (size_t)m1 * s.n, d + (size_t)m1 * s.n,
             s.residual);
      pair("M split", m1, a, b);
    }
    fflush(stdout);
  }
  return 0;
}
