/* dtype.c — dtype categories and PyTorch's promotion of two tensor operands. */
#include "tensor/tensor.h"

bool dtype_is_float(tc_dtype d) {
  return d == TC_F32 || d == TC_F64 || d == TC_F16 || d == TC_BF16;
}
bool dtype_is_int(tc_dtype d) {
  return d == TC_I32 || d == TC_I64;
}

/* bool < integers < floats; within a category the wider type wins. f16 and bf16 promote to f32
 * together, as in PyTorch. */
static int dtype_category(tc_dtype d) {
  return d == TC_BOOL ? 0 : dtype_is_int(d) ? 1 : 2;
}

static int dtype_rank_in_category(tc_dtype d) {
  switch (d) {
  case TC_I32: return 0;
  case TC_I64: return 1;
  case TC_F16:
  case TC_BF16: return 0;
  case TC_F32: return 1;
  case TC_F64: return 2;
  default: return 0;
  }
}

tc_dtype dtype_promote(tc_dtype a, tc_dtype b) {
  if (a == b) return a;
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2 && ((a == TC_F16 && b == TC_BF16) || (a == TC_BF16 && b == TC_F16))) return TC_F32;
  return dtype_rank_in_category(a) >= dtype_rank_in_category(b) ? a : b;
}
