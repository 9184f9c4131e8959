/* test_capture.c — tc_compile: capture, guards and recompiles, dynamic sizes, graph breaks,
 * the eager fallback, simplification, explain, and the errors of bad arguments. Runs on the
 * debug-eager plugin of the build tree. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes/passes.h"
#include "tc/tc.h"
#include "test_support.h"

/* ---------------------------------------------------------------- helpers */
static tc_compile_options opts_for(const char *name) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .name = name};
  return o;
}

static tc_tensor *seq(int rank, const int64_t *sizes, float scale) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= sizes[i];
  float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
  for (int64_t i = 0; i < n; i++) d[i] = scale * (float)((i * 7) % 13 - 6);
  tc_tensor *t = tc_from_f32(d, rank, sizes);
  free(d);
  return t;
}

static void assert_close(tc_tensor *got, tc_tensor *want) {
  cr_assert_not_null(got, "result is NULL: %s", tc_last_error());
  cr_assert_not_null(want, "reference is NULL: %s", tc_last_error());
  cr_assert_eq(tc_rank(got), tc_rank(want));
  for (int d = 0; d < tc_rank(got); d++) cr_assert_eq(tc_size(got, d), tc_size(want, d), "size of dim %d", d);
  cr_assert_eq(tc_dtype_of(got), tc_dtype_of(want));
  int64_t n = tc_numel(got);
  tc_tensor *g64 = tc_to_dtype(got, TC_F64), *w64 = tc_to_dtype(want, TC_F64);
  double *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
  cr_assert_eq(tc_to_host(g64, a, (size_t)n * sizeof *a), TC_OK, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(w64, b, (size_t)n * sizeof *b), TC_OK, "%s", tc_last_error());
  for (int64_t i = 0; i < n; i++)
    cr_assert(fabs(a[i] - b[i]) <= 1e-5 * (1 + fabs(b[i])), "element %lld: %g vs %g", (long long)i, a[i], b[i]);
  free(a);
  free(b);
  tc_release(g64);
  tc_release(w64);
}

static tc_compile_stats stats_of(const tc_compiled *c) {
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK, "%s", tc_last_error());
  return st;
}

/* ---------------------------------------------------------------- models */
static tc_tensor *mlp(tc_tensor *x, tc_tensor *w, tc_tensor *b) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tc_relu(tc_add(tc_matmul(x, w), b));
  y = tc_add(tc_mul_scalar(y, 0.5), tc_sum(y, 1, (int[]){1}, true));
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *row_softmax(tc_tensor *x) { return tc_softmax(x, -1); }

static tc_tensor *global_w;
static tc_tensor *uses_global(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tc_tanh(tc_matmul(x, global_w));
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *reads_item(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  tc_tensor *h = tc_relu(tc_mul_scalar(x, 2.0));
  double total = tc_item(tc_sum(h, 0, NULL, false));
  tc_tensor *y = tc_add_scalar(h, total);
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *returns_input(tc_tensor *x) { return tc_retain(x); }
static tc_tensor *returns_global(tc_tensor *x) {
  (void)x;
  return tc_retain(global_w);
}

static tc_tensor *leaked;
static tc_tensor *leaks(tc_tensor *x) {
  tc_tensor *y = tc_exp(x);
  leaked = tc_retain(y);
  return y;
}

static tc_tensor *mean_rows(tc_tensor *x) { return tc_mean(x, 1, (int[]){0}, false); }

static tc_tensor *mlp_inputs(int64_t batch, tc_tensor **in) {
  in[0] = seq(2, (int64_t[]){batch, 16}, 0.1f);
  in[1] = seq(2, (int64_t[]){16, 8}, 0.05f);
  in[2] = seq(1, (int64_t[]){8}, 0.2f);
  return in[0];
}

static void release_all(tc_tensor **t, int n) {
  for (int i = 0; i < n; i++) tc_release(t[i]);
}

/* ---------------------------------------------------------------- compile and call */
Test(capture, matches_eager) {
  tc_tensor *in[3];
  mlp_inputs(32, in);
  tc_compile_options o = opts_for("mlp");
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *want = mlp(in[0], in[1], in[2]);
  tc_tensor *got = tc_call(c, in);
  assert_close(got, want);
  tc_compile_stats st = stats_of(c);
  cr_assert_eq(st.n_compiles, 1);
  cr_assert_eq(st.n_entries, 1);
  cr_assert_eq(st.n_graphs, 1);
  cr_assert_eq(st.n_graph_breaks, 0);
  cr_assert(st.n_kernels >= 1);
  tc_release(got);
  tc_release(want);
  tc_compiled_free(c);
  release_all(in, 3);
}

Test(capture, same_shapes_do_not_recompile) {
  tc_tensor *in[3];
  mlp_inputs(32, in);
  tc_compile_options o = opts_for("mlp");
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  tc_tensor *a = tc_call(c, in);
  tc_tensor *in2[3];
  mlp_inputs(32, in2); /* new tensors, same shapes and dtypes */
  tc_tensor *b = tc_call(c, in2);
  cr_assert_not_null(b, "%s", tc_last_error());
  assert_close(b, a);
  cr_assert_eq(stats_of(c).n_compiles, 1, "a second call with the same shapes must not recompile");
  tc_release(a);
  tc_release(b);
  tc_compiled_free(c);
  release_all(in, 3);
  release_all(in2, 3);
}

Test(capture, batch_change_recompiles_and_logs_the_guard) {
  setenv("TC_LOGS", "recompiles,guards", 1);
  tc_tensor *in32[3], *in64[3], *in128[3];
  mlp_inputs(32, in32);
  mlp_inputs(64, in64);
  mlp_inputs(128, in128);
  tc_compile_options o = opts_for("mlp");
  o.input_names = "x, w, b";
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  stderr_capture cap = stderr_begin();
  tc_tensor *a = tc_call(c, in32);
  tc_tensor *b = tc_call(c, in64);
  char *log = stderr_end(cap);
  cr_assert_not_null(a, "%s", tc_last_error());
  cr_assert_not_null(b, "%s", tc_last_error());
  cr_assert_eq(stats_of(c).n_compiles, 2);
  cr_assert(strstr(log, "[tc:recompiles] recompiling mlp (entry 2): guard failed: input 0 (x) dim 0 == 32, got 64"),
            "log was: %s", log);
  cr_assert(strstr(log, "input 0 (x): f32, rank 2, sizes [32, 16]"), "entry 1 is static: %s", log);
  cr_assert(strstr(log, "s0 := input 0 (x) dim 0 (>= 2; traced as 64)"), "entry 2 binds the batch: %s", log);
  free(log);
  /* dynamic=auto made the batch symbolic: a third size reuses entry 2. */
  tc_tensor *d = tc_call(c, in128);
  tc_tensor *want = mlp(in128[0], in128[1], in128[2]);
  assert_close(d, want);
  tc_compile_stats st = stats_of(c);
  cr_assert_eq(st.n_compiles, 2, "the symbolic entry serves batch 128 (got %d compiles)", st.n_compiles);
  cr_assert_eq(st.n_entries, 2);
  tc_release(a);
  tc_release(b);
  tc_release(d);
  tc_release(want);
  tc_compiled_free(c);
  release_all(in32, 3);
  release_all(in64, 3);
  release_all(in128, 3);
}

Test(capture, dynamic_on_is_symbolic_from_the_start) {
  tc_compile_options o = opts_for("mean_rows");
  o.dynamic = TC_DYNAMIC_ON;
  tc_compiled *c = tc_compile(TC_FN(mean_rows), 1, &o);
  for (int64_t rows = 3; rows <= 9; rows += 3) {
    tc_tensor *x = seq(2, (int64_t[]){rows, 5}, 0.5f);
    tc_tensor *got = tc_call(c, &x), *want = mean_rows(x);
    assert_close(got, want);
    tc_release(got);
    tc_release(want);
    tc_release(x);
  }
  cr_assert_eq(stats_of(c).n_compiles, 1, "one symbolic graph serves every size (the mean's count is s0)");
  tc_compiled_free(c);
}

Test(capture, dynamic_off_recompiles_every_size) {
  tc_compile_options o = opts_for("softmax");
  o.dynamic = TC_DYNAMIC_OFF;
  tc_compiled *c = tc_compile(TC_FN(row_softmax), 1, &o);
  for (int64_t rows = 2; rows <= 4; rows++) {
    tc_tensor *x = seq(2, (int64_t[]){rows, 6}, 0.3f);
    tc_tensor *got = tc_call(c, &x), *want = row_softmax(x);
    assert_close(got, want);
    tc_release(got);
    tc_release(want);
    tc_release(x);
  }
  cr_assert_eq(stats_of(c).n_compiles, 3);
  tc_compiled_free(c);
}

Test(capture, dtype_change_recompiles) {
  setenv("TC_LOGS", "recompiles", 1);
  tc_compile_options o = opts_for("softmax");
  tc_compiled *c = tc_compile(TC_FN(row_softmax), 1, &o);
  tc_tensor *x = seq(2, (int64_t[]){4, 6}, 0.3f);
  tc_tensor *x64 = tc_to_dtype(x, TC_F64);
  stderr_capture cap = stderr_begin();
  tc_tensor *a = tc_call(c, &x), *b = tc_call(c, &x64);
  char *log = stderr_end(cap);
  cr_assert_not_null(a, "%s", tc_last_error());
  cr_assert_not_null(b, "%s", tc_last_error());
  cr_assert_eq(tc_dtype_of(b), TC_F64);
  cr_assert_eq(stats_of(c).n_compiles, 2);
  cr_assert(strstr(log, "input 0 dtype == f32, got f64"), "log was: %s", log);
  free(log);
  tc_tensor *want = row_softmax(x64);
  assert_close(b, want);
  tc_release(want);
  tc_release(a);
  tc_release(b);
  tc_release(x);
  tc_release(x64);
  tc_compiled_free(c);
}

Test(capture, captured_global_weights) {
  global_w = seq(2, (int64_t[]){16, 4}, 0.07f);
  tc_compile_options o = opts_for("uses_global");
  tc_compiled *c = tc_compile(TC_FN(uses_global), 1, &o);
  tc_tensor *x = seq(2, (int64_t[]){8, 16}, 0.1f);
  tc_tensor *want = uses_global(x);
  tc_tensor *a = tc_call(c, &x), *b = tc_call(c, &x);
  assert_close(a, want);
  assert_close(b, want);
  cr_assert_eq(stats_of(c).n_compiles, 1);
  char *text = tc_compiled_explain(c, false);
  cr_assert(strstr(text, "captured tensor 0: f32, rank 2, sizes [16, 4] (held by reference)"), "%s", text);
  free(text);
  tc_release(a);
  tc_release(b);
  tc_release(want);
  tc_release(x);
  tc_compiled_free(c);
  tc_release(global_w);
}

Test(capture, returning_an_input_or_a_real_tensor) {
  tc_compile_options o = opts_for("identity");
  tc_compiled *c = tc_compile(TC_FN(returns_input), 1, &o);
  tc_tensor *x = seq(2, (int64_t[]){3, 4}, 1.0f);
  tc_tensor *y = tc_call(c, &x), *y2 = tc_call(c, &x);
  assert_close(y, x);
  assert_close(y2, x);
  cr_assert_eq(stats_of(c).n_compiles, 1);
  tc_release(y);
  tc_release(y2);
  tc_compiled_free(c);

  global_w = seq(1, (int64_t[]){5}, 1.0f);
  o.name = "global";
  c = tc_compile(TC_FN(returns_global), 1, &o);
  y = tc_call(c, &x);
  y2 = tc_call(c, &x);
  assert_close(y, global_w);
  assert_close(y2, global_w);
  tc_release(y);
  tc_release(y2);
  tc_compiled_free(c);
  tc_release(global_w);
  tc_release(x);
}

Test(capture, traced_tensor_used_after_the_call_is_an_error) {
  tc_compile_options o = opts_for("leaks");
  tc_compiled *c = tc_compile(TC_FN(leaks), 1, &o);
  tc_tensor *x = seq(1, (int64_t[]){1}, 1.0f);
  tc_tensor *y = tc_call(c, &x);
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert(isnan(tc_item(leaked)));
  cr_assert(strstr(tc_last_error(), "used after its tc_call returned"), "%s", tc_last_error());
  cr_assert_null(tc_add(leaked, x));
  tc_release(leaked);
  tc_release(y);
  tc_release(x);
  tc_compiled_free(c);
}

/* ---------------------------------------------------------------- graph breaks */
Test(capture, fullgraph_break_names_the_op) {
  tc_compile_options o = opts_for("reads_item");
  o.fullgraph = true;
  tc_compiled *c = tc_compile(TC_FN(reads_item), 1, &o);
  tc_tensor *x = seq(1, (int64_t[]){6}, 1.0f);
  tc_tensor *y = tc_call(c, &x);
  cr_assert_null(y);
  cr_assert(strstr(tc_last_error(), "tc_compile(reads_item): graph break at tc_item with fullgraph=true"), "error: %s",
            tc_last_error());
  cr_assert_eq(stats_of(c).n_entries, 0);
  tc_release(x);
  tc_compiled_free(c);
}

Test(capture, graph_break_splits_and_replays) {
  setenv("TC_LOGS", "graph_breaks", 1);
  tc_compile_options o = opts_for("reads_item");
  tc_compiled *c = tc_compile(TC_FN(reads_item), 1, &o);
  tc_tensor *x = seq(1, (int64_t[]){6}, 1.0f);
  tc_tensor *want = reads_item(x);
  stderr_capture cap = stderr_begin();
  tc_tensor *y = tc_call(c, &x);
  char *log = stderr_end(cap);
  assert_close(y, want);
  cr_assert(strstr(log, "graph break at tc_item"), "log was: %s", log);
  free(log);
  tc_compile_stats st = stats_of(c);
  cr_assert_eq(st.n_graphs, 2);
  cr_assert_eq(st.n_graph_breaks, 1);
  const int compiles = st.n_compiles;
  tc_tensor *y2 = tc_call(c, &x);
  assert_close(y2, want);
  st = stats_of(c);
  cr_assert_eq(st.n_compiles, compiles, "the replay found both graphs compiled (%d -> %d)", compiles, st.n_compiles);
  cr_assert_eq(st.n_entries, 1);
  char *json = tc_compiled_explain(c, true);
  cr_assert(strstr(json, "\"breaks\": [{\"after_graph\": 1, \"op\": \"tc_item\"}]"), "%s", json);
  free(json);
  tc_release(y);
  tc_release(y2);
  tc_release(want);
  tc_release(x);
  tc_compiled_free(c);
}

/* ---------------------------------------------------------------- the eager fallback */
Test(capture, cache_limit_falls_back_to_eager) {
  tc_compile_options o = opts_for("softmax");
  o.dynamic = TC_DYNAMIC_OFF;
  o.cache_size_limit = 2;
  tc_compiled *c = tc_compile(TC_FN(row_softmax), 1, &o);
  stderr_capture cap = stderr_begin();
  for (int64_t rows = 2; rows <= 5; rows++) {
    tc_tensor *x = seq(2, (int64_t[]){rows, 3}, 0.4f);
    tc_tensor *got = tc_call(c, &x), *want = row_softmax(x);
    assert_close(got, want);
    tc_release(got);
    tc_release(want);
    tc_release(x);
  }
  char *log = stderr_end(cap);
  tc_compile_stats st = stats_of(c);
  cr_assert_eq(st.n_entries, 2);
  cr_assert_eq(st.n_compiles, 2);
  cr_assert_eq(st.n_eager_fallbacks, 2);
  const char *w = strstr(log, "WARNING: tc_compile(softmax) hit cache_size_limit");
  cr_assert(w, "log was: %s", log);
  cr_assert_null(strstr(w + 1, "WARNING"), "warned once: %s", log);
  free(log);
  tc_compiled_free(c);
}

/* ---------------------------------------------------------------- simplification */
static tc_node mk(tc_prim p, tc_dtype dt, int rank, const int32_t *shape, int n_in, int32_t *in) {
  tc_node n;
  memset(&n, 0, sizeof n);
  n.prim = p;
  n.out.dtype = dt;
  n.out.rank = rank;
  for (int d = 0; d < rank; d++) n.out.shape[d] = shape[d];
  n.n_in = n_in;
  n.in = in;
  return n;
}

Test(simplify, removes_dead_and_duplicate_nodes) {
  tc_graph g;
  graph_init(&g, "t");
  int32_t sh[2] = {sxtab_const(&g.sx, 4), sxtab_const(&g.sx, 6)};
  tc_vtype xt = {.dtype = TC_F32, .rank = 2, .shape = {sh[0], sh[1]}};
  int32_t x;
  x = graph_add_input(&g, &xt);
  int32_t e1 = graph_add_node(&g, &(tc_node){.prim = TC_PRIM_EXP, .out = xt, .n_in = 1, .in = &x});
  int32_t e2 = graph_add_node(&g, &(tc_node){.prim = TC_PRIM_EXP, .out = xt, .n_in = 1, .in = &x}); /* duplicate */
  int32_t dead = graph_add_node(&g, &(tc_node){.prim = TC_PRIM_NEG, .out = xt, .n_in = 1, .in = &x});
  (void)dead;
  int32_t sum_in[2] = {e1, e2};
  tc_node add = mk(TC_PRIM_ADD, TC_F32, 2, sh, 2, sum_in);
  int32_t s = graph_add_node(&g, &add);
  /* convert to the same dtype, reshape of a reshape back to the same shape, identity permute */
  tc_node cv = mk(TC_PRIM_CONVERT, TC_F32, 2, sh, 1, &s);
  int32_t c1 = graph_add_node(&g, &cv);
  int32_t flat_shape[1] = {sxtab_const(&g.sx, 24)};
  tc_node r1 = mk(TC_PRIM_RESHAPE, TC_F32, 1, flat_shape, 1, &c1);
  int32_t v1 = graph_add_node(&g, &r1);
  tc_node r2 = mk(TC_PRIM_RESHAPE, TC_F32, 2, sh, 1, &v1);
  int32_t v2 = graph_add_node(&g, &r2);
  tc_node pm = mk(TC_PRIM_PERMUTE, TC_F32, 2, sh, 1, &v2);
  pm.n_iattrs = 2;
  pm.iattrs[0] = 0;
  pm.iattrs[1] = 1;
  int32_t v3 = graph_add_node(&g, &pm);
  graph_set_outputs(&g, 1, &v3);
  cr_assert_eq(g.n_nodes, 8);

  tc_graph out;
  int32_t mapped = -1;
  cap_simplify_stats st;
  cr_assert_eq(graph_simplify(&g, &out, &mapped, &st), TC_OK, "%s", tc_last_error());
  cr_assert_eq(out.n_nodes, 2, "exp and add remain (got %d)", out.n_nodes);
  cr_assert_eq(out.nodes[0].prim, TC_PRIM_EXP);
  cr_assert_eq(out.nodes[1].prim, TC_PRIM_ADD);
  cr_assert_eq(out.nodes[1].in[0], out.nodes[1].in[1], "both operands are the one exp");
  cr_assert_eq(mapped, out.n_inputs + 1, "the output is the add");
  cr_assert_eq(st.duplicate, 1);
  cr_assert(st.dead >= 1);
  graph_free(&out);
  graph_free(&g);
}

Test(simplify, folds_constants_and_composes_views) {
  tc_graph g;
  graph_init(&g, "t");
  int32_t sh[3] = {sxtab_const(&g.sx, 2), sxtab_const(&g.sx, 3), sxtab_const(&g.sx, 4)};
  tc_vtype xt = {.dtype = TC_F32, .rank = 3, .shape = {sh[0], sh[1], sh[2]}};
  int32_t x = graph_add_input(&g, &xt);
  tc_node k1 = mk(TC_PRIM_CONSTANT, TC_F32, 3, sh, 0, NULL);
  k1.n_iattrs = 1;
  k1.iattrs[0] = -1;
  k1.fattr = 1.5;
  int32_t c1 = graph_add_node(&g, &k1);
  k1.fattr = 2.0;
  int32_t c2 = graph_add_node(&g, &k1);
  int32_t mi[2] = {c1, c2};
  int32_t prod = graph_add_node(&g, &(tc_node){.prim = TC_PRIM_MUL, .out = xt, .n_in = 2, .in = mi});
  int32_t ai[2] = {x, prod};
  int32_t sum = graph_add_node(&g, &(tc_node){.prim = TC_PRIM_ADD, .out = xt, .n_in = 2, .in = ai});
  /* permute (1,2,0) then (2,0,1) is the identity */
  int32_t psh[3] = {sh[1], sh[2], sh[0]};
  tc_node p1 = mk(TC_PRIM_PERMUTE, TC_F32, 3, psh, 1, &sum);
  p1.n_iattrs = 3;
  p1.iattrs[0] = 1, p1.iattrs[1] = 2, p1.iattrs[2] = 0;
  int32_t v1 = graph_add_node(&g, &p1);
  tc_node p2 = mk(TC_PRIM_PERMUTE, TC_F32, 3, sh, 1, &v1);
  p2.n_iattrs = 3;
  p2.iattrs[0] = 2, p2.iattrs[1] = 0, p2.iattrs[2] = 1;
  int32_t v2 = graph_add_node(&g, &p2);
  graph_set_outputs(&g, 1, &v2);

  tc_graph out;
  int32_t mapped = -1;
  cap_simplify_stats st;
  cr_assert_eq(graph_simplify(&g, &out, &mapped, &st), TC_OK, "%s", tc_last_error());
  cr_assert_eq(out.n_nodes, 2, "a constant 3 and the add remain (got %d)", out.n_nodes);
  cr_assert_eq(out.nodes[0].prim, TC_PRIM_CONSTANT);
  cr_assert_eq(out.nodes[0].fattr, 3.0);
  cr_assert_eq(out.nodes[1].prim, TC_PRIM_ADD);
  cr_assert_eq(mapped, out.n_inputs + 1);
  cr_assert(st.folded >= 1);
  graph_free(&out);
  graph_free(&g);
}

/* ---------------------------------------------------------------- explain */
Test(capture, explain_reports_graphs_and_guards) {
  tc_tensor *in[3];
  mlp_inputs(32, in);
  tc_compile_options o = opts_for("mlp");
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  tc_tensor *y = tc_call(c, in);
  cr_assert_not_null(y, "%s", tc_last_error());
  char *text = tc_compiled_explain(c, false);
  cr_assert(strstr(text, "tc_compile(mlp) on debug-eager: 1 entry, 1 compile"), "%s", text);
  cr_assert(strstr(text, "ops: matmul x1"), "%s", text);
  cr_assert(strstr(text, "input 0: f32, rank 2, sizes [32, 16]"), "%s", text);
  free(text);
  char *json = tc_compiled_explain(c, true);
  cr_assert(json[0] == '{' && strstr(json, "\"n_entries\": 1") && strstr(json, "\"kernels\": "), "%s", json);
  free(json);
  char *dot = tc_compiled_dot(c);
  cr_assert(strstr(dot, "digraph \"mlp: entry 1, graph 1\""), "%s", dot);
  free(dot);
  tc_release(y);
  tc_compiled_free(c);
  release_all(in, 3);
}

/* --dot draws the fused groups: on a kernel backend each prim is filled with the colour of the
 * kernel that computes it, the stored value of each kernel drawn bold, one legend box per kernel. */
Test(capture, dot_colours_prims_by_kernel) {
  tc_tensor *in[3];
  mlp_inputs(8, in);
  tc_compile_options o = opts_for("mlp_groups");
  o.backend = "inductor-cpu";
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  tc_tensor *y = tc_call(c, in);
  cr_assert_not_null(y, "%s", tc_last_error());
  char *dot = tc_compiled_dot(c);
  cr_assert(strstr(dot, "kernel0 [shape=note, style=filled"), "%s", dot);
  cr_assert(strstr(dot, "= matmul\\nf32[8x8]\\nkernel 0"), "the matmul belongs to kernel 0:\n%s", dot);
  cr_assert(strstr(dot, "(stored)\", style=filled"), "%s", dot);
  cr_assert(strstr(dot, "penwidth=2"), "%s", dot);
  free(dot);
  tc_release(y);
  tc_compiled_free(c);
  release_all(in, 3);
}

/* ---------------------------------------------------------------- bad arguments */
Test(capture, bad_arguments) {
  cr_assert_null(tc_compile(NULL, 1, NULL));
  cr_assert(strstr(tc_last_error(), "tc_compile(fn): fn is NULL"), "%s", tc_last_error());
  cr_assert_null(tc_compile(TC_FN(row_softmax), 17, NULL));
  cr_assert(strstr(tc_last_error(), "n_inputs is 17; functions of 0..16 tensor parameters are supported"), "%s",
            tc_last_error());
  tc_compile_options o = opts_for("softmax");
  o.backend = "no-such-backend";
  cr_assert_null(tc_compile(TC_FN(row_softmax), 1, &o));
  cr_assert(strstr(tc_last_error(), "tc_compile(softmax): "), "%s", tc_last_error());
  cr_assert(strstr(tc_last_error(), "no-such-backend"), "%s", tc_last_error());

  o = opts_for("mlp");
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *x = seq(2, (int64_t[]){4, 16}, 1.0f);
  tc_error_clear();
  tc_tensor *too_few[3] = {x, x, NULL};
  cr_assert_null(tc_call(c, too_few));
  cr_assert(strstr(tc_last_error(), "tc_call(mlp): input 2 is NULL (the function takes 3 inputs)"), "%s",
            tc_last_error());
  cr_assert_null(tc_call(c, NULL));
  cr_assert(strstr(tc_last_error(), "inputs is NULL"), "%s", tc_last_error());
  cr_assert_null(tc_call(NULL, &x));
  /* An op error inside the traced function is the call's error. */
  tc_tensor *bad[3] = {x, x, x}; /* 4x16 @ 4x16: inner sizes differ */
  cr_assert_null(tc_call(c, bad));
  cr_assert(strstr(tc_last_error(), "tc_matmul"), "%s", tc_last_error());
  cr_assert_eq(stats_of(c).n_entries, 0, "a failed trace leaves no entry");
  tc_release(x);
  tc_compiled_free(c);
}

/* disable (torch.compile's disable): the wrapper calls the C function eagerly, nothing traced. */
Test(capture, disable_calls_the_function_eagerly) {
  tc_compile_options o = opts_for("disabled");
  o.disable = true;
  tc_compiled *c = tc_compile(TC_FN(row_softmax), 1, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *x = seq(2, (int64_t[]){3, 5}, 0.3f);
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x});
  tc_tensor *want = row_softmax(x);
  assert_close(y, want);
  cr_assert_eq(stats_of(c).n_compiles, 0, "nothing compiled");
  tc_release(y);
  tc_release(want);
  tc_compiled_free(c);
  /* $TC_COMPILE_DISABLE=1 does the same for every compiled function. */
  setenv("TC_COMPILE_DISABLE", "1", 1);
  o.disable = false;
  c = tc_compile(TC_FN(row_softmax), 1, &o);
  y = tc_call(c, (tc_tensor *[]){x});
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert_eq(stats_of(c).n_compiles, 0);
  unsetenv("TC_COMPILE_DISABLE");
  tc_release(y);
  tc_release(x);
  tc_compiled_free(c);
}

/* ---------------------------------------------------------------- the wrapper owns a scope
 * The README's model, written as a user writes it (no tc_scope of its own), called 10,000
 * times through the wrapper, disabled (eager) and compiled: the process's resident memory after
 * the last call is what it was after the first thousand. Before the wrapper's scope, each eager
 * call leaked its intermediates (about 300 bytes of metadata and data per op here). */
static tc_tensor *readme_mlp(tc_tensor *x, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2, tc_tensor *b2) {
  return tc_add(tc_linear(tc_gelu(tc_linear(x, w1, b1)), w2, b2), x);
}

static long resident_kb(void) {
  long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
  if (f) fclose(f);
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

#if defined(__SANITIZE_ADDRESS__)
#define TC_TEST_UNDER_ASAN 1 /* gcc */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_TEST_UNDER_ASAN 1 /* clang */
#endif
#endif

static void calls_hold_flat_memory(bool disable) {
#ifdef TC_TEST_UNDER_ASAN
  /* ASan keeps freed blocks in its quarantine (256 MB): resident size says nothing there; its
   * leak check covers the build instead */
  cr_skip_test("resident memory is not a measure under AddressSanitizer");
#endif
  tc_tensor *in[5] = {seq(2, (int64_t[]){4, 16}, 0.1f), seq(2, (int64_t[]){32, 16}, 0.05f), seq(1, (int64_t[]){32}, 0.2f),
                      seq(2, (int64_t[]){16, 32}, 0.03f), seq(1, (int64_t[]){16}, 0.1f)};
  tc_compile_options o = opts_for(disable ? "readme_mlp_disabled" : "readme_mlp");
  o.disable = disable;
  tc_compiled *c = tc_compile(TC_FN(readme_mlp), 5, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  long before = 0;
  for (int i = 0; i < 10000; i++) {
    if (i == 1000) before = resident_kb();
    tc_tensor *y = tc_call(c, in);
    cr_assert_not_null(y, "call %d: %s", i, tc_last_error());
    tc_release(y);
  }
  long after = resident_kb();
  cr_assert(after - before < 1024, "%s: resident memory grew by %ld kB over 9,000 calls", disable ? "disabled" : "compiled",
            after - before);
  tc_compiled_free(c);
  release_all(in, 5);
}

Test(capture, disabled_wrapper_calls_hold_flat_memory, .timeout = 120) { calls_hold_flat_memory(true); }
Test(capture, compiled_wrapper_calls_hold_flat_memory, .timeout = 120) { calls_hold_flat_memory(false); }

/* compile_async: the first call runs eagerly while a background thread compiles; once it is
 * done, calls run compiled. Every result is the eager one. */
Test(capture, compile_async_first_calls_run_eagerly, .timeout = 120) {
  tc_tensor *in[3];
  mlp_inputs(16, in);
  tc_compile_options o = opts_for("mlp_async");
  o.backend = "inductor-cpu";
  o.compile_async = true;
  tc_compiled *c = tc_compile(TC_FN(mlp), 3, &o);
  tc_tensor *want = mlp(in[0], in[1], in[2]);
  tc_tensor *first = tc_call(c, in);
  cr_assert_not_null(first, "%s", tc_last_error());
  assert_close(first, want);
  tc_compile_stats st = stats_of(c);
  cr_assert_geq(st.n_async_eager_calls, 1, "the first call ran eagerly");
  for (int i = 0; i < 6000 && stats_of(c).compiling; i++) usleep(10000);
  st = stats_of(c);
  cr_assert(!st.compiling, "the background compile did not finish in a minute");
  cr_assert_eq(st.n_compiles, 1, "one compile, in the background (got %d)", st.n_compiles);
  int eager_before = st.n_async_eager_calls;
  tc_tensor *later = tc_call(c, in);
  cr_assert_not_null(later, "%s", tc_last_error());
  assert_close(later, want);
  st = stats_of(c);
  cr_assert_eq(st.n_async_eager_calls, eager_before, "a call after the compile runs compiled");
  cr_assert_eq(st.n_compiles, 1);
  tc_release(first);
  tc_release(later);
  tc_release(want);
  tc_compiled_free(c);
  release_all(in, 3);
}

/* TC_LOGS=perf_hints: a graph break and a recompile over a changed size each come with what to
 * do about them. */
Test(capture, perf_hint_for_a_graph_break) {
  setenv("TC_LOGS", "perf_hints", 1);
  tc_compile_options o = opts_for("reads_item");
  tc_compiled *c = tc_compile(TC_FN(reads_item), 1, &o);
  tc_tensor *x = seq(1, (int64_t[]){6}, 1.0f);
  stderr_capture cap = stderr_begin();
  tc_tensor *y = tc_call(c, &x);
  char *log = stderr_end(cap);
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert(strstr(log, "[tc:perf_hints] reads_item: the graph break at tc_item splits every call"), "log was: %s", log);
  cr_assert(strstr(log, "fullgraph=true"), "log was: %s", log);
  free(log);
  tc_release(y);
  tc_release(x);
  tc_compiled_free(c);
}

Test(capture, perf_hint_for_a_recompile_over_sizes) {
  setenv("TC_LOGS", "perf_hints", 1);
  tc_compile_options s = opts_for("softmax");
  s.dynamic = TC_DYNAMIC_OFF;
  tc_compiled *c = tc_compile(TC_FN(row_softmax), 1, &s);
  tc_tensor *a = seq(2, (int64_t[]){4, 6}, 0.3f), *b = seq(2, (int64_t[]){5, 6}, 0.3f);
  stderr_capture cap = stderr_begin();
  tc_tensor *ya = tc_call(c, &a), *yb = tc_call(c, &b);
  char *log = stderr_end(cap);
  cr_assert_not_null(ya, "%s", tc_last_error());
  cr_assert_not_null(yb, "%s", tc_last_error());
  cr_assert(strstr(log, "[tc:perf_hints] softmax: compiled again (entry 2"), "log was: %s", log);
  cr_assert(strstr(log, "dynamic=TC_DYNAMIC_ON"), "log was: %s", log);
  free(log);
  tc_release(ya);
  tc_release(yb);
  tc_release(a);
  tc_release(b);
  tc_compiled_free(c);
}
