/* codegen_stub.c — TEMPORARY: stands in for the code generator half (codegen_*.c,
 * codegen_check.c) so the runtime half builds alone. Deleted at the merge. */
#include <stdio.h>

#include "icuda.h"

tc_status icuda_codegen(const tc_kernel_list *list, const icuda_codegen_options *o, char **source,
                        icuda_kernel_plan *plans, char *err, size_t cap) {
  (void)list;
  (void)o;
  (void)plans;
  *source = NULL;
  snprintf(err, cap, "the code generator is not in this build (codegen_stub.c)");
  return TC_ERR_UNSUPPORTED;
}

static tc_error *stub_check(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, char **source_out) {
  (void)list;
  (void)sm;
  if (source_out) *source_out = NULL;
  return tck_error(host, TC_ERR_UNSUPPORTED, "inductor-cuda codegen check: the code generator is not in this build (codegen_stub.c)");
}

const icuda_codegen_check_ext icuda_codegen_check = {
    .base = {.struct_size = sizeof(icuda_codegen_check_ext), .type = ICUDA_EXT_CODEGEN_CHECK, .next = NULL},
    .check = stub_check,
};
