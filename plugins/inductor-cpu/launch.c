/* launch.c — loads a compiled unit and calls its kernels through the generated uniform
 * launchers (k_NAME_launch(void **bufs, const int64_t *syms)). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "icpu.h"

tc_status exe_load(icpu_ctx *ctx, icpu_exe *exe, const char *so_path, char (*names)[96], const tc_kernel_list *list) {
  exe->dl = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!exe->dl) return icpu_fail(ctx, TC_ERR_COMPILE, "inductor-cpu: cannot load %s: %s", so_path, dlerror());
  /* The runtimes the unit pulled in keep worker threads alive: unloading them under those
   * threads crashes, so pin them for the life of the process (the unit itself can go). */
  static const char *const runtimes[] = {"libgomp.so.1", "libopenblas.so.0"};
  for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
    void *h = dlopen(runtimes[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (h) dlclose(h);
  }
  void (*init)(int);
  *(void **)&init = dlsym(exe->dl, "tc_module_init");
  if (!init) return icpu_fail(ctx, TC_ERR_COMPILE, "inductor-cpu: %s has no tc_module_init", so_path);
  init(ctx->threads);
  exe->n_kernels = list->n_kernels;
  exe->kernels = calloc((size_t)(list->n_kernels > 0 ? list->n_kernels : 1), sizeof *exe->kernels);
  if (!exe->kernels) return icpu_fail(ctx, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  for (int32_t i = 0; i < list->n_kernels; i++) {
    icpu_kernel *k = &exe->kernels[i];
    snprintf(k->name, sizeof k->name, "%s", names[i]);
    char sym[128];
    snprintf(sym, sizeof sym, "%s_launch", names[i]);
    *(void **)&k->launch = dlsym(exe->dl, sym);
    if (!k->launch) return icpu_fail(ctx, TC_ERR_COMPILE, "inductor-cpu: %s lacks %s", so_path, sym);
    k->n_buffers = TC_AT(tc_kernel_desc, list->kernels, i)->n_buffers;
  }
  return TC_OK;
}

tc_status exe_launch(icpu_ctx *ctx, icpu_exe *exe, int32_t kernel, const tc_buffer_arg *args, const int64_t *syms) {
  if (kernel < 0 || kernel >= exe->n_kernels)
    return icpu_fail(ctx, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: kernel %d out of range (%d kernels)", kernel,
                     exe->n_kernels);
  icpu_kernel *k = &exe->kernels[kernel];
  void *stack[32];
  void **bufs = k->n_buffers <= 32 ? stack : malloc(sizeof(void *) * (size_t)k->n_buffers);
  if (!bufs) return icpu_fail(ctx, TC_ERR_OUT_OF_MEMORY, "inductor-cpu launch: out of memory");
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_buffer_arg *a = TC_AT(tc_buffer_arg, args, b);
    if (!a->buffer) {
      if (bufs != stack) free(bufs);
      return icpu_fail(ctx, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: %s: buffer %d is NULL", k->name, b);
    }
    /* Host-memory plugin: a tc_buffer* is the host pointer itself. */
    bufs[b] = (char *)a->buffer + a->byte_offset;
  }
  static const int64_t no_syms[1] = {0};
  struct timespec t0, t1;
  if (ctx->profiling) clock_gettime(CLOCK_MONOTONIC, &t0);
  k->launch(bufs, syms ? syms : no_syms);
  if (ctx->profiling) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (k->prof_launches == 0 || s < k->prof_min_s) k->prof_min_s = s;
    if (s > k->prof_max_s) k->prof_max_s = s;
    k->prof_s += s;
    k->prof_launches++;
  }
  if (bufs != stack) free(bufs);
  return TC_OK;
}

void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe, const char *graph) {
  if (!ctx->profiling) return;
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    const icpu_kernel *k = &exe->kernels[i];
    if (k->prof_launches == 0) continue;
    icpu_log(ctx, "profile", "%s / %s: %llu launches, mean %.1f us, min %.1f us, max %.1f us", graph, k->name,
             (unsigned long long)k->prof_launches, k->prof_s / (double)k->prof_launches * 1e6, k->prof_min_s * 1e6,
             k->prof_max_s * 1e6);
  }
}
