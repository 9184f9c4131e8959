/* abi1_plugin.c — a plugin built for ABI 1, as every 1.x plugin in this tree was written: its
 * query takes (const tc_host_api *, tc_plugin_api *) with 1.x's tc_host_api, checks the host's
 * major, says why through set_error and returns TC_ERR_VERSION (an int). The 2.x host must list
 * it as built for ABI 1, not crash calling into it. The 1.x structs are spelled out here: the
 * current header no longer has them. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tc_plugin.h"

typedef struct abi1_host_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor;
  void *host_ctx;
  void (*set_error)(void *host_ctx, const char *message);
} abi1_host_api;

TC_PLUGIN_EXPORT int tc_plugin_query(const abi1_host_api *host, void *out);
TC_PLUGIN_EXPORT int tc_plugin_query(const abi1_host_api *host, void *out) {
  (void)out;
  if (host->abi_major != 1) {
    char msg[128];
    snprintf(msg, sizeof msg, "abi1_plugin: built for tc ABI 1.x, host speaks %u.%u", (unsigned)host->abi_major,
             (unsigned)host->abi_minor);
    host->set_error(host->host_ctx, msg);
    return 6; /* 1.x's TC_ERR_VERSION */
  }
  return 0;
}
