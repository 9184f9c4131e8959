/* schedule_inplace.c — outputs written into an input's buffer (tc_assign's parameter updates,
 * tc_graph.output_into). An output may take its input's buffer when overwriting the old values
 * cannot be seen: one loop kernel writes the output, no kernel after it reads the input, and in
 * that kernel every read of the input is at the element being written (a pointwise update such
 * as p - lr * g). That kernel then reads and writes one buffer (role INOUT), so no code
 * generator sees two names for the same memory. Anything else keeps its own output buffer and
 * the caller copies the value in after the run. */
#include <string.h>

#include "schedule/schedule.h"

static bool same_sched_index(const sched_index *a, const sched_index *b) {
  if (a->offset != b->offset || a->indirect >= 0 || b->indirect >= 0) return false;
  for (int32_t d = 0; d < SCHED_MAX_VARS; d++)
    if (a->strides[d] != b->strides[d]) return false;
  return true;
}

static int32_t kernel_buffer_of(const sched_kernel *sk, int32_t b) {
  for (int32_t i = 0; i < sk->n_bufs; i++)
    if (sk->buf_ids[i] == b) return i;
  return -1;
}

/* Whether output buffer `out` may be written into input buffer `in` (-1: the input is never
 * read); *writer receives the one kernel that writes it. */
static bool overwrite_is_safe(const tc_schedule *s, int32_t out, int32_t in, int32_t *writer) {
  *writer = -1;
  for (int32_t k = 0; k < s->n_kernels; k++) {
    const sched_kernel *sk = &s->kernels[k];
    const int32_t kb = kernel_buffer_of(sk, out);
    if (kb < 0 || sk->kbufs[kb].role == TC_BUF_INPUT) continue; /* later kernels read the new values */
    if (*writer >= 0) return false;                             /* written in pieces by several kernels */
    *writer = k;
  }
  if (*writer < 0) return false;
  const sched_kernel *w = &s->kernels[*writer];
  if (w->has_matmul || w->kind != TC_KERNEL_LOOP || w->zero_buf == out) return false;
  if (in < 0) return true;
  for (int32_t k = *writer + 1; k < s->n_kernels; k++)
    if (kernel_buffer_of(&s->kernels[k], in) >= 0) return false; /* reads the old values later */
  const int32_t ko = kernel_buffer_of(w, out), ki = kernel_buffer_of(w, in);
  if (ki < 0) return true;
  const sched_op *store = NULL;
  for (int32_t i = 0; i < w->n_ops; i++) {
    const sched_op *op = &w->ops[i];
    if (op->buffer != ko || (op->kind != TC_KOP_STORE && op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE_ADD))
      continue;
    if (op->kind != TC_KOP_STORE || store || op->loop != -1) return false;
    store = op;
  }
  if (!store) return false;
  for (int32_t i = 0; i < w->n_ops; i++) {
    const sched_op *op = &w->ops[i];
    if (op->buffer != ki || (op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE && op->kind != TC_KOP_STORE_ADD))
      continue;
    if (op->kind != TC_KOP_LOAD || op->loop != -1 || !same_sched_index(&op->index, &store->index)) return false;
  }
  return true;
}

/* Kernel `sk` reads input buffer `in` through `out`'s kernel buffer from now on. */
static void kernel_merge_buffers(sched_kernel *sk, int32_t out, int32_t in) {
  const int32_t ko = kernel_buffer_of(sk, out), ki = kernel_buffer_of(sk, in);
  if (ki < 0) return;
  for (int32_t i = 0; i < sk->n_ops; i++) {
    sched_op *op = &sk->ops[i];
    /* An index check names the record's buffer, never these two, but its number moves too. */
    if (op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE && op->kind != TC_KOP_STORE_ADD &&
        op->kind != TC_KOP_INDEX_CHECK)
      continue;
    if (op->buffer == ki) op->buffer = ko;
    if (op->buffer > ki) op->buffer--;
  }
  sk->kbufs[ko].role = TC_BUF_INOUT;
  for (int32_t i = ki; i + 1 < sk->n_bufs; i++) {
    sk->buf_ids[i] = sk->buf_ids[i + 1];
    sk->kbufs[i] = sk->kbufs[i + 1];
    memcpy(sk->kbuf_names[i], sk->kbuf_names[i + 1], sizeof sk->kbuf_names[i]);
  }
  sk->n_bufs--;
  for (int32_t i = 0; i < sk->n_bufs; i++)
    sk->kbufs[i].name = sk->kbuf_names[i];
}

void schedule_write_in_place(tc_schedule *s) {
  const tc_graph *g = s->g;
  if (!g->output_into) return;
  for (int32_t k = 0; k < g->n_outputs; k++) {
    const int32_t input = g->output_into[k], v = g->outputs[k];
    if (input < 0 || input >= g->n_inputs || v < g->n_inputs) continue;
    const int32_t out = s->value_buf[v];
    if (out < 0 || s->bufs[out].kind != SBUF_OUTPUT || s->bufs[out].index != k) continue;
    if (s->bufs[out].dtype != graph_value_type(g, input)->dtype) continue;
    int32_t in = -1, writer;
    for (int32_t b = 0; b < s->n_bufs && in < 0; b++)
      if (s->bufs[b].kind == SBUF_INPUT && s->bufs[b].index == input) in = b;
    if (!overwrite_is_safe(s, out, in, &writer)) {
      tc_logs("schedule",
              "graph %s: output %d is not written into input %d in place (a kernel reads the old values "
              "after it, or it is not one pointwise loop)",
              g->name, (int)k, (int)input);
      continue;
    }
    if (in >= 0) kernel_merge_buffers(&s->kernels[writer], out, in);
    s->bufs[out].into_input = input;
  }
}
