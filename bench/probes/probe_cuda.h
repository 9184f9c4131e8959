/* probe_cuda.h — what the CUDA probes here share: CK (a CUDA runtime call that must succeed, else
 * the probe exits naming it) and the median time of `launches` back-to-back launches between
 * events (after a warm-up), the way tc bench times calls. */
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* milliseconds per launch: the median of `rounds` rounds of `launches` back-to-back launches */
template <class F> static float probe_ms(F launch, int launches, int rounds) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++) launch();
  std::vector<float> ts;
  for (int r = 0; r < rounds; r++) {
    CK(cudaEventRecord(a));
    for (int i = 0; i < launches; i++) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    ts.push_back(ms / launches);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
