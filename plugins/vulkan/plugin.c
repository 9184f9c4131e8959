/* plugin.c — the entry point (tc_plugin_query), ABI negotiation, probe, context lifetime,
 * capabilities, and the error/log helpers every file uses.
 *
 * Options: vulkan.device=INDEX|NAME (a substring of the device name), vulkan.validation=1|sync
 * (VK_LAYER_KHRONOS_validation when installed, its messages in the log; sync adds its
 * synchronization validation), vulkan.dump_spirv=DIR (writes every SPIR-V
 * module there, for spirv-val). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VK_PLUGIN_VERSION "0.1.0"

tc_status vk_host_err(const tc_host_api *host, tc_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (host && host->set_error) host->set_error(host->host_ctx, msg);
  return st;
}

tc_status vk_err(tc_plugin_ctx *ctx, tc_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ctx && ctx->host && ctx->host->set_error) ctx->host->set_error(ctx->host->host_ctx, msg);
  return st;
}

bool vk_log_on(tc_plugin_ctx *ctx, const char *category) {
  const tc_host_api *h = ctx ? ctx->host : NULL;
  return h && h->log && h->log_enabled && h->log_enabled(h->host_ctx, category);
}

void vk_log(tc_plugin_ctx *ctx, tc_log_level level, const char *category, const char *fmt, ...) {
  const tc_host_api *h = ctx ? ctx->host : NULL;
  if (!h || !h->log) return;
  if (level < TC_LOG_WARN && !vk_log_on(ctx, category)) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  h->log(h->host_ctx, level, category, msg);
}

const char *vk_option(const tc_host_api *host, const char *key) {
  if (!host || !host->get_option || !TC_HAS_FIELD(host, tc_host_api, get_option)) return NULL;
  return host->get_option(host->host_ctx, key);
}

/* The device an option names: an index, or a case-insensitive substring of the name. -1: none. */
static int32_t device_from_option(const char *opt, char names[][256], int32_t n) {
  if (!opt || !*opt) return -1;
  char *end = NULL;
  long idx = strtol(opt, &end, 10);
  if (end && *end == '\0') return idx >= 0 && idx < n ? (int32_t)idx : -2;
  for (int32_t i = 0; i < n; i++) {
    const char *h = names[i];
    size_t lo = strlen(opt);
    for (size_t s = 0; h[s]; s++) {
      size_t j = 0;
      while (j < lo && h[s + j] && tolower((unsigned char)h[s + j]) == tolower((unsigned char)opt[j])) j++;
      if (j == lo) return i;
    }
  }
  return -2;
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
  default: return "other";
  }
}

static tc_status vk_probe(const tc_host_api *host, tc_probe_info *info) {
  if (!info || info->struct_size < TC_STRUCT_SIZE(tc_probe_info, devices))
    return vk_host_err(host, TC_ERR_VERSION, "vulkan probe: tc_probe_info too small");
  size_t keep = info->struct_size;
  memset(info, 0, keep);
  info->struct_size = keep;
  vk_fns fn;
  char why[256];
  if (!vk_loader_open(&fn, why, sizeof why)) {
    snprintf(info->reason, sizeof info->reason, "%s", why);
    return TC_OK;
  }
  VkInstance inst = VK_NULL_HANDLE;
  VkResult r = vk_instance_create(&fn, false, NULL, &inst);
  if (r != VK_SUCCESS) {
    snprintf(info->reason, sizeof info->reason, "vkCreateInstance failed (%s): no Vulkan driver (ICD) installed?",
             vk_result_name(r));
    vk_loader_close(&fn);
    return TC_OK;
  }
  if (!vk_loader_instance(&fn, inst, why, sizeof why)) {
    snprintf(info->reason, sizeof info->reason, "%s", why);
  } else {
    VkPhysicalDevice devs[TC_PROBE_MAX_DEVICES];
    uint32_t n = TC_PROBE_MAX_DEVICES;
    r = vk_devices_list(&fn, inst, devs, &n);
    if (r != VK_SUCCESS) {
      snprintf(info->reason, sizeof info->reason, "listing Vulkan devices failed (%s)", vk_result_name(r));
    } else if (n == 0) {
      snprintf(info->reason, sizeof info->reason, "no Vulkan device with a compute queue (Vulkan >= 1.1)");
    } else {
      char names[TC_PROBE_MAX_DEVICES][256];
      VkPhysicalDeviceType best = VK_PHYSICAL_DEVICE_TYPE_OTHER;
      for (uint32_t i = 0; i < n; i++) {
        vk_device_caps caps;
        vk_device_caps_query(&fn, devs[i], &caps);
        tc_device_info *d = &info->devices[i];
        d->struct_size = sizeof *d;
        snprintf(d->name, sizeof d->name, "%.100s (%s)", caps.name, type_name(caps.type));
        snprintf(names[i], sizeof names[i], "%s", caps.name);
        d->type = vk_device_type_tc(caps.type);
        d->memory_bytes = caps.memory_bytes;
        if (i == 0) best = caps.type;
      }
      info->n_devices = (int32_t)n;
      info->available = true;
      const char *opt = vk_option(host, "vulkan.device");
      int32_t chosen = device_from_option(opt, names, (int32_t)n);
      if (chosen == -2)
        snprintf(info->reason, sizeof info->reason, "vulkan.device=%.60s matches no device; using %.120s", opt, names[0]);
      else
        snprintf(info->reason, sizeof info->reason, "%u device(s); using %.200s", n, names[chosen >= 0 ? chosen : 0]);
      info->score = best == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 90
                    : best == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 70
                    : best == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU    ? 50
                                                                     : 10; /* lavapipe: a CPU backend is better */
    }
  }
  fn.vkDestroyInstance(inst, NULL);
  vk_loader_close(&fn);
  return TC_OK;
}

static void vk_release(tc_plugin_ctx *ctx);

static tc_status vk_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **out) {
  *out = NULL;
  tc_plugin_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return vk_host_err(host, TC_ERR_OUT_OF_MEMORY, "vulkan init: out of memory");
  ctx->host = host;
  ctx->validation = vk_validation_mode(vk_option(host, "vulkan.validation"));
  ctx->dump_spirv_dir = vk_option(host, "vulkan.dump_spirv");
  const char *so = vk_option(host, "vulkan.spirv_opt");
  ctx->spirv_opt = so && (strcmp(so, "1") == 0 || strcmp(so, "on") == 0);
  const char *mt = vk_option(host, "vulkan.matmul_tile");
  ctx->mm_tile = mt && (strcmp(mt, "64") == 0 || strcmp(mt, "128") == 0) ? atoi(mt) : 0;
  ctx->next_serial = 1;
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_mutex_init(&ctx->queue_lock, NULL);
  pthread_cond_init(&ctx->queue_cond, NULL);
  char why[256];
  if (!vk_loader_open(&ctx->fn, why, sizeof why)) {
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->queue_lock);
    pthread_cond_destroy(&ctx->queue_cond);
    free(ctx);
    return vk_host_err(host, TC_ERR_UNAVAILABLE, "vulkan init: %s", why);
  }
  /* vulkan.device overrides the index when it names a device. */
  const char *opt = vk_option(host, "vulkan.device");
  if (opt && *opt) {
    vk_fns fn;
    if (vk_loader_open(&fn, why, sizeof why)) {
      VkInstance inst;
      if (vk_instance_create(&fn, false, NULL, &inst) == VK_SUCCESS) {
        if (vk_loader_instance(&fn, inst, why, sizeof why)) {
          VkPhysicalDevice devs[TC_PROBE_MAX_DEVICES];
          uint32_t n = TC_PROBE_MAX_DEVICES;
          if (vk_devices_list(&fn, inst, devs, &n) == VK_SUCCESS) {
            char names[TC_PROBE_MAX_DEVICES][256];
            for (uint32_t i = 0; i < n; i++) {
              VkPhysicalDeviceProperties p;
              fn.vkGetPhysicalDeviceProperties(devs[i], &p);
              snprintf(names[i], sizeof names[i], "%s", p.deviceName);
            }
            int32_t c = device_from_option(opt, names, (int32_t)n);
            if (c >= 0) device = c;
          }
        }
        fn.vkDestroyInstance(inst, NULL);
      }
      vk_loader_close(&fn);
    }
  }
  tc_status st = vk_device_open(ctx, device);
  if (st != TC_OK) {
    vk_release(ctx);
    return st;
  }
  vk_pipeline_cache_open(ctx);
  vk_profile_open(ctx);
  vk_submitter_start(ctx);
  vk_log(ctx, TC_LOG_INFO, "vulkan", "vulkan: %s (%s), subgroup %u%s, f64 %s, i64 %s, 8-bit storage %s", ctx->caps.name,
         type_name(ctx->caps.type), ctx->caps.subgroup_size, ctx->caps.subgroup_shuffle ? " (shuffle)" : "",
         ctx->caps.f64 ? "yes" : "no", ctx->caps.i64 ? "yes" : "no", ctx->caps.storage8 ? "yes" : "no");
  *out = ctx;
  return TC_OK;
}

static void vk_release(tc_plugin_ctx *ctx) {
  if (!ctx) return;
  vk_submitter_stop(ctx);
  if (ctx->device) {
    vk_flush_wait(ctx);
    vk_pipeline_cache_save(ctx);
    if (ctx->pipeline_cache) ctx->fn.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
    vk_staging_release(ctx);
    vk_buffer_cache_release(ctx);
    vk_profile_close(ctx);
  }
  vk_shader_compiler_release(ctx);
  vk_device_close(ctx);
  vk_loader_close(&ctx->fn);
  pthread_mutex_destroy(&ctx->lock);
  pthread_mutex_destroy(&ctx->queue_lock);
  pthread_cond_destroy(&ctx->queue_cond);
  free(ctx);
}

/* Entry points that touch the queue, its slots or its fences run under queue_lock: the
 * submitter thread (batch.c) submits deferred batches from its own thread. */
#define LOCKED(name, params, args)                  \
  static tc_status name##_locked params {          \
    pthread_mutex_lock(&ctx->queue_lock);          \
    tc_status st = name args;                      \
    pthread_mutex_unlock(&ctx->queue_lock);        \
    return st;                                     \
  }
#define LOCKED_VOID(name, params, args)             \
  static void name##_locked params {               \
    pthread_mutex_lock(&ctx->queue_lock);          \
    name args;                                     \
    pthread_mutex_unlock(&ctx->queue_lock);        \
  }
LOCKED(vk_buffer_alloc, (tc_plugin_ctx * ctx, size_t bytes, tc_buffer **buf), (ctx, bytes, buf))
LOCKED_VOID(vk_buffer_free, (tc_plugin_ctx * ctx, tc_buffer *buf), (ctx, buf))
LOCKED(vk_buffer_write, (tc_plugin_ctx * ctx, tc_buffer *dst, size_t offset, const void *src, size_t bytes),
       (ctx, dst, offset, src, bytes))
LOCKED(vk_buffer_read, (tc_plugin_ctx * ctx, tc_buffer *src, size_t offset, void *dst, size_t bytes),
       (ctx, src, offset, dst, bytes))
LOCKED(vk_launch, (tc_plugin_ctx * ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, const int64_t *syms),
       (ctx, exe, kernel, args, syms))
LOCKED(vk_synchronize, (tc_plugin_ctx * ctx), (ctx))
LOCKED(vk_flush_call, (tc_plugin_ctx * ctx), (ctx))
LOCKED_VOID(vk_executable_free, (tc_plugin_ctx * ctx, tc_executable *exe), (ctx, exe))
LOCKED(vk_record, (tc_plugin_ctx * ctx, tc_executable *exe, int32_t n, const tc_launch *launches, tc_recording **rec),
       (ctx, exe, n, launches, rec))
LOCKED(vk_replay, (tc_plugin_ctx * ctx, tc_recording *rec, const int64_t *syms), (ctx, rec, syms))
LOCKED_VOID(vk_recording_free, (tc_plugin_ctx * ctx, tc_recording *rec), (ctx, rec))

static tc_status vk_capabilities(tc_plugin_ctx *ctx, tc_capabilities *caps) {
  if (!caps || caps->struct_size < TC_STRUCT_SIZE(tc_capabilities, kernel_kinds))
    return vk_err(ctx, TC_ERR_VERSION, "vulkan capabilities: tc_capabilities too small");
  caps->dtypes = (1u << TC_F32) | (1u << TC_I32);
  if (ctx->caps.i64) caps->dtypes |= 1u << TC_I64;
  if (ctx->caps.f64 && ctx->caps.i64) caps->dtypes |= 1u << TC_F64;
  if (ctx->caps.storage8) caps->dtypes |= 1u << TC_BOOL;
  caps->prims[0] = caps->prims[1] = 0;
  static const int32_t prims[] = {
      TC_PRIM_NEG, TC_PRIM_ABS, TC_PRIM_EXP, TC_PRIM_LOG, TC_PRIM_SQRT, TC_PRIM_RSQRT, TC_PRIM_SIN, TC_PRIM_COS,
      TC_PRIM_TANH, TC_PRIM_ERF, TC_PRIM_FLOOR, TC_PRIM_CEIL, TC_PRIM_ROUND, TC_PRIM_SIGN, TC_PRIM_RECIPROCAL,
      TC_PRIM_LOGICAL_NOT, TC_PRIM_ISNAN, TC_PRIM_ADD, TC_PRIM_SUB, TC_PRIM_MUL, TC_PRIM_DIV, TC_PRIM_POW,
      TC_PRIM_MAX, TC_PRIM_MIN, TC_PRIM_REMAINDER, TC_PRIM_EQ, TC_PRIM_NE, TC_PRIM_LT, TC_PRIM_LE, TC_PRIM_GT,
      TC_PRIM_GE, TC_PRIM_AND, TC_PRIM_OR, TC_PRIM_WHERE, TC_PRIM_CONVERT, TC_PRIM_REDUCE_SUM, TC_PRIM_REDUCE_MAX,
      TC_PRIM_REDUCE_MIN, TC_PRIM_REDUCE_PROD, TC_PRIM_ARGMAX, TC_PRIM_ARGMIN, TC_PRIM_RESHAPE,
      TC_PRIM_BROADCAST_IN_DIM, TC_PRIM_PERMUTE, TC_PRIM_SLICE, TC_PRIM_PAD, TC_PRIM_CONCATENATE, TC_PRIM_REVERSE,
      TC_PRIM_GATHER, TC_PRIM_SCATTER_ADD, TC_PRIM_IOTA, TC_PRIM_CONSTANT, TC_PRIM_RANDOM, TC_PRIM_MATMUL};
  for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) caps->prims[prims[i] / 64] |= 1ull << (prims[i] % 64);
  caps->kernel_kinds = (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL);
  caps->struct_size = TC_STRUCT_SIZE(tc_capabilities, kernel_kinds);
  return TC_OK;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  if (!host || !out) return TC_ERR_INVALID_ARGUMENT;
  if (host->abi_major != TC_ABI_MAJOR)
    return vk_host_err(host, TC_ERR_VERSION, "vulkan: built for tc ABI %d.x, host speaks %u.%u", TC_ABI_MAJOR,
                       host->abi_major, host->abi_minor);
  if (out->struct_size < TC_STRUCT_SIZE(tc_plugin_api, executable_free))
    return vk_host_err(host, TC_ERR_VERSION, "vulkan: the host's tc_plugin_api (%zu bytes) lacks required entries",
                       out->struct_size);
  tc_plugin_api api = {
      .struct_size = sizeof(tc_plugin_api),
      .abi_major = TC_ABI_MAJOR,
      .abi_minor = TC_ABI_MINOR,
      .name = "vulkan",
      .version = VK_PLUGIN_VERSION,
      .description = "fused kernels as GLSL compute shaders, compiled to SPIR-V by shaderc, on any Vulkan device",
      .handoff = TC_HANDOFF_KERNELS,
      .memory = TC_MEMORY_DEVICE,
      .probe = vk_probe,
      .init = vk_init,
      .release = vk_release,
      .buffer_alloc = vk_buffer_alloc_locked,
      .buffer_free = vk_buffer_free_locked,
      .buffer_write = vk_buffer_write_locked,
      .buffer_read = vk_buffer_read_locked,
      .compile_kernels = vk_compile_kernels,
      .launch = vk_launch_locked,
      .synchronize = vk_synchronize_locked,
      .executable_free = vk_executable_free_locked,
      .executable_source = vk_executable_source,
      .capabilities = vk_capabilities,
      .record = vk_record_locked,
      .replay = vk_replay_locked,
      .recording_free = vk_recording_free_locked,
      .flush = vk_flush_call_locked,
      .executable_info = vk_executable_info,
  };
  size_t n = out->struct_size < sizeof api ? out->struct_size : sizeof api;
  memcpy(out, &api, n);
  out->struct_size = n;
  return TC_OK;
}
