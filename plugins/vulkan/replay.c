/* replay.c — reduce-overhead (and max-autotune, as in torch.compile): a call's dispatches
 * recorded once into a secondary command buffer and replayed.
 *
 * The host makes a call's launches back to back (kernels 0 .. n-1 of one executable, one
 * call_id) and then flushes. For an executable compiled in one of these modes the launches are
 * held (their arguments copied) instead of recorded; at the flush, when they are exactly one
 * whole call, their arguments (each buffer's identity, its serial, with its offset, and every
 * symbol value) form a key:
 *   hit:  the secondary command buffer recorded under that key is executed in the open batch
 *         (vkCmdExecuteCommands): no size evaluation, descriptor-set lookup, pipeline choice,
 *         push-constant packing or hazard bookkeeping per dispatch;
 *   miss: the held launches are recorded into a new secondary (pipelines, descriptor sets, push
 *         constants, dispatches and the barriers between the call's own dispatches), kept
 *         (VK_REPLAYS per executable, the least recently used one dropped) and executed.
 * The batch, its deferred submission and the submitter are unchanged, so a call still returns
 * once queued. At the boundary, a barrier goes in front of the secondary when the call touches
 * a buffer that dispatches since the last barrier conflict with (as batch.c does per dispatch),
 * and afterwards the hazard sets are what the call left. Anything else on the context before the
 * flush (a copy, an allocation, a wait, another call's launch; an accumulator's zeroing inside a
 * call) first records what is held as the default mode would, so results never depend on
 * replay. Calls that keep missing (fresh buffers every call) stop recording, with one log line.
 * With TC_LOGS=profile nothing is held (timestamps are per dispatch of a batch). */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* Executables' recorded calls kept, per executable. */
#define VK_REPLAYS 8

typedef struct vk_held_launch {
  int32_t kernel;
  int32_t n_args;
  int32_t first_arg; /* into vk_held.args */
} vk_held_launch;

struct vk_held {
  tc_executable *exe; /* NULL: nothing held */
  uint64_t call_id;
  int32_t n, cap;
  vk_held_launch *launches;
  int32_t n_args, cap_args;
  tc_buffer_arg *args;
  int64_t *syms; /* exe->n_syms values */
  int32_t cap_syms;
};

/* A buffer set of a recorded call; `wide`: more than VK_HAZARD_CAP buffers (always a barrier). */
typedef struct vk_bufset {
  VkBuffer reads[VK_HAZARD_CAP], writes[VK_HAZARD_CAP];
  int32_t n_reads, n_writes;
  bool wide;
} vk_bufset;

struct vk_replay {
  VkCommandBuffer cmd; /* secondary; VK_NULL_HANDLE: a free slot */
  uint64_t last_use;
  uint64_t *key;
  size_t key_len;
  vk_bufset all;      /* every buffer the call reads or writes: the barrier in front */
  vk_bufset tail;     /* what is unordered after its last internal barrier */
  bool inner_barrier; /* the call orders everything before it at its first internal barrier */
  int32_t n_dispatches, n_barriers;
};

/* ---- holding ---- */

bool vk_replay_wanted(const tc_plugin_ctx *ctx, const tc_executable *exe) {
  return exe && exe->replay && !exe->replay_off && !ctx->profiling;
}

static tc_status held_grow(tc_plugin_ctx *ctx, vk_held *h, int32_t n_args, int32_t n_syms) {
  if (h->n == h->cap) {
    int32_t cap = h->cap ? 2 * h->cap : 16;
    vk_held_launch *l = realloc(h->launches, (size_t)cap * sizeof *l);
    if (!l) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
    h->launches = l;
    h->cap = cap;
  }
  if (h->n_args + n_args > h->cap_args) {
    int32_t cap = 2 * (h->n_args + n_args) + 32;
    tc_buffer_arg *a = realloc(h->args, (size_t)cap * sizeof *a);
    if (!a) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
    h->args = a;
    h->cap_args = cap;
  }
  if (n_syms > h->cap_syms) {
    int64_t *s = realloc(h->syms, (size_t)n_syms * sizeof *s);
    if (!s) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
    h->syms = s;
    h->cap_syms = n_syms;
  }
  return TC_OK;
}

static void held_forget(vk_held *h) {
  h->exe = NULL;
  h->n = h->n_args = 0;
}

/* Records every held launch into the batch as the default mode would, in order, and forgets them. */
tc_status vk_replay_release(tc_plugin_ctx *ctx) {
  vk_held *h = ctx->held;
  if (!h || !h->exe) return TC_OK;
  tc_status st = TC_OK;
  for (int32_t i = 0; i < h->n && st == TC_OK; i++) {
    const vk_held_launch *l = &h->launches[i];
    st = vk_launch(ctx, h->exe, l->kernel, h->args + l->first_arg, h->syms, h->call_id);
  }
  held_forget(h);
  return st;
}

tc_status vk_replay_hold(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                         int32_t n_args, const int64_t *syms, uint64_t call_id) {
  vk_held *h = ctx->held;
  if (!h && !(h = ctx->held = calloc(1, sizeof *h))) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
  /* another call, or launches out of order: what is held is recorded as it is first */
  tc_status st = TC_OK;
  if (h->exe && (h->exe != exe || h->call_id != call_id || kernel != h->n)) st = vk_replay_release(ctx);
  if (st != TC_OK) return st;
  /* not holdable (out of order, or arguments launch's own checks will report): as default */
  if (kernel != h->n || kernel < 0 || kernel >= exe->n_kernels || (exe->n_syms > 0 && !syms) ||
      n_args < exe->kernels[kernel].n_buffers || (n_args > 0 && !args)) {
    st = vk_replay_release(ctx);
    return st != TC_OK ? st : vk_launch(ctx, exe, kernel, args, syms, call_id);
  }
  if ((st = held_grow(ctx, h, n_args, exe->n_syms)) != TC_OK) return st;
  h->launches[h->n++] = (vk_held_launch){.kernel = kernel, .n_args = n_args, .first_arg = h->n_args};
  memcpy(h->args + h->n_args, args, (size_t)n_args * sizeof *args);
  h->n_args += n_args;
  if (exe->n_syms > 0) memcpy(h->syms, syms, (size_t)exe->n_syms * sizeof *syms);
  h->exe = exe;
  h->call_id = call_id;
  return TC_OK;
}

/* ---- keys and buffer sets ---- */

/* Per launch: the kernel, its argument count, each buffer's serial and offset; then the symbols. */
static uint64_t *held_key(const vk_held *h, size_t *len) {
  size_t n = 1 + (size_t)h->exe->n_syms + 2 * (size_t)h->n + 2 * (size_t)h->n_args;
  uint64_t *k = malloc(n * sizeof *k);
  if (!k) return NULL;
  size_t j = 0;
  k[j++] = (uint64_t)h->n;
  for (int32_t i = 0; i < h->n; i++) {
    const vk_held_launch *l = &h->launches[i];
    k[j++] = (uint64_t)l->kernel;
    k[j++] = (uint64_t)l->n_args;
    for (int32_t b = 0; b < l->n_args; b++) {
      const tc_buffer_arg *a = &h->args[l->first_arg + b];
      k[j++] = a->buffer ? a->buffer->serial : 0;
      k[j++] = (uint64_t)a->byte_offset;
    }
  }
  for (int32_t s = 0; s < h->exe->n_syms; s++) k[j++] = (uint64_t)h->syms[s];
  *len = j;
  return k;
}

static bool set_has(const VkBuffer *set, int32_t n, VkBuffer b) {
  for (int32_t i = 0; i < n; i++)
    if (set[i] == b) return true;
  return false;
}

static void set_add(vk_bufset *s, bool write, VkBuffer b) {
  VkBuffer *set = write ? s->writes : s->reads;
  int32_t *n = write ? &s->n_writes : &s->n_reads;
  if (set_has(set, *n, b)) return;
  if (*n == VK_HAZARD_CAP) s->wide = true;
  else set[(*n)++] = b;
}

/* Every buffer the held call reads and writes, from its kernels' access flags. */
static void held_buffers(const vk_held *h, vk_bufset *s) {
  memset(s, 0, sizeof *s);
  for (int32_t i = 0; i < h->n; i++) {
    const vk_held_launch *l = &h->launches[i];
    const vk_kernel *k = &h->exe->kernels[l->kernel];
    for (int32_t b = 0; b < k->n_buffers; b++) {
      const tc_buffer *buf = h->args[l->first_arg + b].buffer;
      if (!buf) continue;
      if (k->access[b] & VK_ACCESS_R) set_add(s, false, buf->buf);
      if (k->access[b] & VK_ACCESS_W) set_add(s, true, buf->buf);
    }
  }
}

/* ---- recording ---- */

static void replay_clear(tc_plugin_ctx *ctx, vk_replay *r) {
  if (r->cmd) ctx->fn.vkFreeCommandBuffers(ctx->device, ctx->cmd_pool, 1, &r->cmd);
  free(r->key);
  memset(r, 0, sizeof *r);
}

void vk_replays_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  for (int32_t i = 0; exe->replays && i < VK_REPLAYS; i++) replay_clear(ctx, &exe->replays[i]);
  free(exe->replays);
  exe->replays = NULL;
}

void vk_replay_held_free(tc_plugin_ctx *ctx) {
  vk_held *h = ctx->held;
  if (!h) return;
  free(h->launches);
  free(h->args);
  free(h->syms);
  free(h);
  ctx->held = NULL;
}

/* Records the held call into a new secondary command buffer: r->cmd and its buffer sets. The
 * context's hazard sets and counters are left as they were (the call is not in the batch yet). */
static tc_status record(tc_plugin_ctx *ctx, vk_held *h, vk_replay *r) {
  /* max-autotune: every kernel's variant chosen first (timing waits for the device) */
  for (int32_t i = 0; i < h->n; i++) {
    const vk_held_launch *l = &h->launches[i];
    tc_status st = vk_autotune_kernel(ctx, h->exe, l->kernel, h->args + l->first_arg, h->syms);
    if (st != TC_OK) return st;
  }
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = ctx->cmd_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                    .commandBufferCount = 1};
  VkResult vr = ctx->fn.vkAllocateCommandBuffers(ctx->device, &ai, &r->cmd);
  if (vr != VK_SUCCESS) {
    r->cmd = VK_NULL_HANDLE;
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan: recording graph '%s': vkAllocateCommandBuffers failed (%s)",
                  h->exe->name ? h->exe->name : "?", vk_result_name(vr));
  }
  VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 /* replayed while earlier replays of it may still run */
                                 .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                                 .pInheritanceInfo = &inh};
  vr = ctx->fn.vkBeginCommandBuffer(r->cmd, &bi);
  if (vr != VK_SUCCESS)
    return vk_err(ctx, TC_ERR_INTERNAL, "vulkan: recording graph '%s': vkBeginCommandBuffer failed (%s)",
                  h->exe->name ? h->exe->name : "?", vk_result_name(vr));
  /* the call's own barriers, by its own hazards: start from empty sets */
  VkBuffer saved_r[VK_HAZARD_CAP], saved_w[VK_HAZARD_CAP];
  int32_t saved_nr = ctx->n_hz_read, saved_nw = ctx->n_hz_written;
  memcpy(saved_r, ctx->hz_read, sizeof saved_r);
  memcpy(saved_w, ctx->hz_written, sizeof saved_w);
  uint64_t saved_disp = ctx->n_dispatches, saved_barriers = ctx->n_barriers;
  vk_hazards_clear(ctx);
  tc_status st = TC_OK;
  for (int32_t i = 0; i < h->n && st == TC_OK; i++) {
    const vk_held_launch *l = &h->launches[i];
    st = vk_launch_record(ctx, h->exe, l->kernel, h->args + l->first_arg, h->syms, r->cmd);
  }
  r->n_dispatches = (int32_t)(ctx->n_dispatches - saved_disp);
  r->n_barriers = (int32_t)(ctx->n_barriers - saved_barriers);
  r->inner_barrier = r->n_barriers > 0;
  memset(&r->tail, 0, sizeof r->tail);
  memcpy(r->tail.reads, ctx->hz_read, sizeof r->tail.reads);
  memcpy(r->tail.writes, ctx->hz_written, sizeof r->tail.writes);
  r->tail.n_reads = ctx->n_hz_read;
  r->tail.n_writes = ctx->n_hz_written;
  held_buffers(h, &r->all);
  memcpy(ctx->hz_read, saved_r, sizeof saved_r);
  memcpy(ctx->hz_written, saved_w, sizeof saved_w);
  ctx->n_hz_read = saved_nr;
  ctx->n_hz_written = saved_nw;
  ctx->n_dispatches = saved_disp;
  ctx->n_barriers = saved_barriers;
  vr = ctx->fn.vkEndCommandBuffer(r->cmd);
  if (st == TC_OK && vr != VK_SUCCESS)
    st = vk_err(ctx, TC_ERR_INTERNAL, "vulkan: recording graph '%s': vkEndCommandBuffer failed (%s)",
                h->exe->name ? h->exe->name : "?", vk_result_name(vr));
  return st;
}

/* Executes r in the open batch, with a barrier in front where the call conflicts with
 * dispatches since the last barrier; afterwards the hazard sets are what the call left. */
static tc_status execute(tc_plugin_ctx *ctx, vk_replay *r, uint64_t call_id, int32_t n_launches) {
  VkCommandBuffer cmd;
  tc_status st = vk_batch_cmd(ctx, &cmd);
  if (st != TC_OK) return st;
  bool need = r->all.wide;
  for (int32_t i = 0; i < r->all.n_reads && !need; i++) need = set_has(ctx->hz_written, ctx->n_hz_written, r->all.reads[i]);
  for (int32_t i = 0; i < r->all.n_writes && !need; i++)
    need = set_has(ctx->hz_written, ctx->n_hz_written, r->all.writes[i]) ||
           set_has(ctx->hz_read, ctx->n_hz_read, r->all.writes[i]);
  if (need) {
    vk_barrier_after_dispatch(ctx, cmd);
    vk_hazards_clear(ctx);
    ctx->n_barriers++;
  }
  ctx->fn.vkCmdExecuteCommands(cmd, 1, &r->cmd);
  if (r->inner_barrier) vk_hazards_clear(ctx); /* its first barrier ordered everything before it */
  bool full = r->tail.wide;
  for (int32_t i = 0; i < r->tail.n_reads && !full; i++)
    if (!set_has(ctx->hz_read, ctx->n_hz_read, r->tail.reads[i])) {
      if (ctx->n_hz_read == VK_HAZARD_CAP) full = true;
      else ctx->hz_read[ctx->n_hz_read++] = r->tail.reads[i];
    }
  for (int32_t i = 0; i < r->tail.n_writes && !full; i++)
    if (!set_has(ctx->hz_written, ctx->n_hz_written, r->tail.writes[i])) {
      if (ctx->n_hz_written == VK_HAZARD_CAP) full = true;
      else ctx->hz_written[ctx->n_hz_written++] = r->tail.writes[i];
    }
  if (full) { /* sets that cannot hold it all cost one barrier more, never a missed one */
    vk_barrier_after_dispatch(ctx, cmd);
    vk_hazards_clear(ctx);
    ctx->n_barriers++;
  }
  ctx->n_dispatches += (uint64_t)r->n_dispatches;
  ctx->n_barriers += (uint64_t)r->n_barriers;
  vk_batch_note_call(ctx, call_id);
  ctx->batch_launches += n_launches;
  return ctx->batch_launches >= 4096 ? vk_flush(ctx) : TC_OK;
}

tc_status vk_replay_flush(tc_plugin_ctx *ctx) {
  vk_held *h = ctx->held;
  if (!h || !h->exe) return TC_OK;
  tc_executable *exe = h->exe;
  if (h->n != exe->n_kernels) return vk_replay_release(ctx); /* a partial call: as it is */
  size_t len = 0;
  uint64_t *key = held_key(h, &len);
  if (!key) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan flush: out of memory");
  if (!exe->replays && !(exe->replays = calloc(VK_REPLAYS, sizeof *exe->replays))) {
    free(key);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan flush: out of memory");
  }
  exe->replay_clock++;
  vk_replay *hit = NULL, *victim = &exe->replays[0];
  for (int32_t i = 0; i < VK_REPLAYS; i++) {
    vk_replay *r = &exe->replays[i];
    if (r->cmd && r->key_len == len && !memcmp(r->key, key, len * sizeof *key)) hit = r;
    if (!r->cmd || (victim->cmd && r->last_use < victim->last_use)) victim = r;
  }
  tc_status st = TC_OK;
  if (hit) {
    free(key);
    exe->replay_hits++;
    ctx->n_replayed++;
  } else {
    exe->replay_misses++;
    /* calls that keep missing: recording costs more than replay saves */
    if (exe->replay_misses >= 4 * VK_REPLAYS && exe->replay_misses > 4 * exe->replay_hits) {
      exe->replay_off = true;
      tck_log(ctx->host, TC_LOG_INFO, "vulkan",
              "vulkan: graph '%s': %llu of %llu calls came with buffers no recorded command buffer had; recording "
              "stops, dispatches are recorded call by call",
              exe->name ? exe->name : "?", (unsigned long long)exe->replay_misses,
              (unsigned long long)(exe->replay_misses + exe->replay_hits));
      free(key);
      return vk_replay_release(ctx);
    }
    /* Every set may be bound by work recorded or in flight: drop them (and the replays that
     * bind them) once that has finished, as vk_launch does. A victim may be pending too. */
    if (exe->n_pools >= VK_POOLS_MAX || victim->cmd) {
      st = vk_flush_wait(ctx);
      if (st == TC_OK && exe->n_pools >= VK_POOLS_MAX) {
        vk_executable_sets_drop(ctx, exe);
        if (!exe->replays && !(exe->replays = calloc(VK_REPLAYS, sizeof *exe->replays))) st = TC_ERR_OUT_OF_MEMORY;
        victim = exe->replays ? &exe->replays[0] : NULL;
      }
    }
    if (st == TC_OK && victim) {
      replay_clear(ctx, victim);
      st = record(ctx, h, victim);
      if (st == TC_OK) {
        victim->key = key;
        victim->key_len = len;
        hit = victim;
        ctx->n_recorded++;
      } else {
        replay_clear(ctx, victim);
      }
    }
    if (!hit) {
      free(key);
      held_forget(h);
      return st != TC_OK ? st : vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan flush: out of memory");
    }
  }
  hit->last_use = exe->replay_clock;
  uint64_t call_id = h->call_id;
  int32_t n = h->n;
  held_forget(h);
  return execute(ctx, hit, call_id, n);
}
