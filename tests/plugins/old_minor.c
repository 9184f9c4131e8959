/* old_minor.c — written against an older minor version whose table ended at the last
 * required entry (executable_free): no optional entries at all. Score 20. */
#include "test_plugin_common.h"

static tc_status old_minor_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 20);
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  size_t room = out->struct_size;
  tc_plugin_api t = tp_table("old_minor", old_minor_probe, NULL);
  t.struct_size = TC_STRUCT_SIZE(tc_plugin_api, executable_free);
  t.abi_minor = 0;
  tp_hand_over(&t, out);
  /* What lies past an older table is not the plugin's: stand in for stale memory there, so
   * the test proves the host reads nothing beyond struct_size. */
  if (room > t.struct_size) memset((char *)out + t.struct_size, 0xA5, room - t.struct_size);
  return TC_OK;
}
