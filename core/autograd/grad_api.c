/* grad_api.c — the public gradient calls (tc.h, "gradients"): argument checks with messages
 * naming the call, the argument, shapes and dtypes, then backward.c's walk. */
#include <stdio.h>

#include "autograd/autograd.h"

/* A NULL argument: the earlier failure that made it, or an error naming it. */
static tc_status null_arg(const char *op, const char *arg) {
  tc_status s = tc_last_status();
  return s != TC_OK ? s : core_error(TC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, arg);
}

tc_status tc_set_requires_grad(tc_tensor *t, bool requires_grad) {
  const char *op = "tc_set_requires_grad";
  if (!t) return null_arg(op, "t");
  if (requires_grad && !dtype_is_float(t->dtype))
    return core_error(TC_ERR_INVALID_ARGUMENT, "%s: only floating tensors can require grad (t: %s %s)", op,
                      OPS_DTYPE(t), OPS_SHAPE(t));
  if (!requires_grad && t->grad_fn)
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "%s: t (%s %s) is the result of an op, not a leaf: its gradient flows to the tensors it was made "
                      "from; use tc_detach for a copy that requires none",
                      op, OPS_DTYPE(t), OPS_SHAPE(t));
  if (!t->grad_fn) t->requires_grad = requires_grad;
  return TC_OK;
}

bool tc_requires_grad(const tc_tensor *t) {
  if (!t) return null_arg("tc_requires_grad", "t"), false;
  return tape_needs_grad(t);
}

tc_tensor *tc_grad_of(tc_tensor *t) {
  if (!t) return null_arg("tc_grad_of", "t"), NULL;
  return t->grad ? ops_identity(t->grad) : NULL;
}

tc_status tc_zero_grad(tc_tensor *t) {
  if (!t) return null_arg("tc_zero_grad", "t");
  tensor_drop(t->grad);
  t->grad = NULL;
  return TC_OK;
}

tc_tensor *tc_detach(tc_tensor *x) {
  if (!x) return NULL;
  bool was = tape_set_enabled(false);
  tc_tensor *y = ops_identity(x);
  tape_set_enabled(was);
  return y;
}

bool tc_set_grad_enabled(bool enabled) {
  return tape_set_enabled(enabled);
}

/* ---------------------------------------------------------------- tc_grad, tc_backward */
/* The seed: grad_output checked against out, or ones for a one-element out. New reference in
 * the current scope (or grad_output itself). */
static tc_tensor *seed_for(const char *op, tc_tensor *out, tc_tensor *grad_output) {
  if (!dtype_is_float(out->dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: the output must be floating to be differentiated (got %s %s)",
                           op, OPS_DTYPE(out), OPS_SHAPE(out));
  if (!tape_needs_grad(out))
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "%s: the output (%s %s) does not require grad: none of the tensors it was computed from "
                           "requires grad (tc_set_requires_grad), or it was computed with grad mode off",
                           op, OPS_DTYPE(out), OPS_SHAPE(out));
  if (!grad_output) {
    if (tensor_numel(out) != 1)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                             "%s: the output has %lld elements (%s); an implicit gradient needs one element: pass "
                             "grad_output (tc_grad_with / tc_backward_with)",
                             op, (long long)tensor_numel(out), OPS_SHAPE(out));
    return ops_full_like(out, 1.0, out->dtype);
  }
  bool same = grad_output->rank == out->rank && grad_output->dtype == out->dtype;
  for (int d = 0; same && d < out->rank; d++)
    same = grad_output->sizes[d] == out->sizes[d];
  if (!same)
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "%s: grad_output must have the output's shape and dtype (output: %s %s, grad_output: %s %s)",
                           op, OPS_DTYPE(out), OPS_SHAPE(out), OPS_DTYPE(grad_output), OPS_SHAPE(grad_output));
  return grad_output;
}

static tc_status grad_call(const char *op, tc_tensor *out, tc_tensor *grad_output, tc_tensor *const *wrt, int n,
                           tc_tensor **grads_out) {
  if (!out) return null_arg(op, "the output");
  if (n < 0 || (n > 0 && (!wrt || !grads_out)))
    return core_error(TC_ERR_INVALID_ARGUMENT, "%s: n = %d with wrt %s and grads_out %s", op, n, wrt ? "given" : "NULL",
                      grads_out ? "given" : "NULL");
  for (int k = 0; k < n; k++)
    grads_out[k] = NULL;
  for (int k = 0; k < n; k++) {
    char arg[32];
    snprintf(arg, sizeof arg, "wrt[%d]", k);
    if (!wrt[k]) return null_arg(op, arg);
    if (!tape_needs_grad(wrt[k]))
      return core_error(TC_ERR_INVALID_ARGUMENT, "%s: %s (%s %s) does not require grad (tc_set_requires_grad)", op, arg,
                        OPS_DTYPE(wrt[k]), OPS_SHAPE(wrt[k]));
  }
  tc_scope *sc = tc_scope_open();
  tc_tensor *seed = seed_for(op, out, grad_output);
  tc_status s = seed ? grad_backward(op, out, seed, n, wrt, grads_out, false) : tc_last_status();
  tc_scope_close(sc);
  /* Held gradients become new references of the caller's scope; unreached ones are zeros. */
  bool was = tape_set_enabled(false);
  for (int k = 0; k < n; k++) {
    tc_tensor *held = grads_out[k];
    grads_out[k] = s != TC_OK ? NULL : held ? ops_identity(held) : ops_full_like(wrt[k], 0.0, wrt[k]->dtype);
    tensor_drop(held);
    if (s == TC_OK && !grads_out[k]) s = tc_last_status();
  }
  tape_set_enabled(was);
  if (s != TC_OK)
    for (int k = 0; k < n; k++) {
      tc_release(grads_out[k]);
      grads_out[k] = NULL;
    }
  return s;
}

tc_status tc_grad(tc_tensor *loss, tc_tensor *const *wrt, int n, tc_tensor **grads_out) {
  return grad_call("tc_grad", loss, NULL, wrt, n, grads_out);
}

tc_status tc_grad_with(tc_tensor *out, tc_tensor *grad_output, tc_tensor *const *wrt, int n, tc_tensor **grads_out) {
  if (!grad_output) return null_arg("tc_grad_with", "grad_output");
  return grad_call("tc_grad_with", out, grad_output, wrt, n, grads_out);
}

static tc_status backward_call(const char *op, tc_tensor *out, tc_tensor *grad_output) {
  if (!out) return null_arg(op, "the output");
  tc_scope *sc = tc_scope_open();
  tc_tensor *seed = seed_for(op, out, grad_output);
  tc_status s = seed ? grad_backward(op, out, seed, 0, NULL, NULL, true) : tc_last_status();
  tc_scope_close(sc);
  return s;
}

tc_status tc_backward(tc_tensor *loss) {
  return backward_call("tc_backward", loss, NULL);
}

tc_status tc_backward_with(tc_tensor *out, tc_tensor *grad_output) {
  if (!grad_output) return null_arg("tc_backward_with", "grad_output");
  return backward_call("tc_backward_with", out, grad_output);
}
