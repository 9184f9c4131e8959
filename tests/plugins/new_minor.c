/* new_minor.c — written against a newer minor version: its table has an entry this host has
 * never heard of, and its struct_size says so. It fills only the room the host gave. It also
 * has the optional executable_source entry. Score 60. */
#include "test_plugin_common.h"

typedef struct new_minor_api {
  tc_plugin_api base;
  tc_status (*future_entry)(tc_plugin_ctx *ctx, int32_t knob); /* appended in "1.1" */
} new_minor_api;

static tc_status new_minor_probe(const tc_host_api *host, tc_probe_info *info) {
  return tp_probe_one_cpu(host, info, 60);
}

static const char *new_minor_source(tc_plugin_ctx *ctx, tc_executable *exe) {
  (void)ctx;
  (void)exe;
  return "/* new_minor */";
}

static tc_status new_minor_future(tc_plugin_ctx *ctx, int32_t knob) {
  (void)ctx;
  (void)knob;
  return TC_OK;
}

TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out);
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  new_minor_api t;
  memset(&t, 0, sizeof t);
  t.base = tp_table("new_minor", new_minor_probe, NULL);
  t.base.abi_minor = TC_ABI_MINOR + 1;
  t.base.executable_source = new_minor_source;
  t.future_entry = new_minor_future;
  t.base.struct_size = sizeof t;
  size_t room = out->struct_size;
  memcpy(out, &t, room < sizeof t ? room : sizeof t);
  out->struct_size = sizeof t; /* larger than the host's */
  return TC_OK;
}
