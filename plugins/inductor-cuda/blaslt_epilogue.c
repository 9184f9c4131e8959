/* blaslt_epilogue.c — matmul epilogues cuBLASLt runs itself, so the product is written once.
 *
 * A linear layer's kernel is acc + bias[n] and, in a residual block, + x[m, n]: as cuBLASLt
 * plus a generated epilogue that is a second pass over the product (read C, bias, x; write C),
 * about 10 µs per 4096 x 768 f32 product on the H200, 20 µs for the qkv projection. cuBLASLt
 * computes D = alpha * A.B + beta * C + bias (CUBLASLT_EPILOGUE_BIAS, the bias broadcast along
 * D's columns) inside the GEMM's own epilogue, so the residual goes in as C with beta = 1 and
 * the bias as the bias vector.
 *
 * At compile, icuda_lt_epilogue_find recognizes the ops acc (+ load)* -> store, each add taking
 * the chain so far and one load (at most two loads), and keeps the loads' and the store's
 * index expressions. At launch, icuda_lt_epilogue_bind evaluates them: a load constant in
 * every outer var but n (unit stride along n) is the bias; one with unit stride along n is the
 * residual; the store must be the product's own place (C's buffer, offset and strides). Where
 * anything does not fit (an unaligned bias, another layout, overlapping buffers) the product
 * goes through the generated epilogue kernel, which is always compiled.
 *
 * Rounding: cuBLASLt adds the residual before the bias ((acc + x) + b against the graph's
 * (acc + b) + x), a last-bit difference of the kind two GEMM algorithms already differ by. */
#include <string.h>

#include "icuda.h"

static bool operand_copy(const tc_kop *op, icuda_lt_operand *out) {
  const tc_index *ix = op->index;
  if (!ix || ix->indirect >= 0 || ix->n_vars < 1 || ix->n_vars > TC_MAX_RANK + 1) return false;
  out->buffer = op->buffer;
  out->offset = ix->offset;
  out->n_vars = ix->n_vars;
  for (int32_t v = 0; v < ix->n_vars; v++) out->strides[v] = ix->strides ? ix->strides[v] : -1;
  return true;
}

void icuda_lt_epilogue_find(const tc_kernel_desc *k, icuda_lt_epilogue *out) {
  memset(out, 0, sizeof *out);
  int32_t chain = -1; /* the op id holding acc (+ loads so far) */
  bool stored = false;
  int32_t loads[ICUDA_LT_MAX_LOADS + 1], n_loads = 0;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (stored || op->loop != -1 || op->dtype != TC_F32) return;
    switch (op->kind) {
    case TC_KOP_ACC:
      if (chain >= 0) return;
      chain = i;
      break;
    case TC_KOP_LOAD:
      if (n_loads == ICUDA_LT_MAX_LOADS || op->reuse >= 0 || !operand_copy(op, &out->loads[n_loads])) return;
      loads[n_loads++] = i;
      break;
    case TC_KOP_PRIM: {
      if (op->prim != TC_PRIM_ADD || op->n_args != 2 || chain < 0) return;
      int32_t a = op->args[0], b = op->args[1], other = a == chain ? b : b == chain ? a : -1;
      bool is_load = false;
      for (int32_t j = 0; j < n_loads; j++) is_load = is_load || loads[j] == other;
      if (!is_load) return;
      chain = i;
      break;
    }
    case TC_KOP_STORE:
      if (op->n_args != 1 || op->args[0] != chain || !operand_copy(op, &out->store)) return;
      stored = true;
      break;
    default:
      return;
    }
  }
  /* every load feeds the chain: count the adds */
  int32_t adds = 0;
  for (int32_t i = 0; i < k->n_ops; i++) adds += tck_kernel_op(k, i)->kind == TC_KOP_PRIM;
  out->n_loads = n_loads;
  out->possible = stored && n_loads >= 1 && adds == n_loads;
}

static int64_t ev(const int64_t *vals, int32_t id) { return id >= 0 ? vals[id] : 0; }

/* Var v's stride of operand o (0 past its vars). */
static int64_t stride_of(const icuda_lt_operand *o, const int64_t *vals, int32_t v) {
  return v < o->n_vars ? ev(vals, o->strides[v]) : 0;
}

bool icuda_lt_epilogue_bind(const icuda_kernel *k, const int64_t *vals, const icuda_lt_shape *sh, icuda_lt_bound *out) {
  const icuda_lt_epilogue *ep = &k->lt_epi;
  memset(out, 0, sizeof *out);
  if (!ep->possible) return false;
  const tc_matmul_desc *d = &k->mm;
  const bool two = d->batch_levels == 2;
  /* the outer vars: (batch2,) batch, m, n */
  const int32_t vb2 = two ? 0 : -1, vb = two ? 1 : 0, vm = vb + 1, vn = vb + 2;
  /* the store is the product's place */
  const icuda_lt_operand *st = &ep->store;
  if (st->buffer != d->c || ev(vals, st->offset) != ev(vals, d->c_offset)) return false;
  if ((sh->n > 1 && stride_of(st, vals, vn) != ev(vals, d->c_stride_n)) ||
      (sh->m > 1 && stride_of(st, vals, vm) != ev(vals, d->c_stride_m)) ||
      (sh->b1 > 1 && stride_of(st, vals, vb) != ev(vals, d->c_stride_batch)) ||
      (two && sh->b2 > 1 && stride_of(st, vals, vb2) != ev(vals, d->c_stride_batch2)))
    return false;
  for (int32_t v = vn + 1; v < st->n_vars; v++)
    if (stride_of(st, vals, v) != 0) return false;
  for (int32_t i = 0; i < ep->n_loads; i++) {
    const icuda_lt_operand *o = &ep->loads[i];
    const int64_t s_n = stride_of(o, vals, vn), s_m = stride_of(o, vals, vm), s_b = stride_of(o, vals, vb);
    const int64_t s_b2 = two ? stride_of(o, vals, vb2) : 0;
    for (int32_t v = vn + 1; v < o->n_vars; v++)
      if (stride_of(o, vals, v) != 0) return false;
    if (sh->n > 1 && s_n != 1) return false;
    if (s_m < 0 || s_b < 0 || s_b2 < 0) return false;
    const bool bias = (sh->m == 1 || s_m == 0) && (sh->b1 == 1 || s_b == 0) && (sh->b2 == 1 || s_b2 == 0);
    if (bias && !out->has_bias) {
      out->has_bias = true;
      out->bias_buffer = o->buffer;
      out->bias_offset = ev(vals, o->offset);
    } else if (!out->has_res && (sh->m == 1 || s_m >= sh->n)) {
      out->has_res = true;
      out->res_buffer = o->buffer;
      out->res_offset = ev(vals, o->offset);
      out->res_stride_m = sh->m == 1 ? sh->n : s_m;
      out->res_stride_batch = s_b;
      out->res_stride_batch2 = s_b2;
    } else {
      return false; /* two biases, or a residual whose rows overlap */
    }
  }
  return true;
}
