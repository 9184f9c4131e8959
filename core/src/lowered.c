/* lowered.c — placeholder until capture lands. */
#include "lowered.h"

tc_status lowered_build(tc_backend *be, const tc_graph *g, const tc_compile_options *opts, tc_lowered **out,
                        tc_lower_stats *stats) {
  (void)be; (void)g; (void)opts; (void)stats; *out = NULL;
  return tc_error(TC_ERR_INTERNAL, "lowering is not built yet");
}
tc_status lowered_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  return l->vt->run(l, syms, inputs, outputs);
}
const char *lowered_source(const tc_lowered *l) { return l->vt->source ? l->vt->source(l) : NULL; }
void lowered_free(tc_lowered *l) { if (l) l->vt->free(l); }
