/* interp.c — run_graph: evaluate the size expressions for this call's symbols, then execute
 * the nodes in order, one prim at a time. Graph inputs are the host's strided views;
 * intermediates are contiguous buffers malloc'd here and freed after their last use; a node
 * whose value is a graph output writes straight into the host's (contiguous) output buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug_eager.h"

typedef struct run {
  de_call *call;
  const tc_executable *exe;
  int64_t *vals;     /* evaluated size expressions */
  de_tensor *values; /* per value id */
  bool *owned;       /* values[v].data was malloc'd here */
  bool *direct;      /* per output: already written in place */
  size_t input_size, output_size; /* element sizes of the host's tc_tensor_ref arrays */
} run;

static void run_free(run *r) {
  for (int32_t v = 0; r->values && v < r->exe->n_values; v++)
    if (r->owned[v]) free(r->values[v].data);
  free(r->vals);
  free(r->values);
  free(r->owned);
  free(r->direct);
}

/* Concrete sizes of value v for this call. */
static tc_status value_sizes(const run *r, int32_t v, int64_t *sizes) {
  const de_vtype *t = &r->exe->values[v];
  for (int32_t d = 0; d < t->rank; d++) {
    sizes[d] = r->vals[t->shape[d]];
    if (sizes[d] < 0)
      return de_error(r->call, TC_ERR_INVALID_ARGUMENT, "graph '%s': value %d has negative size %lld at dim %d",
                      r->exe->name, v, (long long)sizes[d], d);
  }
  return TC_OK;
}

static bool ref_is_contiguous(const tc_tensor_ref *t) {
  int64_t want[TC_MAX_RANK];
  tck_contiguous_strides(t->rank, t->sizes, want);
  for (int32_t d = 0; d < t->rank; d++)
    if (t->sizes[d] > 1 && t->strides[d] != want[d]) return false;
  return true;
}

/* Checks a host tensor against value v's type and returns it as a de_tensor. */
static tc_status bind_ref(const run *r, const tc_tensor_ref *ref, int32_t v, const char *what, int32_t k,
                          de_tensor *out) {
  const de_vtype *t = &r->exe->values[v];
  int64_t sizes[TC_MAX_RANK];
  DE_TRY(value_sizes(r, v, sizes));
  bool same = ref->dtype == t->dtype && ref->rank == t->rank;
  for (int32_t d = 0; same && d < t->rank; d++) same = ref->sizes[d] == sizes[d];
  if (!same) {
    char a[160], b[160];
    return de_error(r->call, TC_ERR_INVALID_ARGUMENT, "graph '%s': %s %d is %s %s, the graph expects %s %s",
                    r->exe->name, what, k, tck_dtype_name(ref->dtype),
                    de_shape_str(a, sizeof a, ref->rank < 0 || ref->rank > TC_MAX_RANK ? 0 : ref->rank, ref->sizes),
                    tck_dtype_name(t->dtype), de_shape_str(b, sizeof b, t->rank, sizes));
  }
  if (!ref->buffer && de_numel(t->rank, sizes) > 0)
    return de_error(r->call, TC_ERR_INVALID_ARGUMENT, "graph '%s': %s %d has no buffer", r->exe->name, what, k);
  out->data = (char *)ref->buffer + ref->offset * (int64_t)tck_dtype_size((int32_t)t->dtype);
  out->dtype = t->dtype;
  out->rank = t->rank;
  memcpy(out->sizes, ref->sizes, sizeof out->sizes);
  memcpy(out->strides, ref->strides, sizeof out->strides);
  return TC_OK;
}

/* Where node value v goes: the host's output buffer when v is an output (first use of it),
 * else a fresh contiguous buffer. */
static tc_status place_value(run *r, int32_t v, const tc_tensor_ref *outputs) {
  de_tensor *t = &r->values[v];
  t->dtype = r->exe->values[v].dtype;
  t->rank = r->exe->values[v].rank;
  DE_TRY(value_sizes(r, v, t->sizes));
  tck_contiguous_strides(t->rank, t->sizes, t->strides);
  for (int32_t k = 0; k < r->exe->n_outputs; k++) {
    const tc_tensor_ref *ref = TC_ELEM(tc_tensor_ref, outputs, r->output_size, k);
    if (r->exe->outputs[k] == v && !r->direct[k] && ref_is_contiguous(ref)) {
      de_tensor host_view;
      DE_TRY(bind_ref(r, ref, v, "output", k, &host_view));
      t->data = host_view.data;
      r->direct[k] = true;
      return TC_OK;
    }
  }
  size_t bytes = (size_t)de_numel(t->rank, t->sizes) * tck_dtype_size((int32_t)t->dtype);
  t->data = malloc(bytes ? bytes : 1);
  if (!t->data)
    return de_error(r->call, TC_ERR_OUT_OF_MEMORY, "graph '%s': cannot allocate %zu bytes for value %d",
                    r->exe->name, bytes, v);
  r->owned[v] = true;
  return TC_OK;
}

static tc_status exec_node(const de_op *op) {
  switch (de_prim_info_of(op->node->prim).family) {
  case DE_FAMILY_UNARY: case DE_FAMILY_BINARY: case DE_FAMILY_WHERE: case DE_FAMILY_CONVERT:
    return de_exec_elementwise(op);
  case DE_FAMILY_REDUCE: case DE_FAMILY_ARGREDUCE: return de_exec_reduce(op);
  case DE_FAMILY_MOVEMENT: return de_exec_movement(op);
  case DE_FAMILY_INDEX: return de_exec_index(op);
  case DE_FAMILY_CREATE: return de_exec_create(op);
  case DE_FAMILY_MATMUL: return de_exec_matmul(op);
  default: return de_op_error(op, TC_ERR_UNSUPPORTED, "unknown prim id %d", op->node->prim);
  }
}

static tc_status run_node(run *r, int32_t i, const tc_tensor_ref *outputs) {
  const de_node *n = &r->exe->nodes[i];
  int32_t v = r->exe->n_inputs + i;
  DE_TRY(place_value(r, v, outputs));
  de_tensor *in = calloc(n->n_inputs ? (size_t)n->n_inputs : 1, sizeof *in);
  if (!in) return de_error(r->call, TC_ERR_OUT_OF_MEMORY, "graph '%s': out of memory", r->exe->name);
  for (int32_t k = 0; k < n->n_inputs; k++) in[k] = r->values[n->inputs[k]];
  de_op op = {r->call, n, i, in, &r->values[v], r->vals};
  tc_status s = exec_node(&op);
  free(in);
  if (s != TC_OK) return s;
  for (int32_t k = 0; k < n->n_inputs; k++) { /* intermediates die after their last reader */
    int32_t u = n->inputs[k];
    if (r->owned[u] && r->exe->last_use[u] == i) {
      free(r->values[u].data);
      r->values[u].data = NULL;
      r->owned[u] = false;
    }
  }
  return TC_OK;
}

/* An output not written in place (a graph input, a repeated value, a strided output view). */
static tc_status copy_output(const run *r, int32_t k, const tc_tensor_ref *outputs) {
  const tc_tensor_ref *ref = TC_ELEM(tc_tensor_ref, outputs, r->output_size, k);
  de_tensor dst;
  int32_t v = r->exe->outputs[k];
  DE_TRY(bind_ref(r, ref, v, "output", k, &dst));
  const de_tensor *src = &r->values[v];
  size_t item = tck_dtype_size((int32_t)src->dtype);
  int64_t n = de_numel(src->rank, src->sizes);
  for (int64_t i = 0; i < n; i++) memcpy(de_at_linear(&dst, i), de_at_linear(src, i), item);
  return TC_OK;
}

static tc_status run_all(run *r, const int64_t *syms, const tc_tensor_ref *inputs, const tc_tensor_ref *outputs) {
  const tc_executable *exe = r->exe;
  size_t ref_size = TC_STRUCT_SIZE(tc_tensor_ref, strides);
  if (exe->n_syms > 0 && !syms)
    return de_error(r->call, TC_ERR_INVALID_ARGUMENT, "graph '%s': %d symbols but syms is NULL", exe->name,
                    exe->n_syms);
  if ((exe->n_inputs > 0 && (!inputs || r->input_size < ref_size || inputs->struct_size < ref_size)) ||
      (exe->n_outputs > 0 && (!outputs || r->output_size < ref_size || outputs->struct_size < ref_size)))
    return de_error(r->call, TC_ERR_INVALID_ARGUMENT, "graph '%s': missing inputs/outputs or tc_tensor_ref too small",
                    exe->name);
  r->vals = malloc(sizeof(int64_t) * (size_t)(exe->n_exprs ? exe->n_exprs : 1));
  r->values = calloc((size_t)(exe->n_values ? exe->n_values : 1), sizeof(de_tensor));
  r->owned = calloc((size_t)(exe->n_values ? exe->n_values : 1), sizeof(bool));
  r->direct = calloc((size_t)(exe->n_outputs ? exe->n_outputs : 1), sizeof(bool));
  if (!r->vals || !r->values || !r->owned || !r->direct)
    return de_error(r->call, TC_ERR_OUT_OF_MEMORY, "graph '%s': out of memory", exe->name);
  tck_size_eval_all(exe->exprs, sizeof(tc_size_expr), exe->n_exprs, syms, r->vals);
  for (int32_t i = 0; i < exe->n_inputs; i++)
    DE_TRY(bind_ref(r, TC_ELEM(tc_tensor_ref, inputs, r->input_size, i), i, "input", i, &r->values[i]));
  for (int32_t k = 0; k < exe->n_outputs; k++) { /* fail before any work on a wrong output */
    de_tensor unused;
    DE_TRY(bind_ref(r, TC_ELEM(tc_tensor_ref, outputs, r->output_size, k), exe->outputs[k], "output", k, &unused));
  }
  for (int32_t i = 0; i < exe->n_nodes; i++) DE_TRY(run_node(r, i, outputs));
  for (int32_t k = 0; k < exe->n_outputs; k++)
    if (!r->direct[k]) DE_TRY(copy_output(r, k, outputs));
  return TC_OK;
}

tc_status de_graph_run(de_call *call, const tc_executable *exe, const tc_run_graph_args *a) {
  if (!exe) return de_error(call, TC_ERR_INVALID_ARGUMENT, "run_graph: executable is NULL");
  if (a->n_syms < exe->n_syms)
    return de_error(call, TC_ERR_INVALID_ARGUMENT, "graph '%s': %d symbols given, the graph has %d", exe->name,
                    a->n_syms, exe->n_syms);
  if (a->n_inputs != exe->n_inputs || a->n_outputs != exe->n_outputs)
    return de_error(call, TC_ERR_INVALID_ARGUMENT, "graph '%s': %d inputs and %d outputs given, the graph has %d and %d",
                    exe->name, a->n_inputs, a->n_outputs, exe->n_inputs, exe->n_outputs);
  run r = {call, exe, NULL, NULL, NULL, NULL, a->input_size, a->output_size};
  tc_status s = run_all(&r, a->syms, a->inputs, a->outputs);
  run_free(&r);
  return s;
}
