/* cublaslt_configs.cu — is there a cuBLASLt configuration faster than its heuristic's first
 * choice at attn_block's four linear layers (B 8 x T 512 = 4096 rows, C 768; fp32, TF32 off)?
 * The qkv (N 2304) and proj (N 768) products run at 36-40 TF/s in tc against 48 for the MLP's two,
 * which looks like wave quantization: 288 and 192 tiles of 128 x 128 over 132 SMs. For each shape:
 * the heuristic's candidates (up to 32) timed in its order, then every algorithm id x tile x
 * split-K (1, 2, 3, 4) x CTA swizzle x stages that cublasLtMatmulAlgoCheck accepts; prints the
 * heuristic's first, its best, and the best of all, with tile, split-K and waves.
 * Layout as tc calls it: row-major X (M x K) · W (K x N) + bias (+ a residual as C, beta 1),
 * i.e. column-major D (N x M) = W (N x K) · X (K x M). */
#include "probe_cublaslt.h"

static const char *tile_name(int t) {
  /* the CUBLASLT_MATMUL_TILE_* enum's order (cublasLt.h) */
  static char buf[32];
  static const char *const names[] = {"undef", "8x8", "8x16", "16x8", "8x32", "16x16", "32x8", "8x64", "16x32",
                                      "32x16", "64x8", "32x32", "32x64", "64x32", "32x128", "64x64", "128x32",
                                      "64x128", "128x64", "64x256", "128x128", "256x64", "64x512", "128x256",
                                      "256x128", "512x64"};
  if (t >= 0 && t < (int)(sizeof names / sizeof names[0])) return names[t];
  snprintf(buf, sizeof buf, "tile%d", t);
  return buf;
}

int main() {
  cublasLtHandle_t lt;
  LK(cublasLtCreate(&lt));
  const size_t ws_bytes = 32u << 20;
  void *ws;
  CK(cudaMalloc(&ws, ws_bytes));
  for (const linear_shape &s : attn_block_linears) {
    linear_buffers buf(s);
    float *x = buf.x, *w = buf.w, *bias = buf.bias, *c = buf.c, *d = buf.d;
    cublasLtMatmulDesc_t op;
    LK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    cublasLtMatrixLayout_t la, lb, lc;
    LK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, s.n, s.k, s.n)); /* W: N x K, ld N */
    LK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, s.k, s.m, s.k)); /* X: K x M, ld K */
    LK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, s.n, s.m, s.n)); /* C, D: N x M */
    const float alpha = 1.0f, beta = s.residual ? 1.0f : 0.0f;
    const double flops = 2.0 * s.m * s.n * s.k;
    auto time_algo = [&](const cublasLtMatmulAlgo_t *algo, int rounds) -> float {
      cublasStatus_t st = cublasLtMatmul(lt, op, &alpha, w, la, x, lb, &beta, c, lc, d, lc, algo, ws, ws_bytes, 0);
      if (st != CUBLAS_STATUS_SUCCESS) return -1.0f;
      CK(cudaDeviceSynchronize());
      return probe_ms([&] { cublasLtMatmul(lt, op, &alpha, w, la, x, lb, &beta, c, lc, d, lc, algo, ws, ws_bytes, 0); },
                      10, rounds);
    };
    auto describe = [&](const cublasLtMatmulAlgo_t *algo, char *out, size_t n) {
      int id = 0, tile = 0, splitk = 0, swz = 0, stages = 0;
      size_t got;
      cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
      cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
      cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &got);
      cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &got);
      cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &got);
      snprintf(out, n, "algo %d tile %s splitk %d swizzle %d stages %d", id, tile_name(tile), splitk, swz, stages);
    };

    /* the heuristic's candidates, in its order */
    cublasLtMatmulPreference_t pref;
    LK(cublasLtMatmulPreferenceCreate(&pref));
    LK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[32];
    int got = 0;
    LK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 32, res, &got));
    printf("== %s: M %d N %d K %d%s, %.2f GF; heuristic: %d candidates\n", s.name, s.m, s.n, s.k,
           s.residual ? " + residual" : "", flops * 1e-9, got);
    float first = 0, best_h = 1e9, best_all = 1e9;
    char desc[160], best_h_desc[160] = "", best_all_desc[160] = "";
    for (int i = 0; i < got; i++) {
      float ms = time_algo(&res[i].algo, 7);
      describe(&res[i].algo, desc, sizeof desc);
      printf("  heuristic %2d: %8.1f us %6.2f TF/s  waves %.2f  %s\n", i, ms * 1e3, flops / (ms * 1e-3) * 1e-12,
             res[i].wavesCount, desc);
      if (i == 0) first = ms;
      if (ms > 0 && ms < best_h) best_h = ms, snprintf(best_h_desc, sizeof best_h_desc, "%s", desc);
    }
    best_all = best_h;
    snprintf(best_all_desc, sizeof best_all_desc, "%s", best_h_desc);

    /* everything cublasLtMatmulAlgoCheck accepts */
    int ids[64], n_ids = 0;
    LK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 64,
                                ids, &n_ids));
    int tried = 0;
    for (int a = 0; a < n_ids; a++) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                 ids[a], &algo) != CUBLAS_STATUS_SUCCESS)
        continue;
      int tiles[64] = {0}, stages[64] = {0}, splitk_ok = 0, swz_ok = 0;
      size_t tb = 0, sb = 0, g2;
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles, &tb);
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages, sizeof stages, &sb);
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk_ok, sizeof splitk_ok, &g2);
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swz_ok, sizeof swz_ok, &g2);
      int n_tiles = tb ? (int)(tb / sizeof(int)) : 1, n_stages = sb ? (int)(sb / sizeof(int)) : 1;
      if (n_tiles > 64) n_tiles = 64;
      if (n_stages > 64) n_stages = 64;
      for (int t = 0; t < n_tiles; t++)
        for (int st = 0; st < n_stages; st++)
          for (int sk = 1; sk <= (splitk_ok ? 4 : 1); sk++)
            for (int sw = 0; sw <= (swz_ok ? 1 : 0); sw++) {
              cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t], sizeof(int));
              cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages[st], sizeof(int));
              cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk);
              cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, sizeof sw);
              cublasLtMatmulHeuristicResult_t chk;
              if (cublasLtMatmulAlgoCheck(lt, op, la, lb, lc, lc, &algo, &chk) != CUBLAS_STATUS_SUCCESS) continue;
              if (chk.workspaceSize > ws_bytes) continue;
              float ms = time_algo(&algo, 3);
              tried++;
              if (ms > 0 && ms < best_all) {
                best_all = ms;
                describe(&algo, best_all_desc, sizeof best_all_desc);
                printf("  new best: %8.1f us %6.2f TF/s  waves %.2f  %s\n", ms * 1e3, flops / (ms * 1e-3) * 1e-12,
                       chk.wavesCount, best_all_desc);
              }
            }
    }
    /* the winner again, timed like the heuristic's candidates */
    printf("%s: heuristic first %.1f us (%.2f TF/s), heuristic best %.1f us [%s], all %d configs best %.1f us "
           "(%.2f TF/s) [%s]: %.3fx the first\n",
           s.name, first * 1e3, flops / (first * 1e-3) * 1e-12, best_h * 1e3, best_h_desc, tried, best_all * 1e3,
           flops / (best_all * 1e-3) * 1e-12, best_all_desc, best_all / first);
    fflush(stdout);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  cublasLtDestroy(lt);
  return 0;
}
