/* launch.c — loads a compiled unit and calls its kernels through the generated uniform
 * launchers (k_NAME_launch(void **bufs, const int64_t *syms)) of the executable's live unit. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
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
static const char *private_path(icpu_part *p, const char *so_path, char *buf, size_t cap) {
  static const char prefix[] = "/proc/self/fd/";
  if (strncmp(so_path, prefix, sizeof prefix - 1) != 0) return so_path;
  int fd = open(so_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return so_path;
  p->dl_fd = fd;
  p->has_dl_fd = true;
  snprintf(buf, cap, "%s%d", prefix, fd);
  return buf;
}

void unit_free(icpu_unit *u) {
  if (!u) return;
  for (int32_t i = 0; u->parts && i < u->n_parts; i++) {
    if (u->parts[i].dl) dlclose(u->parts[i].dl);
    /* after dlclose: the descriptor keeps the path from naming another object meanwhile */
    if (u->parts[i].has_dl_fd) close(u->parts[i].dl_fd);
  }
  free(u->parts);
  free(u->launch);
  free(u);
}

void unit_set_threads(icpu_unit *u, int32_t threads) {
  for (int32_t i = 0; i < u->n_parts; i++)
    u->parts[i].module_init(threads);
  u->cur_threads = threads;
}

/* Loads one part: dlopen, then tc_module_init. */
static tc_status part_load(icpu_part *p, const char *so_path, char *err, size_t cap) {
  char own[64];
  p->dl = dlopen(private_path(p, so_path, own, sizeof own), RTLD_NOW | RTLD_LOCAL);
  if (!p->dl) {
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
  *(void **)&p->module_init = dlsym(p->dl, "tc_module_init");
  if (!p->module_init) {
    snprintf(err, cap, "%s has no tc_module_init", so_path);
    return TC_ERR_COMPILE;
  }
  /* a part with a generated GEMM: its runtime, built into the plugin (gemm_runtimes.c) */
  int (*gemm_attach)(const void *(*)(int, size_t));
  *(void **)&gemm_attach = dlsym(p->dl, "tc_gemm_attach");
  if (gemm_attach && !gemm_attach(gemm_runtime_find)) {
    size_t ws;
    const int vl = gemm_runtime_asked(&ws);
    snprintf(err, cap,
             "%s: this build of the plugin has no GEMM runtime for the unit's vector width of %d floats and workspace "
             "of %zu bytes (the plugin and the unit's prelude disagree)",
             so_path, vl, ws);
    return TC_ERR_COMPILE;
  }
  return TC_OK;
}

/* libopenblas, loaded once with its symbols global (never unloaded: see part_load). */
static bool blas_global;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_global_init(void) {
  blas_global = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) != NULL;
}

bool unit_blas_global(void) {
  pthread_once(&blas_once, blas_global_init);
  return blas_global;
}

tc_status exe_kernels_init(icpu_exe *exe, char (*names)[96], const tc_kernel_list *list, char *err, size_t cap) {
  exe->n_kernels = list->n_kernels;
  exe->kernels = calloc((size_t)(list->n_kernels > 0 ? list->n_kernels : 1), sizeof *exe->kernels);
  if (!exe->kernels) {
    snprintf(err, cap, "out of memory");
    return TC_ERR_OUT_OF_MEMORY;
  }
  for (int32_t i = 0; i < list->n_kernels; i++) {
    icpu_kernel *k = &exe->kernels[i];
    snprintf(k->name, sizeof k->name, "%s", names[i]);
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

tc_status unit_load(const icpu_exe *exe, int32_t threads, icpu_tier tier, const char *const *paths, int32_t n_parts,
                    const int32_t *part_of, icpu_unit **out, char *err, size_t cap) {
  *out = NULL;
  icpu_unit *u = calloc(1, sizeof *u);
  if (u) {
    u->launch = calloc((size_t)(exe->n_kernels > 0 ? exe->n_kernels : 1), sizeof *u->launch);
    u->parts = calloc((size_t)(n_parts > 0 ? n_parts : 1), sizeof *u->parts);
  }
  if (!u || !u->launch || !u->parts) {
    unit_free(u);
    snprintf(err, cap, "out of memory");
    return TC_ERR_OUT_OF_MEMORY;
  }
  u->tier = tier;
  u->n_parts = n_parts;
  for (int32_t i = 0; i < n_parts; i++) {
    tc_status st = part_load(&u->parts[i], paths[i], err, cap);
    if (st != TC_OK) {
      unit_free(u);
      return st;
    }
  }
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    const int32_t part = part_of ? part_of[i] : 0;
    char sym[128];
    snprintf(sym, sizeof sym, "%s_launch", exe->kernels[i].name);
    *(void **)&u->launch[i] = dlsym(u->parts[part].dl, sym);
    if (!u->launch[i]) {
      snprintf(err, cap, "%s lacks %s", paths[part], sym);
      unit_free(u);
      return TC_ERR_COMPILE;
    }
  }
  unit_set_threads(u, threads);
  *out = u;
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
  /* acquire: a unit the background build published is seen whole (tiered.c) */
  icpu_unit *u = atomic_load_explicit(&exe->live, memory_order_acquire);
  exe->launches++;
  if (u != exe->last_run) {
    if (exe->last_run)
      icpu_log(ctx, "cache", "inductor-cpu: %s: from launch %lld on, the -O3 build runs", exe->graph,
               (long long)exe->launches);
    exe->last_run = u;
  }
  if (exe->autotune) icpu_autotune_apply(ctx, exe, u, a->kernel, bufs, a->syms ? a->syms : no_syms);
  double t0 = ctx->profiling ? tck_now_s() : 0;
  u->launch[a->kernel](bufs, a->syms ? a->syms : no_syms);
  if (ctx->profiling) tck_launch_stats_add(&k->prof, tck_now_s() - t0);
  if (bufs != stack) free(bufs);
  /* one call's worth of launches done: the background -O3 build may start (tiered.c) */
  if (exe->launches == exe->n_kernels) tiered_release(exe);
  return NULL;
}

void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe) {
  if (!ctx->profiling) return;
  for (int32_t i = 0; i < exe->n_kernels; i++)
    tck_launch_stats_log(ctx->host, exe->graph, exe->kernels[i].name, &exe->kernels[i].prof, "");
}
