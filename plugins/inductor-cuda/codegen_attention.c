/* codegen_attention.c — TC_KERNEL_ATTENTION as a flash-attention kernel: the scores and the
 * probabilities never leave the block.
 *
 * A block takes BM queries of one (batch2, batch) head (128 or 64, cuda.attention_queries; 8
 * threads per QPT queries, QPT 4 or 8: cuda.attention_thread_queries) and walks the keys in tiles
 * of BN (32 or 64, cuda.attention_keys): q·kT of the tile (each thread QPT queries x BN/8 keys,
 * fp32 FMAs from shared memory), the mask, the
 * online softmax (running max m and sum l per query, the accumulator rescaled by
 * exp(m_old - m_new)), then p·v into the thread's QPT x DV/8 slice of the output. Key tiles are
 * copied by cp.async into two buffers: tile kt + 1 is in flight while tile kt is computed. Tiles wholly masked by the causal mask are skipped, and blocks start with the
 * heaviest query tiles (the last ones) so the short ones fill the tail of the grid.
 *
 * Shared memory: q transposed (D x BM: a thread's QPT queries of one dimension are QPT/4 float4s),
 * twice k then p (BN x D, then BN x BM: p reuses its tile's k space once the scores are made) and
 * v (BN x DV); rows padded by 4 floats so a phase of 8 lanes reading float4 rows hits 8 different
 * bank groups. Thread t owns queries QPT*(t/8) .. +QPT-1, keys t%8 + 8j (keys interleaved: the
 * transposed p store is then conflict-free) and, of the output, columns 4*(t%8) + 32f .. +3 (8
 * lanes read 128 contiguous bytes of a v row); a query's 8 threads are consecutive lanes, so its
 * max and sum are 3 shuffles. (q was query-major until session 8: a warp's 4 query groups, 8 rows
 * apart, then read the same banks, a 4-way conflict on 8 of every 12 loads of q.kT.)
 *
 * PyTorch's results: masked and out-of-range keys weigh exactly 0; a query whose keys are all
 * masked gets NaN (softmax of all -inf), NaN in a score makes its query NaN (max propagates
 * it), tk = 0 gives zeros (an empty sum). The module is compiled with --fmad=false: the FMAs
 * here are written out, so the dot products round like cuBLAS's, not like the graph's.
 *
 * That is the v1 kernel (cuda.attention_kernel=v1, the default). cuda.attention_kernel=tiled
 * generates the register-tiled kernel at the end of this file (its own comment there). */
#include <stdio.h>
#include <string.h>

#include "codegen.h"

static int32_t round_up(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

/* Shared memory of one block, in bytes: bm queries, bn keys a tile, head sizes d4 and dv8. */
static int32_t attention_smem(int32_t bm, int32_t bn, int32_t d4, int32_t dv8) {
  int32_t q = d4 * (bm + 4), kp = bn * (d4 + 4 > bm + 4 ? d4 + 4 : bm + 4), v = bn * dv8;
  return 4 * (q + 2 * (kp + v)); /* k (then p) and v double-buffered */
}


/* The sizes, strides, scale and mask of both kernels, and the block's head and query tile
 * (the heaviest query tiles first): expects the enum with BM before it. */
static void attention_common(tck_str *s, icuda_gen *g, const tc_attention_desc *a) {
  const bool two = a->batch2 >= 0;
  const char *qn = g->bname[a->q], *kn = g->bname[a->k], *vn = g->bname[a->v], *on = g->bname[a->o];
  cg_size_def(s, g, "tq", a->tq, "0");
  cg_size_def(s, g, "tk", a->tk, "0");
  cg_size_def(s, g, "heads", a->batch, "0");
  if (two) cg_size_def(s, g, "heads2", a->batch2, "0");
  else tck_str_puts(s, "  const long long heads2 = 1;\n");
  static const char *const fields[4][5] = {
      {"q_off", "q_sb2", "q_sb", "q_st", "q_sd"},
      {"k_off", "k_sb2", "k_sb", "k_st", "k_sd"},
      {"v_off", "v_sb2", "v_sb", "v_st", "v_sd"},
      {"o_off", "o_sb2", "o_sb", "o_st", "o_sd"}};
  const int32_t strides[4][5] = {
      {a->q_offset, a->q_stride_batch2, a->q_stride_batch, a->q_stride_t, a->q_stride_d},
      {a->k_offset, a->k_stride_batch2, a->k_stride_batch, a->k_stride_t, a->k_stride_d},
      {a->v_offset, a->v_stride_batch2, a->v_stride_batch, a->v_stride_t, a->v_stride_d},
      {a->o_offset, a->o_stride_batch2, a->o_stride_batch, a->o_stride_t, a->o_stride_d}};
  for (int t = 0; t < 4; t++)
    for (int f = 0; f < 5; f++) {
      if (f == 1 && !two) {
        tck_str_printf(s, "  const long long %s = 0;\n", fields[t][f]);
        continue;
      }
      cg_size_def(s, g, fields[t][f], strides[t][f], "0");
    }
  tck_str_printf(s,
                 "  const float scale = %.9gf;\n"
                 "  const bool causal = %s;\n"
                 "  const long long causal_offset = %lldLL; /* key j of query i masked when j - i >= it */\n",
                 a->scale, a->causal ? "true" : "false", (long long)a->causal_offset);
  tck_str_printf(s,
      "\n"
      "  /* the heaviest query tiles (the last: most keys under a causal mask) first */\n"
      "  const long long tiles_q = (tq + BM - 1) / BM, n_heads = heads * heads2;\n"
      "  const long long head = blockIdx.x %% n_heads, qt = tiles_q - 1 - blockIdx.x / n_heads;\n"
      "  const long long hb = head %% heads, hb2 = head / heads;\n"
      "  const float *__restrict__ qg = %s + q_off + hb2 * q_sb2 + hb * q_sb;\n"
      "  const float *__restrict__ kg = %s + k_off + hb2 * k_sb2 + hb * k_sb;\n"
      "  const float *__restrict__ vg = %s + v_off + hb2 * v_sb2 + hb * v_sb;\n"
      "  float *__restrict__ og = %s + o_off + hb2 * o_sb2 + hb * o_sb;\n",
                 qn, kn, vn, on);
}

/* The online softmax's state of a thread's `rows` queries (running max m, sum l, the output
 * accumulator), and how many key tiles the block walks: every tile up to the last key its last
 * query may see. The same in both kernels. */
static void query_state(tck_str *s, const char *rows) {
  tck_str_printf(s,
                 "  float m[%s], l[%s], acc[%s][DVT];\n"
                 "#pragma unroll\n"
                 "  for (int i = 0; i < %s; i++) {\n"
                 "    m[i] = -INFINITY;\n"
                 "    l[i] = 0.0f;\n"
                 "#pragma unroll\n"
                 "    for (int f = 0; f < DVT; f++) acc[i][f] = 0.0f;\n"
                 "  }\n"
                 "  /* keys any query of the tile may see: j < i + causal_offset for the last query i */\n"
                 "  long long keys = tk;\n"
                 "  if (causal) {\n"
                 "    const long long last = (q0 + BM < tq ? q0 + BM : tq) - 1 + causal_offset;\n"
                 "    keys = last < 0 ? 0 : last < tk ? last : tk;\n"
                 "  }\n"
                 "  const long long tiles_k = (keys + BN - 1) / BN;\n",
                 rows, rows, rows, rows);
}

void cg_attention_mark(icuda_gen *g) { tck_exprs_mark_attention(&g->x, g->k->attention); }

/* The kernel of cuda.attention_kernel=v1. */
static void attention_v1(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, int64_t d, int64_t dv) {
  const tc_attention_desc *a = g->k->attention;
  const int32_t d4 = round_up((int32_t)d, 4), dv8 = round_up((int32_t)dv, 8);
  /* queries per block, keys per tile (8 threads split them) and queries per thread. 64 x 32 with
   * 4 a thread by default: with q transposed in shared memory the fastest on the H200 (session 8:
   * flash kernel 154.8 µs against 194.1 µs with 8 a thread; before the transposition 8 a thread
   * won, 177 µs, five shapes timed in session 7): 51 KB of shared memory and 128 threads a
   * block, four blocks and 16 warps an SM, where 8 a thread leave 8 warps to hide the softmax's
   * shuffles and exponentials and the barriers. */
  const int32_t bm = g->o->attn_queries == 128 ? 128 : 64, bn = g->o->attn_keys == 64 ? 64 : 32;
  const int32_t qpt = g->o->attn_thread_queries == 8 ? 8 : 4;
  const int32_t threads = bm / qpt * 8;
  const int32_t smem = attention_smem(bm, bn, d4, dv8);
  plan->kind = ICUDA_LAUNCH_ATTENTION;
  plan->block = threads;
  plan->smem_bytes = smem;
  plan->attn_queries = bm;

  tck_str_printf(s,
                 "/* flash attention: %lld-dim queries and keys, %lld-dim values; %s; scale %.9g; %d queries a\n"
                 " * block, %d keys a tile, %d queries a thread */\n",
                 (long long)d, (long long)dv, a->causal ? "causal" : "no mask", a->scale, (int)bm, (int)bn, (int)qpt);
  cg_prologue(s, g, threads);
  tck_str_printf(s,
                 "  enum { BM = %d, BN = %d, QPT = %d, KPT = BN / 8, D = %lld, D4 = %d, DV = %lld, DV8 = %d, DVT = DV8 / 8 };\n"
                 "  enum { QTROW = BM + 4, KROW = D4 + 4, PROW = BM + 4, KP = KROW > PROW ? KROW : PROW };\n",
                 bm, bn, qpt, (long long)d, d4, (long long)dv, dv8);
  attention_common(s, g, a);
  /* p . v: a thread's DVT values as float4 when they are whole float4s */
  static const char pv_vector[] =
      "#pragma unroll\n"
      "      for (int f4 = 0; f4 < DVT / 4; f4++) {\n"
      "        const float4 vv = *(const float4 *)&vs[c * DV8 + f4 * 32 + tx * 4]; /* 8 lanes: 128 contiguous bytes */\n"
      "#pragma unroll\n"
      "        for (int i = 0; i < QPT; i++) {\n"
      "          acc[i][f4 * 4 + 0] = fmaf(pq[i], vv.x, acc[i][f4 * 4 + 0]);\n"
      "          acc[i][f4 * 4 + 1] = fmaf(pq[i], vv.y, acc[i][f4 * 4 + 1]);\n"
      "          acc[i][f4 * 4 + 2] = fmaf(pq[i], vv.z, acc[i][f4 * 4 + 2]);\n"
      "          acc[i][f4 * 4 + 3] = fmaf(pq[i], vv.w, acc[i][f4 * 4 + 3]);\n"
      "        }\n"
      "      }\n";
  static const char pv_scalar[] =
      "#pragma unroll\n"
      "      for (int f = 0; f < DVT; f++) {\n"
      "        const float vv = vs[c * DV8 + tx * DVT + f];\n"
      "#pragma unroll\n"
      "        for (int i = 0; i < QPT; i++) acc[i][f] = fmaf(pq[i], vv, acc[i][f]);\n"
      "      }\n";
  tck_str_puts(s,
      "  const long long q0 = qt * BM;\n"
      "  extern __shared__ float4 tc_smem4[];\n"
      "  float *qs = (float *)tc_smem4;           /* D4 x QTROW: q transposed, a row per dimension */\n"
      "  float *kbuf = qs + D4 * QTROW;            /* 2 x BN x KP: k rows; then p, key-major (BN x PROW) */\n"
      "  float *vbuf = kbuf + 2 * BN * KP;         /* 2 x BN x DV8: v rows */\n"
      "  const int tid = threadIdx.x, tx = tid & 7, ty = tid >> 3; /* queries QPT*ty .. +QPT-1, keys tx + 8j (j < KPT) */\n"
      "\n"
      "  /* q, then every key tile, copied by cp.async (zeros past the ends): tile kt + 1 is in\n"
      "   * flight while tile kt is computed */\n");
  query_state(s, "QPT");
  tck_str_puts(s,
      "  /* 16-byte copies where rows are contiguous and 16-byte aligned (q, k, v of a qkv\n"
      "   * projection are), else 4-byte ones */\n"
      "  const bool vec_k = k_sd == 1 && D % 4 == 0 && k_st % 4 == 0 && ((unsigned long long)kg & 15) == 0;\n"
      "  const bool vec_v = v_sd == 1 && DV % 4 == 0 && v_st % 4 == 0 && ((unsigned long long)vg & 15) == 0;\n"
      "  /* rows [0, n) of an (R x W) tile at src (row stride st, element stride sd) into dst\n"
      "   * (row stride ROW), columns >= w and rows >= n zero */\n"
      "  auto copy_rows = [&](float *dst, int ROW, const float *src, long long st, long long sd, int R, int n, int W,\n"
      "                       int w, bool vec) {\n"
      "    if (vec) {\n"
      "      for (int e = tid; e < R * (W / 4); e += blockDim.x) {\n"
      "        const int r = e / (W / 4), c = e % (W / 4) * 4;\n"
      "        const bool in = r < n && c < w;\n"
      "        tc_cp_async16(&dst[r * ROW + c], in ? src + r * st + c : src, in);\n"
      "      }\n"
      "    } else {\n"
      "      for (int e = tid; e < R * W; e += blockDim.x) {\n"
      "        const int r = e / W, c = e % W;\n"
      "        const bool in = r < n && c < w;\n"
      "        tc_cp_async4(&dst[r * ROW + c], in ? src + r * st + c * sd : src, in);\n"
      "      }\n"
      "    }\n"
      "  };\n"
      "  auto load_tile = [&](long long kt) {\n"
      "    const long long k0 = kt * BN;\n"
      "    const int n = (int)(tk - k0 < BN ? tk - k0 : BN);\n"
      "    copy_rows(kbuf + (kt & 1) * BN * KP, KROW, kg + k0 * k_st, k_st, k_sd, BN, n, D4, D, vec_k);\n"
      "    copy_rows(vbuf + (kt & 1) * BN * DV8, DV8, vg + k0 * v_st, v_st, v_sd, BN, n, DV8, DV, vec_v);\n"
      "  };\n"
      "  if (tiles_k > 0) load_tile(0);\n"
      "  tc_cp_async_commit();\n");
  tck_str_puts(s,
      "  /* q transposed (dimension-major) while tile 0 is in flight: a thread's QPT queries of one\n"
      "   * dimension are then two float4s, and the 4 query groups of a warp read 4 different bank\n"
      "   * groups (query-major rows of a multiple of 4 floats put queries 8 apart on the same banks) */\n"
      "  for (int e = tid; e < BM * D4; e += blockDim.x) {\n"
      "    const int r = e / D4, c = e % D4; /* consecutive threads read consecutive dimensions of a query */\n"
      "    const long long qi = q0 + r;\n"
      "    qs[c * QTROW + r] = qi < tq && c < D ? qg[qi * q_st + c * q_sd] : 0.0f;\n"
      "  }\n"
      "  for (long long kt = 0; kt < tiles_k; kt++) {\n"
      "    const long long k0 = kt * BN;\n"
      "    float *ks = kbuf + (kt & 1) * BN * KP, *vs = vbuf + (kt & 1) * BN * DV8;\n"
      "    if (kt + 1 < tiles_k) {\n"
      "      load_tile(kt + 1); /* into the other buffers, read by nobody since the last barrier */\n"
      "      tc_cp_async_commit();\n"
      "      tc_cp_async_wait1(); /* q and tile kt have landed */\n"
      "    } else {\n"
      "      tc_cp_async_wait0();\n"
      "    }\n"
      "    __syncthreads();\n"
      "    /* keys in the tile; key j of query i masked when (j - k0) - (i - q0) + dq >= 0 (dq clamped:\n"
      "     * a key and a query of the tiles are less than BM + BN apart) */\n"
      "    const int n = (int)(tk - k0 < BN ? tk - k0 : BN);\n"
      "    const long long dq0 = k0 - q0 - causal_offset;\n"
      "    const int dq = dq0 > (1 << 20) ? (1 << 20) : dq0 < -(1 << 20) ? -(1 << 20) : (int)dq0;\n"
      "    /* scores: QPT queries x KPT keys per thread */\n"
      "    float sc[QPT][KPT];\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < QPT; i++)\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < KPT; j++) sc[i][j] = 0.0f;\n"
      "#pragma unroll 1\n");
  tck_str_puts(s,
      "    for (int e = 0; e < D4; e += 4) {\n"
      "      float4 kv[KPT];\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < KPT; j++) kv[j] = *(const float4 *)&ks[(tx + 8 * j) * KROW + e];\n"
      "#pragma unroll\n"
      "      for (int dd = 0; dd < 4; dd++) { /* dimension e + dd, in order: the same sums as a dot product */\n"
      "        float qv[QPT];\n"
      "#pragma unroll\n"
      "        for (int h = 0; h < QPT; h += 4) {\n"
      "          const float4 q4 = *(const float4 *)&qs[(e + dd) * QTROW + ty * QPT + h];\n"
      "          qv[h] = q4.x, qv[h + 1] = q4.y, qv[h + 2] = q4.z, qv[h + 3] = q4.w;\n"
      "        }\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < KPT; j++) {\n"
      "          const float kd = dd == 0 ? kv[j].x : dd == 1 ? kv[j].y : dd == 2 ? kv[j].z : kv[j].w;\n"
      "#pragma unroll\n"
      "          for (int i = 0; i < QPT; i++) sc[i][j] = fmaf(qv[i], kd, sc[i][j]);\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "    /* mask, then the online softmax of each query over its 8 threads */\n"
      "    float alpha[QPT];\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < QPT; i++) {\n"
      "      float mt = -INFINITY;\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < KPT; j++) {\n"
      "        const int kj = tx + 8 * j; /* the key's place in the tile */\n"
      "        const bool gone = kj >= n || (causal && kj - (ty * QPT + i) + dq >= 0);\n"
      "        sc[i][j] = gone ? -INFINITY : sc[i][j] * scale;\n"
      "        mt = tc_max_f32(mt, sc[i][j]);\n"
      "      }\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 1));\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 2));\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 4));\n"
      "      const float mn = tc_max_f32(m[i], mt);\n"
      "      /* all -inf so far: nothing to rescale, nothing weighs */\n"
      "      alpha[i] = mn == -INFINITY ? 1.0f : expf(m[i] - mn);\n"
      "      float sum = 0.0f;\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < KPT; j++) {\n"
      "        sc[i][j] = mn == -INFINITY ? 0.0f : expf(sc[i][j] - mn);\n"
      "        sum += sc[i][j];\n"
      "      }\n"
      "      sum += tc_shfl_xor(sum, 1);\n"
      "      sum += tc_shfl_xor(sum, 2);\n"
      "      sum += tc_shfl_xor(sum, 4);\n"
      "      l[i] = l[i] * alpha[i] + sum;\n");
  tck_str_puts(s,
      "      m[i] = mn;\n"
      "    }\n"
      "    __syncthreads(); /* every thread's scores are made: p may take k's place */\n"
      "    float *ps = ks;\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < KPT; j++)\n"
      "#pragma unroll\n"
      "      for (int h = 0; h < QPT; h += 4)\n"
      "        *(float4 *)&ps[(tx + 8 * j) * PROW + ty * QPT + h] = make_float4(sc[h][j], sc[h + 1][j], sc[h + 2][j], sc[h + 3][j]);\n"
      "    __syncthreads();\n"
      "    /* acc = acc * alpha + p . v over the tile's keys: QPT queries x DVT values per thread */\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < QPT; i++)\n"
      "#pragma unroll\n"
      "      for (int f = 0; f < DVT; f++) acc[i][f] *= alpha[i];\n"

      "#pragma unroll 2\n"
      "    for (int c = 0; c < n; c++) {\n"
      "      float pq[QPT];\n"
      "#pragma unroll\n"
      "      for (int h = 0; h < QPT; h += 4) {\n"
      "        const float4 pv = *(const float4 *)&ps[c * PROW + ty * QPT + h];\n"
      "        pq[h] = pv.x, pq[h + 1] = pv.y, pq[h + 2] = pv.z, pq[h + 3] = pv.w;\n"
      "      }\n");
  tck_str_puts(s, dv8 / 8 % 4 == 0 ? pv_vector : pv_scalar);
  tck_str_puts(s,
      "    }\n"
      "    __syncthreads(); /* p and v of this tile are read: its buffers may take tile kt + 2 */\n"
      "  }\n"
      "  tc_cp_async_wait0(); /* no copy outlives the block */\n"
      "  /* out = acc / l; a query with keys but every one masked is NaN, as softmax of all -inf */\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < QPT; i++) {\n"
      "    const long long qi = q0 + ty * QPT + i;\n"
      "    if (qi >= tq) continue;\n"
      "    const float inv_none = tk > 0 && m[i] == -INFINITY ? NAN : 0.0f;\n"
      "#pragma unroll\n"
      "    for (int f = 0; f < DVT; f++) {\n"
      "      const int col = DVT % 4 == 0 ? f / 4 * 32 + tx * 4 + f % 4 : tx * DVT + f; /* as p . v read v */\n"
      "      if (col < DV) og[qi * o_st + col * o_sd] = m[i] == -INFINITY ? inv_none : acc[i][f] / l[i];\n"
      "    }\n"
      "  }\n");
  tck_str_puts(s, "}\n");
}


/* ---------------------------------------------------------------- cuda.attention_kernel=tiled
 * Both products register-blocked as in an SGEMM. 128 threads; thread (tx = t % 8, ty = t / 8)
 * owns TM queries 4ty + 64h + {0..3} (h < TM/4) and TN keys 4tx + 32h + {0..3} (h < TN/4) of
 * the tile's scores, so BM = 16 TM queries a block and BN = 8 TN keys a tile. q and k are both
 * transposed in shared memory (a row per dimension): for one dimension a thread's queries and
 * keys are TM/4 + TN/4 float4 loads for TM x TN FMAs (8 x 8: 4 loads, 64 FMAs). A query's
 * scores are spread over its 8 consecutive lanes (3 shuffles for its max and sum). p goes to
 * shared memory query-major (a thread's 4 keys of a query are one float4; 8 lanes store 128
 * contiguous bytes), then the thread accumulates its TM queries x DV8/8 value columns (as v1:
 * columns 4tx + 32f .. +3) over the tile's keys, 4 at a time: TM float4s of p and one v row
 * per key. Shared memory: q (D x BM+4), one k (D x BN+4), one v (BN x DV8) and p (BM x BN+4):
 * k and v are single-buffered but copied apart (cp.async), so each copy has half a tile of
 * work to hide behind: k of tile kt + 1 is in flight during the softmax and p.v of tile kt, v
 * of tile kt + 1 during the scores of tile kt + 1 (8 x 8 at 64-dim heads: 102 KB, two blocks
 * an SM; double buffers would leave one). k is transposed by 4-byte copies: a warp takes 8
 * consecutive dimensions of 4 keys (32-byte reads), which land on 32 different banks with rows
 * of BN + 4 floats. The mask, the online softmax, the causal skip, the block order and the
 * results at the edges (all masked: NaN; tk = 0: zeros) are v1's. Every head size 1..256 works;
 * a tile whose shared memory exceeds the device's limit (227 KB on the H200) falls back to
 * 4 x 4, then to v1 (never at sm_90: 4 x 4 at 256-dim heads takes 148 KB). */

/* Shared memory of the tiled kernel, in bytes. */
static int32_t tiled_smem(int32_t bm, int32_t bn, int32_t d, int32_t dv8) {
  return 4 * (d * (bm + 4) + d * (bn + 4) + bn * dv8 + bm * (bn + 4));
}

/* The opt-in shared memory of a block by compute capability (the H100/H200's 227 KB, the
 * A100's 163 KB, the consumer parts' 99 KB); 0 (sm unknown): the H200's. */
static int32_t attn_smem_max(int32_t sm) {
  return sm == 0 || sm >= 90 ? 227 * 1024 : sm == 80 || sm == 87 ? 163 * 1024 : sm >= 86 ? 99 * 1024 : 64 * 1024;
}

static void attention_tiled(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, int64_t d, int64_t dv, int32_t tm,
                            int32_t tn) {
  const tc_attention_desc *a = g->k->attention;
  const int32_t dv8 = round_up((int32_t)dv, 8), d8 = round_up((int32_t)d, 8);
  const int32_t bm = 16 * tm, bn = 8 * tn;
  plan->kind = ICUDA_LAUNCH_ATTENTION;
  plan->block = 128;
  plan->smem_bytes = tiled_smem(bm, bn, (int32_t)d, dv8);
  plan->attn_queries = bm;
  tck_str_printf(s,
                 "/* flash attention, register-tiled: %lld-dim queries and keys, %lld-dim values; %s; scale %.9g;\n"
                 " * %d queries a block, %d keys a tile, %d x %d scores a thread */\n",
                 (long long)d, (long long)dv, a->causal ? "causal" : "no mask", a->scale, (int)bm, (int)bn, (int)tm,
                 (int)tn);
  cg_prologue(s, g, 128);
  tck_str_printf(s,
                 "  enum { BM = %d, BN = %d, TM = %d, TN = %d, D = %lld, D8 = %d, DV = %lld, DV8 = %d, DVT = DV8 / 8 };\n"
                 "  enum { QTROW = BM + 4, KTROW = BN + 4, PROW = BN + 4 };\n",
                 bm, bn, tm, tn, (long long)d, d8, (long long)dv, dv8);
  attention_common(s, g, a);
  tck_str_puts(s,
      "  const long long q0 = qt * BM;\n"
      "  extern __shared__ float4 tc_smem4[];\n"
      "  float *qs = (float *)tc_smem4;  /* D x QTROW: q transposed, a row per dimension */\n"
      "  float *ks = qs + D * QTROW;     /* D x KTROW: the tile's k transposed */\n"
      "  float *vs = ks + D * KTROW;     /* BN x DV8: the tile's v rows */\n"
      "  float *ps = vs + BN * DV8;      /* BM x PROW: the tile's probabilities, a row per query */\n"
      "  const int tid = threadIdx.x, tx = tid & 7, ty = tid >> 3;\n"
      "  /* the block's query (column of qs, row of ps) of the thread's i-th query and the tile's key\n"
      "   * (column of ks and ps) of its j-th key: runs of 4, the threads' runs side by side (16 of\n"
      "   * queries, 8 of keys), so the 8 lanes of a phase (one ty) read 128 contiguous bytes of a\n"
      "   * k row and one float4 of a q row (a broadcast) */\n"
      "  auto qrow = [&](int i) { return i / 4 * 64 + 4 * ty + i % 4; };\n"
      "  auto kcol = [&](int j) { return j / 4 * 32 + 4 * tx + j % 4; };\n"
      "\n");
  query_state(s, "TM");
  tck_str_puts(s,
      "  /* 16-byte copies of v where its rows are contiguous and 16-byte aligned, else 4-byte ones */\n"
      "  const bool vec_v = v_sd == 1 && DV % 4 == 0 && v_st % 4 == 0 && ((unsigned long long)vg & 15) == 0;\n"
      "  /* k of tile kt transposed into ks, 4 bytes a copy: 8 lanes take 8 consecutive dimensions of\n"
      "   * a key (32-byte reads), a warp 4 keys (rows of KTROW = 4 mod 32 floats: 32 banks); keys past\n"
      "   * the end zero */\n"
      "  auto load_k = [&](long long kt) {\n"
      "    const long long k0 = kt * BN;\n"
      "    const int n = (int)(tk - k0 < BN ? tk - k0 : BN);\n"
      "    const float *src = kg + k0 * k_st;\n"
      "#pragma unroll 4\n"
      "    for (int e = tid; e < D8 * BN; e += 128) {\n"
      "      const int r = e / 8 % BN, dim = e / (8 * BN) * 8 + e % 8;\n"
      "      const bool in = r < n;\n"
      "      if (dim < D) tc_cp_async4(&ks[dim * KTROW + r], in ? src + r * k_st + dim * k_sd : src, in);\n"
      "    }\n"
      "  };\n"
      "  /* v of tile kt into vs, rows past the end zero */\n"
      "  auto load_v = [&](long long kt) {\n"
      "    const long long k0 = kt * BN;\n"
      "    const int n = (int)(tk - k0 < BN ? tk - k0 : BN);\n"
      "    const float *src = vg + k0 * v_st;\n"
      "    if (vec_v) {\n"
      "      for (int e = tid; e < BN * (DV8 / 4); e += 128) {\n"
      "        const int r = e / (DV8 / 4), c = e % (DV8 / 4) * 4;\n"
      "        const bool in = r < n && c < DV;\n"
      "        tc_cp_async16(&vs[r * DV8 + c], in ? src + r * v_st + c : src, in);\n"
      "      }\n"
      "    } else {\n"
      "      for (int e = tid; e < BN * DV8; e += 128) {\n"
      "        const int r = e / DV8, c = e % DV8;\n"
      "        const bool in = r < n && c < DV;\n"
      "        tc_cp_async4(&vs[r * DV8 + c], in ? src + r * v_st + c * v_sd : src, in);\n"
      "      }\n"
      "    }\n"
      "  };\n"
      "  /* two copy groups a tile, k then v, committed apart */\n"
      "  if (tiles_k > 0) {\n"
      "    load_k(0);\n"
      "    tc_cp_async_commit();\n"
      "    load_v(0);\n"
      "    tc_cp_async_commit();\n"
      "  }\n"
      "  /* q transposed while tile 0 is in flight */\n"
      "  for (int e = tid; e < BM * D; e += 128) {\n"
      "    const int r = e / D, c = e % D; /* consecutive threads read consecutive dimensions of a query */\n"
      "    const long long qi = q0 + r;\n"
      "    qs[c * QTROW + r] = qi < tq ? qg[qi * q_st + c * q_sd] : 0.0f;\n"
      "  }\n");
  tck_str_puts(s,
      "  for (long long kt = 0; kt < tiles_k; kt++) {\n"
      "    const long long k0 = kt * BN;\n"
      "    const bool more = kt + 1 < tiles_k;\n"
      "    tc_cp_async_wait1(); /* k of tile kt has landed (v may still be in flight) */\n"
      "    __syncthreads();     /* ... for every thread (and q, at tile 0) */\n"
      "    /* keys in the tile; key j of query i masked when (j - k0) - (i - q0) + dq >= 0 (dq clamped:\n"
      "     * a key and a query of the tiles are less than BM + BN apart) */\n"
      "    const int n = (int)(tk - k0 < BN ? tk - k0 : BN);\n"
      "    const long long dq0 = k0 - q0 - causal_offset;\n"
      "    const int dq = dq0 > (1 << 20) ? (1 << 20) : dq0 < -(1 << 20) ? -(1 << 20) : (int)dq0;\n"
      "    /* scores: TM queries x TN keys, one dimension at a time (a dot product's FMAs in order) */\n"
      "    float sc[TM][TN];\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < TM; i++)\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < TN; j++) sc[i][j] = 0.0f;\n"
      "#pragma unroll 4\n"
      "    for (int dim = 0; dim < D; dim++) {\n"
      "      float qv[TM], kv[TN];\n"
      "#pragma unroll\n"
      "      for (int h = 0; h < TM / 4; h++) {\n"
      "        const float4 q4 = *(const float4 *)&qs[dim * QTROW + qrow(4 * h)];\n"
      "        qv[4 * h] = q4.x, qv[4 * h + 1] = q4.y, qv[4 * h + 2] = q4.z, qv[4 * h + 3] = q4.w;\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int h = 0; h < TN / 4; h++) {\n"
      "        const float4 k4 = *(const float4 *)&ks[dim * KTROW + kcol(4 * h)];\n"
      "        kv[4 * h] = k4.x, kv[4 * h + 1] = k4.y, kv[4 * h + 2] = k4.z, kv[4 * h + 3] = k4.w;\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < TM; i++)\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < TN; j++) sc[i][j] = fmaf(qv[i], kv[j], sc[i][j]);\n"
      "    }\n"
      "    __syncthreads(); /* every thread is done with k: tile kt + 1's may come in */\n"
      "    if (more) {\n"
      "      load_k(kt + 1);\n"
      "      tc_cp_async_commit();\n"
      "    }\n");
  tck_str_puts(s,
      "    /* mask, then the online softmax of each query over its 8 lanes; acc rescaled by\n"
      "     * exp(m_old - m_new) */\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < TM; i++) {\n"
      "      float mt = -INFINITY;\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < TN; j++) {\n"
      "        const bool gone = kcol(j) >= n || (causal && kcol(j) - qrow(i) + dq >= 0);\n"
      "        sc[i][j] = gone ? -INFINITY : sc[i][j] * scale;\n"
      "        mt = tc_max_f32(mt, sc[i][j]);\n"
      "      }\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 1));\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 2));\n"
      "      mt = tc_max_f32(mt, tc_shfl_xor(mt, 4));\n"
      "      const float mn = tc_max_f32(m[i], mt);\n"
      "      /* all -inf so far: nothing to rescale, nothing weighs */\n"
      "      const float alpha = mn == -INFINITY ? 1.0f : expf(m[i] - mn);\n"
      "      float sum = 0.0f;\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < TN; j++) {\n"
      "        sc[i][j] = mn == -INFINITY ? 0.0f : expf(sc[i][j] - mn);\n"
      "        sum += sc[i][j];\n"
      "      }\n"
      "      sum += tc_shfl_xor(sum, 1);\n"
      "      sum += tc_shfl_xor(sum, 2);\n"
      "      sum += tc_shfl_xor(sum, 4);\n"
      "      l[i] = l[i] * alpha + sum;\n"
      "      m[i] = mn;\n"
      "#pragma unroll\n"
      "      for (int f = 0; f < DVT; f++) acc[i][f] *= alpha;\n"
      "      /* p, a row per query (read by nobody since the last tile's p . v) */\n"
      "#pragma unroll\n"
      "      for (int h = 0; h < TN / 4; h++)\n"
      "        *(float4 *)&ps[qrow(i) * PROW + kcol(4 * h)] =\n"
      "            make_float4(sc[i][4 * h], sc[i][4 * h + 1], sc[i][4 * h + 2], sc[i][4 * h + 3]);\n"
      "    }\n"
      "    if (more) tc_cp_async_wait1(); /* v of tile kt has landed (k of kt + 1 may be in flight) */\n"
      "    else tc_cp_async_wait0();\n"
      "    __syncthreads(); /* p and v for every thread */\n"
      "    /* acc += p . v: TM queries x DVT values, 4 keys at a time (keys n .. BN - 1: p and v 0) */\n"
      "#pragma unroll 1\n"
      "    for (int c = 0; c < n; c += 4) {\n"
      "      float4 p4[TM];\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < TM; i++) p4[i] = *(const float4 *)&ps[qrow(i) * PROW + c];\n"
      "#pragma unroll\n"
      "      for (int cc = 0; cc < 4; cc++) {\n"
      "        const float *vrow = &vs[(c + cc) * DV8];\n"
      "        float pq[TM];\n"
      "#pragma unroll\n"
      "        for (int i = 0; i < TM; i++) pq[i] = cc == 0 ? p4[i].x : cc == 1 ? p4[i].y : cc == 2 ? p4[i].z : p4[i].w;\n");
  if (dv8 / 8 % 4 == 0)
    tck_str_puts(s,
      "#pragma unroll\n"
      "        for (int f4 = 0; f4 < DVT / 4; f4++) {\n"
      "          const float4 vv = *(const float4 *)&vrow[f4 * 32 + tx * 4]; /* 8 lanes: 128 contiguous bytes */\n"
      "#pragma unroll\n"
      "          for (int i = 0; i < TM; i++) {\n"
      "            acc[i][f4 * 4 + 0] = fmaf(pq[i], vv.x, acc[i][f4 * 4 + 0]);\n"
      "            acc[i][f4 * 4 + 1] = fmaf(pq[i], vv.y, acc[i][f4 * 4 + 1]);\n"
      "            acc[i][f4 * 4 + 2] = fmaf(pq[i], vv.z, acc[i][f4 * 4 + 2]);\n"
      "            acc[i][f4 * 4 + 3] = fmaf(pq[i], vv.w, acc[i][f4 * 4 + 3]);\n"
      "          }\n"
      "        }\n");
  else
    tck_str_puts(s,
      "#pragma unroll\n"
      "        for (int f = 0; f < DVT; f++) {\n"
      "          const float vv = vrow[tx * DVT + f];\n"
      "#pragma unroll\n"
      "          for (int i = 0; i < TM; i++) acc[i][f] = fmaf(pq[i], vv, acc[i][f]);\n"
      "        }\n");
  tck_str_puts(s,
      "      }\n"
      "    }\n"
      "    __syncthreads(); /* p and v are read: tile kt + 1's v may come in */\n"
      "    if (more) {\n"
      "      load_v(kt + 1);\n"
      "      tc_cp_async_commit();\n"
      "    }\n"
      "  }\n"
      "  tc_cp_async_wait0(); /* no copy outlives the block */\n"
      "  /* out = acc / l; a query with keys but every one masked is NaN, as softmax of all -inf */\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < TM; i++) {\n"
      "    const long long qi = q0 + qrow(i);\n"
      "    if (qi >= tq) continue;\n"
      "    const float inv_none = tk > 0 && m[i] == -INFINITY ? NAN : 0.0f;\n"
      "#pragma unroll\n"
      "    for (int f = 0; f < DVT; f++) {\n"
      "      const int col = DVT % 4 == 0 ? f / 4 * 32 + tx * 4 + f % 4 : tx * DVT + f; /* as p . v read v */\n"
      "      if (col < DV) og[qi * o_st + col * o_sd] = m[i] == -INFINITY ? inv_none : acc[i][f] / l[i];\n"
      "    }\n"
      "  }\n"
      "}\n");
}

tc_status cg_attention(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_attention_desc *a = g->k->attention;
  int64_t d = 0, dv = 0;
  /* validated: both are constants in 1..256 (tck_kernel_list_validate) */
  const tc_size_expr *ed = tck_list_expr(g->list, a->d), *edv = tck_list_expr(g->list, a->dv);
  if (ed->op == TC_SX_CONST) d = ed->value;
  if (edv->op == TC_SX_CONST) dv = edv->value;
  if (!d || !dv) {
    snprintf(err, cap, "attention head sizes must be constants in 1..256");
    return TC_ERR_UNSUPPORTED;
  }
  if (g->o->attn_kernel == ICUDA_ATTN_TILED) {
    int32_t tm = g->o->attn_tile_m == 4 ? 4 : 8, tn = g->o->attn_tile_n == 4 ? 4 : 8;
    const int32_t dv8 = round_up((int32_t)dv, 8);
    if (tm * (dv8 / 8) > 64) tm = 4; /* more than 64 accumulators a thread would spill */
    const int32_t smem_max = attn_smem_max(g->o->sm);
    if (tiled_smem(16 * tm, 8 * tn, (int32_t)d, dv8) > smem_max) tm = tn = 4;
    if (tiled_smem(16 * tm, 8 * tn, (int32_t)d, dv8) <= smem_max) {
      attention_tiled(s, g, plan, d, dv, tm, tn);
      return TC_OK;
    }
  }
  attention_v1(s, g, plan, d, dv);
  return TC_OK;
}
