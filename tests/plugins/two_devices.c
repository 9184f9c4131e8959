/* two_devices.c — probes two devices; init keeps the index it was given (the first field of
 * its context), so a test can check option "two_devices.device". */
#include "test_plugin_common.h"

static tc_status two_devices_probe(const tc_host_api *host, tc_probe_info *info) {
  (void)host;
  info->available = true;
  info->score = 30;
  info->n_devices = 2;
  for (int i = 0; i < 2; i++) {
    snprintf(info->devices[i].name, sizeof info->devices[i].name, "test gpu %d", i);
    info->devices[i].type = TC_DEVICE_VIRTUAL_GPU;
  }
  return TC_OK;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("two_devices", two_devices_probe, NULL);
  return tp_hand_over(&t, out);
}
