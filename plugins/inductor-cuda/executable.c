/* executable.c — compile: the codegen half's CUDA C (icuda_codegen) -> a cubin from the host's
 * disk cache (kind "cubin", keyed by the source, the sm, NVRTC's version and its flags) or from
 * NVRTC (then stored) -> cuModuleLoadData -> one CUfunction per plan. The kernel list is
 * borrowed for the compile call only: the executable keeps a copy of the expression table and
 * of what launch needs of each kernel (outer extents' expr ids, buffers' numel ids and element
 * sizes, the matmul descriptor's ids). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

#define ICUDA_SMEM_DEFAULT (48 * 1024) /* above this a kernel must opt in */

/* A cached cubin (malloc'd) or NULL; an entry that is not a cubin is logged and compiled again. */
static void *cache_load(tc_plugin_ctx *ctx, const char *key, size_t key_len, size_t *n) {
  size_t size = 0;
  void *data = tck_host_cache_load(ctx->host, "inductor-cuda", key, key_len, "cubin", &size);
  if (data && (size < 4 || memcmp(data, "\x7f" "ELF", 4))) {
    tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda cache: an entry of %zu bytes is not a cubin; compiling again", size);
    free(data);
    return NULL;
  }
  if (data) *n = size;
  return data;
}

/* What launch needs of kernel i, and the checks that need no code: limits of icuda_args, the
 * dtypes cuBLASLt takes. */
static tc_error *kernel_copy(tc_plugin_ctx *ctx, const tc_kernel_list *list, int32_t i, icuda_kernel *out) {
  const tc_kernel_desc *k = tck_list_kernel(list, i);
  snprintf(out->name, sizeof out->name, "%s", k->name && *k->name ? k->name : "kernel");
  out->kind = k->kind;
  if (k->n_buffers > ICUDA_MAX_BUFS)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda compile '%s': %d buffers; the kernel ABI holds %d",
                     out->name, (int)k->n_buffers, ICUDA_MAX_BUFS);
  if (k->n_outer > TC_MAX_RANK)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda compile '%s': %d outer dims (at most %d)", out->name,
                     (int)k->n_outer, TC_MAX_RANK);
  out->n_outer = k->n_outer;
  for (int32_t d = 0; d < k->n_outer; d++) out->outer[d] = k->outer[d];
  out->n_buffers = k->n_buffers;
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_kbuffer *kb = tck_kernel_buffer(k, b);
    out->numel[b] = kb->numel;
    out->dtype[b] = kb->dtype;
    out->elem_size[b] = (int32_t)tck_dtype_size(kb->dtype);
    if (out->elem_size[b] == 0 || kb->dtype == TC_F16 || kb->dtype == TC_BF16)
      return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda compile '%s': buffer %d (%s) has unsupported dtype %s",
                       out->name, (int)b, kb->name ? kb->name : "?", tck_dtype_name(kb->dtype));
  }
  if (k->kind == TC_KERNEL_ATTENTION) {
    const tc_attention_desc *at = k->attention; /* validated: present, buffers in range, f32 */
    memset(&out->attn, 0, sizeof out->attn);
    memcpy(&out->attn, at, at->struct_size < sizeof out->attn ? at->struct_size : sizeof out->attn);
  }
  if (k->kind == TC_KERNEL_MATMUL) {
    const tc_matmul_desc *m = k->matmul;
    if (!m || m->a < 0 || m->a >= k->n_buffers || m->b < 0 || m->b >= k->n_buffers || m->c < 0 || m->c >= k->n_buffers)
      return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda compile '%s': matmul operands are not buffers of the kernel",
                       out->name);
    memset(&out->mm, 0, sizeof out->mm);
    size_t have = m->struct_size < sizeof out->mm ? m->struct_size : sizeof out->mm;
    memcpy(&out->mm, m, have);
    out->mm.struct_size = sizeof out->mm;
    if (!TC_HAS_FIELD(m, tc_matmul_desc, c_stride_batch2)) {
      out->mm.batch_levels = 1;
      out->mm.batch2 = -1;
    }
    int32_t dt = out->dtype[m->a];
    if ((dt != TC_F32 && dt != TC_F64) || out->dtype[m->b] != dt || out->dtype[m->c] != dt)
      return tck_error(ctx->host, TC_ERR_UNSUPPORTED,
                       "inductor-cuda compile '%s': cuBLASLt matmuls take f32 or f64 operands of one dtype (A %s, B %s, C %s)",
                       out->name, tck_dtype_name(dt), tck_dtype_name(out->dtype[m->b]), tck_dtype_name(out->dtype[m->c]));
    if (out->mm.batch_levels != 1 && out->mm.batch_levels != 2)
      return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda compile '%s': batch_levels %d (1 or 2)", out->name,
                       (int)out->mm.batch_levels);
  }
  return NULL;
}

static tc_error *plan_check(tc_plugin_ctx *ctx, icuda_kernel *k) {
  const icuda_kernel_plan *p = &k->plan;
  int want = k->kind == TC_KERNEL_MATMUL ? ICUDA_LAUNCH_MATMUL : k->kind == TC_KERNEL_ATTENTION ? ICUDA_LAUNCH_ATTENTION : -1;
  if (want >= 0 ? p->kind != want : (p->kind != ICUDA_LAUNCH_POINTS && p->kind != ICUDA_LAUNCH_ROWS))
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': plan kind %d for a %s kernel", k->name,
                     (int)p->kind, k->kind == TC_KERNEL_MATMUL ? "matmul" : "loop");
  bool has_fn = k->kind != TC_KERNEL_MATMUL || p->has_epilogue;
  if (has_fn && (p->block < 1 || p->block > 1024))
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': plan block %d (1..1024)", k->name, (int)p->block);
  if (p->smem_bytes < 0 || p->max_blocks < 0)
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': plan smem %d, max_blocks %d", k->name,
                     (int)p->smem_bytes, (int)p->max_blocks);
  if (p->rows_per_block < 0 || (p->rows_per_block > 1 && (p->kind != ICUDA_LAUNCH_ROWS || p->rows_per_block * 32 > p->block)))
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': plan rows_per_block %d (block %d)", k->name,
                     (int)p->rows_per_block, (int)p->block);
  if (p->smem_bytes > ICUDA_SMEM_DEFAULT && p->smem_bytes > ctx->facts.smem_optin)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED,
                     "inductor-cuda compile '%s': %d bytes of shared memory per block; the device allows %d", k->name,
                     (int)p->smem_bytes, (int)ctx->facts.smem_optin);
  if (has_fn && !memchr(p->name, '\0', sizeof p->name))
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': plan name not terminated", k->name);
  return NULL;
}

/* The cubin of source: from the cache, else NVRTC (and stored). *hit says which. */
static tc_error *cubin_get(tc_plugin_ctx *ctx, const char *graph, const char *source, void **cubin, size_t *size,
                           bool *hit) {
  *cubin = NULL;
  *size = 0;
  *hit = false;
  char why[4096];
  const icuda_nvrtc *nv = icuda_nvrtc_load(why, sizeof why);
  if (!nv) return tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda compile '%s': NVRTC: %s", graph, why);
  int32_t sm = ctx->facts.sm;
  tck_str key = {0};
  tck_str_printf(&key, "inductor-cuda cubin\nsm_%d\nnvrtc %s\nflags %s\n", (int)sm, icuda_nvrtc_version(nv),
                 icuda_nvrtc_flags(sm));
  tck_str_puts(&key, source);
  size_t key_len = key.len;
  char *k = tck_str_take(&key);
  if (!k) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  *cubin = cache_load(ctx, k, key_len, size);
  if (*cubin) {
    *hit = true;
    tck_log(ctx->host, TC_LOG_INFO, "cache", "inductor-cuda cache hit: graph '%s': %zu bytes of cubin for sm_%d, NVRTC skipped",
            graph, *size, (int)sm);
    free(k);
    return NULL;
  }
  double t0 = tck_now_s();
  tc_status st = icuda_nvrtc_compile(nv, source, graph, sm, cubin, size, why, sizeof why);
  if (st != TC_OK) {
    free(k);
    *cubin = NULL;
    return tck_error(ctx->host, st, "inductor-cuda compile '%s': NVRTC (sm_%d): %s", graph, (int)sm, why);
  }
  tck_log(ctx->host, TC_LOG_INFO, "cache", "inductor-cuda cache miss: graph '%s' compiled by NVRTC in %.1f ms (%zu bytes, sm_%d)",
          graph, (tck_now_s() - t0) * 1e3, *size, (int)sm);
  tck_host_cache_store(ctx->host, "inductor-cuda", k, key_len, "cubin", *cubin, *size);
  free(k);
  return NULL;
}

static tc_error *functions_get(tc_plugin_ctx *ctx, tc_executable *exe) {
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    icuda_kernel *k = &exe->kernels[i];
    if (k->kind == TC_KERNEL_MATMUL && !k->plan.has_epilogue) continue;
    CUresult r = ctx->cu->cuModuleGetFunction(&k->fn, exe->module, k->plan.name);
    if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuModuleGetFunction", "compile '%s' (function %s)", k->name, k->plan.name);
    if (k->plan.smem_bytes > ICUDA_SMEM_DEFAULT) {
      r = ctx->cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->plan.smem_bytes);
      if (r != CUDA_SUCCESS)
        return icuda_cu_error(ctx, r, "cuFuncSetAttribute", "compile '%s' (MAX_DYNAMIC_SHARED_SIZE_BYTES = %d)", k->name,
                              (int)k->plan.smem_bytes);
    }
  }
  return NULL;
}

tc_error *icuda_compile(tc_plugin_ctx *ctx, const tc_kernel_list *list, const icuda_compile_opts *o, tc_executable **out) {
  *out = NULL;
  double t0 = tck_now_s();
  const char *graph = list->name && *list->name ? list->name : "graph";
  if (list->n_syms > ICUDA_MAX_SYMS)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda compile '%s': %d symbols; the kernel ABI holds %d", graph,
                     (int)list->n_syms, ICUDA_MAX_SYMS);
  tc_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  exe->name = tck_strdup(graph);
  exe->allow_tf32 = o->allow_tf32;
  exe->graph_mode = o->mode == TC_MODE_REDUCE_OVERHEAD || o->mode == TC_MODE_MAX_AUTOTUNE;
  exe->n_exprs = list->n_exprs;
  exe->n_syms = list->n_syms;
  exe->exprs = calloc((size_t)list->n_exprs + 1, sizeof *exe->exprs);
  exe->kernels = calloc((size_t)list->n_kernels + 1, sizeof *exe->kernels);
  icuda_kernel_plan *plans = calloc((size_t)list->n_kernels + 1, sizeof *plans);
  tc_error *e = NULL;
  if (!exe->name || !exe->exprs || !exe->kernels || !plans)
    e = tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  for (int32_t i = 0; !e && i < list->n_exprs; i++) {
    const tc_size_expr *x = tck_list_expr(list, i);
    exe->exprs[i] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = x->op, .a = x->a, .b = x->b, .value = x->value};
  }
  exe->n_kernels = list->n_kernels;
  for (int32_t i = 0; !e && i < list->n_kernels; i++) e = kernel_copy(ctx, list, i, &exe->kernels[i]);

  char why[4096];
  if (!e) {
    icuda_codegen_options co = {.sm = ctx->facts.sm, .n_sms = ctx->facts.n_sms, .row_threads = o->row_threads};
    tc_status st = icuda_codegen(list, &co, &exe->source, plans, why, sizeof why);
    if (st != TC_OK) e = tck_error(ctx->host, st, "inductor-cuda compile '%s': code generation: %s", graph, why);
    else if (!exe->source) e = tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': codegen gave no source", graph);
  }
  for (int32_t i = 0; !e && i < list->n_kernels; i++) {
    exe->kernels[i].plan = plans[i];
    e = plan_check(ctx, &exe->kernels[i]);
  }
  if (!e && tck_log_on(ctx->host, "output_code"))
    tck_log(ctx->host, TC_LOG_INFO, "output_code", "inductor-cuda: graph '%s':\n%s", graph, exe->source);

  if (!e && list->n_kernels > 0) {
    /* a cached cubin that the driver refuses is compiled again, once */
    for (int attempt = 0; attempt < 2 && !e && !exe->module; attempt++) {
      void *cubin = NULL;
      size_t size = 0;
      bool hit = false;
      if (attempt == 0) {
        e = cubin_get(ctx, graph, exe->source, &cubin, &size, &hit);
      } else {
        /* compile without the cache: NVRTC directly */
        const icuda_nvrtc *nv = icuda_nvrtc_load(why, sizeof why);
        tc_status st = nv ? icuda_nvrtc_compile(nv, exe->source, graph, ctx->facts.sm, &cubin, &size, why, sizeof why)
                          : TC_ERR_UNAVAILABLE;
        if (st != TC_OK) e = tck_error(ctx->host, st, "inductor-cuda compile '%s': NVRTC: %s", graph, why);
      }
      if (e) break;
      CUmodule mod = NULL;
      CUresult r = ctx->cu->cuModuleLoadData(&mod, cubin);
      free(cubin);
      if (r == CUDA_SUCCESS) {
        exe->module = mod;
        exe->from_cache = hit;
      } else if (hit) {
        char nb[48];
        tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda cache: the cached cubin of '%s' does not load (%s); compiling again",
                graph, icuda_cu_name(ctx->cu, r, nb, sizeof nb));
      } else {
        e = icuda_cu_error(ctx, r, "cuModuleLoadData", "compile '%s' (a %zu-byte cubin for sm_%d)", graph, size,
                           (int)ctx->facts.sm);
      }
    }
    if (!e) e = functions_get(ctx, exe);
  }
  free(plans);
  if (e) {
    icuda_executable_free(ctx, exe);
    return e;
  }
  exe->compile_seconds = tck_now_s() - t0;
  *out = exe;
  return NULL;
}

void icuda_executable_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  if (!exe) return;
  if (exe->module) {
    /* launches of its functions may still be queued */
    tc_error *e = icuda_stream_wait(ctx, "executable_free");
    if (e) {
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", ctx->host->error_message(ctx->host->host_ctx, e));
      ctx->host->error_free(ctx->host->host_ctx, e);
    }
    CUresult r = ctx->cu->cuModuleUnload(exe->module);
    if (r != CUDA_SUCCESS) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda executable_free '%s': cuModuleUnload failed: %s",
              exe->name ? exe->name : "?", icuda_cu_name(ctx->cu, r, nb, sizeof nb));
    }
  }
  icuda_profile_report(ctx, exe);
  icuda_graphs_free(ctx, exe);
  for (int32_t i = 0; exe->kernels && i < exe->n_kernels; i++) icuda_mm_algos_free(exe->kernels[i].algos);
  free(exe->kernels);
  free(exe->exprs);
  free(exe->source);
  free(exe->name);
  free(exe);
}
