/* prim_table.c — what debug-eager knows about each prim id: its name, its family (which
 * executor runs it) and the operand dtypes it accepts (docs/primitives.md). */
#include "debug_eager.h"

de_prim_info de_prim_info_of(int32_t prim) {
  switch (prim) {
  /* unary: transcendentals take floats; sign/abs/neg and the rounding family also take ints
   * (rounding an integer is the identity). */
  case TC_PRIM_NEG: return (de_prim_info){"neg", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_ABS: return (de_prim_info){"abs", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_EXP: return (de_prim_info){"exp", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_LOG: return (de_prim_info){"log", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_SQRT: return (de_prim_info){"sqrt", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_RSQRT: return (de_prim_info){"rsqrt", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_SIN: return (de_prim_info){"sin", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_COS: return (de_prim_info){"cos", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_TANH: return (de_prim_info){"tanh", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_ERF: return (de_prim_info){"erf", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_FLOOR: return (de_prim_info){"floor", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_CEIL: return (de_prim_info){"ceil", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_ROUND: return (de_prim_info){"round", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_SIGN: return (de_prim_info){"sign", DE_FAMILY_UNARY, DE_NUMBERS};
  case TC_PRIM_RECIPROCAL: return (de_prim_info){"reciprocal", DE_FAMILY_UNARY, DE_FLOATS};
  case TC_PRIM_LOGICAL_NOT: return (de_prim_info){"logical_not", DE_FAMILY_UNARY, DE_BOOL};
  case TC_PRIM_ISNAN: return (de_prim_info){"isnan", DE_FAMILY_UNARY, DE_FLOATS};
  /* binary */
  case TC_PRIM_ADD: return (de_prim_info){"add", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_SUB: return (de_prim_info){"sub", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_MUL: return (de_prim_info){"mul", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_DIV: return (de_prim_info){"div", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_POW: return (de_prim_info){"pow", DE_FAMILY_BINARY, DE_FLOATS};
  case TC_PRIM_MAX: return (de_prim_info){"max", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_MIN: return (de_prim_info){"min", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_REMAINDER: return (de_prim_info){"remainder", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_FMOD: return (de_prim_info){"fmod", DE_FAMILY_BINARY, DE_NUMBERS};
  case TC_PRIM_EQ: return (de_prim_info){"eq", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_NE: return (de_prim_info){"ne", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_LT: return (de_prim_info){"lt", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_LE: return (de_prim_info){"le", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_GT: return (de_prim_info){"gt", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_GE: return (de_prim_info){"ge", DE_FAMILY_BINARY, DE_ALL};
  case TC_PRIM_AND: return (de_prim_info){"and", DE_FAMILY_BINARY, DE_INTS | DE_BOOL};
  case TC_PRIM_OR: return (de_prim_info){"or", DE_FAMILY_BINARY, DE_INTS | DE_BOOL};
  /* ternary and conversion */
  case TC_PRIM_WHERE: return (de_prim_info){"where", DE_FAMILY_WHERE, DE_ALL};
  case TC_PRIM_CONVERT: return (de_prim_info){"convert", DE_FAMILY_CONVERT, DE_ALL};
  /* reductions */
  case TC_PRIM_REDUCE_SUM: return (de_prim_info){"reduce_sum", DE_FAMILY_REDUCE, DE_NUMBERS};
  case TC_PRIM_REDUCE_MAX: return (de_prim_info){"reduce_max", DE_FAMILY_REDUCE, DE_NUMBERS};
  case TC_PRIM_REDUCE_MIN: return (de_prim_info){"reduce_min", DE_FAMILY_REDUCE, DE_NUMBERS};
  case TC_PRIM_REDUCE_PROD: return (de_prim_info){"reduce_prod", DE_FAMILY_REDUCE, DE_NUMBERS};
  case TC_PRIM_ARGMAX: return (de_prim_info){"argmax", DE_FAMILY_ARGREDUCE, DE_NUMBERS};
  case TC_PRIM_ARGMIN: return (de_prim_info){"argmin", DE_FAMILY_ARGREDUCE, DE_NUMBERS};
  /* movement: dtype-agnostic byte moves */
  case TC_PRIM_RESHAPE: return (de_prim_info){"reshape", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_BROADCAST_IN_DIM: return (de_prim_info){"broadcast_in_dim", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_PERMUTE: return (de_prim_info){"permute", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_SLICE: return (de_prim_info){"slice", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_PAD: return (de_prim_info){"pad", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_CONCATENATE: return (de_prim_info){"concatenate", DE_FAMILY_MOVEMENT, DE_ALL};
  case TC_PRIM_REVERSE: return (de_prim_info){"reverse", DE_FAMILY_MOVEMENT, DE_ALL};
  /* indexing: x's dtype (the index is i32/i64) */
  case TC_PRIM_GATHER: return (de_prim_info){"gather", DE_FAMILY_INDEX, DE_ALL};
  case TC_PRIM_SCATTER_ADD: return (de_prim_info){"scatter_add", DE_FAMILY_INDEX, DE_NUMBERS};
  /* creation: the result's dtype */
  case TC_PRIM_IOTA: return (de_prim_info){"iota", DE_FAMILY_CREATE, DE_ALL};
  case TC_PRIM_CONSTANT: return (de_prim_info){"constant", DE_FAMILY_CREATE, DE_ALL};
  case TC_PRIM_RANDOM: return (de_prim_info){"random", DE_FAMILY_CREATE, DE_FLOATS};
  /* contraction */
  case TC_PRIM_MATMUL: return (de_prim_info){"matmul", DE_FAMILY_MATMUL, DE_FLOATS};
  default: return (de_prim_info){"?", DE_FAMILY_NONE, 0};
  }
}

const char *de_prim_name(int32_t prim) { return tck_prim_name(prim); /* the kit's names: one spelling everywhere */ }
