/* small_table.c — fills a table that stops before the required entries end. */
#include "test_plugin_common.h"

static tc_error *small_table_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 50);
}

TP_QUERY {
  tc_plugin_api t = tp_table("small_table", small_table_probe, NULL);
  t.struct_size = TC_STRUCT_SIZE(tc_plugin_api, init);
  return tp_hand_over(q, &t);
}
