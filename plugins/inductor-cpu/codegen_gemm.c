/* codegen_gemm.c — f32 TC_KERNEL_MATMUL kernels as the generated GEMM: the loops of a blocked
 * matrix product around the packing and micro-kernel of the plugin's GEMM runtime
 * (runtime/gemm_runtime.c, called through the prelude's section "gemm" of
 * prelude/tc_cpu_prelude.h), with the kernel's epilogue inside the innermost loop, run on each
 * tile as it leaves the micro-kernel: the product never makes a round trip through memory
 * between the GEMM and its bias, GELU or residual add. Work items (a batch entry, a block of
 * rows, a block of columns) are shared out by an OpenMP `for`, each packing its own blocks of B,
 * so no thread ever waits for another inside a kernel. */
#include <stdio.h>

#include "icpu.h"

/* "NAME + offset + i0*stride2 + i1*stride" (vb2 NULL with one batch level). */
static void entry_ptr(tck_str *s, icpu_kgen *g, int32_t buf, int32_t offset, const char *vb2, int32_t stride2,
                      const char *vb, int32_t stride) {
  matmul_buf_name(s, g, buf);
  tck_str_puts(s, " + ");
  tck_exprs_ref(s, &g->exprs, offset);
  if (vb2) {
    tck_str_printf(s, " + %s*", vb2);
    tck_exprs_ref(s, &g->exprs, stride2);
  }
  tck_str_printf(s, " + %s*", vb);
  tck_exprs_ref(s, &g->exprs, stride);
}

/* `const int64_t NAME = <expr>` for each stride the loops use, so they read as names. */
static void stride_names(tck_str *s, icpu_kgen *g, const tc_matmul_desc *mm) {
  const struct {
    const char *name;
    int32_t id;
  } st[] = {{"tc_sam", mm->a_stride_m}, {"tc_sak", mm->a_stride_k}, {"tc_sbk", mm->b_stride_k},
            {"tc_sbn", mm->b_stride_n}, {"tc_scm", mm->c_stride_m}, {"tc_scn", mm->c_stride_n}};
  tck_str_puts(s, "  const int64_t ");
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
    tck_str_printf(s, "%s%s = ", i ? ", " : "", st[i].name);
    tck_exprs_ref(s, &g->exprs, st[i].id);
  }
  tck_str_puts(s, ";\n");
}

bool gemm_takes(const tc_kernel_desc *k) {
  return k->kind == TC_KERNEL_MATMUL && k->matmul && tck_kernel_buffer(k, k->matmul->a)->dtype == TC_F32;
}

tc_status codegen_gemm(tck_str *s, icpu_kgen *g, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul; /* present, its buffers in range, f32: validated, gemm_takes */
  /* Two batch levels (b2, b) when the host filled them: items run over both. */
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const int32_t ids[] = {mm->batch, mm->m, mm->n, mm->k, mm->a_offset, mm->a_stride_batch, mm->a_stride_m,
                         mm->a_stride_k, mm->b_offset, mm->b_stride_batch, mm->b_stride_k, mm->b_stride_n,
                         mm->c_offset, mm->c_stride_batch, mm->c_stride_m, mm->c_stride_n};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) tck_exprs_mark(&g->exprs, ids[i]);
  if (two) {
    const int32_t ids2[] = {mm->batch2, mm->a_stride_batch2, mm->b_stride_batch2, mm->c_stride_batch2};
    for (size_t i = 0; i < sizeof ids2 / sizeof ids2[0]; i++) tck_exprs_mark(&g->exprs, ids2[i]);
  }
  bool simd = true; /* the epilogue's loop over a tile row vectorizes unless it scatters */
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->loop >= 0) {
      snprintf(err, cap, "op %d: a matmul epilogue has no inner loops", i);
      return TC_ERR_INVALID_ARGUMENT;
    }
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX ||
        op->kind == TC_KOP_RANDOM)
      tck_exprs_mark_index(&g->exprs, op->index);
    if ((op->index ? op->index->indirect : -1) >= 0 && op->buffer >= 0 && op->buffer < k->n_buffers)
      tck_exprs_mark(&g->exprs, tck_kernel_buffer(k, op->buffer)->numel);
    if (op->kind == TC_KOP_STORE_ADD || (op->kind == TC_KOP_STORE && (op->index ? op->index->indirect : -1) >= 0))
      simd = false;
  }
  /* The epilogue's outer vars in order: (batch2,) batch, m, n. */
  const char *vb2 = two ? "i0" : NULL, *vb = two ? "i1" : "i0", *vm = two ? "i2" : "i1", *vn = two ? "i3" : "i2";
  const bool epilogue = k->n_ops > 0;

  matmul_prologue(s, g, mm, two);
#define REF(id) tck_exprs_ref(s, &g->exprs, (id))
  stride_names(s, g, mm);
  tck_str_puts(s, "  /* Work items: a batch entry, a block of its rows and a block of its columns (prelude: gemm). */\n");
  tck_str_puts(s, "  const tc_gemm_split tc_sp = tc_gemm_split_f32(NB, M, N, tc_nthreads);\n");
  tck_str_printf(s, "#pragma omp parallel for num_threads(tc_nthreads) schedule(static) if(tc_sp.items > 1 && M*N*K >= %d)\n",
                 ICPU_PAR_MIN_MNK);
  tck_str_puts(s, "  for (int64_t w = 0; w < tc_sp.items; w++) {\n");
  tck_str_puts(s, "    const int64_t tc_e = w / (tc_sp.row_blocks * tc_sp.col_blocks), tc_p = w % (tc_sp.row_blocks * tc_sp.col_blocks);\n");
  if (two) tck_str_puts(s, "    const int64_t i0 = tc_e / B, i1 = tc_e % B;\n");
  else tck_str_puts(s, "    const int64_t i0 = tc_e;\n");
  tck_str_puts(s, "    int64_t tc_m0, tc_m1, tc_n0, tc_n1;\n");
  tck_str_puts(s, "    tc_gemm_part(M, TC_GEMM_MR, tc_sp.row_blocks, tc_p / tc_sp.col_blocks, &tc_m0, &tc_m1);\n");
  tck_str_puts(s, "    tc_gemm_part(N, TC_GEMM_NR, tc_sp.col_blocks, tc_p % tc_sp.col_blocks, &tc_n0, &tc_n1);\n");
  tck_str_puts(s, "    /* This batch entry's A, B and C. */\n");
  tck_str_puts(s, "    const float *tc_a = ");
  entry_ptr(s, g, mm->a, mm->a_offset, vb2, mm->a_stride_batch2, vb, mm->a_stride_batch);
  tck_str_puts(s, ";\n    const float *tc_b = ");
  entry_ptr(s, g, mm->b, mm->b_offset, vb2, mm->b_stride_batch2, vb, mm->b_stride_batch);
  tck_str_puts(s, ";\n    float *tc_c = ");
  entry_ptr(s, g, mm->c, mm->c_offset, vb2, mm->c_stride_batch2, vb, mm->c_stride_batch);
  tck_str_puts(s, ";\n");
  tck_str_puts(s, "    tc_gemm_ws tc_g; /* its packed blocks and tile */\n");
  tck_str_puts(s, "    tc_gemm_ws_init(&tc_g, tc_m1 - tc_m0, tc_n1 - tc_n0, K);\n");
  tck_str_puts(s, "    const int tc_direct = tc_gemm_direct(tc_m1 - tc_m0, tc_sbn); /* a few rows: B read in place */\n");
  tck_str_puts(s, "    for (int64_t tc_ic = tc_m0; tc_ic < tc_m1; tc_ic += tc_g.mc_max) { /* blocks of A's rows */\n");
  tck_str_puts(s, "      const int64_t tc_mc = tc_m1 - tc_ic < tc_g.mc_max ? tc_m1 - tc_ic : tc_g.mc_max;\n");
  tck_str_puts(s, "      for (int64_t tc_pc = 0; tc_pc == 0 || tc_pc < K; tc_pc += tc_g.kc_max) { /* blocks of K */\n");
  tck_str_puts(s, "        const int64_t tc_kc = K - tc_pc < tc_g.kc_max ? K - tc_pc : tc_g.kc_max;\n");
  if (epilogue) tck_str_puts(s, "        const int tc_last = tc_pc + tc_kc >= K;\n");
  tck_str_puts(s, "        tc_gemm_block_a(&tc_g, tc_a + tc_ic*tc_sam + tc_pc*tc_sak, tc_sam, tc_sak, tc_mc, tc_kc);\n");
  tck_str_puts(s, "        for (int64_t tc_jc = tc_n0; tc_jc < tc_n1; tc_jc += tc_g.nc_max) { /* blocks of B's columns */\n");
  tck_str_puts(s, "          const int64_t tc_nc = tc_n1 - tc_jc < tc_g.nc_max ? tc_n1 - tc_jc : tc_g.nc_max;\n");
  tck_str_puts(s, "          tc_gemm_block_b(&tc_g, tc_b + tc_pc*tc_sbk + tc_jc*tc_sbn, tc_sbk, tc_sbn, tc_nc, tc_direct);\n");
  tck_str_puts(s, "          const int64_t tc_cols = tc_gemm_tile_cols(&tc_g, tc_mc); /* NR; a lone row takes more */\n");
  tck_str_puts(s, "          for (int64_t tc_i = tc_ic; tc_i < tc_ic + tc_mc; tc_i += TC_GEMM_MR) { /* micro-panels of A */\n");
  tck_str_puts(s, "            const int64_t tc_mr = tc_ic + tc_mc - tc_i < TC_GEMM_MR ? tc_ic + tc_mc - tc_i : TC_GEMM_MR;\n");
  tck_str_puts(s, "            for (int64_t tc_j = tc_jc; tc_j < tc_jc + tc_nc; tc_j += tc_cols) { /* tiles */\n");
  tck_str_puts(s, "              const int64_t tc_nr = tc_jc + tc_nc - tc_j < tc_cols ? tc_jc + tc_nc - tc_j : tc_cols;\n");
  tck_str_printf(s,
                 "              tc_gemm_tile_f32(&tc_g, tc_i - tc_ic, tc_j - tc_jc, tc_mr, tc_nr, tc_c + tc_i*tc_scm + tc_j*tc_scn, "
                 "tc_scm, tc_scn, tc_pc == 0, %s);\n",
                 epilogue ? "tc_last" : "0");
  if (epilogue) {
    tck_str_puts(s, "              if (!tc_last) continue;\n");
    tck_str_puts(s, "              /* The epilogue, on the tile in tc_g.t while it is in L1. */\n");
    tck_str_printf(s, "              for (int64_t %s = tc_i; %s < tc_i + tc_mr; %s++) {\n", vm, vm, vm);
    if (simd) tck_str_puts(s, "#pragma omp simd\n");
    tck_str_printf(s, "                for (int64_t %s = tc_j; %s < tc_j + tc_nr; %s++) {\n", vn, vn, vn);
    char acc[128];
    snprintf(acc, sizeof acc, "tc_g.t[(%s - tc_i)*TC_GEMM_NR + (%s - tc_j)]", vm, vn);
    static const char *const vars1[] = {"i0", "i1", "i2", "r"}, *const vars2[] = {"i0", "i1", "i2", "i3", "r"};
    tc_status st = kgen_body(s, g, two ? vars2 : vars1, 9, false, acc, err, cap);
    if (st != TC_OK) return st;
    tck_str_puts(s, "                }\n              }\n");
  }
  tck_str_puts(s, "            }\n          }\n        }\n      }\n    }\n");
  tck_str_puts(s, "    tc_gemm_ws_free(&tc_g);\n  }\n}\n");
#undef REF
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}
