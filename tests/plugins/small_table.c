/* small_table.c — fills a table that stops before the required entries end. */
#include "test_plugin_common.h"

static tc_status small_table_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 50);
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("small_table", small_table_probe, NULL);
  t.struct_size = TC_STRUCT_SIZE(tc_plugin_api, init);
  return tp_hand_over(&t, out);
}
