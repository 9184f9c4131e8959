/* codegen_matmul.c — a tiled GEMM shader for TC_KERNEL_MATMUL with the fused epilogue.
 *
 * 256 invocations compute a 128x128 tile of C; each invocation an 8x8 block in registers
 * (rows ty*4+{0..3} and 64+ty*4+{0..3}, likewise columns, so shared-memory reads of one warp
 * hit distinct banks). A specialization constant MT halves the tile to 64x128 (4x8 per
 * invocation) when the launch finds too few 128x128 tiles to fill the device (launch.c). K advances in steps of BK through two shared-memory buffers: the next
 * step's global loads are issued before the current step's FMAs (double buffering, one
 * barrier per step). Operands are read as vec4 when contiguous and aligned (checked in the
 * shader from the strides), otherwise as scalars with the fast-moving index chosen to keep
 * loads coalesced (transposed operands). The epilogue (bias, activation, residual, ...) runs on
 * the accumulators before the single store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"


static void decl_int(vk_gen *g, tck_str *t, const char *name, int32_t id) {
  tck_str_printf(t, "  int %s = ", name);
  vk_gen_expr_ref(g, t, id);
  tck_str_printf(t, ";\n");
}

tc_status vk_gen_matmul(vk_gen *g) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul;
  if (mm->a < 0 || mm->a >= k->n_buffers || mm->b < 0 || mm->b >= k->n_buffers || mm->c < 0 || mm->c >= k->n_buffers) {
    snprintf(g->err, sizeof g->err, "matmul operand buffers (a %d, b %d, c %d) out of range (%d buffers)", (int)mm->a,
             (int)mm->b, (int)mm->c, (int)k->n_buffers);
    return TC_ERR_INVALID_ARGUMENT;
  }
  int32_t dt = tck_kernel_buffer(k, mm->a)->dtype;
  if ((dt != TC_F32 && dt != TC_F64) || tck_kernel_buffer(k, mm->b)->dtype != dt) {
    snprintf(g->err, sizeof g->err, "matmul operands must share a float dtype (a %d, b %d)", (int)dt,
             (int)tck_kernel_buffer(k, mm->b)->dtype);
    return TC_ERR_UNSUPPORTED;
  }
  /* f32 emulated in f64 (vulkan.f32_subnormals): the f64 GEMM over the operands' widened bits,
   * each product and sum in double (exact products, sums rounded to 53 bits), the result
   * rounded to f32 once */
  bool emu = dt == TC_F32 && g->f32_emulate;
  bool f64 = dt == TC_F64 || emu;
  const char *T = f64 ? "double" : "float";
  char Aload[96], Bload[96]; /* an operand element as a value: "A[ix]" or "tc_f32_widen(A[ix])" */
  int bk = f64 ? 8 : 16;
  char A[64], B[64], C[64];
  vk_buffer_ident(g->k, mm->a, A, sizeof A);
  vk_buffer_ident(g->k, mm->b, B, sizeof B);
  vk_buffer_ident(g->k, mm->c, C, sizeof C);
  snprintf(Aload, sizeof Aload, emu ? "tc_f32_widen(%s[%%s])" : "%s[%%s]", A);
  snprintf(Bload, sizeof Bload, emu ? "tc_f32_widen(%s[%%s])" : "%s[%%s]", B);
  /* Two batch levels when the host filled them: bz2 (outer) and bz, both walked on the grid's z. */
  bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  /* epilogue variables: (batch2, batch, m, n) with two batch levels; else (batch, m, n) when
   * n_outer is 3, (m, n) when 2 */
  int32_t nvar = k->n_outer;
  if (k->n_ops > 0 && (two ? nvar != 4 : nvar != 2 && nvar != 3)) {
    snprintf(g->err, sizeof g->err, "matmul epilogue over %d outer dims (want %s)", (int)nvar, two ? "4" : "2 or 3");
    return TC_ERR_INVALID_ARGUMENT;
  }
  for (int32_t i = 0; i < k->n_ops; i++)
    if (tck_kernel_op(k, i)->loop >= 0 || tck_kernel_op(k, i)->kind == TC_KOP_REDUCE) {
      snprintf(g->err, sizeof g->err, "matmul epilogue op %d is not pointwise", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
  g->uses_unroll = true;

  tck_str b = {0};
  tck_str_printf(&b, "layout(local_size_x = 256) in;\n");
  tck_str_printf(&b, "layout(constant_id = 0) const int MT = 2; // 64-row halves per tile: 2 (128x128) or 1 (64x128)\n");
  tck_str_printf(&b, "#define BM (64 * MT)\n#define BN 128\n#define BK %d\n"
                     "#define LA (BM * BK / 256) // A tile elements per invocation\n"
                     "#define LB (BN * BK / 256) // B tile elements per invocation\n", bk);
  /* f32 tiles are vec4 arrays so the FMA loop reads a thread's 4 adjacent rows (columns) with
   * one 16-byte shared load instead of four */
  if (f64) {
    tck_str_printf(&b, "shared %s As[2][BK][128]; // A tile, k-major: a thread's 4 rows are adjacent\n", T);
    tck_str_printf(&b, "shared %s Bs[2][BK][BN];\n\n", T);
  } else {
    tck_str_printf(&b, "shared vec4 As[2][BK][128 / 4]; // A tile, k-major: a thread's 4 rows are one vec4\n");
    tck_str_printf(&b, "shared vec4 Bs[2][BK][BN / 4];\n\n");
  }
  tck_str_printf(&b, "void main() {\n");
  tck_str body = {0};
  decl_int(g, &body, "NB", mm->batch);
  if (two) {
    decl_int(g, &body, "NB2", mm->batch2);
    decl_int(g, &body, "a_sb2", mm->a_stride_batch2);
    decl_int(g, &body, "b_sb2", mm->b_stride_batch2);
  }
  decl_int(g, &body, "M", mm->m);
  decl_int(g, &body, "N", mm->n);
  decl_int(g, &body, "K", mm->k);
  decl_int(g, &body, "a_off", mm->a_offset);
  decl_int(g, &body, "a_sb", mm->a_stride_batch);
  decl_int(g, &body, "a_sm", mm->a_stride_m);
  decl_int(g, &body, "a_sk", mm->a_stride_k);
  decl_int(g, &body, "b_off", mm->b_offset);
  decl_int(g, &body, "b_sb", mm->b_stride_batch);
  decl_int(g, &body, "b_sk", mm->b_stride_k);
  decl_int(g, &body, "b_sn", mm->b_stride_n);
  if (k->n_ops == 0) {
    decl_int(g, &body, "c_off", mm->c_offset);
    decl_int(g, &body, "c_sb", mm->c_stride_batch);
    decl_int(g, &body, "c_sm", mm->c_stride_m);
    decl_int(g, &body, "c_sn", mm->c_stride_n);
    if (two) decl_int(g, &body, "c_sb2", mm->c_stride_batch2);
  }
  tck_str_printf(&body,
                 "  int tid = int(gl_LocalInvocationID.x), tx = tid %% 16, ty = tid / 16;\n"
                 "  int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, nk = (K + BK - 1) / BK;\n");
  if (f64) {
    tck_str_printf(&body, "  const bool a_vec = false, b_vec = false;\n");
  } else {
    tck_str_printf(&body,
                   "  bool a_vec = a_sk == 1 && a_sm %% 4 == 0 && a_sb %% 4 == 0 && (p.o%d + a_off) %% 4 == 0 && K %% 4 == 0%s;\n"
                   "  bool b_vec = b_sn == 1 && b_sk %% 4 == 0 && b_sb %% 4 == 0 && (p.o%d + b_off) %% 4 == 0 && N %% 4 == 0%s;\n",
                   (int)mm->a, two ? " && a_sb2 % 4 == 0" : "", (int)mm->b, two ? " && b_sb2 % 4 == 0" : "");
  }
  tck_str_printf(&body,
                 "  bool a_mfast = a_sm == 1 && a_sk != 1; // transposed A: walk m between neighbours\n"
                 "  bool b_kfast = b_sk == 1 && b_sn != 1; // transposed B: walk k between neighbours\n");
  if (two) {
    tck_str_printf(&body,
                   "  for (int bzz = int(gl_WorkGroupID.z); bzz < NB2 * NB; bzz += int(gl_NumWorkGroups.z))\n"
                   "  for (int tmi = int(gl_WorkGroupID.y); tmi < tiles_m; tmi += int(gl_NumWorkGroups.y))\n"
                   "  for (int tni = int(gl_WorkGroupID.x); tni < tiles_n; tni += int(gl_NumWorkGroups.x)) {\n"
                   "    int bz2 = bzz / NB, bz = bzz %% NB; // the two batch levels\n"
                   "    int m0 = tmi * BM, n0 = tni * BN;\n"
                   "    int a_base = p.o%d + a_off + bz2 * a_sb2 + bz * a_sb, b_base = p.o%d + b_off + bz2 * b_sb2 + bz * b_sb;\n",
                   (int)mm->a, (int)mm->b);
  } else {
    tck_str_printf(&body,
                   "  for (int bz = int(gl_WorkGroupID.z); bz < NB; bz += int(gl_NumWorkGroups.z))\n"
                   "  for (int tmi = int(gl_WorkGroupID.y); tmi < tiles_m; tmi += int(gl_NumWorkGroups.y))\n"
                   "  for (int tni = int(gl_WorkGroupID.x); tni < tiles_n; tni += int(gl_NumWorkGroups.x)) {\n"
                   "    int m0 = tmi * BM, n0 = tni * BN;\n"
                   "    int a_base = p.o%d + a_off + bz * a_sb, b_base = p.o%d + b_off + bz * b_sb;\n",
                   (int)mm->a, (int)mm->b);
  }
  tck_str_printf(&body,
                 "    %s acc[8][8];\n"
                 "    [[unroll]] for (int i = 0; i < 8; i++) [[unroll]] for (int j = 0; j < 8; j++) acc[i][j] = %s(0);\n"
                 "    %s ra[8], rb[LB]; // the next K step, staged in registers (A: LA of them)\n",
                 T, T, T);
  /* global -> registers for K step kt */
  tck_str_printf(&body, "    for (int kt = -1; kt < nk; kt++) {\n");
  tck_str_printf(&body, "      int cur = kt & 1, nxt = (kt + 1) & 1;\n");
  tck_str_printf(&body, "      if (kt + 1 < nk) {\n");
  tck_str_printf(&body, "        int k0 = (kt + 1) * BK;\n");
  if (!f64) {
    tck_str_printf(&body,
                   "        if (a_vec) {\n"
                   "          [[unroll]] for (int i = 0; i < MT; i++) {\n"
                   "            int v = tid + i * 256, m = v / (BK / 4), kq = (v %% (BK / 4)) * 4;\n"
                   "            vec4 x = (m0 + m < M && k0 + kq < K) ? %s_v4[(a_base + (m0 + m) * a_sm + k0 + kq) >> 2] : vec4(0);\n"
                   "            ra[i * 4 + 0] = x.x; ra[i * 4 + 1] = x.y; ra[i * 4 + 2] = x.z; ra[i * 4 + 3] = x.w;\n"
                   "          }\n"
                   "        } else\n",
                   A);
  }
  tck_str_printf(&body,
                 "        [[unroll]] for (int i = 0; i < LA; i++) {\n"
                 "          int e = tid + i * 256;\n"
                 "          int m = a_mfast ? e %% BM : e / BK, kk = a_mfast ? e / BM : e %% BK;\n"
                 "          ra[i] = (m0 + m < M && k0 + kk < K) ? ");
  tck_str_printf(&body, Aload, "a_base + (m0 + m) * a_sm + (k0 + kk) * a_sk");
  tck_str_printf(&body, " : %s(0);\n"
                 "        }\n",
                 T);
  if (!f64) {
    tck_str_printf(&body,
                   "        if (b_vec) {\n"
                   "          [[unroll]] for (int i = 0; i < 2; i++) {\n"
                   "            int v = tid + i * 256, kk = v / (BN / 4), nq = (v %% (BN / 4)) * 4;\n"
                   "            vec4 x = (k0 + kk < K && n0 + nq < N) ? %s_v4[(b_base + (k0 + kk) * b_sk + n0 + nq) >> 2] : vec4(0);\n"
                   "            rb[i * 4 + 0] = x.x; rb[i * 4 + 1] = x.y; rb[i * 4 + 2] = x.z; rb[i * 4 + 3] = x.w;\n"
                   "          }\n"
                   "        } else\n",
                   B);
  }
  tck_str_printf(&body,
                 "        [[unroll]] for (int i = 0; i < LB; i++) {\n"
                 "          int e = tid + i * 256;\n"
                 "          int kk = b_kfast ? e %% BK : e / BN, n = b_kfast ? e / BK : e %% BN;\n"
                 "          rb[i] = (k0 + kk < K && n0 + n < N) ? ");
  tck_str_printf(&body, Bload, "b_base + (k0 + kk) * b_sk + (n0 + n) * b_sn");
  tck_str_printf(&body, " : %s(0);\n"
                 "        }\n"
                 "      }\n",
                 T);
  /* compute on the current buffer */
  tck_str_printf(&body,
                 "      if (kt >= 0) {\n"
                 "        [[unroll]] for (int kk = 0; kk < BK; kk++) {\n"
                 "          %s a[8], bv[8];\n", T);
  if (f64)
    tck_str_printf(&body,
                   "          [[unroll]] for (int c = 0; c < 4; c++) {\n"
                   "            a[c] = As[cur][kk][ty * 4 + c]; a[4 + c] = MT > 1 ? As[cur][kk][64 + ty * 4 + c] : 0.0lf;\n"
                   "            bv[c] = Bs[cur][kk][tx * 4 + c]; bv[4 + c] = Bs[cur][kk][64 + tx * 4 + c];\n"
                   "          }\n");
  else
    tck_str_printf(&body,
                   "          vec4 a0 = As[cur][kk][ty], a1 = MT > 1 ? As[cur][kk][16 + ty] : vec4(0);\n"
                   "          vec4 b0 = Bs[cur][kk][tx], b1 = Bs[cur][kk][16 + tx];\n"
                   "          [[unroll]] for (int c = 0; c < 4; c++) { a[c] = a0[c]; a[4 + c] = a1[c]; bv[c] = b0[c]; bv[4 + c] = b1[c]; }\n");
  tck_str_printf(&body,
                 "          [[unroll]] for (int i = 0; i < 4 * MT; i++)\n"
                 "            [[unroll]] for (int j = 0; j < 8; j++) acc[i][j] = fma(a[i], bv[j], acc[i][j]);\n"
                 "        }\n"
                 "      }\n");
  /* registers -> the other shared buffer */
  tck_str_printf(&body, "      if (kt + 1 < nk) {\n");
  if (!f64) {
    tck_str_printf(&body,
                   "        if (a_vec) {\n"
                   "          [[unroll]] for (int i = 0; i < MT; i++) {\n"
                   "            int v = tid + i * 256, m = v / (BK / 4), kq = (v %% (BK / 4)) * 4;\n"
                   "            [[unroll]] for (int c = 0; c < 4; c++) As[nxt][kq + c][m >> 2][m & 3] = ra[i * 4 + c];\n"
                   "          }\n"
                   "        } else\n");
  }
  tck_str_printf(&body,
                 "        [[unroll]] for (int i = 0; i < LA; i++) {\n"
                 "          int e = tid + i * 256;\n"
                 "          int m = a_mfast ? e %% BM : e / BK, kk = a_mfast ? e / BM : e %% BK;\n"
                 "          As[nxt][kk][%s] = ra[i];\n"
                 "        }\n", f64 ? "m" : "m >> 2][m & 3");
  if (!f64) {
    tck_str_printf(&body,
                   "        if (b_vec) {\n"
                   "          [[unroll]] for (int i = 0; i < 2; i++) {\n"
                   "            int v = tid + i * 256, kk = v / (BN / 4), nq = (v %% (BN / 4)) * 4;\n"
                   "            Bs[nxt][kk][nq >> 2] = vec4(rb[i * 4], rb[i * 4 + 1], rb[i * 4 + 2], rb[i * 4 + 3]);\n"
                   "          }\n"
                   "        } else\n");
  }
  tck_str_printf(&body,
                 "        [[unroll]] for (int i = 0; i < LB; i++) {\n"
                 "          int e = tid + i * 256;\n"
                 "          int kk = b_kfast ? e %% BK : e / BN, n = b_kfast ? e / BK : e %% BN;\n"
                 "          Bs[nxt][kk][%s] = rb[i];\n"
                 "        }\n"
                 "      }\n"
                 "      barrier();\n"
                 "    }\n", f64 ? "n" : "n >> 2][n & 3");
  /* epilogue. With f32 emulated, an epilogue's every f32 result is a few dozen instructions (its
   * rounding; erf and exp in double), and unrolled over the 8 x 8 tile that made the GEMM with
   * a GELU the slowest pipeline NVIDIA's driver compiles (3.3 s for attn_block's, session 9): the
   * columns run as a loop then, over a copy of the row of sums (a loop index into acc itself
   * would move all of acc to memory for the whole kernel). The same holds natively for an
   * epilogue with a transcendental function: attn_block's GEMM with a GELU was the slowest
   * native pipeline too (0.84 s of a 1.0 s first call, session 9). */
  bool transcendental = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    transcendental |= op->kind == TC_KOP_PRIM && tck_prim_is_transcendental(op->prim);
  }
  const bool rolled = k->n_ops > 0 && (emu || transcendental);
  tck_str_printf(&body,
                 "    [[unroll]] for (int i = 0; i < 4 * MT; i++) {\n"
                 "      int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);\n");
  if (rolled)
    tck_str_printf(&body, "      %s acc_row[8];\n"
                          "      [[unroll]] for (int j = 0; j < 8; j++) acc_row[j] = acc[i][j];\n"
                          "      [[dont_unroll]] for (int j = 0; j < 8; j++) {\n", T);
  else
    tck_str_printf(&body, "      [[unroll]] for (int j = 0; j < 8; j++) {\n");
  tck_str_printf(&body,
                 "        int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);\n"
                 "        if (m >= M || n >= N) continue;\n");
  if (k->n_ops == 0) {
    tck_str_printf(&body, "        %s[p.o%d + c_off + %sbz * c_sb + m * c_sm + n * c_sn] = %s;\n", C, (int)mm->c,
                   two ? "bz2 * c_sb2 + " : "", emu ? "tc_f32_narrow(acc[i][j])" : "acc[i][j]");
  } else {
    const char *vars[TC_MAX_RANK + 1] = {0};
    if (nvar == 4) {
      vars[0] = "bz2";
      vars[1] = "bz";
      vars[2] = "m";
      vars[3] = "n";
    } else if (nvar == 3) {
      vars[0] = "bz";
      vars[1] = "m";
      vars[2] = "n";
    } else {
      vars[0] = "m";
      vars[1] = "n";
    }
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = tck_kernel_op(k, i);
      if (op->kind == TC_KOP_ACC) {
        char ov[64];
        if (g->f32_emulate && op->dtype == TC_F32) /* the f32 product: the double sum rounded once */
          snprintf(ov, sizeof ov, rolled ? "tc_f32r(acc_row[j])" : "tc_f32r(double(acc[i][j]))");
        else
          snprintf(ov, sizeof ov, rolled ? "%s(acc_row[j])" : "%s(acc[i][j])", vk_value_type(g, op->dtype));
        vk_gen_op(g, &body, 8, i, vars, "", ov);
      } else {
        vk_gen_op(g, &body, 8, i, vars, "", NULL);
      }
    }
  }
  tck_str_printf(&body, "      }\n    }\n  }\n}\n");
  vk_gen_exprs_declare(g, &b, 2);
  tck_str_printf(&b, "%s", body.data ? body.data : "");
  free(body.data);
  vk_gen_prologue(g, g->t, &b);
  bool oom = b.oom;
  free(b.data);
  if (oom || g->t->oom) {
    snprintf(g->err, sizeof g->err, "out of memory generating GLSL");
    return TC_ERR_OUT_OF_MEMORY;
  }
  return g->err[0] ? TC_ERR_INVALID_ARGUMENT : TC_OK;
}
