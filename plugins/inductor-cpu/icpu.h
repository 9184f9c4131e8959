/* icpu.h — private interfaces of the inductor-cpu plugin, one section per source file. */
#ifndef ICPU_H
#define ICPU_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_plugin.h"

#define ICPU_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---------------------------------------------------------------- strbuf.c */
typedef struct icpu_str {
  char *data;
  size_t len, cap;
  bool oom;
} icpu_str;

void str_init(icpu_str *s);
void str_free(icpu_str *s);
void str_printf(icpu_str *s, const char *fmt, ...) ICPU_PRINTF(2, 3);
void str_puts(icpu_str *s, const char *text);
/* Appends `depth` levels of two-space indentation. */
void str_indent(icpu_str *s, int depth);
/* Takes ownership of the text (NULL on allocation failure); s is left empty. */
char *str_take(icpu_str *s);

/* ---------------------------------------------------------------- plugin.c */
typedef struct icpu_ctx {
  const tc_host_api *host;
  int32_t threads;
  char cc[256];           /* the C compiler command */
  char *cc_identity;      /* `cc --version` plus the CPU's flags, for cache keys; lazily */
  bool profiling;         /* TC_LOGS=profile at init: every launch timed (launch.c) */
} icpu_ctx;

typedef struct icpu_kernel {
  char name[96];
  void (*launch)(void **bufs, const int64_t *syms);
  int32_t n_buffers;
  /* TC_LOGS=profile: wall time of its launches (they run to completion before returning) */
  uint64_t prof_launches;
  double prof_s, prof_min_s, prof_max_s;
} icpu_kernel;

typedef struct icpu_exe {
  char graph[96]; /* the graph's name, for logs */
  char *source;
  void *dl;
  int32_t n_syms;
  int32_t n_kernels;
  icpu_kernel *kernels;
  bool cache_hit;
  double compile_seconds; /* compile_kernels' own time */
} icpu_exe;

void icpu_log(const icpu_ctx *ctx, const char *category, const char *fmt, ...) ICPU_PRINTF(3, 4);
bool icpu_log_on(const icpu_ctx *ctx, const char *category);
tc_status icpu_fail(const icpu_ctx *ctx, tc_status s, const char *fmt, ...) ICPU_PRINTF(3, 4);

/* ---------------------------------------------------------------- codegen_expr.c
 * Size expressions and indices as C text. Constants print inline, symbols as s<k>, every other
 * node as a local `x<id>` declared at the top of the kernel (emit_expr_locals). */
typedef struct icpu_exprs {
  const tc_kernel_list *list;
  bool *used; /* per expr id: referenced by the kernel being generated */
} icpu_exprs;

void expr_mark(icpu_exprs *x, int32_t id);
void expr_mark_index(icpu_exprs *x, const tc_index *ix, int32_t n_vars);
/* Writes the C operand for expr id (literal, s<k> or x<id>). */
void expr_ref(icpu_str *s, const icpu_exprs *x, int32_t id);
/* Declares `const int64_t x<id> = ...;` for every marked non-leaf expr, children first. */
void expr_emit_locals(icpu_str *s, const icpu_exprs *x, int depth);
/* Writes offset + sum strides[d]*var_d for an index; vars are named by var_names. Ignores the
 * indirect term. */
void expr_index(icpu_str *s, const icpu_exprs *x, const tc_index *ix, int32_t n_vars, const char *const *var_names);
bool expr_index_uses_var(const tc_index *ix, int32_t var);

/* ---------------------------------------------------------------- codegen_prim.c */
const char *dtype_c(int32_t dtype);        /* "float", "int64_t", "uint8_t" (bool) */
const char *dtype_suffix(int32_t dtype);   /* "f32", "i64", ... */
bool dtype_float(int32_t dtype);
/* Writes the C expression of elementwise prim `prim` over operands a, b, c (names), whose
 * operand dtype is `in` and result dtype `out`. Returns false for prims it does not know. */
bool prim_c_expr(icpu_str *s, int32_t prim, int32_t in, int32_t out, const char *a, const char *b, const char *c);
/* The prelude of helper functions every unit starts with. with_stream: the unit writes rows
 * with streaming stores (tc_row_store_f32, tc_stream_fence). */
void prim_emit_prelude(icpu_str *s, bool with_blas, bool with_stream);

/* ---------------------------------------------------------------- codegen_loop.c / _matmul.c */
typedef struct icpu_kgen {
  const tc_kernel_list *list;
  const tc_kernel_desc *k;
  const char *fname; /* C function name: k_<name> */
  icpu_exprs exprs;
  /* Per buffer, or NULL: the buffer's row is computed into a per-thread scratch row
   * (row_<name>[r]) and written out once at the end of the row (kgen_row_buffers). */
  const bool *row_buf;
} icpu_kgen;

/* Row buffers bigger than this (bytes in all) are written with streaming stores. */
#define ICPU_STREAM_MIN_BYTES (4 << 20)
/* The scratch rows of one kernel together, in bytes (they live on each thread's stack). */
#define ICPU_ROW_SCRATCH_BYTES (64 << 10)
/* The last inner loop of a row kernel runs in blocks of this many elements when it writes
 * scratch rows, each block streamed out after it (codegen_loop.c blocked_loop). */
#define ICPU_ROW_BLOCK 256

/* The C name of buffer i of k (its descriptor name when usable, else b<i>). */
void kgen_buf_name(const tc_kernel_desc *k, int32_t i, char *out, size_t cap);
/* Writes the kernel function's parameter list "(const float *restrict in_x, ..., int64_t s0)". */
void kgen_params(icpu_str *s, const icpu_kgen *g);
/* Writes the ops of one kernel's per-point body (shared by loop kernels and matmul epilogues).
 * vars: names of the outer vars then the inner var. */
tc_status kgen_body(icpu_str *s, const icpu_kgen *g, const char *const *vars, int depth, bool par_inner,
                    const char *acc_expr, char *err, size_t err_cap);
tc_status codegen_loop(icpu_str *s, icpu_kgen *g, char *err, size_t err_cap);
/* Marks in row_buf (k->n_buffers entries) the outputs of a row kernel that go through a scratch
 * row and leave with streaming stores; returns whether there is any. */
bool kgen_row_buffers(const tc_kernel_list *list, const tc_kernel_desc *k, bool *row_buf);
tc_status codegen_matmul(icpu_str *s, icpu_kgen *g, char *err, size_t err_cap);

/* ---------------------------------------------------------------- codegen_unit.c */
/* The whole translation unit for a kernel list. names_out: the C names of the kernels (n_kernels
 * entries of 96 bytes). */
tc_status codegen_unit(const tc_kernel_list *list, char **source_out, char (*names_out)[96], char *err, size_t err_cap);
bool unit_uses_blas(const tc_kernel_list *list);

/* ---------------------------------------------------------------- compile_cc.c */
/* Compiles source into the shared object at so_path (written whole or not at all). The
 * compiler's diagnostics go to err. */
tc_status cc_compile(icpu_ctx *ctx, const char *source, bool with_blas, const char *so_path, char *err, size_t err_cap);
/* The flags every compile uses (part of the cache key). */
const char *cc_flags(bool with_blas);
/* The compiler's identity (`cc --version` + CPU flags); cached on ctx. */
const char *cc_identity(icpu_ctx *ctx);

/* ---------------------------------------------------------------- disk_cache.c */
typedef struct icpu_hash {
  uint64_t h[2];
} icpu_hash;
icpu_hash hash_bytes(const void *data, size_t n, icpu_hash seed);
icpu_hash hash_init(void);
void hash_hex(icpu_hash h, char out[33]);
/* Path of the cached .so for key, or false when caching is off. */
bool cache_path(const icpu_ctx *ctx, const char *key_hex, char *path, size_t cap);
/* True when path holds an entry whose checksum verifies; a bad entry is deleted. */
bool cache_verify(const icpu_ctx *ctx, const char *path);
/* Writes the checksum next to path (temp + rename). */
tc_status cache_seal(const icpu_ctx *ctx, const char *path);

/* ---------------------------------------------------------------- launch.c */
tc_status exe_load(icpu_ctx *ctx, icpu_exe *exe, const char *so_path, char (*names)[96], const tc_kernel_list *list);
tc_status exe_launch(icpu_ctx *ctx, icpu_exe *exe, int32_t kernel, const tc_buffer_arg *args, const int64_t *syms);
/* TC_LOGS=profile: one line per launched kernel of exe (launches, mean, min, max). */
void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe, const char *graph);

#endif
