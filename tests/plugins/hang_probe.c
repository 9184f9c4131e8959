/* hang_probe.c — a plugin whose probe never returns: the registry's child process is killed
 * after TC_PLUGIN_PROBE_TIMEOUT seconds and the plugin listed as timed out. */
#include <unistd.h>

#include "test_plugin_common.h"

static tc_error *hang_probe_probe(tc_probe_args *a) {
  (void)a;
  for (;;) sleep(1000);
  return NULL;
}

TP_QUERY {
  tc_plugin_api t = tp_table("hang_probe", hang_probe_probe, NULL);
  return tp_hand_over(q, &t);
}
