/*
 * tc_plugin.h — the contract between tc and its backend plugins.
 *
 * This header stands alone: C11 plus <stddef.h>, <stdint.h>, <stdbool.h>. A plugin includes
 * nothing else of tc. docs/plugin-abi.md states the rules; docs/primitives.md each primitive.
 *
 * Rules, in short:
 *  - One exported symbol: TC_PLUGIN_ENTRY_SYMBOL ("tc_plugin_query"). Nothing else is looked up.
 *  - Versioning: the major version must match exactly; the minor may differ either way.
 *  - Every struct that crosses the boundary begins with `size_t struct_size`. Fields are only
 *    appended. A reader uses a field only if struct_size covers it (TC_HAS_FIELD).
 *  - Arrays of structs are strided by their first element's struct_size (TC_AT), so a newer
 *    writer's larger elements still index correctly for an older reader.
 *  - Primitive ids, status codes and enum values are fixed forever; never renumbered or reused.
 *  - Whoever allocates frees. Strings passed in are borrowed for the duration of the call.
 *  - No entry point may abort or exit the process. Errors are returned as tc_status with a
 *    message given to host->set_error().
 */
#ifndef TC_PLUGIN_H
#define TC_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_ABI_MAJOR 1
#define TC_ABI_MINOR 2
#define TC_PLUGIN_ENTRY_SYMBOL "tc_plugin_query"
#define TC_MAX_RANK 8

/* Size of a struct up to and including `field` (PJRT's trick): what a writer of an older minor
 * version would have put in struct_size. */
#define TC_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type *)0)->last_field))
/* True when the struct pointed to by p is large enough to hold `field`. */
#define TC_HAS_FIELD(p, type, field) ((p)->struct_size >= TC_STRUCT_SIZE(type, field))
/* Element i of an array of ABI structs, strided by the first element's struct_size. */
#define TC_AT(type, arr, i) ((const type *)((const char *)(arr) + (size_t)(i) * (arr)->struct_size))

/* ---------------------------------------------------------------------------------------------
 * Status codes and data types (fixed values)
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_status {
  TC_OK = 0,
  TC_ERR_INVALID_ARGUMENT = 1, /* bad input: shapes, dtypes, attributes */
  TC_ERR_UNSUPPORTED = 2,      /* valid request this backend declines (prim, dtype, kind) */
  TC_ERR_UNAVAILABLE = 3,      /* no device, no driver, plugin not loadable */
  TC_ERR_OUT_OF_MEMORY = 4,
  TC_ERR_COMPILE = 5, /* code generation or the downstream compiler failed */
  TC_ERR_VERSION = 6, /* ABI major mismatch or a struct too small to use */
  TC_ERR_INTERNAL = 7,
  TC_ERR_GUARD = 8, /* a compiled entry's assumptions did not hold (core only) */
  TC_ERR_GRAPH_BREAK = 9
} tc_status;

typedef enum tc_dtype {
  TC_F32 = 0,
  TC_F64 = 1,
  TC_I32 = 2,
  TC_I64 = 3,
  TC_BOOL = 4, /* stored as one byte, 0 or 1 */
  TC_F16 = 5,  /* reserved: not yet accepted by any prim */
  TC_BF16 = 6, /* reserved */
  TC_DTYPE_COUNT = 7
} tc_dtype;

static inline size_t tc_dtype_size(tc_dtype d) {
  switch (d) {
  case TC_F32: case TC_I32: return 4;
  case TC_F64: case TC_I64: return 8;
  case TC_BOOL: return 1;
  case TC_F16: case TC_BF16: return 2;
  default: return 0;
  }
}

/* ---------------------------------------------------------------------------------------------
 * Primitives: the closed set every op decomposes into. Ids are fixed forever.
 * Semantics, dtypes, attributes and edge cases: docs/primitives.md.
 * Elementwise prims take operands of identical shape (broadcasting is explicit, through
 * BROADCAST_IN_DIM) and identical dtype (conversion is explicit, through CONVERT).
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_prim {
  /* unary elementwise: 1..31 */
  TC_PRIM_NEG = 1,
  TC_PRIM_ABS = 2,
  TC_PRIM_EXP = 3,
  TC_PRIM_LOG = 4,
  TC_PRIM_SQRT = 5,
  TC_PRIM_RSQRT = 6,
  TC_PRIM_SIN = 7,
  TC_PRIM_COS = 8,
  TC_PRIM_TANH = 9,
  TC_PRIM_ERF = 10,
  TC_PRIM_FLOOR = 11,
  TC_PRIM_CEIL = 12,
  TC_PRIM_ROUND = 13, /* half to even */
  TC_PRIM_SIGN = 14,
  TC_PRIM_RECIPROCAL = 15,
  TC_PRIM_LOGICAL_NOT = 16, /* bool -> bool */
  TC_PRIM_ISNAN = 17,       /* float -> bool */
  /* binary elementwise: 32..55 */
  TC_PRIM_ADD = 32,
  TC_PRIM_SUB = 33,
  TC_PRIM_MUL = 34,
  TC_PRIM_DIV = 35, /* integers: truncates toward zero; division by zero gives 0 */
  TC_PRIM_POW = 36, /* floats only */
  TC_PRIM_MAX = 37, /* NaN propagates */
  TC_PRIM_MIN = 38, /* NaN propagates */
  TC_PRIM_REMAINDER = 39, /* sign of the divisor (Python/PyTorch remainder) */
  TC_PRIM_EQ = 40, /* comparisons produce bool */
  TC_PRIM_NE = 41,
  TC_PRIM_LT = 42,
  TC_PRIM_LE = 43,
  TC_PRIM_GT = 44,
  TC_PRIM_GE = 45,
  TC_PRIM_AND = 46, /* bool, or bitwise on integers */
  TC_PRIM_OR = 47,
  /* ternary and conversion: 56..63 */
  TC_PRIM_WHERE = 56,   /* (cond: bool, a, b) */
  TC_PRIM_CONVERT = 57, /* to node dtype; float->int truncates; ->bool is (x != 0) */
  /* reductions over the dims listed in iattrs: 64..79 */
  TC_PRIM_REDUCE_SUM = 64,
  TC_PRIM_REDUCE_MAX = 65,
  TC_PRIM_REDUCE_MIN = 66,
  TC_PRIM_REDUCE_PROD = 67,
  TC_PRIM_ARGMAX = 68, /* one dim; i64 result; first index of the maximum; NaN counts as max */
  TC_PRIM_ARGMIN = 69,
  /* movement: 80..95 */
  TC_PRIM_RESHAPE = 80, /* row-major reinterpretation to the node's shape */
  TC_PRIM_BROADCAST_IN_DIM = 81,
  TC_PRIM_PERMUTE = 82,
  TC_PRIM_SLICE = 83,
  TC_PRIM_PAD = 84,
  TC_PRIM_CONCATENATE = 85,
  TC_PRIM_REVERSE = 86,
  /* indexing: 96..103 */
  TC_PRIM_GATHER = 96,      /* torch.gather: out[..i..] = x[..index[..i..]..] along dim */
  TC_PRIM_SCATTER_ADD = 97, /* torch.scatter_add: out = x; out[..index..] += src */
  /* creation: 104..111 */
  TC_PRIM_IOTA = 104,     /* value = index along iattrs[0] */
  TC_PRIM_CONSTANT = 105, /* every element = fattr (or a size expression, iattrs[0] >= 0) */
  TC_PRIM_RANDOM = 106,   /* uniform [0,1) from Philox4x32-10: see docs/primitives.md */
  /* contraction: 112.. */
  TC_PRIM_MATMUL = 112, /* (..., M, K) x (..., K, N) -> (..., M, N); batch dims equal */
  TC_PRIM_LAST_ = 127
} tc_prim;

/* ---------------------------------------------------------------------------------------------
 * Symbolic sizes. Every size, stride and offset in a descriptor is an id into a table of
 * expression nodes over integer symbols s0, s1, ... whose values are given at launch.
 * Children always have smaller ids than their parent, so a table evaluates front to back.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_sx_op {
  TC_SX_CONST = 0,    /* value */
  TC_SX_SYM = 1,      /* symbol number `value` */
  TC_SX_ADD = 2,      /* a + b */
  TC_SX_SUB = 3,      /* a - b */
  TC_SX_MUL = 4,      /* a * b */
  TC_SX_FLOORDIV = 5, /* floor(a / b) */
  TC_SX_MOD = 6,      /* a mod b, result sign of b */
  TC_SX_MAX = 7,
  TC_SX_MIN = 8
} tc_sx_op;

typedef struct tc_size_expr {
  size_t struct_size;
  int32_t op;    /* tc_sx_op */
  int32_t a, b;  /* child ids (binary ops) */
  int64_t value; /* TC_SX_CONST: the constant; TC_SX_SYM: the symbol number */
} tc_size_expr;

/* Evaluates every node of a table into vals[0..n-1] given symbol values. */
static inline void tc_size_eval_all(const tc_size_expr *exprs, int32_t n, const int64_t *syms,
                                    int64_t *vals) {
  for (int32_t i = 0; i < n; i++) {
    const tc_size_expr *e = TC_AT(tc_size_expr, exprs, i);
    int64_t a = e->op >= TC_SX_ADD ? vals[e->a] : 0, b = e->op >= TC_SX_ADD ? vals[e->b] : 0;
    int64_t r = 0;
    switch (e->op) {
    case TC_SX_CONST: r = e->value; break;
    case TC_SX_SYM: r = syms[e->value]; break;
    case TC_SX_ADD: r = a + b; break;
    case TC_SX_SUB: r = a - b; break;
    case TC_SX_MUL: r = a * b; break;
    case TC_SX_FLOORDIV: r = b ? (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0; break;
    case TC_SX_MOD: r = b ? ((a % b) + (((a % b) != 0 && ((a % b < 0) != (b < 0))) ? b : 0)) : 0; break;
    case TC_SX_MAX: r = a > b ? a : b; break;
    case TC_SX_MIN: r = a < b ? a : b; break;
    default: r = 0; break;
    }
    vals[i] = r;
  }
}

/* ---------------------------------------------------------------------------------------------
 * Host services, filled by tc and passed to every plugin.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_log_level { TC_LOG_DEBUG = 0, TC_LOG_INFO = 1, TC_LOG_WARN = 2, TC_LOG_ERROR = 3 } tc_log_level;

typedef struct tc_host_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the host's ABI version */
  void *host_ctx;                /* pass back to every callback */
  /* Sets the message for the failing call (copied). Thread-safe; per calling thread. */
  void (*set_error)(void *host_ctx, const char *message);
  /* Logs a line under a TC_LOGS category ("output_code", "cache", ...). Thread-safe. */
  void (*log)(void *host_ctx, tc_log_level level, const char *category, const char *message);
  /* True when TC_LOGS enables `category`; lets a plugin skip formatting. */
  bool (*log_enabled)(void *host_ctx, const char *category);
  /* Directory for the plugin's persistent cache (exists, writable), or NULL when caching is off.
   * Valid for the life of the plugin context. */
  const char *cache_dir;
  /* Looks up an option "plugin.key" given to tc (e.g. "cpu.threads", "vulkan.device"); returns
   * NULL when unset. The string is valid for the life of the plugin context. */
  const char *(*get_option)(void *host_ctx, const char *key);
} tc_host_api;

/* ---------------------------------------------------------------------------------------------
 * Probing: availability without side effects.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_device_type {
  TC_DEVICE_CPU = 0,
  TC_DEVICE_DISCRETE_GPU = 1,
  TC_DEVICE_INTEGRATED_GPU = 2,
  TC_DEVICE_VIRTUAL_GPU = 3,
  TC_DEVICE_OTHER = 4
} tc_device_type;

typedef struct tc_device_info {
  size_t struct_size;
  char name[128];
  int32_t type; /* tc_device_type */
  uint64_t memory_bytes;
} tc_device_info;

#define TC_PROBE_MAX_DEVICES 16
typedef struct tc_probe_info {
  size_t struct_size;
  bool available;
  char reason[256];  /* why not available (or a note when available) */
  int32_t score;     /* higher wins for backend "auto"; 0..100 */
  int32_t n_devices; /* <= TC_PROBE_MAX_DEVICES */
  tc_device_info devices[TC_PROBE_MAX_DEVICES];
} tc_probe_info;

/* ---------------------------------------------------------------------------------------------
 * Memory. A plugin whose memory is TC_MEMORY_HOST works on plain host pointers: the host
 * allocates, and a tc_buffer* is a host pointer (cast). A TC_MEMORY_DEVICE plugin allocates its
 * own buffers and moves bytes with buffer_write / buffer_read.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_memory_kind { TC_MEMORY_HOST = 0, TC_MEMORY_DEVICE = 1 } tc_memory_kind;

typedef struct tc_buffer tc_buffer;         /* opaque to the host */
typedef struct tc_plugin_ctx tc_plugin_ctx; /* opaque to the host */
typedef struct tc_executable tc_executable; /* opaque to the host */

/* A strided view of a buffer, used at run time. */
typedef struct tc_tensor_ref {
  size_t struct_size;
  tc_buffer *buffer;
  int64_t offset; /* in elements */
  int32_t dtype;  /* tc_dtype */
  int32_t rank;
  int64_t sizes[TC_MAX_RANK];
  int64_t strides[TC_MAX_RANK]; /* in elements; 0 for broadcast */
} tc_tensor_ref;

/* ---------------------------------------------------------------------------------------------
 * Hand-off level 1: the primitive graph (a plugin with TC_HANDOFF_GRAPH).
 * Values are numbered: graph inputs 0..n_inputs-1, then node i defines value n_inputs + i.
 * ------------------------------------------------------------------------------------------- */
typedef struct tc_value_type {
  size_t struct_size;
  int32_t dtype; /* tc_dtype */
  int32_t rank;
  int32_t shape[TC_MAX_RANK]; /* size expression ids */
} tc_value_type;

typedef struct tc_prim_node {
  size_t struct_size;
  int32_t prim;      /* tc_prim */
  tc_value_type out; /* the node's result type */
  int32_t n_inputs;
  const int32_t *inputs; /* value ids, borrowed */
  int32_t n_iattrs;
  const int64_t *iattrs; /* per-prim integer attributes (docs/primitives.md), borrowed */
  double fattr;          /* CONSTANT: value; PAD: pad value */
} tc_prim_node;

typedef struct tc_graph_desc {
  size_t struct_size;
  const char *name;
  int32_t n_exprs;
  const tc_size_expr *exprs;
  int32_t n_syms;
  int32_t n_inputs;
  const tc_value_type *inputs;
  int32_t n_nodes;
  const tc_prim_node *nodes;
  int32_t n_outputs;
  const int32_t *outputs; /* value ids */
} tc_graph_desc;

/* ---------------------------------------------------------------------------------------------
 * Hand-off level 2: fused kernels (a plugin with TC_HANDOFF_KERNELS). A loop-level IR.
 *
 * A TC_KERNEL_LOOP kernel runs its body for every point of the outer (parallel) domain
 * var0..var{n_outer-1}. Ops are in execution order. An op with loop == -1 runs once per outer
 * point; consecutive ops with the same loop == k >= 0 form inner loop k over the inner
 * (reduction) domain, var index n_outer. A REDUCE op in loop k folds its operand over that loop;
 * its result is usable by ops after loop k. Layer norm is: loop 0 (load, reduce sum), outer ops
 * (mean), loop 1 (load, sub, square, reduce sum), outer ops (rstd), loop 2 (load, normalize, store).
 *
 * An index is offset + sum_d strides[d] * var_d (+ indirect value * indirect_stride): an affine
 * map over all n_outer + 1 vars (the inner var last), with symbolic coefficients.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_kernel_kind { TC_KERNEL_LOOP = 0, TC_KERNEL_MATMUL = 1 } tc_kernel_kind;

typedef enum tc_kop_kind {
  TC_KOP_LOAD = 0,      /* value = buffer[index] */
  TC_KOP_CONST = 1,     /* value = fconst (floats, bool) or iconst (integers) */
  TC_KOP_PRIM = 2,      /* elementwise prim (unary/binary/WHERE/CONVERT) of args */
  TC_KOP_INDEX = 3,     /* value = index expression itself, as i64 (iota) */
  TC_KOP_RANDOM = 4,    /* uniform [0,1) f32: Philox(key = iconst, counter = index) */
  TC_KOP_REDUCE = 5,    /* fold args[0] over the op's inner loop with `reduce` (a tc_prim) */
  TC_KOP_STORE = 6,     /* buffer[index] = args[0] */
  TC_KOP_STORE_ADD = 7, /* buffer[index] += args[0]; atomic where the outer domain may race */
  TC_KOP_ACC = 8        /* MATMUL epilogue: the product's value at (batch, m, n) */
} tc_kop_kind;

typedef struct tc_index {
  size_t struct_size;
  int32_t offset;                   /* expr id */
  int32_t strides[TC_MAX_RANK + 1]; /* expr id per var (n_outer + 1 used); -1 means 0 */
  int32_t indirect;                 /* op id of an integer value, or -1 */
  int32_t indirect_stride;          /* expr id */
} tc_index;

typedef struct tc_kop {
  size_t struct_size;
  int32_t kind;  /* tc_kop_kind */
  int32_t dtype; /* result dtype (STORE: the stored dtype) */
  int32_t loop;  /* -1: once per outer point; k >= 0: inside inner loop k */
  int32_t prim;  /* TC_KOP_PRIM: the prim; TC_KOP_REDUCE: REDUCE_SUM/MAX/MIN/PROD, ARGMAX/MIN */
  int32_t args[3]; /* operand op ids (earlier ops), -1 unused */
  int32_t buffer;  /* LOAD/STORE/STORE_ADD: index into the kernel's buffers */
  tc_index index;  /* LOAD/STORE/STORE_ADD/INDEX/RANDOM */
  double fconst;   /* CONST (float/bool) */
  int64_t iconst;  /* CONST (integer); RANDOM: the key (seed) */
} tc_kop;

typedef enum tc_buffer_role { TC_BUF_INPUT = 0, TC_BUF_OUTPUT = 1, TC_BUF_INOUT = 2 } tc_buffer_role;

typedef struct tc_kbuffer {
  size_t struct_size;
  const char *name; /* "in_x", "out_y", "buf3": for readable generated code */
  int32_t dtype;
  int32_t role;  /* tc_buffer_role */
  int32_t numel; /* expr id: element count (for bounds, staging and checking) */
} tc_kbuffer;

/* MATMUL kernels: C[b, m, n] = epilogue(sum_k A[b, m, k] * B[b, k, n]). The epilogue is the
 * kernel's ops over the outer domain (batch, M, N), where TC_KOP_ACC is the product's value;
 * it ends in a STORE. With no ops, the product is stored to buffer c with c's strides. */
typedef struct tc_matmul_desc {
  size_t struct_size;
  int32_t a, b, c;     /* buffer indices of the operands and the product's buffer */
  int32_t batch, m, n, k; /* expr ids */
  int32_t a_offset, a_stride_batch, a_stride_m, a_stride_k; /* expr ids, in elements */
  int32_t b_offset, b_stride_batch, b_stride_k, b_stride_n;
  int32_t c_offset, c_stride_batch, c_stride_m, c_stride_n;
  /* Appended in ABI 1.1 (after the fields above): a second batch level, an outer loop of extent
   * batch2 around `batch`, for operands whose batch dims are two strided levels (q·kᵀ over
   * (B, heads) read from views of one (B, T, 3, heads, d) buffer). With it, C[b2, b, m, n] =
   * epilogue(sum_k A[b2, b, m, k] * B[b2, b, k, n]), A's element at a_offset + b2*a_stride_batch2
   * + b*a_stride_batch + m*a_stride_m + k*a_stride_k (likewise B and C), and the epilogue's outer
   * domain is (batch2, batch, m, n): n_outer is 4. A reader uses these fields only when
   * struct_size covers them and batch_levels is 2; otherwise (an older writer, or a writer that
   * zero-initializes and leaves them alone) there is one level and batch2 is -1 or unset. The
   * host sets batch_levels 2 only for a plugin whose table reports abi_minor >= 1: a plugin built
   * against 1.0 never reads these fields, so it gets one level (operands copied) instead. This
   * struct is the last member of tc_kernel_desc, so appending here only appends to that too, and
   * tc_kernel_list strides its kernels by their struct_size (TC_AT). */
  int32_t batch_levels; /* 2: batch2 and the *_stride_batch2 below are in use; else one level */
  int32_t batch2;       /* expr id, or -1 */
  int32_t a_stride_batch2, b_stride_batch2, c_stride_batch2; /* expr ids, in elements */
} tc_matmul_desc;

typedef struct tc_kernel_desc {
  size_t struct_size;
  const char *name; /* what it fuses, e.g. "layer_norm_gelu_0" */
  int32_t kind;     /* tc_kernel_kind */
  int32_t n_outer;
  int32_t outer[TC_MAX_RANK]; /* expr ids; MATMUL: (batch, m, n); (batch2, batch, m, n) with two batch levels */
  int32_t inner;              /* expr id of the reduction extent, or -1 */
  int32_t n_buffers;
  const tc_kbuffer *buffers;
  int32_t n_ops;
  const tc_kop *ops;
  tc_matmul_desc matmul; /* MATMUL only */
} tc_kernel_desc;

/* The kernels of one graph, compiled together (one translation unit / module). All kernels
 * share the expression table and symbols. */
typedef struct tc_kernel_list {
  size_t struct_size;
  const char *name; /* the graph's name */
  int32_t n_exprs;
  const tc_size_expr *exprs;
  int32_t n_syms;
  int32_t n_kernels;
  const tc_kernel_desc *kernels;
} tc_kernel_list;

/* One buffer argument at launch: the buffer and a byte offset into it. */
typedef struct tc_buffer_arg {
  size_t struct_size;
  tc_buffer *buffer;
  size_t byte_offset;
} tc_buffer_arg;

/* One launch of a recorded sequence. */
typedef struct tc_launch {
  size_t struct_size;
  int32_t kernel;
  const tc_buffer_arg *args; /* one per kernel buffer */
} tc_launch;

typedef struct tc_recording tc_recording; /* opaque to the host */

/* ABI 1.2: facts about a compiled executable (executable_info). */
typedef struct tc_executable_info {
  size_t struct_size;
  bool from_cache;        /* served from the plugin's disk cache: no compiler ran */
  double compile_seconds; /* the plugin's own time compiling it (codegen, compiler or cache) */
} tc_executable_info;

/* ---------------------------------------------------------------------------------------------
 * Capabilities (optional entry): which groups a backend accepts. The core falls back to
 * another backend for what it declines (or errors under fullgraph).
 * ------------------------------------------------------------------------------------------- */
typedef struct tc_capabilities {
  size_t struct_size;
  uint32_t dtypes;            /* bit (1u << tc_dtype) per accepted dtype */
  uint64_t prims[2];          /* bit per accepted prim id (id 0..127) */
  uint32_t kernel_kinds;      /* bit (1u << tc_kernel_kind) */
} tc_capabilities;

/* ---------------------------------------------------------------------------------------------
 * The plugin's table. Threading: probe may be called from any thread at any time. Calls on one
 * context are serialized by the host, except compile_kernels/compile_graph, which may run on
 * worker threads concurrently with each other (not with release).
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_handoff { TC_HANDOFF_KERNELS = 1u << 0, TC_HANDOFF_GRAPH = 1u << 1 } tc_handoff;

typedef struct tc_plugin_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the plugin's ABI version */
  const char *name;              /* "inductor-cpu": static string */
  const char *version;           /* "0.1.0": static string */
  const char *description;       /* one line: static string */
  uint32_t handoff;              /* tc_handoff bits */
  int32_t memory;                /* tc_memory_kind */

  /* --- required --- */
  /* Reports availability and devices without side effects. */
  tc_status (*probe)(const tc_host_api *host, tc_probe_info *info /* out */);
  /* Creates a context on device `device` (index into probe's list). */
  tc_status (*init)(const tc_host_api *host, int32_t device, tc_plugin_ctx **ctx /* out */);
  void (*release)(tc_plugin_ctx *ctx);

  /* TC_MEMORY_DEVICE only (NULL for host-memory plugins). */
  tc_status (*buffer_alloc)(tc_plugin_ctx *ctx, size_t bytes, tc_buffer **buf /* out */);
  void (*buffer_free)(tc_plugin_ctx *ctx, tc_buffer *buf);
  tc_status (*buffer_write)(tc_plugin_ctx *ctx, tc_buffer *dst, size_t offset, const void *src, size_t bytes);
  tc_status (*buffer_read)(tc_plugin_ctx *ctx, tc_buffer *src, size_t offset, void *dst, size_t bytes);

  /* TC_HANDOFF_KERNELS: compile all kernels of a graph at once. */
  tc_status (*compile_kernels)(tc_plugin_ctx *ctx, const tc_kernel_list *list, tc_executable **exe /* out */);
  /* Launches kernel `kernel` of exe. args: one per kernel buffer (kernel_desc.buffers order);
   * syms: values of s0..s{n_syms-1}. May return before the work is done (see synchronize). */
  tc_status (*launch)(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                      const int64_t *syms);

  /* TC_HANDOFF_GRAPH: take the whole primitive graph. */
  tc_status (*compile_graph)(tc_plugin_ctx *ctx, const tc_graph_desc *graph, tc_executable **exe /* out */);
  /* Runs the graph. inputs: strided views; outputs: contiguous, allocated by the host. */
  tc_status (*run_graph)(tc_plugin_ctx *ctx, tc_executable *exe, const int64_t *syms, const tc_tensor_ref *inputs,
                         const tc_tensor_ref *outputs);

  tc_status (*synchronize)(tc_plugin_ctx *ctx);
  void (*executable_free)(tc_plugin_ctx *ctx, tc_executable *exe);

  /* --- optional (NULL when absent) --- */
  /* Generated source of an executable (borrowed, valid until executable_free), for
   * TC_LOGS=output_code and the A/B bisector. */
  const char *(*executable_source)(tc_plugin_ctx *ctx, tc_executable *exe);
  tc_status (*capabilities)(tc_plugin_ctx *ctx, tc_capabilities *caps /* out */);
  /* Records a fixed launch sequence once and replays it as one unit (reduce-overhead: a CUDA
   * graph, one Vulkan command buffer). Buffers are fixed at record time; syms at replay. */
  tc_status (*record)(tc_plugin_ctx *ctx, tc_executable *exe, int32_t n_launches, const tc_launch *launches,
                      tc_recording **rec /* out */);
  tc_status (*replay)(tc_plugin_ctx *ctx, tc_recording *rec, const int64_t *syms);
  void (*recording_free)(tc_plugin_ctx *ctx, tc_recording *rec);
  /* ABI 1.1. Makes sure the work queued so far will run without any further call from the
   * host, without waiting for it (a queue submit, a stream's kernels already running; a plugin
   * may hold work back while the device is busy with earlier work, provided it starts it
   * itself). A device-memory host calls it at the end of every call instead of synchronize, so
   * the device runs while the host goes on; a plugin without it is synchronized instead. Whether or not flush exists, buffer_read, buffer_write
   * and buffer_free take effect after every launch made before them (the plugin waits or orders
   * them on its queue), so the host never needs synchronize for correctness. */
  tc_status (*flush)(tc_plugin_ctx *ctx);
  /* ABI 1.2. What the plugin knows about an executable it compiled (tc_executable_info): the
   * host reports it in `tc explain` and its compile stats. The host sets info->struct_size to
   * what it has room for; the plugin fills at most that much. */
  tc_status (*executable_info)(tc_plugin_ctx *ctx, tc_executable *exe, tc_executable_info *info);
} tc_plugin_api;

/* The one exported symbol. The host fills host (its version, services) and out->struct_size
 * (the size it has room for); the plugin fills at most that much of *out, sets out->struct_size
 * to what it filled, and returns TC_ERR_VERSION (with a message) when it cannot serve
 * host->abi_major. Must not allocate or touch devices: probe does that. */
typedef tc_status (*tc_plugin_query_fn)(const tc_host_api *host, tc_plugin_api *out);

#if defined(_WIN32)
#define TC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
}
#endif
#endif /* TC_PLUGIN_H */
