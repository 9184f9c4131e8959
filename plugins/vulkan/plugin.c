/* plugin.c — the entry point (tc_plugin_query), the option table, probe, context lifetime,
 * capabilities, and the ABI's entries (args structs in, tc_error out) over the internal calls.
 *
 * Options (declared in k_options; the host validates values before they reach the plugin):
 * vulkan.device=INDEX|NAME (an index into the device list, or a case-insensitive substring of a
 * device's name), vulkan.validation=0|1|sync (VK_LAYER_KHRONOS_validation when installed, its
 * messages in the log; sync adds its synchronization validation), vulkan.matmul_tile=0|64|128,
 * vulkan.dump_spirv=DIR (writes every SPIR-V module there, for spirv-val), vulkan.spirv_opt,
 * vulkan.f32_subnormals=auto|emulate|native (subnormals.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VK_PLUGIN_VERSION "0.2.0"

tc_status vk_err(tc_plugin_ctx *ctx, tc_status st, const char *fmt, ...) {
  if (!ctx) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
  va_end(ap);
  return st;
}

tc_status vk_fail_set(vk_fail *f, tc_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->msg, sizeof f->msg, fmt, ap);
  va_end(ap);
  f->st = st;
  return st;
}

tc_error *vk_error_take(tc_plugin_ctx *ctx, tc_status st) {
  if (st == TC_OK) return NULL;
  tc_error *e = tck_error(ctx->host, st, "%s", ctx->err[0] ? ctx->err : "vulkan: failed");
  ctx->err[0] = '\0';
  return e;
}

/* ---- options ---- */

#define OPT(n, t, sc, def, vals, what)                                                                             \
  {.struct_size = sizeof(tc_option_decl), .name = n, .type = t, .scope = sc, .default_value = def, .values = vals, \
   .meaning = what}
static const tc_option_decl k_options[] = {
    OPT("vulkan.device", TC_OPTION_STRING, TC_OPTION_CONTEXT, NULL, "INDEX|NAME",
        "the device: an index into the device list or a case-insensitive substring of its name (unset: the first)"),
    OPT("vulkan.validation", TC_OPTION_ENUM, TC_OPTION_CONTEXT, "0", "0|1|sync",
        "run under VK_LAYER_KHRONOS_validation (sync: with synchronization validation), messages in the log"),
    OPT("vulkan.matmul_tile", TC_OPTION_ENUM, TC_OPTION_CONTEXT, "0", "0|64|128",
        "rows per GEMM tile, chosen at launch (0: 64 below 512 tiles of 128x128, else 128)"),
    OPT("vulkan.dump_spirv", TC_OPTION_STRING, TC_OPTION_COMPILE, NULL, "DIR",
        "write every SPIR-V module compiled to this directory (for spirv-val)"),
    OPT("vulkan.spirv_opt", TC_OPTION_BOOL, TC_OPTION_COMPILE, "0", NULL,
        "run spirv-opt (performance level) on every shader; off: the driver optimizes"),
    OPT("vulkan.f32_subnormals", TC_OPTION_ENUM, TC_OPTION_COMPILE, "auto", "auto|emulate|native",
        "f32 subnormals as PyTorch keeps them: emulate f32 in f64 where the driver flushes them (auto: when the "
        "device lacks DenormPreserveFloat32 but keeps f64 subnormals), or native f32 always"),
};
#undef OPT

/* The device `opt` names among names[n]: an index or a case-insensitive substring; -1 none. */
static int32_t device_from_option(const char *opt, char names[][256], int32_t n, bool *is_index) {
  char *end = NULL;
  long idx = strtol(opt, &end, 10);
  *is_index = end && end != opt && *end == '\0';
  if (*is_index) return idx >= 0 && idx < n ? (int32_t)idx : -1;
  size_t lo = strlen(opt);
  for (int32_t i = 0; i < n; i++)
    for (size_t s = 0; names[i][s]; s++) {
      size_t j = 0;
      while (j < lo && names[i][s + j] && tolower((unsigned char)names[i][s + j]) == tolower((unsigned char)opt[j])) j++;
      if (j == lo) return i;
    }
  return -1;
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

/* ---- probe: what it reports lives here until the next probe or unload ---- */

static char g_probe_reason[512];
static char g_probe_names[VK_MAX_DEVICES][160];
static tc_device_desc g_probe_devices[VK_MAX_DEVICES];

static tc_error *vk_probe(tc_probe_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_probe_args, device_size))
    return tck_error(a ? a->host : NULL, TC_ERR_VERSION, "vulkan probe: tc_probe_args too small");
  a->available = false;
  a->score = 0;
  a->n_devices = 0;
  a->devices = g_probe_devices;
  a->device_size = sizeof(tc_device_desc);
  a->reason = g_probe_reason;
  vk_fns fn;
  char why[256];
  if (!vk_loader_open(&fn, why, sizeof why)) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "%s", why);
    return NULL;
  }
  VkInstance inst = VK_NULL_HANDLE;
  VkResult r = vk_instance_create(&fn, VK_VALIDATION_OFF, NULL, &inst);
  if (r != VK_SUCCESS) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "vkCreateInstance failed (%s): no Vulkan driver (ICD) installed?",
             vk_result_name(r));
    vk_loader_close(&fn);
    return NULL;
  }
  if (!vk_loader_instance(&fn, inst, why, sizeof why)) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "%s", why);
  } else {
    VkPhysicalDevice devs[VK_MAX_DEVICES];
    uint32_t n = VK_MAX_DEVICES;
    r = vk_devices_list(&fn, inst, devs, &n);
    if (r != VK_SUCCESS) {
      snprintf(g_probe_reason, sizeof g_probe_reason, "listing Vulkan devices failed (%s)", vk_result_name(r));
    } else if (n == 0) {
      snprintf(g_probe_reason, sizeof g_probe_reason, "no Vulkan device with a compute queue (Vulkan >= 1.1)");
    } else {
      VkPhysicalDeviceType best = VK_PHYSICAL_DEVICE_TYPE_OTHER;
      for (uint32_t i = 0; i < n; i++) {
        vk_device_caps caps;
        vk_device_caps_query(&fn, devs[i], &caps);
        snprintf(g_probe_names[i], sizeof g_probe_names[i], "%.120s (%s)", caps.name, type_name(caps.type));
        g_probe_devices[i] = (tc_device_desc){.struct_size = sizeof(tc_device_desc),
                                              .name = g_probe_names[i],
                                              .type = vk_device_type_tc(caps.type),
                                              .memory_bytes = caps.memory_bytes};
        if (i == 0) best = caps.type;
      }
      a->n_devices = (int32_t)n;
      a->available = true;
      snprintf(g_probe_reason, sizeof g_probe_reason, "%u device(s); the first: %.200s", n, g_probe_names[0]);
      a->score = best == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 90
                 : best == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 70
                 : best == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU    ? 50
                                                                  : 10; /* lavapipe: a CPU backend is better */
    }
  }
  fn.vkDestroyInstance(inst, NULL);
  vk_loader_close(&fn);
  return NULL;
}

/* ---- context ---- */

static void ctx_release(tc_plugin_ctx *ctx);

/* The device vulkan.device names (its index into the device list), or an error naming the
 * devices there are. */
static tc_status device_by_option(tc_plugin_ctx *ctx, const char *opt, int32_t *device) {
  vk_fns fn;
  char why[256];
  if (!vk_loader_open(&fn, why, sizeof why)) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: %s", why);
  VkInstance inst = VK_NULL_HANDLE;
  char names[VK_MAX_DEVICES][256];
  uint32_t n = 0;
  tc_status st = TC_OK;
  if (vk_instance_create(&fn, VK_VALIDATION_OFF, NULL, &inst) != VK_SUCCESS || !vk_loader_instance(&fn, inst, why, sizeof why)) {
    st = vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: cannot list devices for vulkan.device=%s", opt);
  } else {
    VkPhysicalDevice devs[VK_MAX_DEVICES];
    n = VK_MAX_DEVICES;
    if (vk_devices_list(&fn, inst, devs, &n) != VK_SUCCESS) n = 0;
    for (uint32_t i = 0; i < n; i++) {
      VkPhysicalDeviceProperties p;
      fn.vkGetPhysicalDeviceProperties(devs[i], &p);
      snprintf(names[i], sizeof names[i], "%s", p.deviceName);
    }
    bool is_index;
    int32_t c = device_from_option(opt, names, (int32_t)n, &is_index);
    if (c >= 0) {
      *device = c;
    } else {
      tck_str list = {0};
      for (uint32_t i = 0; i < n; i++) tck_str_printf(&list, "%s%u: %s", i ? ", " : "", i, names[i]);
      char *l = tck_str_take(&list);
      st = vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan.device=%s %s: %u devices (%s)", opt,
                  is_index ? "is out of range" : "matches no device", n, l ? l : "");
      free(l);
    }
  }
  if (inst) fn.vkDestroyInstance(inst, NULL);
  vk_loader_close(&fn);
  return st;
}

static tc_status ctx_open(tc_plugin_ctx *ctx, const tc_init_args *a) {
  int32_t n = a->n_options;
  const tc_option *o = a->options;
  size_t os = a->option_size;
  const char *validation = tck_option_get(o, n, os, "vulkan.validation");
  ctx->validation = vk_validation_mode(validation);
  ctx->mm_tile = (int)tck_option_int(o, n, os, "vulkan.matmul_tile", 0);
  if (ctx->mm_tile != 64 && ctx->mm_tile != 128) ctx->mm_tile = 0;
  int32_t device = a->device >= 0 ? a->device : 0;
  const char *opt = tck_option_get(o, n, os, "vulkan.device");
  tc_status st = TC_OK;
  if (opt && *opt && (st = device_by_option(ctx, opt, &device)) != TC_OK) return st;
  char why[256];
  if (!vk_loader_open(&ctx->fn, why, sizeof why)) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: %s", why);
  if ((st = vk_device_open(ctx, device)) != TC_OK) return st;
  vk_simulate_ftz_setup(ctx);
  vk_pipeline_cache_open(ctx);
  vk_profile_open(ctx);
  vk_submitter_start(ctx);
  bool emulate = false;
  const char *auto_why = "";
  vk_f32_subnormals_choose(ctx, NULL, &emulate, &auto_why);
  tck_log(ctx->host, TC_LOG_INFO, "init",
          "vulkan: context on device %d (%s); the driver preserves subnormals f32 %s, f64 %s (can flush f32 %s); signed "
          "zero/inf/NaN f32 %s; vulkan.f32_subnormals=auto would run f32 %s (%s)",
          (int)device, ctx->caps.name, ctx->caps.denorm_preserve[0] ? "yes" : "no", ctx->caps.denorm_preserve[1] ? "yes" : "no",
          ctx->caps.denorm_flush_to_zero[0] ? "yes" : "no", ctx->caps.signed_zero_inf_nan_preserve[0] ? "yes" : "no",
          emulate ? "emulated in f64" : "natively", auto_why);
  tck_log(ctx->host, TC_LOG_INFO, "vulkan", "vulkan: %s (%s), subgroup %u%s, f64 %s, i64 %s, 8-bit storage %s",
          ctx->caps.name, type_name(ctx->caps.type), ctx->caps.subgroup_size,
          ctx->caps.subgroup_shuffle ? " (shuffle)" : "", ctx->caps.f64 ? "yes" : "no", ctx->caps.i64 ? "yes" : "no",
          ctx->caps.storage8 ? "yes" : "no");
  return TC_OK;
}

static tc_error *vk_init(tc_init_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_init_args, ctx))
    return tck_error(a ? a->host : NULL, TC_ERR_VERSION, "vulkan init: tc_init_args too small");
  a->ctx = NULL;
  tc_plugin_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return tck_error(a->host, TC_ERR_OUT_OF_MEMORY, "vulkan init: out of memory");
  ctx->host = a->host;
  ctx->next_serial = 1;
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_mutex_init(&ctx->queue_lock, NULL);
  pthread_cond_init(&ctx->queue_cond, NULL);
  tc_status st = ctx_open(ctx, a);
  if (st != TC_OK) {
    tc_error *e = vk_error_take(ctx, st);
    ctx_release(ctx);
    return e;
  }
  a->ctx = ctx;
  return NULL;
}

static void ctx_release(tc_plugin_ctx *ctx) {
  if (!ctx) return;
  vk_submitter_stop(ctx);
  if (ctx->device) {
    vk_replay_release(ctx);
    vk_flush_wait(ctx);
    vk_pipeline_cache_save(ctx);
    if (ctx->pipeline_cache) ctx->fn.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
    vk_staging_release(ctx);
    vk_buffer_cache_release(ctx);
    vk_profile_close(ctx);
  }
  vk_replay_held_free(ctx);
  vk_shader_compiler_release(ctx);
  vk_device_close(ctx);
  if (ctx->fn.lib) vk_loader_close(&ctx->fn);
  pthread_mutex_destroy(&ctx->lock);
  pthread_mutex_destroy(&ctx->queue_lock);
  pthread_cond_destroy(&ctx->queue_cond);
  free(ctx);
}

static void vk_release(const tc_release_args *a) {
  if (a) ctx_release(a->ctx);
}

/* ---- the entries. Those that touch the queue, its slots or its fences run under
 * queue_lock: the submitter thread (batch.c) submits deferred batches from its own thread.
 * Each first records what a reduce-overhead call holds (replay.c), so it sees that work queued. */

#define QUEUE_LOCKED(ctx, expr)                 \
  do {                                          \
    pthread_mutex_lock(&(ctx)->queue_lock);     \
    tc_status st_ = vk_replay_release(ctx);     \
    if (st_ == TC_OK) st_ = (expr);             \
    pthread_mutex_unlock(&(ctx)->queue_lock);   \
    return vk_error_take((ctx), st_);           \
  } while (0)

static tc_error *vk_buffer_alloc_entry(tc_buffer_alloc_args *a) {
  QUEUE_LOCKED(a->ctx, vk_buffer_alloc(a->ctx, a->bytes, &a->buffer));
}

static void vk_buffer_free_entry(const tc_buffer_free_args *a) {
  pthread_mutex_lock(&a->ctx->queue_lock);
  if (vk_replay_release(a->ctx) != TC_OK) /* nobody to return it to: say it */
    tck_log(a->ctx->host, TC_LOG_WARN, "vulkan", "vulkan: buffer_free: recording held launches failed: %s", a->ctx->err);
  vk_buffer_free(a->ctx, a->buffer);
  pthread_mutex_unlock(&a->ctx->queue_lock);
}

static tc_error *vk_buffer_write_entry(const tc_buffer_copy_args *a) {
  QUEUE_LOCKED(a->ctx, vk_buffer_write(a->ctx, a->buffer, a->offset, a->host, a->bytes));
}

static tc_error *vk_buffer_read_entry(const tc_buffer_copy_args *a) {
  QUEUE_LOCKED(a->ctx, vk_buffer_read(a->ctx, a->buffer, a->offset, a->host, a->bytes));
}

static tc_error *vk_synchronize_entry(const tc_queue_args *a) { QUEUE_LOCKED(a->ctx, vk_synchronize(a->ctx)); }

static tc_error *vk_flush_entry(const tc_queue_args *a) {
  tc_plugin_ctx *ctx = a->ctx;
  pthread_mutex_lock(&ctx->queue_lock);
  tc_status st = vk_replay_flush(ctx);
  if (st == TC_OK) st = vk_flush_call(ctx);
  pthread_mutex_unlock(&ctx->queue_lock);
  return vk_error_take(ctx, st);
}

static tc_error *vk_launch_entry(const tc_launch_args *a) {
  tc_plugin_ctx *ctx = a->ctx;
  if (a->struct_size < TC_STRUCT_SIZE(tc_launch_args, call_id))
    return tck_error(ctx->host, TC_ERR_VERSION, "vulkan launch: tc_launch_args too small");
  /* one tc_buffer_arg per buffer, as this build lays them out */
  tc_buffer_arg local[16], *args = local;
  if (a->n_args < 0 || (a->n_args > 0 && !a->args))
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "vulkan launch: %d args at %p", (int)a->n_args, (const void *)a->args);
  if (a->n_args > 16 && !(args = calloc((size_t)a->n_args, sizeof *args)))
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
  for (int32_t i = 0; i < a->n_args; i++) {
    const tc_buffer_arg *s = TC_ELEM(tc_buffer_arg, a->args, a->arg_size, i);
    args[i] = (tc_buffer_arg){.struct_size = sizeof(tc_buffer_arg), .buffer = s->buffer, .byte_offset = s->byte_offset};
  }
  tc_status st = TC_OK;
  if (a->exe && a->kernel >= 0 && a->kernel < a->exe->n_kernels && a->n_args < a->exe->kernels[a->kernel].n_buffers)
    st = vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': %d args for %d buffers", a->exe->kernels[a->kernel].name,
                (int)a->n_args, (int)a->exe->kernels[a->kernel].n_buffers);
  pthread_mutex_lock(&ctx->queue_lock);
  if (st == TC_OK && vk_replay_wanted(ctx, a->exe))
    st = vk_replay_hold(ctx, a->exe, a->kernel, a->n_args ? args : NULL, a->n_args, a->syms, a->call_id);
  else if (st == TC_OK && (st = vk_replay_release(ctx)) == TC_OK)
    st = vk_launch(ctx, a->exe, a->kernel, a->n_args ? args : NULL, a->syms, a->call_id);
  pthread_mutex_unlock(&ctx->queue_lock);
  if (args != local) free(args);
  return vk_error_take(ctx, st);
}

static void vk_executable_free_entry(const tc_executable_free_args *a) {
  pthread_mutex_lock(&a->ctx->queue_lock);
  if (vk_replay_release(a->ctx) != TC_OK)
    tck_log(a->ctx->host, TC_LOG_WARN, "vulkan", "vulkan: executable_free: recording held launches failed: %s", a->ctx->err);
  vk_executable_free(a->ctx, a->exe);
  pthread_mutex_unlock(&a->ctx->queue_lock);
}

static tc_error *vk_compile(tc_compile_args *a) {
  tc_plugin_ctx *ctx = a->ctx;
  a->exe = NULL;
  if (!a->kernels) return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "vulkan compile: no kernel list (kernels hand-off)");
  char why[512];
  if (tck_kernel_list_validate(a->kernels, why, sizeof why) != TC_OK)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "vulkan compile: %s", why);
  vk_compile_opts o = {
      .spirv_opt = tck_option_bool(a->options, a->n_options, a->option_size, "vulkan.spirv_opt", false),
      .dump_dir = tck_option_get(a->options, a->n_options, a->option_size, "vulkan.dump_spirv"),
  };
  const char *path_why = "";
  tc_status st = vk_f32_subnormals_choose(
      ctx, tck_option_get(a->options, a->n_options, a->option_size, "vulkan.f32_subnormals"), &o.f32_emulate, &path_why);
  if (st != TC_OK) return vk_error_take(ctx, st);
  tck_log(ctx->host, TC_LOG_INFO, "vulkan", "vulkan: graph '%s': f32 %s (%s)", a->kernels->name ? a->kernels->name : "?",
          o.f32_emulate ? "emulated in f64" : "native", path_why);
  st = vk_compile_kernels(ctx, &o, a->kernels, &a->exe);
  /* as on CUDA, max-autotune includes reduce-overhead's replay; -no-cudagraphs does not */
  if (st == TC_OK) {
    a->exe->replay = a->mode == TC_MODE_REDUCE_OVERHEAD || a->mode == TC_MODE_MAX_AUTOTUNE;
    a->exe->autotune = a->mode == TC_MODE_MAX_AUTOTUNE || a->mode == TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS;
  }
  return vk_error_take(ctx, st);
}

static tc_error *vk_executable_info(tc_executable_info_args *a) {
  tc_executable *exe = a->exe;
  if (!exe) return tck_error(a->ctx->host, TC_ERR_INVALID_ARGUMENT, "vulkan executable_info: NULL executable");
  tck_executable_info_fill(a, exe->source, exe->from_cache, exe->compile_seconds);
  return NULL;
}

/* ---- capabilities: static, so device-dependent dtypes (f64, i64, bool need shaderFloat64,
 * shaderInt64, 8-bit storage) are declared and a device without them declines at compile with
 * a message naming the missing feature. ---- */


static const tc_capabilities_ext k_capabilities = {
    .base = {.struct_size = sizeof(tc_capabilities_ext), .type = TC_EXT_CAPABILITIES, .next = NULL},
    .dtypes = (1u << TC_F32) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_F64) | (1u << TC_BOOL),
    .n_prim_words = 2,
    .prims = tck_prims_all,
    .kernel_kinds = (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL),
};

static const tc_plugin_api k_api = {
    .struct_size = sizeof(tc_plugin_api),
    .abi_major = TC_ABI_MAJOR,
    .abi_minor = TC_ABI_MINOR,
    .name = "vulkan",
    .version = VK_PLUGIN_VERSION,
    .description = "fused kernels as GLSL compute shaders, compiled to SPIR-V by shaderc, on any Vulkan device",
    .handoff = TC_HANDOFF_KERNELS,
    .memory = TC_MEMORY_DEVICE,
    .flags = 0,
    .option_prefix = "vulkan",
    .n_options = (int32_t)(sizeof k_options / sizeof k_options[0]),
    .options = k_options,
    .option_size = sizeof(tc_option_decl),
    .extensions = &k_capabilities.base,
    .probe = vk_probe,
    .init = vk_init,
    .release = vk_release,
    .compile = vk_compile,
    .executable_free = vk_executable_free_entry,
    .synchronize = vk_synchronize_entry,
    .launch = vk_launch_entry,
    .buffer_alloc = vk_buffer_alloc_entry,
    .buffer_free = vk_buffer_free_entry,
    .buffer_write = vk_buffer_write_entry,
    .buffer_read = vk_buffer_read_entry,
    .flush = vk_flush_entry,
    .executable_info = vk_executable_info,
};

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) { return tck_query_answer(args, &k_api); }
