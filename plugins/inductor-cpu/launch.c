/* launch.c — loads a compiled unit and calls its kernels through the generated uniform
 * launchers (k_NAME_launch(void **bufs, const int64_t *syms)). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icpu.h"

/* A cached unit arrives as /proc/self/fd/N, a memfd the host closes once the unit is loaded.
 * glibc's dlopen first matches an already-loaded object by its path string, so a second cached
 * unit handed over under the reused number N came back as the first unit (another graph's
 * kernels). Each such unit is loaded through a descriptor of its own instead, open while the
 * unit is loaded, so its path names no other loaded unit. */
static const char *private_path(icpu_exe *exe, const char *so_path, char *buf, size_t cap) {
  static const char prefix[] = "/proc/self/fd/";
  if (strncmp(so_path, prefix, sizeof prefix - 1) != 0) return so_path;
  int fd = open(so_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return so_path;
  exe->dl_fd = fd;
  exe->has_dl_fd = true;
  snprintf(buf, cap, "%s%d", prefix, fd);
  return buf;
}

void exe_close_fd(icpu_exe *exe) {
  if (exe->has_dl_fd) close(exe->dl_fd);
  exe->has_dl_fd = false;
}

tc_status exe_load(icpu_ctx *ctx, icpu_exe *exe, const char *so_path, char (*names)[96], const tc_kernel_list *list,
                   char *err, size_t cap) {
  char own[64];
  exe->dl = dlopen(private_path(exe, so_path, own, sizeof own), RTLD_NOW | RTLD_LOCAL);
  if (!exe->dl) {
    snprintf(err, cap, "cannot load %s: %s", so_path, dlerror());
    return TC_ERR_COMPILE;
  }
  /* The runtimes the unit pulled in keep worker threads alive: unloading them under those
   * threads crashes, so pin them for the life of the process (the unit itself can go). */
  static const char *const runtimes[] = {"libgomp.so.1", "libopenblas.so.0"};
  for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
    void *h = dlopen(runtimes[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (h) dlclose(h);
  }
  void (*init)(int);
  *(void **)&init = dlsym(exe->dl, "tc_module_init");
  if (!init) {
    snprintf(err, cap, "%s has no tc_module_init", so_path);
    return TC_ERR_COMPILE;
  }
  init(ctx->threads);
  exe->module_init = init;
  exe->cur_threads = ctx->threads;
  exe->n_kernels = list->n_kernels;
  exe->kernels = calloc((size_t)(list->n_kernels > 0 ? list->n_kernels : 1), sizeof *exe->kernels);
  if (!exe->kernels) {
    snprintf(err, cap, "out of memory");
    return TC_ERR_OUT_OF_MEMORY;
  }
  for (int32_t i = 0; i < list->n_kernels; i++) {
    icpu_kernel *k = &exe->kernels[i];
    snprintf(k->name, sizeof k->name, "%s", names[i]);
    char sym[128];
    snprintf(sym, sizeof sym, "%s_launch", names[i]);
    *(void **)&k->launch = dlsym(exe->dl, sym);
    if (!k->launch) {
      snprintf(err, cap, "%s lacks %s", so_path, sym);
      return TC_ERR_COMPILE;
    }
    const tc_kernel_desc *kd = tck_list_kernel(list, i);
    k->n_buffers = kd->n_buffers;
    k->pure = true;
    /* a matmul's product buffer is written whole before its epilogue reads it: runs repeat */
    for (int32_t b = 0; b < kd->n_buffers; b++)
      k->pure &= tck_kernel_buffer(kd, b)->role != TC_BUF_INOUT || (kd->kind == TC_KERNEL_MATMUL && b == kd->matmul->c);
    for (int32_t o = 0; o < kd->n_ops; o++) k->pure &= tck_kernel_op(kd, o)->kind != TC_KOP_STORE_ADD;
  }
  return TC_OK;
}

tc_error *exe_launch(icpu_ctx *ctx, icpu_exe *exe, const tc_launch_args *a) {
  const tc_host_api *h = ctx->host;
  if (a->kernel < 0 || a->kernel >= exe->n_kernels)
    return tck_error(h, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: kernel %d out of range (%d kernels)", a->kernel,
                     exe->n_kernels);
  icpu_kernel *k = &exe->kernels[a->kernel];
  if (a->n_args < k->n_buffers)
    return tck_error(h, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: %s / %s takes %d buffers, got %d", exe->graph,
                     k->name, k->n_buffers, a->n_args);
  if (a->n_syms < exe->n_syms)
    return tck_error(h, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: %s / %s takes %d symbols, got %d", exe->graph,
                     k->name, exe->n_syms, a->n_syms);
  void *stack[32];
  void **bufs = k->n_buffers <= 32 ? stack : malloc(sizeof(void *) * (size_t)k->n_buffers);
  if (!bufs) return tck_error(h, TC_ERR_OUT_OF_MEMORY, "inductor-cpu launch: out of memory");
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_buffer_arg *arg = TC_ELEM(tc_buffer_arg, a->args, a->arg_size, b);
    if (!arg->buffer) {
      if (bufs != stack) free(bufs);
      return tck_error(h, TC_ERR_INVALID_ARGUMENT, "inductor-cpu launch: %s / %s: buffer %d is NULL", exe->graph, k->name,
                       b);
    }
    /* Host-memory plugin: a tc_buffer* is the host pointer itself. */
    bufs[b] = (char *)arg->buffer + arg->byte_offset;
  }
  static const int64_t no_syms[1] = {0};
  if (exe->autotune) icpu_autotune_apply(ctx, exe, k, bufs, a->syms ? a->syms : no_syms);
  double t0 = ctx->profiling ? tck_now_s() : 0;
  k->launch(bufs, a->syms ? a->syms : no_syms);
  if (ctx->profiling) tck_launch_stats_add(&k->prof, tck_now_s() - t0);
  if (bufs != stack) free(bufs);
  return NULL;
}

void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe) {
  if (!ctx->profiling) return;
  for (int32_t i = 0; i < exe->n_kernels; i++)
    tck_launch_stats_log(ctx->host, exe->graph, exe->kernels[i].name, &exe->kernels[i].prof, "");
}
