/* kernel_builder.h — hand-built kernel lists (ABI 2 descriptors) for the code generators' tests
 * (test_inductor_cpu.c, test_inductor_cuda.c): a fixed-size arena `kl` holding expressions,
 * kernels, ops with their args and indices, buffers and matmul descriptors, and short builders
 * (C, S, MUL for sizes; K, BUF, OP, LOAD, PRIM, RED, STORE, CONSTF for kernels; LIST for the
 * list). Each test file includes it once, after <criterion/criterion.h>. */
#ifndef TC_TEST_KERNEL_BUILDER_H
#define TC_TEST_KERNEL_BUILDER_H

#include <string.h>

#include "tc_plugin.h"

#define KB_UNUSED __attribute__((unused))
#define MAXK 8
#define MAXOPS 48
typedef struct kl {
  tc_size_expr ex[64];
  int32_t nex;
  tc_kop ops[MAXK][MAXOPS];
  int32_t args[MAXK][MAXOPS][3];
  tc_index ix[MAXK][MAXOPS];
  int32_t strides[MAXK][MAXOPS][TC_MAX_RANK + 1];
  int32_t nops[MAXK];
  tc_kbuffer bufs[MAXK][8];
  int32_t nbufs[MAXK];
  int32_t outer[MAXK][TC_MAX_RANK];
  tc_matmul_desc mm[MAXK];
  tc_attention_desc at[MAXK];
  tc_kernel_desc k[MAXK];
  int32_t nk;
} kl;

KB_UNUSED static int32_t ex_add(kl *l, int32_t op, int32_t a, int32_t b, int64_t v) {
  l->ex[l->nex] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = op, .a = a, .b = b, .value = v};
  return l->nex++;
}
KB_UNUSED static int32_t C(kl *l, int64_t v) { return ex_add(l, TC_SX_CONST, 0, 0, v); }
KB_UNUSED static int32_t S(kl *l, int64_t k) { return ex_add(l, TC_SX_SYM, 0, 0, k); }
KB_UNUSED static int32_t MUL(kl *l, int32_t a, int32_t b) { return ex_add(l, TC_SX_MUL, a, b, 0); }

/* An index spec: offset and the strides of vars 0..2 (-1: none); the op makes the tc_index. */
typedef struct ixspec {
  int32_t offset, s[3], indirect, indirect_stride;
} ixspec;
KB_UNUSED static ixspec IX(int32_t offset, int32_t s0, int32_t s1, int32_t s2) {
  return (ixspec){.offset = offset, .s = {s0, s1, s2}, .indirect = -1, .indirect_stride = -1};
}

KB_UNUSED static tc_kernel_desc *K(kl *l, const char *name, int32_t kind, int32_t n_outer, const int32_t *outer, int32_t inner) {
  int32_t i = l->nk++;
  tc_kernel_desc *k = &l->k[i];
  memset(k, 0, sizeof *k);
  k->struct_size = sizeof *k;
  k->name = name;
  k->kind = kind;
  k->n_outer = n_outer;
  for (int d = 0; d < n_outer; d++) l->outer[i][d] = outer[d];
  k->outer = l->outer[i];
  k->inner = inner;
  k->ops = l->ops[i];
  k->op_size = sizeof(tc_kop);
  k->buffers = l->bufs[i];
  k->buffer_size = sizeof(tc_kbuffer);
  return k;
}
/* The matmul descriptor of the last kernel (batch_levels 1 unless set). */
KB_UNUSED static tc_matmul_desc *MM(kl *l) {
  int32_t i = l->nk - 1;
  l->k[i].matmul = &l->mm[i];
  return &l->mm[i];
}
/* The attention descriptor of the last kernel. */
KB_UNUSED static tc_attention_desc *AT(kl *l) {
  int32_t i = l->nk - 1;
  l->k[i].attention = &l->at[i];
  l->at[i].struct_size = sizeof l->at[i];
  return &l->at[i];
}
KB_UNUSED static int32_t BUF(kl *l, const char *name, int32_t dtype, int32_t role, int32_t numel) {
  int32_t i = l->nk - 1, b = l->nbufs[i]++;
  l->bufs[i][b] = (tc_kbuffer){.struct_size = sizeof(tc_kbuffer), .name = name, .dtype = dtype, .role = role, .numel = numel};
  l->k[i].n_buffers = l->nbufs[i];
  return b;
}
KB_UNUSED static int32_t OP(kl *l, int32_t kind, int32_t dtype, int32_t loop, int32_t prim, int32_t a, int32_t b, int32_t c,
                  int32_t buffer, ixspec ix) {
  int32_t i = l->nk - 1, o = l->nops[i]++;
  int32_t *args = l->args[i][o];
  args[0] = a;
  args[1] = b;
  args[2] = c;
  int32_t n_args = c >= 0 ? 3 : b >= 0 ? 2 : a >= 0 ? 1 : 0;
  const tc_index *index = NULL;
  if (kind == TC_KOP_LOAD || kind == TC_KOP_STORE || kind == TC_KOP_STORE_ADD || kind == TC_KOP_INDEX ||
      kind == TC_KOP_RANDOM) {
    int32_t nv = l->k[i].n_outer + 1, *st = l->strides[i][o];
    for (int v = 0; v < nv; v++) st[v] = v < 3 ? ix.s[v] : -1;
    for (int v = nv; v < 3; v++) cr_assert_eq(ix.s[v], -1, "a stride past the kernel's vars");
    l->ix[i][o] = (tc_index){.struct_size = sizeof(tc_index), .offset = ix.offset, .n_vars = nv, .strides = st,
                             .indirect = ix.indirect, .indirect_stride = ix.indirect_stride};
    index = &l->ix[i][o];
  }
  l->ops[i][o] = (tc_kop){.struct_size = sizeof(tc_kop), .kind = kind, .dtype = dtype, .loop = loop, .prim = prim,
                          .n_args = n_args, .args = args, .buffer = buffer, .index = index, .reuse = -1};
  l->k[i].n_ops = l->nops[i];
  return o;
}
static const ixspec NOIX = {-1, {-1, -1, -1}, -1, -1};
KB_UNUSED static int32_t LOAD(kl *l, int32_t loop, int32_t buf, ixspec ix) { return OP(l, TC_KOP_LOAD, TC_F32, loop, 0, -1, -1, -1, buf, ix); }
KB_UNUSED static int32_t PRIM(kl *l, int32_t loop, int32_t prim, int32_t a, int32_t b) { return OP(l, TC_KOP_PRIM, TC_F32, loop, prim, a, b, -1, -1, NOIX); }
KB_UNUSED static int32_t RED(kl *l, int32_t loop, int32_t prim, int32_t a) { return OP(l, TC_KOP_REDUCE, TC_F32, loop, prim, a, -1, -1, -1, NOIX); }
KB_UNUSED static int32_t STORE(kl *l, int32_t loop, int32_t buf, ixspec ix, int32_t a) { return OP(l, TC_KOP_STORE, TC_F32, loop, 0, a, -1, -1, buf, ix); }
KB_UNUSED static int32_t CONSTF(kl *l, int32_t loop, double v) {
  int32_t o = OP(l, TC_KOP_CONST, TC_F32, loop, 0, -1, -1, -1, -1, NOIX);
  l->ops[l->nk - 1][o].fconst = v;
  return o;
}

KB_UNUSED static tc_kernel_list LIST(kl *l, const char *name, int32_t n_syms) {
  return (tc_kernel_list){.struct_size = sizeof(tc_kernel_list), .name = name, .n_exprs = l->nex, .exprs = l->ex,
                          .expr_size = sizeof(tc_size_expr), .n_syms = n_syms, .n_kernels = l->nk, .kernels = l->k,
                          .kernel_size = sizeof(tc_kernel_desc)};
}

/* y = gelu(a @ w^T + bias): a (M, 40) with M the symbol s0, w (48, 40) given transposed
 * (strides k: 1, n: K), one matmul kernel whose epilogue adds the bias and applies the exact
 * gelu, storing into out_y. Both generators' tests compile this list. */
KB_UNUSED static tc_kernel_list matmul_bias_gelu_list_m(kl *l, int64_t rows) {
  int32_t M = rows > 0 ? C(l, rows) : S(l, 0), N = C(l, 48), Kd = C(l, 40), one = C(l, 1), zero = C(l, 0), nb = C(l, 1);
  int32_t outer[3] = {nb, M, N};
  K(l, "matmul_add_gelu", TC_KERNEL_MATMUL, 3, outer, -1);
  int32_t ba = BUF(l, "in_a", TC_F32, TC_BUF_INPUT, MUL(l, M, Kd)), bb = BUF(l, "in_w", TC_F32, TC_BUF_INPUT, MUL(l, N, Kd));
  int32_t bias = BUF(l, "in_bias", TC_F32, TC_BUF_INPUT, N), by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, MUL(l, M, N));
  *MM(l) = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = by, .batch = nb, .m = M, .n = N,
                            .k = Kd, .a_offset = zero, .a_stride_batch = zero, .a_stride_m = Kd, .a_stride_k = one,
                            .b_offset = zero, .b_stride_batch = zero, .b_stride_k = one, .b_stride_n = Kd,
                            .c_offset = zero, .c_stride_batch = zero, .c_stride_m = N, .c_stride_n = one,
                            .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1,
                            .c_stride_batch2 = -1};
  int32_t acc = OP(l, TC_KOP_ACC, TC_F32, -1, 0, -1, -1, -1, -1, NOIX);
  int32_t bv = LOAD(l, -1, bias, IX(-1, -1, -1, one));
  int32_t z = PRIM(l, -1, TC_PRIM_ADD, acc, bv);
  int32_t e = PRIM(l, -1, TC_PRIM_ERF, PRIM(l, -1, TC_PRIM_MUL, z, CONSTF(l, -1, 0.70710678118654752)), -1);
  int32_t y = PRIM(l, -1, TC_PRIM_MUL, PRIM(l, -1, TC_PRIM_MUL, z, PRIM(l, -1, TC_PRIM_ADD, e, CONSTF(l, -1, 1))),
                   CONSTF(l, -1, 0.5));
  STORE(l, -1, by, IX(-1, -1, N, one), y);
  return LIST(l, "mlp_test", rows > 0 ? 0 : 1);
}
/* M rows symbolic (s0). */
KB_UNUSED static tc_kernel_list matmul_bias_gelu_list(kl *l) { return matmul_bias_gelu_list_m(l, -1); }

#endif
