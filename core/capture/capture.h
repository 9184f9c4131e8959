/* capture/capture.h — the capture stage: recording prims on proxy tensors into a graph, one
 * segment at a time (trace.c), with symbolic sizes and the guards the recording relied on
 * (guards.c). Graph breaks' tracing side (ending a segment, starting the next) is here; running
 * the segments is the compile stage's. May use: base, backend, tensor, graph, ops.
 *
 * trace_record, trace_guard_eq, trace_current and trace_sxtab are what the ops stage's hooks
 * call; trace_pin_size is the tensor stage's pin_size hook. The compile stage installs them. */
#ifndef TC_CAPTURE_H
#define TC_CAPTURE_H

#include "graph/graph.h"
#include "ops/ops.h"
#include "tensor/tensor.h"
#include "backend/backend.h"

/* ---------------------------------------------------------------- guards (guards.c) */
/* ---------------------------------------------------------------- guards (guards.c) */
/* Where a segment's graph input comes from. */
typedef enum cap_src_kind {
  CAP_SRC_CALL = 0,     /* a parameter of the function (index: its position) */
  CAP_SRC_CAPTURED = 1, /* a real tensor used inside the function (weights, constants) */
  CAP_SRC_CARRIED = 2   /* a value computed by an earlier segment (index: its position) */
} cap_src_kind;

typedef struct cap_input_guard {
  int32_t kind, index; /* cap_src_kind and the position within that kind */
  tc_dtype dtype;
  int32_t rank;
  int64_t size[TC_MAX_RANK]; /* static sizes; for symbolic dims, the value seen when traced */
  int32_t sym[TC_MAX_RANK];  /* symbol number, -1 when the dim is static */
  bool requires_grad;        /* a parameter needs a gradient (marked, or made from one that is) */
} cap_input_guard;

/* A decision taken while tracing: expr a == expr b (equal) or != (!equal). */
typedef struct cap_rel_guard {
  int32_t a, b; /* expr ids in the graph's table */
  bool equal;
} cap_rel_guard;

typedef struct cap_guards {
  int32_t n_inputs;
  cap_input_guard *inputs; /* one per graph input, in graph-input order */
  int32_t n_syms;
  int32_t n_rel;
  cap_rel_guard *rel;
} cap_guards;

/* Names parameters in messages: "input 0 (x)". names may be NULL. */
typedef struct cap_names {
  int32_t n;
  const char *const *names;
} cap_names;

void guards_free(cap_guards *g);
/* Checks the first n_check graph inputs against inputs[0..n_check-1] (the rest are not
 * checked: held captured tensors) and the relations; fills syms (n_syms entries) from the
 * bindings. On failure writes which guard failed into why and returns false. */
bool guards_check(const cap_guards *g, const tc_sxtab *sx, tc_tensor *const *inputs, int32_t n_check,
                  int64_t *syms, const cap_names *names, char *why, size_t why_cap);
/* The guards as text, one per line, each line prefixed by indent. Caller frees. */
char *guards_to_string(const cap_guards *g, const tc_sxtab *sx, const tc_backend *be, const cap_names *names,
                       const char *indent);
/* "input 0 (x)", "captured tensor 1", "value 2 carried from the graph before". */
void guards_input_name(const cap_input_guard *ig, const cap_names *names, char *buf, size_t cap);

typedef struct tc_trace tc_trace;

/* The trace being recorded on this thread, or NULL. */
tc_trace *trace_current(void);
/* The size-expression table of the graph being recorded. */
tc_sxtab *trace_sxtab(tc_trace *tr);

/* Appends `node` (its prim, attrs and out.dtype/rank; in/n_in are ignored) with operands `in`
 * and result shape `shape` (tc_sz: static sizes become interned constants), and returns a new
 * proxy for its result. Real (non-proxy) operands are lifted into the graph as captured
 * constants, held by reference. */
tc_tensor *trace_record(tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);

/* Records that the decision "a == b" (equal) was taken while tracing, for the entry's guards.
 * (The ops stage's guard_eq hook.) */
void trace_guard_eq(tc_trace *tr, tc_sz a, tc_sz b, bool equal);

/* tc_size on a proxy's dynamic dim: pins the size to its traced value with a guard. (The tensor
 * stage's pin_size hook.) */
void trace_pin_size(const tc_tensor *proxy, int dim);

/* ---------------------------------------------------------------- the trace (trace.c) */
typedef struct trace_input {
  tc_tensor *real;       /* the value: a view we own (see own_ref in trace.c) */
  const tc_tensor *orig; /* the tensor it was taken from, to find captured tensors again */
  cap_input_guard guard;
  int32_t shape[TC_MAX_RANK]; /* expr ids */
  int32_t value;              /* segment-local value id */
} trace_input;

struct tc_trace {
  char name[64];  /* the compiled function's, for messages and graph names */
  char break_op[32]; /* the host read that ended the previous segment, for messages */
  /* The compile stage's own state for this trace; never looked at here. */
  tc_compiled *c;
  struct cap_entry *entry;
  tc_trace *prev; /* the trace this one interrupted (a compiled call inside a traced one) */
  int32_t segment;
  /* The segment being recorded. Values: val_def[v] >= 0 is node index, < 0 is input -1 - i. */
  tc_sxtab sx;
  int32_t n_syms;
  int32_t n_in, cap_in;
  trace_input *in;
  int32_t n_vals, cap_vals;
  int32_t *val_def;
  int32_t n_nodes, cap_nodes;
  tc_node *nodes;
  int32_t n_rel, cap_rel;
  cap_rel_guard *rel;
  int32_t n_captured, n_carried;
  /* Every proxy made by this trace, each with a reference of ours. */
  int32_t n_proxies, cap_proxies;
  tc_tensor **proxies;
  int32_t n_breaks;
  /* tc_assign on parameters: parameter assign_param[k] takes value assign_value[k] (last
   * assignment of each parameter; the call writes them into the caller's tensors). */
  int32_t n_params; /* the function's parameters: proxies[0..n_params) are theirs */
  int32_t n_assign, cap_assign;
  int32_t *assign_param, *assign_value;
  /* A failure no op result carries (a graph break under fullgraph, a failed segment). */
  bool failed;
  tc_status fail_status;
  char fail_msg[1024];
};

/* Starts tracing a function named `name` on this thread with proxies for its n_inputs call
 * inputs; dyn[i][d] says whether dim d of input i is traced as a symbol. The proxies are
 * written to proxies[0..n_inputs-1]. The caller (the compile stage) calls the function, then
 * compiles and runs the last segment, then calls trace_end. */
tc_status trace_begin(tc_trace *tr, const char *name, int32_t n_inputs, bool (*dyn)[TC_MAX_RANK],
                      tc_tensor *const *inputs, tc_tensor **proxies /* out */);
/* The segment-local value of operand t (what names it in errors), lifting a real tensor into
 * the graph; -1 with the error set. */
int32_t trace_operand_value(tc_trace *tr, const char *what, tc_tensor *t);
/* Releases everything the trace holds and makes the interrupted trace current again. */
void trace_end(tc_trace *tr);
/* Records a failure that the call must report even if the function ignores it. */
void trace_fail(tc_trace *tr, tc_status s, const char *msg);
/* Builds the traced graph of the current segment with outputs outs (segment-local values)
 * into g, and its guards. */
tc_status trace_segment_graph(tc_trace *tr, int32_t n_outs, const int32_t *outs, tc_graph *g, cap_guards *guards);
/* Starts a new segment whose inputs are reals[0..n_reals-1] (ownership of one reference each
 * passes to the trace; origs: the tensors captured ones were taken from), of the given kinds
 * (CALL keeps its index; others are renumbered). proxies[k] is re-based onto input slot[k];
 * proxies not listed become stale. */
tc_status trace_segment_restart(tc_trace *tr, int32_t n_reals, tc_tensor **reals, const tc_tensor *const *origs,
                                const int32_t *kinds, const int32_t *indices, int32_t n_proxies, tc_tensor **proxies,
                                const int32_t *slot);
/* A new tensor object we own (not claimed by any scope) sharing t's storage and geometry:
 * holding it never touches the claims on t itself. */
tc_tensor *trace_own_ref(tc_tensor *t);
/* Records node (a creation prim of static shape from the segment before) again in the new
 * segment as proxy's value. */
tc_status trace_remat(tc_trace *tr, tc_tensor *proxy, const tc_node *node);
/* A new graph input shaped like proxy `like` (its size expressions, so no new symbols),
 * holding `real` for now (a reference of ours is taken): the gradient a joint graph's backward
 * starts from. Returns its proxy (claimed by the innermost scope), or NULL with the error set;
 * *index receives its graph-input position. */
tc_tensor *trace_input_like(tc_trace *tr, const tc_tensor *like, tc_tensor *real, int32_t *index /* out */);
/* tc_assign(dst, src) while tracing (the ops stage's assign hook): dst must be a proxy of a
 * parameter of the traced function; from here on it stands for src's value, and the parameter
 * is recorded in assign_param/assign_value. Not after a graph break. */
tc_status trace_assign(tc_trace *tr, tc_tensor *dst, tc_tensor *src);
/* Makes tr current (or none) on this thread, returning the previous one. */
tc_trace *trace_set_current(tc_trace *tr);

#endif
