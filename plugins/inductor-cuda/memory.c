/* memory.c — device buffers and host <-> device copies, all on the context's one stream.
 *
 * Allocation is stream-ordered (cuMemAllocAsync / cuMemFreeAsync from the device's default
 * memory pool): a free is queued behind every launch that may still use the buffer, and the
 * pool's release threshold is raised to "never" so freed memory stays in the pool for the next
 * allocation instead of going back to the driver at each synchronization (the default threshold
 * is 0). The default pool is the device's, shared with anything else in the process that
 * allocates stream-ordered on this device; the threshold is a pool-wide setting. A device
 * without memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0) falls back to
 * cuMemAlloc / cuMemFree, the free waiting for the stream first.
 *
 * Copies: buffer_write queues cuMemcpyHtoDAsync on the stream (after every earlier launch).
 * The host may reuse its memory once the call returns. For pageable memory (what a host
 * normally passes) the driver copies the bytes to its own staging memory before
 * cuMemcpyHtoDAsync returns (CUDA's "API synchronization behavior": the function may be
 * synchronous with respect to the host for pageable memory). For page-locked or managed memory
 * the copy is truly asynchronous and would read the host's memory later, so then the write
 * waits for the stream before returning. Which one it is comes from cuPointerGetAttribute
 * (CUDA_ERROR_INVALID_VALUE for memory CUDA does not know: pageable). buffer_read queues
 * cuMemcpyDtoHAsync and waits for the stream (cuStreamSynchronize): the bytes are there when it
 * returns. Zero-byte buffers have no device memory (ptr 0); zero-byte copies do nothing. */
#include <stdint.h>
#include <stdlib.h>

#include "icuda.h"

tc_error *icuda_mem_setup(tc_plugin_ctx *ctx) {
  if (!ctx->facts.mempools) {
    tck_log(ctx->host, TC_LOG_INFO, "inductor-cuda",
            "inductor-cuda: device %d has no memory pools; buffers use cuMemAlloc / cuMemFree", (int)ctx->device);
    return NULL;
  }
  CUmemoryPool pool = NULL;
  CUresult r = ctx->cu->cuDeviceGetDefaultMemPool(&pool, ctx->dev);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuDeviceGetDefaultMemPool", "init (device %d)", (int)ctx->device);
  cuuint64_t threshold = UINT64_MAX;
  r = ctx->cu->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  if (r != CUDA_SUCCESS)
    return icuda_cu_error(ctx, r, "cuMemPoolSetAttribute", "init (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD on device %d)",
                          (int)ctx->device);
  return NULL;
}

tc_error *icuda_device_alloc(tc_plugin_ctx *ctx, size_t bytes, CUdeviceptr *out, const char *what) {
  *out = 0;
  if (bytes == 0) return NULL;
  CUresult r;
  if (ctx->facts.mempools) {
    r = ctx->cu->cuMemAllocAsync(out, bytes, ctx->stream);
    if (r != CUDA_SUCCESS) {
      *out = 0;
      return icuda_cu_error(ctx, r, "cuMemAllocAsync", "%s (%zu bytes)", what, bytes);
    }
  } else {
    r = ctx->cu->cuMemAlloc(out, bytes);
    if (r != CUDA_SUCCESS) {
      *out = 0;
      return icuda_cu_error(ctx, r, "cuMemAlloc_v2", "%s (%zu bytes)", what, bytes);
    }
  }
  return NULL;
}

void icuda_device_free(tc_plugin_ctx *ctx, CUdeviceptr p) {
  if (!p) return;
  CUresult r;
  const char *call;
  if (ctx->facts.mempools) {
    call = "cuMemFreeAsync";
    r = ctx->cu->cuMemFreeAsync(p, ctx->stream);
  } else {
    call = "cuMemFree_v2";
    r = ctx->cu->cuStreamSynchronize(ctx->stream); /* the memory may be in use by queued work */
    if (r != CUDA_SUCCESS) call = "cuStreamSynchronize (before cuMemFree_v2)";
    else r = ctx->cu->cuMemFree(p);
  }
  if (r != CUDA_SUCCESS) {
    char nb[48];
    tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda buffer_free: %s failed: %s (the memory is lost)", call,
            icuda_cu_name(ctx->cu, r, nb, sizeof nb));
  }
}

tc_error *icuda_buffer_alloc(tc_plugin_ctx *ctx, size_t bytes, tc_buffer **out) {
  *out = NULL;
  tc_buffer *b = calloc(1, sizeof *b);
  if (!b) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda buffer_alloc: out of host memory");
  tc_error *e = icuda_device_alloc(ctx, bytes, &b->ptr, "buffer_alloc");
  if (e) {
    free(b);
    return e;
  }
  b->size = bytes;
  b->pooled = ctx->facts.mempools;
  *out = b;
  return NULL;
}

void icuda_buffer_free(tc_plugin_ctx *ctx, tc_buffer *b) {
  if (!b) return;
  icuda_device_free(ctx, b->ptr);
  free(b);
}

static tc_error *check_range(tc_plugin_ctx *ctx, const char *what, const tc_buffer *b, size_t offset, const void *host,
                             size_t bytes) {
  if (!b) return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda %s: NULL buffer", what);
  if (offset > b->size || bytes > b->size - offset)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT,
                     "inductor-cuda %s: %zu bytes at offset %zu are outside the buffer's %zu bytes", what, bytes, offset,
                     b->size);
  if (bytes && !host) return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda %s: NULL host pointer", what);
  return NULL;
}

/* True when CUDA knows host as page-locked, mapped or managed memory: a copy from it is truly
 * asynchronous. */
static bool host_is_cuda_memory(tc_plugin_ctx *ctx, const void *host) {
  unsigned int type = 0;
  CUresult r = ctx->cu->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)host);
  return r == CUDA_SUCCESS; /* CUDA_ERROR_INVALID_VALUE: plain pageable memory */
}

tc_error *icuda_buffer_write(tc_plugin_ctx *ctx, tc_buffer *b, size_t offset, const void *host, size_t bytes) {
  tc_error *e = check_range(ctx, "buffer_write", b, offset, host, bytes);
  if (e || bytes == 0) return e;
  CUresult r = ctx->cu->cuMemcpyHtoDAsync(b->ptr + offset, host, bytes, ctx->stream);
  if (r != CUDA_SUCCESS)
    return icuda_cu_error(ctx, r, "cuMemcpyHtoDAsync_v2", "buffer_write (%zu bytes at offset %zu)", bytes, offset);
  if (host_is_cuda_memory(ctx, host)) return icuda_stream_wait(ctx, "buffer_write (from page-locked memory)");
  return NULL;
}

tc_error *icuda_buffer_read(tc_plugin_ctx *ctx, tc_buffer *b, size_t offset, void *host, size_t bytes) {
  tc_error *e = check_range(ctx, "buffer_read", b, offset, host, bytes);
  if (e || bytes == 0) return e;
  CUresult r = ctx->cu->cuMemcpyDtoHAsync(host, b->ptr + offset, bytes, ctx->stream);
  if (r != CUDA_SUCCESS) {
    /* a sticky error from an earlier kernel shows here first: name it as the asynchronous
     * failure it is (icuda_stream_wait reports it) */
    if (icuda_cu_is_device_failure(r)) return icuda_stream_wait(ctx, "buffer_read");
    return icuda_cu_error(ctx, r, "cuMemcpyDtoHAsync_v2", "buffer_read (%zu bytes at offset %zu)", bytes, offset);
  }
  return icuda_stream_wait(ctx, "buffer_read");
}
