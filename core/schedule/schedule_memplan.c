/* schedule_memplan.c — the schedule's buffers: one per realized value (graph inputs and outputs
 * are the caller's tensors), plus temporaries. Temporaries share memory slots: a slot is reused
 * by a buffer whose first kernel comes after the last kernel of the slot's previous tenant.
 * Sizes are symbolic, so a slot's byte size is the largest of its tenants, evaluated per run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

int32_t sched_buffer_for(tc_schedule *s, int32_t value, sched_buf_kind kind, int32_t index, tc_dtype dtype,
                         int32_t numel) {
  if (s->n_bufs == s->cap_bufs) {
    int32_t cap = s->cap_bufs ? 2 * s->cap_bufs : 32;
    sched_buf *b = realloc(s->bufs, sizeof *b * (size_t)cap);
    if (!b) return -1;
    s->bufs = b;
    s->cap_bufs = cap;
  }
  int32_t id = s->n_bufs++;
  s->bufs[id] = (sched_buf){.kind = kind, .index = index, .value = value, .dtype = dtype, .numel = numel, .slot = -1,
                            .first = -1, .last = -1, .into_input = -1};
  if (value >= 0) s->value_buf[value] = id;
  return id;
}

void memplan_assign(tc_schedule *s) {
  for (int32_t k = 0; k < s->n_kernels; k++)
    for (int32_t i = 0; i < s->kernels[k].n_bufs; i++) {
      sched_buf *b = &s->bufs[s->kernels[k].buf_ids[i]];
      if (b->first < 0) b->first = k;
      b->last = k;
    }
  /* Greedy by kernel order: slot_free_after[j] is the last kernel of slot j's tenant. */
  int32_t *busy_until = calloc((size_t)s->n_bufs + 1, sizeof(int32_t));
  s->n_slots = 0;
  if (!busy_until) return;
  for (int32_t k = 0; k < s->n_kernels; k++)
    for (int32_t b = 0; b < s->n_bufs; b++) {
      sched_buf *sb = &s->bufs[b];
      if (sb->kind != SBUF_TEMP || sb->first != k) continue;
      int32_t slot = -1;
      for (int32_t j = 0; j < s->n_slots && slot < 0; j++)
        if (busy_until[j] < k) slot = j;
      if (slot < 0) slot = s->n_slots++;
      sb->slot = slot;
      busy_until[slot] = sb->last;
    }
  free(busy_until);
}

char *schedule_plan_string(const tc_schedule *s) {
  size_t cap = 4096 + (size_t)s->n_kernels * 512 + (size_t)s->n_bufs * 160, used = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
#define PUT(...) used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, __VA_ARGS__)
  PUT("%d kernels, %d buffers (%d temporary slots)\n", s->n_kernels, s->n_bufs, s->n_slots);
  for (int32_t k = 0; k < s->n_kernels; k++) {
    const sched_kernel *sk = &s->kernels[k];
    PUT("  kernel %d %s (%s): ", k, sk->name, sk->desc.kind == TC_KERNEL_MATMUL ? "matmul" : sk->desc.kind == TC_KERNEL_ATTENTION ? "attention" : "loop");
    for (int32_t i = 0; i < sk->n_bufs; i++)
      PUT("%s%s%s", i ? ", " : "", sk->kbufs[i].role == TC_BUF_INPUT ? "" : sk->kbufs[i].role == TC_BUF_OUTPUT ? "->" : "<->",
          sk->kbuf_names[i]);
    PUT("\n");
  }
  char sz[128];
  for (int32_t b = 0; b < s->n_bufs; b++) {
    const sched_buf *sb = &s->bufs[b];
    sxtab_str(&s->sx, sb->numel, sz, sizeof sz);
    const char *kind = sb->kind == SBUF_INPUT    ? "input"
                       : sb->kind == SBUF_OUTPUT ? "output"
                       : sb->kind == SBUF_TEMP   ? "temp"
                                                 : "index error record";
    PUT("  buffer %d: %s %s[%s] value %d, kernels %d..%d", b, kind, tc_dtype_name(sb->dtype), sz, sb->value, sb->first,
        sb->last);
    if (sb->kind == SBUF_TEMP) PUT(", slot %d", sb->slot);
    if (sb->into_input >= 0) PUT(", in place of input %d", sb->into_input);
    PUT("\n");
  }
#undef PUT
  if (used >= cap) out[cap - 1] = 0;
  return out;
}
