/* prepare.c — the pipelines an executable's first call will bind, made at compile, in parallel.
 *
 * A driver compiles SPIR-V to machine code in vkCreateComputePipelines: about 0.4 s per
 * pipeline on the H200, so attn_block's nine, made one after another at each kernel's first
 * launch, were 4.0 s of a 5.2 s first call. Compile makes them instead, one per
 * vkCreateComputePipelines call on vk_parallel_run's threads, through the context's
 * VkPipelineCache. Each kernel's variant comes from the launch's own choice functions
 * (launch.c) on the sizes that are constants in the kernel list; where the choice depends on a
 * symbol's value, kernel_wants says what is made and why. Any other variant (another size, a
 * misaligned view, max-autotune's timing of every variant) is still made at its first launch
 * (vk_kernel_pipeline). */
#include <stdio.h>
#include <stdlib.h>

#include "vk_internal.h"

typedef struct want {
  tc_plugin_ctx *ctx;
  vk_kernel *k;
  int32_t variant, mode;
  VkResult r;
  double seconds; /* this pipeline's creation: the slowest bounds a cold compile */
} want;

/* The list's sizes as far as they are constants: known[i] when expression i does not depend on
 * a symbol, vals[i] its value then. */
typedef struct sizes {
  int32_t n;
  bool *known;
  int64_t *vals;
} sizes;

static bool size_of(const sizes *s, int32_t id, int64_t *v) {
  if (id < 0 || id >= s->n || !s->known[id]) return false;
  *v = s->vals[id];
  return true;
}

/* The product of k's outer sizes: true with *rows when every one is a constant. */
static bool outer_rows(const sizes *s, const vk_kernel *k, int64_t *rows) {
  *rows = 1;
  bool all = true;
  for (int32_t d = 0; d < k->n_outer; d++) {
    int64_t v;
    if (!size_of(s, k->outer[d], &v)) {
      all = false;
    } else if (v <= 0) {
      *rows = 0; /* one empty dim is enough: the launch dispatches nothing */
      return true;
    } else {
      *rows *= v;
    }
  }
  return all;
}

static void add(want *w, int32_t *n, tc_plugin_ctx *ctx, vk_kernel *k, int32_t variant, int32_t mode) {
  w[(*n)++] = (want){.ctx = ctx, .k = k, .variant = variant, .mode = mode, .r = VK_SUCCESS};
}

/* Appends the pipelines kernel k's first launch binds (at most 2) to w. */
static void kernel_wants(tc_plugin_ctx *ctx, const sizes *s, vk_kernel *k, want *w, int32_t *n) {
  int64_t rows;
  bool rows_known = outer_rows(s, k, &rows);
  if (k->shape == VK_SHAPE_POINTWISE) {
    if (!rows_known || rows > 0) add(w, n, ctx, k, 0, 0);
  } else if (k->shape == VK_SHAPE_ROWS) {
    int64_t len;
    if ((rows_known && rows == 0) || !size_of(s, k->inner, &len)) {
      /* A symbolic row length sets the thread count: six counts times three bodies with none
       * likelier than another, so none is made here; the first launch makes its own. */
      return;
    }
    if (len < 0) len = 0;
    int32_t variant = vk_rows_variant(ctx, len, -1);
    /* The vec4 bodies need the recorded sizes and the buffers' element offsets to be multiples
     * of 4. The offsets are known only at launch and are assumed to be (a whole tensor starts
     * at 0, a view of whole rows of a multiple of 4 elements stays aligned); a misaligned view
     * makes its scalar pipeline at that launch. A recorded size that is a symbol may go either
     * way: both bodies are made. */
    bool aligned = true, symbolic = false;
    for (int32_t i = 0; i < k->n_vec_exprs && k->rows_vec; i++) {
      int64_t v;
      if (!size_of(s, k->vec_exprs[i], &v)) symbolic = true;
      else if (v % 4 != 0) aligned = false;
    }
    int32_t mode = vk_rows_mode(k, len, variant, aligned);
    add(w, n, ctx, k, variant, mode);
    if (aligned && symbolic && mode != 0) add(w, n, ctx, k, variant, 0);
  } else {
    /* batch, the second batch level (when there is one), m, n */
    int32_t ids[4] = {k->mm_batch, k->mm_batch2, k->mm_m, k->mm_n};
    int64_t dims[4] = {1, 1, 1, 1};
    bool all = true;
    for (int32_t i = 0; i < 4; i++) {
      if (i == 1 && k->mm_batch2 < 0) continue;
      if (!size_of(s, ids[i], &dims[i])) all = false;
      else if (dims[i] <= 0) return; /* an empty product: the launch dispatches nothing */
    }
    if (all || ctx->mm_tile) { /* vulkan.matmul_tile decides alone */
      add(w, n, ctx, k, vk_matmul_variant(ctx, dims[0] * dims[1], dims[2], dims[3], -1), 0);
    } else {
      /* The tile height flips at VK_MM_HALF_BELOW tiles, which a symbolic batch or sequence
       * length crosses: a dynamic graph may bind either, so both are made (two pipelines,
       * side by side on threads that are otherwise mostly idle). */
      add(w, n, ctx, k, 0, 0);
      add(w, n, ctx, k, 1, 0);
    }
  }
}

static void make_one(void *arg, int32_t i) {
  want *w = &((want *)arg)[i];
  const double t0 = tck_now_s();
  w->r = vk_pipeline_make(w->ctx, w->k, w->variant, w->mode, &w->k->pipelines[w->variant][w->mode]);
  w->seconds = tck_now_s() - t0;
}

tc_status vk_executable_prepare(tc_plugin_ctx *ctx, tc_executable *exe) {
  sizes s = {.n = exe->n_exprs};
  s.known = calloc((size_t)exe->n_exprs + 1, sizeof *s.known);
  s.vals = calloc((size_t)exe->n_exprs + 1, sizeof *s.vals);
  want *w = calloc((size_t)exe->n_kernels * 2 + 1, sizeof *w);
  if (!s.known || !s.vals || !w) {
    free(s.known);
    free(s.vals);
    free(w);
    return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan compile: out of memory");
  }
  for (int32_t i = 0; i < exe->n_exprs; i++) {
    const tc_size_expr *e = &exe->exprs[i];
    s.known[i] = e->op == TC_SX_CONST ||
                 (e->op != TC_SX_SYM && e->a >= 0 && e->a < i && e->b >= 0 && e->b < i && s.known[e->a] && s.known[e->b]);
  }
  tck_size_eval_all(exe->exprs, sizeof(tc_size_expr), exe->n_exprs, NULL, s.vals); /* symbols as 0: unread */
  int32_t n = 0;
  for (int32_t i = 0; i < exe->n_kernels; i++) kernel_wants(ctx, &s, &exe->kernels[i], w, &n);
  free(s.known);
  free(s.vals);
  double t0 = tck_now_s();
  int32_t threads = vk_parallel_run(n, make_one, w);
  double ms = (tck_now_s() - t0) * 1e3;
  tc_status st = TC_OK;
  int32_t made = 0, slowest = -1;
  for (int32_t i = 0; i < n; i++) {
    if (slowest < 0 || w[i].seconds > w[slowest].seconds) slowest = i;
    if (w[i].r == VK_SUCCESS) {
      made++;
    } else if (st == TC_OK) {
      char what[96];
      vk_variant_text(w[i].k, w[i].variant, w[i].mode, what, sizeof what);
      st = vk_err(ctx, TC_ERR_COMPILE, "vulkan compile '%s': creating the pipeline of kernel '%s' (%s) failed (%s)",
                  exe->name ? exe->name : "?", w[i].k->name, what, vk_result_name(w[i].r));
    }
  }
  if (made > 0) ctx->pipeline_cache_dirty = true;
  if (st == TC_OK && slowest >= 0) {
    char what[96];
    vk_variant_text(w[slowest].k, w[slowest].variant, w[slowest].mode, what, sizeof what);
    tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan: graph '%s': %d pipelines created in %.1f ms on %d threads (the slowest: "
            "kernel '%s' (%s), %.1f ms)", exe->name ? exe->name : "?", (int)n, ms, (int)threads, w[slowest].k->name, what,
            w[slowest].seconds * 1e3);
  }
  free(w);
  return st;
}
