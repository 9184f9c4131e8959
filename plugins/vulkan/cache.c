/* cache.c — the disk cache: SPIR-V per shader, keyed by a content hash of the GLSL, the device
 * and driver (device_key) and the target environment; and the VkPipelineCache blob per device.
 * Files are written to a temp file and renamed (atomic), and verified on read (magic, key,
 * length, checksum): a bad entry is discarded and rebuilt, never trusted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>

#include "vk_internal.h"

#define VK_CACHE_MAGIC "TCVKC001"

static uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

void vk_hash128(const void *data, size_t n, uint64_t seed, uint64_t out[2]) {
  const unsigned char *p = data;
  uint64_t h1 = 0xcbf29ce484222325ULL ^ seed, h2 = 0x84222325cbf29ce4ULL ^ fmix64(seed + 1);
  for (size_t i = 0; i < n; i++) {
    h1 = (h1 ^ p[i]) * 0x100000001b3ULL;
    h2 = (h2 + p[i] + 1) * 0x9e3779b97f4a7c15ULL;
    h2 ^= h2 >> 29;
  }
  out[0] = fmix64(h1 ^ (uint64_t)n);
  out[1] = fmix64(h2 + out[0]);
}

typedef struct cache_header {
  char magic[8];
  uint64_t key[2];
  uint64_t n_bytes;
  uint64_t sum[2];
} cache_header;

/* mkdir -p: the cache directory may not exist yet (TC_CACHE_DIR pointing at a new folder). */
static bool mkdir_parents(const char *dir) {
  char p[4096];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return false;
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
      *c = '/';
    }
  return mkdir(p, 0755) == 0 || errno == EEXIST;
}

static bool write_atomic(tc_plugin_ctx *ctx, const char *path, const uint64_t key[2], const void *data, size_t n) {
  const char *dir = ctx->host ? ctx->host->cache_dir : NULL;
  if (!dir) return false;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s/.tmp-vulkan-XXXXXX", dir);
  int fd = mkstemp(tmp);
  if (fd < 0 && errno == ENOENT && mkdir_parents(dir)) {
    snprintf(tmp, sizeof tmp, "%s/.tmp-vulkan-XXXXXX", dir); /* mkstemp may have changed it */
    fd = mkstemp(tmp);
  }
  if (fd < 0) return false;
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(tmp);
    return false;
  }
  cache_header h;
  memcpy(h.magic, VK_CACHE_MAGIC, 8);
  h.key[0] = key[0];
  h.key[1] = key[1];
  h.n_bytes = n;
  vk_hash128(data, n, 7, h.sum);
  bool ok = fwrite(&h, sizeof h, 1, f) == 1 && (n == 0 || fwrite(data, n, 1, f) == 1);
  ok = (fclose(f) == 0) && ok;
  if (ok && rename(tmp, path) == 0) return true;
  unlink(tmp);
  return false;
}

/* Reads and verifies an entry; malloc'd payload or NULL. */
static void *read_verified(tc_plugin_ctx *ctx, const char *path, const uint64_t key[2], size_t *n_out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cache_header h;
  void *data = NULL;
  bool ok = fread(&h, sizeof h, 1, f) == 1 && memcmp(h.magic, VK_CACHE_MAGIC, 8) == 0 && h.key[0] == key[0] &&
            h.key[1] == key[1] && h.n_bytes < ((uint64_t)1 << 31);
  if (ok) {
    data = malloc(h.n_bytes ? h.n_bytes : 1);
    ok = data && (h.n_bytes == 0 || fread(data, h.n_bytes, 1, f) == 1) && fgetc(f) == EOF;
  }
  fclose(f);
  if (ok) {
    uint64_t sum[2];
    vk_hash128(data, h.n_bytes, 7, sum);
    ok = sum[0] == h.sum[0] && sum[1] == h.sum[1];
  }
  if (!ok) {
    free(data);
    vk_log(ctx, TC_LOG_WARN, "cache", "vulkan cache: discarding corrupt entry %s", path);
    unlink(path);
    return NULL;
  }
  *n_out = h.n_bytes;
  return data;
}

static void spirv_key(tc_plugin_ctx *ctx, const char *glsl, uint64_t key[2], char *path, size_t n) {
  /* The key covers the GLSL, the device + driver, the SPIR-V target and whether spirv-opt ran. */
  uint64_t g[2], d[2];
  vk_hash128(glsl, strlen(glsl), 0, g);
  vk_hash128(ctx->device_key, strlen(ctx->device_key),
             (ctx->caps.api_version >= VK_API_VERSION_1_2 ? 12 : 11) + (ctx->spirv_opt ? 100 : 0), d);
  key[0] = fmix64(g[0] ^ d[0]);
  key[1] = fmix64(g[1] + d[1]);
  snprintf(path, n, "%s/vulkan-%016llx%016llx.spv", ctx->host->cache_dir, (unsigned long long)key[0],
           (unsigned long long)key[1]);
}

bool vk_cache_spirv_load(tc_plugin_ctx *ctx, const char *glsl, uint32_t **spirv, size_t *n_words) {
  if (!ctx->host || !ctx->host->cache_dir) return false;
  uint64_t key[2];
  char path[4096];
  spirv_key(ctx, glsl, key, path, sizeof path);
  size_t n = 0;
  void *data = read_verified(ctx, path, key, &n);
  if (!data) return false;
  if (n < 20 || n % 4 != 0 || ((uint32_t *)data)[0] != 0x07230203u) {
    free(data);
    unlink(path);
    return false;
  }
  *spirv = data;
  *n_words = n / 4;
  vk_log(ctx, TC_LOG_INFO, "cache", "vulkan cache hit: %s (%zu bytes of SPIR-V, shaderc skipped)", path, n);
  return true;
}

void vk_cache_spirv_store(tc_plugin_ctx *ctx, const char *glsl, const uint32_t *spirv, size_t n_words) {
  if (!ctx->host || !ctx->host->cache_dir) return;
  uint64_t key[2];
  char path[4096];
  spirv_key(ctx, glsl, key, path, sizeof path);
  if (write_atomic(ctx, path, key, spirv, n_words * 4))
    vk_log(ctx, TC_LOG_INFO, "cache", "vulkan cache store: %s", path);
  else
    vk_log(ctx, TC_LOG_WARN, "cache", "vulkan cache: could not write %s", path);
}

static void pipeline_cache_path(tc_plugin_ctx *ctx, char *path, size_t n, uint64_t key[2]) {
  vk_hash128(ctx->device_key, strlen(ctx->device_key), 99, key);
  snprintf(path, n, "%s/vulkan-pipelines-%s.bin", ctx->host->cache_dir, ctx->device_key);
}

void vk_pipeline_cache_open(tc_plugin_ctx *ctx) {
  void *data = NULL;
  size_t n = 0;
  if (ctx->host && ctx->host->cache_dir) {
    char path[4096];
    uint64_t key[2];
    pipeline_cache_path(ctx, path, sizeof path, key);
    data = read_verified(ctx, path, key, &n);
    if (data) vk_log(ctx, TC_LOG_INFO, "cache", "vulkan pipeline cache: loaded %zu bytes from %s", n, path);
  }
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = n, .pInitialData = data};
  /* The driver validates its own header (vendor, device, UUID) and ignores a stale blob. */
  if (ctx->fn.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    if (ctx->fn.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache) != VK_SUCCESS)
      ctx->pipeline_cache = VK_NULL_HANDLE;
  }
  free(data);
}

void vk_pipeline_cache_save(tc_plugin_ctx *ctx) {
  if (!ctx->pipeline_cache || !ctx->pipeline_cache_dirty || !ctx->host || !ctx->host->cache_dir) return;
  size_t n = 0;
  if (ctx->fn.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &n, NULL) != VK_SUCCESS || n == 0) return;
  void *data = malloc(n);
  if (!data) return;
  if (ctx->fn.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &n, data) == VK_SUCCESS) {
    char path[4096];
    uint64_t key[2];
    pipeline_cache_path(ctx, path, sizeof path, key);
    if (write_atomic(ctx, path, key, data, n))
      vk_log(ctx, TC_LOG_INFO, "cache", "vulkan pipeline cache: saved %zu bytes to %s", n, path);
    else
      vk_log(ctx, TC_LOG_WARN, "cache", "vulkan pipeline cache: could not write %s", path);
  }
  /* Cleared even when the write failed: flush_wait calls this after every batch, and fetching
   * the driver's whole cache blob again on each flush costs milliseconds on some drivers. */
  ctx->pipeline_cache_dirty = false;
  free(data);
}

void vk_spirv_dump(tc_plugin_ctx *ctx, const char *name, const uint32_t *spirv, size_t n_words) {
  if (!ctx->dump_spirv_dir || !*ctx->dump_spirv_dir) return;
  uint64_t h[2];
  vk_hash128(spirv, n_words * 4, 0, h);
  char path[4096], clean[64];
  size_t j = 0;
  for (size_t i = 0; name && name[i] && j + 1 < sizeof clean; i++) {
    char c = name[i];
    clean[j++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') ? c : '_';
  }
  clean[j] = '\0';
  snprintf(path, sizeof path, "%s/%s-%016llx.spv", ctx->dump_spirv_dir, clean, (unsigned long long)h[0]);
  FILE *f = fopen(path, "wb");
  if (!f) {
    vk_log(ctx, TC_LOG_WARN, "vulkan", "vulkan.dump_spirv: cannot write %s", path);
    return;
  }
  fwrite(spirv, 4, n_words, f);
  fclose(f);
}
