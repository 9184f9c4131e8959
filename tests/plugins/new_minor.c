/* new_minor.c — written against a newer minor version: its table has an entry this host has
 * never heard of, and its struct_size says so; it has an extension of a type this host does not
 * know in its chain. It fills only the room the host gave. It also has the optional
 * executable_info entry. Score 60. */
#include "test_plugin_common.h"

typedef struct new_minor_api {
  tc_plugin_api base;
  tc_error *(*future_entry)(const tc_queue_args *args); /* appended in "2.1" */
} new_minor_api;

static tc_error *new_minor_probe(tc_probe_args *a) {
  return tp_probe_one_cpu(a, 60);
}

static tc_error *new_minor_info(tc_executable_info_args *a) {
  a->source = "/* new_minor */";
  a->source_len = strlen(a->source);
  return NULL;
}

static tc_error *new_minor_future(const tc_queue_args *a) {
  (void)a;
  return NULL;
}

/* An extension from the future: the host must skip it. */
typedef struct future_ext {
  tc_ext_base base;
  int32_t knob;
} future_ext;
static const future_ext new_minor_ext = {{sizeof(future_ext), TC_EXT_VENDOR_FIRST + 77, NULL}, 3};

TP_QUERY {
  new_minor_api t;
  memset(&t, 0, sizeof t);
  t.base = tp_table("new_minor", new_minor_probe, NULL);
  t.base.abi_minor = TC_ABI_MINOR + 1;
  t.base.executable_info = new_minor_info;
  t.base.extensions = &new_minor_ext.base;
  t.future_entry = new_minor_future;
  if (q->abi_major != TC_ABI_MAJOR)
    return q->host->error_new(q->host->host_ctx, TC_ERR_VERSION, "new_minor: built for another ABI major");
  memcpy(q->table, &t, q->table_size < sizeof t ? q->table_size : sizeof t);
  q->table->struct_size = sizeof t; /* larger than the host's */
  return NULL;
}
