/* icpu.h — private interfaces of the inductor-cpu plugin, one section per source file.
 * Strings, size expressions, dtype names, validation and the disk cache come from the plugin
 * kit (tc_kit.h); what is here is specific to generating C. */
#ifndef ICPU_H
#define ICPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_kit.h"
#include "tc_plugin.h"

/* ---------------------------------------------------------------- plugin.c */
typedef struct icpu_ctx {
  const tc_host_api *host;
  int32_t threads;
  char cc[256];           /* the C compiler command (cpu.cc, else $CC, else "cc") */
  char *cc_identity;      /* `cc --version` plus the CPU's flags, for cache keys; lazily */
  bool profiling;         /* TC_LOGS=profile at init: every launch timed (launch.c) */
} icpu_ctx;

typedef struct icpu_kernel {
  char name[96];
  void (*launch)(void **bufs, const int64_t *syms);
  int32_t n_buffers;
  /* max-autotune (autotune.c): runs may repeat (no INOUT buffer, no STORE_ADD); the thread
   * count chosen, with the symbol values it was chosen for */
  bool pure;
  tck_tune_memo tune;
  tck_launch_stats prof; /* TC_LOGS=profile: wall time of its launches (they run to completion) */
} icpu_kernel;

typedef struct icpu_exe {
  char graph[96]; /* the graph's name, for logs */
  char *source;
  void *dl;
  int dl_fd;       /* the descriptor dl was loaded through (see exe_load), when has_dl_fd */
  bool has_dl_fd;
  int32_t n_syms;
  int32_t n_kernels;
  icpu_kernel *kernels;
  bool cache_hit;
  double compile_seconds; /* compile's own time */
  void (*module_init)(int threads); /* the unit's tc_module_init: sets its thread count */
  int32_t cur_threads;              /* what module_init was last given */
  bool autotune;                    /* max-autotune(-no-cudagraphs): thread count per kernel */
} icpu_exe;

/* True when the host offers the disk cache (a host of an older minor may not). */
bool icpu_host_has_cache(const tc_host_api *h);

/* Logs at INFO under category when TC_LOGS enables it. */
#define icpu_log(ctx, category, ...)                                                                                   \
  do {                                                                                                                 \
    if (tck_log_on((ctx)->host, (category))) tck_log((ctx)->host, TC_LOG_INFO, (category), __VA_ARGS__);              \
  } while (0)

/* ---------------------------------------------------------------- prelude.c */
/* The prelude of helper functions every unit starts with (prelude/tc_cpu_prelude.h). with_stream:
 * the unit writes rows with streaming stores (tc_row_store_f32, tc_stream_fence); with_blas: it
 * calls OpenBLAS; with_gemm: it has a generated GEMM (codegen_gemm.c). */
void prelude_emit(tck_str *s, bool with_blas, bool with_stream, bool with_gemm);

/* ---------------------------------------------------------------- codegen_loop.c / _matmul.c */
typedef struct icpu_kgen {
  const tc_kernel_list *list;
  const tc_kernel_desc *k;
  const char *fname; /* C function name: k_<name> */
  tck_exprs exprs;
  /* Per buffer, or NULL: the buffer's row is computed into a per-thread scratch row
   * (row_<name>[r]) and written out once at the end of the row (kgen_row_buffers). */
  const bool *row_buf;
} icpu_kgen;

/* Row buffers bigger than this (bytes in all) are written with streaming stores. */
#define ICPU_STREAM_MIN_BYTES (4 << 20)
/* The scratch rows of one kernel together, in bytes (they live on each thread's stack). */
#define ICPU_ROW_SCRATCH_BYTES (64 << 10)
/* A loop kernel goes parallel from this many points (outer x inner) up, a matmul from this
 * many multiply-adds per batch entry; below, one thread does it all (a team costs more). */
#define ICPU_PAR_MIN_WORK 32768
#define ICPU_PAR_MIN_MNK 262144
/* The last inner loop of a row kernel runs in blocks of this many elements when it writes
 * scratch rows, each block streamed out after it (codegen_loop.c blocked_loop). */
#define ICPU_ROW_BLOCK 256

/* The C name of buffer i of k (its descriptor name when usable, else b<i>). */
void kgen_buf_name(const tc_kernel_desc *k, int32_t i, char *out, size_t cap);
/* Writes the kernel function's parameter list "(const float *restrict in_x, ..., int64_t s0)". */
void kgen_params(tck_str *s, const icpu_kgen *g);
/* Writes the ops of one kernel's per-point body (shared by loop kernels and matmul epilogues).
 * vars: names of the outer vars then the inner var. */
tc_status kgen_body(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, bool par_inner,
                    const char *acc_expr, char *err, size_t err_cap);
tc_status codegen_loop(tck_str *s, icpu_kgen *g, char *err, size_t err_cap);
/* Marks in row_buf (k->n_buffers entries) the outputs of a row kernel that go through a scratch
 * row and leave with streaming stores; returns whether there is any. */
bool kgen_row_buffers(const tc_kernel_list *list, const tc_kernel_desc *k, bool *row_buf);
tc_status codegen_matmul(tck_str *s, icpu_kgen *g, char *err, size_t err_cap);
/* What every matmul kernel opens with, OpenBLAS's or the generated GEMM's: the signature, the
 * extents B (B2), M, N, K and NB (both batch levels flattened). */
void matmul_prologue(tck_str *s, icpu_kgen *g, const tc_matmul_desc *mm, bool two);
/* Buffer b's name in the generated C. */
void matmul_buf_name(tck_str *s, const icpu_kgen *g, int32_t b);

/* ---------------------------------------------------------------- codegen_gemm.c */
/* Whether the generated GEMM takes matmul kernel k (f32; f64 stays with OpenBLAS). */
bool gemm_takes(const tc_kernel_desc *k);
/* An f32 matmul kernel as blocked loops around the prelude's micro-kernel, its epilogue run on
 * each tile as the tile leaves the micro-kernel. */
tc_status codegen_gemm(tck_str *s, icpu_kgen *g, char *err, size_t err_cap);

/* ---------------------------------------------------------------- gemm_choice.c */
/* cpu.blas: who multiplies f32 matrices. */
typedef enum icpu_blas { ICPU_BLAS_GENERATED = 0, ICPU_BLAS_OPENBLAS = 1 } icpu_blas;
/* The choice for the option's value ("generated", "openblas", "auto" or NULL: auto). auto: the
 * generated GEMM where the CPU has vector FMA (AVX-512 or AVX2+FMA), else OpenBLAS. *why says
 * what decided, for the log. */
icpu_blas gemm_choose(const char *value, const char **why);

/* ---------------------------------------------------------------- codegen_serial.c */
/* reduce-overhead's serial twins: a kernel below the parallel thresholds still entered an OpenMP
 * region (a team of one costs a futex call per launch); its twin has no region at all. */
/* Writes kernel_text (one kernel function named fname) again as fname_serial, without its
 * OpenMP regions and worksharing loops (simd loops stay). */
void serial_twin_emit(tck_str *s, const char *kernel_text, const char *fname);
/* Writes `static int fname_is_small(const int64_t *syms)`: true when k's sizes keep it below
 * the parallel thresholds, so the twin does the same work with no team. Uses x's marks. */
void serial_predicate_emit(tck_str *s, const tc_kernel_list *list, const tc_kernel_desc *k, tck_exprs *x,
                           const char *fname);

/* ---------------------------------------------------------------- codegen_unit.c */
/* What a compile's mode asks of the unit. */
typedef struct icpu_unit_opts {
  bool serial_twins; /* reduce-overhead, max-autotune: small kernels never enter OpenMP (codegen_serial.c) */
  icpu_blas blas;    /* cpu.blas: f32 matmuls as the generated GEMM or through OpenBLAS */
} icpu_unit_opts;
/* The whole translation unit for a (validated) kernel list. names_out: the C names of the
 * kernels (n_kernels entries of 96 bytes). */
tc_status codegen_unit(const tc_kernel_list *list, const icpu_unit_opts *o, char **source_out, char (*names_out)[96],
                       char *err, size_t err_cap);
/* Whether the unit calls OpenBLAS (and links it): a matmul the generated GEMM does not take. */
bool unit_uses_blas(const tc_kernel_list *list, const icpu_unit_opts *o);

/* ---------------------------------------------------------------- compile_cc.c */
/* The compiler's executable as posix_spawnp would find it: cc itself when it has a slash, else
 * the first executable match on PATH. */
bool cc_locate(const char *cc, char *path, size_t cap);
/* Compiles source into the shared object at so_path (written whole or not at all). The
 * compiler's diagnostics go to err. */
tc_status cc_compile(icpu_ctx *ctx, const char *source, bool with_blas, const char *so_path, char *err, size_t err_cap);
/* The flags every compile uses (part of the cache key). */
const char *cc_flags(bool with_blas);
/* The compiler's identity (`cc --version` + CPU flags); cached on ctx. */
const char *cc_identity(icpu_ctx *ctx);

/* ---------------------------------------------------------------- autotune.c */
/* max-autotune: kernel k's thread count for these symbol values (disk cache, else timed on the
 * launch's own buffers), set on the unit before k runs. */
void icpu_autotune_apply(icpu_ctx *ctx, icpu_exe *exe, icpu_kernel *k, void **bufs, const int64_t *syms);

/* ---------------------------------------------------------------- launch.c */
/* dlopens so_path and finds each kernel's launcher; on failure a message in err. */
tc_status exe_load(icpu_ctx *ctx, icpu_exe *exe, const char *so_path, char (*names)[96], const tc_kernel_list *list,
                   char *err, size_t err_cap);
/* Closes the descriptor exe_load loaded a cached unit through; after dlclose. */
void exe_close_fd(icpu_exe *exe);
tc_error *exe_launch(icpu_ctx *ctx, icpu_exe *exe, const tc_launch_args *args);
/* TC_LOGS=profile: one line per launched kernel of exe (launches, mean, min, max). */
void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe);

#endif
