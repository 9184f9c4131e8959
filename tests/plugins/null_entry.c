/* null_entry.c — a full-size table with a required entry (synchronize) left NULL. */
#include "test_plugin_common.h"

static tc_status null_entry_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 50);
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("null_entry", null_entry_probe, NULL);
  t.synchronize = NULL;
  return tp_hand_over(&t, out);
}
