/* exec_movement.c — RESHAPE, BROADCAST_IN_DIM, PERMUTE, SLICE, PAD, CONCATENATE, REVERSE.
 * Each maps a result index to the operand element it copies (or to PAD's value); elements are
 * moved as bytes, so every dtype behaves the same. */
#include <stdio.h>
#include <string.h>

#include "debug_eager.h"

static tc_status size_error(const de_op *op, const de_tensor *x, const char *why) {
  char a[160], b[160];
  return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "operand %s, result %s: %s",
                     de_shape_str(a, sizeof a, x->rank, x->sizes),
                     de_shape_str(b, sizeof b, op->out->rank, op->out->sizes), why);
}

/* Run-time size rules of each prim (the attributes were checked at compile time). */
static tc_status check_sizes(const de_op *op) {
  const de_node *n = op->node;
  const de_tensor *x = &op->in[0], *out = op->out;
  const int64_t *a = n->iattrs;
  switch (n->prim) {
  case TC_PRIM_RESHAPE:
    if (de_numel(x->rank, x->sizes) != de_numel(out->rank, out->sizes))
      return size_error(op, x, "element counts differ");
    return TC_OK;
  case TC_PRIM_BROADCAST_IN_DIM:
    for (int32_t d = 0; d < x->rank; d++)
      if (x->sizes[d] != 1 && x->sizes[d] != out->sizes[a[d]])
        return size_error(op, x, "an operand dim is neither 1 nor the result's size");
    return TC_OK;
  case TC_PRIM_PERMUTE:
    for (int32_t d = 0; d < x->rank; d++)
      if (out->sizes[d] != x->sizes[a[d]]) return size_error(op, x, "result is not the permuted operand");
    return TC_OK;
  case TC_PRIM_SLICE:
    for (int32_t d = 0; d < x->rank; d++)
      if (out->sizes[d] > 0 && a[d] + (out->sizes[d] - 1) * a[x->rank + d] >= x->sizes[d])
        return size_error(op, x, "slice reads past the end of the operand");
    return TC_OK;
  case TC_PRIM_PAD:
    for (int32_t d = 0; d < x->rank; d++)
      if (out->sizes[d] != x->sizes[d] + a[d] + a[x->rank + d])
        return size_error(op, x, "result size is not lo + operand + hi");
    return TC_OK;
  case TC_PRIM_CONCATENATE: {
    int64_t dim = a[0], total = 0;
    for (int32_t k = 0; k < n->n_inputs; k++) {
      const de_tensor *t = &op->in[k];
      for (int32_t d = 0; d < x->rank; d++)
        if (d != dim && t->sizes[d] != out->sizes[d]) return size_error(op, t, "sizes differ outside the dim");
      total += t->sizes[dim];
    }
    if (total != out->sizes[dim]) return size_error(op, x, "result size at dim is not the operands' total");
    return TC_OK;
  }
  default: /* REVERSE */
    return de_op_check_same_shape(op, x, "operand");
  }
}

/* The operand element that result index o copies, or NULL for PAD's padding. */
static const char *source(const de_op *op, const int64_t *o, int64_t linear) {
  const de_node *n = op->node;
  const de_tensor *x = &op->in[0];
  const int64_t *a = n->iattrs;
  int64_t s[TC_MAX_RANK];
  switch (n->prim) {
  case TC_PRIM_RESHAPE: return de_at_linear(x, linear);
  case TC_PRIM_BROADCAST_IN_DIM:
    for (int32_t d = 0; d < x->rank; d++) s[d] = x->sizes[d] == 1 ? 0 : o[a[d]];
    return de_at(x, s);
  case TC_PRIM_PERMUTE:
    for (int32_t d = 0; d < x->rank; d++) s[a[d]] = o[d];
    return de_at(x, s);
  case TC_PRIM_SLICE:
    for (int32_t d = 0; d < x->rank; d++) s[d] = a[d] + o[d] * a[x->rank + d];
    return de_at(x, s);
  case TC_PRIM_PAD:
    for (int32_t d = 0; d < x->rank; d++) {
      s[d] = o[d] - a[d];
      if (s[d] < 0 || s[d] >= x->sizes[d]) return NULL;
    }
    return de_at(x, s);
  case TC_PRIM_CONCATENATE: {
    int64_t dim = a[0], at = o[dim];
    for (int32_t k = 0; k < n->n_inputs; k++) {
      if (at < op->in[k].sizes[dim]) {
        memcpy(s, o, sizeof(int64_t) * (size_t)x->rank);
        s[dim] = at;
        return de_at(&op->in[k], s);
      }
      at -= op->in[k].sizes[dim];
    }
    return NULL; /* unreachable: sizes were checked */
  }
  default: /* REVERSE */
    memcpy(s, o, sizeof(int64_t) * (size_t)x->rank);
    for (int32_t k = 0; k < n->n_iattrs; k++) s[a[k]] = x->sizes[a[k]] - 1 - o[a[k]];
    return de_at(x, s);
  }
}

tc_status de_exec_movement(const de_op *op) {
  const de_tensor *out = op->out;
  DE_TRY(check_sizes(op));
  size_t item = tck_dtype_size((int32_t)out->dtype);
  char pad[8] = {0};
  if (op->node->prim == TC_PRIM_PAD) de_store_f(out->dtype, pad, op->node->fattr);
  int64_t n = de_numel(out->rank, out->sizes), o[TC_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    de_unravel(i, out->rank, out->sizes, o);
    const char *src = source(op, o, i);
    memcpy(out->data + (size_t)i * item, src ? src : pad, item);
  }
  return TC_OK;
}
