/* capture.h — private to the capture stage (trace.c, guards.c, graph_break.c, compile.c,
 * simplify.c, explain.c): compiled entries with their graphs and guards, and the trace state.
 *
 * A compiled function (tc_compiled) holds entries; an entry is what one set of guards on the
 * call inputs maps to. An entry is a list of segments: one without graph breaks, more with.
 * Each segment keeps the graphs compiled for it (variants), matched by the hash of the traced
 * graph and by guards on the segment's inputs, so replaying the C function re-traces a
 * segment cheaply and runs the cached graph. */
#ifndef TC_CAPTURE_H
#define TC_CAPTURE_H

#include <ffi.h>

#include "lowered.h"
#include "trace.h"

#define CAP_MAX_PARAMS 16

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

/* ---------------------------------------------------------------- simplification (simplify.c) */
typedef struct cap_simplify_stats {
  int32_t dead, duplicate, folded, views;
} cap_simplify_stats;

/* Builds into out (uninitialized) a simplified copy of in: same inputs in the same order, the
 * same expression table (ids stay valid), no outputs set. out_values receives, for each of in's
 * outputs, the value of out that computes it (possibly a graph input). */
tc_status graph_simplify(const tc_graph *in, tc_graph *out, int32_t *out_values, cap_simplify_stats *stats);
/* A deep copy of an expression table (same ids). */
tc_status sxtab_copy(const tc_sxtab *from, tc_sxtab *to);

/* ---------------------------------------------------------------- compiled graphs (compile.c) */
typedef struct cap_variant {
  uint64_t hash;   /* of the traced graph, before simplification */
  tc_graph graph;  /* simplified: what the backend compiled */
  cap_guards guards;
  int32_t n_outputs; /* the segment's outputs */
  int32_t *out_map;  /* per output: >= 0 a graph output index; < 0: graph input -1 - v */
  tc_tensor **held;  /* per graph input: the captured tensor (a reference), NULL otherwise */
  tc_lowered *lowered; /* NULL when there is nothing to compute */
  int32_t n_traced_nodes;
  cap_simplify_stats simplified;
  int32_t n_kernels;
  double seconds;
  bool cache_hit;
} cap_variant;

typedef struct cap_segment {
  int32_t n_variants, cap_variants;
  cap_variant **variants;
  char break_op[32]; /* the host read that ended the segment; "" for the last one */
  int32_t n_breaks;  /* how many times a trace broke here */
} cap_segment;

typedef struct cap_entry {
  int32_t id; /* 1-based, in creation order */
  int32_t n_segments, cap_segments;
  cap_segment *segments;
  bool has_breaks;
  bool replay; /* calls re-run the function: it has breaks, or returns a real tensor */
  bool dyn[CAP_MAX_PARAMS][TC_MAX_RANK]; /* dynamic=auto: the dims traced as symbols */
  double compile_seconds;
} cap_entry;

struct tc_compiled {
  tc_model_fn fn;
  int32_t n_params;
  char name[64];
  char backend_name[64];
  char *options;     /* owned copy of opts.options */
  char *input_names; /* owned copy; names[] point into it */
  const char *names[CAP_MAX_PARAMS];
  tc_compile_options opts; /* strings point at the owned copies above */
  tc_backend *backend;
  ffi_cif cif;
  ffi_type *arg_types[CAP_MAX_PARAMS];
  int32_t n_entries, cap_entries;
  cap_entry **entries;
  bool dyn[CAP_MAX_PARAMS][TC_MAX_RANK]; /* dims made symbolic by dynamic=auto */
  int32_t n_compiles, n_eager_fallbacks;
  double compile_seconds, last_compile_seconds;
  bool warned_limit;
};

/* The names of c's parameters for messages. */
cap_names compiled_names(const tc_compiled *c);
/* Finds (by hash and guards) or compiles the variant of segment `seg` of entry e for the traced
 * graph g (consumed: moved into the variant or freed) and runs it on sources (one real tensor
 * per graph input). outputs receives the segment's outputs (new references). */
tc_status compiled_run_segment(tc_compiled *c, cap_entry *e, int32_t seg, tc_graph *g, cap_guards *guards,
                               tc_tensor *const *sources, tc_tensor **outputs);

/* ---------------------------------------------------------------- the trace (trace.c) */
typedef struct trace_input {
  tc_tensor *real;       /* the value: a view we own (see own_ref in trace.c) */
  const tc_tensor *orig; /* the tensor it was taken from, to find captured tensors again */
  cap_input_guard guard;
  int32_t shape[TC_MAX_RANK]; /* expr ids */
  int32_t value;              /* segment-local value id */
} trace_input;

struct tc_trace {
  tc_compiled *c;
  cap_entry *entry;
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
  /* A failure no op result carries (a graph break under fullgraph, a failed segment). */
  bool failed;
  tc_status fail_status;
  char fail_msg[1024];
};

/* Starts tracing c's entry e on this thread with proxies for the call inputs; the proxies are
 * written to proxies[0..n-1]. The caller calls the function, then trace_finish. */
tc_status trace_begin(tc_trace *tr, tc_compiled *c, cap_entry *e, tc_tensor *const *inputs,
                      tc_tensor **proxies /* out */);
/* Ends tracing with the function's result ret: compiles and runs the last segment. Returns
 * the call's result (new reference) or NULL with the error set. */
tc_tensor *trace_finish(tc_trace *tr, tc_tensor *ret);
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
/* Makes tr current (or none) on this thread, returning the previous one. */
tc_trace *trace_set_current(tc_trace *tr);

/* ---------------------------------------------------------------- explain (explain.c) */
/* Graphviz text of a graph. Caller frees. */
char *graph_to_dot(const tc_graph *g);

#endif
