/*
 * tc_plugin.h — the contract between tc and its backend plugins, ABI 2.
 *
 * This header and tc_common.h beside it stand alone: C11 plus <stddef.h>, <stdint.h>,
 * <stdbool.h>. A plugin includes nothing else of tc (the plugin kit in plugin-api/kit is a
 * convenience it may link, never a requirement). docs/plugin-abi.md states the rules;
 * docs/primitives.md each primitive.
 *
 * Rules, in short:
 *  - One exported symbol: TC_PLUGIN_ENTRY_SYMBOL ("tc_plugin_query"). Nothing else is looked up.
 *  - Versioning: the major must match exactly (the host says its version first); the minor may
 *    differ either way.
 *  - Every struct that crosses the boundary begins with `size_t struct_size`. Fields are only
 *    appended. A reader uses a field only when struct_size covers it (TC_HAS_FIELD).
 *  - A struct that may grow is never embedded in another by value: single ones are referenced
 *    by pointer, arrays by pointer + count + element size (TC_ELEM indexes them).
 *  - Every entry point takes one args struct (so any call can gain an argument). Fields marked
 *    "out" are written by the callee; everything else is input.
 *  - Entry points return a tc_error * (NULL: success). Errors are made by the host's
 *    error_new service and owned by whoever holds them: a plugin returning one hands it to the
 *    host, which frees it.
 *  - Optional features hang off an extension chain (tc_ext_base), found by type.
 *  - Ids and enum values are fixed forever; never renumbered or reused.
 *  - No entry point may abort or exit the process.
 */
#ifndef TC_PLUGIN_H
#define TC_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_ABI_MAJOR 2
#define TC_ABI_MINOR 3
#define TC_PLUGIN_ENTRY_SYMBOL "tc_plugin_query"

/* Size of a struct up to and including `field` (PJRT's trick): what a writer of an older minor
 * version would have put in struct_size. */
#define TC_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type *)0)->last_field))
/* True when the struct pointed to by p is large enough to hold `field`. */
#define TC_HAS_FIELD(p, type, field) ((p)->struct_size >= TC_STRUCT_SIZE(type, field))
/* Element i of an array of ABI structs whose elements are elem_size bytes apart (the writer's
 * sizeof): a newer writer's larger elements still index correctly for an older reader. */
#define TC_ELEM(type, base, elem_size, i) ((const type *)((const char *)(base) + (size_t)(i) * (elem_size)))

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
  TC_PRIM_DIV = 35,       /* integers: truncates toward zero; division by zero gives 0 */
  TC_PRIM_POW = 36,       /* floats only */
  TC_PRIM_MAX = 37,       /* NaN propagates */
  TC_PRIM_MIN = 38,       /* NaN propagates */
  TC_PRIM_REMAINDER = 39, /* sign of the divisor (Python/PyTorch remainder) */
  TC_PRIM_EQ = 40,        /* comparisons produce bool */
  TC_PRIM_NE = 41,
  TC_PRIM_LT = 42,
  TC_PRIM_LE = 43,
  TC_PRIM_GT = 44,
  TC_PRIM_GE = 45,
  TC_PRIM_AND = 46, /* bool, or bitwise on integers */
  TC_PRIM_OR = 47,
  TC_PRIM_FMOD = 48, /* sign of the dividend (C fmod, torch.fmod); since ABI 2.1 */
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
  TC_SX_FLOORDIV = 5, /* floor(a / b); 0 when b is 0 */
  TC_SX_MOD = 6,      /* a mod b, result sign of b; 0 when b is 0 */
  TC_SX_MAX = 7,
  TC_SX_MIN = 8
} tc_sx_op;

typedef struct tc_size_expr {
  size_t struct_size;
  int32_t op;    /* tc_sx_op */
  int32_t a, b;  /* child ids (binary ops) */
  int64_t value; /* TC_SX_CONST: the constant; TC_SX_SYM: the symbol number */
} tc_size_expr;

/* ---------------------------------------------------------------------------------------------
 * Errors. An error is an opaque object made by the host (host->error_new), carrying a status
 * code and a message. Whoever holds one owns it: a plugin that returns an error from an entry
 * point hands it to the host, which frees it; an error a host service returns to the plugin is
 * the plugin's to return or to free with host->error_free.
 * ------------------------------------------------------------------------------------------- */
typedef struct tc_error tc_error;

/* ---------------------------------------------------------------------------------------------
 * Extension chain: optional features, each a struct that begins with tc_ext_base, linked by
 * `next` and found by `type`. Types are fixed numbers; vendors take theirs from
 * TC_EXT_VENDOR_FIRST up. A reader skips types it does not know.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_ext_type {
  TC_EXT_CAPABILITIES = 1, /* tc_capabilities_ext: what the backend accepts */
  TC_EXT_RECORD_REPLAY = 2, /* reserved: launch sequences recorded once, replayed (reduce-overhead) */
  TC_EXT_SERIALIZE = 3,     /* reserved: executables to and from bytes */
  TC_EXT_TUNING = 4,        /* reserved: variants of a kernel to time (max-autotune) */
  TC_EXT_VENDOR_FIRST = 0x10000
} tc_ext_type;

typedef struct tc_ext_base {
  size_t struct_size; /* of the whole extension struct */
  int32_t type;       /* tc_ext_type */
  const struct tc_ext_base *next; /* the next extension, or NULL */
} tc_ext_base;

/* The first extension of `type` in a chain, or NULL. */
static inline const tc_ext_base *tc_ext_find(const tc_ext_base *chain, int32_t type) {
  for (; chain; chain = chain->next)
    if (chain->type == type) return chain;
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Options, declared by the plugin, validated and handed over by the host.
 *
 * Users write options as "key=value" items, comma-separated, in tc_compile_options.options or
 * $TC_OPTIONS ("cpu.threads=2,vulkan.device=1"). Keys are "<prefix>.<name>", the prefix being
 * the plugin's option_prefix. The host parses them once, checks each key of this plugin's
 * prefix against the declared table (an unknown key or a bad value is an error naming the key,
 * the backend and the valid keys), and hands the plugin every declared option of the scope in
 * question, set or defaulted, as tc_option values. Contexts are keyed by their CONTEXT-scope
 * options: different values get different contexts (a value equal to the default is the
 * default's context). A context lives until the process ends; release is called only for one
 * the host could not keep.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_option_type {
  TC_OPTION_BOOL = 0,   /* "0|1|true|false|on|off|yes|no", any case; handed over as "0" or "1" */
  TC_OPTION_INT = 1,    /* a decimal integer within [min, max] */
  TC_OPTION_FLOAT = 2,  /* a decimal number */
  TC_OPTION_STRING = 3, /* any text without ',', up to 255 bytes */
  TC_OPTION_ENUM = 4    /* one of `values` ("64|128") */
} tc_option_type;

typedef enum tc_option_scope {
  TC_OPTION_CONTEXT = 0, /* read by init: contexts are keyed by these */
  TC_OPTION_COMPILE = 1  /* read by compile */
} tc_option_scope;

typedef struct tc_option_decl {
  size_t struct_size;
  const char *name;          /* full key: "cpu.threads" */
  int32_t type;              /* tc_option_type */
  int32_t scope;             /* tc_option_scope */
  const char *default_value; /* as a user would write it, or NULL (unset: the value is NULL) */
  int64_t min, max;          /* TC_OPTION_INT: inclusive range */
  const char *values;        /* TC_OPTION_ENUM: the allowed values, '|'-separated; else a hint */
  const char *meaning;       /* one line, for `tc options BACKEND` */
} tc_option_decl;

/* One validated option, as handed to init and compile. Strings borrowed for the call. */
typedef struct tc_option {
  size_t struct_size;
  const char *name;  /* full key, as declared */
  const char *value; /* normalized text (BOOL: "0"/"1"), or NULL when unset with no default */
  bool set;          /* the user gave it (not the default) */
} tc_option;

/* ---------------------------------------------------------------------------------------------
 * Host services, filled by tc, passed to query, probe and init. Valid while the plugin is
 * loaded; a plugin may keep the pointer. Every service may be called from any plugin thread.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_log_level { TC_LOG_DEBUG = 0, TC_LOG_INFO = 1, TC_LOG_WARN = 2, TC_LOG_ERROR = 3 } tc_log_level;

/* A disk-cache entry held by the plugin between cache_get and cache_release. */
typedef struct tc_cache_entry tc_cache_entry;

typedef struct tc_cache_get_args {
  size_t struct_size;
  const char *key;      /* what the entry is: any text naming its full content (the host adds
                           the plugin's name and version and hashes the whole) */
  size_t key_len;
  const char *kind;     /* a short tag ("so", "spv", "cc-version"): the file suffix */
  tc_cache_entry *entry; /* out: NULL on a miss (or when caching is off) */
  const void *data;     /* out: the verified bytes, valid until cache_release */
  size_t size;          /* out */
  const char *path;     /* out: a path that opens exactly these verified bytes (for dlopen),
                           valid until cache_release */
} tc_cache_get_args;

typedef struct tc_cache_put_args {
  size_t struct_size;
  const char *key; /* as in tc_cache_get_args */
  size_t key_len;
  const char *kind;
  const void *data; /* the bytes to store, or NULL to store the file at from_path */
  size_t size;
  const char *from_path;
} tc_cache_put_args;

typedef struct tc_host_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the host's ABI version */
  void *host_ctx;                /* pass back to every service */

  /* Errors: a new error with a copy of message. Never NULL: out of memory, it is a shared
   * out-of-memory error (error_free ignores it). */
  tc_error *(*error_new)(void *host_ctx, tc_status code, const char *message);
  void (*error_free)(void *host_ctx, tc_error *err);
  tc_status (*error_code)(void *host_ctx, const tc_error *err);
  const char *(*error_message)(void *host_ctx, const tc_error *err); /* valid while err lives */
  /* An asynchronous failure of work the host submitted with call_id (tc_launch_args,
   * tc_run_graph_args): takes err. The host prints it at once and returns it from the next call
   * on this backend that waits or queues work (a read, synchronize, the end of the next call),
   * naming the failed call and its graph. */
  void (*report_async_error)(void *host_ctx, uint64_t call_id, tc_error *err);

  /* Logs a line under a TC_LOGS category ("output_code", "cache", ...). Warnings and errors
   * are always printed. */
  void (*log)(void *host_ctx, tc_log_level level, const char *category, const char *message);
  /* True when TC_LOGS enables `category`; lets a plugin skip formatting. */
  bool (*log_enabled)(void *host_ctx, const char *category);

  /* The disk cache: content-keyed, written atomically, checksummed and verified on every read
   * (a bad entry is removed and reported as a miss). Shared rules for every backend. */
  tc_error *(*cache_get)(void *host_ctx, tc_cache_get_args *args);
  tc_error *(*cache_put)(void *host_ctx, const tc_cache_put_args *args);
  void (*cache_release)(void *host_ctx, tc_cache_entry *entry);
  /* A private scratch directory for this process (created on first call, removed at exit), for
   * compilers that need files; NULL when none could be made. */
  const char *(*scratch_dir)(void *host_ctx);
} tc_host_api;

/* ---------------------------------------------------------------------------------------------
 * Probing: availability without side effects.
 * ------------------------------------------------------------------------------------------- */
typedef struct tc_device_desc {
  size_t struct_size;
  const char *name; /* e.g. "NVIDIA H200" */
  int32_t type;     /* tc_device_type */
  uint64_t memory_bytes;
} tc_device_desc;

typedef struct tc_probe_args {
  size_t struct_size;
  const tc_host_api *host;
  bool available;         /* out */
  const char *reason;     /* out: why not available, or a note when available */
  int32_t score;          /* out: higher wins for backend "auto"; 0..100 */
  int32_t n_devices;      /* out */
  const tc_device_desc *devices; /* out: n_devices elements, device_size bytes apart */
  size_t device_size;     /* out */
  /* Lifetime of reason and devices: plugin memory, valid until the next probe or unload. */
} tc_probe_args;

/* ---------------------------------------------------------------------------------------------
 * Memory. A TC_MEMORY_HOST plugin works on plain host pointers: the host allocates, and a
 * tc_buffer* is a host pointer (cast). A TC_MEMORY_DEVICE plugin allocates its own buffers and
 * moves bytes with buffer_write / buffer_read.
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
  const int32_t *shape; /* rank size-expression ids */
} tc_value_type;

typedef struct tc_prim_node {
  size_t struct_size;
  int32_t prim;             /* tc_prim */
  const tc_value_type *out; /* the node's result type */
  int32_t n_inputs;
  const int32_t *inputs; /* value ids */
  int32_t n_iattrs;
  const int64_t *iattrs; /* per-prim integer attributes (docs/primitives.md) */
  double fattr;          /* CONSTANT: value; PAD: pad value */
} tc_prim_node;

/* Everything a graph descriptor points to is borrowed for the compile call. */
typedef struct tc_graph_desc {
  size_t struct_size;
  const char *name;
  int32_t n_exprs;
  const tc_size_expr *exprs;
  size_t expr_size;
  int32_t n_syms;
  int32_t n_inputs;
  const tc_value_type *inputs;
  size_t input_size;
  int32_t n_nodes;
  const tc_prim_node *nodes;
  size_t node_size;
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
 *
 * The scheduler's decisions travel with the ops (so generators need not re-derive them):
 * `reuse` on a LOAD names an earlier op of an earlier inner loop holding the same element (a
 * LOAD of it, or the STORE that wrote it, with no other store to the buffer in between): a
 * generator that keeps that op's value per row may use it instead of reading memory.
 * TC_KOP_OVERWRITTEN on a STORE in an inner loop says a later store (in the same or a later
 * inner loop) writes the same element again and every load of the buffer in between has `reuse`
 * set: a generator that honours every such reuse may drop the store. TC_KOP_ROW_VALUE marks a
 * per-element value of one inner loop that a later inner loop reads, as an operand or through
 * `reuse` (keep it per row, or recompute it); a REDUCE's result (one value per row) is never
 * marked.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_kernel_kind {
  TC_KERNEL_LOOP = 0,
  TC_KERNEL_MATMUL = 1,
  TC_KERNEL_ATTENTION = 2 /* ABI 2.2: see tc_attention_desc */
} tc_kernel_kind;

typedef enum tc_kop_kind {
  TC_KOP_LOAD = 0,      /* value = buffer[index] */
  TC_KOP_CONST = 1,     /* value = fconst (floats, bool) or iconst (integers) */
  TC_KOP_PRIM = 2,      /* elementwise prim (unary/binary/WHERE/CONVERT) of args */
  TC_KOP_INDEX = 3,     /* value = index expression itself, as i64 (iota) */
  TC_KOP_RANDOM = 4,    /* uniform [0,1) f32: Philox(key = iconst, counter = index) */
  TC_KOP_REDUCE = 5,    /* fold args[0] over the op's inner loop with `prim` */
  TC_KOP_STORE = 6,     /* buffer[index] = args[0] */
  TC_KOP_STORE_ADD = 7, /* buffer[index] += args[0]; atomic where the outer domain may race */
  TC_KOP_ACC = 8,       /* MATMUL epilogue: the product's value at (batch, m, n) */
  TC_KOP_INDEX_CHECK = 9 /* ABI 2.3: bool value = (0 <= args[0] < args[1]), both i64 (an index
                            value and the size of the dim it indexes); where false, the first
                            such failure of the call is recorded in `buffer` (a tc_index_error
                            record, at the buffer's start) with site `iconst`. The kernel keeps
                            the prims' rule with the value (gather reads 0, scatter skips). */
} tc_kop_kind;

typedef enum tc_kop_flag {
  TC_KOP_OVERWRITTEN = 1u << 0, /* STORE: see above */
  TC_KOP_ROW_VALUE = 1u << 1    /* a value read by a later inner loop of the kernel */
} tc_kop_flag;

typedef struct tc_index {
  size_t struct_size;
  int32_t offset;                   /* expr id */
  int32_t n_vars;                   /* entries in strides: n_outer + 1 */
  const int32_t *strides;           /* expr id per var; -1 means 0 */
  int32_t indirect;                 /* op id of an integer value, or -1 */
  int32_t indirect_stride;          /* expr id */
} tc_index;

typedef struct tc_kop {
  size_t struct_size;
  int32_t kind;    /* tc_kop_kind */
  int32_t dtype;   /* result dtype (STORE: the stored dtype) */
  int32_t loop;    /* -1: once per outer point; k >= 0: inside inner loop k */
  int32_t prim;    /* TC_KOP_PRIM: the prim; TC_KOP_REDUCE: REDUCE_SUM/MAX/MIN/PROD, ARGMAX/MIN */
  int32_t n_args;
  const int32_t *args;   /* operand op ids (earlier ops) */
  int32_t buffer;        /* LOAD/STORE/STORE_ADD: index into the kernel's buffers */
  const tc_index *index; /* LOAD/STORE/STORE_ADD/INDEX/RANDOM; NULL otherwise */
  double fconst;         /* CONST (float/bool) */
  int64_t iconst;        /* CONST (integer); RANDOM: the key (seed) */
  int32_t reuse;         /* LOAD: see above; -1 none */
  uint32_t flags;        /* tc_kop_flag bits */
} tc_kop;

typedef enum tc_buffer_role { TC_BUF_INPUT = 0, TC_BUF_OUTPUT = 1, TC_BUF_INOUT = 2 } tc_buffer_role;

/* ABI 2.3: where a compiled graph records the first out-of-range index of a call (gather,
 * scatter_add: PyTorch raises there, the prims read 0 / skip). A fixed memory layout, not a
 * struct that crosses the boundary by pointer: four little-endian 64-bit words at the start of
 * the record buffer, which the host zeroes before the call and reads after it (host memory) or
 * at the next wait for the backend's work (device memory). A kernel that finds an index out of
 * range swaps `flag` from 0 to 1 atomically (a compare-and-swap on its low 32-bit word suffices:
 * the high word stays 0) and, only when it won, writes the other three: concurrent threads and
 * kernels agree on one error. Handed over as a kernel buffer (dtype i64, role OUTPUT, numel 4)
 * that TC_KOP_INDEX_CHECK ops name, or as tc_run_graph_args.index_error; only to plugins of
 * ABI 2.3 or newer, and only for graphs with GATHER or SCATTER_ADD. */
typedef struct tc_index_error {
  int64_t flag;  /* 0: no error; 1: recorded */
  int64_t site;  /* TC_KOP_INDEX_CHECK's iconst; for run_graph, the GATHER/SCATTER_ADD node's index */
  int64_t value; /* the index value found */
  int64_t bound; /* the size of the dim it indexes: valid values are 0 .. bound - 1 */
} tc_index_error;

typedef struct tc_kbuffer {
  size_t struct_size;
  const char *name; /* "in_x", "out_y", "buf3": for readable generated code */
  int32_t dtype;
  int32_t role;  /* tc_buffer_role */
  int32_t numel; /* expr id: element count (for bounds, staging and checking) */
} tc_kbuffer;

/* MATMUL kernels: C[b2, b, m, n] = epilogue(sum_k A[b2, b, m, k] * B[b2, b, k, n]), A's element
 * at a_offset + b2*a_stride_batch2 + b*a_stride_batch + m*a_stride_m + k*a_stride_k (likewise B
 * and C; expr ids, in elements; an offset or stride of -1 means 0). With batch_levels 1 there is no b2 (batch2 is -1) and the outer
 * domain is (batch, m, n); with 2 it is (batch2, batch, m, n). The epilogue is the kernel's ops
 * over the outer domain, TC_KOP_ACC being the product's value; it ends in a STORE. With no ops,
 * the product is stored to buffer c with c's strides. */
typedef struct tc_matmul_desc {
  size_t struct_size;
  int32_t a, b, c;        /* buffer indices of the operands and the product's buffer */
  int32_t batch, m, n, k; /* expr ids */
  int32_t a_offset, a_stride_batch, a_stride_m, a_stride_k;
  int32_t b_offset, b_stride_batch, b_stride_k, b_stride_n;
  int32_t c_offset, c_stride_batch, c_stride_m, c_stride_n;
  int32_t batch_levels; /* 1 or 2 */
  int32_t batch2;       /* expr id, or -1 */
  int32_t a_stride_batch2, b_stride_batch2, c_stride_batch2;
} tc_matmul_desc;

/* ATTENTION kernels (ABI 2.2; handed only to a plugin whose capabilities extension sets the
 * kind's bit): scaled dot-product attention over one (batch2, batch) pair of heads,
 *   O[b2, b, i, :] = sum_j softmax_j(mask(scale * Q[b2, b, i, :] . K[b2, b, j, :])) * V[b2, b, j, :]
 * for queries i < tq and keys j < tk, exactly the graph softmax(masked_fill(q.kT * scale, mask,
 * -inf), -1) . v it replaces (PyTorch's results: a row whose keys are all masked is NaN, NaN
 * propagates). Q's element (b2, b, i, e) is at q_offset + b2*q_stride_batch2 + b*q_stride_batch
 * + i*q_stride_t + e*q_stride_d (expr ids, in elements; K's (b2, b, j, e), V's and O's
 * (b2, b, ·, f) likewise); batch2 is -1 with one batch level (its strides -1 too). causal != 0
 * masks key j of query i when j - i >= causal_offset (1: the usual causal mask, keys after
 * their query). d and dv are constant sizes (at most 256); the dtype is f32. The kernel has
 * four buffers (q, k, v, o: indices), no ops and no outer domain. */
typedef struct tc_attention_desc {
  size_t struct_size;
  int32_t q, k, v, o;                /* buffer indices */
  int32_t batch2, batch, tq, tk;     /* expr ids (batch2: -1 for one level) */
  int32_t d, dv;                     /* expr ids of constants: q/k head size, v/o head size */
  int32_t q_offset, q_stride_batch2, q_stride_batch, q_stride_t, q_stride_d;
  int32_t k_offset, k_stride_batch2, k_stride_batch, k_stride_t, k_stride_d;
  int32_t v_offset, v_stride_batch2, v_stride_batch, v_stride_t, v_stride_d;
  int32_t o_offset, o_stride_batch2, o_stride_batch, o_stride_t, o_stride_d;
  double scale;
  int32_t causal;
  int64_t causal_offset;
} tc_attention_desc;

typedef struct tc_kernel_desc {
  size_t struct_size;
  const char *name; /* what it fuses, e.g. "layer_norm_gelu_0" */
  int32_t kind;     /* tc_kernel_kind */
  int32_t n_outer;
  const int32_t *outer; /* n_outer expr ids; MATMUL: (batch, m, n) or (batch2, batch, m, n) */
  int32_t inner;        /* expr id of the reduction extent, or -1 */
  int32_t n_buffers;
  const tc_kbuffer *buffers;
  size_t buffer_size;
  int32_t n_ops;
  const tc_kop *ops;
  size_t op_size;
  const tc_matmul_desc *matmul; /* MATMUL only; NULL otherwise */
  const tc_attention_desc *attention; /* ABI 2.2: ATTENTION only; NULL otherwise */
} tc_kernel_desc;

/* The kernels of one graph, compiled together (one translation unit / module). All kernels
 * share the expression table and symbols. Borrowed for the compile call. */
typedef struct tc_kernel_list {
  size_t struct_size;
  const char *name; /* the graph's name */
  int32_t n_exprs;
  const tc_size_expr *exprs;
  size_t expr_size;
  int32_t n_syms;
  int32_t n_kernels;
  const tc_kernel_desc *kernels;
  size_t kernel_size;
} tc_kernel_list;

/* One buffer argument at launch: the buffer and a byte offset into it. */
typedef struct tc_buffer_arg {
  size_t struct_size;
  tc_buffer *buffer;
  size_t byte_offset;
} tc_buffer_arg;

/* ---------------------------------------------------------------------------------------------
 * Entry points' arguments. `ctx` is the context init made. Borrowed: everything passed in,
 * for the duration of the call, unless a field says otherwise.
 * ------------------------------------------------------------------------------------------- */
typedef struct tc_init_args {
  size_t struct_size;
  const tc_host_api *host; /* valid for the context's life */
  int32_t device;          /* -1: the plugin's choice (its own options); else an index into probe's devices */
  int32_t n_options;
  const tc_option *options; /* every CONTEXT-scope option the plugin declared */
  size_t option_size;
  tc_plugin_ctx *ctx; /* out */
} tc_init_args;

typedef struct tc_release_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
} tc_release_args;

typedef struct tc_buffer_alloc_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  size_t bytes;
  tc_buffer *buffer; /* out */
} tc_buffer_alloc_args;

typedef struct tc_buffer_free_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_buffer *buffer;
} tc_buffer_free_args;

/* buffer_write copies host -> buffer, buffer_read buffer -> host; both take effect after every
 * launch made before them (the plugin waits or orders them on its queue). */
typedef struct tc_buffer_copy_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_buffer *buffer;
  size_t offset; /* bytes into buffer */
  void *host;    /* buffer_read: destination; buffer_write: source (read only) */
  size_t bytes;
} tc_buffer_copy_args;

typedef struct tc_compile_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  const tc_kernel_list *kernels; /* TC_HANDOFF_KERNELS: the kernels; else NULL */
  const tc_graph_desc *graph;    /* TC_HANDOFF_GRAPH: the graph; else NULL */
  int32_t mode;                  /* tc_mode */
  int32_t n_options;
  const tc_option *options; /* every COMPILE-scope option the plugin declared */
  size_t option_size;
  tc_executable *exe; /* out */
} tc_compile_args;

typedef struct tc_launch_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_executable *exe;
  int32_t kernel; /* index into the compiled kernel list */
  int32_t n_args;
  const tc_buffer_arg *args; /* one per kernel buffer, in tc_kernel_desc.buffers order */
  size_t arg_size;
  int32_t n_syms;
  const int64_t *syms; /* values of s0..s{n_syms-1} */
  uint64_t call_id;    /* the host call this launch belongs to (report_async_error) */
} tc_launch_args;

typedef struct tc_run_graph_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_executable *exe;
  int32_t n_syms;
  const int64_t *syms;
  int32_t n_inputs;
  const tc_tensor_ref *inputs; /* strided views */
  size_t input_size;
  int32_t n_outputs;
  const tc_tensor_ref *outputs; /* contiguous, allocated by the host */
  size_t output_size;
  uint64_t call_id;
  /* ABI 2.3 (TC_HAS_FIELD): a tc_index_error record, zeroed, where the run records its first
   * out-of-range GATHER / SCATTER_ADD index (site: the node's index); NULL: no record wanted. */
  tc_buffer *index_error;
} tc_run_graph_args;

/* synchronize waits for all queued work; flush makes sure queued work runs without any further
 * call from the host, without waiting (a plugin may hold work back while the device is busy
 * with earlier work, provided it starts it itself). */
typedef struct tc_queue_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
} tc_queue_args;

typedef struct tc_executable_free_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_executable *exe;
} tc_executable_free_args;

/* What the plugin knows about an executable it compiled. */
typedef struct tc_executable_info_args {
  size_t struct_size;
  tc_plugin_ctx *ctx;
  tc_executable *exe;
  const char *source;     /* out: generated source, or NULL; valid until executable_free */
  size_t source_len;      /* out */
  bool from_cache;        /* out: served from the disk cache: no compiler ran */
  double compile_seconds; /* out: the plugin's own time compiling it */
} tc_executable_info_args;

/* ---------------------------------------------------------------------------------------------
 * Extensions the host consults.
 * ------------------------------------------------------------------------------------------- */
/* TC_EXT_CAPABILITIES: what the backend accepts. The core runs a declined node on a fallback
 * backend (debug-eager unless told otherwise), copying values between them, and logs it; under
 * fullgraph a declined node is an error naming it. Without this extension, everything is
 * accepted. */
typedef struct tc_capabilities_ext {
  tc_ext_base base;
  uint32_t dtypes;       /* bit (1u << tc_dtype) per accepted dtype (of any operand or result) */
  int32_t n_prim_words;  /* prims below n_prim_words * 64 are described by the bits */
  const uint64_t *prims; /* bit (id % 64) of word (id / 64) per accepted prim id */
  uint32_t kernel_kinds; /* bit (1u << tc_kernel_kind) per accepted kernel kind */
  /* Optional, may be NULL (appended after 2.3; read only when struct_size covers it): the kernel
   * kinds accepted under these COMPILE-scope options (the plugin's declared ones, as compile
   * gets them), a subset of kernel_kinds, so an option can decline an opt-in kind
   * (inductor-cpu's cpu.attention=unfused). Pure: called by the host before scheduling, from
   * any thread, without a context. */
  uint32_t (*kernel_kinds_under)(const tc_option *options, int32_t n_options, size_t option_size);
} tc_capabilities_ext;

/* ---------------------------------------------------------------------------------------------
 * The plugin's table.
 *
 * Threading: query and probe may be called from any thread; the host calls probe of one plugin
 * one at a time. Every other entry on one context is serialized by the host (one lock per
 * context), unless the plugin sets TC_PLUGIN_THREAD_SAFE, promising that its entries may be
 * called concurrently on one context (compile included) and that it orders its own queue.
 * ------------------------------------------------------------------------------------------- */
typedef enum tc_handoff { TC_HANDOFF_KERNELS = 1u << 0, TC_HANDOFF_GRAPH = 1u << 1 } tc_handoff;
typedef enum tc_plugin_flag { TC_PLUGIN_THREAD_SAFE = 1u << 0 } tc_plugin_flag;

typedef struct tc_plugin_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the plugin's ABI version */
  const char *name;              /* "inductor-cpu": static string */
  const char *version;           /* "0.1.0": static string */
  const char *description;       /* one line: static string */
  uint32_t handoff;              /* tc_handoff bits */
  int32_t memory;                /* tc_memory_kind */
  uint32_t flags;                /* tc_plugin_flag bits */
  const char *option_prefix;     /* "cpu": the prefix of this plugin's option keys; static */
  int32_t n_options;
  const tc_option_decl *options; /* static table: n_options elements, option_size bytes apart */
  size_t option_size;
  const tc_ext_base *extensions; /* static chain of optional features, or NULL */

  /* --- required --- */
  tc_error *(*probe)(tc_probe_args *args);
  tc_error *(*init)(tc_init_args *args);
  void (*release)(const tc_release_args *args);
  /* One of: args->kernels (TC_HANDOFF_KERNELS) or args->graph (TC_HANDOFF_GRAPH). */
  tc_error *(*compile)(tc_compile_args *args);
  void (*executable_free)(const tc_executable_free_args *args);
  tc_error *(*synchronize)(const tc_queue_args *args);

  /* --- required with TC_HANDOFF_KERNELS --- */
  /* May return before the work is done (see flush). */
  tc_error *(*launch)(const tc_launch_args *args);
  /* --- required with TC_HANDOFF_GRAPH --- */
  tc_error *(*run_graph)(const tc_run_graph_args *args);

  /* --- required with TC_MEMORY_DEVICE (NULL for host-memory plugins) --- */
  tc_error *(*buffer_alloc)(tc_buffer_alloc_args *args);
  void (*buffer_free)(const tc_buffer_free_args *args);
  tc_error *(*buffer_write)(const tc_buffer_copy_args *args);
  tc_error *(*buffer_read)(const tc_buffer_copy_args *args);

  /* --- optional (NULL when absent) --- */
  /* A device-memory host calls it at the end of every call instead of synchronize, so the
   * device runs while the host goes on; a plugin without it is synchronized instead. */
  tc_error *(*flush)(const tc_queue_args *args);
  tc_error *(*executable_info)(tc_executable_info_args *args);
} tc_plugin_api;

/* The arguments of the one exported symbol. The host says its version first (abi_major,
 * abi_minor: at these offsets in every major from 2 on); the plugin answers TC_ERR_VERSION (an
 * error from host->error_new) when it cannot serve that major, else fills at most table_size
 * bytes of *table (table->struct_size = what it filled). Must not allocate or touch devices:
 * probe does that.
 *
 * The first 32 bytes are laid out as ABI 1's tc_host_api (struct_size, abi_major, abi_minor,
 * host_ctx, set_error), which a 1.x plugin takes this struct for: it reads the host's major,
 * refuses through legacy_set_error, and the host lists it as built for ABI 1 instead of calling
 * into a table it does not have. 2.x plugins ignore the two legacy fields. */
typedef struct tc_query_args {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the host's ABI version */
  void *legacy_ctx;                                    /* for a 1.x plugin only */
  void (*legacy_set_error)(void *legacy_ctx, const char *message); /* for a 1.x plugin only */
  const tc_host_api *host;
  tc_plugin_api *table; /* out: the host's buffer */
  size_t table_size;    /* the room the host has */
} tc_query_args;

typedef tc_error *(*tc_plugin_query_fn)(tc_query_args *args);

#if defined(_WIN32)
#define TC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
}
#endif
#endif /* TC_PLUGIN_H */
