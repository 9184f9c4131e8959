/* plugin.c — the entry point of debug-eager: version negotiation, probe, context lifetime and
 * the graph hand-off entries. A TC_HANDOFF_GRAPH plugin on host memory (a tc_buffer* is a host
 * pointer), always available, scored low so that "auto" prefers a real backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug_eager.h"

#define DE_VERSION "0.1.0"

static tc_status de_probe(const tc_host_api *host, tc_probe_info *info) {
  if (!info) return de_error(host, TC_ERR_INVALID_ARGUMENT, "probe: info is NULL");
  if (info->struct_size < TC_STRUCT_SIZE(tc_probe_info, devices))
    return de_error(host, TC_ERR_VERSION, "probe: tc_probe_info.struct_size %zu is too small", info->struct_size);
  info->available = true;
  snprintf(info->reason, sizeof info->reason, "reference interpreter: always available, slow by design");
  info->score = 1;
  info->n_devices = 1;
  tc_device_info *dev = &info->devices[0];
  memset(dev, 0, sizeof *dev);
  dev->struct_size = sizeof *dev;
  snprintf(dev->name, sizeof dev->name, "host CPU (one prim at a time)");
  dev->type = TC_DEVICE_CPU;
  dev->memory_bytes = 0; /* host memory: not tracked */
  return TC_OK;
}

static tc_status de_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **ctx) {
  if (!host || !ctx) return de_error(host, TC_ERR_INVALID_ARGUMENT, "init: host and ctx must not be NULL");
  if (device != 0) return de_error(host, TC_ERR_INVALID_ARGUMENT, "init: device %d does not exist (only 0)", device);
  tc_plugin_ctx *c = calloc(1, sizeof *c);
  if (!c) return de_error(host, TC_ERR_OUT_OF_MEMORY, "init: out of memory");
  size_t n = host->struct_size < sizeof c->host ? host->struct_size : sizeof c->host;
  memcpy(&c->host, host, n); /* fields the host did not fill stay zero (NULL) */
  *ctx = c;
  return TC_OK;
}

static void de_release(tc_plugin_ctx *ctx) { free(ctx); }

static tc_status de_compile_graph(tc_plugin_ctx *ctx, const tc_graph_desc *graph, tc_executable **exe) {
  if (!ctx || !exe) return de_error(ctx ? &ctx->host : NULL, TC_ERR_INVALID_ARGUMENT, "compile_graph: NULL argument");
  DE_TRY(de_graph_validate(&ctx->host, graph));
  return de_graph_copy(&ctx->host, graph, exe);
}

static tc_status de_run_graph(tc_plugin_ctx *ctx, tc_executable *exe, const int64_t *syms,
                              const tc_tensor_ref *inputs, const tc_tensor_ref *outputs) {
  if (!ctx) return de_error(NULL, TC_ERR_INVALID_ARGUMENT, "run_graph: ctx is NULL");
  return de_graph_run(&ctx->host, exe, syms, inputs, outputs);
}

static tc_status de_synchronize(tc_plugin_ctx *ctx) { return TC_OK; /* every call completes before it returns */ }

static void de_executable_free(tc_plugin_ctx *ctx, tc_executable *exe) { de_graph_free(exe); }

static tc_status de_capabilities(tc_plugin_ctx *ctx, tc_capabilities *caps) {
  if (!caps || caps->struct_size < TC_STRUCT_SIZE(tc_capabilities, kernel_kinds))
    return de_error(ctx ? &ctx->host : NULL, TC_ERR_VERSION, "capabilities: tc_capabilities too small or NULL");
  caps->dtypes = DE_ALL;
  caps->prims[0] = caps->prims[1] = 0;
  for (int32_t p = 0; p <= TC_PRIM_LAST_; p++)
    if (de_prim_info_of(p).family != DE_FAMILY_NONE) caps->prims[p / 64] |= 1ull << (p % 64);
  caps->kernel_kinds = 0; /* takes graphs, not kernels */
  return TC_OK;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  if (!host || !out) return TC_ERR_INVALID_ARGUMENT;
  if (host->abi_major != TC_ABI_MAJOR)
    return de_error(host, TC_ERR_VERSION, "built for tc plugin ABI %d.%d, the host speaks %u.%u", TC_ABI_MAJOR,
                    TC_ABI_MINOR, host->abi_major, host->abi_minor);
  if (out->struct_size < TC_STRUCT_SIZE(tc_plugin_api, executable_free))
    return de_error(host, TC_ERR_VERSION, "the host's tc_plugin_api (%zu bytes) has no room for the required entries",
                    out->struct_size);
  tc_plugin_api api;
  memset(&api, 0, sizeof api);
  api.struct_size = sizeof api;
  api.abi_major = TC_ABI_MAJOR;
  api.abi_minor = TC_ABI_MINOR;
  api.name = "debug-eager";
  api.version = DE_VERSION;
  api.description = "reference interpreter: runs the prim graph one prim at a time (the numerical oracle)";
  api.handoff = TC_HANDOFF_GRAPH;
  api.memory = TC_MEMORY_HOST;
  api.probe = de_probe;
  api.init = de_init;
  api.release = de_release;
  api.compile_graph = de_compile_graph;
  api.run_graph = de_run_graph;
  api.synchronize = de_synchronize;
  api.executable_free = de_executable_free;
  api.capabilities = de_capabilities;
  /* Fill only what the host has room for: an older host simply does not see newer entries. */
  size_t n = out->struct_size < sizeof api ? out->struct_size : sizeof api;
  memcpy(out, &api, n);
  out->struct_size = n;
  return TC_OK;
}
