/*
 * tc_kit.h — the plugin kit: helpers any tc plugin may link (libtc_kit.a), in tree or out.
 * Never required: tc_plugin.h alone is the contract. The kit is the one implementation of what
 * every backend needs, so no plugin writes it again:
 *   - strings for code generation (tck_str),
 *   - dtype names and sizes, prim names, reduction identities,
 *   - accessors for the ABI's arrays and one validator of kernel lists and graphs,
 *   - size-expression evaluation and the emitter of size expressions and affine indices
 *     shared by the C, GLSL and CUDA generators (the syntax differs, the structure does not),
 *   - errors, logs and options through the host's services, and the query handshake,
 *   - the checksummed disk cache (the host offers it to plugins as a service; the host links
 *     the kit for it), SHA-256.
 * Everything here is thread-safe unless it says otherwise, allocates with malloc, and never
 * aborts. Names: tck_<noun>_<verb>.
 */
#ifndef TC_KIT_H
#define TC_KIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TCK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TCK_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------- strings (str.c)
 * A growable string. Start from (tck_str){0}. Allocation failure is sticky: later appends do
 * nothing and tck_str_take returns NULL. */
typedef struct tck_str {
  char *data;
  size_t len, cap;
  bool oom;
} tck_str;
void tck_str_printf(tck_str *s, const char *fmt, ...) TCK_PRINTF(2, 3);
void tck_str_vprintf(tck_str *s, const char *fmt, va_list ap);
void tck_str_puts(tck_str *s, const char *text);
void tck_str_putn(tck_str *s, const char *text, size_t n);
void tck_str_indent(tck_str *s, int depth); /* two spaces per level */
/* The string (caller frees), "" for an empty one, NULL when memory ran out; resets s. */
char *tck_str_take(tck_str *s);
void tck_str_free(tck_str *s);
/* A malloc'd copy of s ("" for NULL); NULL when out of memory. */
char *tck_strdup(const char *s);

/* ---------------------------------------------------------------- dtypes and prims (names.c) */
size_t tck_dtype_size(int32_t dtype);          /* 0 for an unknown dtype */
const char *tck_dtype_name(int32_t dtype);     /* "f32", ...; "dtype?" when unknown */
bool tck_dtype_is_float(int32_t dtype);        /* f32, f64 (f16, bf16 reserved) */
bool tck_dtype_is_int(int32_t dtype);          /* i32, i64 */
const char *tck_prim_name(int32_t prim);       /* "add", "reduce_sum", ...; "prim?" when unknown */
/* The ABI minor version that introduced prim p (0 for 2.0's prims): a plugin of an older minor
 * cannot know p, so the host runs p elsewhere. */
uint32_t tck_prim_abi_minor(int32_t p);
/* Unary, binary, WHERE and CONVERT: one element out per element in (the one list of them). */
bool tck_prim_is_elementwise(int32_t p);
/* exp, log, sin, cos, tanh, erf, pow: the elementwise prims that cost a library call or a long
 * polynomial per element (what the scheduler and code generators weigh as heavy). */
bool tck_prim_is_transcendental(int32_t p);
const char *tck_status_name(tc_status s);      /* "invalid argument", ... */
/* The value a reduction starts from: 0 (sum), 1 (prod), -inf / +inf (max / min of floats),
 * the type's lowest / highest value (max / min of integers; bool: 0 / 1). */
double tck_reduce_identity_f(int32_t reduce_prim, int32_t dtype);
int64_t tck_reduce_identity_i(int32_t reduce_prim, int32_t dtype);
/* Every prim of this ABI (tc_prim, 1..TC_PRIM_MATMUL) as a capabilities bitmap
 * (tc_capabilities_ext.prims, n_prim_words 2): what a backend that runs them all declares. */
extern const uint64_t tck_prims_all[2];

/* Row-major strides (in elements) of a contiguous tensor of these sizes; dims of size 0 or 1
 * count as 1, as PyTorch's do. */
void tck_contiguous_strides(int32_t rank, const int64_t *sizes, int64_t *strides /* out */);

/* ---------------------------------------------------------------- accessors (inline)
 * Arrays of ABI structs are strided by the writer's element size. */
static inline const tc_size_expr *tck_list_expr(const tc_kernel_list *l, int32_t i) {
  return TC_ELEM(tc_size_expr, l->exprs, l->expr_size, i);
}
static inline const tc_kernel_desc *tck_list_kernel(const tc_kernel_list *l, int32_t i) {
  return TC_ELEM(tc_kernel_desc, l->kernels, l->kernel_size, i);
}
static inline const tc_kop *tck_kernel_op(const tc_kernel_desc *k, int32_t i) {
  return TC_ELEM(tc_kop, k->ops, k->op_size, i);
}
static inline const tc_kbuffer *tck_kernel_buffer(const tc_kernel_desc *k, int32_t i) {
  return TC_ELEM(tc_kbuffer, k->buffers, k->buffer_size, i);
}
static inline const tc_size_expr *tck_graph_expr(const tc_graph_desc *g, int32_t i) {
  return TC_ELEM(tc_size_expr, g->exprs, g->expr_size, i);
}
static inline const tc_prim_node *tck_graph_node(const tc_graph_desc *g, int32_t i) {
  return TC_ELEM(tc_prim_node, g->nodes, g->node_size, i);
}
static inline const tc_value_type *tck_graph_input(const tc_graph_desc *g, int32_t i) {
  return TC_ELEM(tc_value_type, g->inputs, g->input_size, i);
}
/* The stride expr id of var in ix, -1 (zero) past its n_vars. */
static inline int32_t tck_index_stride(const tc_index *ix, int32_t var) {
  return ix && var >= 0 && var < ix->n_vars ? ix->strides[var] : -1;
}
/* The value type of value id v (inputs first, then nodes), or NULL when out of range. */
const tc_value_type *tck_graph_value_type(const tc_graph_desc *g, int32_t v);

/* ---------------------------------------------------------------- validation (validate.c)
 * Checks what a code generator relies on: struct sizes, element sizes, every id in range
 * (exprs children before parents, op args earlier than the op, buffers, loops consecutive and
 * increasing, index n_vars = n_outer + 1, reuse earlier, matmul present iff MATMUL), dtypes
 * known. TC_OK, or TC_ERR_INVALID_ARGUMENT / TC_ERR_VERSION with a message in err naming the
 * kernel, op and field. */
tc_status tck_kernel_list_validate(const tc_kernel_list *l, char *err, size_t cap);
tc_status tck_graph_validate(const tc_graph_desc *g, char *err, size_t cap);

/* ---------------------------------------------------------------- size expressions (expr.c) */
/* Evaluates every node of a table into vals[0..n-1] given symbol values (floor division and
 * modulo by zero give 0; arithmetic wraps). The table should be validated (children earlier,
 * symbols < the number of syms): a bad child reads as 0. */
void tck_size_eval_all(const tc_size_expr *exprs, size_t expr_size, int32_t n, const int64_t *syms,
                       int64_t *vals);
/* One binary size operation (tc_sx_op ADD..MIN) on two values, as tck_size_eval_all does it:
 * what folding a constant at trace time and evaluating at run time must agree on. */
int64_t tck_size_apply(int32_t op, int64_t a, int64_t b);

/* How a target language writes size arithmetic. */
typedef struct tck_expr_syntax {
  const char *int_type;     /* declared type of locals: "int64_t", "int", "long long" */
  const char *sym_format;   /* printf format of symbol k: "s%d", "p.s%d" */
  const char *local_format; /* printf format of the local holding expr id: "x%d" */
  const char *floordiv, *mod, *max, *min; /* functions of two ints: "tc_floordiv", ... */
  const char *const_suffix; /* after integer literals: "" or "LL" */
} tck_expr_syntax;

/* Ready-made syntaxes. C: exactly inductor-cpu's text ("const int64_t x7 = tc_floordiv(x3, s0);").
 * GLSL: int locals e<id>, symbols p.s<k>, tc_floordiv / tc_floormod / max / min (GLSL >= 4.20:
 * const locals with run-time initializers). CUDA: long long locals, LL literals. */
extern const tck_expr_syntax tck_syntax_c, tck_syntax_glsl, tck_syntax_cuda;

/* The expressions an emitter needs, over one expression table. */
typedef struct tck_exprs {
  const tc_size_expr *exprs;
  size_t expr_size;
  int32_t n;
  const tck_expr_syntax *syntax;
  bool *used; /* n flags: which expr ids the generated code refers to (tck_exprs_mark) */
} tck_exprs;

/* used = calloc(n); false when out of memory. */
bool tck_exprs_init(tck_exprs *x, const tc_size_expr *exprs, size_t expr_size, int32_t n,
                    const tck_expr_syntax *syntax);
void tck_exprs_free(tck_exprs *x);
/* Marks id and its children used. */
void tck_exprs_mark(tck_exprs *x, int32_t id);
/* Marks every expr an index refers to. */
void tck_exprs_mark_index(tck_exprs *x, const tc_index *ix);
/* Marks every expr a matmul descriptor refers to: extents, offsets, strides (the second batch
 * level's where the host filled it and it is in use). */
void tck_exprs_mark_matmul(tck_exprs *x, const tc_matmul_desc *mm);
/* Marks every expr an attention descriptor refers to: extents, head sizes, offsets, strides. */
void tck_exprs_mark_attention(tck_exprs *x, const tc_attention_desc *a);
/* Declares one local per used non-leaf expr, children first ("const int64_t x7 = x3*s0;"). */
void tck_exprs_declare(tck_str *s, const tck_exprs *x, int depth);
/* A reference to expr id: a literal, a symbol, or its local ("0" for id -1). */
void tck_exprs_ref(tck_str *s, const tck_exprs *x, int32_t id);
/* True when expr id is the constant v (id -1 is the constant 0). */
bool tck_exprs_is_const(const tck_exprs *x, int32_t id, int64_t v);
/* An affine index "off + v0*x3 + v1" over var_names (n_vars of them; a var named "0" is
 * skipped), without the indirect term. "0" when every term is zero. */
void tck_index_emit(tck_str *s, const tck_exprs *x, const tc_index *ix, const char *const *var_names);

/* ---------------------------------------------------------------- host services (host.c)
 * Thin wrappers that format a message and call the host; safe with a NULL host (they then do
 * nothing, and tck_error returns NULL). */
tc_error *tck_error(const tc_host_api *h, tc_status code, const char *fmt, ...) TCK_PRINTF(3, 4);
tc_error *tck_verror(const tc_host_api *h, tc_status code, const char *fmt, va_list ap);
bool tck_log_on(const tc_host_api *h, const char *category);
void tck_log(const tc_host_api *h, tc_log_level level, const char *category, const char *fmt, ...) TCK_PRINTF(4, 5);
/* The query handshake: checks host->abi_major, copies table into the host's buffer (at most
 * table_size bytes; struct_size = what was copied). */
tc_error *tck_query_answer(tc_query_args *args, const tc_plugin_api *table);
/* The host's disk cache (cache_get / cache_put / cache_release), for backends that keep compiled
 * code in it: whether the host offers it; an entry's bytes as a malloc'd copy (NULL on a miss,
 * when the cache is off, or out of memory); storing one (false when it was not stored). A
 * failing service is logged under "cache" at WARN as "<who> cache: <message>", never fatal. */
bool tck_host_cache_on(const tc_host_api *h);
void *tck_host_cache_load(const tc_host_api *h, const char *who, const char *key, size_t key_len, const char *kind,
                          size_t *size);
bool tck_host_cache_store(const tc_host_api *h, const char *who, const char *key, size_t key_len, const char *kind,
                          const void *data, size_t size);
/* executable_info's answer: the fields of args the host's struct has (by struct_size). */
void tck_executable_info_fill(tc_executable_info_args *args, const char *source, bool from_cache,
                              double compile_seconds);

/* ---------------------------------------------------------------- options (options.c) */
/* The value of option `name` among opts (NULL when absent or unset). */
const char *tck_option_get(const tc_option *opts, int32_t n, size_t elem_size, const char *name);
int64_t tck_option_int(const tc_option *opts, int32_t n, size_t elem_size, const char *name, int64_t fallback);
bool tck_option_bool(const tc_option *opts, int32_t n, size_t elem_size, const char *name, bool fallback);
/* The declaration of key `name` among decls (NULL: not a key of this plugin). */
const tc_option_decl *tck_option_decl_find(const tc_option_decl *decls, int32_t n, size_t elem_size,
                                           const char *name);
/* Checks one value against its declaration; false with a message (naming the key, the value
 * and what is allowed) in err. Writes the normalized value (BOOL: "0"/"1") into norm. */
bool tck_option_check(const tc_option_decl *decl, const char *value, char *norm, size_t norm_cap, char *err,
                      size_t cap);

/* ---------------------------------------------------------------- hashing (sha256.c) */
typedef struct tck_sha256 {
  uint32_t h[8];
  uint64_t bytes;
  uint8_t buf[64];
  size_t fill;
} tck_sha256;
void tck_sha256_init(tck_sha256 *c);
void tck_sha256_update(tck_sha256 *c, const void *data, size_t n);
void tck_sha256_final(tck_sha256 *c, uint8_t out[32]);
void tck_sha256_hex(const uint8_t digest[32], char hex[65]);

/* ---------------------------------------------------------------- disk cache (disk_cache.c)
 * Entries live in one directory as <hex>.<kind>, <hex> the SHA-256 of (namespace, key).
 * A file holds a header (magic, format version, payload size, the payload's SHA-256, the key's
 * hash) and the payload. Writes go to a temporary file in the same directory, then rename
 * (atomic). Reads open without following links, insist on a regular file owned by this user
 * and not writable by others, cap the size, read the whole file, check the header and the
 * payload's SHA-256; anything wrong removes the entry and reads as a miss. A hit's bytes are
 * returned in memory, and `path` opens exactly those bytes (a sealed memfd, /proc/self/fd/N):
 * what dlopen loads is what was verified. */
typedef struct tck_cache_hit {
  void *data; /* the payload (malloc'd) */
  size_t size;
  int fd;          /* the memfd behind path, or -1 */
  char path[64];   /* "/proc/self/fd/N", or "" when no memfd could be made */
} tck_cache_hit;

/* Ensures dir exists (mkdir -p, mode 0700 for what it creates) and is safe to load code from:
 * a directory (not a link), owned by this user, writable by nobody else; else
 * TC_ERR_UNAVAILABLE with why. */
tc_status tck_cache_dir_prepare(const char *dir, char *err, size_t cap);
/* *found false on a miss. err holds a note when an entry was discarded (still TC_OK). */
tc_status tck_cache_get(const char *dir, const char *ns, const void *key, size_t key_len, const char *kind,
                        tck_cache_hit *hit, bool *found, char *err, size_t cap);
/* Stores data (or the file at from_path when data is NULL). */
tc_status tck_cache_put(const char *dir, const char *ns, const void *key, size_t key_len, const char *kind,
                        const void *data, size_t size, const char *from_path, char *err, size_t cap);
void tck_cache_hit_free(tck_cache_hit *hit);

/* ---------------------------------------------------------------- cache administration (cache_admin.c)
 * The cache base is $TC_CACHE_DIR, else $XDG_CACHE_HOME/tc, else $HOME/.cache/tc ("" when
 * TC_CACHE_DIR=off or no base is known); each backend has a directory under it, the registry
 * one named "registry". Each directory is kept under TC_CACHE_MAX_MB (default 1024) after every
 * write, least recently used entries first (a hit refreshes an entry's mtime). */
void tck_cache_base(char *out, size_t cap);
uint64_t tck_cache_cap_bytes(void);
typedef struct tck_cache_entry {
  char name[96];    /* file name in its directory */
  const char *kind; /* points into name */
  uint64_t bytes;   /* file size, header included */
  int64_t used_s;   /* last write or hit, seconds since the epoch */
} tck_cache_entry;
typedef void (*tck_cache_visit)(const tck_cache_entry *e, void *ud);
/* Calls fn (may be NULL) for each entry of dir; returns how many, or -1 when dir cannot be read. */
int tck_cache_scan(const char *dir, tck_cache_visit fn, void *ud);
/* Removes least recently used entries until dir's entries total at most max_bytes; returns how
 * many went (-1 out of memory). */
int tck_cache_trim(const char *dir, uint64_t max_bytes);
/* Removes every entry of dir (nothing else); returns how many, or -1. */
int tck_cache_clear(const char *dir);

/* ---------------------------------------------------------------- a host for plugin tests (test_host.c)
 * What tc gives a plugin, in process, without tc: for a plugin's own unit tests (in tree or
 * out). Errors are real tc_error objects; logs are collected; the disk cache is the kit's. */
typedef struct tck_test_host tck_test_host;
/* cache_dir NULL: caching off. log_categories: comma-separated categories log_enabled reports
 * on ("cache,profile"), NULL none. */
tck_test_host *tck_test_host_new(const char *cache_dir, const char *log_categories);
void tck_test_host_free(tck_test_host *h);
const tc_host_api *tck_test_host_api(tck_test_host *h);
void tck_test_host_set_logs(tck_test_host *h, const char *log_categories);
const char *tck_test_host_log(tck_test_host *h); /* every line logged so far, "[category] message\n" each */
void tck_test_host_log_clear(tck_test_host *h);
/* Asynchronous errors reported so far (report_async_error), "call <id>: <message>\n" each. */
const char *tck_test_host_async_errors(tck_test_host *h);
/* Code and message of an error returned by a plugin, then frees it; TC_OK and "" for NULL.
 * The message stays valid until the next call on h. */
tc_status tck_test_host_take(tck_test_host *h, tc_error *err, const char **message);
/* dlopens the plugin at path and runs the query handshake into *table (zeroed past what the
 * plugin filled). false with a message in err. *dl receives the handle (dlclose it); with dl
 * NULL the plugin stays loaded. */
bool tck_test_plugin_open(tck_test_host *h, const char *path, tc_plugin_api *table, void **dl, char *err,
                          size_t cap);


/* =============================================================================================
 * Added by the inductor-cpu port (branch icpu), for every backend: what inductor-cpu and vulkan
 * each wrote for themselves before.
 * ============================================================================================= */

/* ---------------------------------------------------------------- op operands (inline)
 * Operand i of op, -1 past its n_args (the ABI's "no operand"). */
static inline int32_t tck_op_arg(const tc_kop *op, int32_t i) {
  return op && i >= 0 && i < op->n_args && op->args ? op->args[i] : -1;
}

/* ---------------------------------------------------------------- autotuning (tune.c)
 * max-autotune's shared part: which variant of a kernel to run (a thread count, a workgroup
 * shape), timed once per kernel and sizes and kept in the host's disk cache (kind "tune"), so a
 * later process takes the choice without timing. Progress goes to TC_LOGS=autotune. */
/* Seconds one run of `variant` takes (the best of a few), or < 0 when it cannot run. */
typedef double (*tck_tune_measure)(void *arg, int32_t variant);
typedef struct tck_tune_request {
  const char *who;  /* the plugin, for logs: "vulkan" */
  const char *what; /* the kernel and what a variant number means, for logs */
  const char *key;  /* everything the timing depends on but the sizes (kernel source, device, ...) */
  size_t key_len;
  int32_t n_syms; /* the launch's symbol values: part of the key and of the log lines */
  const int64_t *syms;
  const int32_t *variants; /* n candidates, the first the backend's own default */
  int32_t n;
  /* the variants are ordered so that past the best they only get slower: timing stops at the
   * first one more than twice the best so far (a bad shape can cost seconds to time) */
  bool stop_when_slower;
  tck_tune_measure measure;
  void *arg;
} tck_tune_request;
/* The variant to run: the disk cache's choice when it holds one for the key and sizes
 * (*from_cache set), else the fastest of the variants as measured (each timing logged), stored
 * in the cache. With no usable timing (or out of memory), the first variant. */
int32_t tck_tune_choose(const tc_host_api *h, const tck_tune_request *r, bool *from_cache);

/* A kernel's choice in memory, with the symbol values it was made for. Start from {0}. */
typedef struct tck_tune_memo {
  bool tuned;
  int32_t variant;
  int32_t n_syms;
  int64_t *syms;
} tck_tune_memo;
/* True when the memo holds a choice for these symbol values. */
bool tck_tune_memo_hit(const tck_tune_memo *m, const int64_t *syms, int32_t n_syms);
/* Keeps variant for these values; false when out of memory (the memo is then empty). */
bool tck_tune_memo_keep(tck_tune_memo *m, const int64_t *syms, int32_t n_syms, int32_t variant);
void tck_tune_memo_free(tck_tune_memo *m);

/* ---------------------------------------------------------------- launch profiles (profile.c)
 * TC_LOGS=profile: per-kernel launch times, reported in one line format by every backend.
 * Start from (tck_launch_stats){0}. Not thread-safe per stats (one per kernel, updated under
 * the context's lock). */
typedef struct tck_launch_stats {
  uint64_t launches;
  double total_s, min_s, max_s;
} tck_launch_stats;
/* Seconds on a monotonic clock. */
double tck_now_s(void);
/* The median of xs[0..n-1], which it sorts ascending (so xs[0] and xs[n-1] are then the min and
 * the max); NaN when n <= 0. One implementation for the bench and tc_ab_compare's timings. */
double tck_median(double *xs, int n);
void tck_launch_stats_add(tck_launch_stats *st, double seconds);
/* Logs "<graph> / <kernel>: N launches, mean X us, min Y us, max Z us<suffix>" under
 * "profile" at INFO (nothing when st has no launches). suffix: "" or e.g. " on the device". */
void tck_launch_stats_log(const tc_host_api *h, const char *graph, const char *kernel, const tck_launch_stats *st,
                          const char *suffix);


/* =============================================================================================
 * Added by the inductor-cuda port: what the C and CUDA generators share (c_expr.c).
 * ============================================================================================= */

/* ---------------------------------------------------------------- C-like expressions (c_expr.c)
 * The C spelling of a dtype: "float", "double", "int32_t", "int64_t", "uint8_t" (bool); "void"
 * for anything else. CUDA C spells them the same (its prelude typedefs the fixed-width types). */
const char *tck_c_dtype(int32_t dtype);
/* Writes the C expression of elementwise prim `prim` (unary, binary, WHERE, CONVERT) over
 * operands a, b, c (names or parenthesized expressions), whose operand dtype is `in` (WHERE:
 * the dtype of a and b) and result dtype `out`. The text calls libm's functions and the helpers
 * of plugin-api/kit/prelude/tc_scalar.h, which must be in scope. Returns false for prims it does
 * not know (nothing written). */
bool tck_c_prim_expr(tck_str *s, int32_t prim, int32_t in, int32_t out, const char *a, const char *b, const char *c);
/* Appends the lines of section `section` of an embedded text (plugin-api/kit/embed_text.cmake:
 * one string per line; a line "//@section NAME" starts a section, marker lines are left out).
 * With it a plugin pastes plugin-api/kit/prelude/tc_scalar.h ("scalar") into its output. */
void tck_text_section(tck_str *s, const char *const *lines, size_t n_lines, const char *section);
/* prefix + name as a C identifier (each character outside [A-Za-z0-9_] becomes '_', at most 79
 * of them), or prefix + "kernel<i>" for an empty or NULL name: "k_ln_gelu". */
void tck_c_ident(const char *prefix, const char *name, int32_t i, char *out, size_t cap);

/* ---------------------------------------------------------------- kernel ops as C (c_body.c)
 * One op of a kernel body as C statements, as inductor-cpu's C and inductor-cuda's CUDA C both
 * write it: "const float v3 = in_x[j3];", bounds-checked gathers and scatters (j<i>, ok<i>),
 * literals, prims (tck_c_prim_expr), index values, Philox draws (tc_philox_uniform), reduction
 * steps into accumulator v<i>, stores, the matmul accumulator (ACC). What the targets write
 * differently is the emitter's: */
typedef struct tck_c_body tck_c_body;
struct tck_c_body {
  const tc_kernel_desc *k;
  const tck_exprs *x;      /* the kernel's expressions (marked and declared by the generator) */
  const char *index_type;  /* element indices j<i> and argmax positions: "int64_t", "long long" */
  const char *bool_type;   /* bounds flags ok<i>: "int", "bool" */
  bool int_reduce_wraps;   /* integer sums and products as tc_add_<t> / tc_mul_<t> (else += / *=) */
  bool typed_identities;   /* reduction identities as typed float literals ("0.0f"; else "0") */
  void *ctx;               /* the generator's, for the callbacks */
  /* The name of op j's value (j may be -1) in the copy `sfx` of the body ("" or e.g. "_2"). */
  void (*value_name)(const tck_c_body *e, int32_t j, const char *sfx, char *out, size_t cap);
  /* The C name of buffer b. */
  void (*buffer_name)(const tck_c_body *e, int32_t b, char *out, size_t cap);
  /* Writes `elem += value` atomically at depth; guard: the bounds flag to test ("ok4"), or NULL;
   * index: the element index's name ("j4"). */
  void (*atomic_add)(const tck_c_body *e, tck_str *s, int depth, const char *guard, const char *index,
                     const char *elem, const char *value);
};
/* Writes op i at depth d. vars: the outer vars then the inner var (an expression); sfx: as for
 * value_name; acc_expr: what TC_KOP_ACC reads (matmul epilogues), NULL elsewhere. Float max/min
 * reductions step through tc_max_<t> / tc_min_<t>. A TC_KOP_INDEX_CHECK writes
 * `if (TC_UNLIKELY(!ok)) tc_index_error(record, site, value, bound);`: the target's prelude
 * defines both (the record's compare-and-swap is the target's atomic). */
tc_status tck_c_op(const tck_c_body *e, tck_str *s, int32_t i, const char *const *vars, int d, const char *sfx,
                   const char *acc_expr, char *err, size_t cap);
/* Declares reduction op i's accumulator at depth: "T v<i> = identity;"; argmax / argmin:
 * "T v<i>_best = identity;" and "<index_type> v<i> = arg_none;". */
void tck_c_declare_accumulator(const tck_c_body *e, tck_str *s, int32_t i, int depth, const char *arg_none);
/* The value reduction prim starts from, as C text for dtype (limits by name: INT32_MIN,
 * -INFINITY); typed: float literals carry their type ("1.0f", "0.0"). */
const char *tck_c_reduce_identity(int32_t prim, int32_t dtype, bool typed, char buf[48]);
/* The literal of a CONST op ("1.5f", "INT64_C(3)", "-INFINITY", "(double)NAN"). */
void tck_c_literal(tck_str *s, const tc_kop *op);
/* The comment heading a kernel: its name, kind, outer extents and inner loops, as in
 * "name: loop over (s0, 1024), 2 inner loops", on a line of its own after a blank one. */
void tck_c_describe_kernel(tck_str *s, const tc_kernel_desc *k, const tck_exprs *x);

#ifdef __cplusplus
}
#endif
#endif /* TC_KIT_H */
