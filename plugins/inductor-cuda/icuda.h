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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_kit.h"
#include "tc_plugin.h"

/* ---------------------------------------------------------------- the generated code's ABI
 * Every generated kernel is `extern "C" __global__ void k_<name>(tc_cu_args a)`: one struct by
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
  ICUDA_LAUNCH_MATMUL = 2  /* cuBLASLt writes the product to buffer c, then (has_epilogue) the
                              generated epilogue kernel runs as POINTS over (batch2,) batch, m, n */
} icuda_launch_kind;

/* How the runtime launches one kernel of the list. */
typedef struct icuda_kernel_plan {
  char name[96];       /* the __global__ function: k_<kernel name> (MATMUL: its epilogue) */
  int32_t kind;        /* icuda_launch_kind */
  int32_t block;       /* threads per block */
  int32_t smem_bytes;  /* dynamic shared memory per block */
  int32_t max_blocks;  /* grid cap (grid-stride loops beyond it); 0: no cap */
  bool has_epilogue;   /* MATMUL: an epilogue kernel `name` exists */
} icuda_kernel_plan;

typedef struct icuda_codegen_options {
  int32_t sm;          /* compute capability x10 (90 on the H200), for tuning choices */
  int32_t n_sms;       /* multiprocessors (132 on the H200), for grid sizing; 0: unknown */
} icuda_codegen_options;

/* The CUDA C of every kernel of a validated list, as one module (readable: kernels named after
 * what they fuse, buffers by name, comments where the structure is not obvious), and one plan
 * per kernel (plans: list->n_kernels entries). source: malloc'd. TC_ERR_UNSUPPORTED with a
 * message naming the kernel for what it cannot generate (more than ICUDA_MAX_BUFS buffers, a
 * dtype it lacks). */
tc_status icuda_codegen(const tc_kernel_list *list, const icuda_codegen_options *o, char **source,
                        icuda_kernel_plan *plans, char *err, size_t cap);

/* ---------------------------------------------------------------- nvrtc.c */
typedef struct icuda_nvrtc icuda_nvrtc; /* the dlopen'd library and its functions */
/* Loads NVRTC (libnvrtc.so.13, libnvrtc.so); NULL with why in err. Thread-safe, loaded once. */
const icuda_nvrtc *icuda_nvrtc_load(char *err, size_t cap);
/* "13.0": part of every cache key. */
const char *icuda_nvrtc_version(const icuda_nvrtc *n);
/* The flags every compile uses for sm (no fast math: results follow PyTorch; no FMA
 * contraction: elementwise results match the other backends bit for bit). Part of the key. */
const char *icuda_nvrtc_flags(int32_t sm);
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
} icuda_codegen_check_ext;
/* codegen_check.c: the extension (next = NULL); the plugin table chains it after its
 * capabilities extension. */
extern const icuda_codegen_check_ext icuda_codegen_check;

#endif
