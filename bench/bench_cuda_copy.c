/* bench_cuda_copy.c — the copy ceiling of a CUDA GPU: the driver's own device-to-device copy
 * (cuMemcpyDtoDAsync) of the workload's bytes, timed in groups like the model's calls.
 *
 * A backend's own copy kernel is no ceiling (BENCHMARKS.md: the hardware's limit, never the
 * library tc itself calls), and a bench that timed inductor-cuda against its own scalar copy
 * kernel flattered it. The driver is dlopen'd (libcuda.so.1), as the plugin does it, so the bench
 * has no link-time dependency on CUDA: without a driver or a device, bench_cuda_copy_open says
 * why and the caller keeps the backend's copy. Only the handful of driver types used here are
 * declared, so neither does it need CUDA's headers. The buffers live in the device's primary
 * context (the one inductor-cuda uses too) on a stream of their own. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef int cu_result; /* CUresult: 0 is CUDA_SUCCESS */
typedef int cu_device;
typedef void *cu_context;
typedef void *cu_stream;
typedef unsigned long long cu_ptr;

typedef struct cuda_fns {
  cu_result (*Init)(unsigned);
  cu_result (*DeviceGetCount)(int *);
  cu_result (*DeviceGet)(cu_device *, int);
  cu_result (*PrimaryCtxRetain)(cu_context *, cu_device);
  cu_result (*PrimaryCtxRelease)(cu_device);
  cu_result (*CtxPush)(cu_context);
  cu_result (*CtxPop)(cu_context *);
  cu_result (*MemAlloc)(cu_ptr *, size_t);
  cu_result (*MemFree)(cu_ptr);
  cu_result (*MemsetD8)(cu_ptr, unsigned char, size_t);
  cu_result (*MemcpyDtoDAsync)(cu_ptr, cu_ptr, size_t, cu_stream);
  cu_result (*StreamCreate)(cu_stream *, unsigned);
  cu_result (*StreamDestroy)(cu_stream);
  cu_result (*StreamSynchronize)(cu_stream);
} cuda_fns;

enum { CUDA_COPY_MAX_SETS = 8, CUDA_COPY_MAX_GROUP = 1000 };

struct bench_cuda_copy {
  void *lib;
  cuda_fns f;
  cu_device dev;
  cu_context ctx;
  cu_stream stream;
  size_t bytes;
  int n_sets, next, group;
  cu_ptr src[CUDA_COPY_MAX_SETS], dst[CUDA_COPY_MAX_SETS];
};

static bool cuda_sym(void *lib, const char *name, void *fn, size_t size, const char **missing) {
  void *p = dlsym(lib, name);
  if (!p && !*missing) *missing = name;
  memcpy(fn, &p, size);
  return p != NULL;
}

/* `group` copies back to back on the stream, then one wait; seconds per copy. */
static double cuda_copy_group(bench_cuda_copy *c, int group, bool *ok) {
  cu_context prev;
  *ok = c->f.CtxPush(c->ctx) == 0;
  double t0 = bench_now();
  for (int i = 0; i < group && *ok; i++) {
    int s = c->next++ % c->n_sets;
    *ok = c->f.MemcpyDtoDAsync(c->dst[s], c->src[s], c->bytes, c->stream) == 0;
  }
  if (*ok) *ok = c->f.StreamSynchronize(c->stream) == 0;
  double t = (bench_now() - t0) / (group > 0 ? group : 1);
  c->f.CtxPop(&prev);
  return t;
}

bench_cuda_copy *bench_cuda_copy_open(double bytes, int n_sets, char *why, size_t cap) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, cap, "no CUDA driver");
    return NULL;
  }
  bench_cuda_copy *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(why, cap, "out of memory");
    return NULL;
  }
  c->lib = lib;
  const char *missing = NULL;
  cuda_fns *f = &c->f;
  cuda_sym(lib, "cuInit", &f->Init, sizeof f->Init, &missing);
  cuda_sym(lib, "cuDeviceGetCount", &f->DeviceGetCount, sizeof f->DeviceGetCount, &missing);
  cuda_sym(lib, "cuDeviceGet", &f->DeviceGet, sizeof f->DeviceGet, &missing);
  cuda_sym(lib, "cuDevicePrimaryCtxRetain", &f->PrimaryCtxRetain, sizeof f->PrimaryCtxRetain, &missing);
  cuda_sym(lib, "cuDevicePrimaryCtxRelease_v2", &f->PrimaryCtxRelease, sizeof f->PrimaryCtxRelease, &missing);
  cuda_sym(lib, "cuCtxPushCurrent_v2", &f->CtxPush, sizeof f->CtxPush, &missing);
  cuda_sym(lib, "cuCtxPopCurrent_v2", &f->CtxPop, sizeof f->CtxPop, &missing);
  cuda_sym(lib, "cuMemAlloc_v2", &f->MemAlloc, sizeof f->MemAlloc, &missing);
  cuda_sym(lib, "cuMemFree_v2", &f->MemFree, sizeof f->MemFree, &missing);
  cuda_sym(lib, "cuMemsetD8_v2", &f->MemsetD8, sizeof f->MemsetD8, &missing);
  cuda_sym(lib, "cuMemcpyDtoDAsync_v2", &f->MemcpyDtoDAsync, sizeof f->MemcpyDtoDAsync, &missing);
  cuda_sym(lib, "cuStreamCreate", &f->StreamCreate, sizeof f->StreamCreate, &missing);
  cuda_sym(lib, "cuStreamDestroy_v2", &f->StreamDestroy, sizeof f->StreamDestroy, &missing);
  cuda_sym(lib, "cuStreamSynchronize", &f->StreamSynchronize, sizeof f->StreamSynchronize, &missing);
  int count = 0;
  if (missing) snprintf(why, cap, "the CUDA driver lacks %s", missing);
  else if (f->Init(0) != 0 || f->DeviceGetCount(&count) != 0 || count < 1) snprintf(why, cap, "no CUDA device");
  else if (f->DeviceGet(&c->dev, 0) != 0 || f->PrimaryCtxRetain(&c->ctx, c->dev) != 0) snprintf(why, cap, "no CUDA context");
  else missing = "";
  if (!missing || *missing) {
    dlclose(lib);
    free(c);
    return NULL;
  }
  c->bytes = (size_t)bytes;
  c->n_sets = n_sets < 1 ? 1 : n_sets > CUDA_COPY_MAX_SETS ? CUDA_COPY_MAX_SETS : n_sets;
  cu_context prev;
  bool ok = f->CtxPush(c->ctx) == 0;
  if (ok) ok = f->StreamCreate(&c->stream, 1 /* CU_STREAM_NON_BLOCKING */) == 0;
  for (int s = 0; s < c->n_sets && ok; s++) {
    ok = f->MemAlloc(&c->src[s], c->bytes) == 0 && f->MemAlloc(&c->dst[s], c->bytes) == 0;
    /* nonzero bytes, as the workloads' inputs are */
    if (ok) ok = f->MemsetD8(c->src[s], 0x3f, c->bytes) == 0 && f->MemsetD8(c->dst[s], 0x40, c->bytes) == 0;
  }
  if (ok) f->CtxPop(&prev);
  if (!ok) {
    snprintf(why, cap, "could not allocate 2 x %d x %zu bytes on the CUDA device", c->n_sets, c->bytes);
    bench_cuda_copy_close(c);
    return NULL;
  }
  /* warm up, then size the group to about BENCH_GROUP_S of copies, as bench_calls does */
  cuda_copy_group(c, 2, &ok);
  for (int pass = 0; pass < 2 && ok; pass++) {
    double per = cuda_copy_group(c, c->group > 0 ? c->group : 1, &ok);
    double k = BENCH_GROUP_S / (per > 1e-7 ? per : 1e-7);
    c->group = k < 1 ? 1 : k > CUDA_COPY_MAX_GROUP ? CUDA_COPY_MAX_GROUP : (int)k;
  }
  if (!ok) {
    snprintf(why, cap, "cuMemcpyDtoDAsync failed");
    bench_cuda_copy_close(c);
    return NULL;
  }
  return c;
}

tc_status bench_cuda_copy_sample(bench_cuda_copy *c, double *seconds) {
  bool ok;
  *seconds = cuda_copy_group(c, c->group, &ok);
  return ok ? TC_OK : TC_ERR_DEVICE;
}

void bench_cuda_copy_close(bench_cuda_copy *c) {
  if (!c) return;
  cu_context prev;
  if (c->ctx && c->f.CtxPush(c->ctx) == 0) {
    for (int s = 0; s < CUDA_COPY_MAX_SETS; s++) {
      if (c->src[s]) c->f.MemFree(c->src[s]);
      if (c->dst[s]) c->f.MemFree(c->dst[s]);
    }
    if (c->stream) c->f.StreamDestroy(c->stream);
    c->f.CtxPop(&prev);
  }
  if (c->ctx) c->f.PrimaryCtxRelease(c->dev);
  /* the driver stays loaded: it does not support being unloaded while contexts exist */
  free(c);
}
