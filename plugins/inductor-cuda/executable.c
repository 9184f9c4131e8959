/* executable.c — compile: the codegen half's CUDA C (icuda_codegen) -> plans checked -> one
 * module per kernel (modules.c: disk cache or NVRTC, in parallel) -> one CUfunction per plan. The kernel list is
 * borrowed for the compile call only: the executable keeps a copy of the expression table and
 * of what launch needs of each kernel (outer extents' expr ids, buffers' numel ids and element
 * sizes, the matmul descriptor's ids). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"


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
    icuda_lt_epilogue_find(k, &out->lt_epi);
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
  if (!memchr(p->gemm_name, '\0', sizeof p->gemm_name) ||
      (p->gemm_name[0] && (k->kind != TC_KERNEL_MATMUL || p->gemm_block < 1 || p->gemm_block > 1024 || p->gemm_tile < 8)))
    return tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda compile '%s': generated GEMM plan (block %d, tile %d)", k->name,
                     (int)p->gemm_block, (int)p->gemm_tile);
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
  exe->gemm = o->gemm;
  exe->graph_mode = o->mode == TC_MODE_REDUCE_OVERHEAD || o->mode == TC_MODE_MAX_AUTOTUNE;
  exe->autotune = o->mode == TC_MODE_MAX_AUTOTUNE || o->mode == TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS;
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
    icuda_codegen_options co = {.sm = ctx->facts.sm, .n_sms = ctx->facts.n_sms, .row_threads = o->row_threads,
                                .attn_queries = o->attn_queries, .attn_keys = o->attn_keys,
                                .attn_thread_queries = o->attn_thread_queries, .gemm = o->gemm,
                                .attn_kernel = o->attn_kernel, .attn_tile_m = o->attn_tile_m, .attn_tile_n = o->attn_tile_n};
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

  if (!e) e = icuda_modules_build(ctx, exe, plans);
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
  icuda_gemm_background_finish(exe); /* its thread reads nothing of exe, but is joined with it */
  icuda_modules_free(ctx, exe);
  icuda_profile_report(ctx, exe);
  icuda_graphs_free(ctx, exe);
  for (int32_t i = 0; exe->kernels && i < exe->n_kernels; i++) icuda_mm_algos_free(exe->kernels[i].algos);
  free(exe->kernels);
  free(exe->exprs);
  free(exe->source);
  free(exe->name);
  free(exe);
}
