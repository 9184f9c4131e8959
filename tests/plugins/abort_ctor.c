/* abort_ctor.c — a plugin whose constructor aborts as soon as it is loaded: only the registry's
 * child process ever loads it. */
#include <stdlib.h>

#include "test_plugin_common.h"

__attribute__((constructor)) static void abort_ctor_on_load(void) {
  abort();
}

static tc_error *abort_ctor_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 10);
}

TP_QUERY {
  tc_plugin_api t = tp_table("abort_ctor", abort_ctor_probe, NULL);
  return tp_hand_over(q, &t);
}
