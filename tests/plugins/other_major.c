/* other_major.c — does not check the host's version and reports a different abi_major in its
 * table: the host must notice by itself. */
#include "test_plugin_common.h"

static tc_error *other_major_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 50);
}

TP_QUERY {
  tc_plugin_api t = tp_table("other_major", other_major_probe, NULL);
  t.abi_major = TC_ABI_MAJOR + 7;
  size_t n = t.struct_size < q->table_size ? t.struct_size : q->table_size;
  memcpy(q->table, &t, n);
  q->table->struct_size = n;
  return NULL;
}
