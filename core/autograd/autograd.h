/* autograd/autograd.h — the autograd stage: gradients from the tape the prim layer records
 * (ops/ops.h, tape.c). One derivative rule per prim (rules.c), written on the prim layer, so
 * every public op built from prims is differentiable with no code of its own, and inside a
 * traced function the backward prims are recorded like the forward ones. backward.c walks the
 * tape from an output back to the tensors asked for; grad_api.c is the public API.
 * May use: base, backend, tensor, graph, ops. */
#ifndef TC_AUTOGRAD_H
#define TC_AUTOGRAD_H

#include "ops/ops_util.h"

/* The vector-Jacobian product of one prim: given y = node(in) and g = dL/dy (y's shape and
 * dtype), writes dL/din[i] into dx[i] for every operand that needs a gradient (the others are
 * left NULL). Results are owned by the innermost open scope. The tape must be off (rules
 * record nothing). TC_OK, or an error naming the prim. */
tc_status grad_rule(const tape_node *node, tc_tensor *y, tc_tensor *g, tc_tensor **dx /* out, node->n_in */);

/* Gradients of `out` (seeded with seed, out's shape and dtype) with respect to wrt[0..n): each
 * grads[k] is a new reference (held by the core: release with tensor_drop), or NULL when no
 * path leads from wrt[k] to out. With accumulate, the leaves reached (requires_grad, no tape
 * node) also get the gradient added to their .grad. `op` names the public call in errors. */
tc_status grad_backward(const char *op, tc_tensor *out, tc_tensor *seed, int n, tc_tensor *const *wrt,
                        tc_tensor **grads /* out, n; may be NULL when n == 0 */, bool accumulate);

#endif
