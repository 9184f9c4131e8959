// cuda_attention_emulation.cpp — inductor-cuda's flash-attention kernels run on the CPU, for CI
// without a GPU (test_inductor_cuda.c: flash_attention_emulated writes kernels.inc, compiles this
// with the system's C++ compiler and runs it). As cuda_gemm_emulation.cpp: a block's threads are
// std::threads, __syncthreads a std::barrier, a warp's shuffles go through a per-warp barrier, and
// the block's dynamic shared memory is a heap block of exactly the plan's size (an address
// sanitizer build catches a byte past it). cp.async copies are made when the kernel waits for
// them (the latest moment it allows: a read before its wait sees the zeros written over every
// buffer at the start, or an older tile) or, in eager cases, when they are issued (the earliest:
// a copy into a buffer some thread still reads overwrites it). Each kernel runs attn_block's layout (q, k, v in place in a qkv
// projection, merged heads out) over ragged T, causal and not, with NaN in one query, and every
// output element is compared with a double-precision softmax(q k^T * scale) v (a query whose keys
// are all masked: NaN); nothing else may be written.
#include "cuda_emulation.h"

// The prelude's helpers (plugins/inductor-cuda/prelude/tc_cuda_prelude.cuh).
static float tc_max_f32(float a, float b) {
  float zeros;
  unsigned ua, ub;
  memcpy(&ua, &a, 4), memcpy(&ub, &b, 4);
  ua &= ub;
  memcpy(&zeros, &ua, 4);
  const float m = a == b ? zeros : std::fmax(a, b);
  return a != a ? a : b != b ? b : m;
}
struct warp {
  std::barrier<> *bar;
  float v[32];
};
static warp warps[32];
static float tc_shfl_xor(float v, int o) {
  warp &w = warps[threadIdx.x / 32];
  const unsigned lane = threadIdx.x % 32;
  w.v[lane] = v;
  w.bar->arrive_and_wait();
  const float r = w.v[lane ^ (unsigned)o];
  w.bar->arrive_and_wait();
  return r;
}
// cp.async: a thread's copies queue in groups; wait_group n makes all but the newest n groups.
struct copy {
  float *dst;
  const float *src;
  int n;
  bool valid;
};
static thread_local std::vector<std::vector<copy>> groups; // committed, oldest first
static thread_local std::vector<copy> open_group;
static bool eager_copies; // copies made when issued
static void issue(copy c) {
  if (eager_copies)
    for (int i = 0; i < c.n; i++) c.dst[i] = c.valid ? c.src[i] : 0.0f;
  else open_group.push_back(c);
}
static void tc_cp_async4(float *dst, const float *src, bool valid) { issue({dst, src, 1, valid}); }
static void tc_cp_async16(float *dst, const float *src, bool valid) {
  aligned16(dst), aligned16(src);
  issue({dst, src, 4, valid});
}
static void tc_cp_async_commit() {
  groups.push_back(open_group);
  open_group.clear();
}
static void wait_group(size_t keep) {
  while (groups.size() > keep) {
    for (const copy &c : groups.front())
      for (int i = 0; i < c.n; i++) c.dst[i] = c.valid ? c.src[i] : 0.0f;
    groups.erase(groups.begin());
  }
}
static void tc_cp_async_wait1() { wait_group(1); }
static void tc_cp_async_wait0() { wait_group(0); }
static float *emu_smem; // the block's dynamic shared memory
#define tc_smem4 emu_smem4()
static float4 *emu_smem4() { return (float4 *)emu_smem; }

typedef void (*kernel_fn)(tc_cu_args);
struct emu_kernel {
  const char *name;
  kernel_fn fn;
  int bm, threads, smem, d;
  bool causal;
  long long causal_offset;
};
#include "kernels.inc" // emu_kernels[], n_emu_kernels

static void launch(const emu_kernel &k, tc_cu_args a, long long batch, long long t) {
  const unsigned blocks = (unsigned)((t + k.bm - 1) / k.bm * 12 * batch);
  gridDim = {blocks, 1, 1};
  blockDim = {(unsigned)k.threads, 1, 1};
  for (unsigned bx = 0; bx < blocks; bx++) {
    std::vector<float> smem((size_t)k.smem / 4, 0.0f);
    emu_smem = smem.data();
    std::barrier<> bar(k.threads);
    std::vector<std::barrier<> *> wb;
    for (int w = 0; w < k.threads / 32; w++) wb.push_back(warps[w].bar = new std::barrier<>(32));
    block_barrier = &bar;
    std::vector<std::thread> th;
    for (int i = 0; i < k.threads; i++)
      th.emplace_back([=] {
        threadIdx = {(unsigned)i, 0, 0};
        blockIdx = {bx, 0, 0};
        groups.clear(), open_group.clear();
        k.fn(a);
        if (!groups.empty() || !open_group.empty()) {
          fprintf(stderr, "%s: a copy outlives the block\n", k.name);
          abort();
        }
      });
    for (auto &x : th) x.join();
    for (auto *b : wb) delete b;
  }
}

// attn_block's layout: qkv (B, T, 3, 12, d), out (B, T, 12, d); scale 0.125.
static int run_case(const emu_kernel &k, long long batch, long long t, bool nan_query, bool eager) {
  eager_copies = eager;
  const long long d = k.d, row = 36 * d, orow = 12 * d;
  std::vector<float> qkv((size_t)(batch * t * row) + 8), out((size_t)(batch * t * orow) + 8, -777.0f);
  srand(7);
  for (auto &x : qkv) x = (float)((rand() % 2001 - 1000) / 400.0);
  if (nan_query && t > 3) qkv[(size_t)(3 * row + 2 * d + (d - 1))] = NAN; // batch 0, query 3, head 2
  tc_cu_args a = {};
  a.buf[0] = qkv.data(), a.buf[1] = out.data();
  a.s[0] = batch, a.s[1] = t;
  launch(k, a, batch, t);
  long long bad = 0;
  std::vector<double> p((size_t)t);
  for (long long b = 0; b < batch; b++)
    for (long long h = 0; h < 12; h++)
      for (long long i = 0; i < t; i++) {
        const float *q = &qkv[(size_t)(b * t * row + i * row + h * d)];
        double mx = -INFINITY;
        bool any = false;
        for (long long j = 0; j < t; j++) {
          const float *kk = &qkv[(size_t)(b * t * row + j * row + 12 * d + h * d)];
          if (k.causal && j - i >= k.causal_offset) {
            p[(size_t)j] = -INFINITY;
            continue;
          }
          double s = 0;
          for (long long e = 0; e < d; e++) s += (double)q[e] * kk[e];
          p[(size_t)j] = s * 0.125;
          mx = std::isnan(p[(size_t)j]) || std::isnan(mx) ? NAN : std::fmax(mx, p[(size_t)j]);
          any = true;
        }
        double sum = 0;
        for (long long j = 0; j < t; j++) sum += p[(size_t)j] = any ? std::exp(p[(size_t)j] - mx) : 0.0;
        for (long long c = 0; c < d; c++) {
          double o = 0;
          for (long long j = 0; j < t; j++)
            if (p[(size_t)j] != 0.0 || std::isnan(p[(size_t)j])) o += p[(size_t)j] * qkv[(size_t)(b * t * row + j * row + 24 * d + h * d + c)];
          const double want = any ? o / sum : NAN;
          const float got = out[(size_t)(b * t * orow + i * orow + h * d + c)];
          const bool ok = std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= 2e-5 + 2e-5 * std::fabs(want);
          if (!ok && bad++ < 3)
            fprintf(stderr, "  %s B %lld T %lld: batch %lld head %lld query %lld column %lld = %.9g, want %.9g\n", k.name,
                    batch, t, b, h, i, c, (double)got, want);
        }
      }
  for (size_t i = (size_t)(batch * t * orow); i < out.size(); i++)
    if (out[i] != -777.0f && bad++ < 3) fprintf(stderr, "  %s: written past the output\n", k.name);
  printf("%-44s B %lld T %4lld%s%s: %s\n", k.name, batch, t, nan_query ? " (NaN query)" : "",
         eager ? " (copies when issued)" : "", bad ? "WRONG" : "ok");
  return bad != 0;
}

int main(int argc, char **argv) {
  const bool quick = argc > 1 && !strcmp(argv[1], "quick"); // CI: the two main cases only
  setvbuf(stdout, NULL, _IOLBF, 0);
  int wrong = 0;
  for (int i = 0; i < n_emu_kernels; i++) {
    const emu_kernel &k = emu_kernels[i];
    wrong += run_case(k, 2, 37, false, true);   // ragged: one tile of queries, two of keys (BN 32)
    wrong += run_case(k, 1, 130, false, false); // three or two query tiles, the causal skip
    if (!quick)
      for (int eager = 0; eager < 2; eager++)
        wrong += run_case(k, 2, 37, false, !eager) + run_case(k, 1, 130, false, eager) + run_case(k, 1, 1, false, eager) +
                 run_case(k, 1, 70, true, eager);
  }
  printf("%s\n", wrong ? "WRONG RESULTS" : "all close");
  return wrong != 0;
}
