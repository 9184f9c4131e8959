/* unavailable.c — a well-formed plugin whose probe finds no device. */
#include "test_plugin_common.h"

static tc_error *unavailable_probe(tc_probe_args *a) {
  a->available = false;
  a->reason = "no frobnicator attached";
  return NULL;
}

TP_QUERY {
  tc_plugin_api t = tp_table("unavailable", unavailable_probe, NULL);
  return tp_hand_over(q, &t);
}
