/* test_plugin_common.h — the body shared by the registry's test plugins (every .c in tests/plugins):
 * a host-memory, graph-hand-off backend whose entries do nothing but succeed. Each plugin
 * defines what it tests (its name, its probe, its query) and includes this for the rest.
 * Like any plugin, it includes nothing of tc but tc_plugin.h. */
#ifndef TC_TEST_PLUGIN_COMMON_H
#define TC_TEST_PLUGIN_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plugin.h"

/* Not every plugin uses every helper. */
#define TP_UNUSED __attribute__((unused))

/* Tests read `device` through the context pointer: keep it the first field. */
struct tc_plugin_ctx {
  int32_t device;
  const tc_host_api *host;
};

TP_UNUSED static tc_status tp_probe_one_cpu(const tc_host_api *host, tc_probe_info *info, int32_t score) {
  (void)host;
  info->available = true;
  info->score = score;
  info->n_devices = 1;
  snprintf(info->devices[0].name, sizeof info->devices[0].name, "test cpu");
  info->devices[0].type = TC_DEVICE_CPU;
  info->devices[0].memory_bytes = 1u << 20;
  return TC_OK;
}

TP_UNUSED static tc_status tp_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **ctx) {
  tc_plugin_ctx *c = calloc(1, sizeof *c);
  if (!c) return TC_ERR_OUT_OF_MEMORY;
  c->device = device;
  c->host = host;
  *ctx = c;
  return TC_OK;
}

TP_UNUSED static void tp_release(tc_plugin_ctx *ctx) {
  free(ctx);
}

TP_UNUSED static tc_status tp_compile_graph(tc_plugin_ctx *ctx, const tc_graph_desc *graph, tc_executable **exe) {
  (void)ctx;
  (void)graph;
  *exe = NULL;
  return TC_ERR_UNSUPPORTED;
}

TP_UNUSED static tc_status tp_run_graph(tc_plugin_ctx *ctx, tc_executable *exe, const int64_t *syms,
                                        const tc_tensor_ref *inputs, const tc_tensor_ref *outputs) {
  (void)ctx;
  (void)exe;
  (void)syms;
  (void)inputs;
  (void)outputs;
  return TC_ERR_UNSUPPORTED;
}

TP_UNUSED static tc_status tp_synchronize(tc_plugin_ctx *ctx) {
  (void)ctx;
  return TC_OK;
}

TP_UNUSED static void tp_executable_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  (void)ctx;
  (void)exe;
}

/* A complete table of this ABI version, named `name`, with the given probe and init. */
TP_UNUSED static tc_plugin_api tp_table(const char *name, tc_status (*probe)(const tc_host_api *, tc_probe_info *),
                                        tc_status (*init)(const tc_host_api *, int32_t, tc_plugin_ctx **)) {
  tc_plugin_api a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.abi_major = TC_ABI_MAJOR;
  a.abi_minor = TC_ABI_MINOR;
  a.name = name;
  a.version = "0.0.1";
  a.description = "registry test plugin";
  a.handoff = TC_HANDOFF_GRAPH;
  a.memory = TC_MEMORY_HOST;
  a.probe = probe;
  a.init = init ? init : tp_init;
  a.release = tp_release;
  a.compile_graph = tp_compile_graph;
  a.run_graph = tp_run_graph;
  a.synchronize = tp_synchronize;
  a.executable_free = tp_executable_free;
  return a;
}

/* Copies a table into the host's buffer the way the header asks: at most the room the host
 * gave (out->struct_size on entry); struct_size says what was filled. */
TP_UNUSED static tc_status tp_hand_over(const tc_plugin_api *table, tc_plugin_api *out) {
  size_t room = out->struct_size;
  size_t n = table->struct_size < room ? table->struct_size : room;
  memcpy(out, table, n);
  out->struct_size = n;
  return TC_OK;
}

#endif
