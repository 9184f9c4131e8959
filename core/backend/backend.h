/* backend/backend.h — the backend stage: the core's view of a backend: a plugin's context, created with one set of
 * context-level options, and every call into it. Implemented by registry/.
 *
 * Every plugin call of the core goes through the backend_* functions below: they build the
 * ABI 2 args structs, hold the context's lock (unless the plugin declared itself thread-safe),
 * and turn a returned tc_error into a tc_status with the core's per-thread message. */
#ifndef TC_BACKEND_H
#define TC_BACKEND_H

#include <pthread.h>

#include "base/base.h"
#include "tc_plugin.h"

struct reg_plugin;

/* Parsed "key=value,..." options (options.c): parsed once, validated per backend. */
typedef struct tc_options tc_options;

/* One context of a plugin. Contexts are keyed by their context-scope options, so
 * "vulkan.device=1" gets its own context on device 1. Never freed while the process runs
 * (tensors and compiled plans keep pointers to it). */
typedef struct tc_backend {
  const char *name;            /* the plugin's name: "vulkan" */
  const tc_plugin_api *api;    /* the plugin's table (zero past what it filled) */
  tc_plugin_ctx *ctx;
  bool host_memory;            /* api->memory == TC_MEMORY_HOST */
  const char *context_options; /* "vulkan.device=1" (the context-scope options that differ from the defaults), "" */
  struct reg_plugin *plugin;   /* the registry's record */
  pthread_mutex_t lock;        /* serializes calls unless the plugin is TC_PLUGIN_THREAD_SAFE */
  bool serialize;
  struct backend_wait_check *wait_checks; /* backend_wait_check_add; NULL: none */
} tc_backend;

/* ---------------------------------------------------------------- finding backends */
/* The context of backend `name` ("auto": the best available; "eager": the eager backend) for
 * the context-scope options among opts (NULL: $TC_OPTIONS only), created on first use. NULL with
 * an error that says why (unknown: lists the known names; unavailable: the reason; a bad option:
 * names the key, the backend and the valid keys). */
tc_backend *backend_find(const char *name, const tc_options *opts);
/* The backend eager ops run on: $TC_EAGER_BACKEND, else "debug-eager" (default options). */
tc_backend *backend_eager(void);

/* ---------------------------------------------------------------- options (options.c) */
/* Parses "k=v,k2=v2" (NULL or "" is empty) on top of $TC_OPTIONS: later settings of a key win,
 * the given text over the environment. NULL with an error naming the malformed item. */
tc_options *options_parse(const char *text);
void options_free(tc_options *o);
/* Checks every key of opts against the plugins' declared tables: a key whose prefix belongs to
 * no plugin, an unknown key, or a bad value is an error naming the key, the backend and its
 * valid keys. Only keys of `be`'s prefix are required to be known when be is given. */
tc_status options_validate(const tc_options *opts, const tc_backend *be);
/* The options of be's plugin for `scope` (tc_option_scope): every declared option, set or
 * defaulted, in declaration order. *out is malloc'd (with the strings it points to); free with
 * free(). n may be 0 (then *out is NULL). */
tc_status options_for_scope(const tc_options *opts, const struct reg_plugin *p, int32_t scope, tc_option **out,
                            int32_t *n);
/* A printable "key=value,..." of opts' keys with the given prefix, for logs ("" when none). */
void options_describe(const tc_options *opts, const char *prefix, char *buf, size_t cap);

/* ---------------------------------------------------------------- calls into the plugin (calls.c)
 * Each returns TC_OK, or the plugin's status with its message set as the core's error,
 * prefixed "<backend>: ". */
tc_status backend_buffer_alloc(tc_backend *be, size_t bytes, tc_buffer **buf /* out */);
void backend_buffer_free(tc_backend *be, tc_buffer *buf);
tc_status backend_buffer_write(tc_backend *be, tc_buffer *dst, size_t offset, const void *src, size_t bytes);
/* A read waits for every launch before it, so it also delivers what that work left to report:
 * an asynchronous failure (backend_take_async_error), then the wait checks below. */
tc_status backend_buffer_read(tc_backend *be, tc_buffer *src, size_t offset, void *dst, size_t bytes);
/* The plugin's read alone: no asynchronous failure taken, no wait check run (for the checks). */
tc_status backend_buffer_read_raw(tc_backend *be, tc_buffer *src, size_t offset, void *dst, size_t bytes);
/* Compiles a kernel list (kernels != NULL) or a graph. opts: the call's options (NULL: the
 * environment's); mode: tc_mode. */
tc_status backend_compile(tc_backend *be, const tc_kernel_list *kernels, const tc_graph_desc *graph,
                          const tc_options *opts, int32_t mode, tc_executable **exe /* out */);
tc_status backend_launch(tc_backend *be, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, int32_t n_args,
                         const int64_t *syms, int32_t n_syms, uint64_t call_id);
/* index_error: the run's tc_index_error record (ABI 2.3; a host pointer on host memory), or NULL. */
tc_status backend_run_graph(tc_backend *be, tc_executable *exe, const int64_t *syms, int32_t n_syms,
                            const tc_tensor_ref *inputs, int32_t n_inputs, const tc_tensor_ref *outputs,
                            int32_t n_outputs, uint64_t call_id, tc_buffer *index_error);
/* After a call on a device backend: starts queued work without waiting (flush), or waits when
 * the plugin has no flush. */
tc_status backend_flush(tc_backend *be);
tc_status backend_synchronize(tc_backend *be);
void backend_executable_free(tc_backend *be, tc_executable *exe);
/* Source (borrowed until executable_free; NULL when none) and facts of an executable. */
typedef struct backend_exe_info {
  const char *source;
  bool from_cache;
  double compile_seconds;
} backend_exe_info;
void backend_executable_info(tc_backend *be, tc_executable *exe, backend_exe_info *info /* out */);

/* A new call id for work about to be queued on be, remembered with `what` ("graph mlp") so an
 * asynchronous failure can name it. */
uint64_t backend_call_begin(tc_backend *be, const char *what);
/* An asynchronous failure reported for be's work since the last check, as an error naming the
 * call (TC_ERR_DEVICE), or TC_OK. Called by the calls that wait. */
tc_status backend_take_async_error(tc_backend *be);

/* Checks at waits: what a device kernel leaves in memory for the host (ABI 2.3's index error
 * record) is looked at when the host next waits for the backend's work anyway: after
 * backend_buffer_read and backend_synchronize, every registered check runs (in registration
 * order, under one lock, outside the context lock) and the first error fails the waiting call.
 * A check reads with backend_buffer_read_raw. fn(ctx, &drop) returns TC_OK or an error it set;
 * setting drop unregisters it (it has freed ctx, or will). */
typedef tc_status (*backend_wait_check_fn)(void *ctx, bool *drop);
tc_status backend_wait_check_add(tc_backend *be, backend_wait_check_fn fn, void *ctx);
/* Unregisters ctx's check; when it returns, fn(ctx) is not running and never runs again. */
void backend_wait_check_remove(tc_backend *be, void *ctx);

/* What the backend accepts (the capabilities extension): whether it takes `prim` producing
 * or consuming `dtype`, and kernel kind `kind` (-1: not asked). True without the extension,
 * except for TC_KERNEL_ATTENTION, which a plugin of ABI 2.2 or newer must declare. */
bool backend_accepts(const tc_backend *be, int32_t prim, int32_t dtype, int32_t kind);
/* backend_accepts for kernel kind `kind`, then the plugin's answer under the compile-scope
 * options of opts (NULL: $TC_OPTIONS) where its capabilities extension has kernel_kinds_under:
 * an option may decline an opt-in kind (cpu.attention=unfused). */
bool backend_accepts_kind_under(const tc_backend *be, int32_t kind, const tc_options *opts);

#endif
