/* profile.c — TC_LOGS=profile: how long each kernel runs on the device.
 *
 * With the category on at init, every dispatch recorded into a batch gets a timestamp before
 * (top of pipe) and after (bottom of pipe), in a query pool per batch slot. When a slot's fence
 * has been waited for, its pairs are read and added to their kernels; freeing an executable
 * logs one line per kernel (launches, mean, min, max device time). Dispatches the runtime lets
 * overlap (no barrier between them) overlap in their intervals too. Recordings are not timed.
 * The timestamps cost little, but they are written only when asked for. */
#include <string.h>

#include "vk_internal.h"

void vk_profile_open(tc_plugin_ctx *ctx) {
  if (!tck_log_on(ctx->host, "profile")) return;
  if (ctx->caps.timestamp_period <= 0) {
    tck_log(ctx->host, TC_LOG_WARN, "profile", "vulkan: TC_LOGS=profile: the compute queue has no timestamps");
    return;
  }
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2 * VK_PROFILE_DISPATCHES};
  for (int32_t i = 0; i < VK_BATCH_SLOTS; i++)
    if (ctx->fn.vkCreateQueryPool(ctx->device, &qi, NULL, &ctx->prof_pools[i]) != VK_SUCCESS) {
      vk_profile_close(ctx);
      tck_log(ctx->host, TC_LOG_WARN, "profile", "vulkan: TC_LOGS=profile: vkCreateQueryPool failed");
      return;
    }
  ctx->profiling = true;
}

void vk_profile_close(tc_plugin_ctx *ctx) {
  for (int32_t i = 0; i < VK_BATCH_SLOTS; i++) {
    if (ctx->prof_pools[i]) ctx->fn.vkDestroyQueryPool(ctx->device, ctx->prof_pools[i], NULL);
    ctx->prof_pools[i] = VK_NULL_HANDLE;
  }
  ctx->profiling = false;
}

void vk_profile_batch_begin(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd) {
  if (!ctx->profiling) return;
  ctx->fn.vkCmdResetQueryPool(cmd, ctx->prof_pools[slot], 0, 2 * VK_PROFILE_DISPATCHES);
  ctx->prof_used[slot] = 0;
}

bool vk_profile_before(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd, vk_kernel *k) {
  if (!ctx->profiling || ctx->prof_used[slot] >= VK_PROFILE_DISPATCHES) return false;
  int32_t i = ctx->prof_used[slot]++;
  ctx->prof_kernels[slot][i] = k;
  ctx->fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ctx->prof_pools[slot], (uint32_t)(2 * i));
  return true;
}

void vk_profile_after(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd) {
  int32_t i = ctx->prof_used[slot] - 1;
  ctx->fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ctx->prof_pools[slot], (uint32_t)(2 * i + 1));
}

void vk_profile_collect(tc_plugin_ctx *ctx, int32_t slot) {
  if (!ctx->profiling || ctx->prof_used[slot] == 0) return;
  int32_t n = ctx->prof_used[slot];
  ctx->prof_used[slot] = 0;
  uint64_t ticks[2 * VK_PROFILE_DISPATCHES];
  VkResult r = ctx->fn.vkGetQueryPoolResults(ctx->device, ctx->prof_pools[slot], 0, (uint32_t)(2 * n), sizeof ticks, ticks,
                                             sizeof ticks[0], VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return; /* VK_NOT_READY: a batch that never ran; nothing to add */
  for (int32_t i = 0; i < n; i++) {
    vk_kernel *k = ctx->prof_kernels[slot][i];
    double ns = (double)((ticks[2 * i + 1] - ticks[2 * i]) & ctx->caps.timestamp_mask) * ctx->caps.timestamp_period;
    if (k->prof_launches == 0 || ns < k->prof_min_ns) k->prof_min_ns = ns;
    if (ns > k->prof_max_ns) k->prof_max_ns = ns;
    k->prof_ns += ns;
    k->prof_launches++;
  }
}

void vk_profile_report(tc_plugin_ctx *ctx, const tc_executable *exe) {
  if (!ctx->profiling) return;
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    const vk_kernel *k = &exe->kernels[i];
    if (k->prof_launches == 0) continue;
    tck_log(ctx->host, TC_LOG_INFO, "profile", "%s / %s: %llu launches, mean %.1f us, min %.1f us, max %.1f us on the device",
           exe->name ? exe->name : "?", k->name, (unsigned long long)k->prof_launches, k->prof_ns / (double)k->prof_launches * 1e-3,
           k->prof_min_ns * 1e-3, k->prof_max_ns * 1e-3);
  }
}
