/* vk_bench.c — the vulkan plugin alone on the benchmark shapes of BENCHMARKS.md (GPU shapes by
 * default): ln_gelu and softmax in GB/s next to a copy kernel's GB/s, mlp in TF/s. Loads
 * tc-vulkan.so from argv[1] (default: next to this binary's build tree) into the kit's test
 * host (ABI 2.0; disk cache in $TC_CACHE_DIR when set); --small for the CPU shapes. Kernel
 * descriptors are built by hand, like the core's scheduler would. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_plugin.h"
#include "tool_kit.h"

static tc_executable *compile(kb *b, tc_kernel_desc *k) {
  tc_executable *e = kit_compile(b, k);
  if (getenv("VK_BENCH_SOURCE")) fprintf(stderr, "%s\n", kit_source(e));
  return e;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static tc_buffer *rnd(size_t n, float scale) {
  float *h = malloc(n * 4); unsigned s = 12345;
  for (size_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; h[i] = ((float)((s >> 8) & 0xffff) / 32768.0f - 1.0f) * scale; }
  tc_buffer *d = kit_alloc(n * 4); kit_write(d, 0, h, n * 4); free(h); return d;
}
static tc_buffer_arg A(tc_buffer *b) { return kit_arg(b); }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
/* median seconds per call of `n_launch` launches (launch i: kernel kern[i] of e[i] on the
 * n_args[i] buffers args[i]), plain launches in a loop */
static double timeit(tc_executable **e, int *kern, tc_buffer_arg **args, int *n_args, int n_launch, int iters) {
  /* Warm up for a quarter second: an idle GPU's clocks take a while to rise, and a few
   * launches of a 100 us kernel would time the ramp, not the kernel. */
  double w0 = now();
  do {
    for (int w = 0; w < 3; w++) for (int i = 0; i < n_launch; i++) kit_launch(e[i], kern[i], args[i], n_args[i]);
    kit_sync();
  } while (now() - w0 < 0.25);
  double t[15];
  for (int r = 0; r < 15; r++) {
    double t0 = now();
    for (int it = 0; it < iters; it++) for (int i = 0; i < n_launch; i++) kit_launch(e[i], kern[i], args[i], n_args[i]);
    kit_sync();
    t[r] = (now() - t0) / iters;
  }
  qsort(t, 15, sizeof t[0], cmpd);
  return t[7];
}

static tc_executable *build_copy(int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_copy(&b, n);
  return compile(&b, &k);
}
static tc_executable *build_ln_gelu(int64_t m, int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_ln_gelu(&b, m, n);
  return compile(&b, &k);
}
static tc_executable *build_softmax(int64_t m, int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_softmax(&b, m, n);
  return compile(&b, &k);
}
/* out = epi(x(m,kk) @ w(kk,n) + bias): gelu, or + residual r(m,n) */
static tc_executable *build_mm(int64_t m, int64_t kk, int64_t n, bool do_gelu) {
  kb b = {0}; int M = C(&b, m), Kx = C(&b, kk), N = C(&b, n), one = C(&b, 1), z = C(&b, 0), B1 = C(&b, 1);
  int ba = bf(&b, "in_x", TC_BUF_INPUT, C(&b, m * kk)), bw = bf(&b, "in_w", TC_BUF_INPUT, C(&b, kk * n)), bb = bf(&b, "in_bias", TC_BUF_INPUT, N);
  int bo = bf(&b, "out_h", TC_BUF_OUTPUT, C(&b, m * n)), br = do_gelu ? -1 : bf(&b, "in_res", TC_BUF_INPUT, C(&b, m * n));
  int acc = op(&b, TC_KOP_ACC, -1, 0, -1, -1);
  int h = P2(&b, -1, TC_PRIM_ADD, acc, ld(&b, -1, bb, IX(z, -1, -1, one)));
  h = do_gelu ? gelu(&b, -1, h) : P2(&b, -1, TC_PRIM_ADD, h, ld(&b, -1, br, IX(z, -1, N, one)));
  st(&b, -1, bo, IX(z, -1, N, one), h);
  b.mm = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bw, .c = bo, .batch = B1, .m = M, .n = N, .k = Kx,
                          .a_offset = z, .a_stride_batch = z, .a_stride_m = Kx, .a_stride_k = one,
                          .b_offset = z, .b_stride_batch = z, .b_stride_k = N, .b_stride_n = one,
                          .c_offset = z, .c_stride_batch = z, .c_stride_m = N, .c_stride_n = one,
                          .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1, .c_stride_batch2 = -1};
  int32_t outer[3] = {B1, M, N};
  tc_kernel_desc k = kdesc(&b, do_gelu ? "mm_bias_gelu" : "mm_bias_residual", TC_KERNEL_MATMUL, 3, outer, -1);
  return compile(&b, &k);
}

int main(int argc, char **argv) {
  bool small = argc > 2 && strcmp(argv[2], "--small") == 0;
  const char *path = argc > 1 ? argv[1] : "tc-vulkan.so";
  tc_probe_args info = kit_open(path, getenv("TC_CACHE_DIR"));
  printf("probe: available=%d: %s\n", info.available, info.reason ? info.reason : "");
  for (int i = 0; i < info.n_devices; i++) printf("  device %d: %s\n", i, TC_ELEM(tc_device_desc, info.devices, info.device_size, i)->name);
  if (!info.available) return 2;
  double t0 = now();
  kit_init(0);
  printf("init %.1f ms\n", (now() - t0) * 1e3);
  int64_t lm = small ? 4096 : 8192, ln = small ? 1024 : 4096, sm_m = small ? 8192 : 32768, sm_n = 1024;
  int64_t M = small ? 1024 : 8192, D = small ? 512 : 1024, H = small ? 2048 : 4096;
  t0 = now();
  tc_executable *ecopy = build_copy(sm_m * sm_n), *eln = build_ln_gelu(lm, ln), *esm = build_softmax(sm_m, sm_n);
  tc_executable *em1 = build_mm(M, D, H, true), *em2 = build_mm(M, H, D, false);
  printf("compile (5 executables) %.1f ms\n", (now() - t0) * 1e3);
  tc_buffer *cx = rnd(sm_m * sm_n, 1), *cy = rnd(sm_m * sm_n, 1);
  tc_buffer_arg ca[2] = {A(cx), A(cy)}; tc_buffer_arg *pa = ca; int k0 = 0, na = 2;
  double tc = timeit(&ecopy, &k0, &pa, &na, 1, 20);
  printf("copy      %lldx%lld: %.4f ms  %.0f GB/s\n", (long long)sm_m, (long long)sm_n, tc * 1e3, 2.0 * sm_m * sm_n * 4 / tc / 1e9);
  tc_buffer *lx = rnd(lm * ln, 2), *lg = rnd(ln, 1), *lb = rnd(ln, 0.1f), *ly = rnd(lm * ln, 1);
  tc_buffer_arg la[4] = {A(lx), A(lg), A(lb), A(ly)}; pa = la; na = 4;
  double tl = timeit(&eln, &k0, &pa, &na, 1, 20);
  printf("ln_gelu   %lldx%lld: %.4f ms  %.0f GB/s\n", (long long)lm, (long long)ln, tl * 1e3, 2.0 * lm * ln * 4 / tl / 1e9);
  pa = ca; na = 2;
  double ts = timeit(&esm, &k0, &pa, &na, 1, 20);
  printf("softmax   %lldx%lld: %.4f ms  %.0f GB/s\n", (long long)sm_m, (long long)sm_n, ts * 1e3, 2.0 * sm_m * sm_n * 4 / ts / 1e9);
  tc_buffer *x = rnd(M * D, 1), *w1 = rnd(D * H, 1.0f / sqrtf(D)), *b1 = rnd(H, 0.1f), *h = rnd(M * H, 1);
  tc_buffer *w2 = rnd(H * D, 1.0f / sqrtf(H)), *b2 = rnd(D, 0.1f), *y = rnd(M * D, 1);
  tc_buffer_arg a1[4] = {A(x), A(w1), A(b1), A(h)}, a2[5] = {A(h), A(w2), A(b2), A(y), A(x)};
  tc_executable *es[2] = {em1, em2}; int ks[2] = {0, 0}, ns[2] = {4, 5}; tc_buffer_arg *as[2] = {a1, a2};
  double tm = timeit(es, ks, as, ns, 2, small ? 3 : 5);
  printf("mlp       %lldx%lldx%lld: %.4f ms  %.2f TF/s\n", (long long)M, (long long)D, (long long)H, tm * 1e3, 4.0 * M * D * H / tm / 1e12);
  double t1 = timeit(&em1, ks, as, ns, 1, small ? 3 : 5);
  printf("  mm1 (x W1 + b1, gelu): %.4f ms  %.2f TF/s\n", t1 * 1e3, 2.0 * M * D * H / t1 / 1e12);
  kit_release();
  return 0;
}
