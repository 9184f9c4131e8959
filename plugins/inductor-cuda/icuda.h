/* icuda.h — private interfaces of the inductor-cuda plugin, one section per source file.
 *
 * Two halves meet here: the code generator (kernel list -> CUDA C source + a launch plan per
 * kernel -> NVRTC -> cubin; needs no GPU) and the runtime (the driver API, memory, streams,
 * modules, launches, cuBLASLt; needs one). The CUDA driver, NVRTC and cuBLASLt are dlopen'd
 * (driver.c, nvrtc.c, blaslt.c): the plugin has no link-time dependency on any of them, so it
 * loads and lists itself as unavailable, with the reason, on a machine without them. Their
 * headers are used for types and constants only. */
#ifndef ICUDA_H
#define ICUDA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exit_wait.h"
#include "tc_kit.h"
#include "tc_plugin.h"

/* ---------------------------------------------------------------- the generated code's ABI
 * Every generated kernel is `extern "C" __global__ void k_<name>(tc_cu_args a)` (tc_cu_args has icuda_args' layout): one struct by
 * value holding a device pointer per kernel buffer (byte offset applied, in the kernel's buffer
 * order) and the values of the symbols s0..s{n_syms-1}. One struct for every kernel keeps the
 * launch code generic; its 512 bytes are well inside CUDA's 4 KB of parameters. */
#define ICUDA_MAX_BUFS 32
#define ICUDA_MAX_SYMS 32
typedef struct icuda_args {
  void *buf[ICUDA_MAX_BUFS];
  long long s[ICUDA_MAX_SYMS];
} icuda_args;

/* ---------------------------------------------------------------- codegen (codegen_*.c) */
typedef enum icuda_launch_kind {
  ICUDA_LAUNCH_POINTS = 0, /* one thread per outer point; grid-stride over all of them */
  ICUDA_LAUNCH_ROWS = 1,   /* one block per outer point (a row), its threads over the inner domain;
                              grid-stride over rows */
  ICUDA_LAUNCH_MATMUL = 2, /* cuBLASLt writes the product to buffer c, then (has_epilogue) the
                              generated epilogue kernel runs as POINTS over (batch2,) batch, m, n;
                              or the generated GEMM (gemm_name) does both (gemm.c decides) */
  ICUDA_LAUNCH_ATTENTION = 3 /* flash attention: a block per plan.attn_queries queries of one
                                head (ceil(tq / them) x batch x batch2 blocks), codegen_attention.c */
} icuda_launch_kind;
#define ICUDA_SMEM_DEFAULT (48 * 1024) /* dynamic shared memory above this: the kernel opts in */

/* How the runtime launches one kernel of the list. */
typedef struct icuda_kernel_plan {
  char name[96];       /* the __global__ function: k_<kernel name> (MATMUL: its epilogue) */
  int32_t kind;        /* icuda_launch_kind */
  int32_t block;       /* threads per block */
  int32_t smem_bytes;  /* dynamic shared memory per block */
  int32_t max_blocks;  /* grid cap (grid-stride loops beyond it); 0: no cap */
  bool has_epilogue;   /* MATMUL: an epilogue kernel `name` exists */
  bool inline_product; /* MATMUL: that kernel computes the product itself (no cuBLASLt call) */
  /* ROWS: rows one block handles at a time (a "row group"): 1 for the block-per-row body, the
   * block's warps for the warp-per-row body (warp w of block b on row b * rows_per_block + w,
   * grid-stride over groups). The grid is ceil(rows / rows_per_block), capped by max_blocks
   * when that is set. 0 reads as 1 (POINTS and MATMUL leave it 0). */
  int32_t rows_per_block;
  /* Where the kernel's text lies in the module's source, [src_begin, src_end); the prelude is
   * everything before the first kernel's. A kernel compiles alone as prelude + its text. */
  size_t src_begin, src_end;
  int32_t attn_queries; /* ATTENTION: queries per block (the grid is ceil(tq / it) x heads) */
  /* MATMUL: the generated GEMM (codegen_gemm.c), product and epilogue in one kernel, in the same
   * module as the epilogue kernel; "" when there is none (cuda.gemm=cublaslt, an inline
   * product). Its grid: ceil(m / tile) * ceil(n / tile) blocks of gemm_block threads, times
   * the batches (gridDim.z, at most 65535: the kernel strides over the rest). */
  char gemm_name[112];
  int32_t gemm_block, gemm_tile;
  /* MATMUL with a generated GEMM: where its text begins, inside [src_begin, src_end) and last.
   * The GEMM is a module of its own (prelude + [gemm_begin, src_end)), the kernel's module the
   * rest: the runtime compiles it apart, in the background (modules.c, gemm_background.c). */
  size_t gemm_begin;
} icuda_kernel_plan;

/* cuda.gemm: which GEMM runs a MATMUL kernel's product (gemm.c). */
typedef enum icuda_gemm_mode {
  ICUDA_GEMM_AUTO = 0,      /* cuBLASLt once it is loaded; the generated GEMM until then */
  ICUDA_GEMM_CUBLASLT = 1,  /* cuBLASLt always, waiting for it to load; no GEMM is generated */
  ICUDA_GEMM_GENERATED = 2  /* the generated GEMM always (cuBLASLt never loads for it) */
} icuda_gemm_mode;

/* cuda.attention_kernel: which flash-attention kernel codegen_attention.c generates. */
typedef enum icuda_attn_kernel {
  ICUDA_ATTN_V1 = 0,   /* queries x keys 4 x BN/8 a thread, k read as scalars (the default) */
  ICUDA_ATTN_TILED = 1 /* both products register-tiled as an SGEMM (cuda.attention_tile) */
} icuda_attn_kernel;

typedef struct icuda_codegen_options {
  int32_t sm;          /* compute capability x10 (90 on the H200), for tuning choices */
  int32_t n_sms;       /* multiprocessors (132 on the H200), for grid sizing; 0: unknown */
  int32_t row_threads; /* ROWS kernels' threads per row (cuda.row_threads); 0: chosen from the row */
  int32_t attn_queries; /* ATTENTION: queries per block, 64 or 128 (cuda.attention_queries; 0: 64) */
  int32_t attn_keys;    /* ATTENTION: keys per tile, 32 or 64 (cuda.attention_keys; 0: 32) */
  int32_t attn_thread_queries; /* ATTENTION: queries per thread, 4 or 8 (cuda.attention_thread_queries; 0: 4) */
  int32_t gemm;                /* icuda_gemm_mode (cuda.gemm): ICUDA_GEMM_CUBLASLT generates no GEMM */
  int32_t gemm_tile;           /* the generated GEMM's tile, 64 or 128; 0: chosen from the sizes */
  int32_t attn_kernel;         /* icuda_attn_kernel (cuda.attention_kernel; 0: v1) */
  int32_t attn_tile_m, attn_tile_n; /* tiled: queries x keys of the scores a thread, 4 or 8 (cuda.attention_tile; 0: 8) */
} icuda_codegen_options;

/* The CUDA C of every kernel of a validated list, as one module (readable: kernels named after
 * what they fuse, buffers by name, comments where the structure is not obvious), and one plan
 * per kernel (plans: list->n_kernels entries). source: malloc'd. TC_ERR_UNSUPPORTED with a
 * message naming the kernel for what it cannot generate (more than ICUDA_MAX_BUFS buffers, a
 * dtype it lacks). */
tc_status icuda_codegen(const tc_kernel_list *list, const icuda_codegen_options *o, char **source,
                        icuda_kernel_plan *plans, char *err, size_t cap);

/* The source of one NVRTC program of a module icuda_codegen made: the prelude and kernel i's
 * text without its generated GEMM (gemm = false; NULL when that leaves no function: a MATMUL
 * without epilogue), or the prelude and its generated GEMM alone (gemm = true; NULL when it has
 * none). malloc'd; NULL also when out of memory (*oom set). */
char *icuda_program_source(const char *source, const icuda_kernel_plan *plans, int32_t n_plans, int32_t i, bool gemm,
                           bool *oom);

/* ---------------------------------------------------------------- nvrtc.c */
typedef struct icuda_nvrtc icuda_nvrtc; /* the dlopen'd library and its functions */
/* Loads NVRTC (libnvrtc.so.13, libnvrtc.so); NULL with why in err. Thread-safe, loaded once. */
const icuda_nvrtc *icuda_nvrtc_load(char *err, size_t cap);
/* "13.0": part of every cache key. */
/* dynlib.c: dlopen the first of names that loads; NULL with why = "<names[0]>: <its dlerror>". */
void *icuda_dlopen_first(const char *const *names, size_t n, char *why, size_t cap);
/* dlsym of symbol into the function pointer at fn_ptr (NULL when absent); the first symbol
 * missing is kept in *missing. */
void icuda_dlsym(void *lib, const char *symbol, void *fn_ptr, size_t size, const char **missing);
const char *icuda_nvrtc_version(const icuda_nvrtc *n);
/* How long loading NVRTC took (it happens once per process; TC_LOGS=init reports it). */
double icuda_nvrtc_load_seconds(void);
/* The flags every compile uses for sm (no fast math: results follow PyTorch; no FMA
 * contraction: elementwise results match the other backends bit for bit). Part of the key. */
const char *icuda_nvrtc_flags(int32_t sm);
/* The disk-cache key of a program's cubin: what it depends on (sm, NVRTC's version, the flags),
 * then the source. malloc'd (NULL: out of memory), its length in *len. */
char *icuda_cubin_key(int32_t sm, const char *nvrtc_version, const char *source, size_t *len);
/* Compiles source to a cubin for sm_<sm>. cubin: malloc'd. The compiler's log in err. */
tc_status icuda_nvrtc_compile(const icuda_nvrtc *n, const char *source, const char *name, int32_t sm, void **cubin,
                              size_t *size, char *err, size_t cap);

/* ---------------------------------------------------------------- the vendor extension
 * A check any host can run without a GPU: generate and compile a kernel list for sm_<sm>, as a
 * compile would (tests/test_inductor_cuda.c runs it over every conformance graph in CI). Found
 * in the plugin's extension chain by type. */
#define ICUDA_EXT_CODEGEN_CHECK (TC_EXT_VENDOR_FIRST + 0x100)
typedef struct icuda_codegen_check_ext {
  tc_ext_base base;
  /* NULL when the list generates and compiles; else an error naming the kernel and the
   * compiler's message (made with host->error_new). source_out (may be NULL): the generated
   * source, malloc'd, for the caller to free. */
  tc_error *(*check)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, char **source_out);
  /* The same with the compile option cuda.row_threads (0: automatic); present when
   * base.struct_size covers it. */
  tc_error *(*check_row_threads)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t row_threads,
                                 char **source_out);
  /* The same with the attention tiles (cuda.attention_queries, cuda.attention_keys; 0: 128, 32). */
  tc_error *(*check_attention_tiles)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                     int32_t keys, char **source_out);
  /* ... and queries per thread (cuda.attention_thread_queries; 0: 4). */
  tc_error *(*check_attention_variant)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                       int32_t keys, int32_t thread_queries, char **source_out);
  /* ... with cuda.gemm (icuda_gemm_mode: 0 auto, 1 cublaslt, 2 generated) and the generated
   * GEMM's tile (64 or 128; 0: chosen from the sizes, as a compile does). The default checks
   * above generate as auto does: every MATMUL kernel's generated GEMM is in what they compile. */
  tc_error *(*check_gemm)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm, int32_t tile,
                          char **source_out);
  /* ... with cuda.attention_kernel=tiled and cuda.attention_tile=<tile_m>x<tile_n> (4 or 8;
   * 0: 8); present when base.struct_size covers it. */
  tc_error *(*check_attention_tiled)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t tile_m,
                                     int32_t tile_n, char **source_out);
  /* ... as the runtime compiles it: each kernel's program and each generated GEMM's program on
   * its own (icuda_program_source), every cache key distinct. n_kernels, n_gemms (out, may be
   * NULL): how many programs of each compiled. */
  tc_error *(*check_programs)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm,
                              int32_t *n_kernels, int32_t *n_gemms);
} icuda_codegen_check_ext;
/* codegen_check.c: the extension (next = NULL); the plugin table chains it after its
 * capabilities extension. */
extern const icuda_codegen_check_ext icuda_codegen_check;

/* =============================================================================================
 * RUNTIME (driver.c, plugin.c, memory.c, executable.c, launch.c, blaslt.c): the half that
 * needs a GPU. Everything below is private to those files; the code generator half needs none
 * of it.
 * ============================================================================================= */
#include <cuda.h> /* types and constants only: every driver function goes through icuda_driver */

/* ---------------------------------------------------------------- driver.c
 * libcuda.so.1 (then libcuda.so), dlopen'd once per process and never closed; every function
 * looked up by dlsym under the versioned name cuda.h maps its API name to (cuMemAlloc ->
 * cuMemAlloc_v2, ...), the default-stream (non-_ptsz) variants: the plugin only ever uses its
 * own stream. cuInit(0) runs once, right after the lookup. */
typedef struct icuda_driver {
  void *lib;
  int version; /* cuDriverGetVersion: 13000 for 13.0 */
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);                   /* cuDeviceTotalMem_v2 */
  CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);                    /* _v2 */
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxPushCurrent)(CUcontext);                            /* _v2 */
  CUresult (*cuCtxPopCurrent)(CUcontext *);                           /* _v2 */
  CUresult (*cuStreamCreate)(CUstream *, unsigned int);
  CUresult (*cuStreamDestroy)(CUstream);                              /* _v2 */
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);                      /* _v2: devices without pools */
  CUresult (*cuMemFree)(CUdeviceptr);                                 /* _v2 */
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream); /* _v2 */
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);       /* _v2 */
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, CUstream, void **, void **);
  /* optional (CUDA 12+): launches with attributes, for programmatic dependent launch (launch.c) */
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
  /* CUDA graphs (graphs.c), optional: NULL when the driver lacks them (reduce-overhead then
   * queues launches one by one) */
  CUresult (*cuStreamBeginCapture)(CUstream, CUstreamCaptureMode);   /* _v2 */
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  /* events, optional: TC_LOGS=profile times each launch on the device with a pair of them */
  CUresult (*cuEventCreate)(CUevent *, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);          /* _v2 where the driver has it */
  CUresult (*cuEventDestroy)(CUevent);                                 /* _v2 */
} icuda_driver;

/* The loaded driver with cuInit done, or NULL with why in err: "no CUDA driver (libcuda.so.1:
 * <dlerror>)", "libcuda.so.1 lacks cuMemAllocAsync (driver too old?)", "cuInit failed:
 * CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)". Thread-safe; tried once. */
const icuda_driver *icuda_driver_load(char *err, size_t cap);
/* "CUDA_ERROR_OUT_OF_MEMORY", or "CUresult <n>" for a code the driver does not name. buf: 48+ bytes. */
const char *icuda_cu_name(const icuda_driver *d, CUresult r, char *buf, size_t cap);
/* What the device is, for probe and init. */
typedef struct icuda_device_facts {
  char name[128];
  uint64_t memory_bytes;
  int32_t sm;           /* compute capability x10 */
  int32_t n_sms;
  bool integrated;
  bool mempools;        /* CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED */
  int32_t smem_optin;   /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, bytes */
} icuda_device_facts;
/* Fills f for device ordinal i; the failing call and its CUresult name in err. */
bool icuda_device_query(const icuda_driver *d, int i, icuda_device_facts *f, char *err, size_t cap);

/* ---------------------------------------------------------------- the context (plugin.c) */
typedef struct icuda_blaslt icuda_blaslt; /* blaslt.c: the dlopen'd cuBLASLt and its handle */
typedef struct icuda_held icuda_held;     /* graphs.c: launches held for a CUDA graph */

struct tc_plugin_ctx {
  const tc_host_api *host;
  const icuda_driver *cu;
  int32_t device;              /* ordinal */
  CUdevice dev;
  CUcontext cuctx;             /* the device's primary context (retained) */
  CUstream stream;             /* the one stream: CU_STREAM_NON_BLOCKING; every operation on it */
  icuda_device_facts facts;
  bool sync_launches;          /* cuda.sync_launches */
  bool early_launch;           /* cuda.early_launch on an sm_90+ device with cuLaunchKernelEx (launch.c) */
  bool capturing;              /* graphs.c: a CUDA graph is being recorded (launches stay ordinary) */
  size_t workspace_bytes;      /* cuda.workspace_mb, for cuBLASLt */
  CUdeviceptr workspace;       /* allocated at the first matmul */
  icuda_blaslt *blaslt;        /* taken from the preload thread, or made, at the first cuBLASLt matmul */
  pthread_t preload;           /* icuda_libraries_preload's thread (preload.c) */
  bool preloading;
  int lt_done;                 /* atomic: the preload thread has finished loading (preload.c) */
  pthread_t lt_warm;           /* blaslt_warmup.c's thread: cuBLASLt's first heuristic query */
  bool lt_warming;             /* started and not joined */
  int lt_warm_done;            /* atomic: its query has returned */
  double lt_warm_seconds;      /* how long it took (read after the join) */
  /* asynchronous failures: the newest call launched since the last successful wait */
  bool pending;
  uint64_t pending_call;
  icuda_held *held;            /* graphs.c: the current call's launches, held (or NULL) */
  /* gemm.c, cuda.gemm=auto: the call whose first matmul asked whether cuBLASLt was ready, and
   * the answer, which holds for the rest of that call */
  bool gemm_call_known;
  uint64_t gemm_call;
  bool gemm_call_lt_ready;
  bool gemm_lt_failed;         /* reduce-overhead / max-autotune under auto: cuBLASLt failed to start */
  bool dry_run;                /* graphs.c: launches only choose (and tune) cuBLASLt's algorithms */
  /* TC_LOGS=profile (profile.c): each launch waited for between two events */
  bool profiling;
  CUevent prof_begin, prof_end;
};

/* A device buffer. ptr 0 for zero bytes. pooled: from cuMemAllocAsync (freed stream-ordered). */
struct tc_buffer {
  CUdeviceptr ptr;
  size_t size;
  bool pooled;
};

/* Makes the context current on the calling thread for one entry (pushes it unless it already
 * is); icuda_ctx_leave undoes exactly that. */
typedef struct icuda_ctx_scope {
  bool pushed;
} icuda_ctx_scope;
tc_error *icuda_ctx_enter(tc_plugin_ctx *ctx, const char *what, icuda_ctx_scope *scope);
void icuda_ctx_leave(tc_plugin_ctx *ctx, icuda_ctx_scope *scope);

/* An error for a failed driver call: "inductor-cuda <what>: <call> failed: <NAME> (<string>)",
 * status from the code (out of memory, device failures -> TC_ERR_DEVICE, else INTERNAL). */
tc_error *icuda_cu_error(tc_plugin_ctx *ctx, CUresult r, const char *call, const char *what_fmt, ...)
    TCK_PRINTF(4, 5);
/* True for the codes of a kernel or copy that failed on the device (illegal address, launch
 * failure, ...): sticky, and returned by every later call. */
bool icuda_cu_is_device_failure(CUresult r);
/* Waits for the stream (cuStreamSynchronize). A failure is an asynchronous one: it goes to
 * host->report_async_error against the newest pending call as well as being returned. */
tc_error *icuda_stream_wait(tc_plugin_ctx *ctx, const char *what);

/* ---------------------------------------------------------------- memory.c */
tc_error *icuda_mem_setup(tc_plugin_ctx *ctx); /* the pool's release threshold */
tc_error *icuda_buffer_alloc(tc_plugin_ctx *ctx, size_t bytes, tc_buffer **out);
void icuda_buffer_free(tc_plugin_ctx *ctx, tc_buffer *b);
tc_error *icuda_buffer_write(tc_plugin_ctx *ctx, tc_buffer *b, size_t offset, const void *host, size_t bytes);
tc_error *icuda_buffer_read(tc_plugin_ctx *ctx, tc_buffer *b, size_t offset, void *host, size_t bytes);
/* Stream-ordered device scratch (the cuBLASLt workspace). */
tc_error *icuda_device_alloc(tc_plugin_ctx *ctx, size_t bytes, CUdeviceptr *out, const char *what);
void icuda_device_free(tc_plugin_ctx *ctx, CUdeviceptr p);

/* ---------------------------------------------------------------- executable.c */
#define ICUDA_MM_ALGO_SLOTS 8
typedef struct icuda_mm_algo_slot icuda_mm_algo_slot; /* blaslt.c: one cached heuristic answer */
#define ICUDA_GRAPHS 16 /* recorded CUDA graphs kept per executable (graphs.c) */
typedef struct icuda_graph_slot icuda_graph_slot;
typedef struct icuda_gemm_job icuda_gemm_job; /* gemm_background.c */

/* blaslt_epilogue.c: a MATMUL epilogue of the form acc (+ load)* -> store, run by cuBLASLt
 * (bias vector, residual as C with beta = 1) when the layouts at launch allow it. */
#define ICUDA_LT_MAX_LOADS 2
typedef struct icuda_lt_operand {
  int32_t buffer, offset, n_vars;
  int32_t strides[TC_MAX_RANK + 1]; /* expr ids per outer var (and the unused inner one) */
} icuda_lt_operand;
typedef struct icuda_lt_epilogue {
  bool possible; /* the ops have that form */
  int32_t n_loads;
  icuda_lt_operand loads[ICUDA_LT_MAX_LOADS];
  icuda_lt_operand store;
} icuda_lt_epilogue;
/* The product's extents at launch. */
typedef struct icuda_lt_shape {
  int64_t m, n, b1, b2;
} icuda_lt_shape;
/* The epilogue as cuBLASLt takes it, evaluated at one launch (offsets and strides in elements). */
typedef struct icuda_lt_bound {
  bool has_bias, has_res;
  int32_t bias_buffer, res_buffer;
  int64_t bias_offset, res_offset, res_stride_m, res_stride_batch, res_stride_batch2;
} icuda_lt_bound;
void icuda_lt_epilogue_find(const tc_kernel_desc *k, icuda_lt_epilogue *out);
typedef struct icuda_kernel icuda_kernel;
/* True when cuBLASLt can run k's epilogue at this launch (vals: every expr evaluated). */
bool icuda_lt_epilogue_bind(const icuda_kernel *k, const int64_t *vals, const icuda_lt_shape *sh, icuda_lt_bound *out);

/* One compiled kernel: what launch needs, copied out of the borrowed list. */
struct icuda_kernel {
  char name[128];             /* the tc kernel's name, for messages */
  icuda_kernel_plan plan;
  CUfunction fn;              /* NULL for a MATMUL without epilogue */
  int32_t kind;               /* tc_kernel_kind */
  int32_t n_outer;
  int32_t outer[TC_MAX_RANK]; /* expr ids */
  int32_t n_buffers;
  int32_t numel[ICUDA_MAX_BUFS];     /* expr ids, for bounds checks */
  int32_t elem_size[ICUDA_MAX_BUFS]; /* bytes */
  int32_t dtype[ICUDA_MAX_BUFS];
  tc_matmul_desc mm;          /* MATMUL: a copy (ids only) */
  tc_attention_desc attn;     /* ATTENTION: a copy (ids only) */
  icuda_mm_algo_slot *algos;  /* MATMUL: ICUDA_MM_ALGO_SLOTS heuristic answers, by shape */
  int32_t next_algo;
  tck_launch_stats profile;   /* TC_LOGS=profile: device time per launch (cuBLASLt + epilogue) */
  icuda_lt_epilogue lt_epi;   /* MATMUL: the epilogue cuBLASLt may run instead of the kernel */
  CUfunction gemm_fn;         /* MATMUL: the generated GEMM (plan.gemm_name), or NULL (none, or
                                 not loaded yet: gemm_background.c) */
  bool gemm_logged;           /* TC_LOGS=init said once that it ran while cuBLASLt was loading */
  bool launched;              /* once: TC_LOGS=init times the first launch */
};

struct tc_executable {
  char *name;
  char *source;
  bool from_cache;
  double compile_seconds;
  bool allow_tf32;
  int32_t gemm;               /* icuda_gemm_mode (cuda.gemm) */
  CUmodule *modules;          /* per kernel: its own module (NULL: no function, or not loaded) */
  CUmodule *gemm_modules;     /* per kernel: its generated GEMM's module (NULL: none, or not yet) */
  icuda_gemm_job *gemm_job;   /* gemm_background.c: the GEMMs compiling in the background, or NULL */
  int32_t n_exprs, n_syms;
  tc_size_expr *exprs;
  int32_t n_kernels;
  icuda_kernel *kernels;
  /* reduce-overhead / max-autotune: calls replayed as CUDA graphs (graphs.c) */
  bool graph_mode;
  bool autotune;               /* max-autotune(-no-cudagraphs): cuBLASLt's algorithms timed per shape */
  bool graphs_off;             /* stopped recording: calls kept missing */
  icuda_graph_slot *graphs;    /* ICUDA_GRAPHS slots, or NULL */
  uint64_t graph_clock, graph_hits, graph_misses;
};

typedef struct icuda_compile_opts {
  bool allow_tf32;
  int32_t row_threads; /* cuda.row_threads; 0: automatic */
  int32_t attn_queries, attn_keys; /* cuda.attention_queries / cuda.attention_keys (128, 32) */
  int32_t attn_thread_queries;     /* cuda.attention_thread_queries (4) */
  int32_t gemm;                    /* cuda.gemm: icuda_gemm_mode */
  int32_t attn_kernel;             /* cuda.attention_kernel: icuda_attn_kernel */
  int32_t attn_tile_m, attn_tile_n; /* cuda.attention_tile (8 x 8) */
  int32_t mode;        /* tc_mode: reduce-overhead and max-autotune replay calls as CUDA graphs */
} icuda_compile_opts;
tc_error *icuda_compile(tc_plugin_ctx *ctx, const tc_kernel_list *list, const icuda_compile_opts *o,
                        tc_executable **out);
void icuda_executable_free(tc_plugin_ctx *ctx, tc_executable *exe);

/* ---------------------------------------------------------------- profile.c
 * TC_LOGS=profile: every launch is bracketed by two events and waited for (so the device time
 * of each kernel, cuBLASLt's product and its epilogue together, is known at the cost of the
 * queue's asynchrony); each kernel's figures are logged when its executable is freed. Launches
 * held for a CUDA graph are not timed. */
void icuda_profile_open(tc_plugin_ctx *ctx);
void icuda_profile_close(tc_plugin_ctx *ctx);
/* Around one launch: begin says whether this launch is timed; end records its time in k. */
bool icuda_profile_begin(tc_plugin_ctx *ctx);
void icuda_profile_end(tc_plugin_ctx *ctx, icuda_kernel *k);
void icuda_profile_report(tc_plugin_ctx *ctx, const tc_executable *exe);

/* ---------------------------------------------------------------- modules.c
 * The executable's code: one module per kernel with a function (prelude + that kernel) and one
 * per generated GEMM, each cubin from the host's disk cache (kind "cubin", keyed by that source,
 * the sm, NVRTC's version and flags) or from NVRTC, the missing ones compiled at once on up to
 * one thread per core: a graph's first call waits for its slowest kernel, not for the sum. The
 * generated GEMMs missing from the cache compile in the background unless the first call needs
 * them (gemm_background.c). Fills exe->modules, exe->gemm_modules and each kernel's fn and
 * gemm_fn; exe->from_cache when no NVRTC ran for the first call. plans: icuda_codegen's. */
tc_error *icuda_modules_build(tc_plugin_ctx *ctx, tc_executable *exe, const icuda_kernel_plan *plans);
void icuda_modules_free(tc_plugin_ctx *ctx, tc_executable *exe);
/* One NVRTC program of an executable: a kernel's module, or a kernel's generated GEMM's. */
typedef struct icuda_program {
  int32_t kernel;
  bool gemm;      /* the kernel's generated GEMM */
  char *source;   /* icuda_program_source */
  char *key;      /* icuda_cubin_key */
  size_t key_len;
  void *cubin;
  size_t size;
  bool hit;       /* the cubin came from the cache */
  tc_status st;   /* the compile's */
  char err[2048];
} icuda_program;
/* Compiles todo[0..n) on up to `threads` threads, the caller one of them (running meanwhile(arg)
 * first, when given). Needs no GPU and touches no context. */
void icuda_programs_compile(const icuda_nvrtc *nv, int32_t sm, icuda_program **todo, int32_t n, int32_t threads,
                            void (*meanwhile)(void *), void *arg);
/* One thread per core, at most 32. */
int32_t icuda_compile_threads(void);
void icuda_programs_free(icuda_program *programs, int32_t n);
/* Loads u's cubin as its kernel's module (or its GEMM's) and takes the function; *load_result:
 * cuModuleLoadData's (an error is returned for what fails after it). The context current. */
tc_error *icuda_program_load(tc_plugin_ctx *ctx, tc_executable *exe, icuda_program *u, CUresult *load_result);

/* ---------------------------------------------------------------- gemm_background.c
 * The generated GEMMs missing from the cache, compiled by NVRTC on a thread of their own (at nice
 * 10, on half the cores, one executable's at a time in the process) and stored in the disk
 * cache; loaded into the executable on the calls' thread when asked for. No thread outlives its
 * executable (executable_free joins it), and process exit waits for the ones still running. */
/* Starts compiling progs[0..n) (taken, freed by the job) for exe; where no thread starts, they
 * are compiled now. */
void icuda_gemm_background_start(tc_plugin_ctx *ctx, tc_executable *exe, const icuda_nvrtc *nv, icuda_program *progs,
                                 int32_t n);
/* Loads the GEMMs the background compiled into exe (their kernels' gemm_fn) if it is done (wait:
 * waiting for it). True when none is left compiling. A GEMM that failed is logged, and its
 * kernel runs on cuBLASLt. The context current; never inside a stream capture. */
bool icuda_gemm_background_collect(tc_plugin_ctx *ctx, tc_executable *exe, bool wait);
/* Waits for exe's background compile, if any, and frees it (executable_free). */
void icuda_gemm_background_finish(tc_executable *exe);

/* ---------------------------------------------------------------- launch.c */
tc_error *icuda_launch(tc_plugin_ctx *ctx, const tc_launch_args *a);
/* Queues a generated kernel on ctx->stream (cuLaunchKernel's arguments): an early launch
 * (programmatic dependent launch) when ctx->early_launch and no graph is being recorded. */
CUresult icuda_launch_kernel(tc_plugin_ctx *ctx, CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned block,
                             unsigned smem, void **params);
/* Launches plan's function as POINTS over `points` outer points (nothing for 0). */
tc_error *icuda_launch_points(tc_plugin_ctx *ctx, const icuda_kernel *k, uint64_t points, icuda_args *args);

/* ---------------------------------------------------------------- gemm.c */
/* True when this launch of MATMUL kernel k (in call call_id) runs the generated GEMM instead of
 * cuBLASLt: cuda.gemm=generated, or auto when cuBLASLt was still starting at the call's first
 * matmul (asked without waiting, once per call: a call's matmuls all run on one GEMM; said
 * once per kernel under TC_LOGS=init) and the GEMMs are loaded (a call whose GEMMs still
 * compile in the background waits for cuBLASLt instead). Under auto, reduce-overhead and
 * max-autotune wait for cuBLASLt (what they record and tune is cuBLASLt); any mode where it
 * cannot load: generated, waiting for the background compile if need be. */
bool icuda_gemm_wanted(tc_plugin_ctx *ctx, tc_executable *exe, icuda_kernel *k, uint64_t call_id);
/* The generated GEMM of k (product and epilogue) queued on ctx->stream. */
tc_error *icuda_gemm_launch(tc_plugin_ctx *ctx, const icuda_kernel *k, const int64_t *vals, icuda_args *args);

/* ---------------------------------------------------------------- blaslt.c */
/* C = A.B of kernel k through cuBLASLt, sizes and strides from vals (every expr evaluated),
 * operands from args (the kernel's buffers). Queued on ctx->stream. */
tc_error *icuda_blaslt_matmul(tc_plugin_ctx *ctx, tc_executable *exe, icuda_kernel *k, const int64_t *vals,
                              const icuda_args *args, bool *epilogue_done);
void icuda_blaslt_release(tc_plugin_ctx *ctx);
/* cuBLASLt's handle and workspace now (made at the first matmul otherwise), its start-up
 * thread started (blaslt_warmup.c) and not waited for: while NVRTC runs, or at a warm first
 * call's first matmul once the library is loaded. Waits for the preload thread's load. */
tc_error *icuda_blaslt_start(tc_plugin_ctx *ctx);
/* icuda_blaslt_start, then waits for the start-up thread: cuBLASLt usable on this thread now
 * (before a capture, before a matmul). */
tc_error *icuda_blaslt_prepare(tc_plugin_ctx *ctx);
/* True when a matmul can go to cuBLASLt without waiting: the handle made and its start-up
 * done, or no load tried yet and no thread loading (the matmul then loads it). Never blocks. */
bool icuda_blaslt_ready_now(tc_plugin_ctx *ctx);
/* True when the library is loaded (the handle can be made in a few ms). Never blocks. */
bool icuda_blaslt_loaded_now(tc_plugin_ctx *ctx);
/* Why cuBLASLt is not ready now: still loading, still starting, or the load's failure. */
const char *icuda_blaslt_not_ready_why(tc_plugin_ctx *ctx);
/* blaslt_warmup.c's thread: one heuristic query on ctx's handle, its time in lt_warm_seconds. */
void icuda_blaslt_first_query(tc_plugin_ctx *ctx);

/* ---------------------------------------------------------------- blaslt_warmup.c */
/* Starts cuBLASLt's start-up thread for ctx's handle (just made, on the calls' thread); the
 * first call of the process registers the exit handler that waits for such threads. */
void icuda_blaslt_warmup_start(tc_plugin_ctx *ctx);
/* True when no start-up thread runs for ctx (done, joined, or none). Never blocks. */
bool icuda_blaslt_warmup_done(tc_plugin_ctx *ctx);
/* Waits for ctx's start-up thread, if any. */
void icuda_blaslt_warmup_join(tc_plugin_ctx *ctx);
/* True once cuBLASLt's load was tried and failed (the process's matmuls then need the generated
 * GEMM). Never blocks. */
bool icuda_blaslt_unavailable(void);
/* For preload.c: loads cuBLASLt (once per process; thread-safe), true when it loaded. */
bool icuda_blaslt_load(void);

/* ---------------------------------------------------------------- preload.c */
/* Starts loading NVRTC and cuBLASLt (process-wide, once) on a thread of ctx's, so a first call
 * finds them loaded: both are large libraries (tens of milliseconds each to map and relocate),
 * and the host traces and schedules meanwhile. Loading only (preload.c says why). ctx_release
 * joins it. */
void icuda_libraries_preload(tc_plugin_ctx *ctx);
/* Waits for the thread to finish (a caller that needs cuBLASLt now, and ctx_release). */
void icuda_libraries_preload_join(tc_plugin_ctx *ctx);

/* ---------------------------------------------------------------- graphs.c */
/* True when exe's calls go through CUDA graphs (its mode, the driver, no cuda.sync_launches). */
bool icuda_graphs_wanted(const tc_plugin_ctx *ctx, const tc_executable *exe);
/* Holds a launch of the current call (runs what was held first when it is another call's). */
tc_error *icuda_graphs_hold(tc_plugin_ctx *ctx, const tc_launch_args *a);
/* At the call's flush: a whole call replays its graph (recorded first on a miss). */
tc_error *icuda_graphs_flush(tc_plugin_ctx *ctx);
/* Queues whatever is held, uncaptured: before any other operation on the context. */
tc_error *icuda_graphs_release_held(tc_plugin_ctx *ctx);
/* Forgets what is held for exe (its context is gone: nothing can be queued). */
void icuda_graphs_drop_held(tc_plugin_ctx *ctx, const tc_executable *exe);
void icuda_graphs_free(tc_plugin_ctx *ctx, tc_executable *exe);
void icuda_held_free(tc_plugin_ctx *ctx);
void icuda_mm_algos_free(icuda_mm_algo_slot *slots);

#endif
