/* blaslt.c — MATMUL kernels through cuBLASLt, dlopen'd (libcublasLt.so.<CUBLAS_VER_MAJOR>, then
 * libcublasLt.so) once per process; the handle per context (preload.c makes it on a thread).
 *
 * tc's matmul is row-major: C[b2,b] (m x n) = A[b2,b] (m x k) . B[b2,b] (k x n), every stride
 * evaluated at launch. cuBLASLt is column-major, and a row-major matrix with inner stride 1 is
 * the column-major view of its transpose; so the product is computed as C^T = B^T . A^T (n x m,
 * leading dimension C's row stride). A C whose column stride is 1 instead (a column-major C) is
 * computed directly as C = A . B. An operand whose inner stride is not 1 but whose other stride
 * is goes in transposed (CUBLAS_OP_T); one with neither stride 1 (or rows overlapping: a leading
 * dimension below the row count) is refused with TC_ERR_UNSUPPORTED. A dimension of extent 1
 * places no constraint on its stride.
 *
 * Batches: the inner batch level through CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and
 * STRIDED_BATCH_OFFSET (in elements; 0 broadcasts an operand); a second level is a loop of such
 * calls. k = 0 writes zeros (cuMemsetD8Async) when C is dense. Compute type CUBLAS_COMPUTE_32F
 * for f32 (CUBLAS_COMPUTE_32F_FAST_TF32 with cuda.allow_tf32), CUBLAS_COMPUTE_64F for f64;
 * alpha 1, beta 0, host pointer mode. The algorithm is the heuristic's first answer for the
 * shape, strides and pointer alignment, cached per kernel (ICUDA_MM_ALGO_SLOTS shapes, round
 * robin). The workspace (cuda.workspace_mb) is one stream-ordered allocation per context.
 * preload.c loads the library on a thread of its own from context creation; this file makes the
 * handle on the calls' thread (at the first matmul, or meanwhile NVRTC runs) and hands cuBLASLt's
 * own lazy start-up to blaslt_warmup.c's thread, which the first cuBLASLt matmul joins. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "icuda.h"

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct blaslt_fns {
  void *lib;
  size_t version;
  cublasStatus_t (*Create)(cublasLtHandle_t *);
  cublasStatus_t (*Destroy)(cublasLtHandle_t);
  const char *(*GetStatusName)(cublasStatus_t);
  size_t (*GetVersion)(void);
  cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
  cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
  cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
  cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*MatrixLayoutSetAttribute)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void *, size_t);
  cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
  cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                                                 const void *, size_t);
  cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                           cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t[], int *);
  cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,
                           const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t, void *,
                           cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
  /* max-autotune's search past the heuristic (algo_configs); optional: without them it times
   * the heuristic's candidates alone */
  cublasStatus_t (*MatmulAlgoGetIds)(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                     cudaDataType_t, cudaDataType_t, int, int[], int *);
  cublasStatus_t (*MatmulAlgoInit)(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                   cudaDataType_t, cudaDataType_t, int, cublasLtMatmulAlgo_t *);
  cublasStatus_t (*MatmulAlgoCapGetAttribute)(const cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoCapAttributes_t, void *, size_t,
                                              size_t *);
  cublasStatus_t (*MatmulAlgoConfigSetAttribute)(cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t, const void *,
                                                 size_t);
  cublasStatus_t (*MatmulAlgoCheck)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
                                    cublasLtMatmulHeuristicResult_t *);
} blaslt_fns;

struct icuda_blaslt {
  cublasLtHandle_t handle;
};

/* One cached heuristic answer: the key is every input the answer depends on. */
#define MM_KEY_LEN 26
struct icuda_mm_algo_slot {
  bool used;
  int64_t key[MM_KEY_LEN];
  cublasLtMatmulAlgo_t algo;
};

static blaslt_fns g_lt;
static bool g_lt_ok;
static char g_lt_why[512];
static pthread_once_t g_lt_once = PTHREAD_ONCE_INIT;
static double g_lt_load_seconds;
static int g_lt_tried; /* atomic: the load has run (g_lt_ok says how it went) */

static void blaslt_load_timed(void);
static void blaslt_load_once(void) {
  double t0 = tck_now_s();
  blaslt_load_timed();
  g_lt_load_seconds = tck_now_s() - t0;
  __atomic_store_n(&g_lt_tried, 1, __ATOMIC_RELEASE);
}

static void blaslt_load_timed(void) {
  static const char *const names[] = {"libcublasLt.so." STR(CUBLAS_VER_MAJOR), "libcublasLt.so"};
  char why[300];
  void *lib = icuda_dlopen_first(names, 2, why, sizeof why);
  if (!lib) {
    snprintf(g_lt_why, sizeof g_lt_why, "no cuBLASLt (%s)", why);
    return;
  }
  blaslt_fns f = {.lib = lib};
  const char *missing = NULL;
#define SYM(field, symbol) icuda_dlsym(lib, symbol, &f.field, sizeof f.field, &missing)
  SYM(Create, "cublasLtCreate");
  SYM(Destroy, "cublasLtDestroy");
  SYM(GetStatusName, "cublasLtGetStatusName");
  SYM(GetVersion, "cublasLtGetVersion");
  SYM(MatmulDescCreate, "cublasLtMatmulDescCreate");
  SYM(MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  SYM(MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  SYM(MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  SYM(MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  SYM(MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  SYM(MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  SYM(MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  SYM(MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  SYM(MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  SYM(Matmul, "cublasLtMatmul");
  if (missing) {
    snprintf(g_lt_why, sizeof g_lt_why, "cuBLASLt lacks %s", missing);
    dlclose(lib);
    return;
  }
  const char *optional_missing = NULL;
#undef SYM
#define SYM(field, symbol) icuda_dlsym(lib, symbol, &f.field, sizeof f.field, &optional_missing)
  SYM(MatmulAlgoGetIds, "cublasLtMatmulAlgoGetIds");
  SYM(MatmulAlgoInit, "cublasLtMatmulAlgoInit");
  SYM(MatmulAlgoCapGetAttribute, "cublasLtMatmulAlgoCapGetAttribute");
  SYM(MatmulAlgoConfigSetAttribute, "cublasLtMatmulAlgoConfigSetAttribute");
  SYM(MatmulAlgoCheck, "cublasLtMatmulAlgoCheck");
#undef SYM
  if (optional_missing) f.MatmulAlgoGetIds = NULL; /* the search needs all five */
  f.version = f.GetVersion();
  g_lt = f;
  g_lt_ok = true;
}

static const char *st_name(cublasStatus_t s) {
  const char *n = g_lt_ok && g_lt.GetStatusName ? g_lt.GetStatusName(s) : NULL;
  return n ? n : "CUBLAS_STATUS_?";
}

void icuda_mm_algos_free(icuda_mm_algo_slot *slots) { free(slots); }

void icuda_blaslt_release(tc_plugin_ctx *ctx) {
  icuda_blaslt_warmup_join(ctx);
  if (!ctx->blaslt) return;
  if (ctx->blaslt->handle) {
    cublasStatus_t s = g_lt.Destroy(ctx->blaslt->handle);
    if (s != CUBLAS_STATUS_SUCCESS)
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda release: cublasLtDestroy failed: %s", st_name(s));
  }
  free(ctx->blaslt);
  ctx->blaslt = NULL;
}

/* The warm-up thread's query (blaslt_warmup.c): a heuristic query for an f32 product of 1024s,
 * whose answer is dropped; cuBLASLt's lazy start-up is what it is for. */
void icuda_blaslt_first_query(tc_plugin_ctx *ctx) {
  double t0 = tck_now_s();
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t l = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasStatus_t s = g_lt.MatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatrixLayoutCreate(&l, CUDA_R_32F, 1024, 1024, 1024);
  if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceCreate(&pref);
  uint64_t ws = ctx->workspace ? (uint64_t)ctx->workspace_bytes : 0;
  if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res;
  int got = 0;
  if (s == CUBLAS_STATUS_SUCCESS) g_lt.MatmulAlgoGetHeuristic(ctx->blaslt->handle, desc, l, l, l, l, pref, 1, &res, &got);
  if (pref) g_lt.MatmulPreferenceDestroy(pref);
  if (l) g_lt.MatrixLayoutDestroy(l);
  if (desc) g_lt.MatmulDescDestroy(desc);
  ctx->lt_warm_seconds = tck_now_s() - t0;
}

/* The handle and the workspace, at the first cuBLASLt matmul of the context or while NVRTC
 * runs (waiting for the preload thread's load if it still runs); the warm-up thread started. */
static tc_error *blaslt_ready(tc_plugin_ctx *ctx) {
  if (ctx->blaslt) return NULL;
  icuda_libraries_preload_join(ctx);
  pthread_once(&g_lt_once, blaslt_load_once);
  if (!g_lt_ok) return tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda matmul: %s", g_lt_why);
  icuda_blaslt *b = calloc(1, sizeof *b);
  if (!b) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda matmul: out of memory");
  double t0 = tck_now_s();
  cublasStatus_t s = g_lt.Create(&b->handle);
  double create_s = tck_now_s() - t0;
  if (s != CUBLAS_STATUS_SUCCESS) {
    free(b);
    return tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda matmul: cublasLtCreate failed: %s", st_name(s));
  }
  if (ctx->workspace_bytes && !ctx->workspace) {
    tc_error *e = icuda_device_alloc(ctx, ctx->workspace_bytes, &ctx->workspace, "matmul (cuBLASLt workspace)");
    if (e) {
      g_lt.Destroy(b->handle);
      free(b);
      return e;
    }
  }
  ctx->blaslt = b;
  tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: cuBLASLt %zu (loaded in %.1f ms, handle %.1f ms), workspace %zu MiB",
            g_lt.version, g_lt_load_seconds * 1e3, create_s * 1e3, ctx->workspace_bytes >> 20);
  icuda_blaslt_warmup_start(ctx);
  return NULL;
}

tc_error *icuda_blaslt_start(tc_plugin_ctx *ctx) { return blaslt_ready(ctx); }

tc_error *icuda_blaslt_prepare(tc_plugin_ctx *ctx) {
  tc_error *e = blaslt_ready(ctx);
  if (e || !ctx->lt_warming) return e;
  double t0 = tck_now_s();
  icuda_blaslt_warmup_join(ctx);
  tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: cuBLASLt's start-up (its first heuristic query) took %.1f ms on a thread; %.1f ms waited for it",
          ctx->lt_warm_seconds * 1e3, (tck_now_s() - t0) * 1e3);
  return NULL;
}

bool icuda_blaslt_loaded_now(tc_plugin_ctx *ctx) {
  if (ctx->preloading && !__atomic_load_n(&ctx->lt_done, __ATOMIC_ACQUIRE)) return false;
  return __atomic_load_n(&g_lt_tried, __ATOMIC_ACQUIRE) && g_lt_ok;
}

bool icuda_blaslt_ready_now(tc_plugin_ctx *ctx) {
  if (ctx->blaslt) return icuda_blaslt_warmup_done(ctx);
  /* no thread loading it (none started, or it was joined) and never tried: the first cuBLASLt
   * matmul loads it on this thread */
  return !ctx->preloading && !__atomic_load_n(&g_lt_tried, __ATOMIC_ACQUIRE);
}

bool icuda_blaslt_unavailable(void) { return __atomic_load_n(&g_lt_tried, __ATOMIC_ACQUIRE) && !g_lt_ok; }

const char *icuda_blaslt_not_ready_why(tc_plugin_ctx *ctx) {
  if (ctx->preloading && !__atomic_load_n(&ctx->lt_done, __ATOMIC_ACQUIRE))
    return "is still loading";
  if (ctx->blaslt && !icuda_blaslt_warmup_done(ctx)) return "is still starting (its first heuristic query, on a thread)";
  return g_lt_why[0] ? g_lt_why : "did not load";
}

bool icuda_blaslt_load(void) {
  pthread_once(&g_lt_once, blaslt_load_once);
  return g_lt_ok;
}

/* A column-major operand: op, rows x cols as stored, leading dimension. */
typedef struct mm_mat {
  cublasOperation_t op;
  int64_t rows, cols, ld;
} mm_mat;

/* Logical X (r x c), X(i,j) at i*s_row + j*s_col, as op(stored) of a column-major matrix.
 * false when no layout fits. */
static bool mm_operand(int64_t r, int64_t c, int64_t s_row, int64_t s_col, bool may_transpose, mm_mat *out) {
  if (r == 1 || s_row == 1) {
    int64_t ld = c == 1 ? r : s_col;
    if (ld < r || ld < 1) return false;
    *out = (mm_mat){CUBLAS_OP_N, r, c, ld};
    return true;
  }
  if (may_transpose && (c == 1 || s_col == 1)) {
    int64_t ld = s_row;
    if (ld < c || ld < 1) return false;
    *out = (mm_mat){CUBLAS_OP_T, c, r, ld};
    return true;
  }
  return false;
}

static int64_t ev(const int64_t *vals, int32_t id) { return id >= 0 ? vals[id] : 0; }
static int64_t ev_extent(const int64_t *vals, int32_t id) { return id >= 0 ? vals[id] : 1; }

/* The largest power of two (up to 256) dividing every value: what cuBLASLt may assume. */
static int64_t align_of(uint64_t bits) {
  int64_t a = 1;
  while (a < 256 && !(bits & (uint64_t)a)) a <<= 1;
  return a;
}

typedef struct mm_call {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc, lr; /* lr: the residual as C (fused epilogue) */
  cublasLtMatmulPreference_t pref;
} mm_call;

static void mm_call_free(mm_call *c) {
  if (c->desc) g_lt.MatmulDescDestroy(c->desc);
  if (c->la) g_lt.MatrixLayoutDestroy(c->la);
  if (c->lb) g_lt.MatrixLayoutDestroy(c->lb);
  if (c->lc) g_lt.MatrixLayoutDestroy(c->lc);
  if (c->lr) g_lt.MatrixLayoutDestroy(c->lr);
  if (c->pref) g_lt.MatmulPreferenceDestroy(c->pref);
}

static cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType dt, const mm_mat *m, int64_t batch, int64_t stride) {
  cublasStatus_t s = g_lt.MatrixLayoutCreate(l, dt, (uint64_t)m->rows, (uint64_t)m->cols, m->ld);
  if (s != CUBLAS_STATUS_SUCCESS || batch <= 1) return s;
  int32_t count = (int32_t)batch;
  s = g_lt.MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
  if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  return s;
}

/* ---------------------------------------------------------------- max-autotune
 * cuBLASLt's heuristic gives its candidates best first; max-autotune times up to
 * ICUDA_TUNE_ALGOS of them, then every other configuration cuBLASLt accepts for the call
 * (algo_configs), on scratch operands of the same layouts (zeros: the call's own buffers may
 * hold another kernel's live data, and in-place residuals would be overwritten) and keeps the
 * fastest, by its place in that list, in the disk cache (the kit's tck_tune_choose: the key is
 * the device, cuBLASLt's version and everything the list depends on), so a later process times
 * nothing. */
#define ICUDA_TUNE_ALGOS 8
#define ICUDA_TUNE_CONFIGS 192

/* The configurations past the heuristic's list: every algorithm id x tile x stages x CTA
 * swizzle that cublasLtMatmulAlgoCheck accepts for the call within the workspace, in a fixed
 * order (the disk cache keeps a place in the list), at most cap. The heuristic's 8 can all miss
 * the fastest: at attn_block's MLP up-projection (4096 x 3072 x 768, bias) algorithm 55 with
 * 256 x 128 tiles ran 381 us against its first's 413 (bench/probes/cublaslt_configs.cu, H200).
 * Split-K stays 1: the heuristic's own split-K choices carry their reduction scheme, an
 * enumerated split would need one chosen here. Returns how many it wrote to out. */
static int algo_configs(tc_plugin_ctx *ctx, const mm_call *c, cublasComputeType_t ct, cudaDataType dt, bool res_layout,
                        cublasLtMatmulHeuristicResult_t *out, int cap) {
  if (!g_lt.MatmulAlgoGetIds || cap <= 0) return 0;
  cudaDataType scale = ct == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
  cublasLtHandle_t h = ctx->blaslt->handle;
  int ids[64], n_ids = 0, n = 0;
  if (g_lt.MatmulAlgoGetIds(h, ct, scale, dt, dt, dt, dt, 64, ids, &n_ids) != CUBLAS_STATUS_SUCCESS) return 0;
  const size_t ws = ctx->workspace ? ctx->workspace_bytes : 0;
  for (int a = 0; a < n_ids && n < cap; a++) {
    cublasLtMatmulAlgo_t algo;
    if (g_lt.MatmulAlgoInit(h, ct, scale, dt, dt, dt, dt, ids[a], &algo) != CUBLAS_STATUS_SUCCESS) continue;
    uint32_t tiles[64] = {0}, stages[64] = {0}, swizzle = 0;
    size_t tiles_b = 0, stages_b = 0, got = 0;
    g_lt.MatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles, &tiles_b);
    g_lt.MatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages, sizeof stages, &stages_b);
    if (g_lt.MatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swizzle, sizeof swizzle, &got) !=
        CUBLAS_STATUS_SUCCESS)
      swizzle = 0;
    int n_tiles = tiles_b ? (int)(tiles_b / sizeof tiles[0]) : 1, n_stages = stages_b ? (int)(stages_b / sizeof stages[0]) : 1;
    if (n_tiles > 64) n_tiles = 64;
    if (n_stages > 64) n_stages = 64;
    for (int t = 0; t < n_tiles && n < cap; t++)
      for (int st = 0; st < n_stages && n < cap; st++)
        for (uint32_t sw = 0; sw <= (swizzle ? 1u : 0u) && n < cap; sw++) {
          const int32_t one = 1;
          bool set = g_lt.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t], sizeof tiles[t]) ==
                         CUBLAS_STATUS_SUCCESS &&
                     g_lt.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages[st],
                                                       sizeof stages[st]) == CUBLAS_STATUS_SUCCESS &&
                     g_lt.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof one) ==
                         CUBLAS_STATUS_SUCCESS &&
                     g_lt.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, sizeof sw) ==
                         CUBLAS_STATUS_SUCCESS;
          cublasLtMatmulHeuristicResult_t r;
          memset(&r, 0, sizeof r);
          if (!set || g_lt.MatmulAlgoCheck(h, c->desc, c->la, c->lb, res_layout ? c->lr : c->lc, c->lc, &algo, &r) !=
                          CUBLAS_STATUS_SUCCESS ||
              r.workspaceSize > ws)
            continue;
          r.algo = algo;
          r.state = CUBLAS_STATUS_SUCCESS;
          out[n++] = r;
        }
  }
  return n;
}

typedef struct algo_tuning {
  tc_plugin_ctx *ctx;
  mm_call *call;
  const cublasLtMatmulHeuristicResult_t *res;
  int n;
  const void *alpha, *beta;
  CUdeviceptr a, b, c, d;
  bool has_res;
  CUevent begin, end;
} algo_tuning;

static cublasStatus_t algo_run(algo_tuning *t, int variant) {
  mm_call *c = t->call;
  void *ws = (void *)(uintptr_t)t->ctx->workspace;
  size_t ws_bytes = t->ctx->workspace ? t->ctx->workspace_bytes : 0;
  void *d = (void *)(uintptr_t)t->d;
  const void *cin = t->has_res ? (const void *)(uintptr_t)t->c : d;
  return g_lt.Matmul(t->ctx->blaslt->handle, c->desc, t->alpha, (const void *)(uintptr_t)t->a, c->la,
                     (const void *)(uintptr_t)t->b, c->lb, t->beta, cin, t->has_res ? c->lr : c->lc, d, c->lc,
                     &t->res[variant].algo, ws, ws_bytes, (cudaStream_t)t->ctx->stream);
}

/* One run to warm up, then the mean of three between two events; < 0 when it cannot run. */
static double algo_measure(void *arg, int32_t variant) {
  algo_tuning *t = arg;
  const icuda_driver *cu = t->ctx->cu;
  if (variant < 0 || variant >= t->n || algo_run(t, variant) != CUBLAS_STATUS_SUCCESS) return -1;
  if (cu->cuEventRecord(t->begin, t->ctx->stream) != CUDA_SUCCESS) return -1;
  for (int i = 0; i < 3; i++)
    if (algo_run(t, variant) != CUBLAS_STATUS_SUCCESS) return -1;
  float ms = 0;
  if (cu->cuEventRecord(t->end, t->ctx->stream) != CUDA_SUCCESS || cu->cuEventSynchronize(t->end) != CUDA_SUCCESS ||
      cu->cuEventElapsedTime(&ms, t->begin, t->end) != CUDA_SUCCESS)
    return -1;
  return 1e-3 * (double)ms / 3;
}

/* Elements a column-major operand spans, batches included. */
static int64_t mat_span(const mm_mat *m, int64_t batch, int64_t stride) {
  return m->ld * (m->cols - 1) + m->rows + (batch > 1 ? (batch - 1) * stride : 0);
}

/* The place in res[0 .. n) to run (the heuristic's n_heuristic candidates, then algo_configs'):
 * the disk cache's, else the fastest as timed. Any failure of the timing machinery keeps the
 * heuristic's first. */
static int algo_choose(tc_plugin_ctx *ctx, const icuda_kernel *k, mm_call *call, const cublasLtMatmulHeuristicResult_t *res,
                       int n, int n_heuristic, const int64_t *key, int64_t es, const mm_mat *m1, const mm_mat *m2,
                       const mm_mat *mc, const mm_mat *mr, int64_t B1, int64_t s1, int64_t s2, int64_t sc, int64_t sr, bool has_res,
                       const void *real_bias, const void *alpha, const void *beta) {
  const bool has_bias = real_bias != NULL;
  const icuda_driver *cu = ctx->cu;
  algo_tuning t = {.ctx = ctx, .call = call, .res = res, .n = n, .alpha = alpha, .beta = beta, .has_res = has_res};
  CUdeviceptr bias = 0;
  const int64_t spans[5] = {mat_span(m1, B1, s1), mat_span(m2, B1, s2), has_res ? mat_span(mr, B1, sr) : 0,
                            mat_span(mc, B1, sc), has_bias ? mc->rows : 0};
  CUdeviceptr *bufs[5] = {&t.a, &t.b, &t.c, &t.d, &bias};
  bool ok = cu->cuEventCreate && cu->cuEventCreate(&t.begin, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
  if (ok && cu->cuEventCreate(&t.end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    cu->cuEventDestroy(t.begin);
    ok = false;
  }
  bool events = ok;
  for (int i = 0; i < 5 && ok; i++) {
    if (spans[i] <= 0) continue;
    tc_error *e = icuda_device_alloc(ctx, (size_t)(spans[i] * es), bufs[i], "max-autotune (cuBLASLt scratch operands)");
    if (e) {
      ctx->host->error_free(ctx->host->host_ctx, e);
      ok = false;
    } else {
      ok = cu->cuMemsetD8Async(*bufs[i], 0, (size_t)(spans[i] * es), ctx->stream) == CUDA_SUCCESS;
    }
  }
  const void *scratch_bias = (const void *)(uintptr_t)bias;
  if (ok && has_bias)
    ok = g_lt.MatmulDescSetAttribute(call->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &scratch_bias, sizeof scratch_bias) ==
         CUBLAS_STATUS_SUCCESS;
  int chosen = 0;
  if (ok) {
    int32_t variants[ICUDA_TUNE_ALGOS + ICUDA_TUNE_CONFIGS];
    for (int i = 0; i < n; i++) variants[i] = i;
    tck_str kt = {0}, what = {0};
    tck_str_printf(&kt, "inductor-cuda cuBLASLt algorithm\n%s sm_%d\ncuBLASLt %zu\nheuristic %d, configurations %d\n",
                   ctx->facts.name, (int)ctx->facts.sm, g_lt.version, n_heuristic, n - n_heuristic);
    for (int i = 0; i < MM_KEY_LEN; i++) tck_str_printf(&kt, "%lld ", (long long)key[i]);
    tck_str_printf(&what, "matmul '%s' (%lld x %lld, %s%s; the heuristic's first %d algorithms, then %d configurations)",
                   k->name, (long long)mc->cols, (long long)mc->rows, has_bias ? "bias, " : "",
                   has_res ? "residual" : "no residual", n_heuristic, n - n_heuristic);
    bool from_cache = false;
    tck_tune_request req = {.who = "inductor-cuda", .what = what.data ? what.data : "matmul", .key = kt.data ? kt.data : "",
                            .key_len = kt.len, .variants = variants, .n = n, .measure = algo_measure, .arg = &t};
    if (!kt.oom && !what.oom) chosen = tck_tune_choose(ctx->host, &req, &from_cache);
    tck_str_free(&kt);
    tck_str_free(&what);
    if (chosen < 0 || chosen >= n) chosen = 0;
  }
  if (has_bias)
    g_lt.MatmulDescSetAttribute(call->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &real_bias, sizeof real_bias);
  cu->cuStreamSynchronize(ctx->stream); /* the scratch's last use */
  for (int i = 0; i < 5; i++)
    if (*bufs[i]) icuda_device_free(ctx, *bufs[i]);
  if (events) {
    cu->cuEventDestroy(t.begin);
    cu->cuEventDestroy(t.end);
  }
  return chosen;
}

tc_error *icuda_blaslt_matmul(tc_plugin_ctx *ctx, tc_executable *exe, icuda_kernel *k, const int64_t *vals,
                              const icuda_args *args, bool *epilogue_done) {
  const tc_matmul_desc *d = &k->mm;
  *epilogue_done = false;
  bool two = d->batch_levels == 2;
  int64_t M = ev_extent(vals, d->m), N = ev_extent(vals, d->n), K = ev_extent(vals, d->k);
  int64_t B1 = ev_extent(vals, d->batch), B2 = two ? ev_extent(vals, d->batch2) : 1;
  if (M <= 0 || N <= 0 || B1 <= 0 || B2 <= 0) return NULL; /* an empty product */
  int32_t dtype = k->dtype[d->a];
  int64_t es = (int64_t)k->elem_size[d->a];
  int64_t a_sm = ev(vals, d->a_stride_m), a_sk = ev(vals, d->a_stride_k), a_sb = ev(vals, d->a_stride_batch);
  int64_t b_sk = ev(vals, d->b_stride_k), b_sn = ev(vals, d->b_stride_n), b_sb = ev(vals, d->b_stride_batch);
  int64_t c_sm = ev(vals, d->c_stride_m), c_sn = ev(vals, d->c_stride_n), c_sb = ev(vals, d->c_stride_batch);
  int64_t a_s2 = two ? ev(vals, d->a_stride_batch2) : 0, b_s2 = two ? ev(vals, d->b_stride_batch2) : 0,
          c_s2 = two ? ev(vals, d->c_stride_batch2) : 0;
  if (a_sm < 0 || a_sk < 0 || a_sb < 0 || b_sk < 0 || b_sn < 0 || b_sb < 0 || c_sm < 0 || c_sn < 0 || c_sb < 0 ||
      a_s2 < 0 || b_s2 < 0 || c_s2 < 0)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda launch '%s': a negative matmul stride", k->name);
  char *pa = (char *)args->buf[d->a] + ev(vals, d->a_offset) * es;
  char *pb = (char *)args->buf[d->b] + ev(vals, d->b_offset) * es;
  char *pc = (char *)args->buf[d->c] + ev(vals, d->c_offset) * es;

  if (K <= 0) { /* sum over nothing: zeros, where C is one dense block */
    bool dense = (N == 1 || c_sn == 1) && (M == 1 || c_sm == N) && (B1 == 1 || c_sb == M * N) && (B2 == 1 || c_s2 == B1 * M * N);
    if (!dense)
      return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda launch '%s': a matmul with k = 0 into a strided C", k->name);
    CUresult r = ctx->cu->cuMemsetD8Async((CUdeviceptr)(uintptr_t)pc, 0, (size_t)(B2 * B1 * M * N * es), ctx->stream);
    if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuMemsetD8Async", "launch '%s' (k = 0: zeros)", k->name);
    return NULL;
  }

  /* orientation: C^T = B^T . A^T (C row-major), else C = A . B (C column-major) */
  mm_mat mx1, mx2, mc;
  bool swapped;
  const char *bad = NULL;
  int64_t s1, s2; /* batch strides of the first and second operands */
  char *p1, *p2;
  int64_t p1_s2, p2_s2;
  if (mm_operand(N, M, c_sn, c_sm, false, &mc)) {
    swapped = true;
    if (!mm_operand(N, K, b_sn, b_sk, true, &mx1)) bad = "B";
    else if (!mm_operand(K, M, a_sk, a_sm, true, &mx2)) bad = "A";
    p1 = pb, p2 = pa, s1 = b_sb, s2 = a_sb, p1_s2 = b_s2, p2_s2 = a_s2;
  } else if (mm_operand(M, N, c_sm, c_sn, false, &mc)) {
    swapped = false;
    if (!mm_operand(M, K, a_sm, a_sk, true, &mx1)) bad = "A";
    else if (!mm_operand(K, N, b_sk, b_sn, true, &mx2)) bad = "B";
    p1 = pa, p2 = pb, s1 = a_sb, s2 = b_sb, p1_s2 = a_s2, p2_s2 = b_s2;
  } else {
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED,
                     "inductor-cuda launch '%s': matmul output C (%lld x %lld) has strides (%lld, %lld): neither is 1, or "
                     "rows overlap; cuBLASLt needs one unit stride",
                     k->name, (long long)M, (long long)N, (long long)c_sm, (long long)c_sn);
  }
  if (bad) {
    bool is_a = bad[0] == 'A';
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED,
                     "inductor-cuda launch '%s': matmul operand %s (%lld x %lld) has strides (%lld, %lld): neither is 1, or "
                     "rows overlap; cuBLASLt needs one unit stride (the scheduler normally makes it contiguous)",
                     k->name, bad, (long long)(is_a ? M : K), (long long)(is_a ? K : N), (long long)(is_a ? a_sm : b_sk),
                     (long long)(is_a ? a_sk : b_sn));
  }

  /* the epilogue inside cuBLASLt's GEMM (blaslt_epilogue.c): C row-major, f32, the layouts fit */
  icuda_lt_bound lt;
  const icuda_lt_shape shape = {M, N, B1, B2};
  bool fused = k->plan.has_epilogue && !k->plan.inline_product && dtype == TC_F32 && swapped &&
               icuda_lt_epilogue_bind(k, vals, &shape, &lt);
  const char *pbias = NULL, *pres = NULL;
  mm_mat mr = mc;
  if (fused && lt.has_bias) {
    pbias = (const char *)args->buf[lt.bias_buffer] + lt.bias_offset * es;
    fused = args->buf[lt.bias_buffer] != args->buf[d->c]; /* a bias the product overwrites: no */
  }
  if (fused && lt.has_res) {
    pres = (const char *)args->buf[lt.res_buffer] + lt.res_offset * es;
    fused = mm_operand(N, M, 1, lt.res_stride_m, false, &mr);
    /* C and D the same matrix, or different buffers: never a partial overlap */
    if (fused && args->buf[lt.res_buffer] == args->buf[d->c])
      fused = pres == pc && mr.ld == mc.ld && (B1 == 1 || lt.res_stride_batch == c_sb) && (B2 == 1 || lt.res_stride_batch2 == c_s2);
  }
  tc_error *e = icuda_blaslt_prepare(ctx);
  if (e) return e;
  cudaDataType dt = dtype == TC_F64 ? CUDA_R_64F : CUDA_R_32F;
  cublasComputeType_t ct = dtype == TC_F64 ? CUBLAS_COMPUTE_64F : exe->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  uint64_t b2_bits1 = B2 > 1 ? (uint64_t)(p1_s2 * es) : 0, b2_bits2 = B2 > 1 ? (uint64_t)(p2_s2 * es) : 0,
           b2_bitsc = B2 > 1 ? (uint64_t)(c_s2 * es) : 0;
  /* every column start counts: base, leading dimension, batch strides (conservative) */
  int64_t al1 = align_of((uint64_t)(uintptr_t)p1 | (uint64_t)(mx1.ld * es) | (B1 > 1 ? (uint64_t)(s1 * es) : 0) | b2_bits1);
  int64_t al2 = align_of((uint64_t)(uintptr_t)p2 | (uint64_t)(mx2.ld * es) | (B1 > 1 ? (uint64_t)(s2 * es) : 0) | b2_bits2);
  int64_t alc = align_of((uint64_t)(uintptr_t)pc | (uint64_t)(mc.ld * es) | (B1 > 1 ? (uint64_t)(c_sb * es) : 0) | b2_bitsc);
  int64_t alr = fused && pres ? align_of((uint64_t)(uintptr_t)pres | (uint64_t)(mr.ld * es) |
                                         (B1 > 1 ? (uint64_t)(lt.res_stride_batch * es) : 0) |
                                         (B2 > 1 ? (uint64_t)(lt.res_stride_batch2 * es) : 0))
                              : alc;
  int64_t alb = pbias ? align_of((uint64_t)(uintptr_t)pbias) : 0;

  mm_call c = {0};
  const char *call = "cublasLtMatmulDescCreate";
  cublasStatus_t s = g_lt.MatmulDescCreate(&c.desc, ct, dtype == TC_F64 ? CUDA_R_64F : CUDA_R_32F);
  if (s == CUBLAS_STATUS_SUCCESS) {
    call = "cublasLtMatmulDescSetAttribute";
    int32_t ta = (int32_t)mx1.op, tb = (int32_t)mx2.op;
    s = g_lt.MatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS && pbias) { /* the heuristic reads the pointer's alignment */
      int32_t epi = CUBLASLT_EPILOGUE_BIAS;
      int64_t bias_batch = 0; /* one bias for every batch */
      s = g_lt.MatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
      if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pbias, sizeof pbias);
      if (s == CUBLAS_STATUS_SUCCESS && B1 > 1)
        s = g_lt.MatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_batch, sizeof bias_batch);
    }
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    call = "cublasLtMatrixLayoutCreate";
    s = layout(&c.la, dt, &mx1, B1, s1);
    if (s == CUBLAS_STATUS_SUCCESS) s = layout(&c.lb, dt, &mx2, B1, s2);
    if (s == CUBLAS_STATUS_SUCCESS) s = layout(&c.lc, dt, &mc, B1, c_sb);
    if (s == CUBLAS_STATUS_SUCCESS && pres) s = layout(&c.lr, dt, &mr, B1, lt.res_stride_batch);
  }

  /* the algorithm: cached per shape */
  int64_t key[MM_KEY_LEN] = {dtype, ct, mx1.op, mx2.op, mx1.rows, mx1.cols, mx1.ld, mx2.rows, mx2.cols, mx2.ld,
                             mc.rows, mc.cols, mc.ld, B1, s1, s2, c_sb, al1, al2, alc,
                             pbias != NULL, pres != NULL, mr.ld, pres ? lt.res_stride_batch : 0, alr, alb};
  icuda_mm_algo_slot *slot = NULL;
  if (s == CUBLAS_STATUS_SUCCESS && !k->algos && !(k->algos = calloc(ICUDA_MM_ALGO_SLOTS, sizeof *k->algos))) {
    mm_call_free(&c);
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda matmul: out of memory");
  }
  for (int i = 0; s == CUBLAS_STATUS_SUCCESS && i < ICUDA_MM_ALGO_SLOTS && !slot; i++)
    if (k->algos[i].used && !memcmp(k->algos[i].key, key, sizeof key)) slot = &k->algos[i];
  if (s == CUBLAS_STATUS_SUCCESS && !slot) {
    call = "cublasLtMatmulPreferenceCreate";
    s = g_lt.MatmulPreferenceCreate(&c.pref);
    uint64_t ws = ctx->workspace ? (uint64_t)ctx->workspace_bytes : 0;
    uint32_t a1 = (uint32_t)al1, a2 = (uint32_t)al2, a3 = (uint32_t)alc;
    if (s == CUBLAS_STATUS_SUCCESS) {
      call = "cublasLtMatmulPreferenceSetAttribute";
      s = g_lt.MatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    }
    if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &a1, sizeof a1);
    if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &a2, sizeof a2);
    uint32_t a4 = (uint32_t)alr;
    if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &a4, sizeof a4);
    if (s == CUBLAS_STATUS_SUCCESS) s = g_lt.MatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &a3, sizeof a3);
    cublasLtMatmulHeuristicResult_t res[ICUDA_TUNE_ALGOS + ICUDA_TUNE_CONFIGS];
    memset(res, 0, sizeof res);
    int got = 0;
    if (s == CUBLAS_STATUS_SUCCESS) {
      call = "cublasLtMatmulAlgoGetHeuristic";
      s = g_lt.MatmulAlgoGetHeuristic(ctx->blaslt->handle, c.desc, c.la, c.lb, pres ? c.lr : c.lc, c.lc, c.pref,
                                      exe->autotune ? ICUDA_TUNE_ALGOS : 1, res, &got);
      if (s == CUBLAS_STATUS_SUCCESS && (got < 1 || res[0].state != CUBLAS_STATUS_SUCCESS))
        s = got < 1 ? CUBLAS_STATUS_NOT_SUPPORTED : res[0].state;
    }
    int chosen = 0;
    if (s == CUBLAS_STATUS_SUCCESS && exe->autotune) {
      /* only the usable answers, in the heuristic's order, then every other configuration */
      int n = 0;
      for (int i = 0; i < got; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) res[n++] = res[i];
      const int n_heuristic = n;
      n += algo_configs(ctx, &c, ct, dt, pres != NULL, res + n, ICUDA_TUNE_CONFIGS);
      float f_one = 1.0f, f_zero = 0.0f;
      double d_one = 1.0, d_zero = 0.0;
      const bool f64 = dtype == TC_F64;
      if (n > 1)
        chosen = algo_choose(ctx, k, &c, res, n, n_heuristic, key, es, &mx1, &mx2, &mc, &mr, B1, s1, s2, c_sb,
                             pres ? lt.res_stride_batch : 0, pres != NULL, pbias, f64 ? (const void *)&d_one : &f_one,
                             f64 ? (const void *)&d_zero : pres ? &f_one : &f_zero);
    }
    if (s == CUBLAS_STATUS_SUCCESS) {
      slot = &k->algos[k->next_algo];
      k->next_algo = (k->next_algo + 1) % ICUDA_MM_ALGO_SLOTS;
      slot->used = true;
      memcpy(slot->key, key, sizeof key);
      slot->algo = res[chosen].algo;
    }
  }

  if (s == CUBLAS_STATUS_SUCCESS && ctx->dry_run) { /* graphs.c: the algorithm was all it wanted */
    mm_call_free(&c);
    return NULL;
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    call = "cublasLtMatmul";
    float f_one = 1.0f, f_zero = 0.0f;
    double d_one = 1.0, d_zero = 0.0;
    const void *alpha = dtype == TC_F64 ? (const void *)&d_one : (const void *)&f_one;
    const void *beta = dtype == TC_F64 ? (const void *)&d_zero : pres ? (const void *)&f_one : (const void *)&f_zero;
    void *ws = (void *)(uintptr_t)ctx->workspace;
    size_t ws_bytes = ctx->workspace ? ctx->workspace_bytes : 0;
    for (int64_t b2 = 0; b2 < B2 && s == CUBLAS_STATUS_SUCCESS; b2++) {
      const char *x1 = p1 + b2 * p1_s2 * es, *x2 = p2 + b2 * p2_s2 * es;
      char *y = pc + b2 * c_s2 * es;
      const char *r = pres ? pres + b2 * lt.res_stride_batch2 * es : y;
      s = g_lt.Matmul(ctx->blaslt->handle, c.desc, alpha, x1, c.la, x2, c.lb, beta, r, pres ? c.lr : c.lc, y, c.lc,
                      &slot->algo, ws, ws_bytes, (cudaStream_t)ctx->stream);
    }
  }
  mm_call_free(&c);
  if (s == CUBLAS_STATUS_SUCCESS) {
    *epilogue_done = fused;
    return NULL;
  }
  if (s == CUBLAS_STATUS_EXECUTION_FAILED) {
    /* perhaps a sticky failure of earlier work: if the stream says so, report it as that */
    CUresult r = ctx->cu->cuStreamQuery(ctx->stream);
    if (icuda_cu_is_device_failure(r)) return icuda_stream_wait(ctx, "launch (cublasLtMatmul)");
  }
  return tck_error(ctx->host, s == CUBLAS_STATUS_NOT_SUPPORTED ? TC_ERR_UNSUPPORTED : TC_ERR_INTERNAL,
                   "inductor-cuda launch '%s': %s failed: %s (%s, m %lld, n %lld, k %lld, batch %lld x %lld, %s)", k->name,
                   call, st_name(s), tck_dtype_name(dtype), (long long)M, (long long)N, (long long)K, (long long)B2,
                   (long long)B1, swapped ? "as C^T = B^T A^T" : "as C = A B");
}
