/* debug_eager.h — internals of the debug-eager plugin: the compiled graph it keeps, the
 * run-time tensors it works on, and one entry per concern (validation, element access, one
 * executor per prim family). Only tc_plugin.h and the plugin kit are included from tc. */
#ifndef DEBUG_EAGER_H
#define DEBUG_EAGER_H

#include <stdarg.h>
#include <stdbool.h>

#include "tc_kit.h"
#include "tc_plugin.h"

/* The A/B bisector's test backend (tests/CMakeLists.txt builds these same sources with
 * DE_WRONG_EXP into <build>/test-plugins-ab/tc-test-wrong-exp.so): a plugin of its own name whose
 * exp is deliberately off by a relative 1e-3 for negative arguments (where softmax and sigmoid
 * read it, so the error does not cancel), and which is otherwise this interpreter. */
#ifdef DE_WRONG_EXP
#define DE_NAME "test-wrong-exp"
#define DE_OPTION_PREFIX "test_wrong_exp"
#define DE_DESCRIPTION "TEST ONLY: debug-eager with exp off by a relative 1e-3 for negative x"
#else
#define DE_NAME "debug-eager"
#define DE_OPTION_PREFIX "debug"
#define DE_DESCRIPTION "reference interpreter: runs the prim graph one prim at a time (the numerical oracle)"
#endif

#define DE_PRINTF(a, b) __attribute__((format(printf, a, b)))
/* Returns the status of expr when it is not TC_OK. */
#define DE_TRY(expr)                                                                               \
  do {                                                                                             \
    tc_status de_s_ = (expr);                                                                      \
    if (de_s_ != TC_OK) return de_s_;                                                              \
  } while (0)

/* ---------------------------------------------------------------- context and errors */
struct tc_plugin_ctx {
  tc_host_api host; /* copied: zero past what the host filled */
};

/* One entry point's call: the host, and the first error raised (handed to the host on return).
 * Internals return tc_status and record the message here, so they stay flat (DE_TRY). */
typedef struct de_call {
  const tc_host_api *host;
  tc_error *err;
  /* run_graph (ABI 2.3): where the first out-of-range GATHER / SCATTER_ADD index of the run is
   * recorded (host memory), or NULL when the host wants no record. */
  tc_index_error *index_error;
} de_call;

/* Records an out-of-range index of node `site` (value, and the size of the dim it indexes) in
 * the call's record, unless there is none or it holds an earlier one (exec_index.c). */
void de_index_error(de_call *call, int32_t site, int64_t value, int64_t bound);

/* Records the first error of the call (message prefixed "debug-eager: ") and returns s. */
tc_status de_error(de_call *call, tc_status s, const char *fmt, ...) DE_PRINTF(3, 4);
/* What an entry point returns for status s: call->err, or a generic error for s when none was
 * recorded (out of memory while making it). NULL for TC_OK. */
tc_error *de_call_result(de_call *call, tc_status s);
/* Formats sizes as "8x64" ("[]" for rank 0); returns buf. */
char *de_shape_str(char *buf, size_t cap, int32_t rank, const int64_t *sizes);

/* ---------------------------------------------------------------- prims (prim_table.c) */
typedef enum de_family {
  DE_FAMILY_NONE = 0, /* not a prim id */
  DE_FAMILY_UNARY,
  DE_FAMILY_BINARY,
  DE_FAMILY_WHERE,
  DE_FAMILY_CONVERT,
  DE_FAMILY_REDUCE,
  DE_FAMILY_ARGREDUCE,
  DE_FAMILY_MOVEMENT,
  DE_FAMILY_INDEX,
  DE_FAMILY_CREATE,
  DE_FAMILY_MATMUL
} de_family;

/* Dtype sets, as bit masks (1u << tc_dtype). */
#define DE_FLOATS ((1u << TC_F32) | (1u << TC_F64))
#define DE_INTS ((1u << TC_I32) | (1u << TC_I64))
#define DE_NUMBERS (DE_FLOATS | DE_INTS)
#define DE_ALL (DE_NUMBERS | (1u << TC_BOOL))
#define DE_BOOL (1u << TC_BOOL)

typedef struct de_prim_info {
  const char *name;
  de_family family;
  uint32_t dtypes; /* operand dtypes accepted (the first operand's for WHERE/GATHER/...) */
} de_prim_info;

/* Info of a prim id; family DE_FAMILY_NONE for an unknown id. */
de_prim_info de_prim_info_of(int32_t prim);
const char *de_prim_name(int32_t prim);

/* ---------------------------------------------------------------- the compiled graph */
typedef struct de_vtype {
  int32_t dtype;
  int32_t rank;
  int32_t shape[TC_MAX_RANK]; /* expression ids */
} de_vtype;

typedef struct de_node {
  int32_t prim;
  de_vtype out;
  int32_t n_inputs;
  int32_t *inputs; /* value ids, owned */
  int32_t n_iattrs;
  int64_t *iattrs; /* owned */
  double fattr;
} de_node;

/* A deep copy of a tc_graph_desc: nothing borrowed outlives compile_graph. */
struct tc_executable {
  char name[64];
  char *listing; /* readable listing of the graph (executable_info's source), or NULL */
  double compile_seconds;
  int32_t n_exprs;
  tc_size_expr *exprs; /* struct_size = sizeof(tc_size_expr) */
  int32_t n_syms;
  int32_t n_inputs;
  int32_t n_nodes;
  int32_t n_values;   /* n_inputs + n_nodes */
  de_vtype *values;   /* type of every value */
  de_node *nodes;
  int32_t n_outputs;
  int32_t *outputs;   /* value ids */
  int32_t *last_use;  /* per value: last node reading it (-1: none); outputs live to the end */
};

/* Checks a graph: the ABI through the kit's tck_graph_validate, then every prim's rules
 * (compile-time part: dtypes, ranks, attributes). Sizes are symbolic and are checked at run
 * time. */
tc_status de_graph_validate(de_call *call, const tc_graph_desc *g);
/* Deep-copies a validated graph. */
tc_status de_graph_copy(de_call *call, const tc_graph_desc *g, tc_executable **exe /* out */);
void de_graph_free(tc_executable *exe);

/* Runs a compiled graph (interp.c). */
tc_status de_graph_run(de_call *call, const tc_executable *exe, const tc_run_graph_args *args);

/* ---------------------------------------------------------------- run-time tensors */
/* A strided view: element idx lives at data + sum(idx[d] * strides[d]) * itemsize. Strides are
 * in elements and may be 0 (broadcast) or negative. */
typedef struct de_tensor {
  char *data; /* element (0, ..., 0) */
  int32_t dtype;
  int32_t rank;
  int64_t sizes[TC_MAX_RANK];
  int64_t strides[TC_MAX_RANK];
} de_tensor;

int64_t de_numel(int32_t rank, const int64_t *sizes);
/* Row-major multi-index of linear position i. */
void de_unravel(int64_t i, int32_t rank, const int64_t *sizes, int64_t *idx /* out */);
/* Address of element idx of t. */
char *de_at(const de_tensor *t, const int64_t *idx);
/* Address of row-major element i of t (any strides). */
char *de_at_linear(const de_tensor *t, int64_t i);

/* Element access. Loads widen (floats to double, ints and bool to int64); stores convert with
 * CONVERT's rules (float->int truncates toward zero, NaN -> 0, out of range saturates;
 * ->bool is x != 0; i64->i32 wraps). */
double de_load_f(int32_t dtype, const char *p);
int64_t de_load_i(int32_t dtype, const char *p);
void de_store_f(int32_t dtype, char *p, double v);
void de_store_i(int32_t dtype, char *p, int64_t v);
/* IEEE 754-2019 maximum/minimum: NaN propagates, and +0 counts as greater than -0. */
double de_float_max(double a, double b);
double de_float_min(double a, double b);
static inline int de_is_float(int32_t dtype) { return dtype == TC_F32 || dtype == TC_F64; }

/* ---------------------------------------------------------------- executors */
/* One prim's execution: operands are strided views; out is contiguous, with its sizes. */
typedef struct de_op {
  de_call *call;
  const de_node *node;
  int32_t index;        /* node index, for messages */
  const de_tensor *in;  /* node->n_inputs operands */
  const de_tensor *out; /* contiguous */
  const int64_t *vals;  /* evaluated size expressions */
} de_op;

/* Fails the op with a message naming the node and prim. */
tc_status de_op_error(const de_op *op, tc_status s, const char *fmt, ...) DE_PRINTF(3, 4);
/* Checks that every dim of t equals out's (elementwise operands). */
tc_status de_op_check_same_shape(const de_op *op, const de_tensor *t, const char *what);

tc_status de_exec_elementwise(const de_op *op); /* unary, binary, WHERE, CONVERT */
/* parallel.c: fn over output positions [0, n) of op, in chunks on the host's cores when n is
 * large (fn must write each position from that position alone). */
typedef tc_status (*de_range_fn)(const de_op *op, int64_t begin, int64_t end);
tc_status de_parallel_for(const de_op *op, int64_t n, de_range_fn fn);
tc_status de_exec_reduce(const de_op *op);      /* REDUCE_*, ARGMAX/ARGMIN */
tc_status de_exec_movement(const de_op *op);
tc_status de_exec_index(const de_op *op);  /* GATHER, SCATTER_ADD */
tc_status de_exec_create(const de_op *op); /* IOTA, CONSTANT, RANDOM */
tc_status de_exec_matmul(const de_op *op);

/* Philox4x32-10 (philox.c): out = the four words for counter ctr and key. */
void de_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* The RANDOM prim's value for a seed and a (linear) counter: (word0 >> 8) * 2^-24. */
double de_philox_uniform(uint64_t seed, uint64_t counter);

#endif
