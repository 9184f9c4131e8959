/* nvrtc_stub.c — TEMPORARY: stands in for the code generator half's nvrtc.c so the runtime half
 * builds alone. Deleted at the merge. */
#include <stdio.h>

#include "icuda.h"

const icuda_nvrtc *icuda_nvrtc_load(char *err, size_t cap) {
  snprintf(err, cap, "NVRTC is not in this build (nvrtc_stub.c)");
  return NULL;
}

const char *icuda_nvrtc_version(const icuda_nvrtc *n) {
  (void)n;
  return "stub";
}

const char *icuda_nvrtc_flags(int32_t sm) {
  (void)sm;
  return "stub";
}

tc_status icuda_nvrtc_compile(const icuda_nvrtc *n, const char *source, const char *name, int32_t sm, void **cubin,
                              size_t *size, char *err, size_t cap) {
  (void)n;
  (void)source;
  (void)name;
  (void)sm;
  *cubin = NULL;
  *size = 0;
  snprintf(err, cap, "NVRTC is not in this build (nvrtc_stub.c)");
  return TC_ERR_UNSUPPORTED;
}
