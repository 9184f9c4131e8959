/* lower_kernels.c — the kernel-level hand-off: a plan (the schedule: kernel list + memory plan,
 * built once and shareable) bound to a backend: the plugin compiles all kernels of the graph at
 * once, and runs of the executable follow the plan: bind inputs, allocate outputs
 * and temporaries (host memory for host-memory plugins, buffer_alloc for device plugins; the
 * memory plan's slots let temporaries of disjoint lifetime share bytes, kept across runs), then
 * launch each kernel with one tc_buffer_arg per kernel buffer and the symbol values. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "schedule/schedule.h"

typedef struct kernels_lowered {
  tc_lowered base;
  tc_schedule *sched;
  tc_executable *exe;
  index_record *record; /* device memory, when the plan checks indices (ABI 2.3) */
  pthread_mutex_t lock; /* guards the temporaries below (one run at a time uses them) */
  size_t *slot_bytes;   /* per slot: bytes held now */
  void **slot_host;     /* host-memory plugins */
  tc_buffer **slot_dev; /* device-memory plugins */
} kernels_lowered;

static size_t numel_bytes(const tc_schedule *s, const int64_t *vals, int32_t b) {
  int64_t n = vals[s->bufs[b].numel];
  return (size_t)(n > 0 ? n : 0) * tck_dtype_size(s->bufs[b].dtype);
}

/* A contiguous copy of x where the backend reads it (x itself when it already is one). */
static tc_tensor *input_for(tc_backend *be, tc_tensor *x, bool *owned) {
  *owned = false;
  if (!x->storage) return core_error_null(TC_ERR_INTERNAL, "%s: graph input has no storage (a traced tensor)", be->name);
  const bool host = be->host_memory;
  tc_tensor *t = x;
  if (!tc_is_contiguous(t)) {
    t = tc_contiguous(t);
    if (!t) return NULL;
    *owned = true;
  }
  if (host ? t->storage->backend == NULL : t->storage->backend == be) return t;
  tc_tensor *moved = tensor_to_backend(be->name, t, host ? NULL : be);
  if (*owned) tc_release(t);
  *owned = moved != NULL;
  return moved;
}

static tc_tensor *output_new(tc_backend *be, const tc_vtype *vt, const int64_t *vals, const int32_t *map) {
  int64_t sizes[TC_MAX_RANK];
  for (int d = 0; d < vt->rank; d++) sizes[d] = vals[map[vt->shape[d]]];
  return tensor_new_on_backend(be, be->name, vt->dtype, vt->rank, sizes);
}

/* Grows the temporary slots to this run's sizes. Called with the lock held. */
static tc_status slots_reserve(kernels_lowered *kl, const int64_t *vals) {
  tc_schedule *s = kl->sched;
  tc_backend *be = kl->base.backend;
  const bool host = be->host_memory;
  for (int32_t slot = 0; slot < s->n_slots; slot++) {
    size_t need = 64;
    for (int32_t b = 0; b < s->n_bufs; b++)
      if (s->bufs[b].kind == SBUF_TEMP && s->bufs[b].slot == slot && numel_bytes(s, vals, b) > need)
        need = numel_bytes(s, vals, b);
    if (kl->slot_bytes[slot] >= need) continue;
    need = (need + 63) & ~(size_t)63;
    if (host) {
      free(kl->slot_host[slot]);
      kl->slot_host[slot] = aligned_alloc(64, need);
      kl->slot_bytes[slot] = kl->slot_host[slot] ? need : 0;
      if (!kl->slot_host[slot])
        return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte temporary of graph %s", be->name, need,
                        s->g->name);
    } else {
      if (kl->slot_dev[slot]) backend_buffer_free(be, kl->slot_dev[slot]);
      kl->slot_dev[slot] = NULL;
      kl->slot_bytes[slot] = 0;
      tc_status st = backend_buffer_alloc(be, need, &kl->slot_dev[slot]);
      if (st != TC_OK) return lowered_plugin_fail(st, be, "allocating a temporary", s->g->name);
      kl->slot_bytes[slot] = need;
    }
  }
  return TC_OK;
}

static void arg_of_tensor(tc_buffer_arg *a, const tc_tensor *t) {
  a->struct_size = sizeof *a;
  if (t->storage->backend) {
    a->buffer = t->storage->buffer;
    a->byte_offset = (size_t)t->offset * tck_dtype_size(t->dtype);
  } else {
    a->buffer = (tc_buffer *)tensor_host_data(t);
    a->byte_offset = 0;
  }
}

/* A run's tables live on the stack when they fit (a call of a small graph makes no heap
 * allocation of its own besides its outputs); bigger graphs take them from the heap. */
enum { RUN_STACK_EXPRS = 512, RUN_STACK_TENSORS = 64, RUN_STACK_BUFS = 256 };

static void *run_table(void *stack, size_t stack_bytes, size_t bytes) {
  if (bytes > stack_bytes) return calloc(1, bytes);
  memset(stack, 0, bytes);
  return stack;
}

static void run_table_free(void *p, const void *stack) {
  if (p != stack) free(p);
}

static tc_status kernels_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  kernels_lowered *kl = (kernels_lowered *)l;
  tc_schedule *s = kl->sched;
  const tc_graph *g = s->g;
  tc_backend *be = l->backend;
  static char dummy[64] __attribute__((aligned(64))); /* stands in for zero-size buffers */
  const int32_t ni = g->n_inputs, no = g->n_outputs;
  int64_t vals_st[RUN_STACK_EXPRS], gvals_st[RUN_STACK_EXPRS];
  int32_t gmap_st[RUN_STACK_EXPRS];
  tc_tensor *ins_st[RUN_STACK_TENSORS];
  bool owned_st[RUN_STACK_TENSORS];
  tc_buffer_arg bargs_st[RUN_STACK_BUFS], kargs_st[RUN_STACK_BUFS];
  int64_t *vals = run_table(vals_st, sizeof vals_st, sizeof(int64_t) * (size_t)(s->sx.n + 1));
  tc_tensor **ins = run_table(ins_st, sizeof ins_st, sizeof *ins * ((size_t)ni + 1));
  bool *owned = run_table(owned_st, sizeof owned_st, sizeof *owned * ((size_t)ni + 1));
  tc_buffer_arg *bargs = run_table(bargs_st, sizeof bargs_st, sizeof *bargs * ((size_t)s->n_bufs + 1));
  int32_t max_kbufs = 1;
  for (int32_t k = 0; k < s->n_kernels; k++)
    if (s->kernels[k].n_bufs > max_kbufs) max_kbufs = s->kernels[k].n_bufs;
  tc_buffer_arg *kargs = run_table(kargs_st, sizeof kargs_st, sizeof *kargs * (size_t)max_kbufs);
  int32_t *gmap = run_table(gmap_st, sizeof gmap_st, sizeof(int32_t) * (size_t)(g->sx.n + 1));
  int64_t *gvals = run_table(gvals_st, sizeof gvals_st, sizeof(int64_t) * (size_t)(g->sx.n + 1));
  tc_status st = TC_OK;
  bool locked = false;
  for (int32_t k = 0; k < no; k++) outputs[k] = NULL;
  if (!vals || !ins || !owned || !bargs || !kargs || !gmap || !gvals) {
    st = core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory running graph %s", be->name, g->name);
    goto out;
  }
  sxtab_eval(&s->sx, syms, vals);
  const uint64_t call_id = backend_call_begin(be, g->name);
  /* Output shapes are in the graph's expression ids: map them through a graph evaluation. */
  {
    sxtab_eval(&g->sx, syms, gvals);
    for (int32_t i = 0; i < g->sx.n; i++) gmap[i] = i;
    for (int32_t k = 0; k < no && st == TC_OK; k++) {
      int32_t v = g->outputs[k], b = s->value_buf[v];
      if (b >= 0 && s->bufs[b].kind == SBUF_OUTPUT && s->bufs[b].index == k && s->bufs[b].into_input < 0) {
        /* gvals indexed by graph expr ids: output_new maps shape ids through gmap (identity). */
        outputs[k] = output_new(be, graph_value_type(g, v), gvals, gmap);
        if (!outputs[k]) st = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_OUT_OF_MEMORY;
      }
    }
  }
  for (int32_t i = 0; i < ni && st == TC_OK; i++) {
    ins[i] = input_for(be, inputs[i], &owned[i]);
    if (!ins[i]) st = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  }
  /* Outputs the plan writes into an input's buffer (schedule_inplace.c): a view of that input
   * (of the backend's copy when it had to make one; the caller copies that back). */
  for (int32_t k = 0; k < no && st == TC_OK; k++) {
    int32_t b = s->value_buf[g->outputs[k]];
    if (b < 0 || s->bufs[b].kind != SBUF_OUTPUT || s->bufs[b].index != k || s->bufs[b].into_input < 0) continue;
    tc_tensor *in = ins[s->bufs[b].into_input];
    outputs[k] = tensor_new_view(in, in->rank, in->sizes, in->strides, in->offset);
    if (!outputs[k]) st = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_OUT_OF_MEMORY;
  }
  if (st != TC_OK) goto out;
  pthread_mutex_lock(&kl->lock);
  locked = true;
  st = slots_reserve(kl, vals);
  if (st != TC_OK) goto out;
  /* The index error record (ABI 2.3): this call's own on host memory, read when it returns; on
   * a device, the executable's, read at the backend's next wait (index_check.c). */
  tc_index_error host_record = {0};
  tc_buffer *record = kl->record ? index_record_begin(kl->record) : (tc_buffer *)&host_record;
  bool launched = false;
  for (int32_t b = 0; b < s->n_bufs; b++) {
    const sched_buf *sb = &s->bufs[b];
    bargs[b].struct_size = sizeof bargs[b];
    if (sb->kind == SBUF_INPUT) arg_of_tensor(&bargs[b], ins[sb->index]);
    else if (sb->kind == SBUF_OUTPUT) arg_of_tensor(&bargs[b], outputs[sb->index]);
    else if (sb->kind == SBUF_INDEX_ERROR) bargs[b].buffer = record;
    else if (sb->slot >= 0) bargs[b].buffer = be->host_memory ? (tc_buffer *)kl->slot_host[sb->slot] : kl->slot_dev[sb->slot];
    if (!bargs[b].buffer && be->host_memory) bargs[b].buffer = (tc_buffer *)dummy;
  }
  for (int32_t k = 0; k < s->n_kernels && st == TC_OK; k++) {
    const sched_kernel *sk = &s->kernels[k];
    for (int32_t i = 0; i < sk->n_bufs; i++) kargs[i] = bargs[sk->buf_ids[i]];
    if (sk->zero_buf >= 0) {
      /* The kernel accumulates into this buffer (STORE_ADD): it starts from zero. */
      size_t bytes = numel_bytes(s, vals, sk->zero_buf);
      const tc_buffer_arg *za = &bargs[sk->zero_buf];
      if (be->host_memory) {
        if (bytes) memset((char *)za->buffer + za->byte_offset, 0, bytes);
      } else if (bytes) {
        void *zeros = calloc(1, bytes);
        st = zeros ? backend_buffer_write(be, za->buffer, za->byte_offset, zeros, bytes) : TC_ERR_OUT_OF_MEMORY;
        free(zeros);
        if (st != TC_OK) {
          lowered_plugin_fail(st, be, "zeroing an accumulator", g->name);
          break;
        }
      }
    }
    st = backend_launch(be, kl->exe, k, kargs, sk->n_bufs, syms, s->n_syms, call_id);
    launched |= st == TC_OK;
    if (st != TC_OK) {
      char what[96];
      snprintf(what, sizeof what, "launching kernel %d (%s)", k, sk->name);
      lowered_plugin_fail(st, be, what, g->name);
    }
  }
  if (st == TC_OK) {
    st = backend_flush(be);
    if (st != TC_OK) lowered_plugin_fail(st, be, "starting the device work", g->name);
  }
  if (kl->record) index_record_end(kl->record, call_id, launched);
  else if (st == TC_OK && s->index_error_buf >= 0) st = index_check_result(be, g, &host_record, call_id);
  /* Outputs that are inputs, or repeat an earlier output, share its tensor. */
  for (int32_t k = 0; k < no && st == TC_OK; k++) {
    if (outputs[k]) continue;
    int32_t v = g->outputs[k], b = s->value_buf[v];
    /* A handle of its own (a view of the same storage), never a tc_retain'd alias (tensor.c). */
    tc_tensor *same = b >= 0 && s->bufs[b].kind == SBUF_INPUT    ? ins[s->bufs[b].index]
                      : b >= 0 && s->bufs[b].kind == SBUF_OUTPUT ? outputs[s->bufs[b].index]
                                                                 : NULL;
    if (same) outputs[k] = tensor_new_view(same, same->rank, same->sizes, same->strides, same->offset);
    if (!outputs[k]) st = core_error(TC_ERR_INTERNAL, "%s: output %d of graph %s has no buffer", be->name, k, g->name);
  }
out:
  if (locked) pthread_mutex_unlock(&kl->lock);
  if (st != TC_OK)
    for (int32_t k = 0; k < no; k++) {
      tc_release(outputs[k]);
      outputs[k] = NULL;
    }
  if (ins)
    for (int32_t i = 0; i < ni; i++)
      if (owned && owned[i]) tc_release(ins[i]);
  run_table_free(vals, vals_st);
  run_table_free(ins, ins_st);
  run_table_free(owned, owned_st);
  run_table_free(bargs, bargs_st);
  run_table_free(kargs, kargs_st);
  run_table_free(gmap, gmap_st);
  run_table_free(gvals, gvals_st);
  return st;
}

static const char *kernels_source(const tc_lowered *l) {
  const kernels_lowered *kl = (const kernels_lowered *)l;
  backend_exe_info info;
  backend_executable_info(l->backend, kl->exe, &info);
  return info.source;
}

static void kernels_free(tc_lowered *l) {
  kernels_lowered *kl = (kernels_lowered *)l;
  tc_backend *be = l->backend;
  index_record_free(kl->record);
  backend_executable_free(be, kl->exe);
  if (kl->sched) {
    for (int32_t i = 0; i < kl->sched->n_slots; i++) {
      if (kl->slot_host) free(kl->slot_host[i]);
      if (kl->slot_dev && kl->slot_dev[i]) backend_buffer_free(be, kl->slot_dev[i]);
    }
  }
  free(kl->slot_bytes);
  free(kl->slot_host);
  free(kl->slot_dev);
  schedule_release(kl->sched);
  pthread_mutex_destroy(&kl->lock);
  free(kl);
}

static const tc_schedule *kernels_schedule(const tc_lowered *l) { return ((const kernels_lowered *)l)->sched; }

static const tc_lowered_vt kernels_vt = {kernels_run, kernels_source, kernels_free, kernels_schedule};

tc_status lower_kernels_bind(tc_backend *be, tc_schedule *s, const lower_options *lo, tc_lowered **out,
                             tc_lower_stats *stats) {
  *out = NULL;
  const double t0 = tc_now_seconds();
  const tc_graph *g = s->g;
  kernels_lowered *kl = calloc(1, sizeof *kl);
  int32_t ns = s->n_slots + 1;
  if (kl) {
    kl->slot_bytes = calloc((size_t)ns, sizeof(size_t));
    kl->slot_host = calloc((size_t)ns, sizeof(void *));
    kl->slot_dev = calloc((size_t)ns, sizeof(tc_buffer *));
  }
  if (!kl || !kl->slot_bytes || !kl->slot_host || !kl->slot_dev) {
    if (kl) { free(kl->slot_bytes); free(kl->slot_host); free(kl->slot_dev); free(kl); }
    return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory compiling graph %s", be->name, g->name);
  }
  pthread_mutex_init(&kl->lock, NULL);
  kl->sched = schedule_retain(s);
  kl->base.vt = &kernels_vt;
  kl->base.backend = be;
  kl->base.graph = g;
  kl->base.n_kernels = s->n_kernels;
  tc_status st = TC_OK;
  if (s->n_kernels > 0) {
    st = backend_compile(be, &s->list, NULL, lo ? lo->options : NULL, lo ? lo->mode : TC_MODE_DEFAULT, &kl->exe);
    if (st != TC_OK) {
      lowered_plugin_fail(st, be, "compiling", g->name);
      kernels_free(&kl->base);
      return st;
    }
  }
  if (s->index_error_buf >= 0 && !be->host_memory && (st = index_record_new(be, g, &kl->record)) != TC_OK) {
    kernels_free(&kl->base);
    return st;
  }
  backend_exe_info info;
  backend_executable_info(be, kl->exe, &info);
  if (info.source && tc_logs_on("output_code")) {
    char header[160];
    snprintf(header, sizeof header, "%s: graph %s (%d kernels)", be->name, g->name, s->n_kernels);
    tc_logs_text("output_code", header, info.source);
  }
  if (stats) {
    stats->n_kernels = s->n_kernels;
    stats->seconds = tc_now_seconds() - t0;
    stats->cache_hit = info.from_cache;
  }
  *out = &kl->base;
  return TC_OK;
}
