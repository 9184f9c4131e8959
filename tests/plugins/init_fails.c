/* init_fails.c — probes as the best backend there is (score 90), then fails to create its
 * context: "auto" must move on to the next best. */
#include "test_plugin_common.h"

static tc_status init_fails_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 90);
}

static tc_status init_fails_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **ctx) {
  (void)device;
  *ctx = NULL;
  host->set_error(host->host_ctx, "init_fails: the device fell off the bus");
  return TC_ERR_UNAVAILABLE;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  tc_plugin_api t = tp_table("init_fails", init_fails_probe, init_fails_init);
  return tp_hand_over(&t, out);
}
