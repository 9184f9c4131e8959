/* ops_optim.c — optimizer steps written in tc ops (PyTorch's update rules), so a compiled
 * training step holds forward, gradients and update in one graph. Parameters and state change
 * through tc_assign: in place, eagerly or in a compiled call. The update itself is not
 * recorded on the tape (torch.optim steps run under no_grad). */
#include <math.h>

#include "ops/ops_util.h"

static tc_status optim_check(const char *op, int n, tc_tensor *const *params, tc_tensor *const *grads,
                             const void *opts) {
  if (n < 0) return core_error(TC_ERR_INVALID_ARGUMENT, "%s: n is %d", op, n);
  if (n > 0 && (!params || !grads)) return core_error(TC_ERR_INVALID_ARGUMENT, "%s: params or grads is NULL", op);
  if (!opts) return core_error(TC_ERR_INVALID_ARGUMENT, "%s: opts is NULL", op);
  for (int k = 0; k < n; k++) {
    if (!params[k] || !grads[k]) {
      tc_status s = tc_last_status();
      return s != TC_OK
                 ? s
                 : core_error(TC_ERR_INVALID_ARGUMENT, "%s: %s[%d] is NULL", op, params[k] ? "grads" : "params", k);
    }
    if (!dtype_is_float(params[k]->dtype))
      return core_error(TC_ERR_INVALID_ARGUMENT, "%s: params[%d] is %s (a floating tensor is expected)", op, k,
                        OPS_DTYPE(params[k]));
  }
  return TC_OK;
}

/* The rate as a tensor: the caller's (a value that changes without a new graph) or a constant. */
static tc_tensor *optim_lr(tc_tensor *lr_tensor, double lr, tc_tensor *like) {
  return lr_tensor ? tc_to_dtype(lr_tensor, like->dtype) : prim_constant(lr, like->dtype, 0, NULL);
}

/* Runs with recording off and in a scope of its own; the tensors made go with it. */
typedef struct optim_frame {
  tc_scope *scope;
  bool was;
} optim_frame;

static optim_frame optim_begin(void) {
  return (optim_frame){.was = tc_set_grad_enabled(false), .scope = ops_begin()};
}

static tc_status optim_end(optim_frame f, tc_status s) {
  tc_scope_close(f.scope);
  tc_set_grad_enabled(f.was);
  return s;
}

/* The first failure of the step (a NULL result keeps its op's error). */
static tc_status optim_assign(tc_status s, tc_tensor *dst, tc_tensor *src) {
  if (s != TC_OK) return s;
  if (!src) return tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  return tc_assign(dst, src);
}

tc_status tc_sgd_step(int n, tc_tensor *const *params, tc_tensor *const *grads, tc_tensor *const *momentum_buf,
                      const tc_sgd_options *opts) {
  TC_RETURN_IF_ERROR(optim_check("tc_sgd_step", n, params, grads, opts));
  if (opts->momentum != 0 && n > 0 && !momentum_buf)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_sgd_step: momentum %g needs momentum_buf", opts->momentum);
  optim_frame f = optim_begin();
  tc_status s = TC_OK;
  for (int k = 0; k < n && s == TC_OK; k++) {
    tc_tensor *p = params[k], *g = grads[k];
    if (opts->weight_decay != 0) g = tc_add(g, tc_mul_scalar(p, opts->weight_decay));
    if (opts->momentum != 0) {
      tc_tensor *buf = tc_add(tc_mul_scalar(momentum_buf[k], opts->momentum), tc_mul_scalar(g, 1.0 - opts->dampening));
      s = optim_assign(s, momentum_buf[k], buf);
      g = opts->nesterov ? tc_add(g, tc_mul_scalar(buf, opts->momentum)) : buf;
    }
    s = optim_assign(s, p, tc_sub(p, tc_mul(g, optim_lr(opts->lr_tensor, opts->lr, p))));
  }
  return optim_end(f, s);
}

tc_status tc_adam_step(int n, tc_tensor *const *params, tc_tensor *const *grads, tc_tensor *const *exp_avg,
                       tc_tensor *const *exp_avg_sq, tc_tensor *step, const tc_adam_options *opts) {
  TC_RETURN_IF_ERROR(optim_check("tc_adam_step", n, params, grads, opts));
  if (n > 0 && (!exp_avg || !exp_avg_sq || !step))
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_adam_step: exp_avg, exp_avg_sq and step are required");
  if (n > 0 && (step->rank != 0 || !dtype_is_float(step->dtype)))
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_adam_step: step is %s %s (a floating rank-0 tensor is expected)",
                      OPS_DTYPE(step), OPS_SHAPE(step));
  if (n == 0) return TC_OK;
  optim_frame f = optim_begin();
  const double b1 = opts->beta1, b2 = opts->beta2, wd = opts->weight_decay;
  tc_tensor *t = tc_add_scalar(step, 1.0);
  tc_status s = optim_assign(TC_OK, step, t);
  /* Bias corrections 1 - beta^t, from the step as a tensor: one graph serves every step. */
  tc_tensor *bc1 = tc_add_scalar(tc_neg(tc_pow(tc_full_like(t, b1, t->dtype), t)), 1.0);
  tc_tensor *bc2 = tc_add_scalar(tc_neg(tc_pow(tc_full_like(t, b2, t->dtype), t)), 1.0);
  for (int k = 0; k < n && s == TC_OK; k++) {
    tc_tensor *p = params[k], *g = grads[k], *m = exp_avg[k], *v = exp_avg_sq[k];
    tc_tensor *lr = optim_lr(opts->lr_tensor, opts->lr, p);
    if (wd != 0 && opts->decoupled_weight_decay)
      p = tc_mul(p, tc_add_scalar(tc_neg(tc_mul_scalar(lr, wd)), 1.0)); /* p *= 1 - lr * wd */
    else if (wd != 0)
      g = tc_add(g, tc_mul_scalar(p, wd));
    /* m.lerp_(g, 1 - b1), as PyTorch writes it: m + (1 - b1) * (g - m) */
    tc_tensor *m2 = tc_add(m, tc_mul_scalar(tc_sub(g, m), 1.0 - b1));
    tc_tensor *v2 = tc_add(tc_mul_scalar(v, b2), tc_mul_scalar(tc_mul(g, g), 1.0 - b2));
    tc_tensor *step_size = tc_div(lr, tc_to_dtype(bc1, p->dtype));
    tc_tensor *denom = tc_add_scalar(tc_div(tc_sqrt(v2), tc_to_dtype(tc_sqrt(bc2), p->dtype)), opts->eps);
    tc_tensor *p2 = tc_sub(p, tc_mul(step_size, tc_div(m2, denom)));
    s = optim_assign(s, exp_avg[k], m2);
    s = optim_assign(s, exp_avg_sq[k], v2);
    s = optim_assign(s, params[k], p2);
  }
  return optim_end(f, s);
}
