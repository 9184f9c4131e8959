/* exec_create.c — IOTA, CONSTANT and RANDOM: prims without operands that fill their result. */
#include "debug_eager.h"

static tc_status create_range(const de_op *op, int64_t begin, int64_t end) {
  const de_node *n = op->node;
  const de_tensor *out = op->out;
  size_t item = tck_dtype_size((int32_t)out->dtype);
  int64_t o[TC_MAX_RANK];
  for (int64_t i = begin; i < end; i++) {
    char *q = out->data + (size_t)i * item;
    switch (n->prim) {
    case TC_PRIM_IOTA:
      de_unravel(i, out->rank, out->sizes, o);
      de_store_i(out->dtype, q, o[n->iattrs[0]]);
      break;
    case TC_PRIM_CONSTANT:
      if (n->iattrs[0] == -1) de_store_f(out->dtype, q, n->fattr);
      else de_store_i(out->dtype, q, op->vals[n->iattrs[0]]); /* a size, known only now */
      break;
    default: /* RANDOM: iattrs = [seed, offset] as uint64 bits */
      de_store_f(out->dtype, q, de_philox_uniform((uint64_t)n->iattrs[0], (uint64_t)n->iattrs[1] + (uint64_t)i));
      break;
    }
  }
  return TC_OK;
}

tc_status de_exec_create(const de_op *op) {
  return de_parallel_for(op, de_numel(op->out->rank, op->out->sizes), create_range);
}
