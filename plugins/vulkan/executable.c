/* executable.c — compile: GLSL per kernel (codegen_*); then, on a few threads (parallel.c),
 * SPIR-V from the disk cache or shaderc, modules and layouts per kernel, and the pipelines the
 * first call binds (prepare.c); and the executable's lifetime and source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_internal.h"

/* Kernel ki's description and GLSL, on the calling thread (code generation is cheap next to
 * shaderc and the driver, which run on compile's threads). */
/* Whether kernel k reads, writes or computes an f32 value (only those are emulated). */
static bool touches_f32(const tc_kernel_desc *k) {
  for (int32_t i = 0; i < k->n_buffers; i++)
    if (tck_kernel_buffer(k, i)->dtype == TC_F32) return true;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (tck_kernel_op(k, i)->dtype == TC_F32) return true;
  return false;
}

static tc_status kernel_describe(tc_plugin_ctx *ctx, const vk_compile_opts *o, const tc_kernel_list *list, int32_t ki,
                                 vk_kernel *out) {
  const tc_kernel_desc *k = tck_list_kernel(list, ki);
  char name[160];
  snprintf(name, sizeof name, "%s", k->name && *k->name ? k->name : "kernel");
  out->name = tck_strdup(name);
  out->n_buffers = k->n_buffers;
  out->n_outer = k->n_outer;
  out->inner = k->inner;
  for (int32_t d = 0; d < k->n_outer && d < TC_MAX_RANK; d++) out->outer[d] = k->outer[d];
  out->numel = calloc((size_t)k->n_buffers + 1, sizeof(int32_t));
  out->elem_size = calloc((size_t)k->n_buffers + 1, sizeof(int32_t));
  out->access = calloc((size_t)k->n_buffers + 1, 1);
  if (!out->name || !out->numel || !out->elem_size || !out->access) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_kbuffer *b = tck_kernel_buffer(k, i);
    if (tck_dtype_size(b->dtype) == 0 || b->dtype == TC_F16 || b->dtype == TC_BF16)
      return vk_err(ctx, TC_ERR_UNSUPPORTED, "vulkan compile '%s': buffer %d has unsupported dtype %d", name, (int)i,
                    (int)b->dtype);
    out->numel[i] = b->numel;
    out->elem_size[i] = (int32_t)tck_dtype_size(b->dtype);
    out->access[i] = b->role == TC_BUF_INPUT ? VK_ACCESS_R : b->role == TC_BUF_OUTPUT ? VK_ACCESS_W : VK_ACCESS_R | VK_ACCESS_W;
  }
  out->pure = true;
  /* a matmul's product buffer is written whole before its epilogue reads it: runs repeat */
  for (int32_t i = 0; i < k->n_buffers; i++)
    out->pure &= out->access[i] != (VK_ACCESS_R | VK_ACCESS_W) || (k->kind == TC_KERNEL_MATMUL && i == k->matmul->c);
  for (int32_t i = 0; i < k->n_ops; i++) out->pure &= tck_kernel_op(k, i)->kind != TC_KOP_STORE_ADD;
  out->push_bytes = (uint32_t)(4 * (list->n_syms + k->n_buffers));
  if (out->push_bytes == 0) out->push_bytes = 4;
  if (out->push_bytes > ctx->caps.max_push_bytes)
    return vk_err(ctx, TC_ERR_UNSUPPORTED,
                  "vulkan compile '%s': %d symbols + %d buffers need %u bytes of push constants; the device has %u", name,
                  (int)list->n_syms, (int)k->n_buffers, out->push_bytes, ctx->caps.max_push_bytes);

  tck_str text = {0};
  vk_gen g = {.ctx = ctx, .list = list, .k = k, .t = &text, .f32_emulate = o->f32_emulate && touches_f32(k)};
  if (!tck_exprs_init(&g.x, list->exprs, list->expr_size, list->n_exprs, &tck_syntax_glsl))
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  tc_status st = TC_OK;
  if (!vk_gen_check_kernel(&g)) {
    st = TC_ERR_UNSUPPORTED;
  } else if (k->kind == TC_KERNEL_LOOP) {
    st = vk_gen_loop(&g, &out->shape);
  } else if (k->kind == TC_KERNEL_MATMUL) {
    out->shape = VK_SHAPE_MATMUL;
    out->mm_batch = k->matmul->batch;
    out->mm_batch2 = k->matmul->batch_levels == 2 ? k->matmul->batch2 : -1;
    out->mm_m = k->matmul->m;
    out->mm_n = k->matmul->n;
    st = vk_gen_matmul(&g);
  } else {
    snprintf(g.err, sizeof g.err, "unknown kernel kind %d", (int)k->kind);
    st = TC_ERR_UNSUPPORTED;
  }
  tck_exprs_free(&g.x);
  if (st != TC_OK) {
    tck_str_free(&text);
    return vk_err(ctx, st, "vulkan compile '%s': %s", name, g.err[0] ? g.err : "code generation failed");
  }
  out->glsl = tck_str_take(&text);
  if (!out->glsl) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile '%s': out of memory", name);
  out->rows_vec = g.rows_vec;
  out->row_cache = vk_row_cache(g.f32_emulate);
  out->n_vec_bufs = g.n_vec_bufs;
  out->n_vec_exprs = g.n_vec_exprs;
  out->vec_bufs = malloc(sizeof(int32_t) * ((size_t)g.n_vec_bufs + 1));
  out->vec_exprs = malloc(sizeof(int32_t) * ((size_t)g.n_vec_exprs + 1));
  if (!out->vec_bufs || !out->vec_exprs) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  memcpy(out->vec_bufs, g.vec_bufs, sizeof(int32_t) * (size_t)g.n_vec_bufs);
  memcpy(out->vec_exprs, g.vec_exprs, sizeof(int32_t) * (size_t)g.n_vec_exprs);
  out->vec_width = (out->shape == VK_SHAPE_POINTWISE && strstr(out->glsl, "vec_ok")) ? 4 : 1;
  return TC_OK;
}

/* One kernel's SPIR-V (the disk cache, else shaderc), shader module and layouts: a job on
 * vk_parallel_run's threads. It writes only its own kernel and job; what a miss compiled is
 * stored in the disk cache afterwards, on the calling thread, in kernel order. */
typedef struct module_job {
  tc_plugin_ctx *ctx;
  const vk_compile_opts *o;
  vk_kernel *k;
  uint32_t *spirv; /* a miss's SPIR-V, to store */
  size_t n_words;
  double shaderc_s;
  vk_fail fail;
} module_job;

static void module_build(void *arg, int32_t i) {
  module_job *j = &((module_job *)arg)[i];
  vk_kernel *k = j->k;
  uint32_t *spirv = NULL;
  size_t n_words = 0;
  if (vk_cache_spirv_load(j->ctx, j->o, k->glsl, &spirv, &n_words)) {
    k->cache_hit = true;
  } else {
    double t0 = tck_now_s();
    if (vk_shader_compile(j->ctx, j->o, k->name, k->glsl, &spirv, &n_words, &j->fail) != TC_OK) return;
    j->shaderc_s = tck_now_s() - t0;
  }
  vk_spirv_dump(j->ctx, j->o, k->name, spirv, n_words);
  vk_kernel_pipeline_layout(j->ctx, k, spirv, n_words, &j->fail);
  if (k->cache_hit) {
    free(spirv);
  } else {
    j->spirv = spirv;
    j->n_words = n_words;
  }
}

/* Every kernel's module, in parallel; then the misses stored. The first failure, in kernel
 * order, becomes the compile's error. */
static tc_status modules_build(tc_plugin_ctx *ctx, const vk_compile_opts *o, tc_executable *exe) {
  module_job *jobs = calloc((size_t)exe->n_kernels + 1, sizeof *jobs);
  if (!jobs) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  for (int32_t i = 0; i < exe->n_kernels; i++) jobs[i] = (module_job){.ctx = ctx, .o = o, .k = &exe->kernels[i]};
  vk_parallel_run(exe->n_kernels, module_build, jobs);
  tc_status st = TC_OK;
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    module_job *j = &jobs[i];
    if (j->fail.st != TC_OK && st == TC_OK) st = vk_err(ctx, j->fail.st, "%s", j->fail.msg);
    if (j->spirv) {
      tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan cache miss: '%s' compiled by shaderc in %.1f ms", j->k->name,
              j->shaderc_s * 1e3);
      vk_cache_spirv_store(ctx, o, j->k->glsl, j->spirv, j->n_words);
    }
    free(j->spirv);
  }
  free(jobs);
  return st;
}

/* The list has passed tck_kernel_list_validate (plugin.c). */
tc_status vk_compile_kernels(tc_plugin_ctx *ctx, const vk_compile_opts *o, const tc_kernel_list *list, tc_executable **out) {
  *out = NULL;
  tc_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile_kernels: out of memory");
  exe->name = tck_strdup(list->name);
  exe->n_exprs = list->n_exprs;
  exe->n_syms = list->n_syms;
  exe->exprs = calloc((size_t)list->n_exprs + 1, sizeof *exe->exprs);
  exe->kernels = calloc((size_t)list->n_kernels + 1, sizeof *exe->kernels);
  if (!exe->name || !exe->exprs || !exe->kernels) {
    vk_executable_free(ctx, exe);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile_kernels: out of memory");
  }
  for (int32_t i = 0; i < list->n_exprs; i++) {
    const tc_size_expr *e = tck_list_expr(list, i);
    exe->exprs[i] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = e->op, .a = e->a, .b = e->b, .value = e->value};
  }
  double t0 = tck_now_s();
  int32_t hits = 0;
  tck_str src = {0};
  for (int32_t i = 0; i < list->n_kernels; i++) {
    exe->n_kernels = i + 1;
    tc_status st = kernel_describe(ctx, o, list, i, &exe->kernels[i]);
    if (st != TC_OK) {
      tck_str_free(&src);
      vk_executable_free(ctx, exe);
      return st;
    }
    tck_str_printf(&src, "// ===== kernel %d: %s =====\n%s\n", (int)i, exe->kernels[i].name, exe->kernels[i].glsl);
  }
  tc_status st = modules_build(ctx, o, exe);
  /* the pipelines the first call binds, so that it does not create them one by one */
  if (st == TC_OK) st = vk_executable_prepare(ctx, exe);
  if (st != TC_OK) {
    tck_str_free(&src);
    vk_executable_free(ctx, exe);
    return st;
  }
  for (int32_t i = 0; i < exe->n_kernels; i++) hits += exe->kernels[i].cache_hit;
  exe->source = tck_str_take(&src);
  if (!exe->source) {
    vk_executable_free(ctx, exe);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  }
  exe->from_cache = hits == list->n_kernels;
  exe->compile_seconds = tck_now_s() - t0;
  tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan: graph '%s': %d kernels, %d from the SPIR-V cache, %.1f ms",
         list->name ? list->name : "?", (int)list->n_kernels, (int)hits, exe->compile_seconds * 1e3);
  *out = exe;
  return TC_OK;
}

void vk_executable_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  if (!exe) return;
  vk_flush_wait(ctx);
  vk_replays_free(ctx, exe);
  vk_profile_report(ctx, exe);
  for (int32_t i = 0; i < exe->n_kernels; i++) vk_kernel_destroy(ctx, &exe->kernels[i]);
  for (int32_t i = 0; i < exe->n_pools; i++) ctx->fn.vkDestroyDescriptorPool(ctx->device, exe->pools[i], NULL);
  free(exe->pools);
  free(exe->kernels);
  free(exe->exprs);
  free(exe->source);
  free(exe->name);
  free(exe);
}
