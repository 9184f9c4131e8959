/* unavailable.c — a well-formed plugin whose probe finds no device. */
#include "test_plugin_common.h"

static tc_status unavailable_probe(const tc_host_api *host, tc_probe_info *info) {
  (void)host;
  info->available = false;
  snprintf(info->reason, sizeof info->reason, "no frobnicator attached");
  return TC_OK;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("unavailable", unavailable_probe, NULL);
  return tp_hand_over(&t, out);
}
