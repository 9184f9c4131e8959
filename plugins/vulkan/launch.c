/* launch.c — running kernels. launch() records a dispatch into the open batch command buffer
 * (batch.c), with a barrier in front only where it conflicts with an earlier dispatch, and
 * returns; flush, synchronize or a transfer submit the batch. record() keeps a
 * launch sequence; replay() records it once into its own command buffer and resubmits that
 * buffer on every replay (re-recorded only when the symbols change, since workgroup counts
 * and push constants depend on them). */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static uint32_t cap_groups(uint64_t n, uint32_t limit) {
  if (n == 0) return 0;
  if (limit == 0) limit = 65535;
  return n > limit ? limit : (uint32_t)n;
}

/* Records kernel ki's dispatch into cmd, sizes from vals (every expression evaluated).
 * tracked (the batch): a barrier in front by hazard; else (recordings) one after it. */
static tc_status record_dispatch(tc_plugin_ctx *ctx, tc_executable *exe, int32_t ki, const tc_buffer_arg *args,
                                 const int64_t *syms, const int64_t *vals, VkCommandBuffer cmd, bool tracked) {
  vk_kernel *k = &exe->kernels[ki];
  for (int32_t s = 0; s < exe->n_syms; s++)
    if (syms[s] < 0 || syms[s] > INT32_MAX)
      return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': symbol s%d = %lld is outside 0..2^31-1", k->name,
                    (int)s, (long long)syms[s]);
  for (int32_t i = 0; i < k->n_buffers; i++) {
    int64_t n = k->numel[i] >= 0 && k->numel[i] < exe->n_exprs ? vals[k->numel[i]] : 0;
    const tc_buffer_arg *a = TC_AT(tc_buffer_arg, args, i);
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
  int64_t n4 = 0;
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
    int64_t n = vals[k->inner] > 0 ? vals[k->inner] : 0;
    n4 = (n + 3) / 4;
    uint32_t max_tpr = ctx->caps.max_wg_invocations < 1024 ? ctx->caps.max_wg_invocations : 1024;
    while ((int64_t)tpr * VK_ROW_TARGET < n4 && tpr * 2 <= max_tpr) tpr *= 2;
    for (uint32_t t = tpr; t > 32; t >>= 1) variant++;
    uint32_t wg = tpr < VK_ROWS_MIN_WG ? VK_ROWS_MIN_WG : tpr, rpw = wg / tpr;
    gx = cap_groups((rows + rpw - 1) / rpw, ctx->caps.max_wg_count[0]);
  } else {
    int64_t nb = vals[k->mm_batch], m = vals[k->mm_m], n = vals[k->mm_n];
    if (nb <= 0 || m <= 0 || n <= 0) return TC_OK;
    if (k->mm_batch2 >= 0) nb *= vals[k->mm_batch2] > 0 ? vals[k->mm_batch2] : 0; /* both batch levels on z */
    if (nb <= 0) return TC_OK;
    int64_t tiles = ((n + VK_MM_BN - 1) / VK_MM_BN) * ((m + VK_MM_BM - 1) / VK_MM_BM) * nb;
    bool half = ctx->mm_tile ? ctx->mm_tile == 64 : tiles < VK_MM_HALF_BELOW;
    int64_t bm = half ? VK_MM_BM / 2 : VK_MM_BM;
    variant = half ? 1 : 0;
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
    /* MODE 2 prefetches each row's vec4s with clamped indices: it needs one to clamp to */
    mode = !ok ? 0 : n4 >= 1 && n4 <= (int64_t)tpr * VK_ROW_CACHE ? 2 : 1;
  }
  VkPipeline pipe = VK_NULL_HANDLE;
  if (st == TC_OK) st = vk_kernel_pipeline(ctx, k, variant, mode, &pipe);
  if (st == TC_OK) {
    if (tracked) vk_hazard_barrier(ctx, cmd, k, args);
    ctx->fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    ctx->fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0, NULL);
    ctx->fn.vkCmdPushConstants(cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes, pc);
    bool timed = tracked && vk_profile_before(ctx, ctx->batch_cur, cmd, k);
    ctx->fn.vkCmdDispatch(cmd, gx, gy, gz);
    if (timed) vk_profile_after(ctx, ctx->batch_cur, cmd);
    if (!tracked) vk_barrier_after_dispatch(ctx, cmd);
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
  tc_size_eval_all(exe->exprs, exe->n_exprs, syms, *vals);
  return TC_OK;
}

tc_status vk_launch(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, const int64_t *syms) {
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
    vk_log(ctx, TC_LOG_INFO, "vulkan", "vulkan: graph '%s' bound %d pools of descriptor sets; dropping them",
           exe->name ? exe->name : "?", (int)exe->n_pools);
    vk_executable_sets_drop(ctx, exe);
  }
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (st == TC_OK) st = vk_batch_cmd(ctx, &cmd);
  if (st == TC_OK) st = record_dispatch(ctx, exe, kernel, args, syms, vals, cmd, true);
  free(vals);
  if (st == TC_OK && ++ctx->batch_launches >= 4096) st = vk_flush(ctx);
  return st;
}

tc_status vk_record(tc_plugin_ctx *ctx, tc_executable *exe, int32_t n_launches, const tc_launch *launches, tc_recording **out) {
  *out = NULL;
  if (!exe || n_launches < 0 || (n_launches > 0 && !launches))
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan record: bad launch sequence");
  tc_recording *rec = calloc(1, sizeof *rec);
  if (!rec) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan record: out of memory");
  rec->exe = exe;
  rec->n_launches = n_launches;
  size_t n_args = 0;
  for (int32_t i = 0; i < n_launches; i++) {
    const tc_launch *l = TC_AT(tc_launch, launches, i);
    if (l->kernel < 0 || l->kernel >= exe->n_kernels || (exe->kernels[l->kernel].n_buffers > 0 && !l->args)) {
      free(rec);
      return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan record: launch %d names kernel %d of %d", (int)i, (int)l->kernel,
                    (int)exe->n_kernels);
    }
    n_args += (size_t)exe->kernels[l->kernel].n_buffers;
  }
  rec->launches = calloc((size_t)n_launches + 1, sizeof *rec->launches);
  rec->args = calloc(n_args + 1, sizeof *rec->args);
  rec->syms = calloc((size_t)exe->n_syms + 1, sizeof *rec->syms);
  if (!rec->launches || !rec->args || !rec->syms) {
    vk_recording_free(ctx, rec);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan record: out of memory");
  }
  size_t at = 0;
  for (int32_t i = 0; i < n_launches; i++) {
    const tc_launch *l = TC_AT(tc_launch, launches, i);
    rec->launches[i] = (tc_launch){.struct_size = sizeof(tc_launch), .kernel = l->kernel, .args = &rec->args[at]};
    for (int32_t b = 0; b < exe->kernels[l->kernel].n_buffers; b++) {
      const tc_buffer_arg *a = TC_AT(tc_buffer_arg, l->args, b);
      rec->args[at++] = (tc_buffer_arg){.struct_size = sizeof(tc_buffer_arg), .buffer = a->buffer, .byte_offset = a->byte_offset};
    }
  }
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = ctx->cmd_pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (ctx->fn.vkAllocateCommandBuffers(ctx->device, &cai, &rec->cmd) != VK_SUCCESS ||
      ctx->fn.vkCreateFence(ctx->device, &fci, NULL, &rec->fence) != VK_SUCCESS) {
    vk_recording_free(ctx, rec);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan record: command buffer or fence allocation failed");
  }
  *out = rec;
  return TC_OK;
}

static void pending_remove(tc_plugin_ctx *ctx, tc_recording *rec) {
  for (int32_t i = 0; i < ctx->n_pending; i++)
    if (ctx->pending[i] == rec) ctx->pending[i--] = ctx->pending[--ctx->n_pending];
}

tc_status vk_replay(tc_plugin_ctx *ctx, tc_recording *rec, const int64_t *syms) {
  if (!rec) return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan replay: NULL recording");
  tc_executable *exe = rec->exe;
  if (exe->n_syms > 0 && !syms) return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan replay: syms is NULL");
  /* Earlier launches in the open batch go first. */
  tc_status st = TC_OK;
  if (ctx->batch_open && (st = vk_flush(ctx)) != TC_OK) return st;
  if (rec->pending) {
    ctx->fn.vkWaitForFences(ctx->device, 1, &rec->fence, VK_TRUE, UINT64_MAX);
    ctx->fn.vkResetFences(ctx->device, 1, &rec->fence);
    rec->pending = false;
    pending_remove(ctx, rec);
  }
  bool same = rec->recorded && rec->set_generation == exe->set_generation &&
              (exe->n_syms == 0 || memcmp(rec->syms, syms, sizeof(int64_t) * (size_t)exe->n_syms) == 0);
  if (!same) {
    int64_t *vals;
    if ((st = eval_sizes(ctx, exe, syms, &vals)) != TC_OK) return st;
    ctx->fn.vkResetCommandBuffer(rec->cmd, 0);
    rec->recorded = false;
    st = vk_cmd_begin(ctx, rec->cmd, 0, true);
    for (int32_t i = 0; i < rec->n_launches && st == TC_OK; i++)
      st = record_dispatch(ctx, exe, rec->launches[i].kernel, rec->launches[i].args, syms, vals, rec->cmd, false);
    free(vals);
    VkResult r = ctx->fn.vkEndCommandBuffer(rec->cmd);
    if (st != TC_OK) return st;
    if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_INTERNAL, "vulkan replay: vkEndCommandBuffer failed (%s)", vk_result_name(r));
    if (exe->n_syms > 0) memcpy(rec->syms, syms, sizeof(int64_t) * (size_t)exe->n_syms);
    rec->set_generation = exe->set_generation;
    rec->recorded = true;
  }
  if (ctx->n_pending == (int32_t)(sizeof ctx->pending / sizeof ctx->pending[0]) && (st = vk_flush_wait(ctx)) != TC_OK) return st;
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &rec->cmd};
  VkResult r = ctx->fn.vkQueueSubmit(ctx->queue, 1, &si, rec->fence);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_INTERNAL, "vulkan replay: vkQueueSubmit failed (%s)", vk_result_name(r));
  rec->pending = true;
  ctx->pending[ctx->n_pending++] = rec;
  vk_hazards_clear(ctx); /* its lead barrier orders it after everything, the last one orders what follows */
  return TC_OK;
}

void vk_recording_free(tc_plugin_ctx *ctx, tc_recording *rec) {
  if (!rec) return;
  if (rec->pending) {
    ctx->fn.vkWaitForFences(ctx->device, 1, &rec->fence, VK_TRUE, UINT64_MAX);
    pending_remove(ctx, rec);
  }
  if (rec->cmd) ctx->fn.vkFreeCommandBuffers(ctx->device, ctx->cmd_pool, 1, &rec->cmd);
  if (rec->fence) ctx->fn.vkDestroyFence(ctx->device, rec->fence, NULL);
  free(rec->launches);
  free(rec->args);
  free(rec->syms);
  free(rec);
}
