/* probe_cublaslt.h — what the cuBLASLt probes here share (cublaslt_configs.cu, cublaslt_split.cu):
 * LK (a cuBLASLt call that must succeed, else the probe exits naming it), attn_block's four linear
 * layers as tc calls them (B 8 x T 512 = 4096 rows, C 768; fp32), and the zeroed device buffers of
 * one product: X (M x K), W (K x N), bias (N), C (the residual) and D (M x N). */
#pragma once
#include <cublasLt.h>

#include "probe_cuda.h"

#define LK(x)                                                                                  \
  do {                                                                                         \
    cublasStatus_t s_ = (x);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_);               \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

struct linear_shape { const char *name; int m, n, k; bool residual; };
static const linear_shape attn_block_linears[] = {{"qkv", 4096, 2304, 768, false},
                                                  {"proj", 4096, 768, 768, true},
                                                  {"W1", 4096, 3072, 768, false},
                                                  {"W2", 4096, 768, 3072, true}};

struct linear_buffers {
  float *x, *w, *bias, *c, *d;
  explicit linear_buffers(const linear_shape &s) {
    const size_t sizes[5] = {(size_t)s.m * s.k, (size_t)s.k * s.n, (size_t)s.n, (size_t)s.m * s.n, (size_t)s.m * s.n};
    float **ptrs[5] = {&x, &w, &bias, &c, &d};
    for (int i = 0; i < 5; i++) {
      CK(cudaMalloc(ptrs[i], sizes[i] * 4));
      CK(cudaMemset(*ptrs[i], 0, sizes[i] * 4));
    }
  }
  ~linear_buffers() {
    for (float *p : {x, w, bias, c, d}) cudaFree(p);
  }
};
