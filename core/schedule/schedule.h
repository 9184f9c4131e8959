/* schedule.h — the core's fusion scheduler, shared by every kernel-level backend: it groups a
 * primitive graph into kernels (tc_kernel_desc, the loop IR of tc_plugin.h) and plans their
 * buffers. lower_kernels.c compiles the result with a plugin and runs it.
 *
 * Model: some values are *realized* (stored in a buffer): graph inputs and outputs, matmul
 * results (or the end of their fused epilogue), matmul operands, and whatever cannot be
 * recomputed where it is needed. Each realized node value is one kernel that computes it from
 * realized values, inlining everything in between: pointwise producers are recomputed at the
 * consumer's index, views become affine index maps, reductions over the kernel's rows become
 * inner loops of the same kernel (so layer_norm and softmax are one kernel each). When an index
 * cannot be expressed affinely the producer is realized instead, and TC_LOGS=fusion says why. */
#ifndef TC_SCHEDULE_H
#define TC_SCHEDULE_H

#include "graph/graph.h"
#include "tensor/tensor.h"

/* ---------------------------------------------------------------- the result */
/* SBUF_INDEX_ERROR: ABI 2.3's record of a call's first out-of-range index (tc_index_error, four
 * i64), which every kernel with a TC_KOP_INDEX_CHECK writes; the runtime zeroes and reads it. */
typedef enum sched_buf_kind { SBUF_INPUT = 0, SBUF_OUTPUT = 1, SBUF_TEMP = 2, SBUF_INDEX_ERROR = 3 } sched_buf_kind;

typedef struct sched_buf {
  sched_buf_kind kind;
  int32_t index;  /* INPUT: graph input number; OUTPUT: graph output number; TEMP: -1 */
  int32_t value;  /* the value it holds (-1: a matmul's private product) */
  tc_dtype dtype;
  int32_t numel;  /* expr id */
  int32_t slot;   /* TEMP: memory slot shared with buffers of disjoint lifetime */
  int32_t first, last; /* first and last kernel touching it */
  int32_t into_input;  /* OUTPUT: the graph input whose buffer it is written into, or -1 */
} sched_buf;

#define SCHED_MAX_VARS (TC_MAX_RANK + 1)

/* The scheduler's own form of a kernel's ops while it builds and renumbers them (fixed arrays,
 * copied by value); schedule_abi.c turns them into the ABI's pointer-based tc_kop view. */
typedef struct sched_index {
  int32_t offset;                  /* expr id */
  int32_t strides[SCHED_MAX_VARS]; /* expr id per var; -1 means 0 */
  int32_t indirect;                /* op id, or -1 */
  int32_t indirect_stride;         /* expr id */
} sched_index;

typedef struct sched_op {
  int32_t kind, dtype, loop, prim; /* as tc_kop */
  int32_t args[3];                 /* -1 unused */
  int32_t buffer;
  sched_index index;
  double fconst;
  int64_t iconst;
} sched_op;

typedef struct sched_kernel {
  char name[64];
  /* What the kernel is, in the scheduler's terms. */
  int32_t kind; /* tc_kernel_kind */
  int32_t n_outer, outer[TC_MAX_RANK], inner;
  bool has_matmul;
  tc_matmul_desc matmul;
  bool has_attention;
  tc_attention_desc attention;
  sched_op *ops;
  int32_t n_ops;
  /* Its ABI view (schedule_abi.c): desc points at abi_ops and the arrays below. */
  tc_kernel_desc desc;
  tc_kop *abi_ops;
  tc_index *abi_index;
  int32_t *abi_ints; /* args and strides of every op */
  tc_kbuffer *kbufs;
  char (*kbuf_names)[24];
  int32_t *buf_ids; /* kernel buffer i -> schedule buffer */
  int32_t n_bufs;
  int32_t root; /* the realized value it computes */
  int32_t zero_buf; /* schedule buffer to zero before the launch (a STORE_ADD target), or -1 */
} sched_kernel;

typedef struct tc_schedule {
  int32_t refcount; /* a plan may be bound to several backends (schedule_retain) */
  const tc_graph *g;
  tc_sxtab sx;      /* the graph's size expressions plus the scheduler's (strides, products) */
  int32_t n_syms;
  int32_t n_bufs, cap_bufs;
  sched_buf *bufs;
  int32_t *value_buf; /* value id -> buffer, or -1 when not realized */
  int32_t n_kernels, cap_kernels;
  sched_kernel *kernels;
  tc_kernel_desc *descs; /* the kernels' descriptors, contiguous, for list */
  tc_kernel_list list;
  int32_t n_slots;
  int32_t index_error_buf; /* the SBUF_INDEX_ERROR buffer, or -1 (no index checks) */
} tc_schedule;

/* What the scheduler may hand the backend. Zero-initialized: the conservative choices. */
typedef struct sched_options {
  /* tc_matmul_desc's second batch level (batch_levels 2). Without it, an operand whose batch
   * dims are not one strided run is copied into a contiguous buffer first. */
  bool matmul_batch2;
  /* TC_KERNEL_ATTENTION (ABI 2.2, opt-in): softmax(mask(q.kT * scale)).v as one kernel. */
  bool attention;
  /* TC_KOP_INDEX_CHECK (ABI 2.3): gathers and scatters check their index values and record the
   * first out-of-range one in the schedule's SBUF_INDEX_ERROR buffer. Without it they only
   * keep the prims' rule (read 0 / skip), in plain compares. */
  bool index_check;
} sched_options;

/* Schedules g (borrowed; must outlive the schedule) for a plugin understanding opts (NULL:
 * everything this host's ABI has). */
tc_status schedule_build_opts(const tc_graph *g, const sched_options *opts, tc_schedule **out);
/* schedule_build_opts with two batch levels, no fused attention and no index checks (the
 * kernels every kernel-level plugin takes). */
tc_status schedule_build(const tc_graph *g, tc_schedule **out);
/* A plan is shared by every executable bound to it: retain adds a reference, release drops one
 * and frees the plan with the last. */
tc_schedule *schedule_retain(tc_schedule *s);
void schedule_release(tc_schedule *s);
/* The plan as text (kernels, their buffers, lifetimes and slots), for TC_LOGS=schedule. */
char *schedule_plan_string(const tc_schedule *s);

/* ---------------------------------------------------------------- internals (schedule_*.c) */
/* Builds sk's ABI view (desc and the abi_* arrays) from its own ops, and fills the reuse
 * decisions (schedule_fill_reuse) of a LOOP kernel. False when out of memory. */
bool schedule_kernel_abi(sched_kernel *sk);

/* An affine form c + sum k[v]*var_v over a kernel's vars, coefficients as expr ids (-1 = 0). */
typedef struct aff {
  int32_t c;
  int32_t k[SCHED_MAX_VARS];
} aff;

/* Where a value is read: its dims split into runs [lo, hi), each with the row-major linear
 * index over that run as an affine form, plus optionally an indirect term ind*ind_coef (ind: an
 * op id, from a gather). Single-dim runs are plain per-dim indices. */
typedef struct seg {
  int32_t lo, hi;
  aff L;
  int32_t ind, ind_coef;
} seg;

typedef struct sched_access {
  int32_t n;
  seg s[TC_MAX_RANK];
} sched_access;

/* A fused attention region (schedule_attention.c): O = softmax(mask(q.kT * scale)).v. */
#define SCHED_ATTENTION_MEMBERS 16
typedef struct sched_attention {
  int32_t out;           /* O: the P.v matmul */
  int32_t scores;        /* S: the q.kT matmul */
  int32_t q, kt, v;      /* the matmuls' operands, as they read them */
  double scale;
  bool causal;
  int64_t causal_offset; /* key j of query i masked when j - i >= causal_offset */
  int32_t n_members;
  int32_t members[SCHED_ATTENTION_MEMBERS]; /* values computed inside the kernel, never stored */
} sched_attention;

/* The scheduler's working state (fuse.c owns it; index_map.c and kernel_build.c use it). */
typedef struct sched_ctx {
  const tc_graph *g;
  tc_schedule *s;
  tc_sxtab *sx;
  int32_t *sx_map;       /* graph expr id -> ours */
  int64_t probe[2][64];  /* two symbol assignments for equality tests */
  int32_t n_values;
  bool *realized;        /* per value */
  int32_t *epi_end;      /* per matmul node value: the end of its epilogue (itself when none) */
  int32_t *inline_count; /* per reduction value: kernels it was inlined into (this round) */
  sched_options opts;     /* what the plugin understands */
  /* fused attention: regions, and per value the region it is the O of (or -1) */
  sched_attention *attns;
  int32_t n_attns;
  int32_t *attn_of;
  /* the kernel's vars: extents (expr ids) of var 0..n_vars-1 */
  int32_t n_vars;
  int32_t var_extent[SCHED_MAX_VARS];
  /* failure of the current attempt: the value to realize, and why */
  int32_t fail_value;
  char why[256];
} sched_ctx;

/* index_map.c */
int32_t sx_add(sched_ctx *c, int32_t a, int32_t b);
int32_t sx_mul(sched_ctx *c, int32_t a, int32_t b);
int32_t sx_g(sched_ctx *c, int32_t graph_expr); /* a graph expr id in our table */
int32_t sx_c(sched_ctx *c, int64_t v);
bool sx_equal(sched_ctx *c, int32_t a, int32_t b); /* equal for every symbol value (tested) */
int32_t sx_prod(sched_ctx *c, const tc_vtype *t, int32_t lo, int32_t hi); /* product of dims */
aff aff_zero(void);
aff aff_var(sched_ctx *c, int32_t v); /* 1 * var_v */
aff aff_add(sched_ctx *c, aff a, aff b);
aff aff_scale(sched_ctx *c, aff a, int32_t e);
bool aff_uses_var(const aff *a, int32_t v);
void access_clear(sched_access *a);
/* Identity access over a value of rank r: dim d read at var d. */
sched_access access_vars(int32_t rank);
/* Splits run i into single dims when the affine index allows it (false when not). */
bool access_split(sched_ctx *c, sched_access *a, int32_t i, const tc_vtype *t);
/* Splits every run so that dim d is alone. */
bool access_isolate(sched_ctx *c, sched_access *a, int32_t d, const tc_vtype *t);
/* Maps an access of a view node's result to its input (false + c->why when not affine). */
bool access_through_view(sched_ctx *c, const tc_node *n, const sched_access *out, sched_access *in);
/* Maps an access of a RESHAPE or PERMUTE node's input to its result (the inverse direction). */
bool access_forward(sched_ctx *c, const tc_node *n, const sched_access *in, sched_access *out);
/* The element offset in a contiguous buffer of type t read at a: an affine form, and the
 * indirect term (op, coefficient) if any. False when two indirect terms meet. */
bool access_address(sched_ctx *c, const sched_access *a, const tc_vtype *t, aff *addr, int32_t *ind, int32_t *ind_coef);
bool access_uses_var(const sched_access *a, int32_t v);
bool access_same(const sched_access *a, const sched_access *b);

/* schedule_attention.c: finds up to cap regions whose members no one else reads. */
int32_t attention_find(sched_ctx *c, const bool *is_output, sched_attention *out, int32_t cap);

/* kernel_build.c */
/* Builds the kernel computing realized value `root` into a new schedule kernel; returns false
 * with c->fail_value/why set when a producer must be realized first. */
bool kernel_build(sched_ctx *c, int32_t root, tc_status *err);

/* schedule_inplace.c: outputs the graph marks as input updates (output_into) take the input's
 * buffer where no kernel can see the old values overwritten (into_input). Before memplan. */
void schedule_write_in_place(tc_schedule *s);

/* memplan.c */
int32_t sched_buffer_for(tc_schedule *s, int32_t value, sched_buf_kind kind, int32_t index, tc_dtype dtype,
                         int32_t numel);
void memplan_assign(tc_schedule *s);

#endif
