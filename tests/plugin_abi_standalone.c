/* plugin_abi_standalone.c — proves tc_plugin.h (with tc_common.h beside it) stands alone:
 * compiled with only plugin-api/ on the include path, -std=c11 -Wall -Wextra -Wpedantic -Werror
 * (and as C++ when a C++ compiler is there). It touches the macros and inline helpers so they
 * are compiled, not just parsed. Not linked into anything. */
#include "tc_plugin.h"

int64_t abi_standalone_use(const tc_plugin_api *api, const tc_probe_args *probe, const tc_kernel_list *list);
int64_t abi_standalone_use(const tc_plugin_api *api, const tc_probe_args *probe, const tc_kernel_list *list) {
  int64_t r = TC_ABI_MAJOR;
  if (TC_HAS_FIELD(api, tc_plugin_api, executable_info) && api->executable_info) r++;
  if (probe->n_devices > 0) r += TC_ELEM(tc_device_desc, probe->devices, probe->device_size, 0)->type;
  if (list->n_kernels > 0) r += TC_ELEM(tc_kernel_desc, list->kernels, list->kernel_size, 0)->n_ops;
  if (tc_ext_find(api->extensions, TC_EXT_CAPABILITIES)) r++;
  return r + (int64_t)TC_STRUCT_SIZE(tc_plugin_api, buffer_read);
}

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args);
TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) {
  if (args->abi_major != TC_ABI_MAJOR)
    return args->host->error_new(args->host->host_ctx, TC_ERR_VERSION, "standalone: another ABI major");
  tc_plugin_api *out = args->table;
  out->struct_size = TC_STRUCT_SIZE(tc_plugin_api, handoff);
  out->abi_major = TC_ABI_MAJOR;
  out->abi_minor = TC_ABI_MINOR;
  out->name = "standalone";
  out->handoff = TC_HANDOFF_KERNELS;
  return NULL;
}
