/* lower_graph.c — the graph-level hand-off: plugins that take the whole primitive graph
 * (debug-eager, or a vendor's own graph compiler). The core hands over the graph once, then
 * at run time strided views of the inputs and contiguous outputs it allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

typedef struct graph_lowered {
  tc_lowered base;
  tc_executable *exe;
  bool checks_index;    /* the plugin records out-of-range indices (ABI 2.3) and g has some */
  index_record *record; /* device memory: the record on the device */
} graph_lowered;

/* x where the backend can read it: x itself, or a copy on the backend's memory. */
static tc_tensor *input_for(tc_backend *be, tc_tensor *x, bool *copied) {
  *copied = false;
  if (!x->storage) return core_error_null(TC_ERR_INTERNAL, "%s: graph input has no storage (a traced tensor)", be->name);
  const bool host = be->host_memory;
  if (host ? x->storage->backend == NULL : x->storage->backend == be) return x;
  *copied = true;
  return tensor_to_backend(be->name, x, host ? NULL : be);
}

static tc_tensor *output_new(tc_backend *be, const tc_vtype *vt, const int64_t *vals) {
  int64_t sizes[TC_MAX_RANK];
  for (int d = 0; d < vt->rank; d++) sizes[d] = vals[vt->shape[d]];
  return tensor_new_on_backend(be, be->name, vt->dtype, vt->rank, sizes);
}

static void ref_of(const tc_tensor *t, tc_tensor_ref *r) {
  memset(r, 0, sizeof *r);
  r->struct_size = sizeof *r;
  r->buffer = t->storage->backend ? t->storage->buffer : (tc_buffer *)t->storage->host;
  r->offset = t->offset;
  r->dtype = t->dtype;
  r->rank = t->rank;
  for (int d = 0; d < t->rank; d++) {
    r->sizes[d] = t->sizes[d];
    r->strides[d] = t->strides[d];
  }
}

static tc_status graph_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  graph_lowered *gl = (graph_lowered *)l;
  const tc_graph *g = l->graph;
  tc_backend *be = l->backend;
  const int32_t ni = g->n_inputs, no = g->n_outputs;
  int64_t *vals = malloc((size_t)(g->sx.n ? g->sx.n : 1) * sizeof *vals);
  tc_tensor **ins = calloc((size_t)(ni ? ni : 1), sizeof *ins);
  bool *copied = calloc((size_t)(ni ? ni : 1), sizeof *copied);
  tc_tensor_ref *in_refs = calloc((size_t)(ni ? ni : 1), sizeof *in_refs);
  tc_tensor_ref *out_refs = calloc((size_t)(no ? no : 1), sizeof *out_refs);
  tc_status s = TC_OK;
  for (int32_t k = 0; k < no; k++) outputs[k] = NULL;
  if (!vals || !ins || !copied || !in_refs || !out_refs) {
    s = core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory running graph %s", be->name, g->name);
    goto out;
  }
  sxtab_eval(&g->sx, syms, vals);
  for (int32_t i = 0; i < ni && s == TC_OK; i++) {
    ins[i] = input_for(be, inputs[i], &copied[i]);
    if (!ins[i]) s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
    else ref_of(ins[i], &in_refs[i]);
  }
  for (int32_t k = 0; k < no && s == TC_OK; k++) {
    outputs[k] = output_new(be, graph_value_type(g, g->outputs[k]), vals);
    if (!outputs[k]) s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_OUT_OF_MEMORY;
    else ref_of(outputs[k], &out_refs[k]);
  }
  if (s == TC_OK) {
    /* The index error record (ABI 2.3): this call's own on host memory, read when it returns;
     * on a device, the executable's, read at the backend's next wait (index_check.c). */
    tc_index_error host_record = {0};
    tc_buffer *record = !gl->checks_index ? NULL
                        : gl->record      ? index_record_begin(gl->record)
                                          : (tc_buffer *)&host_record;
    const uint64_t call_id = backend_call_begin(be, g->name);
    s = backend_run_graph(be, gl->exe, syms, g->n_syms, in_refs, ni, out_refs, no, call_id, record);
    if (s != TC_OK) lowered_plugin_fail(s, be, "running", g->name);
    if (s == TC_OK) {
      s = backend_flush(be);
      if (s != TC_OK) lowered_plugin_fail(s, be, "starting the device work", g->name);
    }
    if (gl->record) index_record_end(gl->record, call_id, true);
    else if (s == TC_OK && record) s = index_check_result(be, g, &host_record, call_id);
  }
  if (s != TC_OK)
    for (int32_t k = 0; k < no; k++) {
      tc_release(outputs[k]);
      outputs[k] = NULL;
    }
out:
  if (ins)
    for (int32_t i = 0; i < ni; i++)
      if (copied && copied[i]) tc_release(ins[i]);
  free(vals);
  free(ins);
  free(copied);
  free(in_refs);
  free(out_refs);
  return s;
}

static void graph_lowered_free(tc_lowered *l) {
  graph_lowered *gl = (graph_lowered *)l;
  index_record_free(gl->record);
  backend_executable_free(l->backend, gl->exe);
  free(gl);
}

static const char *graph_source(const tc_lowered *l) {
  const graph_lowered *gl = (const graph_lowered *)l;
  backend_exe_info info;
  backend_executable_info(l->backend, gl->exe, &info);
  return info.source;
}

static const tc_lowered_vt graph_vt = {graph_run, graph_source, graph_lowered_free, NULL};

tc_status lower_graph_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out,
                            tc_lower_stats *stats) {
  *out = NULL;
  const double t0 = tc_now_seconds();
  tc_graph_desc desc;
  tc_graph_desc_storage *storage = NULL;
  TC_RETURN_IF_ERROR(graph_to_desc(g, &desc, &storage));
  graph_lowered *gl = calloc(1, sizeof *gl);
  if (!gl) {
    graph_desc_free(storage);
    return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory compiling graph %s", be->name, g->name);
  }
  tc_status s = backend_compile(be, NULL, &desc, lo ? lo->options : NULL, lo ? lo->mode : TC_MODE_DEFAULT, &gl->exe);
  graph_desc_free(storage);
  if (s != TC_OK) {
    free(gl);
    return lowered_plugin_fail(s, be, "compiling", g->name);
  }
  gl->base.vt = &graph_vt;
  gl->base.backend = be;
  gl->base.graph = g;
  gl->base.n_kernels = 1; /* one executable; how the plugin splits it is its own business */
  gl->checks_index = be->api->abi_minor >= 3 && graph_reads_index(g);
  if (gl->checks_index && !be->host_memory && (s = index_record_new(be, g, &gl->record)) != TC_OK) {
    graph_lowered_free(&gl->base);
    return s;
  }
  backend_exe_info info;
  backend_executable_info(be, gl->exe, &info);
  if (info.source && tc_logs_on("output_code")) {
    char header[160];
    snprintf(header, sizeof header, "%s: graph %s", be->name, g->name);
    tc_logs_text("output_code", header, info.source);
  }
  if (stats) {
    stats->n_kernels = gl->base.n_kernels;
    stats->seconds = tc_now_seconds() - t0;
    stats->cache_hit = info.from_cache;
  }
  *out = &gl->base;
  return TC_OK;
}
