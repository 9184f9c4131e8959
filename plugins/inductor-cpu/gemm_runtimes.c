/* gemm_runtimes.c — the generated GEMM's runtimes built into the plugin (runtime/gemm_runtime.c,
 * one per vector width: CMakeLists.txt) and which one a unit gets. A unit compiled with
 * -march=native says its width and workspace size (tc_gemm_attach, prelude section "gemm");
 * the width is the host CPU's, so the runtime asked for is one this CPU can run. */
#include "icpu.h"

const void *icpu_gemm_runtime_generic(int vl, size_t ws_size);
#ifdef ICPU_GEMM_V3
const void *icpu_gemm_runtime_v3(int vl, size_t ws_size);
#endif
#ifdef ICPU_GEMM_V4
const void *icpu_gemm_runtime_v4(int vl, size_t ws_size);
#endif

/* what the last unit loaded on this thread asked for, for the error message */
static _Thread_local int asked_vl;
static _Thread_local size_t asked_ws;

int gemm_runtime_asked(size_t *ws_size) {
  *ws_size = asked_ws;
  return asked_vl;
}

/* The runtime built for width vl (16, 8, 4 floats), or NULL. */
static const void *(*runtime_of(int vl))(int, size_t) {
#ifdef ICPU_GEMM_V4
  if (vl == 16) return icpu_gemm_runtime_v4;
#endif
#ifdef ICPU_GEMM_V3
  if (vl == 8) return icpu_gemm_runtime_v3;
#endif
  return vl == 4 ? icpu_gemm_runtime_generic : NULL;
}

const void *gemm_runtime_find(int vl, size_t ws_size) {
  asked_vl = vl, asked_ws = ws_size;
  const void *(*runtime)(int, size_t) = runtime_of(vl);
  return runtime ? runtime(vl, ws_size) : NULL; /* NULL too where the workspace differs */
}

int gemm_host_width(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 8;
#endif
  return 4;
}

bool gemm_runtime_for_host(void) { return runtime_of(gemm_host_width()) != NULL; }
