/* cublaslt_startup.c — where a new process's first cuBLASLt GEMM spends its time, and which
 * start-ups survive an early exit. inductor-cuda's warm first call pays for cuBLASLt's start-up
 * (80-89 ms on the H200 in session 9); this splits it into the library's load, the handle, the
 * heuristic's first and second queries and the first GEMMs (lazy kernel loading), and times the
 * same GEMMs with an algorithm read from a file (what a cache of the heuristic's answers would
 * give a warm start).
 *
 * Usage: cublaslt_startup timing ALGOFILE   phases on stderr; writes ALGOFILE if absent, else
 *                                            uses its algorithms and skips the heuristic
 *        cublaslt_startup exit-thread       a thread makes the handle and queries; main exits
 *        cublaslt_startup exit-after-create main makes the handle, then registers an exit handler
 *                                            that waits for a thread doing the queries; exits
 * An exit mode's status shows whether that start-up crashes a short process (139: SIGSEGV).
 * exit-after-create passing says little: main exits before the thread's query has registered
 * cuBLASLt's later exit handlers; in tc, where the process lives on for a while, the same
 * arrangement crashed (session 10), which is why plugins/inductor-cuda/exit_wait.c exists.
 * Built with the toolkit's headers only; the driver and cuBLASLt are dlopen'd as the plugin does. */
#include <cublasLt.h>
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static double t_start;
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double last;
static void phase(const char *what) {
  double t = now_ms();
  fprintf(stderr, "%8.2f ms  +%7.2f  %s\n", t - t_start, t - last, what);
  last = t;
}
#define CHECK(x)                                                  \
  do {                                                            \
    int r_ = (int)(x);                                            \
    if (r_) {                                                     \
      fprintf(stderr, "%s failed: %d (line %d)\n", #x, r_, __LINE__); \
      exit(2);                                                    \
    }                                                             \
  } while (0)

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "missing %s\n", name);
    exit(2);
  }
  return p;
}

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuCtxSynchronize)(void);
static cublasStatus_t (*p_Create)(cublasLtHandle_t *);
static cublasStatus_t (*p_DescCreate)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
static cublasStatus_t (*p_LayoutCreate)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
static cublasStatus_t (*p_PrefCreate)(cublasLtMatmulPreference_t *);
static cublasStatus_t (*p_PrefSet)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t);
static cublasStatus_t (*p_Heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                     cublasLtMatmulHeuristicResult_t[], int *);
static cublasStatus_t (*p_Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,
                                  const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t,
                                  void *, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

static void load_driver(void) {
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu) exit(3);
  p_cuInit = sym(cu, "cuInit");
  p_cuDeviceGet = sym(cu, "cuDeviceGet");
  p_cuDevicePrimaryCtxRetain = sym(cu, "cuDevicePrimaryCtxRetain");
  p_cuCtxSetCurrent = sym(cu, "cuCtxSetCurrent");
  p_cuMemAlloc = sym(cu, "cuMemAlloc_v2");
  p_cuCtxSynchronize = sym(cu, "cuCtxSynchronize");
  CUdevice dev;
  CUcontext ctx;
  CHECK(p_cuInit(0));
  CHECK(p_cuDeviceGet(&dev, 0));
  CHECK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(p_cuCtxSetCurrent(ctx));
}

static void load_blaslt(void) {
  void *lt = dlopen("libcublasLt.so." STR(CUBLAS_VER_MAJOR), RTLD_NOW | RTLD_LOCAL);
  if (!lt) lt = dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
  if (!lt) exit(4);
  p_Create = sym(lt, "cublasLtCreate");
  p_DescCreate = sym(lt, "cublasLtMatmulDescCreate");
  p_LayoutCreate = sym(lt, "cublasLtMatrixLayoutCreate");
  p_PrefCreate = sym(lt, "cublasLtMatmulPreferenceCreate");
  p_PrefSet = sym(lt, "cublasLtMatmulPreferenceSetAttribute");
  p_Heuristic = sym(lt, "cublasLtMatmulAlgoGetHeuristic");
  p_Matmul = sym(lt, "cublasLtMatmul");
}

/* Two GEMM shapes like attn_block's (row-major m x k . k x n as column-major n x m). */
typedef struct gemm {
  int m, n, k;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
} gemm;
static gemm G[2] = {{.m = 4096, .n = 3072, .k = 1024}, {.m = 4096, .n = 1024, .k = 4096}};
static cublasLtHandle_t handle;
static cublasLtMatmulPreference_t pref;
static CUdeviceptr A, B, C, W;
static const size_t WS = 32u << 20;

static void describe(gemm *g) {
  CHECK(p_DescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(p_LayoutCreate(&g->la, CUDA_R_32F, g->n, g->k, g->n)); /* B^T */
  CHECK(p_LayoutCreate(&g->lb, CUDA_R_32F, g->k, g->m, g->k)); /* A^T */
  CHECK(p_LayoutCreate(&g->lc, CUDA_R_32F, g->n, g->m, g->n));
}
static void query(gemm *g) {
  cublasLtMatmulHeuristicResult_t r;
  int got = 0;
  CHECK(p_Heuristic(handle, g->desc, g->la, g->lb, g->lc, g->lc, pref, 1, &r, &got));
  if (got < 1) exit(5);
  g->algo = r.algo;
}
static void run(gemm *g) {
  float one = 1, zero = 0;
  CHECK(p_Matmul(handle, g->desc, &one, (void *)B, g->la, (void *)A, g->lb, &zero, (void *)C, g->lc, (void *)C, g->lc,
                 &g->algo, (void *)W, WS, 0));
}

static void setup_handle(void) {
  CHECK(p_Create(&handle));
  CHECK(p_PrefCreate(&pref));
  uint64_t ws = WS;
  CHECK(p_PrefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  describe(&G[0]);
  describe(&G[1]);
}

static pthread_t worker;
static void *queries(void *arg) {
  (void)arg;
  if (!handle) setup_handle();
  query(&G[0]);
  query(&G[1]);
  return NULL;
}
static void wait_worker(void) { pthread_join(worker, NULL); }

int main(int argc, char **argv) {
  t_start = last = now_ms();
  const char *mode = argc > 1 ? argv[1] : "timing";
  load_driver();
  if (!strcmp(mode, "exit-thread")) {
    atexit(wait_worker);
    load_blaslt();
    pthread_create(&worker, NULL, queries, NULL);
    return 0;
  }
  if (!strcmp(mode, "exit-after-create")) {
    load_blaslt();
    setup_handle();
    atexit(wait_worker); /* newer than what cublasLtCreate registered: runs before it */
    pthread_create(&worker, NULL, queries, NULL);
    return 0;
  }
  phase("driver: cuInit, primary context");
  CHECK(p_cuMemAlloc(&A, (size_t)4096 * 4096 * 4));
  CHECK(p_cuMemAlloc(&B, (size_t)4096 * 4096 * 4));
  CHECK(p_cuMemAlloc(&C, (size_t)4096 * 4096 * 4));
  CHECK(p_cuMemAlloc(&W, WS));
  phase("buffers");
  load_blaslt();
  phase("cuBLASLt dlopen");
  CHECK(p_Create(&handle));
  phase("cublasLtCreate");
  setup_handle();
  phase("descriptors, layouts, preference");
  const char *file = argc > 2 ? argv[2] : "/tmp/cublaslt_algos.bin";
  FILE *f = fopen(file, "rb");
  bool cached = f && fread(&G[0].algo, sizeof G[0].algo, 1, f) == 1 && fread(&G[1].algo, sizeof G[1].algo, 1, f) == 1;
  if (f) fclose(f);
  if (!cached) {
    query(&G[0]);
    phase("heuristic, first query");
    query(&G[1]);
    phase("heuristic, second query");
  } else {
    phase("algorithms read from the file (no heuristic)");
  }
  static const char *const runs[4] = {"GEMM 1, first run (synchronized)", "GEMM 1, second run", "GEMM 2, first run",
                                       "GEMM 2, second run"};
  for (int i = 0; i < 4; i++) {
    run(&G[i / 2]);
    CHECK(p_cuCtxSynchronize());
    phase(runs[i]);
  }
  if (!cached && (f = fopen(file, "wb"))) {
    fwrite(&G[0].algo, sizeof G[0].algo, 1, f);
    fwrite(&G[1].algo, sizeof G[1].algo, 1, f);
    fclose(f);
  }
  return 0;
}
