/* plugin_stub.c — TEMPORARY: a minimal plugin table so the code generator's half can be loaded
 * and tested before the runtime half exists. Probe says unavailable; the only thing it offers
 * is the codegen-check extension. Deleted when the runtime half (plugin.c) is merged. */
#include "icuda.h"

static const tc_host_api *g_host;

static tc_error *probe(tc_probe_args *a) {
  a->available = false;
  a->reason = "no CUDA driver";
  a->score = 0;
  a->n_devices = 0;
  a->devices = NULL;
  a->device_size = 0;
  return NULL;
}
static tc_error *init(tc_init_args *a) {
  return tck_error(a->host, TC_ERR_UNAVAILABLE, "inductor-cuda: no CUDA driver");
}
static void release(const tc_release_args *a) { (void)a; }
static tc_error *compile(tc_compile_args *a) {
  (void)a;
  return tck_error(g_host, TC_ERR_UNAVAILABLE, "inductor-cuda: no CUDA driver");
}
static void executable_free(const tc_executable_free_args *a) { (void)a; }
static tc_error *synchronize(const tc_queue_args *a) {
  (void)a;
  return NULL;
}

static const tc_plugin_api table = {
    .struct_size = sizeof(tc_plugin_api),
    .abi_major = TC_ABI_MAJOR,
    .abi_minor = TC_ABI_MINOR,
    .name = "inductor-cuda",
    .version = "0.0.1",
    .description = "fused kernels -> CUDA C -> NVRTC (code generator only: the runtime is not built yet)",
    .handoff = TC_HANDOFF_KERNELS,
    .memory = TC_MEMORY_DEVICE,
    .option_prefix = "cuda",
    .extensions = &icuda_codegen_check.base,
    .probe = probe,
    .init = init,
    .release = release,
    .compile = compile,
    .executable_free = executable_free,
    .synchronize = synchronize,
};

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) {
  g_host = args->host;
  return tck_query_answer(args, &table);
}
