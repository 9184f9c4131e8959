/* names.c — dtype names and sizes, prim and status names, reduction identities: one table per
 * fact, so every backend prints and starts folds the same way. */
#include <math.h>

#include "tc_kit.h"

size_t tck_dtype_size(int32_t dtype) {
  switch (dtype) {
  case TC_F32: return 4;
  case TC_F64: return 8;
  case TC_I32: return 4;
  case TC_I64: return 8;
  case TC_BOOL: return 1;
  case TC_F16: return 2;
  case TC_BF16: return 2;
  default: return 0;
  }
}

const char *tck_dtype_name(int32_t dtype) {
  switch (dtype) {
  case TC_F32: return "f32";
  case TC_F64: return "f64";
  case TC_I32: return "i32";
  case TC_I64: return "i64";
  case TC_BOOL: return "bool";
  case TC_F16: return "f16";
  case TC_BF16: return "bf16";
  default: return "dtype?";
  }
}

bool tck_dtype_is_float(int32_t dtype) {
  return dtype == TC_F32 || dtype == TC_F64 || dtype == TC_F16 || dtype == TC_BF16;
}
bool tck_dtype_is_int(int32_t dtype) { return dtype == TC_I32 || dtype == TC_I64; }

const char *tck_prim_name(int32_t prim) {
  switch (prim) {
  case TC_PRIM_NEG: return "neg";
  case TC_PRIM_ABS: return "abs";
  case TC_PRIM_EXP: return "exp";
  case TC_PRIM_LOG: return "log";
  case TC_PRIM_SQRT: return "sqrt";
  case TC_PRIM_RSQRT: return "rsqrt";
  case TC_PRIM_SIN: return "sin";
  case TC_PRIM_COS: return "cos";
  case TC_PRIM_TANH: return "tanh";
  case TC_PRIM_ERF: return "erf";
  case TC_PRIM_FLOOR: return "floor";
  case TC_PRIM_CEIL: return "ceil";
  case TC_PRIM_ROUND: return "round";
  case TC_PRIM_SIGN: return "sign";
  case TC_PRIM_RECIPROCAL: return "reciprocal";
  case TC_PRIM_LOGICAL_NOT: return "logical_not";
  case TC_PRIM_ISNAN: return "isnan";
  case TC_PRIM_ADD: return "add";
  case TC_PRIM_SUB: return "sub";
  case TC_PRIM_MUL: return "mul";
  case TC_PRIM_DIV: return "div";
  case TC_PRIM_POW: return "pow";
  case TC_PRIM_MAX: return "max";
  case TC_PRIM_MIN: return "min";
  case TC_PRIM_REMAINDER: return "remainder";
  case TC_PRIM_FMOD: return "fmod";
  case TC_PRIM_EQ: return "eq";
  case TC_PRIM_NE: return "ne";
  case TC_PRIM_LT: return "lt";
  case TC_PRIM_LE: return "le";
  case TC_PRIM_GT: return "gt";
  case TC_PRIM_GE: return "ge";
  case TC_PRIM_AND: return "and";
  case TC_PRIM_OR: return "or";
  case TC_PRIM_WHERE: return "where";
  case TC_PRIM_CONVERT: return "convert";
  case TC_PRIM_REDUCE_SUM: return "reduce_sum";
  case TC_PRIM_REDUCE_MAX: return "reduce_max";
  case TC_PRIM_REDUCE_MIN: return "reduce_min";
  case TC_PRIM_REDUCE_PROD: return "reduce_prod";
  case TC_PRIM_ARGMAX: return "argmax";
  case TC_PRIM_ARGMIN: return "argmin";
  case TC_PRIM_RESHAPE: return "reshape";
  case TC_PRIM_BROADCAST_IN_DIM: return "broadcast_in_dim";
  case TC_PRIM_PERMUTE: return "permute";
  case TC_PRIM_SLICE: return "slice";
  case TC_PRIM_PAD: return "pad";
  case TC_PRIM_CONCATENATE: return "concatenate";
  case TC_PRIM_REVERSE: return "reverse";
  case TC_PRIM_GATHER: return "gather";
  case TC_PRIM_SCATTER_ADD: return "scatter_add";
  case TC_PRIM_IOTA: return "iota";
  case TC_PRIM_CONSTANT: return "constant";
  case TC_PRIM_RANDOM: return "random";
  case TC_PRIM_MATMUL: return "matmul";
  default: return "prim?";
  }
}

const char *tck_status_name(tc_status s) {
  switch (s) {
  case TC_OK: return "ok";
  case TC_ERR_INVALID_ARGUMENT: return "invalid argument";
  case TC_ERR_UNSUPPORTED: return "unsupported";
  case TC_ERR_UNAVAILABLE: return "unavailable";
  case TC_ERR_OUT_OF_MEMORY: return "out of memory";
  case TC_ERR_COMPILE: return "compile error";
  case TC_ERR_VERSION: return "version mismatch";
  case TC_ERR_INTERNAL: return "internal error";
  case TC_ERR_GUARD: return "guard failed";
  case TC_ERR_GRAPH_BREAK: return "graph break";
  case TC_ERR_DEVICE: return "device error";
  default: return "status?";
  }
}

double tck_reduce_identity_f(int32_t reduce_prim, int32_t dtype) {
  switch (reduce_prim) {
  case TC_PRIM_REDUCE_PROD: return 1.0;
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_ARGMAX:
    return tck_dtype_is_float(dtype) ? -INFINITY : (double)tck_reduce_identity_i(reduce_prim, dtype);
  case TC_PRIM_REDUCE_MIN:
  case TC_PRIM_ARGMIN:
    return tck_dtype_is_float(dtype) ? INFINITY : (double)tck_reduce_identity_i(reduce_prim, dtype);
  default: return 0.0;
  }
}

int64_t tck_reduce_identity_i(int32_t reduce_prim, int32_t dtype) {
  bool max = reduce_prim == TC_PRIM_REDUCE_MAX || reduce_prim == TC_PRIM_ARGMAX;
  bool min = reduce_prim == TC_PRIM_REDUCE_MIN || reduce_prim == TC_PRIM_ARGMIN;
  if (reduce_prim == TC_PRIM_REDUCE_PROD) return 1;
  if (!max && !min) return 0;
  switch (dtype) {
  case TC_I32: return max ? INT32_MIN : INT32_MAX;
  case TC_I64: return max ? INT64_MIN : INT64_MAX;
  case TC_BOOL: return max ? 0 : 1;
  default: return 0; /* floats have no integer identity for max/min: use tck_reduce_identity_f */
  }
}

void tck_contiguous_strides(int32_t rank, const int64_t *sizes, int64_t *strides) {
  int64_t st = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    strides[d] = st;
    st *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

bool tck_prim_is_elementwise(int32_t p) {
  return (p >= TC_PRIM_NEG && p <= TC_PRIM_ISNAN) || (p >= TC_PRIM_ADD && p <= TC_PRIM_FMOD) || p == TC_PRIM_WHERE ||
         p == TC_PRIM_CONVERT;
}

bool tck_prim_is_transcendental(int32_t p) {
  switch (p) {
  case TC_PRIM_EXP: case TC_PRIM_LOG: case TC_PRIM_SIN: case TC_PRIM_COS: case TC_PRIM_TANH: case TC_PRIM_ERF:
  case TC_PRIM_POW:
    return true;
  default: return false;
  }
}

uint32_t tck_prim_abi_minor(int32_t p) { return p == TC_PRIM_FMOD ? 1u : 0u; }

/* Bits lo..hi (inclusive, within one 64-bit word) of a prim set. */
#define PRIM_BITS(lo, hi) ((~0ull >> (63 - ((hi) - (lo)))) << ((lo) % 64))
const uint64_t tck_prims_all[2] = {
    PRIM_BITS(TC_PRIM_NEG, TC_PRIM_ISNAN) | PRIM_BITS(TC_PRIM_ADD, TC_PRIM_FMOD) | PRIM_BITS(TC_PRIM_WHERE, TC_PRIM_CONVERT),
    PRIM_BITS(TC_PRIM_REDUCE_SUM, TC_PRIM_ARGMIN) | PRIM_BITS(TC_PRIM_RESHAPE, TC_PRIM_REVERSE) |
        PRIM_BITS(TC_PRIM_GATHER, TC_PRIM_SCATTER_ADD) | PRIM_BITS(TC_PRIM_IOTA, TC_PRIM_RANDOM) |
        PRIM_BITS(TC_PRIM_MATMUL, TC_PRIM_MATMUL)};
#undef PRIM_BITS
