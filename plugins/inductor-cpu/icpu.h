/* icpu.h — private interfaces of the inductor-cpu plugin, one section per source file.
 * Strings, size expressions, dtype names, validation and the disk cache come from the plugin
 * kit (tc_kit.h); what is here is specific to generating C. */
#ifndef ICPU_H
#define ICPU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* The two builds of one source (compile_cc.c's flags): FULL is -O3, what runs in the steady
 * state and what the disk cache holds; FAST computes the same bits for about three quarters of
 * the compiler's time (and in parts at once: build.c), run by the first calls of a cold compile
 * while the FULL build is made in the background (tiered.c). */
typedef enum icpu_tier { ICPU_TIER_FULL = 0, ICPU_TIER_FAST = 1 } icpu_tier;

typedef void (*icpu_launch_fn)(void **bufs, const int64_t *syms);

/* One shared object of a unit (a unit built in parts has several, each with its own kernels). */
typedef struct icpu_part {
  void *dl;
  int dl_fd; /* the descriptor dl was loaded through (see unit_load), when has_dl_fd */
  bool has_dl_fd;
  void (*module_init)(int threads); /* the part's tc_module_init: sets its thread count */
} icpu_part;

/* One build of an executable's source, loaded (launch.c). Immutable once published, except
 * cur_threads (max-autotune, which never runs tiered). */
typedef struct icpu_unit {
  icpu_tier tier;
  int32_t n_parts;
  icpu_part *parts;
  int32_t cur_threads;    /* what the parts' module_init was last given */
  icpu_launch_fn *launch; /* per kernel, its k_NAME_launch */
} icpu_unit;

typedef struct icpu_kernel {
  char name[96];
  int32_t n_buffers;
  /* max-autotune (autotune.c): runs may repeat (no INOUT buffer, no STORE_ADD); the thread
   * count chosen, with the symbol values it was chosen for */
  bool pure;
  tck_tune_memo tune;
  tck_launch_stats prof; /* TC_LOGS=profile: wall time of its launches (they run to completion) */
} icpu_kernel;

typedef struct icpu_upgrade icpu_upgrade;

typedef struct icpu_exe {
  char graph[96]; /* the graph's name, for logs */
  char *source;
  /* kernel i's text (its functions and launcher) is source[kernel_at[i], kernel_at[i+1]); before
   * kernel_at[0] the prelude, from kernel_at[n_kernels] tc_module_init: a build in parts
   * pastes the prelude, some kernels and the tail (build.c) */
  size_t *kernel_at;
  int32_t n_syms;
  int32_t n_kernels;
  icpu_kernel *kernels;
  icpu_unit *first;          /* the unit compile loaded (a cache hit, the FULL or the FAST build) */
  _Atomic(icpu_unit *) live; /* what launches call: first, until the background FULL build
                              * replaces it (tiered.c); both stay loaded until the exe is freed */
  icpu_upgrade *upgrade;     /* the background FULL build, or NULL (tiered.c) */
  icpu_unit *last_run;       /* the unit the last launch ran, and how many launches there were */
  int64_t launches;          /* (launches are serialized by the context lock) */
  bool cache_hit;
  double compile_seconds; /* compile's own time */
  bool autotune;          /* max-autotune(-no-cudagraphs): thread count per kernel */
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
 * calls OpenBLAS; with_gemm: it has a generated GEMM (codegen_gemm.c); with_attention: a fused
 * attention kernel (codegen_attention.c). */
void prelude_emit(tck_str *s, bool with_blas, bool with_stream, bool with_gemm, bool with_attention);

/* ---------------------------------------------------------------- codegen_loop.c / _matmul.c */
typedef struct icpu_kgen {
  const tc_kernel_list *list;
  const tc_kernel_desc *k;
  const char *fname; /* C function name: k_<name> */
  tck_exprs exprs;
  /* Per buffer, or NULL: the buffer's row is computed into a per-thread scratch row
   * (row_<name>[r]) and written out once at the end of the row (kgen_row_buffers). */
  const bool *row_buf;
  /* Set by kgen_body for its own emission: the keyed f32 max reduction whose row's min is
   * tracked beside it (-1: none), and whether the copy of a loop being written assumes that
   * every exp(x - that max) is a normal number (tc_exp_normal_f32). */
  int32_t row_min_of;
  bool exp_normal;
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

/* ---------------------------------------------------------------- codegen_attention.c */
/* A TC_KERNEL_ATTENTION kernel as fused attention: per head and run of query blocks, the keys
 * packed once, then blocks of queries over key tiles with an online softmax (the prelude's
 * attention section); the scores never reach memory. */
tc_status codegen_attention(tck_str *s, icpu_kgen *g, char *err, size_t err_cap);

/* ---------------------------------------------------------------- gemm_choice.c */
/* cpu.blas: who multiplies f32 matrices. */
typedef enum icpu_blas { ICPU_BLAS_GENERATED = 0, ICPU_BLAS_OPENBLAS = 1 } icpu_blas;
/* The choice for the option's value ("generated", "openblas", "auto" or NULL: auto). auto: the
 * generated GEMM where the CPU has AVX-512 and the plugin its runtime, else OpenBLAS
 * (gemm_choice.c says why). *why says what decided, for the log. */
icpu_blas gemm_choose(const char *value, const char **why);

/* ---------------------------------------------------------------- gemm_runtimes.c */
/* The generated GEMM's runtime for a unit of vector width vl (floats) and workspace size, or
 * NULL: what a unit's tc_gemm_attach calls (launch.c). */
const void *gemm_runtime_find(int vl, size_t ws_size);
/* The width and workspace size the last gemm_runtime_find on this thread was asked for. */
int gemm_runtime_asked(size_t *ws_size);
/* The vector width -march=native gives units on this CPU, as the prelude's section "vec" picks it
 * (16: AVX-512, 8: AVX2 + FMA, 4: neither), and whether the plugin has a runtime for it. */
int gemm_host_width(void);
bool gemm_runtime_for_host(void);

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
 * kernels (n_kernels entries of 96 bytes); kernel_at_out (n_kernels + 1 entries): where each
 * kernel's text starts, then where tc_module_init starts (icpu_exe.kernel_at). */
tc_status codegen_unit(const tc_kernel_list *list, const icpu_unit_opts *o, char **source_out, char (*names_out)[96],
                       size_t *kernel_at_out, char *err, size_t err_cap);
/* Whether the unit calls OpenBLAS (and links it): a matmul the generated GEMM does not take. */
bool unit_uses_blas(const tc_kernel_list *list, const icpu_unit_opts *o);

/* ---------------------------------------------------------------- compile_cc.c */
/* The compiler's executable as posix_spawnp would find it: cc itself when it has a slash, else
 * the first executable match on PATH. */
bool cc_locate(const char *cc, char *path, size_t cap);
/* Compiles source with tier's flags into the shared object at so_path (written whole or not at
 * all). The compiler's diagnostics go to err. Thread-safe. */
tc_status cc_compile(const char *cc, const char *source, icpu_tier tier, bool with_blas, const char *so_path, char *err,
                     size_t err_cap);
/* cc_compile in two steps, so several compilers run at once: cc_start writes the source and
 * starts the compiler; cc_finish (required after every cc_start, whatever it returned) waits
 * for it, moves the object into place and removes the temporary files. */
typedef struct icpu_cc_run {
  pid_t pid; /* -1: not started */
  icpu_tier tier;
  char cc[256];
  char so_path[4200], src_c[4210], obj[4220], log[4220];
} icpu_cc_run;
tc_status cc_start(const char *cc, const char *source, icpu_tier tier, bool with_blas, const char *so_path,
                   icpu_cc_run *run, char *err, size_t err_cap);
tc_status cc_finish(icpu_cc_run *run, char *err, size_t err_cap);
/* The flags a compile of tier uses (part of the cache key). */
const char *cc_flags(icpu_tier tier, bool with_blas);
/* The compiler's identity (`cc --version` + CPU flags); cached on ctx. */
const char *cc_identity(icpu_ctx *ctx);
/* Whether the compiler is GCC (from its identity): the tiers are known to compute the same
 * bits with GCC only (tiered.c). */
bool cc_is_gcc(icpu_ctx *ctx);

/* ---------------------------------------------------------------- build.c */
/* What building one unit needs, none of it borrowed from a context or a kernel list, so a
 * background thread can hold it after compile has returned. */
typedef struct icpu_build_job {
  const tc_host_api *host;
  char cc[256];
  int32_t threads;
  int32_t jobs; /* compilers run at once: the unit is built in up to this many parts (not stored) */
  icpu_tier tier;
  bool blas;
  bool store; /* offer the object to the disk cache under key */
  char *key;  /* owned */
  size_t key_len;
} icpu_build_job;
/* The cache key of exe's source built by tier: the source, the compiler, the flags. NULL when out
 * of memory; the caller frees it. */
char *build_key(icpu_ctx *ctx, const icpu_exe *exe, icpu_tier tier, bool blas, size_t *len_out);
/* The cached object for key (a build of tier), loaded into *out: true on a hit that loads. */
bool build_load_cached(icpu_ctx *ctx, const icpu_exe *exe, icpu_tier tier, const char *key, size_t key_len,
                       icpu_unit **out);
/* Runs cc on exe's source in a private directory, loads the object into *out and, when
 * job->store, offers it to the disk cache. Thread-safe; reads only exe's source and kernels. */
tc_status build_unit(const icpu_build_job *job, const icpu_exe *exe, icpu_unit **out, char *err, size_t err_cap);

/* ---------------------------------------------------------------- tiered.c */
/* Starts the FULL build of exe's source on a thread of its own (job is taken over, even on
 * failure), which runs the compiler after tiered_release (or when the build is waited for, or
 * at exit); once compiled and loaded it becomes exe->live and goes to the disk cache. */
tc_status tiered_start(icpu_exe *exe, icpu_build_job *job, char *err, size_t err_cap);
/* Waits while a background build of this cache key runs in this process (a compile of the same
 * unit then finds it in the disk cache instead of building it again); whether it waited. */
bool tiered_wait_for(const char *key, size_t key_len);
/* Lets exe's background build start (its thread waits for this: exe_launch calls it once the
 * first call is done). No-op without one. Thread-safe. */
void tiered_release(icpu_exe *exe);
/* Waits for exe's background build, then frees it and its unit (executable_free: no thread
 * outlives its executable). No-op without one. */
void tiered_finish(icpu_exe *exe);

/* ---------------------------------------------------------------- autotune.c */
/* max-autotune: the thread count of exe's kernel for these symbol values (disk cache, else timed
 * on the launch's own buffers), set on u (the live unit) before the kernel runs. */
void icpu_autotune_apply(icpu_ctx *ctx, icpu_exe *exe, icpu_unit *u, int32_t kernel, void **bufs, const int64_t *syms);

/* ---------------------------------------------------------------- launch.c */
/* Fills exe->kernels (names, buffer counts, whether runs may repeat) from the list, at compile
 * time: units are loaded later without the list. */
tc_status exe_kernels_init(icpu_exe *exe, char (*names)[96], const tc_kernel_list *list, char *err, size_t err_cap);
/* dlopens the n_parts shared objects at paths, finds each of exe's kernels' launchers (kernel k
 * in part part_of[k]; part_of NULL: one part) and sets the thread count; on failure a message in
 * err and nothing loaded. Thread-safe. */
tc_status unit_load(const icpu_exe *exe, int32_t threads, icpu_tier tier, const char *const *paths, int32_t n_parts,
                    const int32_t *part_of, icpu_unit **out, char *err, size_t err_cap);
/* Loads libopenblas.so.0 with its symbols global, once per process; whether it is there. A unit
 * built without -lopenblas then finds cblas_sgemm at its dlopen (the fast build links without it:
 * reading OpenBLAS's symbol table was over half of each part's link). Thread-safe. */
bool unit_blas_global(void);
/* Sets every part's thread count for the parallel regions (max-autotune). */
void unit_set_threads(icpu_unit *u, int32_t threads);
/* dlcloses and frees u (NULL: nothing). */
void unit_free(icpu_unit *u);
tc_error *exe_launch(icpu_ctx *ctx, icpu_exe *exe, const tc_launch_args *args);
/* TC_LOGS=profile: one line per launched kernel of exe (launches, mean, min, max). */
void exe_profile_report(const icpu_ctx *ctx, const icpu_exe *exe);

#endif
