/* launch.c — running kernels. launch() records a dispatch into the open batch command buffer
 * (batch.c), with a barrier in front only where it conflicts with an earlier dispatch, and
 * returns; flush, synchronize or a transfer submit the batch. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static uint32_t cap_groups(uint64_t n, uint32_t limit) {
  if (n == 0) return 0;
  if (limit == 0) limit = 65535;
  return n > limit ? limit : (uint32_t)n;
}

int32_t vk_rows_variant(const tc_plugin_ctx *ctx, int64_t n, int32_t force) {
  int64_t n4 = (n + 3) / 4;
  uint32_t max_tpr = ctx->caps.max_wg_invocations < 1024 ? ctx->caps.max_wg_invocations : 1024, tpr = 32;
  if (force >= 0 && force < VK_TPR_VARIANTS && (32u << force) <= max_tpr) tpr = 32u << force;
  else while ((int64_t)tpr * VK_ROW_TARGET < n4 && tpr * 2 <= max_tpr) tpr *= 2;
  int32_t variant = 0;
  for (uint32_t t = tpr; t > 32; t >>= 1) variant++;
  return variant;
}

int32_t vk_rows_mode(const vk_kernel *k, int64_t n, int32_t variant, bool aligned) {
  if (!k->rows_vec || !aligned) return 0;
  int64_t n4 = (n + 3) / 4;
  /* MODE 2 prefetches each row's vec4s with clamped indices: it needs one to clamp to */
  return n4 >= 1 && n4 <= ((int64_t)32 << variant) * k->row_cache ? 2 : 1;
}

int32_t vk_matmul_variant(const tc_plugin_ctx *ctx, int64_t nb, int64_t m, int64_t n, int32_t force) {
  int64_t tiles = ((n + VK_MM_BN - 1) / VK_MM_BN) * ((m + VK_MM_BM - 1) / VK_MM_BM) * nb;
  bool half = force >= 0 ? force == 1 : ctx->mm_tile ? ctx->mm_tile == 64 : tiles < VK_MM_HALF_BELOW;
  return half ? 1 : 0;
}

/* Records kernel ki's dispatch into cmd, sizes from vals (every expression evaluated), with a
 * barrier in front where it conflicts with an earlier dispatch. */
static tc_status record_dispatch(tc_plugin_ctx *ctx, tc_executable *exe, int32_t ki, const tc_buffer_arg *args,
                                 const int64_t *syms, const int64_t *vals, VkCommandBuffer cmd, bool in_batch,
                                 int32_t force) {
  vk_kernel *k = &exe->kernels[ki];
  if (force < 0 && k->tune.tuned) force = k->tune.variant; /* max-autotune's choice for these sizes */
  for (int32_t s = 0; s < exe->n_syms; s++)
    if (syms[s] < 0 || syms[s] > INT32_MAX)
      return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': symbol s%d = %lld is outside 0..2^31-1", k->name,
                    (int)s, (long long)syms[s]);
  for (int32_t i = 0; i < k->n_buffers; i++) {
    int64_t n = k->numel[i] >= 0 && k->numel[i] < exe->n_exprs ? vals[k->numel[i]] : 0;
    const tc_buffer_arg *a = (&args[i]);
    if (n < 0 || n > INT32_MAX)
      return vk_err(ctx, TC_ERR_UNSUPPORTED, "vulkan launch '%s': buffer %d has %lld elements (32-bit indexing)", k->name,
                    (int)i, (long long)n);
    if (a->buffer && a->byte_offset + (uint64_t)n * (uint64_t)k->elem_size[i] > a->buffer->size)
      return vk_err(ctx, TC_ERR_INVALID_ARGUMENT,
                    "vulkan launch '%s': buffer %d holds %llu bytes, the kernel needs %lld elements of %d bytes from byte %zu",
                    k->name, (int)i, (unsigned long long)a->buffer->size, (long long)n, (int)k->elem_size[i], a->byte_offset);
  }
  uint32_t gx = 1, gy = 1, gz = 1;
  int32_t variant = 0, mode = 0;
  uint32_t tpr = 32;
  int64_t n_row = 0;
  if (k->shape == VK_SHAPE_POINTWISE) {
    uint64_t total = 1;
    for (int32_t d = 0; d < k->n_outer; d++) total *= (uint64_t)(vals[k->outer[d]] > 0 ? vals[k->outer[d]] : 0);
    uint64_t per = (uint64_t)VK_POINTWISE_WG * (uint64_t)k->vec_width;
    gx = cap_groups((total + per - 1) / per, ctx->caps.max_wg_count[0]);
    if (total == 0) return TC_OK;
  } else if (k->shape == VK_SHAPE_ROWS) {
    uint64_t rows = 1;
    for (int32_t d = 0; d < k->n_outer; d++) rows *= (uint64_t)(vals[k->outer[d]] > 0 ? vals[k->outer[d]] : 0);
    if (rows == 0) return TC_OK;
    n_row = vals[k->inner] > 0 ? vals[k->inner] : 0;
    variant = vk_rows_variant(ctx, n_row, force);
    tpr = 32u << variant;
    uint32_t wg = tpr < VK_ROWS_MIN_WG ? VK_ROWS_MIN_WG : tpr, rpw = wg / tpr;
    gx = cap_groups((rows + rpw - 1) / rpw, ctx->caps.max_wg_count[0]);
  } else {
    int64_t nb = vals[k->mm_batch], m = vals[k->mm_m], n = vals[k->mm_n];
    if (nb <= 0 || m <= 0 || n <= 0) return TC_OK;
    if (k->mm_batch2 >= 0) nb *= vals[k->mm_batch2] > 0 ? vals[k->mm_batch2] : 0; /* both batch levels on z */
    if (nb <= 0) return TC_OK;
    variant = vk_matmul_variant(ctx, nb, m, n, force);
    int64_t bm = variant == 1 ? VK_MM_BM / 2 : VK_MM_BM;
    gx = cap_groups((uint64_t)((n + VK_MM_BN - 1) / VK_MM_BN), ctx->caps.max_wg_count[0]);
    gy = cap_groups((uint64_t)((m + bm - 1) / bm), ctx->caps.max_wg_count[1]);
    gz = cap_groups((uint64_t)nb, ctx->caps.max_wg_count[2]);
  }
  uint32_t push[64];
  uint32_t *pc = k->push_bytes <= sizeof push ? push : malloc(k->push_bytes);
  if (!pc) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
  memset(pc, 0, k->push_bytes);
  for (int32_t s = 0; s < exe->n_syms; s++) pc[s] = (uint32_t)syms[s];
  VkDescriptorSet set;
  tc_status st = vk_kernel_descriptor_set(ctx, exe, k, args, &set, pc + exe->n_syms);
  if (st == TC_OK && k->shape == VK_SHAPE_ROWS && k->rows_vec) {
    /* the vec4 bodies need every term the generator recorded to be a multiple of 4 */
    bool ok = true;
    for (int32_t i = 0; i < k->n_vec_bufs && ok; i++) ok = pc[exe->n_syms + k->vec_bufs[i]] % 4 == 0;
    for (int32_t i = 0; i < k->n_vec_exprs && ok; i++) ok = vals[k->vec_exprs[i]] % 4 == 0;
    mode = vk_rows_mode(k, n_row, variant, ok);
  }
  VkPipeline pipe = VK_NULL_HANDLE;
  if (st == TC_OK) st = vk_kernel_pipeline(ctx, k, variant, mode, &pipe);
  if (st == TC_OK) {
    vk_hazard_barrier(ctx, cmd, k, args);
    ctx->fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    ctx->fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0, NULL);
    ctx->fn.vkCmdPushConstants(cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes, pc);
    bool timed = in_batch && vk_profile_before(ctx, ctx->batch_cur, cmd, k);
    ctx->fn.vkCmdDispatch(cmd, gx, gy, gz);
    if (timed) vk_profile_after(ctx, ctx->batch_cur, cmd);
  }
  if (pc != push) free(pc);
  return st;
}

static tc_status eval_sizes(tc_plugin_ctx *ctx, tc_executable *exe, const int64_t *syms, int64_t **vals) {
  *vals = malloc(sizeof(int64_t) * ((size_t)exe->n_exprs + 1));
  if (!*vals) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
  if (exe->n_syms > 0 && !syms) {
    free(*vals);
    *vals = NULL;
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch: the graph has %d symbols but syms is NULL", (int)exe->n_syms);
  }
  for (int32_t i = 0; i < exe->n_exprs; i++)
    if (exe->exprs[i].op == TC_SX_SYM && (exe->exprs[i].value < 0 || exe->exprs[i].value >= exe->n_syms)) {
      free(*vals);
      *vals = NULL;
      return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch: expression %d names symbol %lld of %d", (int)i,
                    (long long)exe->exprs[i].value, (int)exe->n_syms);
    }
  tck_size_eval_all(exe->exprs, sizeof(tc_size_expr), exe->n_exprs, syms, *vals);
  return TC_OK;
}

tc_status vk_launch(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, const int64_t *syms,
                    uint64_t call_id) {
  if (!exe || kernel < 0 || kernel >= exe->n_kernels)
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch: kernel %d out of range (%d kernels)", (int)kernel,
                  exe ? (int)exe->n_kernels : 0);
  if (exe->kernels[kernel].n_buffers > 0 && !args)
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': args is NULL", exe->kernels[kernel].name);
  int64_t *vals;
  tc_status st = eval_sizes(ctx, exe, syms, &vals);
  if (st != TC_OK) return st;
  /* Every set may be bound by work recorded or in flight: drop them once that has finished. */
  if (exe->n_pools >= VK_POOLS_MAX && (st = vk_flush_wait(ctx)) == TC_OK) {
    tck_log(ctx->host, TC_LOG_INFO, "vulkan", "vulkan: graph '%s' bound %d pools of descriptor sets; dropping them",
           exe->name ? exe->name : "?", (int)exe->n_pools);
    vk_executable_sets_drop(ctx, exe);
  }
  if (st == TC_OK) st = vk_autotune_kernel(ctx, exe, kernel, args, syms); /* before the batch is in hand */
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (st == TC_OK) st = vk_batch_cmd(ctx, &cmd);
  if (st == TC_OK) st = record_dispatch(ctx, exe, kernel, args, syms, vals, cmd, true, -1);
  if (st == TC_OK) vk_batch_note_call(ctx, call_id);
  free(vals);
  if (st == TC_OK && ++ctx->batch_launches >= 4096) st = vk_flush(ctx);
  return st;
}

tc_status vk_launch_record(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                           const int64_t *syms, VkCommandBuffer cmd) {
  return vk_launch_record_variant(ctx, exe, kernel, args, syms, cmd, -1);
}

tc_status vk_launch_record_variant(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                                   const int64_t *syms, VkCommandBuffer cmd, int32_t variant) {
  if (!exe || kernel < 0 || kernel >= exe->n_kernels)
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch: kernel %d out of range (%d kernels)", (int)kernel,
                  exe ? (int)exe->n_kernels : 0);
  int64_t *vals;
  tc_status st = eval_sizes(ctx, exe, syms, &vals);
  if (st == TC_OK) st = record_dispatch(ctx, exe, kernel, args, syms, vals, cmd, false, variant);
  free(vals);
  return st;
}
