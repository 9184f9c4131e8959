/* launch.c — one kernel of an executable, queued on the context's stream; returns once queued.
 *
 * The size expressions are evaluated with the call's symbols, one icuda_args is filled (a
 * device pointer per buffer, byte offset applied; the symbols), and the grid comes from the
 * plan:
 *   POINTS: blocks = min(ceil(points / block), max_blocks or 32 x SMs), grid-stride beyond;
 *   ROWS:   blocks = ceil(rows / rows_per_block) (a block per row group: rows_per_block rows
 *           at a time, 1 or its warps), capped only by max_blocks when the plan sets one
 *           (grid-stride over row groups beyond it);
 *   MATMUL: cuBLASLt (blaslt.c) writes the product, then the epilogue (if any) as POINTS over
 *           the kernel's outer domain; or the generated GEMM does both (gemm.c: cuda.gemm,
 *           and under auto whether cuBLASLt has loaded yet).
 * An empty domain launches nothing. The kernel's one parameter is the icuda_args struct by
 * value: cuLaunchKernel copies it when queuing, so a stack copy is enough. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

static uint64_t outer_points(const icuda_kernel *k, const int64_t *vals) {
  uint64_t n = 1;
  for (int32_t d = 0; d < k->n_outer; d++) {
    int64_t v = k->outer[d] >= 0 ? vals[k->outer[d]] : 1;
    if (v <= 0) return 0;
    n *= (uint64_t)v;
  }
  return n;
}

/* An early launch (sm_90's programmatic dependent launch) lets the kernel's blocks start while
 * the kernel before it on the stream runs its last ones, instead of after it has drained: the
 * launch latency and the block scheduling overlap that tail (a few µs a kernel boundary,
 * which is most of what back-to-back row kernels lose against a copy). It is safe for any
 * kernel before it: every generated kernel begins with `griddepcontrol.wait` (cg_prologue),
 * which returns once the kernel before has completed and its writes are visible, so no memory
 * access moves; and `griddepcontrol.launch_dependents` right after, so the next kernel may be
 * scheduled as soon as this one's blocks have all started. A kernel that is not ours (cuBLASLt's)
 * neither waits nor triggers early: the stream orders it as always. Graphs are recorded with
 * ordinary launches (their replay has no launch latency to hide). */
CUresult icuda_launch_kernel(tc_plugin_ctx *ctx, CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned block,
                             unsigned smem, void **params) {
  if (!ctx->early_launch || ctx->capturing)
    return ctx->cu->cuLaunchKernel(fn, gx, gy, gz, block, 1, 1, smem, ctx->stream, params, NULL);
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = gx, cfg.gridDimY = gy, cfg.gridDimZ = gz;
  cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.sharedMemBytes = smem;
  cfg.hStream = ctx->stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return ctx->cu->cuLaunchKernelEx(&cfg, fn, params, NULL);
}

static tc_error *launch_fn(tc_plugin_ctx *ctx, const icuda_kernel *k, uint64_t blocks, icuda_args *args) {
  void *params[] = {args};
  CUresult r = icuda_launch_kernel(ctx, k->fn, (unsigned)blocks, 1, 1, (unsigned)k->plan.block, (unsigned)k->plan.smem_bytes,
                                   params);
  if (r == CUDA_SUCCESS) return NULL;
  /* a sticky failure of earlier work shows here first: it is that work's asynchronous failure */
  if (icuda_cu_is_device_failure(r)) return icuda_stream_wait(ctx, "launch");
  return icuda_cu_error(ctx, r, "cuLaunchKernel", "launch '%s' (%s: grid %llu, block %d, %d bytes of shared memory)", k->name,
                        k->plan.name, (unsigned long long)blocks, (int)k->plan.block, (int)k->plan.smem_bytes);
}

tc_error *icuda_launch_points(tc_plugin_ctx *ctx, const icuda_kernel *k, uint64_t points, icuda_args *args) {
  if (points == 0) return NULL;
  uint64_t block = (uint64_t)k->plan.block;
  uint64_t cap = k->plan.max_blocks > 0 ? (uint64_t)k->plan.max_blocks : 32u * (uint64_t)(ctx->facts.n_sms > 0 ? ctx->facts.n_sms : 1);
  uint64_t blocks = (points + block - 1) / block;
  if (blocks > cap) blocks = cap;
  if (blocks > INT32_MAX) blocks = INT32_MAX;
  return launch_fn(ctx, k, blocks, args);
}

static tc_error *launch_rows(tc_plugin_ctx *ctx, const icuda_kernel *k, uint64_t rows, icuda_args *args) {
  if (rows == 0) return NULL;
  uint64_t cap = k->plan.max_blocks > 0 ? (uint64_t)k->plan.max_blocks : INT32_MAX;
  uint64_t per = k->plan.rows_per_block > 1 ? (uint64_t)k->plan.rows_per_block : 1u;
  uint64_t groups = rows / per + (rows % per != 0);
  uint64_t blocks = groups < cap ? groups : cap;
  if (blocks > INT32_MAX) blocks = INT32_MAX;
  return launch_fn(ctx, k, blocks, args);
}

/* Every expression of exe, evaluated with syms, into vals. */
static tc_error *eval_sizes(tc_plugin_ctx *ctx, const tc_executable *exe, const tc_launch_args *a, int64_t *vals) {
  if (exe->n_syms > 0 && (!a->syms || a->n_syms < exe->n_syms))
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda launch '%s': the graph has %d symbols, the call gives %d",
                     exe->name, (int)exe->n_syms, a->syms ? (int)a->n_syms : 0);
  for (int32_t i = 0; i < exe->n_exprs; i++)
    if (exe->exprs[i].op == TC_SX_SYM && (exe->exprs[i].value < 0 || exe->exprs[i].value >= exe->n_syms))
      return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda launch '%s': expression %d names symbol %lld of %d",
                       exe->name, (int)i, (long long)exe->exprs[i].value, (int)exe->n_syms);
  tck_size_eval_all(exe->exprs, sizeof(tc_size_expr), exe->n_exprs, a->syms, vals);
  return NULL;
}

/* One device pointer per buffer (byte offset applied), each range checked against what the
 * kernel may touch (numel elements). */
static tc_error *fill_args(tc_plugin_ctx *ctx, const tc_executable *exe, const icuda_kernel *k, const tc_launch_args *a,
                           const int64_t *vals, icuda_args *args) {
  memset(args, 0, sizeof *args);
  if (a->n_args < k->n_buffers || (k->n_buffers > 0 && !a->args))
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda launch '%s': %d args for %d buffers", k->name,
                     (int)a->n_args, (int)k->n_buffers);
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_buffer_arg *ba = TC_ELEM(tc_buffer_arg, a->args, a->arg_size, i);
    int64_t n = k->numel[i] >= 0 && k->numel[i] < exe->n_exprs ? vals[k->numel[i]] : 0;
    if (n < 0) n = 0;
    const tc_buffer *b = ba->buffer;
    uint64_t need = (uint64_t)n * (uint64_t)k->elem_size[i];
    if (need > 0 && (!b || ba->byte_offset > b->size || need > b->size - ba->byte_offset))
      return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT,
                       "inductor-cuda launch '%s': buffer %d holds %zu bytes; the kernel needs %lld elements of %d bytes "
                       "from byte %zu",
                       k->name, (int)i, b ? b->size : (size_t)0, (long long)n, (int)k->elem_size[i], ba->byte_offset);
    args->buf[i] = b ? (void *)(uintptr_t)(b->ptr + ba->byte_offset) : NULL;
  }
  for (int32_t s = 0; s < exe->n_syms; s++) args->s[s] = (long long)a->syms[s];
  return NULL;
}

tc_error *icuda_launch(tc_plugin_ctx *ctx, const tc_launch_args *a) {
  tc_executable *exe = a->exe;
  if (!exe || a->kernel < 0 || a->kernel >= exe->n_kernels)
    return tck_error(ctx->host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda launch: kernel %d out of range (%d kernels)",
                     (int)a->kernel, exe ? (int)exe->n_kernels : 0);
  icuda_kernel *k = &exe->kernels[a->kernel];
  /* a kernel's first launch may load code (cuBLASLt's kernels load lazily): TC_LOGS=init times it */
  const double t_first = k->launched ? 0 : tck_now_s();
  int64_t local[256];
  int64_t *vals = exe->n_exprs <= 256 ? local : malloc(sizeof(int64_t) * (size_t)exe->n_exprs);
  if (!vals) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda launch: out of memory");
  icuda_args args;
  tc_error *e = eval_sizes(ctx, exe, a, vals);
  if (!e) e = fill_args(ctx, exe, k, a, vals, &args);
  if (ctx->dry_run) { /* graphs.c, before a capture: only cuBLASLt's algorithm is chosen */
    bool unused;
    if (!e && k->kind == TC_KERNEL_MATMUL && !k->plan.inline_product && !icuda_gemm_wanted(ctx, exe, k, a->call_id))
      e = icuda_blaslt_matmul(ctx, exe, k, vals, &args, &unused);
    if (vals != local) free(vals);
    return e;
  }
  bool queued = false;
  bool timed = !e && icuda_profile_begin(ctx);
  if (!e) {
    switch (k->plan.kind) {
    case ICUDA_LAUNCH_POINTS: {
      uint64_t points = outer_points(k, vals);
      e = icuda_launch_points(ctx, k, points, &args);
      queued = points > 0;
      break;
    }
    case ICUDA_LAUNCH_ROWS: {
      uint64_t rows = outer_points(k, vals);
      e = launch_rows(ctx, k, rows, &args);
      queued = rows > 0;
      break;
    }
    case ICUDA_LAUNCH_ATTENTION: {
      /* a block per plan.attn_queries queries of each head */
      const tc_attention_desc *at = &k->attn;
      uint64_t tq = (uint64_t)(vals[at->tq] > 0 ? vals[at->tq] : 0);
      uint64_t heads = (uint64_t)(vals[at->batch] > 0 ? vals[at->batch] : 0);
      if (at->batch2 >= 0) heads *= (uint64_t)(vals[at->batch2] > 0 ? vals[at->batch2] : 0);
      uint64_t per = (uint64_t)(k->plan.attn_queries > 0 ? k->plan.attn_queries : 64);
      uint64_t blocks = (tq + per - 1) / per * heads;
      queued = blocks > 0;
      if (blocks > INT32_MAX)
        e = tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda launch '%s': %llu attention blocks", k->name,
                      (unsigned long long)blocks);
      else if (queued)
        e = launch_fn(ctx, k, blocks, &args);
      break;
    }
    case ICUDA_LAUNCH_MATMUL:
    {
      bool epilogue_done = false; /* cuBLASLt (blaslt_epilogue.c) or the generated GEMM ran the epilogue too */
      if (!k->plan.inline_product && icuda_gemm_wanted(ctx, exe, k, a->call_id)) {
        e = icuda_gemm_launch(ctx, k, vals, &args);
        epilogue_done = true;
      } else if (!k->plan.inline_product) {
        e = icuda_blaslt_matmul(ctx, exe, k, vals, &args, &epilogue_done);
      }
      queued = true;
      /* an inline product takes a warp per element of the product */
      if (!e && k->plan.has_epilogue && !epilogue_done)
        e = icuda_launch_points(ctx, k, outer_points(k, vals) * (k->plan.inline_product ? 32u : 1u), &args);
      break;
    }
    default:
      e = tck_error(ctx->host, TC_ERR_INTERNAL, "inductor-cuda launch '%s': plan kind %d", k->name, (int)k->plan.kind);
    }
  }
  if (vals != local) free(vals);
  if (timed && !e) icuda_profile_end(ctx, k);
  if (!k->launched && !e) {
    k->launched = true;
    tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: first launch of '%s': %.2f ms on the host", k->name,
            (tck_now_s() - t_first) * 1e3);
  }
  if (e || !queued) return e;
  ctx->pending = true;
  ctx->pending_call = a->call_id;
  if (ctx->sync_launches) return icuda_stream_wait(ctx, "launch (cuda.sync_launches)");
  return NULL;
}
