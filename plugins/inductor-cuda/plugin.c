/* plugin.c — inductor-cuda's entry point (tc_plugin_query), options, probe, the context
 * (primary context + one non-blocking stream), capabilities, and the ABI entries over the
 * runtime's internal calls.
 *
 * Modes: reduce-overhead and max-autotune replay each call's launches as one CUDA graph
 * (graphs.c); default and max-autotune-no-cudagraphs queue them one by one.
 *
 * Ordering: every operation of a context is queued on its one stream, so launches, copies,
 * allocations and frees run in the order the host called them; the host serializes the entries
 * of one context (flags 0), so there is no lock here.
 *
 * Options (the host validates values before they reach the plugin):
 *   cuda.device        INT 0..63, context: the CUDA device ordinal (default 0). When set it
 *                      wins over the host's device index; else the host's index, else 0.
 *   cuda.sync_launches BOOL, context: synchronize after every launch, so an asynchronous
 *                      failure is returned by the launch that caused it (CUDA_LAUNCH_BLOCKING
 *                      for tc; slow, for debugging).
 *   cuda.early_launch  BOOL, context: launch each generated kernel early (programmatic dependent
 *                      launch, sm_90+, launch.c), so it is scheduled while the kernel before it
 *                      finishes (default on; off: every launch an ordinary one).
 *   cuda.workspace_mb  INT 0..4096, context: cuBLASLt's workspace, allocated at the first matmul
 *                      (default 32).
 *   cuda.allow_tf32    BOOL, compile: f32 GEMMs may use TF32 tensor cores
 *                      (CUBLAS_COMPUTE_32F_FAST_TF32). Off by default, as PyTorch's
 *                      torch.backends.cuda.matmul.allow_tf32.
 *   cuda.gemm          ENUM auto|cublaslt|generated, compile: which GEMM runs a matmul (gemm.c):
 *                      auto, cuBLASLt once it has loaded and the generated GEMM
 *                      (codegen_gemm.c) while it is loading; cublaslt always (waiting for it;
 *                      no GEMM is generated); generated always. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

#define ICUDA_PLUGIN_VERSION "0.1.0"
#define ICUDA_MAX_DEVICES 64

/* ---- errors ---- */

static tc_status status_of(CUresult r) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY: return TC_ERR_OUT_OF_MEMORY;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED: return TC_ERR_UNAVAILABLE;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED: return TC_ERR_DEVICE;
  default: return TC_ERR_INTERNAL;
  }
}

bool icuda_cu_is_device_failure(CUresult r) { return status_of(r) == TC_ERR_DEVICE; }

tc_error *icuda_cu_error(tc_plugin_ctx *ctx, CUresult r, const char *call, const char *what_fmt, ...) {
  char what[384];
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  char nb[48];
  const char *s = NULL;
  if (!ctx->cu || ctx->cu->cuGetErrorString(r, &s) != CUDA_SUCCESS) s = NULL;
  return tck_error(ctx->host, status_of(r), "inductor-cuda %s: %s failed: %s%s%s%s", what, call,
                   icuda_cu_name(ctx->cu, r, nb, sizeof nb), s ? " (" : "", s ? s : "", s ? ")" : "");
}

tc_error *icuda_stream_wait(tc_plugin_ctx *ctx, const char *what) {
  CUresult r = ctx->cu->cuStreamSynchronize(ctx->stream);
  if (r == CUDA_SUCCESS) {
    ctx->pending = false;
    return NULL;
  }
  char nb[48];
  const char *name = icuda_cu_name(ctx->cu, r, nb, sizeof nb);
  const tc_host_api *h = ctx->host;
  if (ctx->pending) {
    if (h && TC_HAS_FIELD(h, tc_host_api, report_async_error) && h->report_async_error) {
      tc_error *e = tck_error(h, TC_ERR_DEVICE,
                              "inductor-cuda: work queued on the stream failed: cuStreamSynchronize failed: %s (found "
                              "by %s; the newest call queued before it: %llu)",
                              name, what, (unsigned long long)ctx->pending_call);
      if (e) h->report_async_error(h->host_ctx, ctx->pending_call, e);
    }
    ctx->pending = false; /* reported once; a sticky error keeps failing every later call */
  }
  return tck_error(h, TC_ERR_DEVICE, "inductor-cuda %s: cuStreamSynchronize failed: %s (a kernel or copy queued earlier failed)",
                   what, name);
}

/* ---- the current context ---- */

tc_error *icuda_ctx_enter(tc_plugin_ctx *ctx, const char *what, icuda_ctx_scope *scope) {
  scope->pushed = false;
  CUcontext cur = NULL;
  CUresult r = ctx->cu->cuCtxGetCurrent(&cur);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuCtxGetCurrent", "%s", what);
  if (cur == ctx->cuctx) return NULL;
  r = ctx->cu->cuCtxPushCurrent(ctx->cuctx);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuCtxPushCurrent_v2", "%s", what);
  scope->pushed = true;
  return NULL;
}

void icuda_ctx_leave(tc_plugin_ctx *ctx, icuda_ctx_scope *scope) {
  if (!scope->pushed) return;
  CUcontext popped = NULL;
  CUresult r = ctx->cu->cuCtxPopCurrent(&popped);
  if (r != CUDA_SUCCESS) {
    char nb[48];
    tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda: cuCtxPopCurrent_v2 failed: %s",
            icuda_cu_name(ctx->cu, r, nb, sizeof nb));
  }
  scope->pushed = false;
}

/* ---- options ---- */

#define OPT(n, t, sc, def, lo, hi, vals, what)                                                                        \
  {.struct_size = sizeof(tc_option_decl), .name = n, .type = t, .scope = sc, .default_value = def, .min = lo, .max = hi, \
   .values = vals, .meaning = what}
static const tc_option_decl k_options[] = {
    OPT("cuda.device", TC_OPTION_INT, TC_OPTION_CONTEXT, "0", 0, 63, NULL,
        "the CUDA device ordinal (as nvidia-smi numbers them, after CUDA_VISIBLE_DEVICES)"),
    OPT("cuda.allow_tf32", TC_OPTION_BOOL, TC_OPTION_COMPILE, "0", 0, 0, NULL,
        "f32 matmuls may use TF32 tensor cores (faster, ~1e-3 relative error); off as in PyTorch"),
    OPT("cuda.sync_launches", TC_OPTION_BOOL, TC_OPTION_CONTEXT, "0", 0, 0, NULL,
        "synchronize after every launch so a kernel failure is reported by the launch itself (debugging; slow)"),
    OPT("cuda.early_launch", TC_OPTION_BOOL, TC_OPTION_CONTEXT, "1", 0, 0, NULL,
        "start each generated kernel while the kernel before it finishes its last blocks (programmatic dependent launch, "
        "sm_90 and newer; it waits for that kernel's results before touching memory)"),
    OPT("cuda.workspace_mb", TC_OPTION_INT, TC_OPTION_CONTEXT, "32", 0, 4096, NULL,
        "cuBLASLt workspace in MiB, allocated at the first matmul"),
    OPT("cuda.row_threads", TC_OPTION_ENUM, TC_OPTION_COMPILE, "0", 0, 0, "0|32|64|128|256|512|1024",
        "threads per row of the row kernels (layer_norm, softmax), a block per row; 0: automatic (a warp per row for rows "
        "of a multiple of 128 up to 1024 elements, else a block of about 4 float4 per thread)"),
    OPT("cuda.attention_queries", TC_OPTION_ENUM, TC_OPTION_COMPILE, "64", 0, 0, "64|128",
        "fused attention: queries per block (8 threads per cuda.attention_thread_queries of them)"),
    OPT("cuda.attention_keys", TC_OPTION_ENUM, TC_OPTION_COMPILE, "32", 0, 0, "32|64",
        "fused attention: keys per tile (8 threads split a tile's keys; smaller tiles take less shared memory)"),
    OPT("cuda.attention_thread_queries", TC_OPTION_ENUM, TC_OPTION_COMPILE, "4", 0, 0, "4|8",
        "fused attention: queries per thread (8 halves the threads and reads fewer shared-memory bytes per FMA; 4 keeps "
        "twice the warps to hide latency, the faster on the H200)"),
    OPT("cuda.attention_kernel", TC_OPTION_ENUM, TC_OPTION_COMPILE, "v1", 0, 0, "v1|tiled",
        "fused attention kernel: v1 (the options above) or tiled (both products register-tiled as an SGEMM, "
        "cuda.attention_tile)"),
    OPT("cuda.attention_tile", TC_OPTION_ENUM, TC_OPTION_COMPILE, "8x8", 0, 0, "4x4|4x8|8x4|8x8",
        "fused attention, tiled kernel: queries x keys of the scores a thread (128 threads: 16x the queries a block, 8x "
        "the keys a tile)"),
    OPT("cuda.gemm", TC_OPTION_ENUM, TC_OPTION_COMPILE, "auto", 0, 0, "auto|cublaslt|generated",
        "which GEMM runs a matmul: auto (cuBLASLt once loaded; the generated tiled GEMM, epilogue fused, while cuBLASLt "
        "is still loading, so a first call does not wait for it), cublaslt (always; waits), generated (always)"),
};
#undef OPT

/* ---- probe ---- */

static char g_probe_reason[640];
static char g_probe_names[ICUDA_MAX_DEVICES][200];
static tc_device_desc g_probe_devices[ICUDA_MAX_DEVICES];

static tc_error *icuda_probe(tc_probe_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_probe_args, device_size))
    return tck_error(a ? a->host : NULL, TC_ERR_VERSION, "inductor-cuda probe: tc_probe_args too small");
  a->available = false;
  a->score = 0;
  a->n_devices = 0;
  a->devices = g_probe_devices;
  a->device_size = sizeof(tc_device_desc);
  a->reason = g_probe_reason;
  char why[512];
  const icuda_driver *d = icuda_driver_load(why, sizeof why);
  if (!d) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "%s", why);
    return NULL;
  }
  int n = 0;
  char nb[48];
  CUresult r = d->cuDeviceGetCount(&n);
  if (r != CUDA_SUCCESS) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "cuDeviceGetCount failed: %s", icuda_cu_name(d, r, nb, sizeof nb));
    return NULL;
  }
  if (n <= 0) {
    snprintf(g_probe_reason, sizeof g_probe_reason, "no CUDA device (cuDeviceGetCount: 0)");
    return NULL;
  }
  if (n > ICUDA_MAX_DEVICES) n = ICUDA_MAX_DEVICES;
  int listed = 0;
  for (int i = 0; i < n; i++) {
    icuda_device_facts f;
    if (!icuda_device_query(d, i, &f, why, sizeof why)) {
      snprintf(g_probe_reason, sizeof g_probe_reason, "%s", why);
      return NULL; /* ordinals must stay the CUDA ordinals: all or nothing */
    }
    snprintf(g_probe_names[i], sizeof g_probe_names[i], "%.120s (%s, sm_%d, %d SMs)", f.name,
             f.integrated ? "integrated GPU" : "discrete GPU", (int)f.sm, (int)f.n_sms);
    g_probe_devices[i] = (tc_device_desc){.struct_size = sizeof(tc_device_desc),
                                          .name = g_probe_names[i],
                                          .type = f.integrated ? TC_DEVICE_INTEGRATED_GPU : TC_DEVICE_DISCRETE_GPU,
                                          .memory_bytes = f.memory_bytes};
    listed++;
  }
  a->n_devices = listed;
  a->available = true;
  a->score = 95; /* above vulkan's 90 on the same GPU */
  snprintf(g_probe_reason, sizeof g_probe_reason, "%d device(s), driver %d.%d; the first: %.200s", listed,
           d->version / 1000, (d->version % 1000) / 10, g_probe_names[0]);
  return NULL;
}

/* ---- context ---- */

static void ctx_release(tc_plugin_ctx *ctx) {
  if (!ctx) return;
  icuda_libraries_preload_join(ctx);
  if (ctx->cu && ctx->cuctx) {
    icuda_ctx_scope sc;
    tc_error *e = icuda_ctx_enter(ctx, "release", &sc);
    if (e) {
      ctx->host->error_free(ctx->host->host_ctx, e);
    } else {
      e = icuda_graphs_release_held(ctx);
      if (e) ctx->host->error_free(ctx->host->host_ctx, e);
      if (ctx->stream) {
        e = icuda_stream_wait(ctx, "release");
        if (e) ctx->host->error_free(ctx->host->host_ctx, e);
      }
      icuda_blaslt_release(ctx);
      icuda_profile_close(ctx);
      if (ctx->workspace) icuda_device_free(ctx, ctx->workspace);
      ctx->workspace = 0;
      if (ctx->stream) {
        /* the workspace's stream-ordered free first */
        CUresult r = ctx->cu->cuStreamSynchronize(ctx->stream);
        if (r == CUDA_SUCCESS) r = ctx->cu->cuStreamDestroy(ctx->stream);
        if (r != CUDA_SUCCESS) {
          char nb[48];
          tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda release: the stream: %s",
                  icuda_cu_name(ctx->cu, r, nb, sizeof nb));
        }
      }
      icuda_ctx_leave(ctx, &sc);
    }
    CUresult r = ctx->cu->cuDevicePrimaryCtxRelease(ctx->dev);
    if (r != CUDA_SUCCESS) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda release: cuDevicePrimaryCtxRelease_v2 failed: %s",
              icuda_cu_name(ctx->cu, r, nb, sizeof nb));
    }
  }
  icuda_held_free(ctx);
  free(ctx);
}

static tc_error *ctx_open(tc_plugin_ctx *ctx, const tc_init_args *a) {
  const tc_option *o = a->options;
  int32_t n = a->n_options;
  size_t os = a->option_size;
  char why[512];
  ctx->cu = icuda_driver_load(why, sizeof why);
  if (!ctx->cu) return tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda init: %s", why);
  icuda_libraries_preload(ctx); /* meanwhile: the context below, the host's tracing */
  const tc_option *dev_opt = NULL;
  for (int32_t i = 0; i < n && o; i++) {
    const tc_option *op = TC_ELEM(tc_option, o, os, i);
    if (op->name && !strcmp(op->name, "cuda.device")) dev_opt = op;
  }
  int64_t device = tck_option_int(o, n, os, "cuda.device", 0);
  if (!(dev_opt && dev_opt->set) && a->device >= 0) device = a->device;
  ctx->sync_launches = tck_option_bool(o, n, os, "cuda.sync_launches", false);
  ctx->workspace_bytes = (size_t)tck_option_int(o, n, os, "cuda.workspace_mb", 32) << 20;
  int count = 0;
  CUresult r = ctx->cu->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuDeviceGetCount", "init");
  if (device < 0 || device >= count)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda init: cuda.device=%lld is out of range: %d CUDA device(s)",
                     (long long)device, count);
  ctx->device = (int32_t)device;
  if (!icuda_device_query(ctx->cu, ctx->device, &ctx->facts, why, sizeof why))
    return tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda init: %s", why);
  ctx->early_launch = tck_option_bool(o, n, os, "cuda.early_launch", true) && ctx->facts.sm >= 90 && ctx->cu->cuLaunchKernelEx;
  r = ctx->cu->cuDeviceGet(&ctx->dev, ctx->device);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuDeviceGet", "init (device %d)", (int)ctx->device);
  CUcontext cc = NULL;
  r = ctx->cu->cuDevicePrimaryCtxRetain(&cc, ctx->dev);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuDevicePrimaryCtxRetain", "init (device %d)", (int)ctx->device);
  ctx->cuctx = cc;
  icuda_ctx_scope sc;
  tc_error *e = icuda_ctx_enter(ctx, "init", &sc);
  if (e) return e;
  r = ctx->cu->cuStreamCreate(&ctx->stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    ctx->stream = NULL;
    e = icuda_cu_error(ctx, r, "cuStreamCreate", "init (device %d)", (int)ctx->device);
  }
  if (!e) e = icuda_mem_setup(ctx);
  if (!e) icuda_profile_open(ctx);
  icuda_ctx_leave(ctx, &sc);
  if (e) return e;
  tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: context on device %d (%s, sm_%d, %d SMs), %s launches", (int)ctx->device,
          ctx->facts.name, (int)ctx->facts.sm, (int)ctx->facts.n_sms, ctx->early_launch ? "early" : "ordinary");
  return NULL;
}

static tc_error *icuda_init(tc_init_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_init_args, ctx))
    return tck_error(a ? a->host : NULL, TC_ERR_VERSION, "inductor-cuda init: tc_init_args too small");
  a->ctx = NULL;
  tc_plugin_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return tck_error(a->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda init: out of memory");
  ctx->host = a->host;
  tc_error *e = ctx_open(ctx, a);
  if (e) {
    ctx_release(ctx);
    return e;
  }
  a->ctx = ctx;
  return NULL;
}

static void icuda_release(const tc_release_args *a) {
  if (a) ctx_release(a->ctx);
}

/* ---- the entries: each makes the context current for its duration ---- */

/* Every entry but launch and flush first queues the launches held for a CUDA graph
 * (graphs.c): they come before whatever the host asks next. */
#define ENTER(ctx, what)                                   \
  icuda_ctx_scope sc_;                                     \
  do {                                                     \
    tc_error *e_ = icuda_ctx_enter((ctx), (what), &sc_);   \
    if (e_) return e_;                                     \
    if ((e_ = icuda_graphs_release_held(ctx))) {          \
      icuda_ctx_leave((ctx), &sc_);                        \
      return e_;                                           \
    }                                                      \
  } while (0)
/* The same for launch and flush, which decide what to do with what is held. */
#define ENTER_KEEP(ctx, what)                              \
  icuda_ctx_scope sc_;                                     \
  do {                                                     \
    tc_error *e_ = icuda_ctx_enter((ctx), (what), &sc_);   \
    if (e_) return e_;                                     \
  } while (0)
#define LEAVE(ctx) icuda_ctx_leave((ctx), &sc_)

static tc_error *icuda_buffer_alloc_entry(tc_buffer_alloc_args *a) {
  a->buffer = NULL;
  ENTER(a->ctx, "buffer_alloc");
  tc_error *e = icuda_buffer_alloc(a->ctx, a->bytes, &a->buffer);
  LEAVE(a->ctx);
  return e;
}

static void icuda_buffer_free_entry(const tc_buffer_free_args *a) {
  if (!a || !a->buffer) return;
  icuda_ctx_scope sc;
  tc_error *e = icuda_ctx_enter(a->ctx, "buffer_free", &sc);
  if (e) {
    tck_log(a->ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", a->ctx->host->error_message(a->ctx->host->host_ctx, e));
    a->ctx->host->error_free(a->ctx->host->host_ctx, e);
    free(a->buffer); /* the device memory is lost with the context */
    return;
  }
  e = icuda_graphs_release_held(a->ctx); /* held launches may use the buffer */
  if (e) {
    tck_log(a->ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", a->ctx->host->error_message(a->ctx->host->host_ctx, e));
    a->ctx->host->error_free(a->ctx->host->host_ctx, e);
  }
  icuda_buffer_free(a->ctx, a->buffer);
  icuda_ctx_leave(a->ctx, &sc);
}

static tc_error *icuda_buffer_write_entry(const tc_buffer_copy_args *a) {
  ENTER(a->ctx, "buffer_write");
  tc_error *e = icuda_buffer_write(a->ctx, a->buffer, a->offset, a->host, a->bytes);
  LEAVE(a->ctx);
  return e;
}

static tc_error *icuda_buffer_read_entry(const tc_buffer_copy_args *a) {
  ENTER(a->ctx, "buffer_read");
  tc_error *e = icuda_buffer_read(a->ctx, a->buffer, a->offset, a->host, a->bytes);
  LEAVE(a->ctx);
  return e;
}

static tc_error *icuda_synchronize_entry(const tc_queue_args *a) {
  ENTER(a->ctx, "synchronize");
  tc_error *e = icuda_stream_wait(a->ctx, "synchronize");
  LEAVE(a->ctx);
  return e;
}

/* Nothing to submit: the stream runs what it was given. cuStreamQuery surfaces a sticky error
 * early (a failed kernel poisons the context); CUDA_ERROR_NOT_READY just means still running. */
static tc_error *icuda_flush_entry(const tc_queue_args *a) {
  tc_plugin_ctx *ctx = a->ctx;
  ENTER_KEEP(ctx, "flush");
  tc_error *e = icuda_graphs_flush(ctx); /* a held call: its CUDA graph */
  CUresult r = e ? CUDA_SUCCESS : ctx->cu->cuStreamQuery(ctx->stream);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) e = icuda_stream_wait(ctx, "flush (cuStreamQuery)");
  else if (r == CUDA_SUCCESS && !e) ctx->pending = false;
  LEAVE(ctx);
  return e;
}

static tc_error *icuda_launch_entry(const tc_launch_args *a) {
  if (!a || !a->ctx) return NULL;
  if (a->struct_size < TC_STRUCT_SIZE(tc_launch_args, call_id))
    return tck_error(a->ctx->host, TC_ERR_VERSION, "inductor-cuda launch: tc_launch_args too small");
  ENTER_KEEP(a->ctx, "launch");
  tc_error *e = NULL;
  if (a->exe && icuda_graphs_wanted(a->ctx, a->exe)) e = icuda_graphs_hold(a->ctx, a);
  else if (!(e = icuda_graphs_release_held(a->ctx))) e = icuda_launch(a->ctx, a);
  LEAVE(a->ctx);
  return e;
}

/* cuda.gemm's value (validated by the host) as an icuda_gemm_mode. */
static int32_t gemm_mode(const char *v) {
  return v && !strcmp(v, "cublaslt") ? ICUDA_GEMM_CUBLASLT : v && !strcmp(v, "generated") ? ICUDA_GEMM_GENERATED : ICUDA_GEMM_AUTO;
}

static tc_error *icuda_compile_entry(tc_compile_args *a) {
  tc_plugin_ctx *ctx = a->ctx;
  a->exe = NULL;
  if (!a->kernels)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda compile: no kernel list (kernels hand-off)");
  char why[512];
  if (tck_kernel_list_validate(a->kernels, why, sizeof why) != TC_OK)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda compile: %s", why);
  icuda_compile_opts o = {
      .allow_tf32 = tck_option_bool(a->options, a->n_options, a->option_size, "cuda.allow_tf32", false),
      .row_threads = (int32_t)tck_option_int(a->options, a->n_options, a->option_size, "cuda.row_threads", 0),
      .attn_queries = (int32_t)tck_option_int(a->options, a->n_options, a->option_size, "cuda.attention_queries", 64),
      .attn_keys = (int32_t)tck_option_int(a->options, a->n_options, a->option_size, "cuda.attention_keys", 32),
      .attn_thread_queries =
          (int32_t)tck_option_int(a->options, a->n_options, a->option_size, "cuda.attention_thread_queries", 4),
      .gemm = gemm_mode(tck_option_get(a->options, a->n_options, a->option_size, "cuda.gemm")),
      .mode = a->mode};
  const char *attn_kernel = tck_option_get(a->options, a->n_options, a->option_size, "cuda.attention_kernel");
  const char *attn_tile = tck_option_get(a->options, a->n_options, a->option_size, "cuda.attention_tile");
  o.attn_kernel = attn_kernel && !strcmp(attn_kernel, "tiled") ? ICUDA_ATTN_TILED : ICUDA_ATTN_V1;
  if (attn_tile && strlen(attn_tile) == 3) { /* validated: one of 4x4|4x8|8x4|8x8 */
    o.attn_tile_m = attn_tile[0] - '0';
    o.attn_tile_n = attn_tile[2] - '0';
  }
  ENTER(ctx, "compile");
  tc_error *e = icuda_compile(ctx, a->kernels, &o, &a->exe);
  LEAVE(ctx);
  return e;
}

static void icuda_executable_free_entry(const tc_executable_free_args *a) {
  if (!a || !a->exe) return;
  icuda_ctx_scope sc;
  tc_error *e = icuda_ctx_enter(a->ctx, "executable_free", &sc);
  const bool entered = !e;
  /* a failed call's held launches may use exe: queued first (dropped when the context is gone) */
  if (entered) e = icuda_graphs_release_held(a->ctx);
  else icuda_graphs_drop_held(a->ctx, a->exe);
  if (e) {
    tck_log(a->ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", a->ctx->host->error_message(a->ctx->host->host_ctx, e));
    a->ctx->host->error_free(a->ctx->host->host_ctx, e);
  }
  icuda_executable_free(a->ctx, a->exe); /* without the context current, only host memory is freed */
  if (entered) icuda_ctx_leave(a->ctx, &sc);
}

static tc_error *icuda_executable_info(tc_executable_info_args *a) {
  tc_executable *exe = a->exe;
  if (!exe) return tck_error(a->ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda executable_info: NULL executable");
  tck_executable_info_fill(a, exe->source, exe->from_cache, exe->compile_seconds);
  return NULL;
}

/* ---- capabilities: every dtype but the reserved halves, every prim, both kernel kinds;
 * then the codegen half's check (ICUDA_EXT_CODEGEN_CHECK). ---- */


static const tc_capabilities_ext k_capabilities = {
    .base = {.struct_size = sizeof(tc_capabilities_ext), .type = TC_EXT_CAPABILITIES, .next = &icuda_codegen_check.base},
    .dtypes = (1u << TC_F32) | (1u << TC_F64) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_BOOL),
    .n_prim_words = 2,
    .prims = tck_prims_all,
    .kernel_kinds = (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL) | (1u << TC_KERNEL_ATTENTION),
};

static const tc_plugin_api k_api = {
    .struct_size = sizeof(tc_plugin_api),
    .abi_major = TC_ABI_MAJOR,
    .abi_minor = TC_ABI_MINOR,
    .name = "inductor-cuda",
    .version = ICUDA_PLUGIN_VERSION,
    .description = "fused kernels as CUDA C compiled by NVRTC, matmuls through cuBLASLt, on NVIDIA GPUs",
    .handoff = TC_HANDOFF_KERNELS,
    .memory = TC_MEMORY_DEVICE,
    .flags = 0,
    .option_prefix = "cuda",
    .n_options = (int32_t)(sizeof k_options / sizeof k_options[0]),
    .options = k_options,
    .option_size = sizeof(tc_option_decl),
    .extensions = &k_capabilities.base,
    .probe = icuda_probe,
    .init = icuda_init,
    .release = icuda_release,
    .compile = icuda_compile_entry,
    .executable_free = icuda_executable_free_entry,
    .synchronize = icuda_synchronize_entry,
    .launch = icuda_launch_entry,
    .buffer_alloc = icuda_buffer_alloc_entry,
    .buffer_free = icuda_buffer_free_entry,
    .buffer_write = icuda_buffer_write_entry,
    .buffer_read = icuda_buffer_read_entry,
    .flush = icuda_flush_entry,
    .executable_info = icuda_executable_info,
};

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) { return tck_query_answer(args, &k_api); }
