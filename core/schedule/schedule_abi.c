/* schedule_abi.c — a scheduled kernel's ABI view: the pointer-based tc_kernel_desc / tc_kop /
 * tc_index that plugins read, built from the scheduler's own fixed-size ops once the kernel is
 * final, with the reuse decisions (schedule_reuse.c) filled in. */
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"
#include "schedule/schedule_reuse.h"

static bool op_has_index(int32_t kind) {
  return kind == TC_KOP_LOAD || kind == TC_KOP_STORE || kind == TC_KOP_STORE_ADD || kind == TC_KOP_INDEX ||
         kind == TC_KOP_RANDOM;
}

bool schedule_kernel_abi(sched_kernel *sk) {
  const int32_t n = sk->n_ops, n_vars = sk->n_outer + 1;
  /* ints: per op 3 args and n_vars strides, then the outer extents. */
  const size_t per_op = 3 + (size_t)n_vars;
  free(sk->abi_ops);
  free(sk->abi_index);
  free(sk->abi_ints);
  sk->abi_ops = calloc((size_t)n + 1, sizeof *sk->abi_ops);
  sk->abi_index = calloc((size_t)n + 1, sizeof *sk->abi_index);
  sk->abi_ints = calloc(per_op * (size_t)n + TC_MAX_RANK, sizeof *sk->abi_ints);
  if (!sk->abi_ops || !sk->abi_index || !sk->abi_ints) return false;
  for (int32_t i = 0; i < n; i++) {
    const sched_op *o = &sk->ops[i];
    int32_t *args = sk->abi_ints + per_op * (size_t)i, *strides = args + 3;
    int32_t n_args = 0;
    while (n_args < 3 && o->args[n_args] >= 0) n_args++;
    memcpy(args, o->args, sizeof o->args);
    tc_index *ix = &sk->abi_index[i];
    *ix = (tc_index){.struct_size = sizeof *ix, .offset = o->index.offset, .n_vars = n_vars, .strides = strides,
                     .indirect = o->index.indirect, .indirect_stride = o->index.indirect_stride};
    for (int32_t v = 0; v < n_vars; v++) strides[v] = o->index.strides[v];
    sk->abi_ops[i] = (tc_kop){.struct_size = sizeof(tc_kop),
                              .kind = o->kind,
                              .dtype = o->dtype,
                              .loop = o->loop,
                              .prim = o->prim,
                              .n_args = n_args,
                              .args = args,
                              .buffer = o->buffer,
                              .index = op_has_index(o->kind) ? ix : NULL,
                              .fconst = o->fconst,
                              .iconst = o->iconst,
                              .reuse = -1,
                              .flags = 0};
  }
  int32_t *outer = sk->abi_ints + per_op * (size_t)n;
  memcpy(outer, sk->outer, sizeof(int32_t) * (size_t)sk->n_outer);
  if (sk->kind == TC_KERNEL_LOOP) {
    schedule_fill_reuse(sk->abi_ops, n, n_vars);
    /* Per-element values of one inner loop that a later inner loop reads: a generator keeps
     * them per row (or recomputes them). A REDUCE's result is one value per row, not marked. */
    for (int32_t i = 0; i < n; i++) {
      const sched_op *o = &sk->ops[i];
      int32_t uses[4] = {o->args[0], o->args[1], o->args[2], o->index.indirect};
      for (int u = 0; u < 4; u++) {
        int32_t a = uses[u];
        if (a < 0 || a >= n) continue;
        const sched_op *src = &sk->ops[a];
        if (src->loop >= 0 && src->kind != TC_KOP_REDUCE && o->loop > src->loop)
          sk->abi_ops[a].flags |= TC_KOP_ROW_VALUE;
      }
      /* A load that reuses an earlier op reads that op's per-element value in its own loop. */
      int32_t r = sk->abi_ops[i].reuse;
      if (r >= 0 && r < n) sk->abi_ops[r].flags |= TC_KOP_ROW_VALUE;
    }
  }
  tc_kernel_desc *d = &sk->desc;
  *d = (tc_kernel_desc){.struct_size = sizeof *d,
                        .name = sk->name,
                        .kind = sk->kind,
                        .n_outer = sk->n_outer,
                        .outer = outer,
                        .inner = sk->inner,
                        .n_buffers = sk->n_bufs,
                        .buffers = sk->kbufs,
                        .buffer_size = sizeof(tc_kbuffer),
                        .n_ops = n,
                        .ops = sk->abi_ops,
                        .op_size = sizeof(tc_kop),
                        .matmul = sk->has_matmul ? &sk->matmul : NULL,
                        .attention = sk->has_attention ? &sk->attention : NULL};
  return true;
}
