/* codegen_matmul.c — TC_KERNEL_MATMUL kernels: OpenBLAS GEMM on blocks of rows, each thread
 * running the fused epilogue over the block it just produced while it is still in cache (one
 * pass over C, no separate kernel). Threads come from our OpenMP team; OpenBLAS runs
 * single-threaded inside it, so the two thread pools never fight over the cores. */
#include <stdio.h>

#include "icpu.h"

void matmul_buf_name(tck_str *s, const icpu_kgen *g, int32_t b) {
  char name[80];
  kgen_buf_name(g->k, b, name, sizeof name);
  tck_str_puts(s, name);
}

void matmul_prologue(tck_str *s, icpu_kgen *g, const tc_matmul_desc *mm, bool two) {
  tck_str_printf(s, "static void %s", g->fname);
  kgen_params(s, g);
  tck_str_puts(s, " {\n");
  tck_exprs_declare(s, &g->exprs, 1);
  tck_str_puts(s, "  const int64_t B = ");
  tck_exprs_ref(s, &g->exprs, mm->batch);
  if (two) {
    tck_str_puts(s, ", B2 = ");
    tck_exprs_ref(s, &g->exprs, mm->batch2);
  }
  tck_str_puts(s, ", M = ");
  tck_exprs_ref(s, &g->exprs, mm->m);
  tck_str_puts(s, ", N = ");
  tck_exprs_ref(s, &g->exprs, mm->n);
  tck_str_puts(s, ", K = ");
  tck_exprs_ref(s, &g->exprs, mm->k);
  tck_str_puts(s, ";\n");
  tck_str_puts(s, two ? "  const int64_t NB = B2 * B; /* both batch levels, flattened into work items */\n"
                      : "  const int64_t NB = B;\n");
}

tc_status codegen_matmul(tck_str *s, icpu_kgen *g, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul; /* present, its buffers in range: validated */
  int32_t dt = tck_kernel_buffer(k, mm->a)->dtype;
  if (dt != TC_F32 && dt != TC_F64) {
    snprintf(err, cap, "matmul of %s is not supported (f32, f64)", tck_dtype_name(dt));
    return TC_ERR_UNSUPPORTED;
  }
  /* Two batch levels (b2, b) when the host filled them: an outer batch loop around the batch. */
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  tck_exprs_mark_matmul(&g->exprs, mm);
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->loop >= 0) { snprintf(err, cap, "op %d: a matmul epilogue has no inner loops", i); return TC_ERR_INVALID_ARGUMENT; }
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX ||
        op->kind == TC_KOP_RANDOM)
      tck_exprs_mark_index(&g->exprs, op->index);
    if ((op->index ? op->index->indirect : -1) >= 0 && op->buffer >= 0 && op->buffer < k->n_buffers)
      tck_exprs_mark(&g->exprs, tck_kernel_buffer(k, op->buffer)->numel);
  }
  /* Loop variables: the epilogue's outer vars in order (batch2,) batch, m, n. */
  const char *vb2 = "i0", *vb = two ? "i1" : "i0", *vm = two ? "i2" : "i1", *vn = two ? "i3" : "i2";

  matmul_prologue(s, g, mm, two);
#define REF(id) tck_exprs_ref(s, &g->exprs, (id))
  tck_str_puts(s, "  /* OpenBLAS runs single-threaded inside our threads (the host may have changed it). */\n");
  tck_str_puts(s, "  openblas_set_num_threads(1);\n");
  tck_str_puts(s, "  /* Work items: one batch entry and a block of its rows, enough to feed every thread. */\n");
  tck_str_puts(s, "  int64_t mblocks = NB >= tc_nthreads ? 1 : (tc_nthreads + NB - 1) / (NB > 0 ? NB : 1);\n");
  tck_str_puts(s, "  if (mblocks > M) mblocks = M > 0 ? M : 1;\n");
  tck_str_puts(s, "  const int64_t items = NB * mblocks;\n");
  tck_str_printf(s, "#pragma omp parallel for num_threads(tc_nthreads) schedule(static) if(items > 1 && M*N*K >= %d)\n",
                 ICPU_PAR_MIN_MNK);
  tck_str_puts(s, "  for (int64_t w = 0; w < items; w++) {\n");
  if (two) tck_str_puts(s, "    const int64_t i0 = w / mblocks / B, i1 = w / mblocks % B, mb = w % mblocks;\n");
  else tck_str_puts(s, "    const int64_t i0 = w / mblocks, mb = w % mblocks;\n");
  tck_str_puts(s, "    const int64_t m0 = mb * M / mblocks, m1 = (mb + 1) * M / mblocks;\n");
  tck_str_printf(s, "    tc_gemm_%s(m1 - m0, N, K,\n", tck_dtype_name(dt));
  tck_str_puts(s, "        "); matmul_buf_name(s, g, mm->a); tck_str_puts(s, " + "); REF(mm->a_offset);
  if (two) { tck_str_printf(s, " + %s*", vb2); REF(mm->a_stride_batch2); }
  tck_str_printf(s, " + %s*", vb); REF(mm->a_stride_batch);
  tck_str_puts(s, " + m0*"); REF(mm->a_stride_m); tck_str_puts(s, ", "); REF(mm->a_stride_m); tck_str_puts(s, ", "); REF(mm->a_stride_k);
  tck_str_puts(s, ",\n        "); matmul_buf_name(s, g, mm->b); tck_str_puts(s, " + "); REF(mm->b_offset);
  if (two) { tck_str_printf(s, " + %s*", vb2); REF(mm->b_stride_batch2); }
  tck_str_printf(s, " + %s*", vb); REF(mm->b_stride_batch); tck_str_puts(s, ", "); REF(mm->b_stride_k); tck_str_puts(s, ", "); REF(mm->b_stride_n);
  tck_str_puts(s, ",\n        "); matmul_buf_name(s, g, mm->c); tck_str_puts(s, " + "); REF(mm->c_offset);
  if (two) { tck_str_printf(s, " + %s*", vb2); REF(mm->c_stride_batch2); }
  tck_str_printf(s, " + %s*", vb); REF(mm->c_stride_batch); tck_str_puts(s, " + m0*"); REF(mm->c_stride_m);
  tck_str_puts(s, ", "); REF(mm->c_stride_m); tck_str_puts(s, ", "); REF(mm->c_stride_n); tck_str_puts(s, ");\n");
  if (k->n_ops > 0) {
    tck_str_puts(s, "    /* The epilogue, over the rows this item just produced. */\n");
    tck_str_printf(s, "    for (int64_t %s = m0; %s < m1; %s++) {\n", vm, vm, vm);
    bool simd = true;
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = tck_kernel_op(k, i);
      if (op->kind == TC_KOP_STORE_ADD || (op->kind == TC_KOP_STORE && (op->index ? op->index->indirect : -1) >= 0)) simd = false;
    }
    if (simd) tck_str_puts(s, "#pragma omp simd\n");
    tck_str_printf(s, "      for (int64_t %s = 0; %s < N; %s++) {\n", vn, vn, vn);
    tck_str acc = {0};
    matmul_buf_name(&acc, g, mm->c);
    tck_str_puts(&acc, "[");
    tck_exprs_ref(&acc, &g->exprs, mm->c_offset);
    if (two) {
      tck_str_printf(&acc, " + %s*", vb2);
      tck_exprs_ref(&acc, &g->exprs, mm->c_stride_batch2);
    }
    tck_str_printf(&acc, " + %s*", vb);
    tck_exprs_ref(&acc, &g->exprs, mm->c_stride_batch);
    tck_str_printf(&acc, " + %s*", vm);
    tck_exprs_ref(&acc, &g->exprs, mm->c_stride_m);
    tck_str_printf(&acc, " + %s*", vn);
    tck_exprs_ref(&acc, &g->exprs, mm->c_stride_n);
    tck_str_puts(&acc, "]");
    static const char *const vars1[] = {"i0", "i1", "i2", "r"}, *const vars2[] = {"i0", "i1", "i2", "i3", "r"};
    tc_status st = kgen_body(s, g, two ? vars2 : vars1, 4, false, acc.data, err, cap);
    tck_str_free(&acc);
    if (st != TC_OK) return st;
    tck_str_puts(s, "      }\n    }\n");
  }
  tck_str_puts(s, "  }\n}\n");
#undef REF
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}
