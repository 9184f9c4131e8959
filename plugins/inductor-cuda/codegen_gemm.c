/* codegen_gemm.c — the generated GEMM: a MATMUL kernel's product and its epilogue in one tiled
 * SIMT kernel, `k_<name>_gemm`, for the launches that do not go through cuBLASLt (cuda.gemm:
 * `generated` always; `auto` while cuBLASLt is still loading, see gemm.c).
 *
 * The classic register-tiled SGEMM. A block computes a BM x BN tile of one batch's product
 * (128 x 128 with 256 threads, or 64 x 64 with 64 where the 128 tiles would not fill the GPU
 * twice over, or the sizes are only known at launch); each thread an 8 x 8 register tile: rows
 * ty*4 + 0..3 and BM/2 + ty*4 + 0..3, columns likewise with tx, so its operands are two
 * float4s of each shared-memory row and a warp's reads are broadcasts (A) or 16 distinct
 * float4s (B): no bank conflicts. k advances BK = 8 at a time: the A and B tiles sit in shared
 * memory k-major (tile[k][row], rows padded by 4), twice, and the next step's tiles are fetched
 * into registers while this step computes, then stored into the other buffer: one barrier a
 * step. A tile is fetched 4 neighbours a thread along whichever of the operand's dimensions is
 * contiguous (rows or k; a transposed operand stored through 4 scalar stores, conflict-free
 * with the padding), as one 16-byte load where the strides and the address allow, else element
 * by element with zeros outside the operand: every stride pattern, batch level, broadcast
 * (stride 0) and edge of M, N and K, K = 0 included (the epilogue then sees zeros).
 *
 * Numerics: plain FMAs (no TF32), k in increasing order for every element: deterministic, and a
 * different summation order from cuBLASLt's (its results differ in the last bits, as two of
 * cuBLASLt's own algorithms do). f64 is the same kernel with T = double (float4 reads become
 * pairs of double2). The epilogue (the kernel's ops, ACC reading the register) runs on each
 * element as it leaves the registers: the product is never written unless the epilogue stores
 * it (no ops: stored to C at C's strides). */
#include <stdio.h>
#include <string.h>

#include "codegen.h"

/* Threads of a block per tile shape: (BM / 8) x (BN / 8). */
#define GEMM_BIG 128
#define GEMM_SMALL 64

static int64_t const_of(const icuda_gen *g, int32_t id, int64_t absent) {
  if (id < 0) return absent;
  const tc_size_expr *e = id < g->list->n_exprs ? tck_list_expr(g->list, id) : NULL;
  return e && e->op == TC_SX_CONST ? e->value : -1;
}

/* The tile edge: 128 when the sizes are constants and give at least two 128 x 128 tiles per
 * SM (the big tile reads half the operand bytes per FMA of the small one, but a grid under two
 * waves leaves SMs idle), else 64. */
static int32_t gemm_tile(const icuda_gen *g) {
  const tc_matmul_desc *mm = g->k->matmul;
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  int64_t m = const_of(g, mm->m, 1), n = const_of(g, mm->n, 1), b = const_of(g, mm->batch, 1),
          b2 = two ? const_of(g, mm->batch2, 1) : 1;
  if (g->o && (g->o->gemm_tile == GEMM_BIG || g->o->gemm_tile == GEMM_SMALL)) return g->o->gemm_tile; /* a test's choice */
  int32_t sms = g->o && g->o->n_sms > 0 ? g->o->n_sms : 132;
  if (m < 0 || n < 0 || b < 0 || b2 < 0) return GEMM_SMALL;
  double tiles = (double)((m + GEMM_BIG - 1) / GEMM_BIG) * (double)((n + GEMM_BIG - 1) / GEMM_BIG) * (double)b * (double)b2;
  return tiles >= 2.0 * sms ? GEMM_BIG : GEMM_SMALL;
}

/* The kernel's fixed text between its sizes and its epilogue: the block's tile, the fetches ... */
static const char gemm_tiles[] =
    "  /* a tile per block: blockIdx.x walks n fastest (neighbouring blocks share A's rows in L2),\n"
    "   * blockIdx.z the batches (grid-stride beyond 65535) */\n"
    "  const long long tiles_n = (N + BN - 1) / BN;\n"
    "  const long long m0 = (long long)blockIdx.x / tiles_n * BM, n0 = (long long)blockIdx.x % tiles_n * BN;\n"
    "  const int tid = threadIdx.x, tx = tid % (BN / 8), ty = tid / (BN / 8);\n"
    "  __shared__ __align__(16) T As[2][BK][BM + 4]; /* A's tile, k-major: a thread's 8 rows are 2 x 4 neighbours */\n"
    "  __shared__ __align__(16) T Bs[2][BK][BN + 4]; /* B's tile, k-major */\n"
    "  /* quad q of a (R x BK) operand tile: 4 neighbours along the tile's rows (m of A, n of B) when\n"
    "   * along_r, else along k; one vector load when vec and all four are inside the operand (rows\n"
    "   * x rows_all, k < K), else element by element, zeros outside */\n"
    "  auto fetch = [&](const T *x, long long sr, long long sk, long long rows_all, int R, long long r0, long long k0,\n"
    "                   bool along_r, bool vec, int q, T *v) {\n"
    "    const int r = along_r ? q % (R / 4) * 4 : q / (BK / 4), c = along_r ? q / (R / 4) : q % (BK / 4) * 4;\n"
    "    const long long gr = r0 + r, gk = k0 + c;\n"
    "    if (vec && (along_r ? gr + 3 < rows_all && gk < K : gr < rows_all && gk + 3 < K)) {\n"
    "      tc_load4(x + gr * sr + gk * sk, v);\n"
    "    } else {\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < 4; e++) {\n"
    "        const long long er = gr + (along_r ? e : 0), ek = gk + (along_r ? 0 : e);\n"
    "        v[e] = er < rows_all && ek < K ? x[er * sr + ek * sk] : (T)0;\n"
    "      }\n"
    "    }\n"
    "  };\n"
    "  /* ... and into a k-major shared tile (row stride R + 4) */\n"
    "  auto stash = [&](T *tile, int R, bool along_r, int q, const T *v) {\n"
    "    const int r = along_r ? q % (R / 4) * 4 : q / (BK / 4), c = along_r ? q / (R / 4) : q % (BK / 4) * 4;\n"
    "    if (along_r) {\n"
    "      tc_store4(&tile[c * (R + 4) + r], v);\n"
    "    } else {\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < 4; e++) tile[(c + e) * (R + 4) + r] = v[e];\n"
    "    }\n"
    "  };\n";

/* ... then per batch: the k loop. */
static const char gemm_loop[] =
    "  /* which way each operand is fetched: along its unit stride */\n"
    "  const bool a_along_m = a_sm == 1 && a_sk != 1, b_along_n = b_sn == 1 && b_sk != 1;\n"
    "  const long long steps = (K + BK - 1) / BK;\n"
    "  for (long long bz = blockIdx.z; bz < batch * batch2; bz += gridDim.z) {\n"
    "    const long long bi = bz % batch, bi2 = bz / batch;\n"
    "    const T *ag = A + a_off + bi2 * a_sb2 + bi * a_sb, *bg = B + b_off + bi2 * b_sb2 + bi * b_sb;\n"
    "    /* 16-byte loads: the 4 neighbours contiguous, every quad's start aligned */\n"
    "    const bool a_vec = (a_along_m ? a_sk % 4 == 0 : a_sk == 1 && a_sm % 4 == 0) && (unsigned long long)ag % (4 * sizeof(T)) == 0;\n"
    "    const bool b_vec = (b_along_n ? b_sk % 4 == 0 : b_sk == 1 && b_sn % 4 == 0) && (unsigned long long)bg % (4 * sizeof(T)) == 0;\n"
    "    T acc[8][8];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < 8; i++)\n"
    "#pragma unroll\n"
    "      for (int j = 0; j < 8; j++) acc[i][j] = (T)0;\n"
    "    T ra[A_QUADS][4], rb[B_QUADS][4]; /* the next step's tiles, in flight */\n"
    "    if (steps > 0) {\n"
    "#pragma unroll\n"
    "      for (int q = 0; q < A_QUADS; q++) fetch(ag, a_sm, a_sk, M, BM, m0, 0, a_along_m, a_vec, tid + q * THREADS, ra[q]);\n"
    "#pragma unroll\n"
    "      for (int q = 0; q < B_QUADS; q++) fetch(bg, b_sn, b_sk, N, BN, n0, 0, b_along_n, b_vec, tid + q * THREADS, rb[q]);\n"
    "#pragma unroll\n"
    "      for (int q = 0; q < A_QUADS; q++) stash(&As[0][0][0], BM, a_along_m, tid + q * THREADS, ra[q]);\n"
    "#pragma unroll\n"
    "      for (int q = 0; q < B_QUADS; q++) stash(&Bs[0][0][0], BN, b_along_n, tid + q * THREADS, rb[q]);\n"
    "    }\n"
    "    __syncthreads();\n"
    "    for (long long kt = 0; kt < steps; kt++) {\n"
    "      const int cur = (int)(kt & 1);\n"
    "      const bool more = kt + 1 < steps;\n"
    "      if (more) { /* step kt + 1's tiles: loads in flight while step kt computes */\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < A_QUADS; q++)\n"
    "          fetch(ag, a_sm, a_sk, M, BM, m0, (kt + 1) * BK, a_along_m, a_vec, tid + q * THREADS, ra[q]);\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < B_QUADS; q++)\n"
    "          fetch(bg, b_sn, b_sk, N, BN, n0, (kt + 1) * BK, b_along_n, b_vec, tid + q * THREADS, rb[q]);\n"
    "      }\n"
    "#pragma unroll\n"
    "      for (int kk = 0; kk < BK; kk++) {\n"
    "        T av[8], bv[8];\n"
    "        tc_load4(&As[cur][kk][ty * 4], av);\n"
    "        tc_load4(&As[cur][kk][BM / 2 + ty * 4], av + 4);\n"
    "        tc_load4(&Bs[cur][kk][tx * 4], bv);\n"
    "        tc_load4(&Bs[cur][kk][BN / 2 + tx * 4], bv + 4);\n"
    "#pragma unroll\n"
    "        for (int i = 0; i < 8; i++)\n"
    "#pragma unroll\n"
    "          for (int j = 0; j < 8; j++) acc[i][j] = tc_fma(av[i], bv[j], acc[i][j]);\n"
    "      }\n"
    "      if (more) { /* into the buffers nobody reads since the last barrier */\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < A_QUADS; q++) stash(&As[cur ^ 1][0][0], BM, a_along_m, tid + q * THREADS, ra[q]);\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < B_QUADS; q++) stash(&Bs[cur ^ 1][0][0], BN, b_along_n, tid + q * THREADS, rb[q]);\n"
    "      }\n"
    "      __syncthreads();\n"
    "    }\n";

tc_status cg_gemm(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul;
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const int32_t dt = tck_kernel_buffer(k, mm->a)->dtype;
  const char *T = tck_c_dtype(dt);
  const int32_t tile = gemm_tile(g), threads = (tile / 8) * (tile / 8);
  tck_exprs_mark_matmul(&g->x, mm);
  plan->gemm_begin = s->len; /* from here to the kernel's end: a program of its own (modules.c) */
  plan->gemm_block = threads;
  plan->gemm_tile = tile;
  tck_str_printf(s,
                 "/* the generated GEMM of %s: the product and its epilogue in one kernel, no cuBLASLt. A block\n"
                 " * computes a %d x %d tile of one batch's product, each of its %d threads an 8 x 8 register tile\n"
                 " * (rows ty*4.. and %d + ty*4.., columns likewise with tx); k advances 8 at a time through\n"
                 " * k-major shared tiles, two of each: the next step's are fetched into registers while this step\n"
                 " * computes. Plain %s FMAs in k order (deterministic, no TF32); the epilogue runs on each element\n"
                 " * as it leaves the registers. */\n",
                 g->fname, (int)tile, (int)tile, (int)threads, (int)tile / 2, T);
  char saved[112];
  snprintf(saved, sizeof saved, "%s", g->fname);
  snprintf(g->fname, sizeof g->fname, "%s", plan->gemm_name);
  cg_prologue(s, g, threads);
  snprintf(g->fname, sizeof g->fname, "%s", saved);
  tck_str_printf(s, "  typedef %s T;\n", T);
  tck_str_printf(s,
                 "  enum { BM = %d, BN = %d, BK = 8, THREADS = %d, A_QUADS = BM * BK / 4 / THREADS, B_QUADS = BN * BK / 4 / THREADS };\n",
                 (int)tile, (int)tile, (int)threads);
  tck_str_printf(s, "  const %s *__restrict__ A = %s;\n  const %s *__restrict__ B = %s;\n", T, g->bname[mm->a], T,
                 g->bname[mm->b]);
  cg_size_def(s, g, "M", mm->m, "1");
  cg_size_def(s, g, "N", mm->n, "1");
  cg_size_def(s, g, "K", mm->k, "1");
  cg_size_def(s, g, "batch", mm->batch, "1");
  cg_size_def(s, g, "batch2", two ? mm->batch2 : -1, "1");
  cg_size_def(s, g, "a_off", mm->a_offset, "0");
  cg_size_def(s, g, "a_sb2", two ? mm->a_stride_batch2 : -1, "0");
  cg_size_def(s, g, "a_sb", mm->a_stride_batch, "0");
  cg_size_def(s, g, "a_sm", mm->a_stride_m, "0");
  cg_size_def(s, g, "a_sk", mm->a_stride_k, "0");
  cg_size_def(s, g, "b_off", mm->b_offset, "0");
  cg_size_def(s, g, "b_sb2", two ? mm->b_stride_batch2 : -1, "0");
  cg_size_def(s, g, "b_sb", mm->b_stride_batch, "0");
  cg_size_def(s, g, "b_sk", mm->b_stride_k, "0");
  cg_size_def(s, g, "b_sn", mm->b_stride_n, "0");
  if (k->n_ops == 0) { /* the product is the result: stored at C's strides */
    cg_size_def(s, g, "c_off", mm->c_offset, "0");
    cg_size_def(s, g, "c_sb2", two ? mm->c_stride_batch2 : -1, "0");
    cg_size_def(s, g, "c_sb", mm->c_stride_batch, "0");
    cg_size_def(s, g, "c_sm", mm->c_stride_m, "0");
    cg_size_def(s, g, "c_sn", mm->c_stride_n, "0");
  }
  tck_str_puts(s, gemm_tiles);
  tck_str_puts(s, gemm_loop);
  /* the epilogue: the kernel's outer vars are (batch2,) batch, m, n */
  const char *vars[TC_MAX_RANK + 1] = {"i0", "i1", "i2", "i3", "r"};
  const char *vb2 = two ? "i0" : NULL, *vb = two ? "i1" : "i0", *vm = two ? "i2" : "i1", *vn = two ? "i3" : "i2";
  tck_str_puts(s, "    /* the epilogue, element by element as the product leaves the registers */\n");
  if (vb2) tck_str_printf(s, "    const long long %s = bi2;\n", vb2);
  tck_str_printf(s, "    const long long %s = bi;\n", vb);
  tck_str_printf(s,
                 "#pragma unroll\n"
                 "    for (int i = 0; i < 8; i++) {\n"
                 "      const long long %s = m0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + i - 4);\n"
                 "      if (%s >= M) continue;\n"
                 "#pragma unroll\n"
                 "      for (int j = 0; j < 8; j++) {\n"
                 "        const long long %s = n0 + (j < 4 ? tx * 4 + j : BN / 2 + tx * 4 + j - 4);\n"
                 "        if (%s >= N) continue;\n",
                 vm, vm, vn, vn);
  tc_status st = TC_OK;
  if (k->n_ops == 0) {
    tck_str_printf(s, "        %s[c_off + bi2 * c_sb2 + bi * c_sb + %s * c_sm + %s * c_sn] = acc[i][j];\n", g->bname[mm->c], vm,
                   vn);
  } else if (!cg_tables_alloc(g)) {
    st = TC_ERR_OUT_OF_MEMORY;
  } else {
    for (int32_t i = 0; i < k->n_ops && st == TC_OK; i++) st = cg_op(s, g, i, vars, 4, "", "acc[i][j]", err, cap);
    cg_tables_free(g);
  }
  /* the next batch's first tiles may overwrite buffer 0: the k loop's last barrier came after
   * every read of it */
  tck_str_puts(s, "      }\n"
                  "    }\n"
                  "  }\n"
                  "}\n");
  if (st == TC_OK && s->oom) st = TC_ERR_OUT_OF_MEMORY;
  return st;
}
