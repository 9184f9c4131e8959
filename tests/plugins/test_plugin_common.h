/* test_plugin_common.h — the body shared by the registry's test plugins (every .c in
 * tests/plugins): a host-memory, graph-hand-off backend of ABI 2 whose entries do nothing but
 * succeed. Each plugin defines what it tests (its name, its probe, its query) and includes this
 * for the rest. Like any plugin, it includes nothing of tc but tc_plugin.h. */
#ifndef TC_TEST_PLUGIN_COMMON_H
#define TC_TEST_PLUGIN_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plugin.h"

/* Not every plugin uses every helper. */
#define TP_UNUSED __attribute__((unused))

/* Tests read these through the context pointer: keep them the first fields. */
struct tc_plugin_ctx {
  int32_t device;
  int32_t threads;
  const tc_host_api *host;
};

static const tc_device_desc tp_cpu = {sizeof(tc_device_desc), "test cpu", TC_DEVICE_CPU, 1u << 20};

TP_UNUSED static tc_error *tp_probe_one_cpu(tc_probe_args *a, int32_t score) {
  a->available = true;
  a->score = score;
  a->n_devices = 1;
  a->devices = &tp_cpu;
  a->device_size = sizeof tp_cpu;
  return NULL;
}

/* The value of option `name` handed to init or compile, or NULL. */
TP_UNUSED static const char *tp_option(const tc_option *o, int32_t n, size_t size, const char *name) {
  for (int32_t i = 0; i < n; i++) {
    const tc_option *x = TC_ELEM(tc_option, o, size, i);
    if (x->name && !strcmp(x->name, name)) return x->value;
  }
  return NULL;
}

TP_UNUSED static tc_error *tp_init(tc_init_args *a) {
  tc_plugin_ctx *c = calloc(1, sizeof *c);
  if (!c) return a->host->error_new(a->host->host_ctx, TC_ERR_OUT_OF_MEMORY, "test plugin: out of memory");
  c->device = a->device < 0 ? 0 : a->device;
  c->threads = 1;
  c->host = a->host;
  a->ctx = c;
  return NULL;
}

TP_UNUSED static void tp_release(const tc_release_args *a) {
  free(a->ctx);
}

TP_UNUSED static tc_error *tp_compile(tc_compile_args *a) {
  return a->ctx->host->error_new(a->ctx->host->host_ctx, TC_ERR_UNSUPPORTED, "test plugin: compiles nothing");
}

TP_UNUSED static tc_error *tp_run_graph(const tc_run_graph_args *a) {
  return a->ctx->host->error_new(a->ctx->host->host_ctx, TC_ERR_UNSUPPORTED, "test plugin: runs nothing");
}

TP_UNUSED static tc_error *tp_synchronize(const tc_queue_args *a) {
  (void)a;
  return NULL;
}

TP_UNUSED static void tp_executable_free(const tc_executable_free_args *a) {
  (void)a;
}

/* A complete table of this ABI version, named `name`, with the given probe and init. */
TP_UNUSED static tc_plugin_api tp_table(const char *name, tc_error *(*probe)(tc_probe_args *),
                                        tc_error *(*init)(tc_init_args *)) {
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
  a.option_prefix = name;
  a.probe = probe;
  a.init = init ? init : tp_init;
  a.release = tp_release;
  a.compile = tp_compile;
  a.executable_free = tp_executable_free;
  a.synchronize = tp_synchronize;
  a.run_graph = tp_run_graph;
  return a;
}

/* Answers the query the way the header asks: the host's major or TC_ERR_VERSION, then at most
 * the room the host gave (args->table_size); struct_size says what was filled. */
TP_UNUSED static tc_error *tp_hand_over(tc_query_args *q, const tc_plugin_api *table) {
  if (q->abi_major != TC_ABI_MAJOR)
    return q->host->error_new(q->host->host_ctx, TC_ERR_VERSION, "test plugin: built for another ABI major");
  size_t n = table->struct_size < q->table_size ? table->struct_size : q->table_size;
  memcpy(q->table, table, n);
  q->table->struct_size = n;
  return NULL;
}

#define TP_QUERY                                                                                                       \
  TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *q);                                                        \
  TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *q)

#endif
