/* crash_probe.c — a plugin whose probe dies of SIGSEGV: the registry's child process takes the
 * crash, and the plugin is listed as "probe crashed with SIGSEGV". */
#include <signal.h>

#include "test_plugin_common.h"

static tc_error *crash_probe_probe(tc_probe_args *a) {
  (void)a;
  raise(SIGSEGV);
  return NULL;
}

TP_QUERY {
  tc_plugin_api t = tp_table("crash_probe", crash_probe_probe, NULL);
  return tp_hand_over(q, &t);
}
