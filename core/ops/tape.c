/* tape.c — the record gradients are computed from: a tape node on each prim result that a
 * gradient may flow through (see ops.h). Recording costs one test per prim when nothing
 * requires grad. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

/* Per thread, as PyTorch's grad mode: backward turns it off while it runs its own prims. */
static _Thread_local bool tape_off;

bool tape_set_enabled(bool on) {
  bool prev = !tape_off;
  tape_off = !on;
  return prev;
}

bool tape_enabled(void) {
  return !tape_off;
}

bool tape_needs_grad(const tc_tensor *t) {
  return t && (t->requires_grad || t->grad_fn);
}

const tape_node *tape_node_of(const tc_tensor *t) {
  return t ? (const tape_node *)t->grad_fn : NULL;
}

static void tape_node_free(tensor_grad_fn *fn) {
  tape_node *n = (tape_node *)fn;
  for (int32_t i = 0; i < n->n_in; i++)
    tensor_drop(n->in[i]);
  free(n->in);
  if (n->ctx_free) n->ctx_free(n->ctx);
  free(n);
}

/* A node on y holding its operands (one reference each); NULL when out of memory (error set,
 * naming `what`). */
static tape_node *node_new(tc_tensor *y, int n_in, tc_tensor *const *in, const char *what) {
  tape_node *n = calloc(1, sizeof *n);
  tc_tensor **held = calloc((size_t)(n_in ? n_in : 1), sizeof *held);
  if (!n || !held) {
    free(n);
    free(held);
    core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory recording the gradient tape", what);
    return NULL;
  }
  n->base.free_fn = tape_node_free;
  n->n_in = n_in;
  n->in = held;
  for (int i = 0; i < n_in; i++) {
    tensor_hold(in[i]);
    held[i] = in[i];
  }
  y->grad_fn = &n->base;
  return n;
}

bool tape_attach(tc_tensor *y, const tc_node *node, int n_in, tc_tensor *const *in) {
  /* Only floating results carry gradients (a comparison, argmax or index is a constant). */
  if (tape_off || !dtype_is_float(y->dtype) || y->grad_fn) return true;
  bool any = false;
  for (int i = 0; i < n_in && !any; i++)
    any = tape_needs_grad(in[i]);
  if (!any) return true;
  char what[48];
  snprintf(what, sizeof what, "prim %s", prim_name(node->prim));
  tape_node *n = node_new(y, n_in, in, what);
  if (!n) return false;
  n->node = *node;
  n->node.in = NULL;
  n->node.n_in = n_in;
  return true;
}

bool tape_attach_custom(tc_tensor *y, int n_in, tc_tensor *const *in, tape_vjp_fn vjp, void *ctx,
                        void (*ctx_free)(void *ctx)) {
  if (y->grad_fn) y->grad_fn->free_fn(y->grad_fn);
  y->grad_fn = NULL;
  tape_node *n = node_new(y, n_in, in, "a compiled call");
  if (!n) return false;
  n->vjp = vjp;
  n->ctx = ctx;
  n->ctx_free = ctx_free;
  return true;
}
