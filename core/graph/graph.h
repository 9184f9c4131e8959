/* graph/graph.h — the graph stage: the core's primitive graph: what capture produces, simplify rewrites, the
 * scheduler lowers, and (as tc_graph_desc) graph-level plugins take.
 *
 * Values are numbered as in the ABI: inputs 0..n_inputs-1, then node i defines value
 * n_inputs + i. Every size is a size-expression id in the graph's table `sx`; static sizes are
 * interned constants. May use: base, backend, tensor. */
#ifndef TC_GRAPH_H
#define TC_GRAPH_H

#include "base/base.h"

/* ---------------------------------------------------------------- size-expression table */
typedef struct tc_sxtab {
  tc_size_expr *nodes;
  int32_t n, cap;
  int32_t *hash; /* open addressing over node ids, for hash-consing */
  int32_t hash_cap;
} tc_sxtab;

void sxtab_init(tc_sxtab *t);
void sxtab_free(tc_sxtab *t);
int32_t sxtab_const(tc_sxtab *t, int64_t v);
int32_t sxtab_sym(tc_sxtab *t, int64_t k);
/* Interns op(a, b), folding constants and identities (x+0, x*1, x*0, x//1). */
int32_t sxtab_bin(tc_sxtab *t, tc_sx_op op, int32_t a, int32_t b);
bool sxtab_is_const(const tc_sxtab *t, int32_t id, int64_t *value /* out, may be NULL */);
/* Writes "s0*64" style text; returns buf. */
char *sxtab_str(const tc_sxtab *t, int32_t id, char *buf, size_t cap);
/* Evaluates all nodes given symbol values into vals (n entries). */
void sxtab_eval(const tc_sxtab *t, const int64_t *syms, int64_t *vals);
/* A deep copy of an expression table (same ids). */
tc_status sxtab_copy(const tc_sxtab *from, tc_sxtab *to);

/* ---------------------------------------------------------------- values and nodes */
typedef struct tc_vtype {
  tc_dtype dtype;
  int32_t rank;
  int32_t shape[TC_MAX_RANK]; /* expr ids */
} tc_vtype;

/* The public op an index-reading node (GATHER, SCATTER_ADD) implements, so that an out-of-range
 * index a compiled kernel finds (ABI 2.3's index error record) is reported in that op's terms,
 * as eager mode reports it. GRAPH_INDEX_PRIM: the core's own uses (gradients, slices), whose
 * indices are in range by construction; named by the prim. */
typedef enum graph_index_op {
  GRAPH_INDEX_PRIM = 0,
  GRAPH_INDEX_GATHER = 1,
  GRAPH_INDEX_INDEX_SELECT = 2,
  GRAPH_INDEX_EMBEDDING = 3,
  GRAPH_INDEX_SCATTER_ADD = 4,
  GRAPH_INDEX_CROSS_ENTROPY = 5
} graph_index_op;

#define TC_NODE_MAX_IATTRS (3 * TC_MAX_RANK + 2)
typedef struct tc_node {
  tc_prim prim;
  tc_vtype out;
  int32_t n_in;
  int32_t *in; /* value ids (owned; concatenate may have many) */
  int32_t n_iattrs;
  int64_t iattrs[TC_NODE_MAX_IATTRS];
  double fattr;
  int32_t index_op; /* GATHER, SCATTER_ADD: the graph_index_op it implements; 0 elsewhere */
} tc_node;

/* Symbols a guard ties to one value (a reshape into constant sizes, tc_size): the scheduler
 * reasons with that value while the expressions stay symbolic (the guard makes them equal at
 * every call), so "s3 == 3*12*64" holds where it must. 0: free (symbols are >= 2). */
#define GRAPH_MAX_PINS 64
typedef struct tc_graph {
  char name[64];
  tc_sxtab sx;
  int32_t n_syms;
  int64_t sym_pin[GRAPH_MAX_PINS];
  int32_t n_inputs;
  tc_vtype *inputs;
  int32_t n_nodes, cap_nodes;
  tc_node *nodes;
  int32_t n_outputs;
  int32_t *outputs; /* value ids */
  /* Per output, the graph input it updates in place (tc_assign inside a compiled function), or
   * -1; NULL when none does. The scheduler writes such an output into the input's buffer when
   * no kernel reads the old values after it (schedule_inplace.c); otherwise the caller copies. */
  int32_t *output_into;
} tc_graph;

/* True for the prims that read an index tensor (GATHER, SCATTER_ADD): what ABI 2.3 checks. */
bool graph_node_reads_index(const tc_node *n);
/* True when g has such a node. */
bool graph_reads_index(const tc_graph *g);
/* The message for an out-of-range index `value` of a GATHER or SCATTER_ADD node along `dim`,
 * of size `bound`, in the terms of the public op it implements (index_op: graph_index_op):
 * "tc_embedding: indices value 7 is out of range for dim 0 of weight of size 5". */
void graph_index_error_text(int32_t prim, int32_t index_op, int dim, int64_t value, int64_t bound, char *buf,
                            size_t cap);

void graph_init(tc_graph *g, const char *name);
void graph_free(tc_graph *g);
int32_t graph_add_input(tc_graph *g, const tc_vtype *t); /* returns value id */
/* Appends a node; copies `in`. Returns its value id. Only valid before any input is added
 * after nodes (inputs first, then nodes). */
int32_t graph_add_node(tc_graph *g, const tc_node *n);
const tc_vtype *graph_value_type(const tc_graph *g, int32_t value);
/* The node defining value v, or NULL for a graph input. */
const tc_node *graph_value_node(const tc_graph *g, int32_t value);
void graph_set_outputs(tc_graph *g, int32_t n, const int32_t *values);
/* The subgraph of the nodes of g marked in keep (one flag per node, order kept) computing the
 * values outs[0..n_outs-1] of g: its inputs are the values the kept nodes read and do not
 * define, listed in *in_values (g's value ids, caller frees) in the subgraph's input order.
 * sub shares g's symbols (a copy of its size table, same ids). Used to run a part of a graph
 * on a fallback backend (partition.c) and one kernel alone (the A/B bisector). */
tc_status graph_extract(const tc_graph *g, const uint8_t *keep, int32_t n_outs, const int32_t *outs, const char *name,
                        tc_graph *sub /* out */, int32_t **in_values /* out */, int32_t *n_in /* out */);
/* Prints the graph in a readable text form (for TC_LOGS=graph and explain). Caller frees. */
char *graph_to_string(const tc_graph *g);
/* A borrowed ABI view of g (valid while g and *storage live); storage is freed with
 * graph_desc_free. */
typedef struct tc_graph_desc_storage tc_graph_desc_storage;
tc_status graph_to_desc(const tc_graph *g, tc_graph_desc *desc /* out */, tc_graph_desc_storage **storage /* out */);
void graph_desc_free(tc_graph_desc_storage *storage);
/* Name of a prim ("add", "reduce_sum", ...); "?" for unknown ids. */
const char *prim_name(int32_t prim);
/* Structural hash of the graph (nodes, types, exprs, outputs), for caches. */
uint64_t graph_hash(const tc_graph *g);

#endif
