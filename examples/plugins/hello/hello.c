/*
 * hello.c — a minimal, complete tc plugin (ABI 2). It takes the whole primitive graph
 * (TC_HANDOFF_GRAPH) on host memory (TC_MEMORY_HOST) and runs graphs made only of f32 neg and
 * add, element by element, on contiguous tensors; anything else it declines at compile time
 * with TC_ERR_UNSUPPORTED and a message naming the prim. It includes tc_plugin.h and nothing
 * else of tc (no kit), exactly like a plugin built outside tc's tree:
 *
 *   cc -std=c11 -shared -fPIC -fvisibility=hidden -I<tc>/plugin-api hello.c -o tc-hello.so
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plugin.h"

/* Options are data: the host parses, validates and defaults them, and hands them to init
 * (CONTEXT scope; contexts are keyed by them) or compile (COMPILE scope). */
static const tc_option_decl hello_options[] = {
    {.struct_size = sizeof(tc_option_decl), .name = "hello.greeting", .type = TC_OPTION_STRING,
     .scope = TC_OPTION_CONTEXT, .default_value = "hello", .values = "any text",
     .meaning = "what a new context says (TC_LOGS=hello)"},
};

struct tc_plugin_ctx {
  const tc_host_api *host; /* valid while the plugin is loaded */
  char greeting[64];
};

/* What compile keeps: the graph descriptor is only borrowed for the call, so copy what run needs. */
typedef struct hello_node {
  int32_t prim, a, b; /* operand value ids; b is -1 for neg */
} hello_node;

struct tc_executable {
  int32_t n_inputs, n_nodes, n_outputs;
  hello_node *nodes;
  int32_t *outputs; /* value ids: inputs are 0..n_inputs-1, node i is n_inputs + i */
};

/* Errors cross the boundary as tc_error objects made by the host; returning one hands it over. */
static tc_error *fail(const tc_host_api *h, tc_status code, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return h->error_new(h->host_ctx, code, msg);
}

static const tc_device_desc hello_device = {sizeof(tc_device_desc), "host CPU", TC_DEVICE_CPU, 0};

static tc_error *hello_probe(tc_probe_args *a) {
  a->available = true; /* nothing to look for: plain C on the host */
  a->reason = "example plugin: f32 neg and add only";
  a->score = 0; /* never the choice of backend "auto" */
  a->n_devices = 1;
  a->devices = &hello_device; /* plugin memory, valid until the next probe */
  a->device_size = sizeof hello_device;
  return NULL;
}

static tc_error *hello_init(tc_init_args *a) {
  tc_plugin_ctx *c = calloc(1, sizeof *c);
  if (!c) return fail(a->host, TC_ERR_OUT_OF_MEMORY, "hello: out of memory creating a context");
  c->host = a->host; /* a->device is -1: hello has one device and no option to pick one */
  /* Every CONTEXT option declared arrives, set or defaulted; the strings are borrowed: copy. */
  for (int32_t i = 0; i < a->n_options; i++) {
    const tc_option *o = TC_ELEM(tc_option, a->options, a->option_size, i);
    if (!strcmp(o->name, "hello.greeting") && o->value) snprintf(c->greeting, sizeof c->greeting, "%s", o->value);
  }
  char line[128];
  snprintf(line, sizeof line, "%s from a new context", c->greeting);
  c->host->log(c->host->host_ctx, TC_LOG_INFO, "hello", line);
  a->ctx = c;
  return NULL;
}

static void hello_release(const tc_release_args *a) { free(a->ctx); }

static void hello_executable_free(const tc_executable_free_args *a) {
  if (!a->exe) return;
  free(a->exe->nodes);
  free(a->exe->outputs);
  free(a->exe);
}

static tc_error *hello_compile(tc_compile_args *a) {
  const tc_host_api *h = a->ctx->host;
  /* TC_HANDOFF_GRAPH: a->graph is the graph (a->kernels is NULL). a->mode and a->options (the
   * COMPILE-scope options: none declared here) arrive too; hello has no use for them. */
  const tc_graph_desc *g = a->graph;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_prim_node *n = TC_ELEM(tc_prim_node, g->nodes, g->node_size, i);
    if (n->prim != TC_PRIM_NEG && n->prim != TC_PRIM_ADD)
      return fail(h, TC_ERR_UNSUPPORTED, "hello: graph %s, node %d: prim %d is not supported (only neg and add)",
                  g->name, (int)i, (int)n->prim);
    if (n->out->dtype != TC_F32) /* neg and add take operands of their result's dtype */
      return fail(h, TC_ERR_UNSUPPORTED, "hello: graph %s, node %d: dtype %d is not supported (only f32)", g->name,
                  (int)i, (int)n->out->dtype);
  }
  tc_executable *e = calloc(1, sizeof *e);
  if (e) {
    e->nodes = calloc((size_t)g->n_nodes + 1, sizeof *e->nodes);
    e->outputs = calloc((size_t)g->n_outputs + 1, sizeof *e->outputs);
  }
  if (!e || !e->nodes || !e->outputs) {
    hello_executable_free(&(tc_executable_free_args){sizeof(tc_executable_free_args), a->ctx, e});
    return fail(h, TC_ERR_OUT_OF_MEMORY, "hello: out of memory compiling graph %s", g->name);
  }
  e->n_inputs = g->n_inputs, e->n_nodes = g->n_nodes, e->n_outputs = g->n_outputs;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_prim_node *n = TC_ELEM(tc_prim_node, g->nodes, g->node_size, i);
    e->nodes[i] = (hello_node){n->prim, n->inputs[0], n->prim == TC_PRIM_ADD ? n->inputs[1] : -1};
  }
  memcpy(e->outputs, g->outputs, (size_t)g->n_outputs * sizeof *e->outputs);
  a->exe = e;
  return NULL;
}

/* True when r is a row-major contiguous view of n elements. */
static bool contiguous(const tc_tensor_ref *r, int64_t n) {
  int64_t expect = 1;
  for (int32_t d = r->rank - 1; d >= 0; d--) {
    if (r->sizes[d] != 1 && r->strides[d] != expect) return false;
    expect *= r->sizes[d];
  }
  return expect == n;
}

static tc_error *hello_run_graph(const tc_run_graph_args *a) {
  const tc_executable *e = a->exe;
  const tc_host_api *h = a->ctx->host;
  if (a->n_outputs < 1) return NULL;
  /* Neg and add keep shapes, so every value has as many elements as the first output. */
  const tc_tensor_ref *out0 = TC_ELEM(tc_tensor_ref, a->outputs, a->output_size, 0);
  int64_t n = 1;
  for (int32_t d = 0; d < out0->rank; d++) n *= out0->sizes[d];
  const float **vals = calloc((size_t)(e->n_inputs + e->n_nodes) + 1, sizeof *vals);
  float *tmp = malloc(((size_t)e->n_nodes * (size_t)n + 1) * sizeof *tmp);
  tc_error *err = !vals || !tmp ? fail(h, TC_ERR_OUT_OF_MEMORY, "hello: out of memory running") : NULL;
  for (int32_t i = 0; !err && i < a->n_inputs; i++) {
    const tc_tensor_ref *r = TC_ELEM(tc_tensor_ref, a->inputs, a->input_size, i);
    if (!contiguous(r, n)) err = fail(h, TC_ERR_UNSUPPORTED, "hello: input %d is not contiguous", (int)i);
    else vals[i] = (const float *)r->buffer + r->offset; /* host memory: a tc_buffer * is a host pointer */
  }
  for (int32_t i = 0; !err && i < e->n_nodes; i++) {
    const hello_node *nd = &e->nodes[i];
    float *dst = tmp + (size_t)i * (size_t)n;
    const float *x = vals[nd->a], *y = nd->b >= 0 ? vals[nd->b] : NULL;
    for (int64_t k = 0; k < n; k++) dst[k] = nd->prim == TC_PRIM_NEG ? -x[k] : x[k] + y[k];
    vals[e->n_inputs + i] = dst;
  }
  for (int32_t k = 0; !err && k < a->n_outputs; k++) {
    const tc_tensor_ref *r = TC_ELEM(tc_tensor_ref, a->outputs, a->output_size, k);
    if (!contiguous(r, n)) err = fail(h, TC_ERR_UNSUPPORTED, "hello: output %d is not contiguous", (int)k);
    else memcpy((float *)r->buffer + r->offset, vals[e->outputs[k]], (size_t)n * sizeof(float));
  }
  free(vals);
  free(tmp);
  return err;
}

/* Every call completes before it returns: nothing is ever queued. */
static tc_error *hello_synchronize(const tc_queue_args *a) {
  (void)a;
  return NULL;
}

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *q) {
  static const tc_plugin_api api = {
      .struct_size = sizeof(tc_plugin_api),
      .abi_major = TC_ABI_MAJOR,
      .abi_minor = TC_ABI_MINOR,
      .name = "hello",
      .version = "0.1.0",
      .description = "example plugin: f32 neg and add, one element at a time",
      .handoff = TC_HANDOFF_GRAPH,
      .memory = TC_MEMORY_HOST, /* so buffer_alloc/free/write/read stay NULL */
      .option_prefix = "hello",
      .n_options = 1,
      .options = hello_options,
      .option_size = sizeof(tc_option_decl),
      .probe = hello_probe,
      .init = hello_init,
      .release = hello_release,
      .compile = hello_compile,
      .executable_free = hello_executable_free,
      .synchronize = hello_synchronize,
      .run_graph = hello_run_graph,
  };
  /* The host says its version first; the major must match, the minor may differ. */
  if (q->abi_major != TC_ABI_MAJOR)
    return q->host->error_new(q->host->host_ctx, TC_ERR_VERSION, "hello: built for tc plugin ABI 2.x");
  size_t n = q->table_size < sizeof api ? q->table_size : sizeof api; /* no more than the host's room */
  memcpy(q->table, &api, n);
  q->table->struct_size = n;
  return NULL;
}
