/* runtime/runtime.h — the runtime stage: running one prim now on real tensors (eager.c, the
 * ops stage's run_eager hook), and a graph compiled for one backend, ready to run (lowered.c):
 * the bridge between the compile cache and the two hand-off levels (lower_graph.c for
 * graph-level plugins, schedule + lower_kernels.c for kernel-level plugins).
 * May use: base, backend, tensor, graph, ops, capture, passes, schedule. */
#ifndef TC_RUNTIME_H
#define TC_RUNTIME_H

#include "backend/backend.h"
#include "graph/graph.h"
#include "ops/ops.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

/* ---------------------------------------------------------------- eager (eager.c) */
/* Runs `node` (prim, attributes, out dtype/rank; in/n_in ignored) on the real tensors `in`, with
 * result shape `shape` (concrete values used). Views share storage; everything else runs on
 * the eager backend. New reference, or NULL with an error. */
tc_tensor *eager_run(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);


/* ---------------------------------------------------------------- lowered graphs (lowered.c) */
typedef struct tc_lowered tc_lowered;

/* Each hand-off path embeds tc_lowered as its first member and fills vt. */
typedef struct tc_lowered_vt {
  tc_status (*run)(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs);
  const char *(*source)(const tc_lowered *l);
  void (*free)(tc_lowered *l);
  /* the plan (kernel list + memory plan) behind a kernel hand-off, or NULL (explain's fused
   * groups); may be NULL */
  const struct tc_schedule *(*schedule)(const tc_lowered *l);
} tc_lowered_vt;

struct tc_lowered {
  const tc_lowered_vt *vt;
  tc_backend *backend;
  const tc_graph *graph; /* borrowed */
  int32_t n_kernels;
};

typedef struct tc_lower_stats {
  int32_t n_kernels;
  double seconds;   /* time spent lowering and in the plugin's compile */
  bool cache_hit;   /* the plugin served the executable from its disk cache */
  int32_t n_fallback_nodes; /* nodes the backend declined, run on the fallback backend */
} tc_lower_stats;

/* What a compiled function asks of lowering. */
typedef struct lower_options {
  const tc_options *options; /* the call's parsed options (NULL: $TC_OPTIONS) */
  int32_t mode;              /* tc_mode: reaches the plugin's compile */
  bool fullgraph;            /* a node the backend declines is an error, not a fallback */
  tc_backend *fallback;      /* runs declined nodes; NULL: the eager backend */
} lower_options;

/* Compiles g for backend be. g must stay alive until lowered_free (it is borrowed). Nodes the
 * backend declines (its capabilities extension) run on the fallback backend, with the copies
 * between them planned; under fullgraph they are an error naming the node. */
tc_status lowered_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out /* out */,
                        tc_lower_stats *stats /* out, may be NULL */);
/* Runs with symbol values syms (n_syms of g). inputs: one real tensor per graph input (any
 * device; copied to the backend when needed). outputs: one new reference per graph output,
 * on the backend's memory. Thread-safe: runs of one tc_lowered may overlap. */
tc_status lowered_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs /* out */);
/* Generated source (borrowed), or NULL when the backend does not expose it. */
const char *lowered_source(const tc_lowered *l);
/* The schedule a kernel hand-off runs, or NULL (graph hand-off, partitioned, nothing to run). */
const struct tc_schedule *lowered_schedule(const tc_lowered *l);
void lowered_free(tc_lowered *l);

/* ---------------------------------------------------------------- index checks (index_check.c)
 * ABI 2.3: a compiled graph's gathers and scatters record the first out-of-range index of a call
 * (tc_index_error); the host turns it into the error eager mode gives. For plugins of 2.3 or
 * newer (be->api->abi_minor) and graphs that read an index (graph_reads_index). */
/* Host memory: TC_OK when the record of call call_id of graph g has flag 0; else
 * TC_ERR_INVALID_ARGUMENT naming the public op, the value, the dim and its size, the graph, the
 * backend and the call. */
tc_status index_check_result(const tc_backend *be, const tc_graph *g, const tc_index_error *rec, uint64_t call_id);
/* Device memory: the record on the device, zeroed, checked at be's next wait (a read of a
 * device tensor, tc_synchronize: backend_wait_check_add), with the same message. Freed with
 * its executable; one with unread calls is freed by that wait instead. */
typedef struct index_record index_record;
tc_status index_record_new(tc_backend *be, const tc_graph *g, index_record **out);
void index_record_free(index_record *r);
/* Around queuing one call's work: begin returns the record's buffer (and holds its lock); end
 * notes call_id as a call the next wait checks (when queued: some of its work was queued). */
tc_buffer *index_record_begin(index_record *r);
void index_record_end(index_record *r, uint64_t call_id, bool queued);

/* Sets an error that prefixes the plugin's message with what the core was doing ("compiling",
 * "running") and the graph's name; returns the status to report (s, or INTERNAL for TC_OK). */
tc_status lowered_plugin_fail(tc_status s, const tc_backend *be, const char *what, const char *graph);

/* Whether be declines node i of g (why: a reason like "prim exp" or "dtype f64"). */
bool lowered_node_declined(const tc_backend *be, const tc_graph *g, int32_t i, char *why, size_t cap);
/* The value id of the first node be declines in g, or -1. */
int32_t lowered_first_declined(const tc_backend *be, const tc_graph *g, char *why, size_t cap);

/* A plan bound to a backend. The kernel-level path (lower_kernels.c): the plan (a schedule:
 * kernel list + memory plan) is retained, so one plan can be bound to several backends. */
tc_status lower_kernels_bind(tc_backend *be, tc_schedule *plan, const lower_options *lo, tc_lowered **out,
                             tc_lower_stats *stats);
/* The graph-level path, implemented in lower_graph.c. */
tc_status lower_graph_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out,
                            tc_lower_stats *stats);
/* A graph split between be and a fallback (partition.c): lowered_build's path when be declines
 * some node. */
tc_status lower_partition_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out,
                                tc_lower_stats *stats);

#endif
