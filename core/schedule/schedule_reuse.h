/* schedule_reuse.h — the scheduler's reuse decisions, written into a kernel's ops so code
 * generators need not re-derive them (tc_kop.reuse, TC_KOP_OVERWRITTEN; see tc_plugin.h). */
#ifndef TC_SCHEDULE_REUSE_H
#define TC_SCHEDULE_REUSE_H

#include <stdint.h>

#include "tc_plugin.h"

/* Sets reuse and the TC_KOP_OVERWRITTEN bit of every op of one TC_KERNEL_LOOP kernel (n_ops
 * ops, contiguous, sizeof(tc_kop) apart; n_vars = n_outer + 1 index variables):
 *  - a LOAD in inner loop L gets reuse = the nearest earlier op touching its buffer when that
 *    op is a LOAD or STORE of an inner loop before L with the same dtype and the same direct
 *    index (offset and strides; no indirection); a LOAD found that way passes on its own reuse
 *    (so reuse names the first holder). Any other access to the buffer in between (a store of
 *    another element, a STORE_ADD) leaves reuse at -1. Loads in no inner loop keep -1.
 *  - a STORE in an inner loop gets TC_KOP_OVERWRITTEN when, scanning the later ops touching its
 *    buffer, loads with reuse set are skipped, stores of other elements are skipped, and a
 *    STORE of the same element in the same or a later inner loop comes before any load without
 *    reuse or any STORE_ADD.
 * Other ops: reuse -1, the bit cleared. Pure; thread-safe on distinct op arrays. */
void schedule_fill_reuse(tc_kop *ops, int32_t n_ops, int32_t n_vars);

#endif
