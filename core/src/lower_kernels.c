/* lower_kernels.c — placeholder until the scheduler lands. */
#include "lowered.h"

tc_status lower_kernels_build(tc_backend *be, const tc_graph *g, const tc_compile_options *opts, tc_lowered **out,
                              tc_lower_stats *stats) {
  (void)be; (void)g; (void)opts; (void)stats; *out = NULL;
  return tc_error(TC_ERR_UNSUPPORTED, "kernel-level backends are not supported yet");
}
