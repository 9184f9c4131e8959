/* gemm_runtime.c — the generated GEMM's packing, micro-kernel and tiles (the loops around them
 * and the epilogue are generated into each unit by codegen_gemm.c; the types, block sizes and
 * the table of these calls are the prelude's section "gemm", which the build extracts with
 * section "vec" into tc_cpu_gemm_sections.h, included below).
 *
 * Built into the plugin once per vector width (CMakeLists.txt: -march=x86-64-v4 for AVX-512,
 * x86-64-v3 for AVX2 + FMA, and the compiler's default for the rest), with the flags units get,
 * rather than compiled into every unit: they were 0.4-0.5 s of every cold compile of a unit with
 * a matmul. A unit compiled with -march=native asks for the width it was compiled for (its
 * TC_VL) and the size of its workspace (tc_gemm_attach); TC_GEMM_RUNTIME_NAME(vl, ws_size)
 * answers with this build's table when both match, else NULL. The code is the same text the
 * units compiled before, so results are the same bits. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define TC_GEMM_RUNTIME_BUILD 1
#include "tc_cpu_gemm_sections.h"

/* n split in equal blocks of whole steps, at most max each: the block size. */
static inline int64_t tc_gemm_block_size(int64_t n, int64_t step, int64_t max) {
  const int64_t steps = (n + step - 1) / step, per = max / step, blocks = (steps + per - 1) / per;
  return (blocks > 1 ? (steps + blocks - 1) / blocks : steps > 0 ? steps : 1) * step;
}

/* Block sizes for an item of at most m rows and n columns, and K = k (one block of length 0 when
 * k is 0, so the tiles still come out, zero); the buffers. */
static void tc_gemm_ws_init(tc_gemm_ws *g, int64_t m, int64_t n, int64_t k) {
  g->mc_max = tc_gemm_block_size(m, TC_GEMM_MR, TC_GEMM_MC);
  g->kc_max = tc_gemm_block_size(k, 1, TC_GEMM_KC);
  g->nc_max = tc_gemm_block_size(n, TC_GEMM_NR, TC_GEMM_NC);
  const size_t na = (size_t)(g->mc_max * g->kc_max + 15) / 16 * 16, nb = (size_t)(g->kc_max * g->nc_max); /* B aligned */
  const int small = na <= sizeof g->spare_a / sizeof(float) && nb <= sizeof g->spare_b / sizeof(float);
  const size_t bytes = ((na + nb) * sizeof(float) + 63) / 64 * 64; /* aligned_alloc wants a multiple of 64 */
  g->heap = small ? NULL : (float *)aligned_alloc(64, bytes); /* a small one needs no malloc */
  g->pa = g->heap ? g->heap : g->spare_a;
  g->pb = g->heap ? g->heap + na : g->spare_b;
  if (!g->heap && !small) g->mc_max = TC_GEMM_MR, g->nc_max = TC_GEMM_NR;
}
static void tc_gemm_ws_free(tc_gemm_ws *g) { free(g->heap); }

/* Rows 0..mc-1 of the kc columns of A at a (strides sam, sak) as micro-panels: kc columns of MR
 * floats each, zero past mc. Sets the current block's kc. */
static void tc_gemm_block_a(tc_gemm_ws *g, const float *restrict a, int64_t sam, int64_t sak, int64_t mc, int64_t kc) {
  g->kc = kc;
  /* Rows of A contiguous: whole micro-panels are read in place (the micro-kernel broadcasts from
   * MR rows side by side, each read front to back), which saves a pass over A; partial ones are
   * packed, zero-padded, so the kernel never reads past A's rows. */
  g->a = a, g->sam = sam, g->a_direct = sak == 1;
  for (int64_t i0 = 0; i0 < mc; i0 += TC_GEMM_MR) {
    float *restrict d = g->pa + i0 * kc;
    const int64_t mr = mc - i0 < TC_GEMM_MR ? mc - i0 : TC_GEMM_MR;
    if (mr == TC_GEMM_MR && g->a_direct) continue;
    if (mr == TC_GEMM_MR) { /* the rows read side by side: MR streams in flight, not one (2-3x faster) */
      for (int64_t k = 0; k < kc; k++)
#pragma GCC unroll 16
        for (int i = 0; i < TC_GEMM_MR; i++) d[k * TC_GEMM_MR + i] = a[(i0 + i) * sam + k * sak];
      continue;
    }
    const int64_t rows = mr > 4 ? TC_GEMM_MR : mr > 1 ? 4 : 1; /* what the tile reads (tc_gemm_tile_f32's R) */
    for (int64_t i = 0; i < mr; i++)
      for (int64_t k = 0; k < kc; k++) d[k * TC_GEMM_MR + i] = a[(i0 + i) * sam + k * sak];
    for (int64_t i = mr; i < rows; i++)
      for (int64_t k = 0; k < kc; k++) d[k * TC_GEMM_MR + i] = 0.0f;
  }
}

/* The kc x nc block of B at b (strides sbk, sbn; kc as the block of A's): packed into panels of NR
 * columns, kc rows of NR floats each, zero past nc; or, direct, noted to be read in place. */
static void tc_gemm_block_b(tc_gemm_ws *g, const float *restrict b, int64_t sbk, int64_t sbn, int64_t nc, int direct) {
  const int64_t kc = g->kc;
  g->b = b, g->sbk = sbk, g->direct = direct;
  if (direct) return;
  const int64_t whole = sbn == 1 ? nc / TC_GEMM_NR * TC_GEMM_NR : 0; /* panels copied as vectors */
  for (int64_t k = 0; k < kc; k++) /* B's rows contiguous: each read once, front to back */
    for (int64_t j0 = 0; j0 < whole; j0 += TC_GEMM_NR)
      for (int v = 0; v < TC_GEMM_NV; v++)
        *(tc_gv *)(g->pb + j0 * kc + k * TC_GEMM_NR + v * TC_GEMM_VL) = *(const tc_gvu *)(b + k * sbk + j0 + v * TC_GEMM_VL);
  for (int64_t j0 = whole; j0 < nc; j0 += TC_GEMM_NR) { /* any strides; a transposed B's columns read side by side */
    float *restrict d = g->pb + j0 * kc;
    const int64_t nr = nc - j0 < TC_GEMM_NR ? nc - j0 : TC_GEMM_NR;
    for (int64_t k = 0; k < kc; k++)
      for (int64_t j = 0; j < TC_GEMM_NR; j++) d[k * TC_GEMM_NR + j] = j < nr ? b[k * sbk + (j0 + j) * sbn] : 0.0f;
  }
}

/* R rows of sums (R a constant at each call: the loops unroll, the sums live in registers):
 * cout = cin (or 0) + pa·pb over kc, pb holding NR floats per k at row stride ldb; pa a packed
 * micro-panel (MR floats per k), or with DA (a constant) MR rows of A in place at row stride lda. */
static inline __attribute__((always_inline)) void tc_gemm_ukr_f32(const int R, const int DA, int64_t kc,
                                                                   const float *restrict pa, int64_t lda,
                                                                   const float *restrict pb, int64_t ldb, const float *cin,
                                                                   int64_t ldin, float *cout, int64_t ldout) {
  tc_gv acc[TC_GEMM_MR][TC_GEMM_NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < TC_GEMM_NV; v++) acc[i][v] = cin ? (tc_gv) * (const tc_gvu *)(cin + i * ldin + v * TC_GEMM_VL) : (tc_gv){0};
#pragma GCC unroll 4 /* the loop's own counting, 1 in 4 steps: +2-5% on the Xeon */
  for (int64_t k = 0; k < kc; k++) {
    tc_gv bv[TC_GEMM_NV];
#pragma GCC unroll 4
    for (int v = 0; v < TC_GEMM_NV; v++) bv[v] = *(const tc_gvu *)(pb + k * ldb + v * TC_GEMM_VL);
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
      const tc_gv av = tc_gemm_bcast(DA ? pa[i * lda + k] : pa[k * TC_GEMM_MR + i]);
#pragma GCC unroll 4
      for (int v = 0; v < TC_GEMM_NV; v++) acc[i][v] = tc_gemm_fma(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < TC_GEMM_NV; v++) *(tc_gvu *)(cout + i * ldout + v * TC_GEMM_VL) = acc[i][v];
}

/* V vectors of one row's sums (V a constant): cout[0..V*VL) = cin (or 0) + a·B over kc, a at
 * stride sa (a packed micro-panel's first row), B's rows at b (stride ldb). One row of a tile
 * has only two chains of dependent FMAs; V of them side by side keep the FMA units busy. */
static inline __attribute__((always_inline)) void tc_gemm_row_ukr_f32(const int V, int64_t kc, const float *restrict a,
                                                                       int64_t sa, const float *restrict b, int64_t ldb,
                                                                       const float *cin, float *cout) {
  tc_gv acc[8];
#pragma GCC unroll 8
  for (int v = 0; v < V; v++) acc[v] = cin ? (tc_gv) * (const tc_gvu *)(cin + v * TC_GEMM_VL) : (tc_gv){0};
  for (int64_t k = 0; k < kc; k++) {
    const tc_gv av = tc_gemm_bcast(a[k * sa]);
#pragma GCC unroll 8
    for (int v = 0; v < V; v++) acc[v] = tc_gemm_fma(av, *(const tc_gvu *)(b + k * ldb + v * TC_GEMM_VL), acc[v]);
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; v++) *(tc_gvu *)(cout + v * TC_GEMM_VL) = acc[v];
}

/* The one-row tile of columns j..j+nr-1 (nr up to MR*NR) of a block read in place: as
 * tc_gemm_tile_f32, in chunks of 8, 4, 2 and 1 vectors, the last columns one at a time. */
static void tc_gemm_row_f32(tc_gemm_ws *g, int64_t j, int64_t nr, float *c, int64_t scn, int first, int to_t) {
  const int64_t kc = g->kc, ldb = g->sbk;
  const float *a = g->pa, *b = g->b + j;
  float *restrict t = g->t;
  const int in_c = scn == 1 && !to_t; /* C's row is contiguous and the sums end there */
  if (!first && scn != 1)
    for (int64_t q = 0; q < nr; q++) t[q] = c[q * scn];
  const float *cin = first ? NULL : scn == 1 ? c : t;
  float *cout = in_c ? c : t;
  int64_t q = 0;
  for (; q + 8 * TC_GEMM_VL <= nr; q += 8 * TC_GEMM_VL) tc_gemm_row_ukr_f32(8, kc, a, TC_GEMM_MR, b + q, ldb, cin ? cin + q : NULL, cout + q);
  if (q + 4 * TC_GEMM_VL <= nr) tc_gemm_row_ukr_f32(4, kc, a, TC_GEMM_MR, b + q, ldb, cin ? cin + q : NULL, cout + q), q += 4 * TC_GEMM_VL;
  if (q + 2 * TC_GEMM_VL <= nr) tc_gemm_row_ukr_f32(2, kc, a, TC_GEMM_MR, b + q, ldb, cin ? cin + q : NULL, cout + q), q += 2 * TC_GEMM_VL;
  if (q + TC_GEMM_VL <= nr) tc_gemm_row_ukr_f32(1, kc, a, TC_GEMM_MR, b + q, ldb, cin ? cin + q : NULL, cout + q), q += TC_GEMM_VL;
  for (; q < nr; q++) { /* the same chain, one element at a time */
    float acc = cin ? cin[q] : 0.0f;
    for (int64_t k = 0; k < kc; k++) acc = fmaf(a[k * TC_GEMM_MR], b[k * ldb + q], acc);
    cout[q] = acc;
  }
  if (!to_t && !in_c)
    for (int64_t r = 0; r < nr; r++) c[r * scn] = t[r];
}

/* The tile of rows i..i+mr-1 and columns j..j+nr-1 of the current blocks (i, j from the blocks'
 * first row and column) at c (C's strides scm, scn): from zero at the first block of K, else from
 * the partial sums in C; to g->t (rows of NR) at the last block when to_t (the epilogue reads it
 * there), else to C. */
static void tc_gemm_tile_f32(tc_gemm_ws *g, int64_t i, int64_t j, int64_t mr, int64_t nr, float *c, int64_t scm,
                             int64_t scn, int first, int to_t) {
  if (g->direct && mr == 1) { /* a single row, up to MR*NR wide (tc_gemm_tile_cols) */
    tc_gemm_row_f32(g, j, nr, c, scn, first, to_t);
    return;
  }
  const int R = mr > 4 ? TC_GEMM_MR : mr > 1 ? 4 : 1; /* the rows computed: the fewest that cover mr */
  const int64_t kc = g->kc;
  const float *pa = g->pa + i * kc, *pb = g->pb + j * kc;
  float *restrict t = g->t;
  int64_t ldb = TC_GEMM_NR;
  if (g->direct && nr == TC_GEMM_NR) pb = g->b + j, ldb = g->sbk;
  else if (g->direct) { /* a partial panel read in place would run past B's rows: pack it */
    float *restrict d = g->spare_b;
    for (int64_t k = 0; k < kc; k++)
      for (int64_t q = 0; q < TC_GEMM_NR; q++) d[k * TC_GEMM_NR + q] = q < nr ? g->b[k * g->sbk + j + q] : 0.0f;
    pb = d;
  }
  const int in_c = mr == R && nr == TC_GEMM_NR && scn == 1; /* C holds the whole tile, rows contiguous */
  if (scn == 1) /* the next tile of these rows: its partial sums (or the lines it will write) on their way */
    for (int64_t r = 0; r < mr; r++)
      for (int q = 0; q < TC_GEMM_NR; q += 16) __builtin_prefetch(c + r * scm + TC_GEMM_NR + q, 1); /* a line each */
  if (!first && !in_c)
    for (int64_t r = 0; r < R; r++)
      for (int64_t q = 0; q < TC_GEMM_NR; q++) t[r * TC_GEMM_NR + q] = r < mr && q < nr ? c[r * scm + q * scn] : 0.0f;
  const float *cin = first ? NULL : in_c ? c : t;
  float *cout = to_t || !in_c ? t : c;
  const int64_t ldin = in_c ? scm : TC_GEMM_NR, ldout = cout == c ? scm : TC_GEMM_NR;
  if (mr == TC_GEMM_MR && g->a_direct) /* a whole micro-panel: A's rows in place (tc_gemm_block_a) */
    tc_gemm_ukr_f32(TC_GEMM_MR, 1, kc, g->a + i * g->sam, g->sam, pb, ldb, cin, ldin, cout, ldout);
  else if (R == TC_GEMM_MR) tc_gemm_ukr_f32(TC_GEMM_MR, 0, kc, pa, 0, pb, ldb, cin, ldin, cout, ldout);
  else if (R == 4) tc_gemm_ukr_f32(4, 0, kc, pa, 0, pb, ldb, cin, ldin, cout, ldout);
  else tc_gemm_ukr_f32(1, 0, kc, pa, 0, pb, ldb, cin, ldin, cout, ldout);
  if (!to_t && !in_c)
    for (int64_t r = 0; r < mr; r++)
      for (int64_t q = 0; q < nr; q++) c[r * scm + q * scn] = t[r * TC_GEMM_NR + q];
}

static const tc_gemm_fns table = {tc_gemm_ws_init, tc_gemm_ws_free, tc_gemm_block_a, tc_gemm_block_b, tc_gemm_tile_f32};

const void *TC_GEMM_RUNTIME_NAME(int vl, size_t ws_size);
const void *TC_GEMM_RUNTIME_NAME(int vl, size_t ws_size) {
  return vl == TC_VL && ws_size == sizeof(tc_gemm_ws) ? &table : NULL;
}
