/* test_schedule.c — the fusion scheduler: hand-built graphs checked for the kernels they become
 * (one kernel for softmax and layer_norm, matmul epilogues, views folded into index maps,
 * buffer reuse), then models compiled end to end on inductor-cpu and compared with eager. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"
#include "tc/tc.h"
#include "tc_models.h"

/* ---------------------------------------------------------------- building graphs */
typedef struct gb {
  tc_graph g;
} gb;

static int32_t C(gb *b, int64_t v) { return sxtab_const(&b->g.sx, v); }
static tc_vtype T(tc_dtype dt, int rank, const int32_t *shape) {
  tc_vtype t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (int d = 0; d < rank; d++) t.shape[d] = shape[d];
  return t;
}
static int32_t IN(gb *b, tc_vtype t) { return graph_add_input(&b->g, &t); }
static int32_t NODE(gb *b, tc_prim p, tc_vtype out, int n_in, const int32_t *in, int n_attrs, const int64_t *attrs,
                    double f) {
  tc_node n;
  memset(&n, 0, sizeof n);
  n.prim = p;
  n.out = out;
  n.n_in = n_in;
  n.in = (int32_t *)in;
  n.n_iattrs = n_attrs;
  for (int i = 0; i < n_attrs; i++) n.iattrs[i] = attrs[i];
  n.fattr = f;
  return graph_add_node(&b->g, &n);
}
static int32_t UN(gb *b, tc_prim p, int32_t x) { return NODE(b, p, *graph_value_type(&b->g, x), 1, (int32_t[]){x}, 0, NULL, 0); }
static int32_t BIN(gb *b, tc_prim p, int32_t x, int32_t y) {
  return NODE(b, p, *graph_value_type(&b->g, x), 2, (int32_t[]){x, y}, 0, NULL, 0);
}
static int32_t CONSTANT(gb *b, tc_vtype t, double v) { return NODE(b, TC_PRIM_CONSTANT, t, 0, NULL, 1, (int64_t[]){-1}, v); }
static int32_t REDUCE(gb *b, tc_prim p, int32_t x, int dim) {
  const tc_vtype *t = graph_value_type(&b->g, x);
  tc_vtype o = *t;
  o.rank = t->rank - 1;
  for (int d = dim; d < o.rank; d++) o.shape[d] = t->shape[d + 1];
  return NODE(b, p, o, 1, (int32_t[]){x}, 1, (int64_t[]){dim}, 0);
}
/* Broadcast x (rank r) to shape `to` with bdims. */
static int32_t BCAST(gb *b, int32_t x, tc_vtype to, int n, const int64_t *bdims) {
  to.dtype = graph_value_type(&b->g, x)->dtype;
  return NODE(b, TC_PRIM_BROADCAST_IN_DIM, to, 1, (int32_t[]){x}, n, bdims, 0);
}

static tc_schedule *sched(gb *b) {
  tc_schedule *s = NULL;
  tc_status st = schedule_build(&b->g, &s);
  cr_assert_eq(st, TC_OK, "schedule_build: %s", tc_last_error());
  return s;
}

static int loops_of(const sched_kernel *k) {
  int n = 0;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (k->ops[i].loop + 1 > n) n = k->ops[i].loop + 1;
  return n;
}

/* x (s0 x 64): softmax over the last dim. */
static int32_t softmax_graph(gb *b, int32_t x) {
  tc_vtype t = *graph_value_type(&b->g, x), r = T(TC_F32, 1, t.shape);
  int32_t m = REDUCE(b, TC_PRIM_REDUCE_MAX, x, 1);
  int32_t e = UN(b, TC_PRIM_EXP, BIN(b, TC_PRIM_SUB, x, BCAST(b, m, t, 1, (int64_t[]){0})));
  int32_t s = REDUCE(b, TC_PRIM_REDUCE_SUM, e, 1);
  (void)r;
  return BIN(b, TC_PRIM_DIV, e, BCAST(b, s, t, 1, (int64_t[]){0}));
}

Test(schedule, softmax_is_one_kernel_with_three_loops) {
  gb b;
  graph_init(&b.g, "softmax");
  b.g.n_syms = 1;
  int32_t shape[2] = {sxtab_sym(&b.g.sx, 0), C(&b, 64)};
  int32_t x = IN(&b, T(TC_F32, 2, shape));
  int32_t y = softmax_graph(&b, x);
  graph_set_outputs(&b.g, 1, &y);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1);
  cr_assert_str_eq(s->kernels[0].name, "softmax");
  cr_assert_eq(loops_of(&s->kernels[0]), 3, "max, sum of exp, store");
  cr_assert_eq(s->kernels[0].desc.n_outer, 1);
  /* Symbolic rows: the outer extent is s0, not a number. */
  const tc_size_expr *e = &s->sx.nodes[s->kernels[0].desc.outer[0]];
  cr_assert_eq(e->op, TC_SX_SYM);
  cr_assert_eq(s->n_slots, 0, "no temporaries");
  /* The scheduler's decisions, in the descriptor: the later loops' loads of x reuse the first
   * loop's, exp(x - max) parked in the output is read back through reuse and its store is
   * overwritten by the last loop's; every reused op is a per-row value, no REDUCE is. */
  const tc_kernel_desc *d = &s->kernels[0].desc;
  int reused = 0, overwritten = 0;
  for (int32_t i = 0; i < d->n_ops; i++) {
    const tc_kop *o = &d->ops[i];
    if (o->reuse >= 0) {
      reused++;
      cr_assert_lt(d->ops[o->reuse].loop, o->loop, "op %d reuses an op of an earlier loop", i);
      cr_assert(d->ops[o->reuse].flags & TC_KOP_ROW_VALUE, "op %d's reuse target is a row value", i);
    }
    overwritten += (o->flags & TC_KOP_OVERWRITTEN) != 0;
    if (o->kind == TC_KOP_REDUCE) cr_assert_not(o->flags & TC_KOP_ROW_VALUE);
  }
  cr_assert_geq(reused, 2, "x in loops 1 and 2, exp in loop 2: %d reuses", reused);
  cr_assert_eq(overwritten, 1, "the parked exp(x - max)");
  schedule_release(s);
  graph_free(&b.g);
}

/* gelu(layer_norm(x) * g + b): one kernel named after both. */
Test(schedule, layer_norm_gelu_is_one_kernel) {
  gb b;
  graph_init(&b.g, "ln_gelu");
  int32_t sh[2] = {C(&b, 16), C(&b, 32)};
  tc_vtype t = T(TC_F32, 2, sh), tr = T(TC_F32, 1, sh), tc = T(TC_F32, 1, &sh[1]);
  int32_t x = IN(&b, t), gam = IN(&b, tc), bet = IN(&b, tc);
  int32_t n = CONSTANT(&b, tr, 32);
  int32_t mean = BIN(&b, TC_PRIM_DIV, REDUCE(&b, TC_PRIM_REDUCE_SUM, x, 1), n);
  int32_t d = BIN(&b, TC_PRIM_SUB, x, BCAST(&b, mean, t, 1, (int64_t[]){0}));
  int32_t var = BIN(&b, TC_PRIM_DIV, REDUCE(&b, TC_PRIM_REDUCE_SUM, BIN(&b, TC_PRIM_MUL, d, d), 1), n);
  int32_t rstd = UN(&b, TC_PRIM_RSQRT, BIN(&b, TC_PRIM_ADD, var, CONSTANT(&b, tr, 1e-5)));
  int32_t y = BIN(&b, TC_PRIM_MUL, d, BCAST(&b, rstd, t, 1, (int64_t[]){0}));
  y = BIN(&b, TC_PRIM_ADD, BIN(&b, TC_PRIM_MUL, y, BCAST(&b, gam, t, 1, (int64_t[]){1})), BCAST(&b, bet, t, 1, (int64_t[]){1}));
  int32_t h = BIN(&b, TC_PRIM_MUL, y, CONSTANT(&b, t, 0.7071067811865476));
  int32_t gl = BIN(&b, TC_PRIM_MUL, BIN(&b, TC_PRIM_MUL, y, CONSTANT(&b, t, 0.5)),
                   BIN(&b, TC_PRIM_ADD, UN(&b, TC_PRIM_ERF, h), CONSTANT(&b, t, 1)));
  graph_set_outputs(&b.g, 1, &gl);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1);
  cr_assert_str_eq(s->kernels[0].name, "layer_norm_gelu");
  cr_assert_eq(loops_of(&s->kernels[0]), 3);
  cr_assert_eq(s->kernels[0].n_bufs, 4, "x, gamma, beta, out");
  schedule_release(s);
  graph_free(&b.g);
}

/* gelu-free mlp layer: relu(x @ w + bias): one matmul kernel with the epilogue fused. */
Test(schedule, matmul_epilogue_fused) {
  gb b;
  graph_init(&b.g, "linear");
  int32_t M = C(&b, 8), K = C(&b, 16), N = C(&b, 4);
  tc_vtype tx = T(TC_F32, 2, (int32_t[]){M, K}), tw = T(TC_F32, 2, (int32_t[]){N, K}), ty = T(TC_F32, 2, (int32_t[]){M, N});
  int32_t x = IN(&b, tx), w = IN(&b, tw), bias = IN(&b, T(TC_F32, 1, &N));
  /* x @ w^T: the transpose is a view folded into the operand's strides. */
  int32_t wt = NODE(&b, TC_PRIM_PERMUTE, T(TC_F32, 2, (int32_t[]){K, N}), 1, (int32_t[]){w}, 2, (int64_t[]){1, 0}, 0);
  int32_t mm = NODE(&b, TC_PRIM_MATMUL, ty, 2, (int32_t[]){x, wt}, 0, NULL, 0);
  int32_t z = BIN(&b, TC_PRIM_ADD, mm, BCAST(&b, bias, ty, 1, (int64_t[]){1}));
  int32_t y = BIN(&b, TC_PRIM_MAX, z, CONSTANT(&b, ty, 0));
  graph_set_outputs(&b.g, 1, &y);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1);
  const tc_kernel_desc *k = &s->kernels[0].desc;
  cr_assert_eq(k->kind, TC_KERNEL_MATMUL);
  cr_assert_str_eq(s->kernels[0].name, "matmul_add_maximum");
  cr_assert_gt(k->n_ops, 0, "the epilogue is in the kernel");
  int64_t sk, sn;
  cr_assert(sxtab_is_const(&s->sx, k->matmul->b_stride_k, &sk) && sxtab_is_const(&s->sx, k->matmul->b_stride_n, &sn));
  cr_assert_eq(sk, 1, "w^T read through strides: k stride 1");
  cr_assert_eq(sn, 16, "n stride K");
  bool acc = false;
  for (int32_t i = 0; i < k->n_ops; i++) acc |= k->ops[i].kind == TC_KOP_ACC;
  cr_assert(acc);
  schedule_release(s);
  graph_free(&b.g);
}

/* A permute read by a pointwise op is an index map, never a copy. */
Test(schedule, views_fold_into_loads) {
  gb b;
  graph_init(&b.g, "transpose_add");
  int32_t A = C(&b, 3), B = C(&b, 5);
  int32_t x = IN(&b, T(TC_F32, 2, (int32_t[]){A, B}));
  int32_t xt = NODE(&b, TC_PRIM_PERMUTE, T(TC_F32, 2, (int32_t[]){B, A}), 1, (int32_t[]){x}, 2, (int64_t[]){1, 0}, 0);
  int32_t sl = NODE(&b, TC_PRIM_SLICE, T(TC_F32, 2, (int32_t[]){C(&b, 2), A}), 1, (int32_t[]){xt}, 4,
                    (int64_t[]){1, 0, 2, 1}, 0); /* rows 1 and 3 of x^T */
  int32_t y = BIN(&b, TC_PRIM_ADD, sl, CONSTANT(&b, *graph_value_type(&b.g, sl), 1));
  graph_set_outputs(&b.g, 1, &y);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1);
  const sched_kernel *k = &s->kernels[0];
  const tc_kop *load = NULL;
  for (int32_t i = 0; i < k->desc.n_ops; i++)
    if (k->abi_ops[i].kind == TC_KOP_LOAD) load = &k->abi_ops[i];
  cr_assert_not_null(load);
  int64_t off, s0, s1;
  cr_assert(sxtab_is_const(&s->sx, load->index->offset, &off));
  cr_assert(sxtab_is_const(&s->sx, load->index->strides[0], &s0));
  cr_assert(sxtab_is_const(&s->sx, load->index->strides[1], &s1));
  /* y[i][j] = x[j][1 + 2i]: offset 1, var0 stride 2, var1 stride 5 */
  cr_assert_eq(off, 1);
  cr_assert_eq(s0, 2);
  cr_assert_eq(s1, 5);
  schedule_release(s);
  graph_free(&b.g);
}

/* relu after a linear layer, as tc_relu decomposes: where(x <= 0, where(x < 0, 0, x), x). The
 * comparisons' bools stay inside the epilogue, so the product, bias and relu are one kernel
 * (tiny_mlp_b1 was 8 kernels, half its launches, while bools ended the epilogue). */
Test(schedule, relu_epilogue_with_comparisons_is_one_kernel) {
  gb b;
  graph_init(&b.g, "linear_relu");
  int32_t N = C(&b, 8), one = C(&b, 1);
  tc_vtype row = T(TC_F32, 2, (int32_t[]){one, N}), sq = T(TC_F32, 2, (int32_t[]){N, N});
  tc_vtype flags = T(TC_BOOL, 2, (int32_t[]){one, N});
  int32_t x = IN(&b, row), w = IN(&b, sq), bias = IN(&b, row);
  int32_t mm = NODE(&b, TC_PRIM_MATMUL, row, 2, (int32_t[]){x, w}, 0, NULL, 0);
  int32_t z = NODE(&b, TC_PRIM_ADD, row, 2, (int32_t[]){mm, bias}, 0, NULL, 0);
  int32_t zero = CONSTANT(&b, row, 0.0);
  int32_t lt = NODE(&b, TC_PRIM_LT, flags, 2, (int32_t[]){z, zero}, 0, NULL, 0);
  int32_t w1 = NODE(&b, TC_PRIM_WHERE, row, 3, (int32_t[]){lt, zero, z}, 0, NULL, 0);
  int32_t le = NODE(&b, TC_PRIM_LE, flags, 2, (int32_t[]){z, zero}, 0, NULL, 0);
  int32_t y = NODE(&b, TC_PRIM_WHERE, row, 3, (int32_t[]){le, w1, z}, 0, NULL, 0);
  graph_set_outputs(&b.g, 1, &y);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1, "matmul, bias and relu in one kernel: %d kernels", s->n_kernels);
  cr_assert_eq(s->kernels[0].desc.kind, TC_KERNEL_MATMUL);
  schedule_release(s);
  graph_free(&b.g);
}

/* Three chained matmuls: the two temporaries with disjoint lifetimes share a slot. */
Test(schedule, temporaries_reuse_memory) {
  gb b;
  graph_init(&b.g, "chain");
  int32_t N = C(&b, 8);
  tc_vtype t = T(TC_F32, 2, (int32_t[]){N, N});
  int32_t x = IN(&b, t), w = IN(&b, t);
  int32_t v = x;
  for (int i = 0; i < 4; i++) v = NODE(&b, TC_PRIM_MATMUL, t, 2, (int32_t[]){v, w}, 0, NULL, 0);
  graph_set_outputs(&b.g, 1, &v);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 4);
  int temps = 0;
  for (int32_t i = 0; i < s->n_bufs; i++) temps += s->bufs[i].kind == SBUF_TEMP;
  cr_assert_eq(temps, 3);
  cr_assert_eq(s->n_slots, 2, "the first temporary is dead by the third kernel");
  schedule_release(s);
  graph_free(&b.g);
}

/* softmax(softmax(x) * x) + softmax(x): one kernel of five loops in which both exp(x - max) and
 * the outer softmax's exp are computed by earlier loops at the store loop's element. Only one
 * of them may be parked in the output for the store loop: both would go to the same index, and
 * the second store would overwrite the first before it is read back (the kernel then added
 * the same exp twice). */
Test(schedule, one_stash_per_kernel) {
  gb b;
  graph_init(&b.g, "softmax_twice");
  int32_t shape[2] = {C(&b, 4), C(&b, 64)};
  int32_t x = IN(&b, T(TC_F32, 2, shape));
  int32_t a = softmax_graph(&b, x);
  int32_t y = BIN(&b, TC_PRIM_ADD, softmax_graph(&b, BIN(&b, TC_PRIM_MUL, a, x)), a);
  graph_set_outputs(&b.g, 1, &y);
  tc_schedule *s = sched(&b);
  cr_assert_eq(s->n_kernels, 1);
  const sched_kernel *k = &s->kernels[0];
  cr_assert_eq(loops_of(k), 5, "max, sum, max, sum, store");
  int32_t out = -1;
  for (int32_t i = 0; i < k->n_bufs; i++)
    if (s->bufs[k->buf_ids[i]].kind == SBUF_OUTPUT) out = i;
  cr_assert_geq(out, 0);
  int stores = 0, store_loop = -1;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (k->ops[i].kind == TC_KOP_STORE && k->ops[i].buffer == out) {
      stores++;
      if (k->ops[i].loop > store_loop) store_loop = k->ops[i].loop;
    }
  cr_assert_eq(stores, 2, "the result and one stashed exp (%d stores into the output: stashes alias)", stores);
  /* Every load of the output in the store loop reads the one stashed value. */
  int loads = 0;
  for (int32_t i = 0; i < k->n_ops; i++) loads += k->ops[i].kind == TC_KOP_LOAD && k->ops[i].buffer == out;
  cr_assert_eq(loads, 1);
  schedule_release(s);
  graph_free(&b.g);
}

/* q·kᵀ over (B, heads) with B 2 and q, k permuted views of (B, T, heads, D) inputs: the batch
 * dims are two strided levels. With two batch levels (what ABI 2 offers) one matmul kernel reads
 * them in place; without, the operands are copied first. */
static tc_schedule *sched_heads(gb *b, bool two_levels) {
  graph_init(&b->g, "heads");
  int32_t B = C(b, 2), T_ = C(b, 6), H = C(b, 3), D = C(b, 4);
  tc_vtype tin = T(TC_F32, 4, (int32_t[]){B, T_, H, D});
  int32_t q = IN(b, tin), k = IN(b, tin);
  int32_t qh = NODE(b, TC_PRIM_PERMUTE, T(TC_F32, 4, (int32_t[]){B, H, T_, D}), 1, (int32_t[]){q}, 4,
                    (int64_t[]){0, 2, 1, 3}, 0);
  int32_t kt = NODE(b, TC_PRIM_PERMUTE, T(TC_F32, 4, (int32_t[]){B, H, D, T_}), 1, (int32_t[]){k}, 4,
                    (int64_t[]){0, 2, 3, 1}, 0);
  int32_t y = NODE(b, TC_PRIM_MATMUL, T(TC_F32, 4, (int32_t[]){B, H, T_, T_}), 2, (int32_t[]){qh, kt}, 0, NULL, 0);
  graph_set_outputs(&b->g, 1, &y);
  const sched_options o = {.matmul_batch2 = two_levels};
  tc_schedule *s = NULL;
  tc_status st = schedule_build_opts(&b->g, &o, &s);
  cr_assert_eq(st, TC_OK, "schedule_build_opts: %s", tc_last_error());
  return s;
}

static const tc_kernel_desc *only_matmul(const tc_schedule *s) {
  const tc_kernel_desc *mm = NULL;
  for (int32_t i = 0; i < s->n_kernels; i++)
    if (s->kernels[i].desc.kind == TC_KERNEL_MATMUL) {
      cr_assert_null(mm, "one matmul kernel");
      mm = &s->kernels[i].desc;
    }
  cr_assert_not_null(mm);
  return mm;
}

Test(schedule, matmul_two_batch_levels) {
  gb b;
  tc_schedule *s = sched_heads(&b, true);
  cr_assert_eq(s->n_kernels, 1, "q and k read in place: %d kernels", s->n_kernels);
  const tc_kernel_desc *mm = only_matmul(s);
  cr_assert_eq(mm->matmul->batch_levels, 2);
  cr_assert_eq(mm->n_outer, 4, "(batch2, batch, m, n)");
  int64_t b2, sa2, sa;
  cr_assert(sxtab_is_const(&s->sx, mm->matmul->batch2, &b2) && sxtab_is_const(&s->sx, mm->matmul->a_stride_batch2, &sa2) &&
            sxtab_is_const(&s->sx, mm->matmul->a_stride_batch, &sa));
  cr_assert_eq(b2, 2);
  cr_assert_eq(sa2, 6 * 3 * 4, "q's B stride: T*H*D");
  cr_assert_eq(sa, 4, "q's head stride: D");
  schedule_release(s);
  graph_free(&b.g);
}

Test(schedule, matmul_one_batch_level_copies_operands) {
  gb b;
  tc_schedule *s = sched_heads(&b, false);
  cr_assert_eq(s->n_kernels, 3, "q and k copied into contiguous buffers, then the matmul: %d kernels", s->n_kernels);
  const tc_kernel_desc *mm = only_matmul(s);
  cr_assert_neq(mm->matmul->batch_levels, 2, "one level only");
  cr_assert_eq(mm->n_outer, 3, "(batch, m, n)");
  int64_t nb;
  cr_assert(sxtab_is_const(&s->sx, mm->matmul->batch, &nb));
  cr_assert_eq(nb, 2 * 3, "B and heads as one level");
  for (int32_t i = 0; i < s->n_kernels; i++)
    if (s->kernels[i].desc.kind != TC_KERNEL_MATMUL) cr_assert_eq(s->bufs[s->kernels[i].buf_ids[0]].kind, SBUF_INPUT);
  schedule_release(s);
  graph_free(&b.g);
}

/* ---------------------------------------------------------------- fused attention
 * softmax(masked_fill(q.kT * 0.5, triu(1), -inf)).v over q, k, v (B, T, H, D) read as heads
 * (B, H, T, D), the result permuted back to (B, T, H, D): as tc_softmax, tc_masked_fill and
 * tc_triu decompose. probs_out: the probabilities are a graph output too (then nothing fuses). */
static tc_schedule *attention_schedule(gb *b, bool attention, bool probs_out) {
  memset(b, 0, sizeof *b);
  graph_init(&b->g, "attention");
  int32_t B = C(b, 2), T_ = C(b, 6), H = C(b, 3), D = C(b, 4);
  tc_vtype tin = T(TC_F32, 4, (int32_t[]){B, T_, H, D}), heads = T(TC_F32, 4, (int32_t[]){B, H, T_, D});
  tc_vtype scores = T(TC_F32, 4, (int32_t[]){B, H, T_, T_}), plane = T(TC_I64, 2, (int32_t[]){T_, T_});
  int32_t q = IN(b, tin), k = IN(b, tin), v = IN(b, tin);
  const int64_t to_heads[4] = {0, 2, 1, 3};
  int32_t qh = NODE(b, TC_PRIM_PERMUTE, heads, 1, (int32_t[]){q}, 4, to_heads, 0);
  int32_t vh = NODE(b, TC_PRIM_PERMUTE, heads, 1, (int32_t[]){v}, 4, to_heads, 0);
  int32_t kt = NODE(b, TC_PRIM_PERMUTE, T(TC_F32, 4, (int32_t[]){B, H, D, T_}), 1, (int32_t[]){k}, 4,
                    (int64_t[]){0, 2, 3, 1}, 0);
  int32_t s = NODE(b, TC_PRIM_MATMUL, scores, 2, (int32_t[]){qh, kt}, 0, NULL, 0);
  int32_t s1 = BIN(b, TC_PRIM_MUL, s, CONSTANT(b, scores, 0.5));
  int32_t row = NODE(b, TC_PRIM_IOTA, plane, 0, NULL, 1, (int64_t[]){0}, 0);
  int32_t col = NODE(b, TC_PRIM_IOTA, plane, 0, NULL, 1, (int64_t[]){1}, 0);
  int32_t above = NODE(b, TC_PRIM_GE, T(TC_BOOL, 2, (int32_t[]){T_, T_}), 2,
                       (int32_t[]){BIN(b, TC_PRIM_SUB, col, row), CONSTANT(b, plane, 1)}, 0, NULL, 0);
  int32_t mask = BCAST(b, above, scores, 2, (int64_t[]){2, 3});
  int32_t x = NODE(b, TC_PRIM_WHERE, scores, 3, (int32_t[]){mask, CONSTANT(b, scores, -INFINITY), s1}, 0, NULL, 0);
  int32_t e = UN(b, TC_PRIM_EXP, BIN(b, TC_PRIM_SUB, x, BCAST(b, REDUCE(b, TC_PRIM_REDUCE_MAX, x, 3), scores, 3,
                                                               (int64_t[]){0, 1, 2})));
  int32_t p = BIN(b, TC_PRIM_DIV, e, BCAST(b, REDUCE(b, TC_PRIM_REDUCE_SUM, e, 3), scores, 3, (int64_t[]){0, 1, 2}));
  int32_t o = NODE(b, TC_PRIM_MATMUL, heads, 2, (int32_t[]){p, vh}, 0, NULL, 0);
  int32_t y = NODE(b, TC_PRIM_PERMUTE, tin, 1, (int32_t[]){o}, 4, to_heads, 0);
  graph_set_outputs(&b->g, probs_out ? 2 : 1, (int32_t[]){y, p});
  const sched_options opts = {.matmul_batch2 = true, .attention = attention};
  tc_schedule *sc = NULL;
  tc_status st = schedule_build_opts(&b->g, &opts, &sc);
  cr_assert_eq(st, TC_OK, "schedule_build_opts: %s", tc_last_error());
  return sc;
}

Test(schedule, causal_attention_is_one_kernel) {
  gb b;
  tc_schedule *s = attention_schedule(&b, true, false);
  cr_assert_eq(s->n_kernels, 1, "one attention kernel, the output permute in its strides: %d kernels", s->n_kernels);
  const tc_kernel_desc *k = &s->kernels[0].desc;
  cr_assert_eq(k->kind, TC_KERNEL_ATTENTION);
  cr_assert_str_eq(k->name, "causal_attention");
  const tc_attention_desc *a = k->attention;
  cr_assert_not_null(a);
  cr_assert(a->causal && a->causal_offset == 1 && a->scale == 0.5, "causal %d offset %lld scale %g", a->causal,
            (long long)a->causal_offset, a->scale);
  /* (B, H) as two levels; every operand read in place from its (B, T, H, D) input */
  int64_t v;
  const int32_t want[][2] = {{a->batch2, 2}, {a->batch, 3}, {a->tq, 6}, {a->tk, 6}, {a->d, 4}, {a->dv, 4},
                             {a->q_stride_batch2, 72}, {a->q_stride_batch, 4}, {a->q_stride_t, 12}, {a->q_stride_d, 1},
                             {a->k_stride_t, 12}, {a->k_stride_d, 1}, {a->v_stride_t, 12},
                             {a->o_stride_batch2, 72}, {a->o_stride_batch, 4}, {a->o_stride_t, 12}, {a->o_stride_d, 1}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    cr_assert(sxtab_is_const(&s->sx, want[i][0], &v), "field %zu is not a constant", i);
    cr_assert_eq(v, want[i][1], "field %zu: %lld, want %d", i, (long long)v, want[i][1]);
  }
  cr_assert_eq(k->n_buffers, 4);
  cr_assert_eq(TC_ELEM(tc_kbuffer, k->buffers, k->buffer_size, a->o)->role, TC_BUF_OUTPUT);
  schedule_release(s);
  graph_free(&b.g);
}

Test(schedule, attention_unfused_without_the_kind_or_when_probs_are_read) {
  gb b;
  tc_schedule *s = attention_schedule(&b, false, false);
  cr_assert_geq(s->n_kernels, 3, "scores, softmax, p.v: %d kernels", s->n_kernels);
  for (int32_t i = 0; i < s->n_kernels; i++) cr_assert_neq(s->kernels[i].desc.kind, TC_KERNEL_ATTENTION);
  schedule_release(s);
  graph_free(&b.g);
  s = attention_schedule(&b, true, true);
  for (int32_t i = 0; i < s->n_kernels; i++)
    cr_assert_neq(s->kernels[i].desc.kind, TC_KERNEL_ATTENTION, "the probabilities are an output: they must be stored");
  schedule_release(s);
  graph_free(&b.g);
}

/* ---------------------------------------------------------------- end to end on inductor-cpu */
static tc_tensor *seq(int rank, const int64_t *sizes, float scale, int salt) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= sizes[i];
  float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
  for (int64_t i = 0; i < n; i++) d[i] = scale * (float)(((i + salt) * 7919) % 23 - 11) / 11.0f;
  tc_tensor *t = tc_from_f32(d, rank, sizes);
  free(d);
  return t;
}

static void assert_close(tc_tensor *got, tc_tensor *want, double tol) {
  cr_assert_not_null(got, "result is NULL: %s", tc_last_error());
  cr_assert_not_null(want, "reference is NULL: %s", tc_last_error());
  cr_assert_eq(tc_rank(got), tc_rank(want));
  int64_t n = tc_numel(got);
  cr_assert_eq(n, tc_numel(want));
  tc_tensor *g64 = tc_to_dtype(got, TC_F64), *w64 = tc_to_dtype(want, TC_F64);
  double *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
  cr_assert_eq(tc_to_host(g64, a, (size_t)n * sizeof *a), TC_OK, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(w64, b, (size_t)n * sizeof *b), TC_OK, "%s", tc_last_error());
  for (int64_t i = 0; i < n; i++)
    cr_assert(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i])), "element %lld: %g vs %g", (long long)i, a[i], b[i]);
  free(a);
  free(b);
  tc_release(g64);
  tc_release(w64);
}

/* Evaluates an eager reference inside a scope, so its intermediates are released. */
static tc_scope *ref_scope;
static tc_tensor *ref_keep(tc_tensor *t) {
  tc_scope_keep(ref_scope, t);
  tc_scope_close(ref_scope);
  return t;
}
#define REF(expr) (ref_scope = tc_scope_open(), ref_keep(expr))

static void e2e_init(void) { setenv("TC_CACHE_DIR", "/tmp/tc-test-schedule-cache", 1); }

static tc_compiled *compile_icpu_with(tc_model_fn fn, int n, const char *name, int dynamic, const char *options) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = "inductor-cpu", .name = name, .fullgraph = true,
                          .dynamic = dynamic, .options = options};
  tc_compiled *c = tc_compile(fn, n, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  return c;
}

static tc_compiled *compile_icpu(tc_model_fn fn, int n, const char *name, int dynamic) {
  return compile_icpu_with(fn, n, name, dynamic, "cpu.threads=2");
}

static int kernels_of(const tc_compiled *c) {
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  return st.n_kernels;
}

static tc_tensor *m_softmax(tc_tensor *x) { return tc_softmax(x, -1); }
static tc_tensor *m_log_softmax(tc_tensor *x) { return tc_log_softmax(x, -1); }
static tc_tensor *m_rms(tc_tensor *x, tc_tensor *w) { return tc_rms_norm(x, 1, w, 1e-6); }
static tc_tensor *m_ln_gelu(tc_tensor *x, tc_tensor *g, tc_tensor *b) { return tc_gelu(tc_layer_norm(x, 1, g, b, 1e-5)); }
static tc_tensor *m_xent(tc_tensor *logits, tc_tensor *target) { return tc_cross_entropy(logits, target); }
static tc_tensor *m_mlp(tc_tensor *x, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2, tc_tensor *b2) {
  return tc_add(tc_linear(tc_gelu(tc_linear(x, w1, b1)), w2, b2), x);
}
static tc_tensor *m_attn(tc_tensor *q, tc_tensor *k, tc_tensor *v) {
  tc_tensor *s = tc_mul_scalar(tc_matmul(q, tc_transpose(k, -2, -1)), 0.25);
  return tc_matmul(tc_softmax(s, -1), v);
}
static tc_tensor *m_index(tc_tensor *x, tc_tensor *idx, tc_tensor *src) {
  tc_tensor *g = tc_gather(x, 1, idx);
  tc_tensor *sc = tc_scatter_add(x, 1, idx, src);
  tc_tensor *parts[2] = {tc_add(g, g), tc_mul(sc, sc)};
  return tc_cat(2, parts, 1);
}
static tc_tensor *m_misc(tc_tensor *x) {
  tc_tensor *d = tc_dropout(x, 0.5, 1234, true);
  tc_tensor *t = tc_tril(x, 0);
  tc_tensor *am = tc_to_dtype(tc_argmax(x, 1, true), TC_F32);
  return tc_add(tc_add(d, t), am);
}

Test(schedule_e2e, softmax_and_log_softmax_one_kernel_each, .init = e2e_init) {
  tc_tensor *x = seq(2, (int64_t[]){37, 100}, 3, 1);
  tc_model_fn fns[2] = {TC_FN(m_softmax), TC_FN(m_log_softmax)};
  for (int i = 0; i < 2; i++) {
    tc_compiled *c = compile_icpu(fns[i], 1, i ? "log_softmax" : "softmax", TC_DYNAMIC_AUTO);
    tc_tensor *got = tc_call(c, &x);
    tc_tensor *want = REF(i ? m_log_softmax(x) : m_softmax(x));
    assert_close(got, want, 1e-5);
    cr_assert_eq(kernels_of(c), 1);
    tc_release(got);
    tc_release(want);
    tc_compiled_free(c);
  }
  tc_release(x);
}

Test(schedule_e2e, norms_and_cross_entropy, .init = e2e_init) {
  tc_tensor *x = seq(2, (int64_t[]){19, 48}, 2, 3), *g = seq(1, (int64_t[]){48}, 1, 5), *bb = seq(1, (int64_t[]){48}, 1, 7);
  tc_compiled *c = compile_icpu(TC_FN(m_ln_gelu), 3, "ln_gelu", TC_DYNAMIC_AUTO);
  tc_tensor *in3[3] = {x, g, bb};
  tc_tensor *got = tc_call(c, in3), *want = REF(m_ln_gelu(x, g, bb));
  assert_close(got, want, 1e-5);
  cr_assert_eq(kernels_of(c), 1, "layer_norm + gelu is one kernel");
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  c = compile_icpu(TC_FN(m_rms), 2, "rms", TC_DYNAMIC_AUTO);
  tc_tensor *in2[2] = {x, g};
  got = tc_call(c, in2);
  want = REF(m_rms(x, g));
  assert_close(got, want, 1e-5);
  cr_assert_eq(kernels_of(c), 1, "rms_norm is one kernel");
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  int64_t tgt[19];
  for (int i = 0; i < 19; i++) tgt[i] = (i * 5) % 48;
  tc_tensor *t = tc_from_host(tgt, TC_I64, 1, (int64_t[]){19});
  c = compile_icpu(TC_FN(m_xent), 2, "xent", TC_DYNAMIC_AUTO);
  tc_tensor *inx[2] = {x, t};
  got = tc_call(c, inx);
  want = REF(m_xent(x, t));
  assert_close(got, want, 1e-5);
  cr_assert_eq(kernels_of(c), 2, "two kernels: the count of rows kept (ignore_index), then per-row log-softmax, "
                                   "each row adding its share of the mean");
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  tc_release(t);
  tc_release(x);
  tc_release(g);
  tc_release(bb);
}

Test(schedule_e2e, mlp_two_matmul_kernels, .init = e2e_init) {
  tc_tensor *x = seq(2, (int64_t[]){24, 32}, 1, 1), *w1 = seq(2, (int64_t[]){64, 32}, 0.2f, 2),
            *b1 = seq(1, (int64_t[]){64}, 0.5f, 3), *w2 = seq(2, (int64_t[]){32, 64}, 0.2f, 4),
            *b2 = seq(1, (int64_t[]){32}, 0.5f, 5);
  tc_tensor *in[5] = {x, w1, b1, w2, b2};
  tc_compiled *c = compile_icpu(TC_FN(m_mlp), 5, "mlp", TC_DYNAMIC_AUTO);
  tc_tensor *got = tc_call(c, in), *want = REF(m_mlp(x, w1, b1, w2, b2));
  assert_close(got, want, 1e-4);
  cr_assert_eq(kernels_of(c), 2, "bias, gelu and the residual ride in the matmul epilogues");
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  for (int i = 0; i < 5; i++) tc_release(in[i]);
}

Test(schedule_e2e, attention_batched, .init = e2e_init) {
  tc_tensor *q = seq(3, (int64_t[]){3, 10, 16}, 1, 1), *k = seq(3, (int64_t[]){3, 10, 16}, 1, 2),
            *v = seq(3, (int64_t[]){3, 10, 16}, 1, 3);
  tc_tensor *in[3] = {q, k, v};
  tc_compiled *c = compile_icpu(TC_FN(m_attn), 3, "attn", TC_DYNAMIC_AUTO);
  tc_tensor *got = tc_call(c, in), *want = REF(m_attn(q, k, v));
  assert_close(got, want, 1e-4);
  cr_assert_leq(kernels_of(c), 3);
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  for (int i = 0; i < 3; i++) tc_release(in[i]);
}

/* Multi-head attention from one qkv tensor (B 2, so (B, heads) is two strided levels of it, not
 * one): q·kᵀ reads q and k straight from qkv and a·v stores straight into the merged (B, T, H*D)
 * layout, through matmuls with two batch levels. Three kernels (scores + scale, softmax,
 * a·v + merge); copying q, k, v and the merge would make seven. */
static tc_tensor *m_mha(tc_tensor *qkv) {
  tc_scope *sc = tc_scope_open();
  const int64_t split[3] = {3, 4, 4};
  tc_tensor *heads = tc_permute(tc_unflatten(qkv, -1, 3, split), (const int[]){2, 0, 3, 1, 4});
  tc_tensor *q = tc_squeeze(tc_slice(heads, 0, 0, 1, 1), 0), *k = tc_squeeze(tc_slice(heads, 0, 1, 2, 1), 0),
            *v = tc_squeeze(tc_slice(heads, 0, 2, 3, 1), 0);
  tc_tensor *a = tc_softmax(tc_mul_scalar(tc_matmul(q, tc_transpose(k, -2, -1)), 0.5), -1);
  tc_tensor *y = tc_flatten(tc_contiguous(tc_permute(tc_matmul(a, v), (const int[]){0, 2, 1, 3})), 2, 3);
  tc_scope_keep(sc, y);
  tc_scope_close(sc);
  return y;
}

/* Unfused (cpu.attention=unfused: the views are the matmuls' operands) and fused (the attention
 * kernel's strides). */
Test(schedule_e2e, attention_heads_read_in_place, .init = e2e_init) {
  tc_tensor *qkv = seq(3, (int64_t[]){2, 9, 48}, 1, 4);
  static const char *const options[2] = {"cpu.threads=2,cpu.attention=unfused", "cpu.threads=2,cpu.attention=fused"};
  for (int f = 0; f < 2; f++) {
    tc_compiled *c = compile_icpu_with(TC_FN(m_mha), 1, "mha", TC_DYNAMIC_AUTO, options[f]);
    tc_tensor *got = tc_call(c, &qkv), *want = REF(m_mha(qkv));
    assert_close(got, want, 1e-4);
    cr_assert_eq(kernels_of(c), f == 0 ? 3 : 1, "%s: q, k, v and the merged heads are strided views, not copies",
                 options[f]);
    tc_release(got);
    tc_release(want);
    tc_compiled_free(c);
  }
  tc_release(qkv);
}

/* The model: attn_block with B 2 (the test size has B 1, where (B, heads) folds into
 * one level) is 9 kernels with cpu.attention=unfused: layer norms 2, matmuls 5, softmax 1, and no
 * copies of q, k, v or of the merged heads (13 kernels when those are materialized). */
Test(schedule_e2e, attn_block_without_head_copies, .init = e2e_init) {
  const tc_model *m = tc_model_find("attn_block");
  cr_assert_not_null(m);
  tc_tensor *in[13];
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 5, in), TC_OK, "%s", tc_last_error());
  tc_tensor *x2 = tc_randn(11, TC_F32, 3, (int64_t[]){2, tc_size(in[0], 1), tc_size(in[0], 2)});
  tc_release(in[0]);
  in[0] = x2;
  tc_compiled *c = compile_icpu_with(m->fn, 13, "attn_block", TC_DYNAMIC_AUTO, "cpu.threads=2,cpu.attention=unfused");
  tc_tensor *got = tc_call(c, in);
  tc_tensor *want = REF(((tc_tensor * (*)(tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *,
                                          tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *,
                                          tc_tensor *))m->fn)(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7],
                                                              in[8], in[9], in[10], in[11], in[12]));
  assert_close(got, want, 1e-4);
  cr_assert_eq(kernels_of(c), 9, "attn_block on inductor-cpu: %d kernels (13 means the head copies are back)",
               kernels_of(c));
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  for (int i = 0; i < 13; i++) tc_release(in[i]);
}

Test(schedule_e2e, gather_scatter_cat, .init = e2e_init) {
  tc_tensor *x = seq(2, (int64_t[]){4, 6}, 1, 1), *src = seq(2, (int64_t[]){4, 3}, 1, 2);
  int64_t idx[12] = {0, 5, 2, 1, 1, 4, 3, 3, 0, 5, 0, 2};
  tc_tensor *ix = tc_from_host(idx, TC_I64, 2, (int64_t[]){4, 3});
  tc_tensor *in[3] = {x, ix, src};
  tc_compiled *c = compile_icpu(TC_FN(m_index), 3, "index", TC_DYNAMIC_AUTO);
  tc_tensor *got = tc_call(c, in), *want = REF(m_index(x, ix, src));
  assert_close(got, want, 1e-6);
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  for (int i = 0; i < 3; i++) tc_release(in[i]);
}

Test(schedule_e2e, random_iota_argmax, .init = e2e_init) {
  tc_tensor *x = seq(2, (int64_t[]){9, 9}, 1, 4);
  tc_compiled *c = compile_icpu(TC_FN(m_misc), 1, "misc", TC_DYNAMIC_AUTO);
  tc_tensor *got = tc_call(c, &x), *want = REF(m_misc(x));
  assert_close(got, want, 1e-6);
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  tc_release(x);
}

Test(schedule_e2e, dynamic_rows_share_one_compiled_kernel, .init = e2e_init) {
  tc_compiled *c = compile_icpu(TC_FN(m_softmax), 1, "softmax_dyn", TC_DYNAMIC_ON);
  for (int64_t rows = 2; rows <= 66; rows += 16) {
    tc_tensor *x = seq(2, (int64_t[]){rows, 33}, 2, (int)rows);
    tc_tensor *got = tc_call(c, &x), *want = REF(m_softmax(x));
    assert_close(got, want, 1e-5);
    tc_release(got);
    tc_release(want);
    tc_release(x);
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  cr_assert_eq(st.n_compiles, 1, "one symbolic kernel serves every row count");
  tc_compiled_free(c);
}

/* dynamic=ON makes the weight's columns a symbol too; splitting them into constant sizes (the
 * heads of an attention block) guards the symbol to 2*3*4 and pins it, so the scheduler pairs
 * the reshape's dims ("cannot pair the dims symbolically" before). Every row count shares the
 * graph; a weight of another width fails the guard and compiles again. */
static tc_tensor *m_split_heads(tc_tensor *x, tc_tensor *w) {
  const int64_t heads[3] = {2, 3, 4};
  tc_tensor *y = tc_unflatten(tc_matmul(x, w), -1, 3, heads); /* rows x 2 x 3 x 4 */
  return tc_sum(tc_mul(y, y), 1, (const int[]){3}, false);
}

Test(schedule_e2e, dynamic_on_pins_a_symbol_split_into_constants, .init = e2e_init) {
  tc_compiled *c = compile_icpu(TC_FN(m_split_heads), 2, "split_heads_dyn", TC_DYNAMIC_ON);
  tc_tensor *w = seq(2, (int64_t[]){5, 24}, 3, 1);
  for (int64_t rows = 2; rows <= 8; rows += 3) {
    tc_tensor *x = seq(2, (int64_t[]){rows, 5}, 2, (int)rows);
    tc_tensor *got = tc_call(c, (tc_tensor *[]){x, w}), *want = REF(m_split_heads(x, w));
    cr_assert_not_null(got, "%s", tc_last_error());
    assert_close(got, want, 1e-5);
    tc_release(got);
    tc_release(want);
    tc_release(x);
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  cr_assert_eq(st.n_compiles, 1, "one graph for every row count (got %d)", st.n_compiles);
  tc_tensor *w48 = seq(2, (int64_t[]){5, 48}, 3, 1), *x = seq(2, (int64_t[]){3, 5}, 2, 3);
  tc_tensor *got = tc_call(c, (tc_tensor *[]){x, w48});
  cr_assert_null(got, "48 columns do not split into 2 x 3 x 4");
  cr_assert(strstr(tc_last_error(), "tc_unflatten"), "%s", tc_last_error());
  tc_release(w48);
  tc_release(x);
  tc_release(w);
  tc_compiled_free(c);
}

/* sum(gather(x, 1, i)) over both dims: the reduction's read merges the gathered dim with the
 * other, so the gather is realized and summed from its buffer (it once failed to schedule:
 * "the index over dims 0..1 is not a sum of per-dim indices"). */
Test(schedule, gather_under_a_reduction_over_all_dims) {
  gb b;
  graph_init(&b.g, "gather_sum");
  int32_t R = C(&b, 3), K = C(&b, 4), J = C(&b, 2);
  int32_t x = IN(&b, T(TC_F32, 2, (int32_t[]){R, K})), idx = IN(&b, T(TC_I64, 2, (int32_t[]){R, J}));
  int32_t g = NODE(&b, TC_PRIM_GATHER, T(TC_F32, 2, (int32_t[]){R, J}), 2, (int32_t[]){x, idx}, 1, (int64_t[]){1}, 0);
  int32_t s = NODE(&b, TC_PRIM_REDUCE_SUM, T(TC_F32, 0, NULL), 1, (int32_t[]){g}, 2, (int64_t[]){0, 1}, 0);
  graph_set_outputs(&b.g, 1, &s);
  tc_schedule *sc = sched(&b);
  cr_assert_not_null(sc, "%s", tc_last_error());
  cr_assert_eq(sc->n_kernels, 2, "the gather, then the sum of its buffer");
  schedule_release(sc);
  graph_free(&b.g);
}
