/* eager.c — running one prim now. View prims become views of the operand's storage; every other
 * prim runs on the eager backend (debug-eager unless $TC_EAGER_BACKEND says otherwise) as a
 * one-node graph with static shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* Strides that let a view of (sizes, strides) be read as new_sizes, or false when the layout
 * does not allow it (PyTorch's computeStride). */
static bool reshape_strides(int rank, const int64_t *sizes, const int64_t *strides, int new_rank,
                            const int64_t *new_sizes, int64_t *new_strides) {
  int64_t numel = 1;
  for (int i = 0; i < rank; i++)
    numel *= sizes[i];
  if (numel <= 1) { /* any strides address 0 or 1 element */
    tensor_contiguous_strides(new_rank, new_sizes, new_strides);
    return true;
  }
  int view_d = new_rank - 1;
  int64_t chunk_base_stride = strides[rank - 1], tensor_numel = 1, view_numel = 1;
  for (int tensor_d = rank - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= sizes[tensor_d];
    if (tensor_d == 0 || (sizes[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

/* The view a movement prim denotes, or NULL (no error) when it needs a copy. */
static tc_tensor *eager_view(const tc_node *n, tc_tensor *x, const int64_t *sizes, bool *handled) {
  int64_t strides[TC_MAX_RANK] = {0};
  int64_t offset = x->offset;
  const int r = n->out.rank;
  *handled = true;
  switch (n->prim) {
  case TC_PRIM_BROADCAST_IN_DIM:
    for (int i = 0; i < x->rank; i++) {
      int b = (int)n->iattrs[i];
      strides[b] = x->sizes[i] == sizes[b] && x->sizes[i] != 1 ? x->strides[i] : 0;
    }
    break;
  case TC_PRIM_PERMUTE:
    for (int i = 0; i < r; i++)
      strides[i] = x->strides[n->iattrs[i]];
    break;
  case TC_PRIM_SLICE:
    for (int i = 0; i < r; i++) {
      if (sizes[i] > 0) offset += n->iattrs[i] * x->strides[i];
      /* A dim of one element never steps: its stride is free, and step * stride could overflow
       * (a huge step keeps one element). With two or more, step < size keeps it in range. */
      strides[i] = sizes[i] > 1 ? x->strides[i] * n->iattrs[r + i] : x->strides[i];
    }
    break;
  case TC_PRIM_RESHAPE:
    if (reshape_strides(x->rank, x->sizes, x->strides, r, sizes, strides)) break;
    *handled = false;
    return NULL;
  default: *handled = false; return NULL;
  }
  return tensor_new_view(x, r, sizes, strides, offset);
}

static tc_tensor_ref tensor_ref(const tc_tensor *t) {
  tc_tensor_ref r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.buffer = (tc_buffer *)t->storage->host;
  r.offset = t->offset;
  r.dtype = t->dtype;
  r.rank = t->rank;
  for (int i = 0; i < t->rank; i++) {
    r.sizes[i] = t->sizes[i];
    r.strides[i] = t->strides[i];
  }
  return r;
}

static tc_vtype vtype_static(tc_graph *g, tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_vtype t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = rank;
  for (int i = 0; i < rank; i++)
    t.shape[i] = sxtab_const(&g->sx, sizes[i]);
  return t;
}

/* Wraps the plugin's message (already in tc_last_error) with the prim and backend. */
static tc_status eager_fail(tc_status s, const tc_node *n, const char *what, const tc_backend *be) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return core_error(s, "prim %s: %s on eager backend '%s' failed: %s", prim_name(n->prim), what, be->name, msg);
}

static tc_status eager_exec(tc_backend *be, const tc_node *node, int n_in, tc_tensor *const *in, tc_tensor *out) {
  tc_graph g;
  graph_init(&g, prim_name(node->prim));
  tc_status s = TC_OK;
  int32_t *ids = malloc((size_t)(n_in + 1) * sizeof *ids);
  tc_tensor_ref *refs = malloc((size_t)(n_in + 1) * sizeof *refs);
  if (!ids || !refs) {
    s = core_error(TC_ERR_OUT_OF_MEMORY, "prim %s: out of memory", prim_name(node->prim));
    goto done;
  }
  for (int i = 0; i < n_in; i++) {
    tc_vtype t = vtype_static(&g, in[i]->dtype, in[i]->rank, in[i]->sizes);
    ids[i] = graph_add_input(&g, &t);
    refs[i] = tensor_ref(in[i]);
  }
  tc_node n = *node;
  n.out = vtype_static(&g, out->dtype, out->rank, out->sizes);
  n.n_in = n_in;
  n.in = ids;
  int32_t v = graph_add_node(&g, &n);
  if (v < 0) {
    s = tc_last_status();
    goto done;
  }
  graph_set_outputs(&g, 1, &v);
  tc_tensor_ref out_ref = tensor_ref(out);

  tc_graph_desc desc;
  tc_graph_desc_storage *st = NULL;
  s = graph_to_desc(&g, &desc, &st);
  if (s != TC_OK) goto done;
  const int64_t no_syms[1] = {0};
  tc_executable *exe = NULL;
  /* The backend's context lock orders these calls against other threads' (backend/calls.c). */
  s = backend_compile(be, NULL, &desc, NULL, TC_MODE_DEFAULT, &exe);
  if (s != TC_OK) {
    s = eager_fail(s, node, "compile", be);
  } else {
    /* No index error record: eager ops checked their index values on the host already. */
    s = backend_run_graph(be, exe, no_syms, 0, refs, n_in, &out_ref, 1, 0, NULL);
    if (s != TC_OK) s = eager_fail(s, node, "run", be);
    backend_executable_free(be, exe);
  }
  graph_desc_free(st);
done:
  free(ids);
  free(refs);
  graph_free(&g);
  return s;
}

static tc_backend *eager_backend(const tc_node *n) {
  tc_backend *be = backend_eager();
  if (!be) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    return core_error_null(TC_ERR_UNAVAILABLE, "prim %s: no eager backend: %s", prim_name(n->prim), msg);
  }
  if (!(be->api->handoff & TC_HANDOFF_GRAPH) || !be->host_memory)
    return core_error_null(TC_ERR_UNSUPPORTED,
                         "prim %s: eager backend '%s' must take whole graphs (TC_HANDOFF_GRAPH) on host memory",
                         prim_name(n->prim), be->name);
  return be;
}

tc_tensor *eager_run(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape) {
  int64_t sizes[TC_MAX_RANK];
  const int rank = node->out.rank;
  for (int i = 0; i < rank; i++)
    sizes[i] = shape[i].v;

  if (n_in == 1) {
    bool handled = false;
    tc_tensor *v = eager_view(node, in[0], sizes, &handled);
    if (handled) return v;
  }
  tc_tensor *out = tensor_new_host(node->out.dtype, rank, sizes);
  if (!out) return NULL;
  if (tensor_numel(out) == 0) return out;

  tc_backend *be = eager_backend(node);
  if (!be) {
    tc_release(out);
    return NULL;
  }
  /* Operands in device memory are read back first: the eager backend works on host memory. */
  tc_tensor *host_in[16] = {0}, **hin = n_in <= 16 ? host_in : malloc((size_t)n_in * sizeof *hin);
  if (!hin) {
    tc_release(out);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "prim %s: out of memory", prim_name(node->prim));
  }
  tc_status s = TC_OK;
  int got = 0;
  for (; got < n_in; got++) {
    hin[got] = tensor_on_host(prim_name(node->prim), in[got]);
    if (!hin[got]) {
      s = tc_last_status();
      break;
    }
  }
  if (s == TC_OK) s = eager_exec(be, node, n_in, hin, out);
  for (int i = 0; i < got; i++)
    tc_release(hin[i]);
  if (hin != host_in) free(hin);
  if (s != TC_OK) {
    tc_release(out);
    return NULL;
  }
  return out;
}
