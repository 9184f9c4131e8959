/* plugin_abi_standalone.c — proves tc_plugin.h stands alone: compiled with only plugin-api/ on
 * the include path, -std=c11 -Wall -Wextra -Wpedantic -Werror (and as C++ when a C++
 * compiler is there). It touches the macros and inline helpers so they are compiled, not
 * just parsed. Not linked into anything. */
#include "tc_plugin.h"

int64_t abi_standalone_use(const tc_plugin_api *api, const tc_probe_info *info);
int64_t abi_standalone_use(const tc_plugin_api *api, const tc_probe_info *info) {
  tc_size_expr exprs[2] = {{sizeof(tc_size_expr), TC_SX_SYM, 0, 0, 0}, {sizeof(tc_size_expr), TC_SX_CONST, 0, 0, 4}};
  int64_t syms[1] = {3}, vals[2];
  tc_size_eval_all(exprs, 2, syms, vals);
  int64_t r = vals[0] * vals[1] + (int64_t)tc_dtype_size(TC_F64);
  if (TC_HAS_FIELD(api, tc_plugin_api, recording_free) && api->recording_free) r++;
  if (info->n_devices > 0) r += TC_AT(tc_device_info, info->devices, 0)->type;
  return r + (int64_t)TC_STRUCT_SIZE(tc_plugin_api, executable_free) + TC_ABI_MAJOR;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  if (host->abi_major != TC_ABI_MAJOR) return TC_ERR_VERSION;
  out->struct_size = TC_STRUCT_SIZE(tc_plugin_api, handoff);
  out->abi_major = TC_ABI_MAJOR;
  out->abi_minor = TC_ABI_MINOR;
  out->name = "standalone";
  out->handoff = TC_HANDOFF_KERNELS;
  return TC_OK;
}
