/* calls.c — every call the core makes into a plugin: the ABI 2 args structs, the context's lock
 * (the threading contract: one call at a time per context unless the plugin declared itself
 * thread-safe), errors turned into the core's per-thread message, and asynchronous failures
 * delivered to the call that waits for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

static void lock(tc_backend *be) {
  if (be->serialize) pthread_mutex_lock(&be->lock);
}

static void unlock(tc_backend *be) {
  if (be->serialize) pthread_mutex_unlock(&be->lock);
}

static tc_status take(tc_backend *be, tc_error *err) {
  return host_error_take(err, be->name);
}

tc_status backend_buffer_alloc(tc_backend *be, size_t bytes, tc_buffer **buf) {
  *buf = NULL;
  if (!be->api->buffer_alloc) return core_error(TC_ERR_INTERNAL, "%s: cannot allocate buffers", be->name);
  tc_buffer_alloc_args a = {.struct_size = sizeof a, .ctx = be->ctx, .bytes = bytes};
  lock(be);
  tc_error *err = be->api->buffer_alloc(&a);
  unlock(be);
  if (!err && !a.buffer) return core_error(TC_ERR_INTERNAL, "%s: buffer_alloc returned no buffer", be->name);
  *buf = a.buffer;
  return take(be, err);
}

void backend_buffer_free(tc_backend *be, tc_buffer *buf) {
  if (!buf || !be->api->buffer_free) return;
  tc_buffer_free_args a = {.struct_size = sizeof a, .ctx = be->ctx, .buffer = buf};
  lock(be);
  be->api->buffer_free(&a);
  unlock(be);
}

tc_status backend_buffer_write(tc_backend *be, tc_buffer *dst, size_t offset, const void *src, size_t bytes) {
  if (!be->api->buffer_write) return core_error(TC_ERR_INTERNAL, "%s: cannot write buffers", be->name);
  tc_buffer_copy_args a = {
      .struct_size = sizeof a, .ctx = be->ctx, .buffer = dst, .offset = offset, .host = (void *)src, .bytes = bytes};
  lock(be);
  tc_error *err = be->api->buffer_write(&a);
  unlock(be);
  return take(be, err);
}

static tc_status run_wait_checks(tc_backend *be);

tc_status backend_buffer_read_raw(tc_backend *be, tc_buffer *src, size_t offset, void *dst, size_t bytes) {
  if (!be->api->buffer_read) return core_error(TC_ERR_INTERNAL, "%s: cannot read buffers", be->name);
  tc_buffer_copy_args a = {
      .struct_size = sizeof a, .ctx = be->ctx, .buffer = src, .offset = offset, .host = dst, .bytes = bytes};
  lock(be);
  tc_error *err = be->api->buffer_read(&a);
  unlock(be);
  return take(be, err);
}

tc_status backend_buffer_read(tc_backend *be, tc_buffer *src, size_t offset, void *dst, size_t bytes) {
  tc_status s = backend_buffer_read_raw(be, src, offset, dst, bytes);
  /* A read waits for the work before it: a failure of that work belongs to this result. */
  tc_status a_s = backend_take_async_error(be);
  if (s != TC_OK) return s;
  return a_s != TC_OK ? a_s : run_wait_checks(be);
}

tc_status backend_compile(tc_backend *be, const tc_kernel_list *kernels, const tc_graph_desc *graph,
                          const tc_options *opts, int32_t mode, tc_executable **exe) {
  *exe = NULL;
  tc_options *own = NULL;
  if (!opts) {
    own = options_parse(NULL);
    if (!own) return tc_last_status();
    opts = own;
  }
  tc_option *o = NULL;
  int32_t n = 0;
  tc_status s = options_for_scope(opts, be->plugin, TC_OPTION_COMPILE, &o, &n);
  options_free(own);
  if (s != TC_OK) return s;
  tc_compile_args a = {.struct_size = sizeof a,
                       .ctx = be->ctx,
                       .kernels = kernels,
                       .graph = graph,
                       .mode = mode,
                       .n_options = n,
                       .options = o,
                       .option_size = sizeof(tc_option)};
  lock(be);
  tc_error *err = be->api->compile(&a);
  unlock(be);
  free(o);
  if (!err && !a.exe) return core_error(TC_ERR_INTERNAL, "%s: compile returned no executable", be->name);
  *exe = a.exe;
  return take(be, err);
}

tc_status backend_launch(tc_backend *be, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, int32_t n_args,
                         const int64_t *syms, int32_t n_syms, uint64_t call_id) {
  tc_launch_args a = {.struct_size = sizeof a,
                      .ctx = be->ctx,
                      .exe = exe,
                      .kernel = kernel,
                      .n_args = n_args,
                      .args = args,
                      .arg_size = sizeof(tc_buffer_arg),
                      .n_syms = n_syms,
                      .syms = syms,
                      .call_id = call_id};
  lock(be);
  tc_error *err = be->api->launch(&a);
  unlock(be);
  return take(be, err);
}

tc_status backend_run_graph(tc_backend *be, tc_executable *exe, const int64_t *syms, int32_t n_syms,
                            const tc_tensor_ref *inputs, int32_t n_inputs, const tc_tensor_ref *outputs,
                            int32_t n_outputs, uint64_t call_id, tc_buffer *index_error) {
  tc_run_graph_args a = {.struct_size = sizeof a,
                         .ctx = be->ctx,
                         .exe = exe,
                         .n_syms = n_syms,
                         .syms = syms,
                         .n_inputs = n_inputs,
                         .inputs = inputs,
                         .input_size = sizeof(tc_tensor_ref),
                         .n_outputs = n_outputs,
                         .outputs = outputs,
                         .output_size = sizeof(tc_tensor_ref),
                         .call_id = call_id,
                         .index_error = index_error};
  lock(be);
  tc_error *err = be->api->run_graph(&a);
  unlock(be);
  return take(be, err);
}

tc_status backend_flush(tc_backend *be) {
  /* An earlier call's asynchronous failure belongs to the caller before this one queues more. */
  TC_RETURN_IF_ERROR(backend_take_async_error(be));
  if (be->host_memory) return TC_OK;
  tc_queue_args a = {.struct_size = sizeof a, .ctx = be->ctx};
  lock(be);
  tc_error *err = be->api->flush ? be->api->flush(&a) : be->api->synchronize(&a);
  unlock(be);
  return take(be, err);
}

tc_status backend_synchronize(tc_backend *be) {
  tc_queue_args a = {.struct_size = sizeof a, .ctx = be->ctx};
  lock(be);
  tc_error *err = be->api->synchronize(&a);
  unlock(be);
  tc_status s = take(be, err);
  tc_status a_s = backend_take_async_error(be);
  if (s != TC_OK) return s;
  return a_s != TC_OK ? a_s : run_wait_checks(be);
}

void backend_executable_free(tc_backend *be, tc_executable *exe) {
  if (!exe) return;
  tc_executable_free_args a = {.struct_size = sizeof a, .ctx = be->ctx, .exe = exe};
  lock(be);
  be->api->executable_free(&a);
  unlock(be);
}

void backend_executable_info(tc_backend *be, tc_executable *exe, backend_exe_info *info) {
  memset(info, 0, sizeof *info);
  if (!exe || !be->api->executable_info) return;
  tc_executable_info_args a = {.struct_size = sizeof a, .ctx = be->ctx, .exe = exe};
  lock(be);
  tc_error *err = be->api->executable_info(&a);
  unlock(be);
  if (err) {
    host_error_drop(err); /* facts are optional: none is not a failure of the caller */
    return;
  }
  info->source = a.source;
  info->from_cache = a.from_cache;
  info->compile_seconds = a.compile_seconds;
}

/* ---------------------------------------------------------------- asynchronous failures */
uint64_t backend_call_begin(tc_backend *be, const char *what) {
  reg_plugin *p = be->plugin;
  pthread_mutex_lock(&p->async_lock);
  uint64_t id = ++p->next_call_id;
  p->calls[id % REG_CALL_RING].id = id;
  snprintf(p->calls[id % REG_CALL_RING].what, sizeof p->calls[0].what, "%s", what ? what : "");
  pthread_mutex_unlock(&p->async_lock);
  return id;
}

tc_status backend_take_async_error(tc_backend *be) {
  reg_plugin *p = be->plugin;
  if (!p->async_errors) return TC_OK; /* racy peek: a report arriving now is seen next time */
  pthread_mutex_lock(&p->async_lock);
  reg_async_error *a = p->async_errors;
  if (a) p->async_errors = a->next;
  char what[sizeof p->calls[0].what + 4] = ""; /* " (" what ")" */
  if (a && p->calls[a->call_id % REG_CALL_RING].id == a->call_id)
    snprintf(what, sizeof what, " (%s)", p->calls[a->call_id % REG_CALL_RING].what);
  pthread_mutex_unlock(&p->async_lock);
  if (!a) return TC_OK;
  tc_status s = core_error(TC_ERR_DEVICE, "%s: call %llu%s failed on the device: %s", be->name,
                         (unsigned long long)a->call_id, what, a->message);
  free(a);
  return s;
}

/* ---------------------------------------------------------------- checks at waits */
typedef struct backend_wait_check {
  struct backend_wait_check *next;
  backend_wait_check_fn fn;
  void *ctx;
} backend_wait_check;

/* One lock for every context's list: checks are few (one per compiled graph with an index read
 * on a device backend) and run only at waits. Held while a check runs, so that removing one
 * waits for it to finish. */
static pthread_mutex_t wait_checks_lock = PTHREAD_MUTEX_INITIALIZER;

tc_status backend_wait_check_add(tc_backend *be, backend_wait_check_fn fn, void *ctx) {
  backend_wait_check *w = malloc(sizeof *w);
  if (!w) return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory registering a check", be->name);
  *w = (backend_wait_check){.next = NULL, .fn = fn, .ctx = ctx};
  pthread_mutex_lock(&wait_checks_lock);
  backend_wait_check **tail = &be->wait_checks;
  while (*tail) tail = &(*tail)->next;
  __atomic_store_n(tail, w, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&wait_checks_lock);
  return TC_OK;
}

void backend_wait_check_remove(tc_backend *be, void *ctx) {
  pthread_mutex_lock(&wait_checks_lock);
  for (backend_wait_check **p = &be->wait_checks; *p; p = &(*p)->next)
    if ((*p)->ctx == ctx) {
      backend_wait_check *w = *p;
      __atomic_store_n(p, w->next, __ATOMIC_RELEASE);
      free(w);
      break;
    }
  pthread_mutex_unlock(&wait_checks_lock);
}

static tc_status run_wait_checks(tc_backend *be) {
  /* Host-memory backends never register one: their waits stay lock-free. */
  if (!__atomic_load_n(&be->wait_checks, __ATOMIC_ACQUIRE)) return TC_OK;
  tc_status s = TC_OK;
  pthread_mutex_lock(&wait_checks_lock);
  for (backend_wait_check **p = &be->wait_checks; *p && s == TC_OK;) {
    backend_wait_check *w = *p;
    bool drop = false;
    s = w->fn(w->ctx, &drop);
    if (!drop) {
      p = &w->next;
      continue;
    }
    __atomic_store_n(p, w->next, __ATOMIC_RELEASE);
    free(w);
  }
  pthread_mutex_unlock(&wait_checks_lock);
  return s;
}

/* ---------------------------------------------------------------- capabilities */
bool backend_accepts(const tc_backend *be, int32_t prim, int32_t dtype, int32_t kind) {
  /* A prim newer than the plugin's minor version: it cannot know it, capabilities or not. */
  if (prim >= 0 && be->api && tck_prim_abi_minor(prim) > be->api->abi_minor) return false;
  const tc_ext_base *e = tc_ext_find(be->api->extensions, TC_EXT_CAPABILITIES);
  /* Fused attention is opt-in: only a 2.2 plugin that says so gets the kind. */
  bool opted_in = e && e->struct_size >= TC_STRUCT_SIZE(tc_capabilities_ext, kernel_kinds) && be->api->abi_minor >= 2;
  if (kind == TC_KERNEL_ATTENTION && !opted_in) return false;
  if (!e || e->struct_size < TC_STRUCT_SIZE(tc_capabilities_ext, kernel_kinds)) return true;
  const tc_capabilities_ext *c = (const tc_capabilities_ext *)e;
  if (dtype >= 0 && (dtype >= 32 || !(c->dtypes & (1u << dtype)))) return false;
  if (kind >= 0 && (kind >= 32 || !(c->kernel_kinds & (1u << kind)))) return false;
  if (prim >= 0) {
    int32_t w = prim / 64;
    if (w >= c->n_prim_words || !c->prims || !(c->prims[w] & (1ull << (prim % 64)))) return false;
  }
  return true;
}

bool backend_accepts_kind_under(const tc_backend *be, int32_t kind, const tc_options *opts) {
  if (!backend_accepts(be, -1, -1, kind)) return false;
  const tc_ext_base *e = tc_ext_find(be->api->extensions, TC_EXT_CAPABILITIES);
  if (!e || e->struct_size < TC_STRUCT_SIZE(tc_capabilities_ext, kernel_kinds_under)) return true;
  const tc_capabilities_ext *c = (const tc_capabilities_ext *)e;
  if (!c->kernel_kinds_under || kind < 0 || kind >= 32) return true;
  tc_options *own = NULL;
  if (!opts) opts = own = options_parse(NULL);
  tc_option *o = NULL;
  int32_t n = 0;
  /* Options that do not parse or validate fail the compile later, naming the key; until then
   * the plugin's defaults decide. */
  if (!opts || options_for_scope(opts, be->plugin, TC_OPTION_COMPILE, &o, &n) != TC_OK) n = 0;
  options_free(own);
  const bool yes = (c->kernel_kinds_under(o, n, sizeof(tc_option)) & (1u << kind)) != 0;
  free(o);
  return yes;
}
