/* index_check.c — ABI 2.3's device-side index errors, on the host's side. Inside tc_compile the
 * index values are unknown while tracing, so a compiled graph's gathers and scatters check them
 * in their kernels and record the first out-of-range one of a call in a small record
 * (tc_index_error: flag, site, value, bound). The host zeroes it before the call and turns a set
 * flag into the error eager mode gives, naming the public op (PyTorch's CUDA device-side assert
 * would end the process; tc reports it and keeps working):
 *
 *  - host memory: the record is the call's own, read as soon as the call returns;
 *  - device memory: the record lives on the device (index_record) and calls stay asynchronous:
 *    it is read when the host next waits for that backend anyway (a read of a device tensor,
 *    tc_synchronize), through the backend's checks at waits, where an asynchronous failure is
 *    delivered too. It is zeroed again only when it held an error. A record whose executable is
 *    freed while calls are unread stays registered until that wait, so freeing a compiled
 *    function does not lose its last call's error. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* What a site's message needs, copied out of the graph (a record may outlive it). */
typedef struct site_info {
  int32_t prim; /* GATHER or SCATTER_ADD; 0 for a node that reads no index */
  int32_t index_op;
  int32_t dim;
} site_info;

static site_info site_of(const tc_node *n) {
  if (!graph_node_reads_index(n)) return (site_info){0, 0, 0};
  return (site_info){(int32_t)n->prim, n->index_op, n->n_iattrs > 0 ? (int32_t)n->iattrs[0] : 0};
}

/* context: "the compiled graph g on vulkan, one of calls 4..6" and the like. */
static tc_status result(const char *context, const site_info *site, const tc_index_error *rec) {
  if (!site || !site->prim) /* a plugin's bad record: say what it said */
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "an index value %" PRId64 " out of range for a size of %" PRId64 " (%s, site %" PRId64
                      ", which is not a gather or scatter of the graph)",
                      rec->value, rec->bound, context, rec->site);
  char what[256];
  graph_index_error_text(site->prim, site->index_op, site->dim, rec->value, rec->bound, what, sizeof what);
  return core_error(TC_ERR_INVALID_ARGUMENT, "%s (found by %s, which %s)", what, context,
                    site->prim == TC_PRIM_GATHER ? "read 0 there" : "skipped that element");
}

tc_status index_check_result(const tc_backend *be, const tc_graph *g, const tc_index_error *rec, uint64_t call_id) {
  if (!rec->flag) return TC_OK;
  char context[160];
  snprintf(context, sizeof context, "the compiled graph %s on %s, call %" PRIu64, g->name, be->name, call_id);
  const site_info site = rec->site >= 0 && rec->site < g->n_nodes ? site_of(&g->nodes[rec->site]) : (site_info){0};
  return result(context, &site, rec);
}

/* ---------------------------------------------------------------- device memory */
struct index_record {
  tc_backend *be;
  char graph[64];
  int32_t n_sites; /* the graph's nodes */
  site_info *sites;
  tc_buffer *buffer; /* the record, on the device */
  /* Held while a call's work is queued and while a wait reads and re-zeroes the record, so no
   * call's launches fall between that read and the zeroing (their error would be wiped). */
  pthread_mutex_t lock;
  bool pending; /* calls queued since the last read */
  uint64_t first_call, last_call;
  bool orphan; /* its executable is gone: the next wait reads it and frees it */
};

static void record_destroy(index_record *r) {
  backend_buffer_free(r->be, r->buffer);
  pthread_mutex_destroy(&r->lock);
  free(r->sites);
  free(r);
}

static tc_status record_zero(index_record *r) {
  const tc_index_error zero = {0};
  return backend_buffer_write(r->be, r->buffer, 0, &zero, sizeof zero);
}

static tc_status record_fail(tc_status s, const index_record *r, const char *what) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return core_error(s == TC_OK ? TC_ERR_INTERNAL : s, "%s: %s of graph %s failed: %s", r->be->name, what, r->graph,
                    msg);
}

/* The check the backend runs at its next wait. */
static tc_status record_on_wait(void *ctx, bool *drop) {
  index_record *r = ctx;
  pthread_mutex_lock(&r->lock);
  tc_status s = TC_OK;
  if (r->pending) {
    tc_index_error rec;
    const uint64_t first = r->first_call, last = r->last_call;
    r->pending = false;
    s = backend_buffer_read_raw(r->be, r->buffer, 0, &rec, sizeof rec);
    if (s != TC_OK) {
      record_fail(s, r, "reading the index error record");
    } else if (rec.flag) {
      s = r->orphan ? TC_OK : record_zero(r); /* the next call starts clean */
      if (s != TC_OK) {
        record_fail(s, r, "clearing the index error record");
      } else {
        char context[160];
        if (first == last)
          snprintf(context, sizeof context, "the compiled graph %s on %s, call %" PRIu64, r->graph, r->be->name, first);
        else
          snprintf(context, sizeof context, "the compiled graph %s on %s, one of calls %" PRIu64 "..%" PRIu64, r->graph,
                   r->be->name, first, last);
        s = result(context, rec.site >= 0 && rec.site < r->n_sites ? &r->sites[rec.site] : NULL, &rec);
      }
    }
  }
  const bool done = r->orphan;
  pthread_mutex_unlock(&r->lock);
  if (done) {
    *drop = true;
    record_destroy(r);
  }
  return s;
}

tc_status index_record_new(tc_backend *be, const tc_graph *g, index_record **out) {
  *out = NULL;
  index_record *r = calloc(1, sizeof *r);
  if (r) r->sites = calloc((size_t)g->n_nodes + 1, sizeof *r->sites);
  if (!r || !r->sites) {
    free(r);
    return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory compiling graph %s", be->name, g->name);
  }
  r->be = be;
  snprintf(r->graph, sizeof r->graph, "%s", g->name);
  r->n_sites = g->n_nodes;
  for (int32_t i = 0; i < g->n_nodes; i++) r->sites[i] = site_of(&g->nodes[i]);
  pthread_mutex_init(&r->lock, NULL);
  tc_status s = backend_buffer_alloc(be, sizeof(tc_index_error), &r->buffer);
  if (s == TC_OK) s = record_zero(r);
  if (s != TC_OK) record_fail(s, r, "allocating the index error record");
  if (s == TC_OK) s = backend_wait_check_add(be, record_on_wait, r);
  if (s != TC_OK) {
    record_destroy(r);
    return s;
  }
  *out = r;
  return TC_OK;
}

void index_record_free(index_record *r) {
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  const bool unread = r->pending;
  r->orphan = unread;
  pthread_mutex_unlock(&r->lock);
  if (unread) return; /* the next wait reads it, reports what it holds and frees it */
  backend_wait_check_remove(r->be, r); /* no wait reads it any more */
  record_destroy(r);
}

tc_buffer *index_record_begin(index_record *r) {
  pthread_mutex_lock(&r->lock);
  return r->buffer;
}

void index_record_end(index_record *r, uint64_t call_id, bool queued) {
  if (queued) {
    if (!r->pending) r->first_call = call_id;
    r->last_call = call_id;
    r->pending = true;
  }
  pthread_mutex_unlock(&r->lock);
}
