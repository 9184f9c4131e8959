/* cache.c — what the Vulkan backend caches, through the host's disk cache (cache_get /
 * cache_put: content-keyed, atomic, verified on read): SPIR-V per shader (kind "spv", keyed by
 * the GLSL, the device and driver, the SPIR-V target and the shaderc options), and the
 * driver's VkPipelineCache blob per device (kind "vkpipe"). Also vulkan.dump_spirv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* The SPIR-V key: everything the compiled module depends on. (The GLSL of an emulated f32
 * kernel differs from the native one anyway; the line says so in the key itself.) */
static char *spirv_key(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *glsl, size_t *len) {
  tck_str k = {0};
  tck_str_printf(&k, "vulkan spirv\ndevice %s\ntarget %s\nspirv_opt %d\nf32_subnormals %s\n", ctx->device_key,
                 ctx->caps.api_version >= VK_API_VERSION_1_2 ? "vulkan1.2/spv1.5" : "vulkan1.1/spv1.3", o->spirv_opt ? 1 : 0,
                 o->f32_emulate ? "emulate" : "native");
  tck_str_puts(&k, glsl);
  *len = k.len;
  return tck_str_take(&k);
}

static bool cache_on(const tc_plugin_ctx *ctx) { return tck_host_cache_on(ctx->host); }

static void *cache_load(tc_plugin_ctx *ctx, const char *key, size_t key_len, const char *kind, size_t *n) {
  return tck_host_cache_load(ctx->host, "vulkan", key, key_len, kind, n);
}

static bool cache_store(tc_plugin_ctx *ctx, const char *key, size_t key_len, const char *kind, const void *data,
                        size_t n) {
  return tck_host_cache_store(ctx->host, "vulkan", key, key_len, kind, data, n);
}

bool vk_cache_spirv_load(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *glsl, uint32_t **spirv,
                         size_t *n_words) {
  if (!cache_on(ctx)) return false;
  size_t key_len, n = 0;
  char *key = spirv_key(ctx, o, glsl, &key_len);
  void *data = key ? cache_load(ctx, key, key_len, "spv", &n) : NULL;
  free(key);
  if (!data) return false;
  if (n < 20 || n % 4 != 0 || ((uint32_t *)data)[0] != 0x07230203u) {
    free(data);
    tck_log(ctx->host, TC_LOG_WARN, "cache", "vulkan cache: an entry of %zu bytes is not SPIR-V; compiling again", n);
    return false;
  }
  *spirv = data;
  *n_words = n / 4;
  tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan cache hit: %zu bytes of SPIR-V, shaderc skipped", n);
  return true;
}

void vk_cache_spirv_store(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *glsl, const uint32_t *spirv,
                          size_t n_words) {
  if (!cache_on(ctx)) return;
  size_t key_len;
  char *key = spirv_key(ctx, o, glsl, &key_len);
  if (key && cache_store(ctx, key, key_len, "spv", spirv, n_words * 4))
    tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan cache store: %zu bytes of SPIR-V", n_words * 4);
  free(key);
}

/* The driver validates its own blob header (vendor, device, UUID) and ignores a stale one; the
 * key names the device anyway, so devices do not overwrite each other's blob. */
static void pipeline_key(tc_plugin_ctx *ctx, char *key, size_t n) {
  snprintf(key, n, "vulkan pipeline cache\ndevice %s\n", ctx->device_key);
}

void vk_pipeline_cache_open(tc_plugin_ctx *ctx) {
  void *data = NULL;
  size_t n = 0;
  if (cache_on(ctx)) {
    char key[512];
    pipeline_key(ctx, key, sizeof key);
    data = cache_load(ctx, key, strlen(key), "vkpipe", &n);
    if (data) tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan pipeline cache: loaded %zu bytes", n);
  }
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = n, .pInitialData = data};
  if (ctx->fn.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    if (ctx->fn.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache) != VK_SUCCESS)
      ctx->pipeline_cache = VK_NULL_HANDLE;
  }
  free(data);
}

void vk_pipeline_cache_save(tc_plugin_ctx *ctx) {
  if (!ctx->pipeline_cache || !ctx->pipeline_cache_dirty || !cache_on(ctx)) return;
  size_t n = 0;
  if (ctx->fn.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &n, NULL) != VK_SUCCESS || n == 0) return;
  void *data = malloc(n);
  if (!data) return;
  if (ctx->fn.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &n, data) == VK_SUCCESS) {
    char key[512];
    pipeline_key(ctx, key, sizeof key);
    if (cache_store(ctx, key, strlen(key), "vkpipe", data, n))
      tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan pipeline cache: saved %zu bytes", n);
  }
  /* Cleared even when the write failed: flush_wait calls this after every batch, and fetching
   * the driver's whole cache blob again on each flush costs milliseconds on some drivers. */
  ctx->pipeline_cache_dirty = false;
  free(data);
}

void vk_spirv_dump(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *name, const uint32_t *spirv,
                   size_t n_words) {
  if (!o->dump_dir || !*o->dump_dir) return;
  tck_sha256 c;
  uint8_t digest[32];
  char hex[65];
  tck_sha256_init(&c);
  tck_sha256_update(&c, spirv, n_words * 4);
  tck_sha256_final(&c, digest);
  tck_sha256_hex(digest, hex);
  hex[16] = '\0';
  char path[4096], clean[64];
  size_t j = 0;
  for (size_t i = 0; name && name[i] && j + 1 < sizeof clean; i++) {
    char ch = name[i];
    clean[j++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-') ? ch : '_';
  }
  clean[j] = '\0';
  snprintf(path, sizeof path, "%s/%s-%s.spv", o->dump_dir, clean, hex);
  FILE *f = fopen(path, "wb");
  if (!f) {
    tck_log(ctx->host, TC_LOG_WARN, "vulkan", "vulkan.dump_spirv: cannot write %s", path);
    return;
  }
  fwrite(spirv, 4, n_words, f);
  fclose(f);
}
