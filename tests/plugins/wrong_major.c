/* wrong_major.c — built for a future ABI major: it says so through set_error and returns
 * TC_ERR_VERSION, as the header asks. */
#include "test_plugin_common.h"

#define WRONG_MAJOR_ABI (TC_ABI_MAJOR + 1)

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)out;
  if (host->abi_major != WRONG_MAJOR_ABI) {
    char msg[128];
    snprintf(msg, sizeof msg, "wrong_major: built for ABI %d.x, the host offers %u.%u", WRONG_MAJOR_ABI,
             (unsigned)host->abi_major, (unsigned)host->abi_minor);
    host->set_error(host->host_ctx, msg);
    return TC_ERR_VERSION;
  }
  return TC_ERR_INTERNAL;
}
