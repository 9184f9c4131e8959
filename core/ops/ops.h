/* ops/ops.h — the ops stage. The prim layer: one function per primitive. Each validates its operands (errors
 * name the prim, the argument, shapes and dtypes), infers the result's dtype and shape
 * (symbolically, through tc_sz), then either records a node in the current trace (when any
 * operand is a proxy, or a creation prim runs while tracing) or runs the prim eagerly on the
 * eager backend. Every public op is written on these functions, so eager and compiled modes
 * share one definition of each op.
 *
 * Ownership: operands are borrowed; the result is a new reference (NULL with tc_last_error set
 * on failure). A NULL operand returns NULL without touching the error.
 *
 * May use: base, backend, tensor, graph. Recording into a trace (capture) and running eagerly
 * (runtime) sit above: they are reached through ops_hooks, installed by the top stage. */
#ifndef TC_OPS_H
#define TC_OPS_H

#include "graph/graph.h"
#include "tensor/tensor.h"

/* ---------------------------------------------------------------- symbolic sizes (sizes.c)
 * A size as the op layer sees it: a concrete value plus, inside a trace, a size-expression id
 * in the current trace (e == -1 means the size is the static constant v). Arithmetic on sizes
 * goes through these helpers so dynamic dims stay symbolic. */
typedef struct tc_sz {
  int64_t v;
  int32_t e;
} tc_sz;

tc_sz sz_const(int64_t v);
tc_sz sz_of(const tc_tensor *t, int dim); /* the tensor's size at dim (symbolic for proxies) */
tc_sz sz_add(tc_sz a, tc_sz b);
tc_sz sz_sub(tc_sz a, tc_sz b);
tc_sz sz_mul(tc_sz a, tc_sz b);
tc_sz sz_floordiv(tc_sz a, tc_sz b);
tc_sz sz_mod(tc_sz a, tc_sz b);
tc_sz sz_max(tc_sz a, tc_sz b);
tc_sz sz_min(tc_sz a, tc_sz b);
bool sz_is_static(tc_sz a);
/* Equality of two sizes that a decision depends on. Compares the concrete values; when
 * either side is symbolic and the two are not the same expression, records a guard that they
 * stay equal (or unequal) for the compiled entry. */
bool sz_eq(tc_sz a, tc_sz b);
/* Like sz_eq against a constant (e.g. "is this dim 1?", for broadcasting). */
bool sz_eq_const(tc_sz a, int64_t c);
/* Numel of a tensor, symbolically. */
tc_sz sz_numel(const tc_tensor *t);

/* ---------------------------------------------------------------- prims (prims.c) */
tc_tensor *prim_unary(tc_prim p, tc_tensor *x);
tc_tensor *prim_binary(tc_prim p, tc_tensor *a, tc_tensor *b); /* same shape and dtype */
tc_tensor *prim_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b);
tc_tensor *prim_convert(tc_tensor *x, tc_dtype to);
/* Reduces over the listed dims (dropped from the result). */
tc_tensor *prim_reduce(tc_prim p, tc_tensor *x, int n_dims, const int *dims);
tc_tensor *prim_argreduce(tc_prim p, tc_tensor *x, int dim); /* ARGMAX/ARGMIN, dim dropped */
tc_tensor *prim_reshape(tc_tensor *x, int rank, const tc_sz *shape);
/* bdims[i]: the result dim that x's dim i maps to (increasing); x's size there is 1 or equal. */
tc_tensor *prim_broadcast_in_dim(tc_tensor *x, int rank, const tc_sz *shape, const int *bdims);
tc_tensor *prim_permute(tc_tensor *x, const int *perm);
/* Per dim: start (>= 0), step (>= 1) and the result's size. */
tc_tensor *prim_slice(tc_tensor *x, const int64_t *start, const int64_t *step, const tc_sz *size);
tc_tensor *prim_pad(tc_tensor *x, const int64_t *lo, const int64_t *hi, double value);
tc_tensor *prim_concatenate(int n, tc_tensor *const *xs, int dim);
tc_tensor *prim_reverse(tc_tensor *x, int n_dims, const int *dims);
/* op: the public op the index read belongs to, named when a compiled kernel finds an index out
 * of range (graph_index_op; GRAPH_INDEX_PRIM for the core's own, in-range uses). */
tc_tensor *prim_gather(tc_tensor *x, int dim, tc_tensor *index, graph_index_op op);
tc_tensor *prim_scatter_add(tc_tensor *x, int dim, tc_tensor *index, tc_tensor *src, graph_index_op op);
tc_tensor *prim_iota(tc_dtype dtype, int rank, const tc_sz *shape, int dim);
tc_tensor *prim_constant(double value, tc_dtype dtype, int rank, const tc_sz *shape);
/* A constant whose value is a size (e.g. the element count a mean divides by). */
tc_tensor *prim_constant_size(tc_sz value, tc_dtype dtype, int rank, const tc_sz *shape);
/* Uniform [0,1) of dtype f32/f64 from Philox4x32-10 with key `seed`, counter = offset + i. */
tc_tensor *prim_random(uint64_t seed, uint64_t offset, tc_dtype dtype, int rank, const tc_sz *shape);
tc_tensor *prim_matmul(tc_tensor *a, tc_tensor *b); /* (..., M, K) x (..., K, N), equal batch */

/* ---------------------------------------------------------------- the tape (tape.c)
 * While gradients are enabled, a prim with a floating result and an operand that needs a
 * gradient (requires_grad, or made by such a prim) attaches a tape node to its result: the
 * prim, its attributes and its operands (held). core/autograd walks these backwards, one
 * derivative rule per prim. Inside a trace the operands are proxies, so the backward prims
 * are recorded like any others. */
typedef tc_status (*tape_vjp_fn)(void *ctx, tc_tensor *y, tc_tensor *g, tc_tensor **dx /* out, n_in */);

typedef struct tape_node {
  tensor_grad_fn base; /* first: the tensor stage frees it through base.free_fn */
  tc_node node;        /* prim, attributes, result type; node.in unused */
  int32_t n_in;
  tc_tensor **in; /* operands, each held (tensor_hold) until the node is freed */
  /* A node that is not a prim (a compiled function's call, set by the compile stage through
   * tape_attach_custom): its rule, given every operand's gradient slot, and its context. */
  tape_vjp_fn vjp;
  void *ctx;
  void (*ctx_free)(void *ctx);
} tape_node;

/* True when t's gradient is wanted: a marked leaf or the result of a taped prim. */
bool tape_needs_grad(const tc_tensor *t);
/* The tape node that made t, or NULL (a leaf, or no gradient flows). */
const tape_node *tape_node_of(const tc_tensor *t);
/* Attaches a node for y = node(in) when gradients are enabled on this thread and one of the
 * operands needs a gradient; false only when out of memory (error set). */
bool tape_attach(tc_tensor *y, const tc_node *node, int n_in, tc_tensor *const *in);
/* Attaches a node with its own rule (vjp with ctx; ctx_free runs when the node goes) to y, made
 * from operands in. Whatever the grad mode: the caller decided. false when out of memory
 * (error set; ctx is not freed). */
bool tape_attach_custom(tc_tensor *y, int n_in, tc_tensor *const *in, tape_vjp_fn vjp, void *ctx,
                        void (*ctx_free)(void *ctx));
/* Per thread: whether prims record the tape (on by default). Returns the previous setting. */
bool tape_set_enabled(bool on);
bool tape_enabled(void);

/* ---------------------------------------------------------------- hooks (ops_hooks.c)
 * Set once, by the top stage, before any op runs (a library constructor); read-only afterwards,
 * so no lock. `trace`, `sxtab`: a NULL entry means nothing is being traced. `record`,
 * `guard_eq`, `run_eager`: a NULL entry makes the calling prim fail with an error saying so. */
struct tc_trace;
typedef struct ops_hooks {
  /* The trace being recorded on this thread, or NULL. */
  struct tc_trace *(*trace)(void);
  /* The size-expression table of the graph tr records. */
  tc_sxtab *(*sxtab)(struct tc_trace *tr);
  /* Appends node (in/n_in ignored) with operands in and result shape shape to tr; returns a
   * new proxy for its result. */
  tc_tensor *(*record)(struct tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);
  /* Records that "a == b" (equal) was decided while tracing tr, for the entry's guards. */
  void (*guard_eq)(struct tc_trace *tr, tc_sz a, tc_sz b, bool equal);
  /* Runs node on real tensors now; a new reference, or NULL with an error. */
  tc_tensor *(*run_eager)(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);
  /* tc_assign on a proxy of tr: dst (a parameter's proxy) takes src's value from here on, and
   * the call writes it into the caller's tensor. */
  tc_status (*assign)(struct tc_trace *tr, tc_tensor *dst, tc_tensor *src);
} ops_hooks;

/* Installs the hooks (copied). Not thread-safe: call before any other thread runs ops. */
void ops_set_hooks(const ops_hooks *h);
/* The calls through the hooks, for the stage's own files. */
struct tc_trace *ops_trace_current(void);
tc_sxtab *ops_trace_sxtab(struct tc_trace *tr);
tc_tensor *ops_record(struct tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);
void ops_guard_eq(struct tc_trace *tr, tc_sz a, tc_sz b, bool equal);
tc_tensor *ops_run_eager(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);
tc_status ops_assign(struct tc_trace *tr, tc_tensor *dst, tc_tensor *src);

#endif
