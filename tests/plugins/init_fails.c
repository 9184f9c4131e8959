/* init_fails.c — probes as the best backend there is (score 90), then fails to create its
 * context: "auto" must move on to the next best. */
#include "test_plugin_common.h"

static tc_error *init_fails_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 90);
}

static tc_error *init_fails_init(tc_init_args *a) {
  a->ctx = NULL;
  return a->host->error_new(a->host->host_ctx, TC_ERR_UNAVAILABLE, "init_fails: the device fell off the bus");
}

TP_QUERY {
  tc_plugin_api t = tp_table("init_fails", init_fails_probe, init_fails_init);
  return tp_hand_over(q, &t);
}
