/* batch.c — the queue side of the runtime: command-buffer slots, submission, barriers.
 *
 * Launches are recorded into the open batch (one command buffer of VK_BATCH_SLOTS). The ABI's
 * flush ends a call; it submits the batch without waiting, unless VK_DEFER_DEPTH batches are
 * still running on the device: then the batch stays open and the next calls' launches join it.
 * A submission boundary costs the device a drain and a restart (about 4 us on the H200's
 * driver, measured), so back-to-back calls go out several to a submission while the device has
 * work queued. A submitter thread closes and submits a deferred batch as soon as fewer than
 * VK_DEFER_DEPTH batches are running, so deferred work starts without another call from the
 * host. Every entry point that touches the queue runs under queue_lock (plugin.c), as does the
 * submitter, so fences, slots and the queue are never used from two threads at once.
 *
 * A deferred batch may hold the launches of several host calls; when the submitter fails to
 * submit it, the failure goes to the host at once (report_async_error) against the newest call
 * in it, the message saying how many calls it held, and the next entry that submits or waits
 * returns an error as well (its own work may depend on the dropped launches).
 *
 * Barriers are placed by hazard, not after every dispatch: the runtime remembers which buffers
 * dispatches read and wrote since the last barrier, and records one in front of a dispatch that
 * reads something written, or writes something read or written, since then. A barrier's scope
 * covers every command earlier in submission order, in any command buffer, so the hazard sets
 * live across batches. Independent calls (a bench's back-to-back calls, branches of a graph)
 * then overlap on the device instead of draining between kernels. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_internal.h"

/* ---- barriers ---- */

static void barrier(tc_plugin_ctx *ctx, VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = src_access,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  ctx->fn.vkCmdPipelineBarrier(cmd, src, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb,
                               0, NULL, 0, NULL);
}

void vk_barrier_after_dispatch(tc_plugin_ctx *ctx, VkCommandBuffer cmd) {
  barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
}

void vk_barrier_all(tc_plugin_ctx *ctx, VkCommandBuffer cmd) {
  barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
}

void vk_hazards_clear(tc_plugin_ctx *ctx) { ctx->n_hz_read = ctx->n_hz_written = 0; }

static bool hz_has(const VkBuffer *set, int32_t n, VkBuffer b) {
  for (int32_t i = 0; i < n; i++)
    if (set[i] == b) return true;
  return false;
}

static void hz_add(VkBuffer *set, int32_t *n, VkBuffer b) {
  if (!hz_has(set, *n, b)) set[(*n)++] = b;
}

void vk_hazard_barrier(tc_plugin_ctx *ctx, VkCommandBuffer cmd, const vk_kernel *k, const tc_buffer_arg *args) {
  bool need = false;
  int32_t reads = 0, writes = 0;
  for (int32_t i = 0; i < k->n_buffers && !need; i++) {
    const tc_buffer *b = (&args[i])->buffer;
    if (!b) continue;
    if (k->access[i] & VK_ACCESS_R) need = hz_has(ctx->hz_written, ctx->n_hz_written, b->buf), reads++;
    if (k->access[i] & VK_ACCESS_W)
      need = need || hz_has(ctx->hz_written, ctx->n_hz_written, b->buf) || hz_has(ctx->hz_read, ctx->n_hz_read, b->buf),
      writes++;
  }
  /* a full set costs one barrier more, never a missed one */
  ctx->n_dispatches++;
  if (need || ctx->n_hz_read + reads > VK_HAZARD_CAP || ctx->n_hz_written + writes > VK_HAZARD_CAP) {
    vk_barrier_after_dispatch(ctx, cmd);
    vk_hazards_clear(ctx);
    ctx->n_barriers++;
  }
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_buffer *b = (&args[i])->buffer;
    if (!b) continue;
    if (k->access[i] & VK_ACCESS_R) hz_add(ctx->hz_read, &ctx->n_hz_read, b->buf);
    if (k->access[i] & VK_ACCESS_W) hz_add(ctx->hz_written, &ctx->n_hz_written, b->buf);
  }
}

/* ---- command buffers and slots ---- */

tc_status vk_cmd_begin(tc_plugin_ctx *ctx, VkCommandBuffer cmd, VkCommandBufferUsageFlags flags, bool lead) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = flags};
  VkResult r = ctx->fn.vkBeginCommandBuffer(cmd, &bi);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_INTERNAL, "vulkan: vkBeginCommandBuffer failed (%s)", vk_result_name(r));
  if (lead) vk_barrier_all(ctx, cmd);
  return TC_OK;
}

static tc_status wait_fence(tc_plugin_ctx *ctx, VkFence fence, const char *what) {
  VkResult r = ctx->fn.vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX);
  ctx->fn.vkResetFences(ctx->device, 1, &fence);
  return r == VK_SUCCESS ? TC_OK : vk_err(ctx, TC_ERR_INTERNAL, "vulkan: waiting for %s failed (%s)", what, vk_result_name(r));
}

/* The current slot, free to record into: waits when it is still running from VK_BATCH_SLOTS
 * submissions ago (the host is that far ahead of the device). */
static tc_status batch_acquire(tc_plugin_ctx *ctx, vk_batch **out) {
  vk_batch *b = &ctx->batches[ctx->batch_cur];
  tc_status st = TC_OK;
  if (b->in_flight) {
    b->in_flight = false;
    st = wait_fence(ctx, b->fence, "an earlier batch");
    vk_profile_collect(ctx, ctx->batch_cur);
  }
  *out = b;
  return st;
}

tc_status vk_batch_cmd(tc_plugin_ctx *ctx, VkCommandBuffer *cmd) {
  vk_batch *b = &ctx->batches[ctx->batch_cur];
  if (!ctx->batch_open) {
    tc_status st = batch_acquire(ctx, &b);
    if (st == TC_OK) st = vk_cmd_begin(ctx, b->cmd, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, false);
    if (st != TC_OK) return st;
    vk_profile_batch_begin(ctx, ctx->batch_cur, b->cmd);
    ctx->batch_open = true;
    b->n_calls = 0;
    b->last_call = 0;
  }
  *cmd = b->cmd;
  return TC_OK;
}

void vk_batch_note_call(tc_plugin_ctx *ctx, uint64_t call_id) {
  vk_batch *b = &ctx->batches[ctx->batch_cur];
  if (b->n_calls == 0 || b->last_call != call_id) b->n_calls++;
  b->last_call = call_id;
}

/* Batches submitted and still running (fence not signaled). */
static int32_t batches_running(tc_plugin_ctx *ctx) {
  int32_t n = 0;
  for (int32_t i = 0; i < VK_BATCH_SLOTS; i++)
    if (ctx->batches[i].in_flight && ctx->fn.vkGetFenceStatus(ctx->device, ctx->batches[i].fence) == VK_NOT_READY) n++;
  return n;
}

/* Ends and submits the open batch; *what names the failing call. No error reporting: the
 * submitter thread calls it too. */
static VkResult submit_open(tc_plugin_ctx *ctx, const char **what) {
  vk_batch *b = &ctx->batches[ctx->batch_cur];
  ctx->batch_open = false;
  ctx->batch_deferred = false;
  ctx->batch_launches = 0;
  *what = "vkEndCommandBuffer";
  VkResult r = ctx->fn.vkEndCommandBuffer(b->cmd);
  if (r == VK_SUCCESS) {
    *what = "vkQueueSubmit";
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &b->cmd};
    r = ctx->fn.vkQueueSubmit(ctx->queue, 1, &si, b->fence);
  }
  if (r != VK_SUCCESS) {
    ctx->fn.vkResetCommandBuffer(b->cmd, 0);
    return r;
  }
  b->in_flight = true;
  ctx->batch_cur = (ctx->batch_cur + 1) % VK_BATCH_SLOTS;
  ctx->n_submits++;
  return VK_SUCCESS;
}

/* A failure of the submitter thread, already reported against its call: the next entry point
 * that submits or waits fails too, since its work may depend on the dropped launches. */
static tc_status take_deferred_failure(tc_plugin_ctx *ctx) {
  if (ctx->deferred_failure == VK_SUCCESS) return TC_OK;
  VkResult r = ctx->deferred_failure;
  ctx->deferred_failure = VK_SUCCESS;
  return vk_err(ctx, TC_ERR_DEVICE, "vulkan: submitting a deferred batch (up to call %llu) failed (%s); its launches were dropped",
                (unsigned long long)ctx->deferred_failure_call, vk_result_name(r));
}

tc_status vk_flush(tc_plugin_ctx *ctx) {
  tc_status st = take_deferred_failure(ctx);
  if (!ctx->batch_open) return st;
  const char *what;
  VkResult r = submit_open(ctx, &what);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_INTERNAL, "vulkan: %s failed (%s)", what, vk_result_name(r));
  return st;
}

tc_status vk_flush_call(tc_plugin_ctx *ctx) {
  if (ctx->batch_open && ctx->submitter_running && ctx->batch_launches < VK_DEFER_MAX_LAUNCHES &&
      batches_running(ctx) >= VK_DEFER_DEPTH) {
    ctx->batch_deferred = true;
    pthread_cond_signal(&ctx->queue_cond);
    return take_deferred_failure(ctx);
  }
  return vk_flush(ctx);
}

tc_status vk_flush_wait(tc_plugin_ctx *ctx) {
  tc_status st = vk_flush(ctx); /* reports a failure of the submitter too */
  /* oldest first: the slot after the current one was submitted longest ago */
  for (int32_t i = 1; i <= VK_BATCH_SLOTS; i++) {
    int32_t slot = (ctx->batch_cur + i) % VK_BATCH_SLOTS;
    vk_batch *b = &ctx->batches[slot];
    if (!b->in_flight) continue;
    b->in_flight = false;
    tc_status w = wait_fence(ctx, b->fence, "a batch");
    if (st == TC_OK) st = w;
    vk_profile_collect(ctx, slot);
  }
  if (ctx->pipeline_cache_dirty) vk_pipeline_cache_save(ctx);
  if (ctx->n_dispatches > 0 && ctx->n_replayed + ctx->n_recorded > 0)
    tck_log(ctx->host, TC_LOG_INFO, "queue",
            "%llu dispatches, %llu barriers, %llu submissions since the last wait; %llu calls replayed from recorded "
            "command buffers, %llu recorded",
            (unsigned long long)ctx->n_dispatches, (unsigned long long)ctx->n_barriers, (unsigned long long)ctx->n_submits,
            (unsigned long long)ctx->n_replayed, (unsigned long long)ctx->n_recorded);
  else if (ctx->n_dispatches > 0)
    tck_log(ctx->host, TC_LOG_INFO, "queue", "%llu dispatches, %llu barriers, %llu submissions since the last wait",
           (unsigned long long)ctx->n_dispatches, (unsigned long long)ctx->n_barriers, (unsigned long long)ctx->n_submits);
  ctx->n_dispatches = ctx->n_barriers = ctx->n_submits = 0;
  ctx->n_replayed = ctx->n_recorded = 0;
  return st;
}

tc_status vk_synchronize(tc_plugin_ctx *ctx) { return vk_flush_wait(ctx); }

/* Transfers: everything before them finished, a barrier on each side. */
tc_status vk_oneshot_begin(tc_plugin_ctx *ctx, VkCommandBuffer *cmd) {
  tc_status st = vk_flush_wait(ctx);
  vk_batch *b;
  if (st == TC_OK) st = batch_acquire(ctx, &b);
  if (st != TC_OK) return st;
  *cmd = b->cmd;
  /* the fence wait above does not make the dispatches' writes visible to the copy: the
   * leading barrier does */
  st = vk_cmd_begin(ctx, b->cmd, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, true);
  if (st == TC_OK) vk_hazards_clear(ctx);
  return st;
}

tc_status vk_oneshot_end(tc_plugin_ctx *ctx, VkCommandBuffer cmd) {
  vk_barrier_all(ctx, cmd);
  VkResult r = ctx->fn.vkEndCommandBuffer(cmd);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_INTERNAL, "vulkan: vkEndCommandBuffer failed (%s)", vk_result_name(r));
  vk_batch *b = &ctx->batches[ctx->batch_cur];
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  r = ctx->fn.vkQueueSubmit(ctx->queue, 1, &si, b->fence);
  tc_status st = r == VK_SUCCESS ? wait_fence(ctx, b->fence, "a transfer")
                                 : vk_err(ctx, TC_ERR_INTERNAL, "vulkan: vkQueueSubmit failed (%s)", vk_result_name(r));
  ctx->fn.vkResetCommandBuffer(cmd, 0);
  return st;
}

/* ---- the submitter thread ---- */

/* The submitter could not submit a deferred batch: its launches are dropped. The host hears of
 * it now, against the newest call in the batch; the next entry that submits or waits fails. */
static void submitter_failed(tc_plugin_ctx *ctx, uint64_t call, int32_t n_calls, const char *what, VkResult r) {
  ctx->deferred_failure = r;
  ctx->deferred_failure_call = call;
  const tc_host_api *h = ctx->host;
  if (!h || !TC_HAS_FIELD(h, tc_host_api, report_async_error) || !h->report_async_error) return;
  tc_error *e = tck_error(h, TC_ERR_DEVICE,
                          "vulkan: %s failed (%s) for a deferred batch of %d call(s), the newest call %llu; its "
                          "launches were dropped",
                          what, vk_result_name(r), (int)n_calls, (unsigned long long)call);
  if (e) h->report_async_error(h->host_ctx, call, e);
}

static void *submitter_main(void *arg) {
  tc_plugin_ctx *ctx = arg;
  pthread_mutex_lock(&ctx->queue_lock);
  while (!ctx->submitter_stop) {
    if (!ctx->batch_deferred) {
      pthread_cond_wait(&ctx->queue_cond, &ctx->queue_lock);
      continue;
    }
    if (batches_running(ctx) < VK_DEFER_DEPTH) {
      const vk_batch *b = &ctx->batches[ctx->batch_cur];
      uint64_t call = b->last_call;
      int32_t n_calls = b->n_calls;
      const char *what;
      VkResult r = submit_open(ctx, &what);
      if (r != VK_SUCCESS) submitter_failed(ctx, call, n_calls, what, r);
      continue;
    }
    /* a batch of calls runs for tens of microseconds at least: poll at about that rate
     * rather than block in vkWaitForFences, which would hold a fence the host may reset */
    pthread_mutex_unlock(&ctx->queue_lock);
    nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    pthread_mutex_lock(&ctx->queue_lock);
  }
  pthread_mutex_unlock(&ctx->queue_lock);
  return NULL;
}

void vk_submitter_start(tc_plugin_ctx *ctx) {
  ctx->submitter_stop = false;
  ctx->submitter_running = pthread_create(&ctx->submitter, NULL, submitter_main, ctx) == 0;
  if (!ctx->submitter_running)
    tck_log(ctx->host, TC_LOG_WARN, "vulkan", "vulkan: no submitter thread; every call is submitted on its own");
}

void vk_submitter_stop(tc_plugin_ctx *ctx) {
  if (!ctx->submitter_running) return;
  pthread_mutex_lock(&ctx->queue_lock);
  ctx->submitter_stop = true;
  pthread_cond_signal(&ctx->queue_cond);
  pthread_mutex_unlock(&ctx->queue_lock);
  pthread_join(ctx->submitter, NULL);
  ctx->submitter_running = false;
}
