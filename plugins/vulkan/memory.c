/* memory.c — TC_MEMORY_DEVICE buffers: device-local VkBuffers, and host transfers through a
 * host-visible staging buffer (grown on demand, capped; big transfers go in chunks). */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VK_STAGING_MAX ((VkDeviceSize)64 << 20)

static int32_t memory_type(tc_plugin_ctx *ctx, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags nice) {
  const VkPhysicalDeviceMemoryProperties *mp = &ctx->mem_props;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
      VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
      if (!(bits & (1u << i)) || (f & want) != want) continue;
      if (pass == 0 && (f & nice) != nice) continue;
      return (int32_t)i;
    }
  return -1;
}

tc_status vk_buffer_create(tc_plugin_ctx *ctx, VkDeviceSize bytes, bool host_visible, tc_buffer *out) {
  vk_fns *fn = &ctx->fn;
  memset(out, 0, sizeof *out);
  /* Round up so vec4 views of the buffer stay inside it, and never create an empty buffer. */
  VkDeviceSize size = (bytes + 15) & ~(VkDeviceSize)15;
  if (size == 0) size = 16;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = fn->vkCreateBuffer(ctx->device, &bci, NULL, &out->buf);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan buffer_alloc: vkCreateBuffer(%llu bytes) failed (%s)",
                                     (unsigned long long)size, vk_result_name(r));
  VkMemoryRequirements req;
  fn->vkGetBufferMemoryRequirements(ctx->device, out->buf, &req);
  int32_t type = host_visible
                     ? memory_type(ctx, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                   VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                     : memory_type(ctx, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (type < 0) type = memory_type(ctx, req.memoryTypeBits, 0, 0);
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)type};
  r = type < 0 ? VK_ERROR_OUT_OF_DEVICE_MEMORY : fn->vkAllocateMemory(ctx->device, &mai, NULL, &out->mem);
  if (r != VK_SUCCESS) {
    fn->vkDestroyBuffer(ctx->device, out->buf, NULL);
    out->buf = VK_NULL_HANDLE;
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan buffer_alloc: %llu bytes of %s memory (%s)",
                  (unsigned long long)req.size, host_visible ? "host-visible" : "device-local", vk_result_name(r));
  }
  r = fn->vkBindBufferMemory(ctx->device, out->buf, out->mem, 0);
  if (r != VK_SUCCESS) {
    vk_buffer_destroy(ctx, out);
    return vk_err(ctx, TC_ERR_INTERNAL, "vulkan buffer_alloc: vkBindBufferMemory failed (%s)", vk_result_name(r));
  }
  out->size = size;
  out->serial = ctx->next_serial++;
  return TC_OK;
}

void vk_buffer_destroy(tc_plugin_ctx *ctx, tc_buffer *b) {
  if (b->buf) ctx->fn.vkDestroyBuffer(ctx->device, b->buf, NULL);
  if (b->mem) ctx->fn.vkFreeMemory(ctx->device, b->mem, NULL);
  b->buf = VK_NULL_HANDLE;
  b->mem = VK_NULL_HANDLE;
}

/* ---- the free-buffer cache ----
 * A call's outputs are new buffers, and the caller frees them a call later: creating a
 * VkBuffer and its memory per output costs more than a small kernel, and destroying one
 * must wait until the device is done with it. Freed buffers are kept instead and handed out
 * again for requests of at least half their size. Reuse needs no wait: every launch, copy
 * and transfer of this context runs on one queue in submission order, with a barrier after
 * every write, so whatever the device still does with the old contents comes first. */

/* Sizes are rounded so requests that differ by a little share buffers. */
static VkDeviceSize cache_round(size_t bytes) {
  VkDeviceSize b = bytes ? (VkDeviceSize)bytes : 1;
  VkDeviceSize grain = b <= ((VkDeviceSize)1 << 20) ? 512 : ((VkDeviceSize)2 << 20);
  return (b + grain - 1) / grain * grain;
}

static void cache_remove(tc_plugin_ctx *ctx, int32_t i) {
  ctx->free_bytes -= ctx->free_bufs[i]->size;
  memmove(&ctx->free_bufs[i], &ctx->free_bufs[i + 1], sizeof ctx->free_bufs[0] * (size_t)(ctx->n_free - i - 1));
  ctx->n_free--;
}

/* Destroys cached buffers, oldest first, until `keep` bytes or fewer stay cached. */
static void cache_trim(tc_plugin_ctx *ctx, VkDeviceSize keep) {
  if (ctx->free_bytes <= keep) return;
  vk_flush_wait(ctx); /* a cached buffer may still be in use by work in flight */
  while (ctx->n_free > 0 && ctx->free_bytes > keep) {
    tc_buffer *b = ctx->free_bufs[0];
    cache_remove(ctx, 0);
    vk_buffer_destroy(ctx, b);
    free(b);
  }
}

void vk_buffer_cache_release(tc_plugin_ctx *ctx) {
  cache_trim(ctx, 0);
  free(ctx->free_bufs);
  ctx->free_bufs = NULL;
  ctx->cap_free = 0;
}

tc_status vk_buffer_alloc(tc_plugin_ctx *ctx, size_t bytes, tc_buffer **buf) {
  *buf = NULL;
  VkDeviceSize want = cache_round(bytes);
  int32_t best = -1;
  for (int32_t i = 0; i < ctx->n_free; i++) {
    VkDeviceSize have = ctx->free_bufs[i]->size;
    if (have >= want && have / 2 <= want && (best < 0 || have < ctx->free_bufs[best]->size)) best = i;
  }
  if (best >= 0) {
    *buf = ctx->free_bufs[best];
    cache_remove(ctx, best);
    return TC_OK;
  }
  tc_buffer *b = malloc(sizeof *b);
  if (!b) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan buffer_alloc: out of host memory");
  tc_status st = vk_buffer_create(ctx, want, false, b);
  if (st != TC_OK && ctx->n_free > 0) {
    /* the device is full: give the cached buffers back and try once more */
    cache_trim(ctx, 0);
    st = vk_buffer_create(ctx, want, false, b);
  }
  if (st != TC_OK) {
    free(b);
    return st;
  }
  *buf = b;
  return TC_OK;
}

void vk_buffer_free(tc_plugin_ctx *ctx, tc_buffer *buf) {
  if (!buf) return;
  if (buf->size > ctx->free_limit) {
    vk_flush_wait(ctx); /* pending work may still use it */
    vk_buffer_destroy(ctx, buf);
    free(buf);
    return;
  }
  cache_trim(ctx, ctx->free_limit - buf->size);
  if (ctx->n_free == ctx->cap_free) {
    int32_t cap = ctx->cap_free * 2 + 16;
    tc_buffer **grown = realloc(ctx->free_bufs, sizeof *grown * (size_t)cap);
    if (!grown) {
      vk_flush_wait(ctx);
      vk_buffer_destroy(ctx, buf);
      free(buf);
      return;
    }
    ctx->free_bufs = grown;
    ctx->cap_free = cap;
  }
  ctx->free_bufs[ctx->n_free++] = buf;
  ctx->free_bytes += buf->size;
}

static tc_status staging_reserve(tc_plugin_ctx *ctx, VkDeviceSize want) {
  if (ctx->staging.buf && ctx->staging.size >= want) return TC_OK;
  VkDeviceSize size = ctx->staging.size ? ctx->staging.size : ((VkDeviceSize)1 << 20);
  while (size < want) size *= 2;
  if (size > VK_STAGING_MAX) size = VK_STAGING_MAX;
  vk_staging_release(ctx);
  tc_status st = vk_buffer_create(ctx, size, true, &ctx->staging);
  if (st != TC_OK) return st;
  VkResult r = ctx->fn.vkMapMemory(ctx->device, ctx->staging.mem, 0, VK_WHOLE_SIZE, 0, &ctx->staging_map);
  if (r != VK_SUCCESS) {
    vk_staging_release(ctx);
    return vk_err(ctx, TC_ERR_INTERNAL, "vulkan staging: vkMapMemory failed (%s)", vk_result_name(r));
  }
  return TC_OK;
}

void vk_staging_release(tc_plugin_ctx *ctx) {
  if (ctx->staging_map) ctx->fn.vkUnmapMemory(ctx->device, ctx->staging.mem);
  ctx->staging_map = NULL;
  vk_buffer_destroy(ctx, &ctx->staging);
  ctx->staging.size = 0;
}

static tc_status transfer(tc_plugin_ctx *ctx, tc_buffer *dev, size_t offset, void *host, size_t bytes, bool to_device) {
  const char *what = to_device ? "buffer_write" : "buffer_read";
  if (!dev) return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan %s: NULL buffer", what);
  if (offset > dev->size || bytes > dev->size - offset)
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan %s: bytes [%zu, %zu) outside the buffer (%llu bytes)", what,
                  offset, offset + bytes, (unsigned long long)dev->size);
  if (bytes == 0) return TC_OK;
  if (!host) return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan %s: NULL host pointer for %zu bytes", what, bytes);
  tc_status st = vk_flush_wait(ctx);
  if (st != TC_OK) return st;
  st = staging_reserve(ctx, bytes);
  if (st != TC_OK) return st;
  for (size_t done = 0; done < bytes;) {
    size_t n = bytes - done < ctx->staging.size ? bytes - done : (size_t)ctx->staging.size;
    if (to_device) memcpy(ctx->staging_map, (char *)host + done, n);
    VkCommandBuffer cmd;
    if ((st = vk_oneshot_begin(ctx, &cmd)) != TC_OK) return st;
    VkBufferCopy region = {.srcOffset = to_device ? 0 : offset + done, .dstOffset = to_device ? offset + done : 0, .size = n};
    ctx->fn.vkCmdCopyBuffer(cmd, to_device ? ctx->staging.buf : dev->buf, to_device ? dev->buf : ctx->staging.buf, 1,
                            &region);
    if ((st = vk_oneshot_end(ctx, cmd)) != TC_OK) return st;
    if (!to_device) memcpy((char *)host + done, ctx->staging_map, n);
    done += n;
  }
  return TC_OK;
}

tc_status vk_buffer_write(tc_plugin_ctx *ctx, tc_buffer *dst, size_t offset, const void *src, size_t bytes) {
  return transfer(ctx, dst, offset, (void *)src, bytes, true);
}

tc_status vk_buffer_read(tc_plugin_ctx *ctx, tc_buffer *src, size_t offset, void *dst, size_t bytes) {
  return transfer(ctx, src, offset, dst, bytes, false);
}
