/* codegen_attention.c — TC_KERNEL_ATTENTION kernels as fused attention on CPU: the T x T scores
 * and probabilities never reach memory (the unfused graph writes them, reads them back for the
 * softmax, writes the probabilities and reads them again for p·v).
 *
 * A work item is a (batch2, batch) head and a run of its query blocks (the whole head while
 * there are four heads a thread; OpenMP's dynamic schedule hands them out, the heaviest runs
 * first, those of the last queries under a causal mask). An item packs the keys its last query
 * may see, transposed, and their values, once (L2-sized at attn_block's T), then runs each
 * block of TC_ATTN_R queries over them in tiles of TC_ATTN_BK keys (the prelude's attention
 * section: register-blocked q·kᵀ, mask, online softmax, p·v). The head sizes are constants of
 * the unit, so the compiler sees every inner loop's length. */
#include <stdio.h>

#include "icpu.h"

/* "  const int64_t name = <expr>;" (0 for an absent expr: a missing batch2 level) */
static void def(tck_str *s, icpu_kgen *g, const char *name, int32_t id) {
  tck_str_printf(s, "  const int64_t %s = ", name);
  if (id >= 0) tck_exprs_ref(s, &g->exprs, id);
  else tck_str_puts(s, "0");
  tck_str_puts(s, ";\n");
}

/* The constant an expr id names, or 0. */
static int64_t const_of(const tc_kernel_list *list, int32_t id) {
  const tc_size_expr *e = id >= 0 && id < list->n_exprs ? tck_list_expr(list, id) : NULL;
  return e && e->op == TC_SX_CONST ? e->value : 0;
}

tc_status codegen_attention(tck_str *s, icpu_kgen *g, char *err, size_t cap) {
  const tc_attention_desc *a = g->k->attention; /* present, f32, buffers in range: validated */
  const int64_t d = const_of(g->list, a->d), dv = const_of(g->list, a->dv);
  if (d < 1 || d > 256 || dv < 1 || dv > 256) {
    snprintf(err, cap, "attention head sizes must be constants in 1..256 (d %lld, dv %lld)", (long long)d,
             (long long)dv);
    return TC_ERR_UNSUPPORTED;
  }
  const bool two = a->batch2 >= 0;
  tck_exprs_mark_attention(&g->exprs, a);
  char qn[80], kn[80], vn[80], on[80];
  kgen_buf_name(g->k, a->q, qn, sizeof qn);
  kgen_buf_name(g->k, a->k, kn, sizeof kn);
  kgen_buf_name(g->k, a->v, vn, sizeof vn);
  kgen_buf_name(g->k, a->o, on, sizeof on);

  tck_str_printf(s, "/* fused attention: %lld-dim queries and keys, %lld-dim values, scale %.9g; %s */\n", (long long)d,
                 (long long)dv, a->scale,
                 a->causal ? "key j of query i masked when j - i >= causal_offset" : "no mask");
  tck_str_printf(s, "static void %s", g->fname);
  kgen_params(s, g);
  tck_str_puts(s, " {\n");
  tck_exprs_declare(s, &g->exprs, 1);
  tck_str_printf(s, "  enum { D = %lld, DV = %lld, DVP = (DV + 2 * TC_VL - 1) / (2 * TC_VL) * (2 * TC_VL) /* DV in pairs of vectors */ };\n",
                 (long long)d, (long long)dv);
  if (two) def(s, g, "heads2", a->batch2);
  else tck_str_puts(s, "  const int64_t heads2 = 1;\n");
  def(s, g, "heads", a->batch);
  def(s, g, "tq", a->tq);
  def(s, g, "tk", a->tk);
  static const char *const names[4][5] = {{"q_off", "q_sb2", "q_sb", "q_st", "q_sd"},
                                          {"k_off", "k_sb2", "k_sb", "k_st", "k_sd"},
                                          {"v_off", "v_sb2", "v_sb", "v_st", "v_sd"},
                                          {"o_off", "o_sb2", "o_sb", "o_st", "o_sd"}};
  const int32_t strides[4][5] = {{a->q_offset, a->q_stride_batch2, a->q_stride_batch, a->q_stride_t, a->q_stride_d},
                                 {a->k_offset, a->k_stride_batch2, a->k_stride_batch, a->k_stride_t, a->k_stride_d},
                                 {a->v_offset, a->v_stride_batch2, a->v_stride_batch, a->v_stride_t, a->v_stride_d},
                                 {a->o_offset, a->o_stride_batch2, a->o_stride_batch, a->o_stride_t, a->o_stride_d}};
  for (int t = 0; t < 4; t++)
    for (int f = 0; f < 5; f++) def(s, g, names[t][f], f == 1 && !two ? -1 : strides[t][f]);
  tck_str_printf(s,
                 "  const float scale = %.9gf;\n"
                 "  const int causal = %d;\n"
                 "  const int64_t causal_offset = %lldLL;\n",
                 a->scale, a->causal ? 1 : 0, (long long)a->causal_offset);
  tck_str_printf(s,
      "  const int64_t n_heads = heads2 * heads, blocks = (tq + TC_ATTN_R - 1) / TC_ATTN_R;\n"
      "  const int64_t runs = tc_attn_runs(n_heads, blocks, tc_nthreads), items = n_heads * runs;\n"
      "#pragma omp parallel num_threads(tc_nthreads) if(items > 1 && n_heads * tq * tk * (D + DV) >= %d)\n"
      "  {\n"
      "    tc_attn_ws ws = {0}; /* this thread's packed keys and values */\n"
      "#pragma omp for schedule(dynamic, 1)\n"
      "    for (int64_t w = 0; w < items; w++) {\n"
      "      const int64_t run = runs - 1 - w / n_heads, h = w %% n_heads; /* the last queries' runs first */\n"
      "      const int64_t b2 = h / heads, b = h %% heads;\n"
      "      const int64_t blk0 = run * blocks / runs, blk1 = (run + 1) * blocks / runs;\n"
      "      if (blk0 == blk1) continue;\n"
      "      const float *qh = %s + q_off + b2 * q_sb2 + b * q_sb;\n"
      "      const float *kh = %s + k_off + b2 * k_sb2 + b * k_sb;\n"
      "      const float *vh = %s + v_off + b2 * v_sb2 + b * v_sb;\n"
      "      float *oh = %s + o_off + b2 * o_sb2 + b * o_sb;\n",
      ICPU_PAR_MIN_MNK, qn, kn, vn, on);
  tck_str_puts(s,
      "      const int64_t i_end = blk1 * TC_ATTN_R < tq ? blk1 * TC_ATTN_R : tq;\n"
      "      const int64_t keys = tc_attn_keys(i_end - 1, tk, causal, causal_offset); /* what its last query sees */\n"
      "      const int64_t kp = (keys + TC_ATTN_BK - 1) / TC_ATTN_BK * TC_ATTN_BK;\n"
      "      float *kt = tc_attn_ws_get(&ws, (size_t)kp * (D + DVP) + 1);\n"
      "      if (!kt) { /* no memory for the packed head: its outputs say so (NaN) rather than lie */\n"
      "        for (int64_t i = blk0 * TC_ATTN_R; i < i_end; i++)\n"
      "          for (int64_t f = 0; f < DV; f++) oh[i * o_st + f * o_sd] = NAN;\n"
      "        continue;\n"
      "      }\n"
      "      float *vs = kt + (size_t)kp * D;\n"
      "      tc_attn_pack(kt, vs, kh, k_st, k_sd, vh, v_st, v_sd, keys, kp, D, DV, DVP);\n"
      "      for (int64_t blk = blk0; blk < blk1; blk++) {\n"
      "        const int64_t i0 = blk * TC_ATTN_R;\n"
      "        const int nq = tq - i0 < TC_ATTN_R ? (int)(tq - i0) : TC_ATTN_R;\n"
      "        tc_attn_block(qh, q_st, q_sd, oh, o_st, o_sd, kt, vs, kp, i0, nq,\n"
      "                      tc_attn_keys(i0 + nq - 1, tk, causal, causal_offset), tk, causal, causal_offset, scale, D, DV, DVP);\n"
      "      }\n"
      "    }\n"
      "    free(ws.buf);\n"
      "  }\n"
      "}\n");
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}
