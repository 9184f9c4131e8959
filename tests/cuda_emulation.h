// cuda_emulation.h — the CUDA names inductor-cuda's generated kernels use, defined for the CPU, so
// cuda_gemm_emulation.cpp and cuda_attention_emulation.cpp can compile a kernel's source as C++
// and run its grid (CI has no GPU). A block's threads are std::threads (threadIdx thread-local),
// __syncthreads a std::barrier the runner sets up per block; blocks run one after another.
#ifndef TC_CUDA_EMULATION_H
#define TC_CUDA_EMULATION_H
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
static thread_local dim3 threadIdx, blockIdx;
static dim3 gridDim, blockDim;
static std::barrier<> *block_barrier;
static void __syncthreads() { block_barrier->arrive_and_wait(); }
#define __global__
#define __launch_bounds__(threads)
#define __restrict__
struct float4 {
  float x, y, z, w;
};
static float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
// The one parameter of every kernel (the prelude's tc_cu_args).
typedef struct tc_cu_args {
  void *buf[32];
  long long s[32];
} tc_cu_args;
static void tc_after_previous_kernel() {} // blocks run one after another: nothing runs before
// A vector access at an address the kernel did not check for alignment aborts.
static void aligned16(const void *p) {
  if ((unsigned long long)p % 16) {
    fprintf(stderr, "a 16-byte access at %p\n", p);
    abort();
  }
}
#endif
