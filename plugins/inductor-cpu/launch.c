/* launch.c — loads a compiled unit and calls its kernels through the generated uniform
 * launchers (k_NAME_launch(void **bufs, const int64_t *syms)). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  k->launch(bufs, syms ? syms : no_syms);
  if (bufs != stack) free(bufs);
  return TC_OK;
}
