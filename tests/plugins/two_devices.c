/* two_devices.c — probes two devices and declares options: init keeps the device and thread
 * count its options gave (the first fields of its context), so a test can check that options
 * reach init and that contexts are keyed by them. */
#include "test_plugin_common.h"

static const tc_device_desc two_devices_list[2] = {
    {sizeof(tc_device_desc), "test gpu 0", TC_DEVICE_VIRTUAL_GPU, 1u << 20},
    {sizeof(tc_device_desc), "test gpu 1", TC_DEVICE_VIRTUAL_GPU, 1u << 20},
};

static const tc_option_decl two_devices_options[] = {
    {sizeof(tc_option_decl), "two_devices.device", TC_OPTION_INT, TC_OPTION_CONTEXT, "0", 0, 1, NULL,
     "the device index"},
    {sizeof(tc_option_decl), "two_devices.threads", TC_OPTION_INT, TC_OPTION_CONTEXT, "1", 1, 64, NULL,
     "worker threads"},
    {sizeof(tc_option_decl), "two_devices.tile", TC_OPTION_ENUM, TC_OPTION_COMPILE, "64", 0, 0, "64|128",
     "tile size"},
};

static tc_error *two_devices_probe(tc_probe_args *a) {
  a->available = true;
  a->score = 30;
  a->n_devices = 2;
  a->devices = two_devices_list;
  a->device_size = sizeof two_devices_list[0];
  return NULL;
}

static tc_error *two_devices_init(tc_init_args *a) {
  tc_error *err = tp_init(a);
  if (err) return err;
  const char *d = tp_option(a->options, a->n_options, a->option_size, "two_devices.device");
  const char *t = tp_option(a->options, a->n_options, a->option_size, "two_devices.threads");
  a->ctx->device = d ? atoi(d) : 0;
  a->ctx->threads = t ? atoi(t) : 1;
  return NULL;
}

TP_QUERY {
  tc_plugin_api t = tp_table("two_devices", two_devices_probe, two_devices_init);
  t.n_options = (int32_t)(sizeof two_devices_options / sizeof two_devices_options[0]);
  t.options = two_devices_options;
  t.option_size = sizeof two_devices_options[0];
  return tp_hand_over(q, &t);
}
