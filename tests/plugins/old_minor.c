/* old_minor.c — written against an older minor version whose table ended at the last
 * required entry (buffer_read): no optional entries at all. Score 20. */
#include "test_plugin_common.h"

static tc_error *old_minor_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 20);
}

TP_QUERY {
  tc_plugin_api t = tp_table("old_minor", old_minor_probe, NULL);
  t.struct_size = TC_STRUCT_SIZE(tc_plugin_api, buffer_read);
  t.abi_minor = 0;
  tc_error *err = tp_hand_over(q, &t);
  /* What lies past an older table is not the plugin's: stand in for stale memory there, so
   * the test proves the host reads nothing beyond struct_size. */
  if (!err && q->table_size > t.struct_size)
    memset((char *)q->table + t.struct_size, 0xA5, q->table_size - t.struct_size);
  return err;
}
