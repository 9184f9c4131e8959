/* plugin.c — the entry point of debug-eager: the query handshake, probe, context lifetime and
 * the graph hand-off entries (ABI 2). A TC_HANDOFF_GRAPH plugin on host memory (a tc_buffer*
 * is a host pointer), always available, scored low so that "auto" prefers a real backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "debug_eager.h"

#define DE_VERSION "0.2.0"

/* Option table: the interpreter reads none today (prefix "debug" reserved for it). */
static const tc_option_decl de_options[1] = {{0}};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const tc_device_desc de_device = {sizeof(tc_device_desc), "host CPU (one prim at a time)", TC_DEVICE_CPU, 0};

static tc_error *de_probe(tc_probe_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_probe_args, device_size))
    return a ? tck_error(a->host, TC_ERR_VERSION, "debug-eager: probe: tc_probe_args too small") : NULL;
  a->available = true;
  a->reason = "reference interpreter: always available, slow by design";
  a->score = 1;
  a->n_devices = 1;
  a->devices = &de_device;
  a->device_size = sizeof de_device;
  return NULL;
}

static tc_error *de_init(tc_init_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_init_args, ctx))
    return a ? tck_error(a->host, TC_ERR_VERSION, "debug-eager: init: tc_init_args too small") : NULL;
  const tc_host_api *host = a->host;
  if (!host) return NULL; /* no host: nobody to report to (and no error could be made) */
  if (a->device != 0 && a->device != -1)
    return tck_error(host, TC_ERR_INVALID_ARGUMENT, "debug-eager: init: device %d does not exist (only 0)", a->device);
  tc_plugin_ctx *c = calloc(1, sizeof *c);
  if (!c) return tck_error(host, TC_ERR_OUT_OF_MEMORY, "debug-eager: init: out of memory");
  size_t n = host->struct_size < sizeof c->host ? host->struct_size : sizeof c->host;
  memcpy(&c->host, host, n); /* fields the host did not fill stay zero (NULL) */
  c->host.struct_size = n;
  a->ctx = c;
  return NULL;
}

static void de_release(const tc_release_args *a) {
  if (a) free(a->ctx);
}

static tc_error *de_compile(tc_compile_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_compile_args, exe) || !a->ctx) return NULL; /* cannot answer */
  de_call call = {&a->ctx->host, NULL, NULL};
  tc_status s = TC_OK;
  a->exe = NULL;
  if (!a->graph) s = de_error(&call, TC_ERR_INVALID_ARGUMENT, "compile: no graph (debug-eager takes graphs)");
  if (s == TC_OK) s = de_graph_validate(&call, a->graph);
  double t0 = now_seconds();
  if (s == TC_OK) s = de_graph_copy(&call, a->graph, &a->exe);
  if (s == TC_OK) a->exe->compile_seconds = now_seconds() - t0;
  return de_call_result(&call, s);
}

static tc_error *de_run_graph(const tc_run_graph_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_run_graph_args, call_id) || !a->ctx) return NULL;
  de_call call = {&a->ctx->host, NULL, NULL};
  /* A host-memory plugin: the record is a host pointer. A 2.2 host has no such field. */
  if (TC_HAS_FIELD(a, tc_run_graph_args, index_error)) call.index_error = (tc_index_error *)a->index_error;
  tc_status s = de_graph_run(&call, a->exe, a);
  return de_call_result(&call, s);
}

static tc_error *de_synchronize(const tc_queue_args *a) { return NULL; /* every call completes before it returns */ }

static void de_executable_free(const tc_executable_free_args *a) {
  if (a) de_graph_free(a->exe);
}

static tc_error *de_executable_info(tc_executable_info_args *a) {
  if (!a || a->struct_size < TC_STRUCT_SIZE(tc_executable_info_args, compile_seconds) || !a->exe) return NULL;
  tck_executable_info_fill(a, a->exe->listing, false, a->exe->compile_seconds);
  return NULL;
}

/* Every prim the interpreter runs, every dtype but the reserved ones; no kernels. */
static const tc_capabilities_ext de_caps = {{sizeof(tc_capabilities_ext), TC_EXT_CAPABILITIES, NULL},
                                            DE_ALL, 2, tck_prims_all, 0, NULL};

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) {
  static const tc_plugin_api api = {
      .struct_size = sizeof(tc_plugin_api),
      .abi_major = TC_ABI_MAJOR,
      .abi_minor = TC_ABI_MINOR,
      .name = DE_NAME,
      .version = DE_VERSION,
      .description = DE_DESCRIPTION,
      .handoff = TC_HANDOFF_GRAPH,
      .memory = TC_MEMORY_HOST,
      .flags = 0,
      .option_prefix = DE_OPTION_PREFIX,
      .n_options = 0,
      .options = de_options,
      .option_size = sizeof(tc_option_decl),
      .extensions = &de_caps.base,
      .probe = de_probe,
      .init = de_init,
      .release = de_release,
      .compile = de_compile,
      .executable_free = de_executable_free,
      .synchronize = de_synchronize,
      .run_graph = de_run_graph,
      .executable_info = de_executable_info,
  };
  return tck_query_answer(args, &api);
}
