/* assign.c — tc_assign inside a compiled function: a call updates its caller's tensors in place
 * (parameters, optimizer state) instead of returning them. The new values are extra outputs of
 * the graph, each marked with the parameter it updates (tc_graph.output_into); the plan writes
 * an output straight into that parameter's buffer when it can prove no kernel reads the old
 * values afterwards (schedule_inplace.c), and otherwise the value is copied in after the run. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"

void assign_record(cap_entry *e, const tc_trace *tr) {
  e->n_assign = tr->n_assign < CAP_MAX_PARAMS ? tr->n_assign : CAP_MAX_PARAMS;
  for (int32_t k = 0; k < e->n_assign; k++)
    e->assign_param[k] = tr->assign_param[k];
}

tc_status assign_mark_outputs(const cap_entry *e, cap_variant *v) {
  if (!e || e->n_assign == 0 || v->graph.n_outputs == 0) return TC_OK;
  int32_t *into = malloc((size_t)v->graph.n_outputs * sizeof *into);
  if (!into) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory marking in-place updates");
  for (int32_t m = 0; m < v->graph.n_outputs; m++)
    into[m] = -1;
  for (int32_t k = e->n_ret; k < v->n_outputs && k - e->n_ret < e->n_assign; k++) {
    int32_t m = v->out_map[k];
    if (m < 0) continue; /* the parameter unchanged, or another input: nothing computed */
    /* Only an output no other call output shares: the parameter's buffer holds one value. */
    int32_t uses = 0;
    for (int32_t j = 0; j < v->n_outputs; j++)
      uses += v->out_map[j] == m;
    if (uses == 1) into[m] = e->assign_param[k - e->n_ret];
  }
  v->graph.output_into = into;
  return TC_OK;
}

tc_status assign_apply(tc_compiled *c, const cap_entry *e, tc_tensor *const *params, tc_tensor **updates) {
  tc_status s = TC_OK;
  for (int32_t k = 0; k < e->n_assign; k++) {
    tc_tensor *dst = params[e->assign_param[k]], *src = updates[k];
    const bool in_place = src->storage == dst->storage && src->offset == dst->offset;
    if (s == TC_OK && !in_place) s = tensor_write("tc_assign", dst, src);
    if (in_place)
      atomic_fetch_add(&c->n_updates_in_place, 1);
    else
      atomic_fetch_add(&c->n_updates_copied, 1);
    tc_release(src);
    updates[k] = NULL;
  }
  return s;
}
