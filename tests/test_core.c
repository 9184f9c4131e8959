/* test_core.c — the core's foundation: size expressions, sizes, dtypes, scopes, tensors and
 * views, host access, graphs and the prim layer (checks and eager runs on debug-eager). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "graph/graph.h"
#include "ops/ops.h"

/* ---------------------------------------------------------------- size expressions */
Test(core_sxtab, consing_and_folding) {
  tc_sxtab t;
  sxtab_init(&t);
  int32_t c64 = sxtab_const(&t, 64), c8 = sxtab_const(&t, 8), s0 = sxtab_sym(&t, 0), s1 = sxtab_sym(&t, 1);
  cr_assert_eq(sxtab_const(&t, 64), c64, "constants are interned");
  cr_assert_eq(sxtab_sym(&t, 0), s0);
  int64_t v;
  cr_assert(sxtab_is_const(&t, sxtab_bin(&t, TC_SX_MUL, c8, c8), &v));
  cr_assert_eq(v, 64);
  cr_assert_eq(sxtab_bin(&t, TC_SX_MUL, c8, c8), c64, "folded constants are the interned ones");
  cr_assert_eq(sxtab_bin(&t, TC_SX_ADD, s0, sxtab_const(&t, 0)), s0, "x + 0");
  cr_assert_eq(sxtab_bin(&t, TC_SX_MUL, sxtab_const(&t, 1), s0), s0, "1 * x");
  cr_assert(sxtab_is_const(&t, sxtab_bin(&t, TC_SX_MUL, s0, sxtab_const(&t, 0)), &v) && v == 0, "x * 0");
  cr_assert_eq(sxtab_bin(&t, TC_SX_FLOORDIV, s0, sxtab_const(&t, 1)), s0, "x // 1");
  cr_assert(sxtab_is_const(&t, sxtab_bin(&t, TC_SX_SUB, s1, s1), &v) && v == 0, "x - x");
  /* Commutative ops are canonical; constant chains collapse. */
  cr_assert_eq(sxtab_bin(&t, TC_SX_ADD, s0, s1), sxtab_bin(&t, TC_SX_ADD, s1, s0));
  int32_t s0x64 = sxtab_bin(&t, TC_SX_MUL, s0, c64);
  cr_assert_eq(sxtab_bin(&t, TC_SX_MUL, c64, s0), s0x64);
  cr_assert_eq(sxtab_bin(&t, TC_SX_MUL, sxtab_bin(&t, TC_SX_MUL, s0, c8), c8), s0x64, "(s0*8)*8 == s0*64");
  cr_assert_eq(sxtab_bin(&t, TC_SX_FLOORDIV, s0x64, c8), sxtab_bin(&t, TC_SX_MUL, s0, c8), "(s0*64)//8 == s0*8");
  int32_t plus = sxtab_bin(&t, TC_SX_ADD, sxtab_bin(&t, TC_SX_ADD, s0, sxtab_const(&t, 3)), sxtab_const(&t, -3));
  cr_assert_eq(plus, s0, "(s0 + 3) - 3 == s0");
  /* Children come before parents. */
  for (int32_t i = 0; i < t.n; i++)
    if (t.nodes[i].op >= TC_SX_ADD) cr_assert(t.nodes[i].a < i && t.nodes[i].b < i);
  sxtab_free(&t);
}

Test(core_sxtab, printing) {
  tc_sxtab t;
  sxtab_init(&t);
  char buf[64];
  int32_t s0 = sxtab_sym(&t, 0), s1 = sxtab_sym(&t, 1);
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_MUL, s0, sxtab_const(&t, 64)), buf, sizeof buf), "s0*64");
  int32_t sum = sxtab_bin(&t, TC_SX_ADD, s0, sxtab_const(&t, 1));
  cr_assert_str_eq(sxtab_str(&t, sum, buf, sizeof buf), "s0 + 1");
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_MUL, sum, s1), buf, sizeof buf), "s1*(s0 + 1)");
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_SUB, s0, sxtab_const(&t, 1)), buf, sizeof buf), "s0 - 1");
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_FLOORDIV, s0, sum), buf, sizeof buf), "s0//(s0 + 1)");
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_MAX, s0, s1), buf, sizeof buf), "max(s0, s1)");
  char tiny[4];
  cr_assert_str_eq(sxtab_str(&t, sxtab_bin(&t, TC_SX_MAX, s0, s1), tiny, sizeof tiny), "max", "truncates safely");
  sxtab_free(&t);
}

Test(core_sxtab, eval) {
  tc_sxtab t;
  sxtab_init(&t);
  int32_t s0 = sxtab_sym(&t, 0), s1 = sxtab_sym(&t, 1);
  int32_t e = sxtab_bin(&t, TC_SX_ADD, sxtab_bin(&t, TC_SX_MUL, s0, s1), sxtab_const(&t, 5));
  int32_t d = sxtab_bin(&t, TC_SX_FLOORDIV, sxtab_const(&t, -7), s1);
  int32_t m = sxtab_bin(&t, TC_SX_MOD, sxtab_const(&t, -7), s1);
  int64_t syms[2] = {6, 4}, vals[64];
  cr_assert_lt(t.n, 64);
  sxtab_eval(&t, syms, vals);
  cr_assert_eq(vals[e], 29);
  cr_assert_eq(vals[d], -2, "floor division rounds down");
  cr_assert_eq(vals[m], 1, "mod takes the divisor's sign");
  sxtab_free(&t);
}

/* ---------------------------------------------------------------- sizes and dtypes */
Test(core_sizes, static_outside_a_trace) {
  cr_assert_null(trace_current());
  tc_sz a = sz_const(6), b = sz_const(4);
  cr_assert(sz_is_static(sz_add(a, b)) && sz_add(a, b).v == 10);
  cr_assert_eq(sz_sub(a, b).v, 2);
  cr_assert_eq(sz_mul(a, b).v, 24);
  cr_assert_eq(sz_floordiv(sz_const(-7), b).v, -2);
  cr_assert_eq(sz_mod(sz_const(-7), b).v, 1);
  cr_assert_eq(sz_max(a, b).v, 6);
  cr_assert_eq(sz_min(a, b).v, 4);
  cr_assert(sz_eq(a, sz_const(6)) && !sz_eq(a, b) && sz_eq_const(b, 4));
  int64_t sizes[3] = {2, 3, 4};
  tc_tensor *x = tc_from_host((float[24]){0}, TC_F32, 3, sizes);
  cr_assert_eq(sz_numel(x).v, 24);
  cr_assert_eq(sz_of(x, 1).v, 3);
  cr_assert_eq(sz_of(x, 1).e, -1);
  tc_release(x);
}

Test(core_dtype, promotion) {
  const tc_dtype all[5] = {TC_BOOL, TC_I32, TC_I64, TC_F32, TC_F64};
  /* Row/column order as `all`; PyTorch's result for two tensors. */
  const tc_dtype want[5][5] = {
      {TC_BOOL, TC_I32, TC_I64, TC_F32, TC_F64}, {TC_I32, TC_I32, TC_I64, TC_F32, TC_F64},
      {TC_I64, TC_I64, TC_I64, TC_F32, TC_F64},  {TC_F32, TC_F32, TC_F32, TC_F32, TC_F64},
      {TC_F64, TC_F64, TC_F64, TC_F64, TC_F64},
  };
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      cr_assert_eq(dtype_promote(all[i], all[j]), want[i][j], "%s + %s", tc_dtype_name(all[i]), tc_dtype_name(all[j]));
  cr_assert(dtype_is_float(TC_F32) && dtype_is_float(TC_F64) && !dtype_is_float(TC_I32));
  cr_assert(dtype_is_int(TC_I32) && dtype_is_int(TC_I64) && !dtype_is_int(TC_BOOL) && !dtype_is_int(TC_F32));
}

/* ---------------------------------------------------------------- tensors and scopes */
static tc_tensor *iota_f32(int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= sizes[i];
  float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
  for (int64_t i = 0; i < n; i++)
    d[i] = (float)i;
  tc_tensor *t = tc_from_f32(d, rank, sizes);
  free(d);
  return t;
}

Test(core_tensor, metadata) {
  int64_t sizes[2] = {3, 4};
  tc_tensor *x = iota_f32(2, sizes);
  cr_assert_eq(tc_rank(x), 2);
  cr_assert_eq(tc_size(x, 0), 3);
  cr_assert_eq(tc_size(x, -1), 4);
  cr_assert_eq(tc_size(x, 2), -1);
  cr_assert(strstr(tc_last_error(), "tc_size: dim 2 out of range for a tensor of rank 2"), "%s", tc_last_error());
  cr_assert_eq(tc_numel(x), 12);
  cr_assert_eq(tc_dtype_of(x), TC_F32);
  cr_assert(tc_is_contiguous(x));
  cr_assert_str_eq(tc_device_of(x), "host");
  cr_assert_eq((uintptr_t)x->storage->host % 64, 0, "host storage is 64-byte aligned");
  cr_assert_eq(tc_retain(x), x);
  cr_assert_eq(x->refcount, 2);
  tc_release(x);
  tc_release(x);
  tc_release(NULL);
  cr_assert_null(tc_retain(NULL));
}

Test(core_scope, releases_and_keeps) {
  int64_t sizes[1] = {4};
  tc_tensor *base = iota_f32(1, sizes);
  tc_storage *st = base->storage;
  cr_assert_eq(st->refcount, 1);
  tc_scope *outer = tc_scope_open();
  tc_tensor *kept = NULL;
  {
    tc_scope *inner = tc_scope_open();
    tc_tensor *a = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
    tc_tensor *b = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
    tc_tensor *c = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
    cr_assert_eq(st->refcount, 4);
    tc_release(b); /* given up early: the scope must skip it */
    cr_assert_eq(st->refcount, 3);
    kept = tc_scope_keep(inner, c);
    cr_assert_eq(kept, c);
    (void)a;
    tc_scope_close(inner);
    cr_assert_eq(st->refcount, 2, "a released by the inner scope, c kept");
    cr_assert_eq(kept->scope, outer, "keep moves the claim to the enclosing scope");
  }
  tc_scope_close(outer);
  cr_assert_eq(st->refcount, 1, "the outer scope releases what the inner one kept");

  /* Keep from the outermost scope hands the reference to the caller. */
  tc_scope *s = tc_scope_open();
  tc_tensor *mine = tc_scope_keep(s, tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0));
  tc_tensor *retained = tc_retain(tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0));
  tc_scope_close(s);
  cr_assert_null(mine->scope);
  cr_assert_eq(st->refcount, 3);
  cr_assert_eq(retained->refcount, 1, "the scope dropped only its own reference");
  tc_release(mine);
  tc_release(retained);
  cr_assert_eq(st->refcount, 1);
  tc_release(base);
}

/* tc_retain then tc_release inside a scope is a no-op: the scope still frees the tensor (it
 * used to give up the scope's claim, and the tensor was never freed). Counted through the
 * storage's refcount, which every view of base holds once. */
Test(core_scope, retain_release_inside_a_scope_is_a_no_op) {
  int64_t sizes[1] = {4};
  tc_tensor *base = iota_f32(1, sizes);
  tc_storage *st = base->storage;
  tc_scope *s = tc_scope_open();
  tc_tensor *t = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
  tc_retain(t);
  tc_release(t);
  cr_assert_eq(t->scope, s, "the scope still holds its claim");
  cr_assert_eq(t->refcount, 1);
  /* Twice over, interleaved: two retains, two releases. */
  tc_retain(t);
  tc_retain(t);
  tc_release(t);
  tc_release(t);
  cr_assert_eq(t->scope, s);
  tc_scope_close(s);
  cr_assert_eq(st->refcount, 1, "the scope freed t");

  /* A retain outlives the scope; the caller's release frees it. */
  s = tc_scope_open();
  t = tc_retain(tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0));
  tc_scope_close(s);
  cr_assert_eq(st->refcount, 2);
  tc_release(t);
  cr_assert_eq(st->refcount, 1);

  /* With no retain outstanding, a release is the creation reference, given up early. */
  s = tc_scope_open();
  t = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
  tc_release(t);
  cr_assert_eq(st->refcount, 1);
  tc_scope_close(s);
  cr_assert_eq(st->refcount, 1, "nothing released twice");
  tc_release(base);
}

/* tc_flip over no dims, and a compiled function returning its input, hand back handles of their
 * own: releasing the operand first never frees what the caller still holds. */
Test(core_scope, identity_results_are_their_own_handles) {
  int64_t sizes[1] = {4};
  tc_tensor *x = iota_f32(1, sizes);
  tc_tensor *y = tc_flip(x, 0, NULL);
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert_neq(y, x);
  tc_release(x);
  float v[4];
  cr_assert_eq(tc_to_host(y, v, sizeof v), TC_OK);
  cr_assert_eq(v[3], 3.0f);
  tc_release(y);
}

Test(core_scope, closing_outer_closes_inner) {
  int64_t sizes[1] = {2};
  tc_tensor *base = iota_f32(1, sizes);
  tc_scope *outer = tc_scope_open();
  tc_scope_open();
  tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
  tc_scope_close(outer);
  cr_assert_eq(base->storage->refcount, 1);
  /* A tensor made after both closed is owned by the caller again. */
  tc_tensor *x = tensor_new_view(base, 1, sizes, (int64_t[]){1}, 0);
  cr_assert_null(x->scope);
  tc_release(x);
  tc_release(base);
}

/* ---------------------------------------------------------------- host access */
Test(core_host, round_trips_every_dtype) {
  int64_t sizes[2] = {2, 3};
  float f[6] = {1, -2, 3.5f, 0, 1e30f, -0.0f};
  double d[6] = {1, -2, 3.5, 0, 1e300, -1e-300};
  int32_t i[6] = {1, -2, 3, INT32_MAX, INT32_MIN, 0};
  int64_t l[6] = {1, -2, 3, INT64_MAX, INT64_MIN, 0};
  uint8_t b[6] = {1, 0, 7, 0, 1, 1};
  const void *src[5] = {f, d, i, l, b};
  const tc_dtype dt[5] = {TC_F32, TC_F64, TC_I32, TC_I64, TC_BOOL};
  for (int k = 0; k < 5; k++) {
    tc_tensor *t = tc_from_host(src[k], dt[k], 2, sizes);
    cr_assert_not_null(t, "%s", tc_last_error());
    uint8_t out[48];
    size_t bytes = 6 * tc_dtype_size(dt[k]);
    cr_assert_eq(tc_to_host(t, out, bytes), TC_OK);
    if (dt[k] == TC_BOOL) {
      const uint8_t want[6] = {1, 0, 1, 0, 1, 1};
      cr_assert_arr_eq(out, want, 6, "bool is stored as 0/1");
    } else {
      cr_assert_arr_eq(out, src[k], bytes);
    }
    tc_release(t);
  }
  tc_tensor *s = tc_from_host((double[]){2.5}, TC_F64, 0, NULL);
  cr_assert_eq(tc_rank(s), 0);
  cr_assert_eq(tc_item(s), 2.5);
  tc_release(s);
}

Test(core_host, strided_views) {
  int64_t sizes[3] = {2, 3, 4};
  tc_tensor *x = iota_f32(3, sizes);
  /* x.permute(2, 0, 1)[1:4:2, :, 1:] */
  tc_tensor *p = tensor_new_view(x, 3, (int64_t[]){4, 2, 3}, (int64_t[]){1, 12, 4}, 0);
  tc_tensor *v = tensor_new_view(p, 3, (int64_t[]){2, 2, 2}, (int64_t[]){2, 12, 4}, 1 + 4);
  cr_assert_not(tc_is_contiguous(v));
  float out[8];
  cr_assert_eq(tc_to_host(v, out, sizeof out), TC_OK);
  const float want[8] = {5, 9, 17, 21, 7, 11, 19, 23};
  cr_assert_arr_eq(out, want, sizeof want);
  /* Broadcast (stride 0). */
  tc_tensor *bc = tensor_new_view(x, 2, (int64_t[]){3, 2}, (int64_t[]){0, 1}, 2);
  float out2[6];
  cr_assert_eq(tc_to_host(bc, out2, sizeof out2), TC_OK);
  const float want2[6] = {2, 3, 2, 3, 2, 3};
  cr_assert_arr_eq(out2, want2, sizeof want2);
  tc_tensor *one = tensor_new_view(x, 1, (int64_t[]){1}, (int64_t[]){1}, 23);
  cr_assert_eq(tc_item(one), 23.0);
  tc_release(one);
  tc_release(bc);
  tc_release(v);
  tc_release(p);
  tc_release(x);
}

Test(core_host, errors) {
  int64_t sizes[2] = {2, 3};
  tc_tensor *x = iota_f32(2, sizes);
  float out[6];
  cr_assert_eq(tc_to_host(x, out, 5 * sizeof(float)), TC_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tc_last_error(), "tc_to_host: 20 bytes given, the f32 tensor of shape 2x3 needs 24");
  cr_assert(isnan(tc_item(x)));
  cr_assert_str_eq(tc_last_error(), "tc_item: tensor has 6 elements (shape 2x3), expected 1");
  cr_assert_null(tc_from_host(out, TC_F32, 9, (int64_t[9]){1, 1, 1, 1, 1, 1, 1, 1, 1}));
  cr_assert(strstr(tc_last_error(), "rank 9"), "%s", tc_last_error());
  cr_assert_null(tc_from_host(out, TC_F32, 1, (int64_t[]){-1}));
  cr_assert(strstr(tc_last_error(), "negative"), "%s", tc_last_error());
  cr_assert_null(tc_from_host(out, TC_F16, 1, (int64_t[]){1}));
  /* A NULL tensor keeps the earlier error. */
  tc_error_clear();
  core_error(TC_ERR_INVALID_ARGUMENT, "first failure");
  cr_assert_eq(tc_to_host(NULL, out, sizeof out), TC_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tc_last_error(), "first failure");
  tc_release(x);
}

/* ---------------------------------------------------------------- graphs */
static void build_graph(tc_graph *g) {
  graph_init(g, "mlp");
  int32_t s0 = sxtab_sym(&g->sx, 0), c64 = sxtab_const(&g->sx, 64);
  g->n_syms = 1;
  tc_vtype in = {.dtype = TC_F32, .rank = 2, .shape = {s0, c64}};
  int32_t a = graph_add_input(g, &in), b = graph_add_input(g, &in);
  tc_node add = {.prim = TC_PRIM_ADD, .out = in, .n_in = 2, .in = (int32_t[]){a, b}};
  int32_t v = graph_add_node(g, &add);
  tc_node red = {.prim = TC_PRIM_REDUCE_SUM,
                 .out = {.dtype = TC_F32, .rank = 1, .shape = {s0}},
                 .n_in = 1,
                 .in = (int32_t[]){v},
                 .n_iattrs = 1,
                 .iattrs = {1}};
  int32_t r = graph_add_node(g, &red);
  tc_node k = {.prim = TC_PRIM_CONSTANT,
               .out = {.dtype = TC_F32, .rank = 1, .shape = {s0}},
               .n_iattrs = 1,
               .iattrs = {-1},
               .fattr = 0.5};
  int32_t c = graph_add_node(g, &k);
  graph_set_outputs(g, 2, (int32_t[]){r, c});
}

Test(core_graph, build_print_hash) {
  tc_graph g;
  build_graph(&g);
  cr_assert_eq(g.n_inputs, 2);
  cr_assert_eq(g.n_nodes, 3);
  cr_assert_eq(graph_value_type(&g, 3)->rank, 1);
  cr_assert_null(graph_value_node(&g, 1));
  cr_assert_eq(graph_value_node(&g, 2)->prim, TC_PRIM_ADD);
  cr_assert_null(graph_value_type(&g, 5));
  tc_vtype late = {.dtype = TC_F32};
  cr_assert_eq(graph_add_input(&g, &late), -1, "inputs come before nodes");
  char *text = graph_to_string(&g);
  cr_assert_str_eq(text, "graph mlp(v0: f32[s0x64], v1: f32[s0x64]) syms(s0) {\n"
                         "  v2 = add(v0, v1) : f32[s0x64]\n"
                         "  v3 = reduce_sum(v2, dims=[1]) : f32[s0]\n"
                         "  v4 = constant(value=0.5) : f32[s0]\n"
                         "  return v3, v4\n"
                         "}\n");
  free(text);
  tc_graph h;
  build_graph(&h);
  cr_assert_eq(graph_hash(&g), graph_hash(&h), "equal structure, equal hash");
  h.nodes[2].fattr = 0.25;
  cr_assert_neq(graph_hash(&g), graph_hash(&h));
  graph_free(&h);
  graph_free(&g);
}

Test(core_graph, desc) {
  tc_graph g;
  build_graph(&g);
  tc_graph_desc d;
  tc_graph_desc_storage *st;
  cr_assert_eq(graph_to_desc(&g, &d, &st), TC_OK);
  cr_assert_eq(d.struct_size, sizeof d);
  cr_assert_str_eq(d.name, "mlp");
  cr_assert_eq(d.n_inputs, 2);
  cr_assert_eq(d.n_nodes, 3);
  cr_assert_eq(d.n_syms, 1);
  cr_assert_eq(d.n_outputs, 2);
  cr_assert_eq(d.expr_size, sizeof(tc_size_expr));
  cr_assert_eq(d.input_size, sizeof(tc_value_type));
  cr_assert_eq(d.node_size, sizeof(tc_prim_node));
  for (int i = 0; i < d.n_exprs; i++)
    cr_assert_eq(tck_graph_expr(&d, i)->struct_size, sizeof(tc_size_expr));
  for (int i = 0; i < d.n_inputs; i++)
    cr_assert_eq(tck_graph_input(&d, i)->struct_size, sizeof(tc_value_type));
  for (int i = 0; i < d.n_nodes; i++) {
    const tc_prim_node *n = tck_graph_node(&d, i);
    cr_assert_eq(n->struct_size, sizeof(tc_prim_node));
    cr_assert_eq(n->out->struct_size, sizeof(tc_value_type));
    cr_assert_eq(n->out->shape, g.nodes[i].out.shape, "shapes are borrowed from the graph");
  }
  char err[256];
  cr_assert_eq(tck_graph_validate(&d, err, sizeof err), TC_OK, "%s", err);
  const tc_prim_node *red = tck_graph_node(&d, 1);
  cr_assert_eq(red->prim, TC_PRIM_REDUCE_SUM);
  cr_assert_eq(red->inputs[0], 2);
  cr_assert_eq(red->iattrs[0], 1);
  cr_assert_eq(d.outputs[1], 4);
  graph_desc_free(st);
  graph_free(&g);
}

Test(core_graph, prim_names) {
  cr_assert_str_eq(prim_name(TC_PRIM_BROADCAST_IN_DIM), "broadcast_in_dim");
  cr_assert_str_eq(prim_name(TC_PRIM_MATMUL), "matmul");
  cr_assert_str_eq(prim_name(0), "?");
  int named = 0;
  for (int p = 0; p <= TC_PRIM_LAST_; p++)
    named += strcmp(prim_name(p), "?") != 0;
  cr_assert_eq(named, 55, "every prim id of tc_plugin.h has a name");
}

/* ---------------------------------------------------------------- prim checks */
static tc_tensor *zeros(tc_dtype dt, int rank, const int64_t *sizes) {
  static const uint8_t z[4096];
  return tc_from_host(z, dt, rank, sizes);
}

Test(core_prims, error_messages) {
  tc_tensor *a = zeros(TC_F32, 2, (int64_t[]){8, 64});
  tc_tensor *b = zeros(TC_F32, 2, (int64_t[]){8, 32});
  tc_tensor *i = zeros(TC_I64, 2, (int64_t[]){8, 64});
  tc_tensor *w = zeros(TC_F32, 2, (int64_t[]){32, 16});
  cr_assert_null(prim_binary(TC_PRIM_ADD, a, b));
  cr_assert_str_eq(tc_last_error(), "prim add: shapes differ (a: 8x64, b: 8x32)");
  cr_assert_null(prim_binary(TC_PRIM_ADD, a, i));
  cr_assert_str_eq(tc_last_error(), "prim add: dtypes differ (a: f32, b: i64)");
  cr_assert_null(prim_unary(TC_PRIM_EXP, i));
  cr_assert_str_eq(tc_last_error(), "prim exp: dtype i64 not supported (floats only)");
  cr_assert_null(prim_unary(TC_PRIM_LOGICAL_NOT, a));
  cr_assert_str_eq(tc_last_error(), "prim logical_not: dtype f32 not supported (bool only)");
  cr_assert_null(prim_matmul(a, w));
  cr_assert_str_eq(tc_last_error(), "prim matmul: inner sizes differ (a: 8x64, b: 32x16)");
  cr_assert_null(prim_where(a, a, a));
  cr_assert_str_eq(tc_last_error(), "prim where: cond: dtype f32 not supported (bool only)");
  cr_assert_null(prim_reduce(TC_PRIM_REDUCE_SUM, a, 2, (int[]){1, -1}));
  cr_assert_str_eq(tc_last_error(), "prim reduce_sum: dim 1 listed twice");
  cr_assert_null(prim_reduce(TC_PRIM_REDUCE_SUM, a, 1, (int[]){2}));
  cr_assert_str_eq(tc_last_error(), "prim reduce_sum: dim 2 out of range for a tensor of rank 2");
  cr_assert_null(prim_reshape(a, 2, (tc_sz[]){{8, -1}, {32, -1}}));
  cr_assert_str_eq(tc_last_error(), "prim reshape: element counts differ (x: 8x64 has 512, shape 8x32 has 256)");
  cr_assert_null(prim_broadcast_in_dim(b, 2, (tc_sz[]){{8, -1}, {64, -1}}, (int[]){0, 1}));
  cr_assert(strstr(tc_last_error(), "prim broadcast_in_dim: x's dim 1 (size 32) is neither 1 nor the result's size 64"),
            "%s", tc_last_error());
  cr_assert_null(prim_permute(a, (int[]){0, 0}));
  cr_assert_str_eq(tc_last_error(), "prim permute: dim 0 appears twice in perm (x: 8x64)");
  cr_assert_null(prim_slice(a, (int64_t[]){0, 60}, (int64_t[]){1, 2}, (tc_sz[]){{8, -1}, {3, -1}}));
  cr_assert(strstr(tc_last_error(), "prim slice: dim 1: 3 elements from 60 by 2 run past size 64"), "%s",
            tc_last_error());
  cr_assert_null(prim_gather(a, 1, b, GRAPH_INDEX_PRIM));
  cr_assert_str_eq(tc_last_error(), "prim gather: index: dtype f32 not supported (i32 or i64 only)");
  cr_assert_null(prim_random(1, 0, TC_I32, 1, (tc_sz[]){{4, -1}}));
  cr_assert_str_eq(tc_last_error(), "prim random: dtype i32 not supported (f32 or f64 only)");
  cr_assert_null(prim_concatenate(2, (tc_tensor *[]){a, w}, 0));
  cr_assert_str_eq(tc_last_error(), "prim concatenate: shapes differ outside dim 0 (xs[0]: 8x64, xs[1]: 32x16)");
  /* NULL operands pass the earlier error through untouched. */
  core_error(TC_ERR_INVALID_ARGUMENT, "earlier");
  cr_assert_null(prim_binary(TC_PRIM_ADD, NULL, a));
  cr_assert_null(prim_unary(TC_PRIM_NEG, NULL));
  cr_assert_str_eq(tc_last_error(), "earlier");
  tc_release(a);
  tc_release(b);
  tc_release(i);
  tc_release(w);
}

/* ---------------------------------------------------------------- eager views */
Test(core_prims, views_share_storage) {
  int64_t sizes[2] = {3, 4};
  tc_tensor *x = iota_f32(2, sizes);
  tc_tensor *t = prim_permute(x, (int[]){1, 0});
  cr_assert_not_null(t, "%s", tc_last_error());
  cr_assert_eq(t->storage, x->storage);
  float out[12];
  cr_assert_eq(tc_to_host(t, out, sizeof out), TC_OK);
  const float want_t[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
  cr_assert_arr_eq(out, want_t, sizeof want_t);

  tc_tensor *s = prim_slice(x, (int64_t[]){1, 1}, (int64_t[]){1, 2}, (tc_sz[]){{2, -1}, {2, -1}});
  cr_assert_eq(s->storage, x->storage);
  float o4[4];
  cr_assert_eq(tc_to_host(s, o4, sizeof o4), TC_OK);
  cr_assert_arr_eq(o4, ((float[]){5, 7, 9, 11}), sizeof o4);

  tc_tensor *row = prim_slice(x, (int64_t[]){2, 0}, (int64_t[]){1, 1}, (tc_sz[]){{1, -1}, {4, -1}});
  tc_tensor *b = prim_broadcast_in_dim(row, 3, (tc_sz[]){{2, -1}, {3, -1}, {4, -1}}, (int[]){1, 2});
  cr_assert_eq(b->storage, x->storage);
  cr_assert_eq(b->strides[0], 0);
  cr_assert_eq(b->strides[1], 0);
  float o24[24];
  cr_assert_eq(tc_to_host(b, o24, sizeof o24), TC_OK);
  for (int i = 0; i < 24; i++)
    cr_assert_eq(o24[i], 8 + i % 4);

  tc_tensor *r = prim_reshape(x, 3, (tc_sz[]){{3, -1}, {2, -1}, {2, -1}});
  cr_assert_eq(r->storage, x->storage, "reshape of a contiguous tensor is a view");
  tc_tensor *rs = prim_reshape(s, 1, (tc_sz[]){{4, -1}});
  cr_assert_not_null(rs, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(rs, o4, sizeof o4), TC_OK);
  cr_assert_arr_eq(o4, ((float[]){5, 7, 9, 11}), sizeof o4);
  cr_assert_eq(rs->storage, x->storage, "a slice whose rows stay evenly spaced flattens as a view");
  tc_tensor *flat = prim_reshape(t, 1, (tc_sz[]){{12, -1}});
  cr_assert_not_null(flat, "%s", tc_last_error());
  cr_assert_neq(flat->storage, x->storage, "a transpose cannot be flattened in place: copied");
  cr_assert_eq(tc_to_host(flat, out, sizeof out), TC_OK);
  cr_assert_arr_eq(out, want_t, sizeof want_t);
  tc_release(flat);
  tc_release(rs);
  tc_release(r);
  tc_release(b);
  tc_release(row);
  tc_release(s);
  tc_release(t);
  tc_release(x);
}

/* ---------------------------------------------------------------- eager execution (debug-eager) */
Test(core_eager, elementwise_and_reduce) {
  int64_t sizes[2] = {2, 3};
  tc_scope *sc = tc_scope_open();
  tc_tensor *x = iota_f32(2, sizes);
  tc_tensor *xt = prim_permute(prim_reshape(x, 2, (tc_sz[]){{3, -1}, {2, -1}}), (int[]){1, 0}); /* strided */
  tc_tensor *y = prim_binary(TC_PRIM_ADD, x, xt);
  cr_assert_not_null(y, "%s", tc_last_error());
  float out[6];
  cr_assert_eq(tc_to_host(y, out, sizeof out), TC_OK);
  cr_assert_arr_eq(out, ((float[]){0, 3, 6, 4, 7, 10}), sizeof out);
  tc_tensor *s = prim_reduce(TC_PRIM_REDUCE_SUM, y, 1, (int[]){1});
  cr_assert_not_null(s, "%s", tc_last_error());
  float o2[2];
  cr_assert_eq(tc_to_host(s, o2, sizeof o2), TC_OK);
  cr_assert_arr_eq(o2, ((float[]){9, 21}), sizeof o2);
  tc_tensor *m = prim_argreduce(TC_PRIM_ARGMAX, y, 1);
  cr_assert_eq(tc_dtype_of(m), TC_I64);
  int64_t am[2];
  cr_assert_eq(tc_to_host(m, am, sizeof am), TC_OK);
  cr_assert(am[0] == 2 && am[1] == 2);
  tc_tensor *c =
      prim_convert(prim_binary(TC_PRIM_GT, y, prim_constant(5, TC_F32, 2, (tc_sz[]){{2, -1}, {3, -1}})), TC_I32);
  int32_t ci[6];
  cr_assert_eq(tc_to_host(c, ci, sizeof ci), TC_OK);
  cr_assert_arr_eq(ci, ((int32_t[]){0, 0, 1, 0, 1, 1}), sizeof ci);
  tc_tensor *k = prim_constant(2.5, TC_F64, 0, NULL);
  cr_assert_eq(tc_item(k), 2.5);
  tc_tensor *io = prim_iota(TC_I64, 2, (tc_sz[]){{2, -1}, {3, -1}}, 1);
  int64_t iv[6];
  cr_assert_eq(tc_to_host(io, iv, sizeof iv), TC_OK);
  cr_assert_arr_eq(iv, ((int64_t[]){0, 1, 2, 0, 1, 2}), sizeof iv);
  tc_scope_close(sc);
}

Test(core_eager, matmul_pad_concat_random) {
  tc_scope *sc = tc_scope_open();
  tc_tensor *a = tc_from_f32((float[]){1, 2, 3, 4, 5, 6}, 2, (int64_t[]){2, 3});
  tc_tensor *b = tc_from_f32((float[]){1, 0, 0, 1, 1, 1}, 2, (int64_t[]){3, 2});
  tc_tensor *p = prim_matmul(a, b);
  cr_assert_not_null(p, "%s", tc_last_error());
  float o4[4];
  cr_assert_eq(tc_to_host(p, o4, sizeof o4), TC_OK);
  cr_assert_arr_eq(o4, ((float[]){4, 5, 10, 11}), sizeof o4);
  tc_tensor *pd = prim_pad(a, (int64_t[]){0, 1}, (int64_t[]){1, 0}, -1);
  cr_assert_eq(tc_size(pd, 0), 3);
  cr_assert_eq(tc_size(pd, 1), 4);
  float o12[12];
  cr_assert_eq(tc_to_host(pd, o12, sizeof o12), TC_OK);
  cr_assert_arr_eq(o12, ((float[]){-1, 1, 2, 3, -1, 4, 5, 6, -1, -1, -1, -1}), sizeof o12);
  tc_tensor *cat = prim_concatenate(2, (tc_tensor *[]){a, a}, 1);
  cr_assert_eq(tc_size(cat, 1), 6);
  tc_tensor *r = prim_random(42, 0, TC_F32, 1, (tc_sz[]){{1000, -1}});
  float rv[1000];
  cr_assert_eq(tc_to_host(r, rv, sizeof rv), TC_OK);
  double mean = 0;
  for (int i = 0; i < 1000; i++) {
    cr_assert(rv[i] >= 0 && rv[i] < 1);
    mean += rv[i] / 1000.0;
  }
  cr_assert(mean > 0.45 && mean < 0.55, "mean %f", mean);
  tc_scope_close(sc);
}

/* ---------------------------------------------------------------- device storage
 * An in-process backend with its own memory: buffers are malloc'd blocks the host may only
 * reach through buffer_read / buffer_write. */
typedef struct fake_buf {
  size_t bytes;
  unsigned char data[];
} fake_buf;
static int fake_live_buffers;

static const tc_device_desc fake_device = {sizeof(tc_device_desc), "fake device", TC_DEVICE_OTHER, 0};

static tc_error *fake_probe(tc_probe_args *a) {
  a->available = true;
  a->n_devices = 1;
  a->devices = &fake_device;
  a->device_size = sizeof fake_device;
  return NULL;
}
static tc_error *fake_init(tc_init_args *a) {
  a->ctx = (tc_plugin_ctx *)&fake_live_buffers;
  return NULL;
}
static void fake_release(const tc_release_args *a) { (void)a; }
static tc_error *fake_alloc(tc_buffer_alloc_args *a) {
  fake_buf *b = malloc(sizeof *b + a->bytes);
  if (!b) return NULL;
  b->bytes = a->bytes;
  memset(b->data, 0xAB, a->bytes);
  fake_live_buffers++;
  a->buffer = (tc_buffer *)b;
  return NULL;
}
static void fake_free(const tc_buffer_free_args *a) {
  fake_live_buffers--;
  free(a->buffer);
}
static const tc_host_api *fake_host;
static tc_error *fake_write(const tc_buffer_copy_args *a) {
  fake_buf *b = (fake_buf *)a->buffer;
  if (a->offset + a->bytes > b->bytes) return fake_host->error_new(fake_host->host_ctx, TC_ERR_INVALID_ARGUMENT, "out of bounds");
  memcpy(b->data + a->offset, a->host, a->bytes);
  return NULL;
}
static tc_error *fake_read(const tc_buffer_copy_args *a) {
  fake_buf *b = (fake_buf *)a->buffer;
  if (a->offset + a->bytes > b->bytes) return fake_host->error_new(fake_host->host_ctx, TC_ERR_INVALID_ARGUMENT, "out of bounds");
  memcpy(a->host, b->data + a->offset, a->bytes);
  return NULL;
}
static tc_error *fake_compile(tc_compile_args *a) {
  (void)a;
  return fake_host->error_new(fake_host->host_ctx, TC_ERR_UNSUPPORTED, "fakedev: compiles nothing");
}
static tc_error *fake_run(const tc_run_graph_args *a) {
  (void)a;
  return fake_host->error_new(fake_host->host_ctx, TC_ERR_UNSUPPORTED, "fakedev: runs nothing");
}
static tc_error *fake_sync(const tc_queue_args *a) {
  (void)a;
  return NULL;
}
static void fake_exe_free(const tc_executable_free_args *a) { (void)a; }

static tc_error *fake_query(tc_query_args *q) {
  fake_host = q->host;
  tc_plugin_api a = {.struct_size = sizeof a,
                     .abi_major = TC_ABI_MAJOR,
                     .abi_minor = TC_ABI_MINOR,
                     .name = "fakedev",
                     .version = "1",
                     .description = "test device",
                     .handoff = TC_HANDOFF_GRAPH,
                     .memory = TC_MEMORY_DEVICE,
                     .option_prefix = "fakedev",
                     .probe = fake_probe,
                     .init = fake_init,
                     .release = fake_release,
                     .compile = fake_compile,
                     .executable_free = fake_exe_free,
                     .synchronize = fake_sync,
                     .run_graph = fake_run,
                     .buffer_alloc = fake_alloc,
                     .buffer_free = fake_free,
                     .buffer_write = fake_write,
                     .buffer_read = fake_read};
  if (q->table_size < sizeof a) a.struct_size = q->table_size;
  memcpy(q->table, &a, a.struct_size);
  return NULL;
}

Test(core_device, round_trip_views_and_eager_inputs) {
  cr_assert_eq(tc_backend_register(fake_query), TC_OK, "%s", tc_last_error());
  int64_t sizes[2] = {3, 4};
  tc_tensor *x = iota_f32(2, sizes);
  tc_tensor *d = tc_to_device(x, "fakedev");
  cr_assert_not_null(d, "%s", tc_last_error());
  cr_assert_str_eq(tc_device_of(d), "fakedev");
  cr_assert_null(tensor_host_data(d));
  cr_assert_eq(fake_live_buffers, 1);
  float out[12];
  cr_assert_eq(tc_to_host(d, out, sizeof out), TC_OK);
  for (int i = 0; i < 12; i++)
    cr_assert_eq(out[i], (float)i);
  /* A strided view of device storage reads back correctly. */
  tc_tensor *t = prim_permute(d, (int[]){1, 0});
  cr_assert_eq(t->storage, d->storage);
  cr_assert_str_eq(tc_device_of(t), "fakedev");
  cr_assert_eq(tc_to_host(t, out, sizeof out), TC_OK);
  const float want_t[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
  cr_assert_arr_eq(out, want_t, sizeof want_t);
  tc_tensor *s = prim_slice(d, (int64_t[]){2, 1}, (int64_t[]){1, 1}, (tc_sz[]){{1, -1}, {1, -1}});
  cr_assert_eq(tc_item(s), 9.0);
  /* Eager prims read device operands back to host memory first. */
  tc_tensor *xt = prim_permute(x, (int[]){1, 0});
  tc_tensor *y = prim_binary(TC_PRIM_ADD, t, xt);
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert_str_eq(tc_device_of(y), "host");
  cr_assert_eq(tc_to_host(y, out, sizeof out), TC_OK);
  for (int i = 0; i < 12; i++)
    cr_assert_eq(out[i], 2 * want_t[i]);
  /* Back to host, and device to the same device shares the buffer. */
  tc_tensor *h = tc_to_device(t, "host");
  cr_assert_str_eq(tc_device_of(h), "host");
  cr_assert(tc_is_contiguous(h));
  cr_assert_eq(tc_to_host(h, out, sizeof out), TC_OK);
  cr_assert_arr_eq(out, want_t, sizeof want_t);
  tc_tensor *same = tc_to_device(d, "fakedev");
  cr_assert_eq(same->storage, d->storage);
  tc_tensor *d2 = tc_to_device(h, "fakedev"); /* host -> device again: a new buffer */
  cr_assert_eq(fake_live_buffers, 2);
  cr_assert_eq(tc_to_host(d2, out, sizeof out), TC_OK);
  cr_assert_arr_eq(out, want_t, sizeof want_t);
  cr_assert_null(tc_to_device(x, "no-such-backend"));
  tc_release(d2);
  tc_release(same);
  tc_release(h);
  tc_release(y);
  tc_release(xt);
  tc_release(s);
  tc_release(t);
  tc_release(d);
  cr_assert_eq(fake_live_buffers, 0, "device buffers are freed with their last tensor");
  tc_release(x);
}

/* ---------------------------------------------------------------- prims while tracing
 * Shapes computed with the tc_sz helpers stay symbolic: one compile serves every batch size. */
static tc_tensor *flatten_double(tc_tensor *x) {
  tc_sz n = sz_mul(sz_of(x, 0), sz_of(x, 1));
  tc_tensor *f = prim_reshape(x, 1, &n);
  tc_tensor *y = prim_binary(TC_PRIM_ADD, f, f);
  tc_release(f);
  return y;
}

Test(core_trace, symbolic_shapes_through_prims) {
  tc_compile_options o = {
      .struct_size = sizeof o, .backend = "debug-eager", .name = "flatten_double", .dynamic = TC_DYNAMIC_ON};
  tc_compiled *c = tc_compile(TC_FN(flatten_double), 1, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  for (int64_t b = 2; b <= 3; b++) {
    tc_tensor *x = iota_f32(2, (int64_t[]){b, 4});
    tc_tensor *y = tc_call(c, (tc_tensor *[]){x});
    cr_assert_not_null(y, "%s", tc_last_error());
    cr_assert_eq(tc_rank(y), 1);
    cr_assert_eq(tc_size(y, 0), 4 * b);
    float out[12];
    cr_assert_eq(tc_to_host(y, out, (size_t)(4 * b) * sizeof(float)), TC_OK);
    for (int i = 0; i < 4 * b; i++)
      cr_assert_eq(out[i], 2.0f * (float)i);
    tc_release(y);
    tc_release(x);
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  cr_assert_eq(st.n_compiles, 1, "dynamic batch: one compile");
  char *text = tc_compiled_explain(c, false);
  cr_assert(strstr(text, "f32[s0*s1]"), "%s", text);
  free(text);
  tc_compiled_free(c);
}

Test(core_scope, queries_on_null_name_themselves) {
  tc_error_clear();
  cr_assert_eq(tc_rank(NULL), -1);
  cr_assert_str_eq(tc_last_error(), "tc_rank: tensor is NULL");
  tc_error_clear();
  cr_assert_null(tc_device_of(NULL));
  cr_assert_str_eq(tc_last_error(), "tc_device_of: tensor is NULL");
  /* An earlier failure's message is kept: it usually made the NULL. */
  tc_tensor *z = tc_zeros(TC_F32, 1, (int64_t[]){4});
  cr_assert_null(tc_reshape(z, 1, (int64_t[]){5}));
  tc_release(z);
  char before[256];
  snprintf(before, sizeof before, "%s", tc_last_error());
  cr_assert_eq(tc_numel(NULL), -1);
  cr_assert_str_eq(tc_last_error(), before);
}
