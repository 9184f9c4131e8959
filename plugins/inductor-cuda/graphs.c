/* graphs.c — reduce-overhead (and max-autotune, as in torch.compile): a call's launches replayed
 * as one CUDA graph.
 *
 * The host makes a call's launches back to back (kernels 0 .. n-1 of one executable, one
 * call_id) and then flushes. For an executable compiled in one of these modes, the launches are
 * held (their arguments copied) instead of queued; at the flush, when they are exactly one whole
 * call, their arguments (every device pointer with its offset, every symbol value) form a key:
 *   hit:  the graph recorded under that key is launched: one driver call for the whole call,
 *         and the kernels run back to back on the device without a host round per launch;
 *   miss: the held launches are queued under stream capture (cuBLASLt's kernels and memsets
 *         included), the graph is instantiated, kept (ICUDA_GRAPHS per executable, the least
 *         recently used one dropped), and launched.
 * Anything else on the context before the flush (a copy, an allocation, a wait, a compile,
 * another call's launch) first queues what is held, uncaptured and in order, so results never
 * depend on replay; so does a flush that finds a partial call. A graph is only ever replayed with
 * the very buffers (addresses) and sizes it was recorded with, so no parameter needs patching
 * and no static copy of inputs or outputs is made (torch's CUDA graphs copy inputs into static
 * buffers instead): the host's pooled allocations hand the same addresses back call after call,
 * and the bench's rotated input sets give one graph each. An executable whose calls keep missing
 * (fresh addresses on every call, where recording costs more than it saves) stops recording,
 * with one log line. cuBLASLt's handle and workspace are made before any capture (an allocation
 * inside a capture would belong to the graph). Graphs need cuStreamBeginCapture_v2 and friends
 * (CUDA 11.4+); without them the mode runs launches as the default mode does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

/* One held launch: what tc_launch_args said, copied (the host's arrays are its own). */
typedef struct held_launch {
  int32_t kernel;
  int32_t n_args;
  tc_buffer_arg args[ICUDA_MAX_BUFS];
} held_launch;

struct icuda_held {
  tc_executable *exe; /* NULL: nothing held */
  uint64_t call_id;
  int32_t n, cap;
  held_launch *launches;
  int32_t n_syms;
  int64_t syms[ICUDA_MAX_SYMS];
};

/* A recorded graph and the key it replays for. */
struct icuda_graph_slot {
  CUgraphExec exec;
  uint64_t last_use;
  size_t key_len;
  int64_t *key;
};

/* The key of what is held: per launch the kernel and each buffer's device address + offset,
 * then the symbols. */
static int64_t *held_key(const icuda_held *h, size_t *len) {
  size_t n = 1 + (size_t)h->n_syms;
  for (int32_t i = 0; i < h->n; i++) n += 2 + (size_t)h->launches[i].n_args;
  int64_t *k = malloc(n * sizeof *k);
  if (!k) return NULL;
  size_t j = 0;
  k[j++] = h->n;
  for (int32_t i = 0; i < h->n; i++) {
    const held_launch *l = &h->launches[i];
    k[j++] = l->kernel;
    k[j++] = l->n_args;
    for (int32_t b = 0; b < l->n_args; b++)
      k[j++] = (int64_t)((l->args[b].buffer ? l->args[b].buffer->ptr : 0) + l->args[b].byte_offset);
  }
  for (int32_t s = 0; s < h->n_syms; s++) k[j++] = h->syms[s];
  *len = n;
  return k;
}

static tc_launch_args held_args(const icuda_held *h, const held_launch *l) {
  return (tc_launch_args){.struct_size = sizeof(tc_launch_args),
                          .exe = h->exe,
                          .kernel = l->kernel,
                          .n_args = l->n_args,
                          .args = l->args,
                          .arg_size = sizeof(tc_buffer_arg),
                          .n_syms = h->n_syms,
                          .syms = h->syms,
                          .call_id = h->call_id};
}

/* Queues every held launch as the default mode would, in order, and forgets them. */
static tc_error *queue_held(tc_plugin_ctx *ctx) {
  icuda_held *h = ctx->held;
  tc_error *e = NULL;
  for (int32_t i = 0; h && h->exe && i < h->n && !e; i++) {
    tc_launch_args a = held_args(h, &h->launches[i]);
    a.ctx = ctx;
    e = icuda_launch(ctx, &a);
  }
  if (h) {
    h->exe = NULL;
    h->n = 0;
  }
  return e;
}

void icuda_graphs_drop_held(tc_plugin_ctx *ctx, const tc_executable *exe) {
  if (ctx->held && ctx->held->exe == exe) {
    ctx->held->exe = NULL;
    ctx->held->n = 0;
  }
}

tc_error *icuda_graphs_release_held(tc_plugin_ctx *ctx) {
  return ctx->held && ctx->held->exe ? queue_held(ctx) : NULL;
}

bool icuda_graphs_wanted(const tc_plugin_ctx *ctx, const tc_executable *exe) {
  return exe->graph_mode && !exe->graphs_off && ctx->cu->cuStreamBeginCapture && !ctx->sync_launches;
}

tc_error *icuda_graphs_hold(tc_plugin_ctx *ctx, const tc_launch_args *a) {
  icuda_held *h = ctx->held;
  if (!h && !(h = ctx->held = calloc(1, sizeof *h)))
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda launch: out of memory");
  /* another call, or launches out of order: what is held runs as it is first */
  if (h->exe && (h->exe != a->exe || h->call_id != a->call_id || a->kernel != h->n)) {
    tc_error *e = queue_held(ctx);
    if (e) return e;
  }
  if (a->n_args > ICUDA_MAX_BUFS || a->n_syms > ICUDA_MAX_SYMS || (a->n_args > 0 && !a->args) ||
      (a->n_syms > 0 && !a->syms) || a->kernel != h->n) {
    tc_error *e = queue_held(ctx);
    return e ? e : icuda_launch(ctx, a); /* not holdable: launch's own checks report it */
  }
  if (h->n == h->cap) {
    int32_t cap = h->cap ? 2 * h->cap : 8;
    held_launch *l = realloc(h->launches, (size_t)cap * sizeof *l);
    if (!l) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda launch: out of memory");
    h->launches = l;
    h->cap = cap;
  }
  held_launch *l = &h->launches[h->n++];
  l->kernel = a->kernel;
  l->n_args = a->n_args;
  for (int32_t b = 0; b < a->n_args; b++) {
    const tc_buffer_arg *ba = TC_ELEM(tc_buffer_arg, a->args, a->arg_size, b);
    l->args[b] = (tc_buffer_arg){.struct_size = sizeof(tc_buffer_arg), .buffer = ba->buffer, .byte_offset = ba->byte_offset};
  }
  h->exe = a->exe;
  h->call_id = a->call_id;
  h->n_syms = a->n_syms;
  for (int32_t s = 0; s < a->n_syms; s++) h->syms[s] = a->syms[s];
  return NULL;
}

static void slot_clear(tc_plugin_ctx *ctx, icuda_graph_slot *s) {
  if (s->exec) ctx->cu->cuGraphExecDestroy(s->exec);
  free(s->key);
  memset(s, 0, sizeof *s);
}

void icuda_graphs_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  for (int i = 0; exe->graphs && i < ICUDA_GRAPHS; i++) slot_clear(ctx, &exe->graphs[i]);
  free(exe->graphs);
  exe->graphs = NULL;
}

void icuda_held_free(tc_plugin_ctx *ctx) {
  if (!ctx->held) return;
  free(ctx->held->launches);
  free(ctx->held);
  ctx->held = NULL;
}

/* Records the held launches as a graph under stream capture and instantiates it. */
static tc_error *record(tc_plugin_ctx *ctx, icuda_held *h, CUgraphExec *out) {
  *out = NULL;
  tc_executable *exe = h->exe;
  /* cuBLASLt ready before the capture (its handle and workspace are not made inside one); under
   * cuda.gemm=auto this waits for it to load, so the graph records cuBLASLt as later calls
   * would run it, and max-autotune tunes it. Without cuBLASLt, auto records the generated GEMM. */
  for (int32_t i = 0; i < exe->n_kernels && exe->gemm != ICUDA_GEMM_GENERATED; i++)
    if (exe->kernels[i].kind == TC_KERNEL_MATMUL && !exe->kernels[i].plan.inline_product) {
      tc_error *e = icuda_blaslt_prepare(ctx); /* not inside the capture */
      if (e && exe->gemm == ICUDA_GEMM_AUTO) {
        ctx->host->error_free(ctx->host->host_ctx, e);
        e = NULL;
        ctx->gemm_lt_failed = true; /* gemm.c: not tried again inside the capture */
      }
      if (e) return e;
      break;
    }
  /* without cuBLASLt, the generated GEMMs: their background compile waited for and the modules
   * loaded now, as nothing may load a module inside a capture */
  if (ctx->gemm_lt_failed && exe->gemm_job) icuda_gemm_background_collect(ctx, exe, true);
  if (exe->autotune) { /* max-autotune: cuBLASLt's algorithms timed now, as nothing can wait inside a capture */
    ctx->dry_run = true;
    tc_error *e = NULL;
    for (int32_t i = 0; i < h->n && !e; i++) {
      tc_launch_args a = held_args(h, &h->launches[i]);
      a.ctx = ctx;
      e = icuda_launch(ctx, &a);
    }
    ctx->dry_run = false;
    if (e) return e;
  }
  CUresult r = ctx->cu->cuStreamBeginCapture(ctx->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuStreamBeginCapture", "launch '%s' (recording a CUDA graph)", exe->name);
  tc_error *e = NULL;
  ctx->capturing = true; /* ordinary launches inside the graph (launch.c) */
  for (int32_t i = 0; i < h->n && !e; i++) {
    tc_launch_args a = held_args(h, &h->launches[i]);
    a.ctx = ctx;
    e = icuda_launch(ctx, &a);
  }
  ctx->capturing = false;
  CUgraph graph = NULL;
  r = ctx->cu->cuStreamEndCapture(ctx->stream, &graph); /* ends the capture even after an error */
  if (!e && r != CUDA_SUCCESS) e = icuda_cu_error(ctx, r, "cuStreamEndCapture", "launch '%s' (recording a CUDA graph)", exe->name);
  if (!e) {
    r = ctx->cu->cuGraphInstantiateWithFlags(out, graph, 0);
    if (r != CUDA_SUCCESS) {
      *out = NULL;
      e = icuda_cu_error(ctx, r, "cuGraphInstantiateWithFlags", "launch '%s' (a CUDA graph of %d launches)", exe->name, (int)h->n);
    }
  }
  if (graph) ctx->cu->cuGraphDestroy(graph);
  return e;
}

tc_error *icuda_graphs_flush(tc_plugin_ctx *ctx) {
  icuda_held *h = ctx->held;
  if (!h || !h->exe) return NULL;
  tc_executable *exe = h->exe;
  if (h->n != exe->n_kernels) return queue_held(ctx); /* a partial call: as it is */
  size_t len = 0;
  int64_t *key = held_key(h, &len);
  if (!key) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda flush: out of memory");
  if (!exe->graphs && !(exe->graphs = calloc(ICUDA_GRAPHS, sizeof *exe->graphs))) {
    free(key);
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda flush: out of memory");
  }
  exe->graph_clock++;
  icuda_graph_slot *hit = NULL, *victim = &exe->graphs[0];
  for (int i = 0; i < ICUDA_GRAPHS; i++) {
    icuda_graph_slot *s = &exe->graphs[i];
    if (s->exec && s->key_len == len && !memcmp(s->key, key, len * sizeof *key)) hit = s;
    if (!s->exec || (victim->exec && s->last_use < victim->last_use)) victim = s;
  }
  tc_error *e = NULL;
  if (hit) {
    free(key);
    exe->graph_hits++;
  } else {
    exe->graph_misses++;
    /* calls that keep missing: recording costs more than replay saves */
    if (exe->graph_misses >= 4 * ICUDA_GRAPHS && exe->graph_misses > 4 * exe->graph_hits) {
      exe->graphs_off = true;
      tck_log(ctx->host, TC_LOG_INFO, "inductor-cuda",
              "inductor-cuda: graph '%s': %llu of %llu calls came with buffers no recorded CUDA graph had; recording "
              "stops, launches are queued one by one",
              exe->name, (unsigned long long)exe->graph_misses, (unsigned long long)(exe->graph_misses + exe->graph_hits));
      free(key);
      return queue_held(ctx);
    }
    CUgraphExec exec = NULL;
    e = record(ctx, h, &exec);
    if (e) {
      free(key);
      h->exe = NULL;
      h->n = 0;
      return e;
    }
    slot_clear(ctx, victim);
    victim->exec = exec;
    victim->key = key;
    victim->key_len = len;
    hit = victim;
  }
  hit->last_use = exe->graph_clock;
  uint64_t call_id = h->call_id;
  h->exe = NULL;
  h->n = 0;
  CUresult r = ctx->cu->cuGraphLaunch(hit->exec, ctx->stream);
  if (r != CUDA_SUCCESS) {
    if (icuda_cu_is_device_failure(r)) return icuda_stream_wait(ctx, "flush (cuGraphLaunch)");
    return icuda_cu_error(ctx, r, "cuGraphLaunch", "flush (graph '%s')", exe->name);
  }
  ctx->pending = true;
  ctx->pending_call = call_id;
  return e;
}
