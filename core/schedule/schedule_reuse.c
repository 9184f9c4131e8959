/* schedule_reuse.c — which loads of a kernel can take an earlier op's value instead of reading
 * memory, and which stores a later loop overwrites (contract in schedule_reuse.h). Formerly
 * derived by the vulkan plugin itself (codegen_loop.c's rows plan); now the scheduler's
 * decision, carried by the descriptors. */
#include "schedule/schedule_reuse.h"

/* Two accesses of one element: the same offset and strides, no indirection. */
static bool same_index(const tc_index *a, const tc_index *b, int32_t n_vars) {
  if (!a || !b || a->offset != b->offset || a->indirect >= 0 || b->indirect >= 0) return false;
  for (int32_t d = 0; d < n_vars; d++) {
    int32_t sa = d < a->n_vars ? a->strides[d] : -1, sb = d < b->n_vars ? b->strides[d] : -1;
    if (sa != sb) return false;
  }
  return true;
}

static bool touches(const tc_kop *op, int32_t buffer) {
  return (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && op->buffer == buffer;
}

void schedule_fill_reuse(tc_kop *ops, int32_t n_ops, int32_t n_vars) {
  for (int32_t i = 0; i < n_ops; i++) {
    ops[i].reuse = -1;
    ops[i].flags &= ~(uint32_t)TC_KOP_OVERWRITTEN;
  }
  for (int32_t i = 0; i < n_ops; i++) {
    tc_kop *op = &ops[i];
    if (op->kind != TC_KOP_LOAD || op->loop < 0 || !op->index || op->index->indirect >= 0) continue;
    for (int32_t e = i - 1; e >= 0; e--) {
      const tc_kop *eo = &ops[e];
      if (!touches(eo, op->buffer)) continue;
      bool same = eo->loop >= 0 && eo->loop < op->loop && eo->dtype == op->dtype && same_index(eo->index, op->index, n_vars);
      if (eo->kind == TC_KOP_LOAD) {
        if (!same) continue; /* loads leave memory as it was */
        op->reuse = eo->reuse >= 0 ? eo->reuse : e;
      } else if (eo->kind == TC_KOP_STORE && same) {
        op->reuse = e;
      }
      break; /* the nearest store decides: forwarded, or the load reads memory */
    }
  }
  for (int32_t s = 0; s < n_ops; s++) {
    tc_kop *so = &ops[s];
    if (so->kind != TC_KOP_STORE || so->loop < 0 || !so->index || so->index->indirect >= 0) continue;
    for (int32_t e = s + 1; e < n_ops; e++) {
      const tc_kop *eo = &ops[e];
      if (!touches(eo, so->buffer)) continue;
      if (eo->kind == TC_KOP_LOAD && eo->reuse >= 0) continue; /* served without reading memory */
      if (eo->kind != TC_KOP_STORE) break;                     /* reads memory, or adds to it */
      if (eo->loop >= so->loop && same_index(eo->index, so->index, n_vars)) {
        so->flags |= TC_KOP_OVERWRITTEN;
        break;
      }
    }
  }
}
