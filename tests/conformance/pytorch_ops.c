/* pytorch_ops.c — each op of the PyTorch expectations applied through tc's public API, its
 * attributes taken from the case (dims, keepdim, eps, ...): the tc call that matches the torch
 * call of tests/pytorch/gen_expected.py. */
#include "pytorch_ops.h"

#include <string.h>

typedef tc_tensor *(*unary_fn)(tc_tensor *);
typedef tc_tensor *(*binary_fn)(tc_tensor *, tc_tensor *);

static const struct {
  const char *name;
  unary_fn fn;
} unary_ops[] = {
    {"neg", tc_neg},
    {"abs", tc_abs},
    {"exp", tc_exp},
    {"log", tc_log},
    {"sqrt", tc_sqrt},
    {"rsqrt", tc_rsqrt},
    {"sin", tc_sin},
    {"cos", tc_cos},
    {"tanh", tc_tanh},
    {"erf", tc_erf},
    {"floor", tc_floor},
    {"ceil", tc_ceil},
    {"round", tc_round},
    {"sign", tc_sign},
    {"reciprocal", tc_reciprocal},
    {"isnan", tc_isnan},
    {"sigmoid", tc_sigmoid},
    {"relu", tc_relu},
    {"gelu", tc_gelu},
    {"gelu_tanh", tc_gelu_tanh},
    {"silu", tc_silu},
    {"logical_not", tc_logical_not},
};

static const struct {
  const char *name;
  binary_fn fn;
} binary_ops[] = {
    {"add", tc_add},
    {"sub", tc_sub},
    {"mul", tc_mul},
    {"div", tc_div},
    {"div_trunc", tc_div_trunc},
    {"remainder", tc_remainder},
    {"fmod", tc_fmod},
    {"pow", tc_pow},
    {"maximum", tc_maximum},
    {"minimum", tc_minimum},
    {"eq", tc_eq},
    {"ne", tc_ne},
    {"lt", tc_lt},
    {"le", tc_le},
    {"gt", tc_gt},
    {"ge", tc_ge},
    {"logical_and", tc_logical_and},
    {"logical_or", tc_logical_or},
    {"bitwise_and", tc_bitwise_and},
    {"bitwise_or", tc_bitwise_or},
    {"matmul", tc_matmul},
    {"cross_entropy", tc_cross_entropy},
    {"embedding", tc_embedding},
};

static double attr_num(const pt_case *pc, const char *key, double fallback) {
  const pt_attr *a = pt_attr_find(pc, key);
  return a && a->n ? a->values[0] : fallback;
}

static int attr_int(const pt_case *pc, const char *key) {
  return (int)attr_num(pc, key, 0);
}

/* The integer list of key into out (at most PT_MAX_ATTR_VALUES); returns its length. */
static int attr_ints(const pt_case *pc, const char *key, int *out) {
  const pt_attr *a = pt_attr_find(pc, key);
  int n = a ? a->n : 0;
  for (int i = 0; i < n; i++)
    out[i] = (int)a->values[i];
  return n;
}

static tc_dtype attr_dtype(const pt_case *pc) {
  const pt_attr *a = pt_attr_find(pc, "dtype");
  tc_dtype d = TC_F32;
  if (a) pt_dtype_parse(a->text, &d);
  return d;
}

static tc_tensor *reduction(const pt_case *pc, tc_tensor *x) {
  int dims[PT_MAX_ATTR_VALUES];
  int n = attr_ints(pc, "dims", dims);
  bool keep = attr_int(pc, "keepdim") != 0;
  const char *op = pc->op;
  if (!strcmp(op, "sum")) return tc_sum(x, n, dims, keep);
  if (!strcmp(op, "mean")) return tc_mean(x, n, dims, keep);
  if (!strcmp(op, "max")) return tc_max(x, n, dims, keep);
  if (!strcmp(op, "min")) return tc_min(x, n, dims, keep);
  if (!strcmp(op, "prod")) return tc_prod(x, n, dims, keep);
  if (!strcmp(op, "var")) return tc_var(x, n, dims, attr_int(pc, "correction"), keep);
  if (!strcmp(op, "argmax")) return tc_argmax(x, attr_int(pc, "dim"), keep);
  if (!strcmp(op, "argmin")) return tc_argmin(x, attr_int(pc, "dim"), keep);
  return NULL;
}

static tc_tensor *with_attrs(const pt_case *pc, tc_tensor *const *in, int n) {
  const char *op = pc->op;
  tc_tensor *x = in[0];
  tc_tensor *third = n > 2 ? in[2] : NULL;
  if (!strcmp(op, "add_scalar")) return tc_add_scalar(x, attr_num(pc, "s", 0));
  if (!strcmp(op, "mul_scalar")) return tc_mul_scalar(x, attr_num(pc, "s", 0));
  if (!strcmp(op, "pow_scalar")) return tc_pow_scalar(x, attr_num(pc, "s", 0));
  if (!strcmp(op, "where") && n == 3) return tc_where(x, in[1], in[2]);
  if (!strcmp(op, "masked_fill") && n == 2) return tc_masked_fill(x, in[1], attr_num(pc, "value", 0));
  if (!strcmp(op, "to_dtype")) return tc_to_dtype(x, attr_dtype(pc));
  if (!strcmp(op, "softmax")) return tc_softmax(x, attr_int(pc, "dim"));
  if (!strcmp(op, "log_softmax")) return tc_log_softmax(x, attr_int(pc, "dim"));
  if (!strcmp(op, "layer_norm"))
    return tc_layer_norm(x, attr_int(pc, "n_norm"), n > 1 ? in[1] : NULL, third, attr_num(pc, "eps", 1e-5));
  if (!strcmp(op, "rms_norm") && n == 2)
    return tc_rms_norm(x, attr_int(pc, "n_norm"), in[1], attr_num(pc, "eps", 1e-6));
  if (!strcmp(op, "linear") && n >= 2) return tc_linear(x, in[1], third);
  if (!strcmp(op, "gather") && n == 2) return tc_gather(x, attr_int(pc, "dim"), in[1]);
  if (!strcmp(op, "index_select") && n == 2) return tc_index_select(x, attr_int(pc, "dim"), in[1]);
  if (!strcmp(op, "scatter_add") && n == 3) return tc_scatter_add(x, attr_int(pc, "dim"), in[1], in[2]);
  if (!strcmp(op, "tril")) return tc_tril(x, attr_int(pc, "diagonal"));
  if (!strcmp(op, "triu")) return tc_triu(x, attr_int(pc, "diagonal"));
  if (!strcmp(op, "cat")) return tc_cat(n, in, attr_int(pc, "dim"));
  if (!strcmp(op, "flip")) {
    int dims[PT_MAX_ATTR_VALUES];
    return tc_flip(x, attr_ints(pc, "dims", dims), dims);
  }
  if (!strcmp(op, "pad")) {
    const pt_attr *a = pt_attr_find(pc, "pads");
    int64_t pads[PT_MAX_ATTR_VALUES];
    for (int i = 0; a && i < a->n; i++)
      pads[i] = (int64_t)a->values[i];
    return tc_pad(x, a ? a->n : 0, pads, attr_num(pc, "value", 0));
  }
  return reduction(pc, x);
}

tc_tensor *pt_op_apply(const pt_case *pc, tc_tensor *const *in, int n) {
  if (n < 1) return NULL;
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
    if (n == 1 && !strcmp(pc->op, unary_ops[i].name)) return unary_ops[i].fn(in[0]);
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (n == 2 && !strcmp(pc->op, binary_ops[i].name)) return binary_ops[i].fn(in[0], in[1]);
  return with_attrs(pc, in, n);
}
