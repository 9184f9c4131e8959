/* null_entry.c — a full-size table with a required entry (synchronize) left NULL. */
#include "test_plugin_common.h"

static tc_error *null_entry_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 50);
}

TP_QUERY {
  tc_plugin_api t = tp_table("null_entry", null_entry_probe, NULL);
  t.synchronize = NULL;
  return tp_hand_over(q, &t);
}
