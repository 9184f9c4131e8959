/* codegen_matmul.c — TC_KERNEL_MATMUL kernels: OpenBLAS GEMM on blocks of rows, each thread
 * running the fused epilogue over the block it just produced while it is still in cache (one
 * pass over C, no separate kernel). Threads come from our OpenMP team; OpenBLAS runs
 * single-threaded inside it, so the two thread pools never fight over the cores. */
#include <stdio.h>

#include "icpu.h"

static void buf_ptr(icpu_str *s, const icpu_kgen *g, int32_t b) {
  char name[80];
  kgen_buf_name(g->k, b, name, sizeof name);
  str_puts(s, name);
}

tc_status codegen_matmul(icpu_str *s, icpu_kgen *g, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = &k->matmul;
  if (mm->a < 0 || mm->a >= k->n_buffers || mm->b < 0 || mm->b >= k->n_buffers || mm->c < 0 || mm->c >= k->n_buffers) {
    snprintf(err, cap, "matmul operand buffers (%d, %d, %d) out of range (%d buffers)", mm->a, mm->b, mm->c, k->n_buffers);
    return TC_ERR_INVALID_ARGUMENT;
  }
  int32_t dt = TC_AT(tc_kbuffer, k->buffers, mm->a)->dtype;
  if (dt != TC_F32 && dt != TC_F64) {
    snprintf(err, cap, "matmul of %s is not supported (f32, f64)", dtype_c(dt));
    return TC_ERR_UNSUPPORTED;
  }
  /* Two batch levels (b2, b) when the host filled them: an outer batch loop around the batch. */
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const int32_t n_outer = two ? 4 : 3;
  if (k->n_ops > 0 && k->n_outer != n_outer) {
    snprintf(err, cap, "a matmul epilogue runs over (%sbatch, m, n): n_outer is %d, not %d", two ? "batch2, " : "",
             k->n_outer, n_outer);
    return TC_ERR_INVALID_ARGUMENT;
  }
  const int32_t ids[] = {mm->batch, mm->m, mm->n, mm->k, mm->a_offset, mm->a_stride_batch, mm->a_stride_m,
                         mm->a_stride_k, mm->b_offset, mm->b_stride_batch, mm->b_stride_k, mm->b_stride_n,
                         mm->c_offset, mm->c_stride_batch, mm->c_stride_m, mm->c_stride_n};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) expr_mark(&g->exprs, ids[i]);
  if (two) {
    const int32_t ids2[] = {mm->batch2, mm->a_stride_batch2, mm->b_stride_batch2, mm->c_stride_batch2};
    for (size_t i = 0; i < sizeof ids2 / sizeof ids2[0]; i++) expr_mark(&g->exprs, ids2[i]);
  }
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = TC_AT(tc_kop, k->ops, i);
    if (op->loop >= 0) { snprintf(err, cap, "op %d: a matmul epilogue has no inner loops", i); return TC_ERR_INVALID_ARGUMENT; }
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX ||
        op->kind == TC_KOP_RANDOM)
      expr_mark_index(&g->exprs, &op->index, k->n_outer + 1);
    if (op->index.indirect >= 0 && op->buffer >= 0 && op->buffer < k->n_buffers)
      expr_mark(&g->exprs, TC_AT(tc_kbuffer, k->buffers, op->buffer)->numel);
  }
  /* Loop variables: the epilogue's outer vars in order (batch2,) batch, m, n. */
  const char *vb2 = "i0", *vb = two ? "i1" : "i0", *vm = two ? "i2" : "i1", *vn = two ? "i3" : "i2";

  str_printf(s, "static void %s", g->fname);
  kgen_params(s, g);
  str_puts(s, " {\n");
  expr_emit_locals(s, &g->exprs, 1);
#define REF(id) expr_ref(s, &g->exprs, (id))
  str_puts(s, "  const int64_t B = "); REF(mm->batch);
  if (two) { str_puts(s, ", B2 = "); REF(mm->batch2); }
  str_puts(s, ", M = "); REF(mm->m);
  str_puts(s, ", N = "); REF(mm->n);
  str_puts(s, ", K = "); REF(mm->k);
  str_puts(s, ";\n");
  str_puts(s, two ? "  const int64_t NB = B2 * B; /* both batch levels, flattened into work items */\n"
                  : "  const int64_t NB = B;\n");
  str_puts(s, "  /* OpenBLAS runs single-threaded inside our threads (the host may have changed it). */\n");
  str_puts(s, "  openblas_set_num_threads(1);\n");
  str_puts(s, "  /* Work items: one batch entry and a block of its rows, enough to feed every thread. */\n");
  str_puts(s, "  int64_t mblocks = NB >= tc_nthreads ? 1 : (tc_nthreads + NB - 1) / (NB > 0 ? NB : 1);\n");
  str_puts(s, "  if (mblocks > M) mblocks = M > 0 ? M : 1;\n");
  str_puts(s, "  const int64_t items = NB * mblocks;\n");
  str_puts(s, "#pragma omp parallel for num_threads(tc_nthreads) schedule(static) if(items > 1 && M*N*K >= 262144)\n");
  str_puts(s, "  for (int64_t w = 0; w < items; w++) {\n");
  if (two) str_puts(s, "    const int64_t i0 = w / mblocks / B, i1 = w / mblocks % B, mb = w % mblocks;\n");
  else str_puts(s, "    const int64_t i0 = w / mblocks, mb = w % mblocks;\n");
  str_puts(s, "    const int64_t m0 = mb * M / mblocks, m1 = (mb + 1) * M / mblocks;\n");
  str_printf(s, "    tc_gemm_%s(m1 - m0, N, K,\n", dtype_suffix(dt));
  str_puts(s, "        "); buf_ptr(s, g, mm->a); str_puts(s, " + "); REF(mm->a_offset);
  if (two) { str_printf(s, " + %s*", vb2); REF(mm->a_stride_batch2); }
  str_printf(s, " + %s*", vb); REF(mm->a_stride_batch);
  str_puts(s, " + m0*"); REF(mm->a_stride_m); str_puts(s, ", "); REF(mm->a_stride_m); str_puts(s, ", "); REF(mm->a_stride_k);
  str_puts(s, ",\n        "); buf_ptr(s, g, mm->b); str_puts(s, " + "); REF(mm->b_offset);
  if (two) { str_printf(s, " + %s*", vb2); REF(mm->b_stride_batch2); }
  str_printf(s, " + %s*", vb); REF(mm->b_stride_batch); str_puts(s, ", "); REF(mm->b_stride_k); str_puts(s, ", "); REF(mm->b_stride_n);
  str_puts(s, ",\n        "); buf_ptr(s, g, mm->c); str_puts(s, " + "); REF(mm->c_offset);
  if (two) { str_printf(s, " + %s*", vb2); REF(mm->c_stride_batch2); }
  str_printf(s, " + %s*", vb); REF(mm->c_stride_batch); str_puts(s, " + m0*"); REF(mm->c_stride_m);
  str_puts(s, ", "); REF(mm->c_stride_m); str_puts(s, ", "); REF(mm->c_stride_n); str_puts(s, ");\n");
  if (k->n_ops > 0) {
    str_puts(s, "    /* The epilogue, over the rows this item just produced. */\n");
    str_printf(s, "    for (int64_t %s = m0; %s < m1; %s++) {\n", vm, vm, vm);
    bool simd = true;
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = TC_AT(tc_kop, k->ops, i);
      if (op->kind == TC_KOP_STORE_ADD || (op->kind == TC_KOP_STORE && op->index.indirect >= 0)) simd = false;
    }
    if (simd) str_puts(s, "#pragma omp simd\n");
    str_printf(s, "      for (int64_t %s = 0; %s < N; %s++) {\n", vn, vn, vn);
    icpu_str acc;
    str_init(&acc);
    buf_ptr(&acc, g, mm->c);
    str_puts(&acc, "[");
    expr_ref(&acc, &g->exprs, mm->c_offset);
    if (two) {
      str_printf(&acc, " + %s*", vb2);
      expr_ref(&acc, &g->exprs, mm->c_stride_batch2);
    }
    str_printf(&acc, " + %s*", vb);
    expr_ref(&acc, &g->exprs, mm->c_stride_batch);
    str_printf(&acc, " + %s*", vm);
    expr_ref(&acc, &g->exprs, mm->c_stride_m);
    str_printf(&acc, " + %s*", vn);
    expr_ref(&acc, &g->exprs, mm->c_stride_n);
    str_puts(&acc, "]");
    static const char *const vars1[] = {"i0", "i1", "i2", "r"}, *const vars2[] = {"i0", "i1", "i2", "i3", "r"};
    tc_status st = kgen_body(s, g, two ? vars2 : vars1, 4, false, acc.data, err, cap);
    str_free(&acc);
    if (st != TC_OK) return st;
    str_puts(s, "      }\n    }\n");
  }
  str_puts(s, "  }\n}\n");
#undef REF
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}
