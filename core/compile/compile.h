/* compile/compile.h — the top stage: tc_compile/tc_call and their cache of compiled entries
 * (compile.c), running the segments a graph break splits a trace into (graph_break.c), and
 * explain (explain.c). It ties capture, passes, schedule and runtime together, and installs
 * the hooks the lower stages call up through (install_hooks.c). May use every stage.
 *
 * A compiled function (tc_compiled) holds entries; an entry is what one set of guards on the
 * call inputs maps to. An entry is a list of segments: one without graph breaks, more with.
 * Each segment keeps the graphs compiled for it (variants), matched by the hash of the traced
 * graph and by guards on the segment's inputs, so replaying the C function re-traces a
 * segment cheaply and runs the cached graph. */
#ifndef TC_COMPILE_H
#define TC_COMPILE_H

#include <ffi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "capture/capture.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

#define CAP_MAX_PARAMS 16

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
  /* aot.c: the backward of the joint graph when the result needs a gradient with respect to
   * call inputs (NULL otherwise), and which of its graph inputs is the result's gradient. */
  struct cap_variant *backward;
  int32_t backward_seed;
  int32_t n_saved; /* the forward's outputs after the result: values saved for the backward */
  /* tc_assign on parameters (assign.c): the graph's outputs are the result (n_ret: 1, or 0 when
   * the function returns a real tensor), then the new value of each assign_param[k]. */
  int32_t n_ret, n_assign;
  int32_t assign_param[CAP_MAX_PARAMS];
} cap_entry;

struct tc_compiled {
  int32_t refs; /* tc_compile's, plus one per result whose gradient runs a compiled backward */
  tc_model_fn fn;
  int32_t n_params;
  char name[64];
  char backend_name[64];
  char *options;     /* owned copy of opts.options */
  char *input_names; /* owned copy; names[] point into it */
  const char *names[CAP_MAX_PARAMS];
  tc_compile_options opts; /* strings point at the owned copies above */
  tc_backend *backend;
  tc_options *parsed; /* opts.options (over $TC_OPTIONS), parsed and validated once */
  pthread_mutex_t lock; /* see tc_call */
  ffi_cif cif;
  ffi_type *arg_types[CAP_MAX_PARAMS];
  int32_t n_entries, cap_entries;
  cap_entry **entries;
  bool dyn[CAP_MAX_PARAMS][TC_MAX_RANK]; /* dims made symbolic by dynamic=auto */
  int32_t n_compiles, n_eager_fallbacks;
  double compile_seconds, last_compile_seconds;
  bool warned_limit;
  /* compile_async: 0 not started, 1 compiling in `async_thread`, 2 done (joined at free) */
  _Atomic int async_state;
  pthread_t async_thread;
  _Atomic int32_t n_async_eager_calls;
  _Atomic int64_t n_updates_in_place, n_updates_copied; /* tc_compile_stats' */
};

/* The names of c's parameters for messages. */
cap_names compiled_names(const tc_compiled *c);
/* Finds (by hash and guards) or compiles the variant of segment `seg` of entry e for the traced
 * graph g (consumed: moved into the variant or freed) and runs it on sources (one real tensor
 * per graph input). outputs receives the segment's outputs (new references). */
tc_status compiled_run_segment(tc_compiled *c, cap_entry *e, int32_t seg, tc_graph *g, cap_guards *guards,
                               tc_tensor *const *sources, tc_tensor **outputs);

/* Simplifies g (consumed) and compiles it into a new variant for segment seg of e; sources
 * holds one real tensor per graph input (captured ones are held by the variant). */
cap_variant *compiled_build_variant(tc_compiled *c, cap_entry *e, int32_t seg, tc_graph *g, cap_guards *guards,
                                    uint64_t hash, tc_tensor *const *sources);
/* Runs v on sources with symbol values syms; outputs receives v's outputs (new references). */
tc_status compiled_run_variant(tc_compiled *c, cap_variant *v, tc_tensor *const *sources, const int64_t *syms,
                               tc_tensor **outputs);
/* References that keep c alive past tc_compiled_free (a result's compiled backward). */
tc_compiled *compiled_retain(tc_compiled *c);
void compiled_release(tc_compiled *c);

/* This call's symbol values from entry e's guards on its inputs; false when they do not hold. */
bool compiled_entry_syms(tc_compiled *c, const cap_entry *e, tc_tensor *const *inputs, int64_t *syms /* out, 64 */);

/* ---------------------------------------------------------------- in-place updates (assign.c) */
/* Records the assignments of trace tr (tc_assign on parameters) in entry e. */
void assign_record(cap_entry *e, const tc_trace *tr);
/* Marks, in v's simplified graph, the outputs that are e's parameter updates (output_into), so
 * the plan may write them into the parameters' buffers. */
tc_status assign_mark_outputs(const cap_entry *e, cap_variant *v);
/* Writes updates[k] (consumed) into the caller's tensor params[e->assign_param[k]] for each of
 * e's assignments: nothing to do when the plan wrote it there, a copy otherwise (counted). */
tc_status assign_apply(tc_compiled *c, const cap_entry *e, tc_tensor *const *params, tc_tensor **updates);

/* ---------------------------------------------------------------- gradients (aot.c, aot_partition.c) */
/* The first trace of entry e (one segment, traced result ret, the call's inputs and their
 * proxies): when ret needs a gradient with respect to call inputs, traces the joint graph,
 * partitions it, compiles the forward (with the saved values as extra outputs) and the
 * backward (e->backward), runs the forward and returns the result with its tape node; sets
 * *handled. Otherwise returns NULL with *handled false, and the caller goes the usual way. */
tc_tensor *aot_first_call(tc_compiled *c, cap_entry *e, tc_trace *tr, tc_tensor *ret, tc_tensor *const *inputs,
                          tc_tensor *const *proxies, bool *handled /* out */);
/* Gives a call's result (consumed; returned, or NULL with the error set) a tape node whose rule
 * runs e->backward on this call's inputs and its saved values (e->n_saved of them, consumed);
 * result unchanged when e has no backward or grad mode is off on this thread. */
tc_tensor *aot_attach(tc_compiled *c, const cap_entry *e, tc_tensor *const *inputs, const int64_t *syms,
                      tc_tensor *result, tc_tensor *const *saved);

/* A minimum s-t cut by maximum flow (min_cut.c), for the partition. */
#define MIN_CUT_INF (INT64_MAX / 4)
typedef struct min_cut min_cut;
min_cut *min_cut_new(int32_t n_nodes); /* NULL when out of memory */
/* Adds an edge of capacity cap (MIN_CUT_INF: one the cut may not take); false when out of memory. */
bool min_cut_edge(min_cut *g, int32_t from, int32_t to, int64_t cap);
/* Runs the flow; source_side[v] (n_nodes entries) says which side of a minimum cut v is on.
 * false when out of memory or when only infinite edges separate s from t. */
bool min_cut_solve(min_cut *g, int32_t s, int32_t t, bool *source_side /* out */);
void min_cut_free(min_cut *g);

/* A joint graph's split (aot_partition.c). */
typedef struct aot_partition {
  int32_t n_saved;
  int32_t *saved;       /* node indices of the joint graph whose values the forward saves */
  int32_t n_recomputed; /* forward nodes the backward computes again */
  int32_t n_backward;   /* nodes that follow the result's gradient */
} aot_partition;
/* Splits joint graph j, whose first n_fwd nodes are the forward graph's (same order) and whose
 * input `seed` is the result's gradient, by a minimum cut: the forward values to save are the
 * fewest bytes (at symbol values syms) from which the backward can recompute every other
 * forward value it reads, never recomputing an expensive prim (matmul, reductions, gather,
 * scatter-add). bwd receives the backward graph: j's inputs, then one input per saved value
 * (in p->saved order), and j's outputs. */
tc_status aot_partition_build(const tc_graph *j, int32_t n_fwd, int32_t seed, const int64_t *syms,
                              tc_graph *bwd /* out */, aot_partition *p /* out */);
void aot_partition_free(aot_partition *p);
/* The bytes of a value of type t at expression values vals (what the partition weighs). */
int64_t aot_value_bytes(const tc_vtype *t, const int64_t *vals);

/* ---------------------------------------------------------------- graph breaks (graph_break.c) */
/* A host read of a proxy (op names the public call: "tc_item", "tc_to_host"). Under fullgraph:
 * an error naming op. Otherwise a graph break: the graph so far is compiled and run, and *real
 * receives a real tensor holding the proxy's value (new reference). (The tensor stage's
 * materialize hook.) */
tc_status graph_break_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real /* out */);

/* ---------------------------------------------------------------- explain (explain.c) */
/* Graphviz text of a graph. Caller frees. */
char *graph_to_dot(const tc_graph *g);

#endif
