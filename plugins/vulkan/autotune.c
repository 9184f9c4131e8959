/* autotune.c — max-autotune on vulkan: each kernel's launch shape, from the variants the
 * pipelines already have (no new shader): ROWS kernels' threads per row (32 << v, up to the
 * device's workgroup limit; the launch otherwise picks it from the row length) and MATMUL
 * kernels' tile height (128 or 64 rows; unless vulkan.matmul_tile fixes it). At a kernel's first
 * launch with given symbol values every variant is timed on the launch's own buffers, a few
 * dispatches per submission, waited for (a kernel whose runs may repeat: no buffer both read and
 * written, no atomic accumulation); the fastest is kept in the kernel and in the disk cache
 * (the kit's tck_tune_choose), so a second process takes it without timing. POINTWISE kernels
 * have one shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

typedef struct tune_run {
  tc_plugin_ctx *ctx;
  tc_executable *exe;
  int32_t kernel;
  const tc_buffer_arg *args;
  const int64_t *syms;
} tune_run;

enum { TUNE_DISPATCHES = 4 };

/* One submission of `n` dispatches in `variant`, waited for: its wall time, or < 0. */
static double submit_timed(tune_run *r, int32_t variant, int n) {
  tc_plugin_ctx *ctx = r->ctx;
  VkCommandBuffer cmd;
  if (vk_oneshot_begin(ctx, &cmd) != TC_OK) return -1;
  tc_status st = TC_OK;
  for (int i = 0; i < n && st == TC_OK; i++)
    st = vk_launch_record_variant(ctx, r->exe, r->kernel, r->args, r->syms, cmd, variant);
  double t0 = tck_now_s();
  tc_status end = vk_oneshot_end(ctx, cmd);
  double t = tck_now_s() - t0;
  vk_hazards_clear(ctx); /* waited for */
  return st == TC_OK && end == TC_OK ? t : -1;
}

/* The best of three submissions of TUNE_DISPATCHES dispatches, per dispatch (after one that
 * creates the variant's pipeline and warms the device); a dispatch slower than 20 ms is timed
 * once (lavapipe takes seconds for some shapes). */
static double measure(void *arg, int32_t variant) {
  tune_run *r = arg;
  double once = submit_timed(r, variant, 1);
  if (once < 0 || once > 0.02) return once;
  double best = -1;
  for (int i = 0; i < 3; i++) {
    double t = submit_timed(r, variant, TUNE_DISPATCHES);
    if (t < 0) return -1;
    if (best < 0 || t < best) best = t;
  }
  return best / TUNE_DISPATCHES;
}

tc_status vk_autotune_kernel(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                             const int64_t *syms) {
  if (!exe->autotune || kernel < 0 || kernel >= exe->n_kernels) return TC_OK;
  vk_kernel *k = &exe->kernels[kernel];
  if (!k->pure || k->shape == VK_SHAPE_POINTWISE || (k->shape == VK_SHAPE_MATMUL && ctx->mm_tile)) return TC_OK;
  if ((exe->n_syms > 0 && !syms) || tck_tune_memo_hit(&k->tune, syms, exe->n_syms)) return TC_OK;
  int32_t variants[VK_TPR_VARIANTS], n = 0;
  if (k->shape == VK_SHAPE_MATMUL) {
    variants[n++] = 0;
    variants[n++] = 1;
  } else {
    uint32_t max_tpr = ctx->caps.max_wg_invocations < 1024 ? ctx->caps.max_wg_invocations : 1024;
    for (int32_t v = 0; v < VK_TPR_VARIANTS && (32u << v) <= max_tpr; v++) variants[n++] = v;
  }
  char what[256];
  snprintf(what, sizeof what, "%s / %s, %s", exe->name ? exe->name : "?", k->name,
           k->shape == VK_SHAPE_MATMUL ? "variant 0: 128-row tiles, 1: 64" : "variant v: 32 << v threads per row");
  tck_str key = {0};
  tck_str_printf(&key, "vulkan autotune\ndevice %s\nshape %d\n", ctx->device_key, (int)k->shape);
  tck_str_puts(&key, k->glsl ? k->glsl : "");
  /* timing submits and waits: the queue statistics count the calls' own work only */
  uint64_t disp = ctx->n_dispatches, barriers = ctx->n_barriers, submits = ctx->n_submits;
  tune_run run = {.ctx = ctx, .exe = exe, .kernel = kernel, .args = args, .syms = syms};
  bool from_cache = false;
  tck_tune_request req = {.who = "vulkan", .what = what, .key = key.data ? key.data : "", .key_len = key.len,
                          .n_syms = exe->n_syms, .syms = syms, .variants = variants, .n = n,
                          .stop_when_slower = true, .measure = measure, .arg = &run};
  int32_t chosen = key.oom ? variants[0] : tck_tune_choose(ctx->host, &req, &from_cache);
  ctx->n_dispatches = disp;
  ctx->n_barriers = barriers;
  ctx->n_submits = submits;
  tck_str_free(&key);
  if (!tck_tune_memo_keep(&k->tune, syms, exe->n_syms, chosen))
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan autotune: out of memory");
  return TC_OK;
}
