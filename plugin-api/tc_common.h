/*
 * tc_common.h — the few enums the public API (tc.h) and the plugin ABI (tc_plugin.h) share.
 *
 * Stands alone: C11 plus <stddef.h> and <stdint.h>. Every value here is fixed forever: new
 * values get new numbers, old ones are never renumbered or reused.
 */
#ifndef TC_COMMON_H
#define TC_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most dims a tensor has. */
#define TC_MAX_RANK 8

typedef enum tc_status {
  TC_OK = 0,
  TC_ERR_INVALID_ARGUMENT = 1, /* bad input: shapes, dtypes, attributes, option values */
  TC_ERR_UNSUPPORTED = 2,      /* a valid request this backend declines (prim, dtype, kind) */
  TC_ERR_UNAVAILABLE = 3,      /* no device, no driver, plugin not loadable */
  TC_ERR_OUT_OF_MEMORY = 4,
  TC_ERR_COMPILE = 5, /* code generation or the downstream compiler failed */
  TC_ERR_VERSION = 6, /* ABI major mismatch or a struct too small to use */
  TC_ERR_INTERNAL = 7,
  TC_ERR_GUARD = 8, /* a compiled entry's assumptions did not hold (core only) */
  TC_ERR_GRAPH_BREAK = 9,
  TC_ERR_DEVICE = 10 /* the device failed work it had accepted (asynchronous failures) */
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

/* What tc_compile_options.mode asks for; reaches the plugin's compile unchanged. */
typedef enum tc_mode {
  TC_MODE_DEFAULT = 0,
  TC_MODE_REDUCE_OVERHEAD = 1,
  TC_MODE_MAX_AUTOTUNE = 2,
  TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS = 3
} tc_mode;

typedef enum tc_device_type {
  TC_DEVICE_CPU = 0,
  TC_DEVICE_DISCRETE_GPU = 1,
  TC_DEVICE_INTEGRATED_GPU = 2,
  TC_DEVICE_VIRTUAL_GPU = 3,
  TC_DEVICE_OTHER = 4
} tc_device_type;

#ifdef __cplusplus
}
#endif
#endif /* TC_COMMON_H */
