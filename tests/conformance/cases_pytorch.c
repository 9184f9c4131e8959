/* cases_pytorch.c — PyTorch's expectations as conformance cases (suite "pytorch", one case per
 * record of tests/pytorch/data/expected.txt): each op at the edges of its domain, and each
 * bundled model's output and gradients, run on the backend under test and compared with what
 * PyTorch computed (tests/pytorch/gen_expected.py). Where tc knowingly differs from PyTorch the
 * case stays and is listed as KNOWN with the reason (known_differences below). */
#include <string.h>

#include "pytorch_ops.h"
#include "tc_models.h"

/* Known differences: a case (by name) on a backend (NULL: every backend) and why. Its failure is
 * printed as KNOWN, not counted; a pass counts as a pass. */
#define VECTORIZED_FMOD                                                                                                \
  "PyTorch's vectorized CPU fmod is a - trunc(a/b)*b, NaN where a/b overflows; tc's is C's exact fmod"
#define ZERO_TIES                                                                                                      \
  "ties of +0 and -0: PyTorch's kernels return an operand by position; tc orders -0 < +0, the same in any order"
#define NVIDIA_DIV "NVIDIA's Vulkan f32 division is 1 ulp off at 5/3 (Vulkan allows 2.5 ulps); lavapipe's is exact"
#define VULKAN_TRIG "vulkan reduces sin/cos by a three-part pi/2, exact for |x| < 1e5 only"
#define NVIDIA_RCP                                                                                                     \
  "NVIDIA's Vulkan f32 1/x is inf at x = 2^-126 (PyTorch: 2^126); Vulkan's division is exact to 2.5 ulps only for "   \
  "divisors in (2^-126, 2^126)"
#define NVIDIA_SQRT                                                                                                    \
  "NVIDIA's Vulkan f32 sqrt is not correctly rounded (sqrt(1.5) 1 ulp low on the H200; Vulkan allows sqrt the "        \
  "precision of 1 / inversesqrt)"
#define LAVAPIPE_EXP_F64 "lavapipe: f64 exp is 21 ulps off at x = 88.5 (the error grows with |x|, as f32 exp's)"
static const struct {
  const char *name, *backend, *reason;
} known_differences[] = {
    {"gelu_f32_huge", NULL,
     "PyTorch's vectorized CPU gelu: NaN at +-inf (its scalar path: +inf, -0, as tc), inf at FLT_MAX"},
    {"fmod_f32_pairs_pytorch_vectorized", NULL, VECTORIZED_FMOD},
    {"remainder_f32_pairs_pytorch_vectorized", NULL, VECTORIZED_FMOD},
    {"maximum_f32_pairs_pytorch_vectorized", NULL, ZERO_TIES},
    {"minimum_f32_pairs_pytorch_vectorized", NULL, ZERO_TIES},
    {"maximum_f64_pairs_pytorch_vectorized", NULL, ZERO_TIES},
    {"max_rows_mixed_zeros", NULL, ZERO_TIES},
    {"min_rows_mixed_zeros", NULL, ZERO_TIES},
    {"matmul_i64", NULL, "tc_matmul takes floating operands only (PyTorch's CPU matmul takes integers too)"},
    {"pad_negative_crops", NULL, "tc_pad takes pads >= 0 (PyTorch crops with negative pads)"},
    {"sin_f32_huge_args", "vulkan", VULKAN_TRIG},
    {"cos_f32_huge_args", "vulkan", VULKAN_TRIG},
    {"pow_f32_pairs", "vulkan", "vulkan's f32 pow is exp(b * log a) in f32, off where |b log a| is large (FLT_MAX^1 = inf)"},
    {"div_i32_pairs", "vulkan", NVIDIA_DIV},
    {"div_i32_i32", "vulkan", NVIDIA_DIV},
    {"exp_f64_edges", "vulkan", LAVAPIPE_EXP_F64},
    {"reciprocal_f32_edges", "vulkan", NVIDIA_RCP},
    {"sqrt_f32_edges", "vulkan", NVIDIA_SQRT},
    {"pow_scalar_m1p0_f32_edges", "vulkan", NVIDIA_RCP},
    {"sigmoid_f64_edges", "vulkan", LAVAPIPE_EXP_F64},
};

static const char *known_reason(const char *name, const char *backend) {
  for (size_t i = 0; i < sizeof known_differences / sizeof known_differences[0]; i++)
    if (!strcmp(known_differences[i].name, name) &&
        (!known_differences[i].backend || !strcmp(known_differences[i].backend, backend)))
      return known_differences[i].reason;
  return NULL;
}

/* ---------------------------------------------------------------- ops
 * The case being traced: the op model functions have tensor parameters only, so they read the
 * op and its attributes from here. Cases run one at a time (conf_run_all), each compiled
 * function is traced and freed within its case, and a new compile traces again. */
static const pt_case *op_current;

static tc_tensor *op_model(tc_tensor *const *in, int n) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = pt_op_apply(op_current, in, n);
  if (y) tc_scope_keep(s, y);
  tc_scope_close(s);
  return y;
}

static tc_tensor *op_model1(tc_tensor *a) {
  return op_model((tc_tensor *[]){a}, 1);
}
static tc_tensor *op_model2(tc_tensor *a, tc_tensor *b) {
  return op_model((tc_tensor *[]){a, b}, 2);
}
static tc_tensor *op_model3(tc_tensor *a, tc_tensor *b, tc_tensor *c) {
  return op_model((tc_tensor *[]){a, b, c}, 3);
}

static void run_op(conf_ctx *c, const pt_case *pc) {
  static const tc_model_fn by_arity[] = {NULL, TC_FN(op_model1), TC_FN(op_model2), TC_FN(op_model3)};
  if (pc->n_in < 1 || pc->n_in > 3 || pc->n_out != 1) {
    conf_fail(c, "%s: %d inputs and %d outputs (the runner takes 1..3 and 1)", pc->op, pc->n_in, pc->n_out);
    return;
  }
  tc_tensor *in[3];
  for (int i = 0; i < pc->n_in; i++)
    in[i] = pt_tensor_make(&pc->in[i]);
  op_current = pc;
  tc_tensor *y = conf_run(c, by_arity[pc->n_in], pc->n_in, in);
  op_current = NULL;
  if (y) pt_check_flushing(c, pc->op, y, pc, &pc->out[0], pt_backend_flushes_subnormals(conf_backend(c)));
}

/* ---------------------------------------------------------------- models
 * The model compiled on the backend (eagerly for "eager"), called with its float inputs
 * requiring grad; then loss = sum(y * r) (r: the case's last input) and tc_grad of every float
 * input: on a compiled backend the gradient runs the compiled backward graph (the joint graph of
 * docs/autodiff.md). A training-step model (no gradients in the data) is checked on its output. */
static void grads_check(conf_ctx *c, const pt_case *pc, tc_tensor *y, tc_tensor *r, tc_tensor **in, int n) {
  tc_tensor *wrt[PT_MAX_TENSORS], *grads[PT_MAX_TENSORS] = {0};
  int n_wrt = 0;
  for (int i = 0; i < n; i++)
    if (tc_dtype_of(in[i]) == TC_F32) wrt[n_wrt++] = in[i];
  if (n_wrt != pc->n_grad) {
    conf_fail(c, "%s: %d float inputs, %d gradients in the data", pc->op, n_wrt, pc->n_grad);
    return;
  }
  if (tc_grad(tc_sum(tc_mul(y, r), 0, NULL, false), wrt, n_wrt, grads) != TC_OK) {
    conf_fail(c, "%s: tc_grad: %s", pc->op, tc_last_error());
    return;
  }
  for (int k = 0; k < n_wrt; k++) {
    char what[96];
    snprintf(what, sizeof what, "%s: d loss / d input %d", pc->op, k);
    pt_check(c, what, grads[k], &pc->grad[k], pc->tol);
    tc_release(grads[k]);
  }
}

static void run_model(conf_ctx *c, const pt_case *pc) {
  const tc_model *m = tc_model_find(pc->op + strlen("model:"));
  int n = pc->n_in - (pc->n_grad ? 1 : 0); /* with gradients, the last input is the loss's r */
  if (!m || m->n_inputs != n || pc->n_out != 1) {
    conf_fail(c, "%s: no bundled model of %d inputs by that name", pc->op, n);
    return;
  }
  tc_tensor *in[PT_MAX_TENSORS];
  for (int i = 0; i < pc->n_in; i++)
    in[i] = pt_tensor_make(&pc->in[i]);
  for (int i = 0; pc->n_grad && i < n; i++)
    if (tc_dtype_of(in[i]) == TC_F32) tc_set_requires_grad(in[i], true);
  tc_compiled *f = conf_compile(c, m->fn, n);
  tc_tensor *y = f ? conf_call(c, f, in) : NULL;
  if (y && pt_check(c, pc->op, y, &pc->out[0], pc->tol) && pc->n_grad) grads_check(c, pc, y, in[n], in, n);
  tc_release(y);
  tc_compiled_free(f);
}

/* ---------------------------------------------------------------- registration */
static void run_case(conf_ctx *c) {
  const pt_case *pc = conf_arg(c);
  const char *reason = known_reason(pc->name, conf_backend(c));
  if (reason) conf_known_difference(c, reason);
  if (!strncmp(pc->op, "model:", 6))
    run_model(c, pc);
  else
    run_op(c, pc);
}

__attribute__((constructor)) static void register_pytorch_cases(void) {
  int n;
  const pt_case *cases = pt_cases(&n);
  for (int i = 0; i < n; i++)
    conf_register_with("pytorch", cases[i].name, run_case, &cases[i]);
}
