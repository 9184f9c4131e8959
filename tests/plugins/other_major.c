/* other_major.c — does not check the host's version and reports a different abi_major in its
 * table: the host must notice by itself. */
#include "test_plugin_common.h"

static tc_status other_major_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 50);
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("other_major", other_major_probe, NULL);
  t.abi_major = TC_ABI_MAJOR + 7;
  return tp_hand_over(&t, out);
}
