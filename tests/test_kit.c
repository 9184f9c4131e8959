/* test_kit.c — the plugin kit: strings, names, SHA-256, the size-expression emitter, the
 * validator, options, the disk cache and the test host. Links only tc_kit (no libtc). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tc_kit.h"

/* ---------------------------------------------------------------- strings and names */
Test(kit_str, grows_and_takes) {
  tck_str s = {0};
  for (int i = 0; i < 1000; i++) tck_str_printf(&s, "%d,", i % 10);
  tck_str_indent(&s, 2);
  tck_str_puts(&s, "end");
  tck_str_putn(&s, "xyz", 2);
  cr_assert_eq(s.len, 2000 + 4 + 3 + 2);
  char *t = tck_str_take(&s);
  cr_assert_str_eq(t + 1996, "8,9,    endxy");
  cr_assert_null(s.data);
  free(t);
  t = tck_str_take(&s); /* empty: "" not NULL */
  cr_assert_str_eq(t, "");
  free(t);
  tck_str big = {0};
  char line[700];
  memset(line, 'a', sizeof line - 1);
  line[sizeof line - 1] = 0;
  tck_str_printf(&big, "<%s>", line); /* longer than the formatter's small buffer */
  cr_assert_eq(big.len, sizeof line + 1);
  tck_str_free(&big);
}

Test(kit_names, dtypes_prims_status) {
  cr_assert_str_eq(tck_dtype_name(TC_F32), "f32");
  cr_assert_str_eq(tck_dtype_name(TC_BOOL), "bool");
  cr_assert_str_eq(tck_dtype_name(99), "dtype?");
  cr_assert_eq(tck_dtype_size(TC_F64), 8);
  cr_assert_eq(tck_dtype_size(TC_BOOL), 1);
  cr_assert_eq(tck_dtype_size(-1), 0);
  cr_assert(tck_dtype_is_float(TC_F32) && !tck_dtype_is_float(TC_I32));
  cr_assert(tck_dtype_is_int(TC_I64) && !tck_dtype_is_int(TC_BOOL));
  cr_assert_str_eq(tck_prim_name(TC_PRIM_REDUCE_SUM), "reduce_sum");
  cr_assert_str_eq(tck_prim_name(TC_PRIM_BROADCAST_IN_DIM), "broadcast_in_dim");
  cr_assert_str_eq(tck_prim_name(TC_PRIM_MATMUL), "matmul");
  cr_assert_str_eq(tck_prim_name(31), "prim?");
  cr_assert_str_eq(tck_status_name(TC_ERR_INVALID_ARGUMENT), "invalid argument");
}

Test(kit_names, identities) {
  cr_assert_eq(tck_reduce_identity_f(TC_PRIM_REDUCE_SUM, TC_F32), 0.0);
  cr_assert_eq(tck_reduce_identity_f(TC_PRIM_REDUCE_PROD, TC_F64), 1.0);
  cr_assert(isinf(tck_reduce_identity_f(TC_PRIM_REDUCE_MAX, TC_F32)) && tck_reduce_identity_f(TC_PRIM_REDUCE_MAX, TC_F32) < 0);
  cr_assert(isinf(tck_reduce_identity_f(TC_PRIM_REDUCE_MIN, TC_F64)) && tck_reduce_identity_f(TC_PRIM_REDUCE_MIN, TC_F64) > 0);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_MAX, TC_I32), INT32_MIN);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_MIN, TC_I64), INT64_MAX);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_MAX, TC_BOOL), 0);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_MIN, TC_BOOL), 1);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_PROD, TC_I32), 1);
  cr_assert_eq(tck_reduce_identity_i(TC_PRIM_REDUCE_SUM, TC_I64), 0);
}

/* ---------------------------------------------------------------- SHA-256 */
static void sha_hex(const void *d, size_t n, char hex[65]) {
  tck_sha256 c;
  uint8_t out[32];
  tck_sha256_init(&c);
  tck_sha256_update(&c, d, n);
  tck_sha256_final(&c, out);
  tck_sha256_hex(out, hex);
}

Test(kit_sha256, fips_vectors) {
  char hex[65];
  sha_hex("", 0, hex);
  cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sha_hex("abc", 3, hex);
  cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sha_hex(m448, strlen(m448), hex);
  cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  tck_sha256 c;
  uint8_t out[32];
  char chunk[1001];
  memset(chunk, 'a', sizeof chunk);
  tck_sha256_init(&c);
  for (int i = 0; i < 1000; i++) tck_sha256_update(&c, chunk, i % 2 ? 999 : 1001); /* odd splits */
  tck_sha256_final(&c, out);
  tck_sha256_hex(out, hex);
  cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* ---------------------------------------------------------------- size expressions */
#define E(op, a, b, v) {sizeof(tc_size_expr), op, a, b, v}
static const tc_size_expr exprs7[] = {
    E(TC_SX_SYM, 0, 0, 0),         /* 0: s0 */
    E(TC_SX_CONST, 0, 0, 4),       /* 1: 4 */
    E(TC_SX_MUL, 0, 1, 0),         /* 2: s0*4 */
    E(TC_SX_FLOORDIV, 2, 1, 0),    /* 3: floordiv(x2, 4) */
    E(TC_SX_CONST, 0, 0, -3),      /* 4: -3 */
    E(TC_SX_ADD, 3, 4, 0),         /* 5: x3 + (-3) */
    E(TC_SX_CONST, 0, 0, 1),       /* 6: 1 */
    E(TC_SX_MOD, 4, 1, 0),         /* 7: mod(-3, 4) = 1 */
    E(TC_SX_CONST, 0, 0, 0),       /* 8: 0 */
    E(TC_SX_FLOORDIV, 1, 8, 0),    /* 9: 4 // 0 = 0 */
};
#define N_EXPRS7 ((int32_t)(sizeof exprs7 / sizeof exprs7[0]))

Test(kit_expr, eval) {
  int64_t syms[1] = {5}, vals[N_EXPRS7];
  tck_size_eval_all(exprs7, sizeof(tc_size_expr), N_EXPRS7, syms, vals);
  cr_assert_eq(vals[2], 20);
  cr_assert_eq(vals[3], 5);
  cr_assert_eq(vals[5], 2);
  cr_assert_eq(vals[7], 1);
  cr_assert_eq(vals[9], 0);
}

static char *declare(const tck_expr_syntax *syn, int32_t id) {
  tck_exprs x;
  cr_assert(tck_exprs_init(&x, exprs7, sizeof(tc_size_expr), N_EXPRS7, syn));
  tck_exprs_mark(&x, id);
  tck_str s = {0};
  tck_exprs_declare(&s, &x, 1);
  tck_exprs_free(&x);
  return tck_str_take(&s);
}

Test(kit_expr, declare_c) {
  char *t = declare(&tck_syntax_c, 5);
  cr_assert_str_eq(t, "  const int64_t x2 = s0*4;\n"
                      "  const int64_t x3 = tc_floordiv(x2, 4);\n"
                      "  const int64_t x5 = x3 + (-3);\n");
  free(t);
  t = declare(&tck_syntax_c, 7);
  cr_assert_str_eq(t, "  const int64_t x7 = tc_mod((-3), 4);\n");
  free(t);
}

Test(kit_expr, declare_glsl_and_cuda) {
  char *t = declare(&tck_syntax_glsl, 5);
  cr_assert_str_eq(t, "  const int e2 = p.s0*4;\n"
                      "  const int e3 = tc_floordiv(e2, 4);\n"
                      "  const int e5 = e3 + (-3);\n");
  free(t);
  t = declare(&tck_syntax_cuda, 3);
  cr_assert_str_eq(t, "  const long long x2 = s0*4LL;\n"
                      "  const long long x3 = tc_floordiv(x2, 4LL);\n");
  free(t);
}

Test(kit_expr, index) {
  tck_exprs x;
  cr_assert(tck_exprs_init(&x, exprs7, sizeof(tc_size_expr), N_EXPRS7, &tck_syntax_c));
  const char *const names[] = {"i0", "r"};
  const char *const names0[] = {"i0", "0"};
  int32_t st[2] = {2, 6};
  tc_index ix = {sizeof(tc_index), 5, 2, st, -1, -1};
  tck_exprs_mark_index(&x, &ix);
  cr_assert(x.used[5] && x.used[3] && x.used[2] && x.used[6] && !x.used[7]);
  tck_str s = {0};
  tck_index_emit(&s, &x, &ix, names);
  tck_str_puts(&s, "|");
  tck_index_emit(&s, &x, &ix, names0);
  tck_str_puts(&s, "|");
  int32_t zero[2] = {-1, 8};
  tc_index iz = {sizeof(tc_index), 8, 2, zero, -1, -1};
  tck_index_emit(&s, &x, &iz, names);
  tck_str_puts(&s, "|");
  int32_t st2[2] = {1, -1};
  tc_index i2 = {sizeof(tc_index), -1, 2, st2, -1, -1};
  tck_index_emit(&s, &x, &i2, names);
  tck_str_puts(&s, "|");
  tck_exprs_ref(&s, &x, 4);
  tck_str_puts(&s, "|");
  tck_exprs_ref(&s, &x, -1);
  char *t = tck_str_take(&s);
  cr_assert_str_eq(t, "x5 + i0*x2 + r|x5 + i0*x2|0|i0*4|(-3)|0");
  cr_assert(tck_exprs_is_const(&x, -1, 0) && tck_exprs_is_const(&x, 6, 1) && !tck_exprs_is_const(&x, 0, 0));
  free(t);
  tck_exprs_free(&x);
}

/* ---------------------------------------------------------------- validator: kernels */
typedef struct kfix {
  tc_size_expr exprs[4];
  int32_t outer[1];
  tc_kbuffer bufs[2];
  int32_t st_in[2], st_out[2];
  tc_index ix_in, ix_out;
  int32_t args1[1], args2[1];
  tc_kop ops[3];
  tc_kernel_desc k;
  tc_kernel_list l;
} kfix;

/* softmax-like: out_y[i0] = sum_r in_x[i0*4 + r] */
static void kfix_init(kfix *f) {
  memset(f, 0, sizeof *f);
  f->exprs[0] = (tc_size_expr)E(TC_SX_SYM, 0, 0, 0);
  f->exprs[1] = (tc_size_expr)E(TC_SX_CONST, 0, 0, 4);
  f->exprs[2] = (tc_size_expr)E(TC_SX_MUL, 0, 1, 0);
  f->exprs[3] = (tc_size_expr)E(TC_SX_CONST, 0, 0, 1);
  f->outer[0] = 0;
  f->bufs[0] = (tc_kbuffer){sizeof(tc_kbuffer), "in_x", TC_F32, TC_BUF_INPUT, 2};
  f->bufs[1] = (tc_kbuffer){sizeof(tc_kbuffer), "out_y", TC_F32, TC_BUF_OUTPUT, 0};
  f->st_in[0] = 1, f->st_in[1] = 3;
  f->st_out[0] = 3, f->st_out[1] = -1;
  f->ix_in = (tc_index){sizeof(tc_index), -1, 2, f->st_in, -1, -1};
  f->ix_out = (tc_index){sizeof(tc_index), -1, 2, f->st_out, -1, -1};
  f->args1[0] = 0;
  f->args2[0] = 1;
  f->ops[0] = (tc_kop){sizeof(tc_kop), TC_KOP_LOAD, TC_F32, 0, 0, 0, NULL, 0, &f->ix_in, 0, 0, -1, 0};
  f->ops[1] = (tc_kop){sizeof(tc_kop), TC_KOP_REDUCE, TC_F32, 0, TC_PRIM_REDUCE_SUM, 1, f->args1, -1, NULL, 0, 0, -1, 0};
  f->ops[2] = (tc_kop){sizeof(tc_kop), TC_KOP_STORE, TC_F32, -1, 0, 1, f->args2, 1, &f->ix_out, 0, 0, -1, 0};
  f->k = (tc_kernel_desc){sizeof(tc_kernel_desc), "softmax_1", TC_KERNEL_LOOP, 1, f->outer, 1, 2, f->bufs,
                          sizeof(tc_kbuffer), 3, f->ops, sizeof(tc_kop), NULL, NULL};
  tc_kernel_desc *ks = malloc(3 * sizeof *ks); /* kernel 2 is the one under test */
  ks[0] = ks[1] = ks[2] = f->k;
  ks[0].name = "k0";
  ks[1].name = "k1";
  f->l = (tc_kernel_list){sizeof(tc_kernel_list), "g", 4, f->exprs, sizeof(tc_size_expr), 1, 3, ks,
                          sizeof(tc_kernel_desc)};
}

static tc_kernel_desc *k2(kfix *f) { return (tc_kernel_desc *)&f->l.kernels[2]; }

static void expect_bad(kfix *f, tc_status want, const char *msg) {
  char err[256];
  tc_status s = tck_kernel_list_validate(&f->l, err, sizeof err);
  cr_expect_eq(s, want, "status %d for '%s'", s, err);
  cr_expect_str_eq(err, msg);
  free((void *)f->l.kernels);
}

Test(kit_validate, good_list_passes) {
  kfix f;
  kfix_init(&f);
  char err[256] = "x";
  cr_assert_eq(tck_kernel_list_validate(&f.l, err, sizeof err), TC_OK, "%s", err);
  cr_assert_str_eq(err, "");
  free((void *)f.l.kernels);
}

Test(kit_validate, op_args_not_earlier) {
  kfix f;
  kfix_init(&f);
  static int32_t bad[1] = {7};
  tc_kop ops[3];
  memcpy(ops, f.ops, sizeof ops);
  ops[2].args = bad;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 2: args[0] = 7 is not an earlier op");
}

Test(kit_validate, bad_fields) {
  kfix f;
  tc_kop ops[3];
  /* buffer out of range */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[0].buffer = 2;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 0: buffer = 2 is not a buffer (2 buffers)");
  /* index n_vars */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  tc_index ix = f.ix_in;
  ix.n_vars = 1;
  ops[0].index = &ix;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 0: index.n_vars = 1, must be n_outer + 1 = 2");
  /* stride id */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  int32_t st[2] = {1, 9};
  ix = f.ix_in;
  ix.strides = st;
  ops[0].index = &ix;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT,
             "kernel 2 (softmax_1): op 0: index.strides[1] = 9 is not an expression id (4 exprs, or -1)");
  /* loops not consecutive */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[0].loop = 1;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT,
             "kernel 2 (softmax_1): op 0: loop = 1: inner loops must be consecutive and increasing (expected 0)");
  /* reduce outside a loop */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[1].loop = -1;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 1: a reduce must be inside an inner loop (loop = -1)");
  /* reuse not earlier */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[0].reuse = 0;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 0: reuse = 0 is not an earlier op");
  /* unknown dtype */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[2].dtype = 42;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 2: dtype = 42 is not a dtype");
  /* prim of the wrong family */
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[1].prim = TC_PRIM_ADD;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "kernel 2 (softmax_1): op 1: prim = 32 (add) is not a reduction");
  /* matmul on a loop kernel */
  kfix_init(&f);
  tc_matmul_desc mm = {0};
  k2(&f)->matmul = &mm;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT,
             "kernel 2 (softmax_1): matmul must be set exactly for matmul kernels (kind 0, matmul set)");
  /* a buffer's numel */
  kfix_init(&f);
  tc_kbuffer bufs[2];
  memcpy(bufs, f.bufs, sizeof bufs);
  bufs[1].numel = -1;
  k2(&f)->buffers = bufs;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT,
             "kernel 2 (softmax_1): buffer 1 (out_y): numel = -1 is not an expression id (4 exprs)");
  /* expression children */
  kfix_init(&f);
  f.exprs[2].b = 3;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "expr 2: children a = 0, b = 3 must be earlier exprs");
  /* symbol */
  kfix_init(&f);
  f.exprs[0].value = 1;
  expect_bad(&f, TC_ERR_INVALID_ARGUMENT, "expr 0: symbol s1 out of range (1 symbols)");
  /* struct sizes */
  kfix_init(&f);
  f.l.kernel_size = 16;
  expect_bad(&f, TC_ERR_VERSION, "kernels: element size 16 is smaller than the 88 this reader needs");
  kfix_init(&f);
  memcpy(ops, f.ops, sizeof ops);
  ops[1].struct_size = 8;
  k2(&f)->ops = ops;
  expect_bad(&f, TC_ERR_VERSION, "kernel 2 (softmax_1): op 1: struct_size 8 is too small");
}

/* ---------------------------------------------------------------- validator: graphs */
Test(kit_validate, graphs) {
  tc_size_expr ex[2] = {E(TC_SX_SYM, 0, 0, 0), E(TC_SX_CONST, 0, 0, 8)};
  int32_t shape[2] = {0, 1};
  tc_value_type in = {sizeof(tc_value_type), TC_F32, 2, shape};
  tc_value_type out = {sizeof(tc_value_type), TC_F32, 2, shape};
  int32_t ins[2] = {0, 0};
  tc_prim_node nodes[2] = {{sizeof(tc_prim_node), TC_PRIM_ADD, &out, 2, ins, 0, NULL, 0},
                           {sizeof(tc_prim_node), TC_PRIM_EXP, &out, 1, ins, 0, NULL, 0}};
  int32_t outs[1] = {2};
  tc_graph_desc g = {sizeof g, "attn", 2, ex, sizeof(tc_size_expr), 1, 1, &in, sizeof in, 2, nodes,
                     sizeof(tc_prim_node), 1, outs};
  char err[256];
  cr_assert_eq(tck_graph_validate(&g, err, sizeof err), TC_OK, "%s", err);
  cr_assert_eq(tck_graph_value_type(&g, 0), &in);
  cr_assert_eq(tck_graph_value_type(&g, 2), &out);
  cr_assert_null(tck_graph_value_type(&g, 3));
  int32_t later[1] = {2};
  nodes[1].inputs = later;
  cr_assert_eq(tck_graph_validate(&g, err, sizeof err), TC_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(err, "graph 'attn': node 1 (exp): inputs[0] = 2 is not an earlier value");
  nodes[1].inputs = ins;
  nodes[0].out = NULL;
  tck_graph_validate(&g, err, sizeof err);
  cr_assert_str_eq(err, "graph 'attn': node 0 (add): out: type is NULL");
  nodes[0].out = &out;
  nodes[0].prim = 31;
  tck_graph_validate(&g, err, sizeof err);
  cr_assert_str_eq(err, "graph 'attn': node 0 (prim?): prim = 31 is not a prim this plugin knows (a newer host?)");
  nodes[0].prim = TC_PRIM_ADD;
  in.rank = 9;
  tck_graph_validate(&g, err, sizeof err);
  cr_assert_str_eq(err, "graph 'attn': input 0: rank = 9 is out of range 0..8");
  in.rank = 2;
  outs[0] = 3;
  tck_graph_validate(&g, err, sizeof err);
  cr_assert_str_eq(err, "graph 'attn': outputs[0] = 3 is not a value (3 values)");
  outs[0] = 2;
  shape[1] = 2;
  tck_graph_validate(&g, err, sizeof err);
  cr_assert_str_eq(err, "graph 'attn': input 0: shape[1] = 2 is not an expression id (2 exprs)");
  shape[1] = 1;
  g.struct_size = 8;
  cr_assert_eq(tck_graph_validate(&g, err, sizeof err), TC_ERR_VERSION);
}

/* ---------------------------------------------------------------- options */
Test(kit_options, check_and_read) {
  tc_option_decl decls[3] = {
      {sizeof(tc_option_decl), "cpu.fast", TC_OPTION_BOOL, TC_OPTION_COMPILE, "0", 0, 0, NULL, "fast"},
      {sizeof(tc_option_decl), "cpu.threads", TC_OPTION_INT, TC_OPTION_CONTEXT, "1", 1, 64, NULL, "threads"},
      {sizeof(tc_option_decl), "cpu.vec", TC_OPTION_ENUM, TC_OPTION_COMPILE, "64", 0, 0, "64|128", "width"}};
  char norm[16], err[256];
  cr_assert(tck_option_check(&decls[0], "on", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(norm, "1");
  cr_assert(tck_option_check(&decls[0], "False", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(norm, "0");
  cr_assert_not(tck_option_check(&decls[0], "maybe", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(err, "option cpu.fast: 'maybe' is not a boolean (0|1|true|false|on|off)");
  cr_assert(tck_option_check(&decls[1], "8", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(norm, "8");
  cr_assert_not(tck_option_check(&decls[1], "65", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(err, "option cpu.threads: 65 is out of range [1, 64]");
  cr_assert_not(tck_option_check(&decls[1], "8x", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(err, "option cpu.threads: '8x' is not an integer");
  cr_assert(tck_option_check(&decls[2], "128", norm, sizeof norm, err, sizeof err));
  cr_assert_not(tck_option_check(&decls[2], "12", norm, sizeof norm, err, sizeof err));
  cr_assert_str_eq(err, "option cpu.vec: '12' is not one of 64|128");
  cr_assert_eq(tck_option_decl_find(decls, 3, sizeof decls[0], "cpu.vec"), &decls[2]);
  cr_assert_null(tck_option_decl_find(decls, 3, sizeof decls[0], "cpu.nope"));
  tc_option opts[3] = {{sizeof(tc_option), "cpu.fast", "1", true},
                       {sizeof(tc_option), "cpu.threads", "8", false},
                       {sizeof(tc_option), "cpu.vec", NULL, false}};
  cr_assert(tck_option_bool(opts, 3, sizeof opts[0], "cpu.fast", false));
  cr_assert_eq(tck_option_int(opts, 3, sizeof opts[0], "cpu.threads", 1), 8);
  cr_assert_eq(tck_option_int(opts, 3, sizeof opts[0], "cpu.vec", 64), 64);
  cr_assert_null(tck_option_get(opts, 3, sizeof opts[0], "cpu.vec"));
  cr_assert_null(tck_option_get(opts, 3, sizeof opts[0], "cpu.other"));
}

/* ---------------------------------------------------------------- disk cache */
static char cache_dir[64];

static void cache_setup(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tc-kit-test-XXXXXX");
  cr_assert_not_null(mkdtemp(cache_dir));
}

static void cache_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  cr_expect_eq(system(cmd), 0);
}

static void entry_file(const char *ns, const char *key, const char *kind, char *path, size_t cap) {
  tck_sha256 c;
  uint8_t d[32];
  char hex[65];
  tck_sha256_init(&c);
  tck_sha256_update(&c, ns, strlen(ns) + 1);
  tck_sha256_update(&c, key, strlen(key));
  tck_sha256_final(&c, d);
  tck_sha256_hex(d, hex);
  snprintf(path, cap, "%s/%s.%s", cache_dir, hex, kind);
}

static const char payload[] = "\x7f" "ELF pretend shared object bytes";

static void put_one(void) {
  char err[256];
  cr_assert_eq(tck_cache_put(cache_dir, "ns", "key1", 4, "so", payload, sizeof payload, NULL, err, sizeof err), TC_OK,
               "%s", err);
}

static bool get_one(char *note, size_t cap, tck_cache_hit *hit) {
  bool found = true;
  cr_assert_eq(tck_cache_get(cache_dir, "ns", "key1", 4, "so", hit, &found, note, cap), TC_OK, "%s", note);
  return found;
}

TestSuite(kit_cache, .init = cache_setup, .fini = cache_teardown);

Test(kit_cache, round_trip_and_memfd) {
  put_one();
  char note[256], path[256];
  tck_cache_hit hit;
  cr_assert(get_one(note, sizeof note, &hit));
  cr_assert_str_eq(note, "");
  cr_assert_eq(hit.size, sizeof payload);
  cr_assert_eq(memcmp(hit.data, payload, sizeof payload), 0);
  cr_assert_neq(hit.path[0], 0, "memfd expected on Linux");
  int fd = open(hit.path, O_RDONLY);
  cr_assert_geq(fd, 0);
  char back[128];
  cr_assert_eq(read(fd, back, sizeof back), (ssize_t)sizeof payload);
  cr_assert_eq(memcmp(back, payload, sizeof payload), 0);
  close(fd);
  tck_cache_hit_free(&hit);
  entry_file("ns", "key1", "so", path, sizeof path);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(st.st_mode & 077, 0);
  /* another namespace, another key, another kind: misses */
  bool found = true;
  cr_assert_eq(tck_cache_get(cache_dir, "other", "key1", 4, "so", &hit, &found, note, sizeof note), TC_OK);
  cr_assert_not(found);
  cr_assert_eq(tck_cache_get(cache_dir, "ns", "key1", 4, "spv", &hit, &found, note, sizeof note), TC_OK);
  cr_assert_not(found);
  cr_assert_eq(tck_cache_get(cache_dir, "ns", "key1", 4, "../x", &hit, &found, note, sizeof note),
               TC_ERR_INVALID_ARGUMENT);
}

Test(kit_cache, from_path_and_new_dir) {
  char sub[128], src[128], err[256], note[256];
  snprintf(sub, sizeof sub, "%s/a/b", cache_dir);
  snprintf(src, sizeof src, "%s/src.bin", cache_dir);
  FILE *f = fopen(src, "wb");
  fwrite("hello", 1, 5, f);
  fclose(f);
  cr_assert_eq(tck_cache_put(sub, "ns", "k", 1, "bin", NULL, 0, src, err, sizeof err), TC_OK, "%s", err);
  tck_cache_hit hit;
  bool found = false;
  cr_assert_eq(tck_cache_get(sub, "ns", "k", 1, "bin", &hit, &found, note, sizeof note), TC_OK);
  cr_assert(found);
  cr_assert_eq(hit.size, 5);
  cr_assert_eq(memcmp(hit.data, "hello", 5), 0);
  tck_cache_hit_free(&hit);
}

static void expect_discarded(const char *why, bool removable) {
  char note[256], path[256];
  tck_cache_hit hit;
  cr_assert_not(get_one(note, sizeof note, &hit));
  cr_assert_not_null(strstr(note, why), "note: %s", note);
  entry_file("ns", "key1", "so", path, sizeof path);
  struct stat st;
  if (removable) cr_assert_neq(lstat(path, &st), 0, "the bad entry must be removed");
}

Test(kit_cache, flipped_byte) {
  put_one();
  char path[256];
  entry_file("ns", "key1", "so", path, sizeof path);
  FILE *f = fopen(path, "r+b");
  fseek(f, -3, SEEK_END);
  fputc('Z', f);
  fclose(f);
  expect_discarded("checksum", true);
}

Test(kit_cache, truncated) {
  put_one();
  char path[256];
  entry_file("ns", "key1", "so", path, sizeof path);
  struct stat st;
  stat(path, &st);
  cr_assert_eq(truncate(path, st.st_size - 4), 0);
  expect_discarded("truncated", true);
  put_one();
  cr_assert_eq(truncate(path, 10), 0);
  expect_discarded("truncated", true);
}

Test(kit_cache, symlink) {
  put_one();
  char path[256], real[256];
  entry_file("ns", "key1", "so", path, sizeof path);
  snprintf(real, sizeof real, "%s/real", cache_dir);
  cr_assert_eq(rename(path, real), 0);
  cr_assert_eq(symlink(real, path), 0);
  expect_discarded("symbolic link", true);
}

Test(kit_cache, group_writable) {
  put_one();
  char path[256];
  entry_file("ns", "key1", "so", path, sizeof path);
  cr_assert_eq(chmod(path, 0664), 0);
  expect_discarded("writable by group", true);
}

Test(kit_cache, directory_in_place) {
  char path[256];
  entry_file("ns", "key1", "so", path, sizeof path);
  cr_assert_eq(mkdir(path, 0700), 0);
  expect_discarded("not a regular file", false);
  char err[256];
  /* a put cannot replace a directory: an error, never a crash */
  cr_assert_neq(tck_cache_put(cache_dir, "ns", "key1", 4, "so", payload, sizeof payload, NULL, err, sizeof err), TC_OK);
}

/* Sets an entry's last-used time (its mtime) to `t` seconds since the epoch. */
static void set_used(const char *key, time_t t) {
  char path[256];
  entry_file("ns", key, "so", path, sizeof path);
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0, "%s", path);
}

static void put_key(const char *key) {
  char err[256];
  cr_assert_eq(tck_cache_put(cache_dir, "ns", key, strlen(key), "so", payload, sizeof payload, NULL, err, sizeof err),
               TC_OK, "%s", err);
}

static bool has_key(const char *key) {
  char path[256];
  entry_file("ns", key, "so", path, sizeof path);
  return access(path, F_OK) == 0;
}

/* Over the cap, the least recently used entries go first; a hit counts as a use; files that are
 * not entries are left alone. */
Test(kit_cache, trim_evicts_least_recently_used) {
  put_key("a"), put_key("b"), put_key("c");
  set_used("a", 1000), set_used("b", 2000), set_used("c", 3000);
  tck_cache_hit hit;
  bool found = false;
  char note[256], other[256];
  cr_assert_eq(tck_cache_get(cache_dir, "ns", "a", 1, "so", &hit, &found, note, sizeof note), TC_OK);
  cr_assert(found);
  tck_cache_hit_free(&hit);
  snprintf(other, sizeof other, "%s/README", cache_dir);
  FILE *f = fopen(other, "w");
  cr_assert_not_null(f);
  fputs("not an entry", f);
  fclose(f);
  cr_assert_eq(tck_cache_scan(cache_dir, NULL, NULL), 3);
  uint64_t one = sizeof payload + 88; /* header + payload */
  cr_assert_eq(tck_cache_trim(cache_dir, 2 * one), 1);
  cr_assert_not(has_key("b"), "b was the least recently used (a was just hit)");
  cr_assert(has_key("a") && has_key("c"));
  cr_assert_eq(tck_cache_trim(cache_dir, 2 * one), 0, "under the cap: nothing goes");
  cr_assert_eq(tck_cache_clear(cache_dir), 2);
  cr_assert_eq(access(other, F_OK), 0, "clear removes entries only");
  cr_assert_eq(tck_cache_scan(cache_dir, NULL, NULL), 0);
}

/* TC_CACHE_MAX_MB is read on every write; a value that is not a number keeps the default. */
Test(kit_cache, cap_from_environment) {
  setenv("TC_CACHE_MAX_MB", "3", 1);
  cr_assert_eq(tck_cache_cap_bytes(), (uint64_t)3 << 20);
  setenv("TC_CACHE_MAX_MB", "lots", 1);
  cr_assert_eq(tck_cache_cap_bytes(), (uint64_t)1024 << 20);
  unsetenv("TC_CACHE_MAX_MB");
  cr_assert_eq(tck_cache_cap_bytes(), (uint64_t)1024 << 20);
}

/* ---------------------------------------------------------------- the test host */
Test(kit_host, errors_logs_async) {
  tck_test_host *th = tck_test_host_new(NULL, "cache,output_code");
  const tc_host_api *h = tck_test_host_api(th);
  const char *msg;
  tc_error *e = tck_error(h, TC_ERR_COMPILE, "cc failed: %d", 3);
  cr_assert_eq(h->error_code(h->host_ctx, e), TC_ERR_COMPILE);
  cr_assert_str_eq(h->error_message(h->host_ctx, e), "cc failed: 3");
  cr_assert_eq(tck_test_host_take(th, e, &msg), TC_ERR_COMPILE);
  cr_assert_str_eq(msg, "cc failed: 3");
  cr_assert_eq(tck_test_host_take(th, NULL, &msg), TC_OK);
  cr_assert_str_eq(msg, "");
  cr_assert_null(tck_error(NULL, TC_ERR_INTERNAL, "no host"));
  char big[2000];
  memset(big, 'b', sizeof big - 1);
  big[sizeof big - 1] = 0;
  e = tck_error(h, TC_ERR_INTERNAL, "%s", big);
  tck_test_host_take(th, e, &msg);
  cr_assert_eq(strlen(msg), sizeof big - 1);

  cr_assert(tck_log_on(h, "cache"));
  cr_assert_not(tck_log_on(h, "cach"));
  cr_assert_not(tck_log_on(h, "profile"));
  tck_log(h, TC_LOG_INFO, "cache", "hit %s", "abc");
  tck_log(h, TC_LOG_INFO, "profile", "hidden");
  tck_log(h, TC_LOG_WARN, "profile", "always");
  cr_assert_str_eq(tck_test_host_log(th), "[cache] hit abc\n[profile] always\n");
  tck_test_host_log_clear(th);
  tck_test_host_set_logs(th, "profile");
  tck_log(h, TC_LOG_INFO, "profile", "now");
  tck_log(h, TC_LOG_INFO, "cache", "not now");
  cr_assert_str_eq(tck_test_host_log(th), "[profile] now\n");

  h->report_async_error(h->host_ctx, 7, tck_error(h, TC_ERR_DEVICE, "device lost"));
  h->report_async_error(h->host_ctx, 9, tck_error(h, TC_ERR_DEVICE, "again"));
  cr_assert_str_eq(tck_test_host_async_errors(th), "call 7: device lost\ncall 9: again\n");

  const char *scratch = h->scratch_dir(h->host_ctx);
  cr_assert_not_null(scratch);
  char keep[128];
  snprintf(keep, sizeof keep, "%s", scratch);
  char file[200];
  snprintf(file, sizeof file, "%s/x.c", keep);
  FILE *f = fopen(file, "w");
  fputs("int x;\n", f);
  fclose(f);
  /* no cache dir: cache_get misses, cache_put does nothing */
  tc_cache_get_args ga = {sizeof ga, "k", 1, "so", NULL, NULL, 0, NULL};
  cr_assert_null(h->cache_get(h->host_ctx, &ga));
  cr_assert_null(ga.entry);
  tck_test_host_free(th);
  struct stat st;
  cr_assert_neq(stat(keep, &st), 0, "scratch dir removed on free");
}

Test(kit_host, cache_services, .init = cache_setup, .fini = cache_teardown) {
  tck_test_host *th = tck_test_host_new(cache_dir, "cache");
  const tc_host_api *h = tck_test_host_api(th);
  tc_cache_put_args pa = {sizeof pa, "src+flags", 9, "so", "bytes", 5, NULL};
  cr_assert_null(h->cache_put(h->host_ctx, &pa));
  tc_cache_get_args ga = {sizeof ga, "src+flags", 9, "so", NULL, NULL, 0, NULL};
  cr_assert_null(h->cache_get(h->host_ctx, &ga));
  cr_assert_not_null(ga.entry);
  cr_assert_eq(ga.size, 5);
  cr_assert_eq(memcmp(ga.data, "bytes", 5), 0);
  cr_assert_not_null(ga.path);
  h->cache_release(h->host_ctx, ga.entry);
  tck_test_host_free(th);
}

static tc_error *dummy_probe(tc_probe_args *a) { return NULL; }

Test(kit_host, query_answer) {
  tck_test_host *th = tck_test_host_new(NULL, NULL);
  tc_host_api h = *tck_test_host_api(th);
  tc_plugin_api mine = {0};
  mine.struct_size = sizeof mine;
  mine.abi_major = TC_ABI_MAJOR;
  mine.name = "toy";
  mine.probe = dummy_probe;
  tc_plugin_api got;
  memset(&got, 0xff, sizeof got);
  size_t room = TC_STRUCT_SIZE(tc_plugin_api, buffer_read);
  tc_query_args qa = {.struct_size = sizeof qa, .abi_major = TC_ABI_MAJOR, .host = &h, .table = &got, .table_size = room};
  cr_assert_null(tck_query_answer(&qa, &mine));
  cr_assert_eq(got.struct_size, room);
  cr_assert_eq(got.probe, dummy_probe);
  cr_assert_eq(*(unsigned char *)&got.flush, 0xff, "nothing past table_size is written");
  qa.abi_major = 1;
  qa.abi_minor = 4;
  const char *msg;
  cr_assert_eq(tck_test_host_take(th, tck_query_answer(&qa, &mine), &msg), TC_ERR_VERSION);
  cr_assert_str_eq(msg, "toy: built for tc ABI 2.x, host speaks 1.4");
  char err[256];
  tc_plugin_api t;
  void *dl;
  cr_assert_not(tck_test_plugin_open(th, "/nonexistent/tc-x.so", &t, &dl, err, sizeof err));
  cr_assert_not_null(strstr(err, "cannot load"));
  tck_test_host_free(th);
}

/* The ported debug-eager plugin through the test host (skipped when it is not built). */
Test(kit_host, debug_eager_runs_a_graph) {
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/tc-debug-eager.so", TC_BUILD_PLUGIN_DIR);
  if (access(path, R_OK) != 0) cr_skip_test("debug-eager not built");
  tck_test_host *th = tck_test_host_new(NULL, NULL);
  tc_plugin_api api;
  void *dl;
  cr_assert(tck_test_plugin_open(th, path, &api, &dl, err, sizeof err), "%s", err);
  cr_assert_str_eq(api.name, "debug-eager");
  const char *msg;
  tc_init_args ia = {sizeof ia, tck_test_host_api(th), 0, 0, NULL, 0, NULL};
  cr_assert_eq(tck_test_host_take(th, api.init(&ia), &msg), TC_OK, "%s", msg);
  tc_size_expr ex[2] = {E(TC_SX_SYM, 0, 0, 0), E(TC_SX_CONST, 0, 0, 2)};
  int32_t shape[2] = {0, 1};
  tc_value_type ty = {sizeof ty, TC_F32, 2, shape};
  int32_t in0[2] = {0, 0}, in1[1] = {1};
  tc_prim_node nodes[2] = {{sizeof(tc_prim_node), TC_PRIM_ADD, &ty, 2, in0, 0, NULL, 0},
                           {sizeof(tc_prim_node), TC_PRIM_NEG, &ty, 1, in1, 0, NULL, 0}};
  int32_t outs[1] = {2};
  tc_graph_desc g = {sizeof g, "double_neg", 2, ex, sizeof ex[0], 1, 1, &ty, sizeof ty, 2, nodes, sizeof nodes[0], 1, outs};
  tc_compile_args ca = {sizeof ca, ia.ctx, NULL, &g, 0, 0, NULL, 0, NULL};
  cr_assert_eq(tck_test_host_take(th, api.compile(&ca), &msg), TC_OK, "%s", msg);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
  int64_t syms[1] = {3};
  tc_tensor_ref xr = {sizeof xr, (tc_buffer *)x, 0, TC_F32, 2, {3, 2}, {2, 1}};
  tc_tensor_ref yr = {sizeof yr, (tc_buffer *)y, 0, TC_F32, 2, {3, 2}, {2, 1}};
  tc_run_graph_args ra = {sizeof ra, ia.ctx, ca.exe, 1, syms, 1, &xr, sizeof xr, 1, &yr, sizeof yr, 1, NULL};
  cr_assert_eq(tck_test_host_take(th, api.run_graph(&ra), &msg), TC_OK, "%s", msg);
  cr_assert_eq(y[5], -12.0f);
  tc_executable_info_args info = {sizeof info, ia.ctx, ca.exe, NULL, 0, false, 0};
  cr_assert_null(api.executable_info(&info));
  cr_assert_not_null(strstr(info.source, "v2: f32[s0, 2] = neg(v1)"), "%s", info.source);
  /* a bad graph: the kit's message, through a tc_error */
  in1[0] = 5;
  tc_compile_args bad = {sizeof bad, ia.ctx, NULL, &g, 0, 0, NULL, 0, NULL};
  cr_assert_eq(tck_test_host_take(th, api.compile(&bad), &msg), TC_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(msg, "debug-eager: compile: graph 'double_neg': node 1 (neg): inputs[0] = 5 is not an earlier value");
  tc_executable_free_args fa = {sizeof fa, ia.ctx, ca.exe};
  api.executable_free(&fa);
  tc_release_args rl = {sizeof rl, ia.ctx};
  api.release(&rl);
  dlclose(dl);
  tck_test_host_free(th);
}

/* ---------------------------------------------------------------- tune.c */
/* Fake timings: variant v takes times[v] seconds; measured[] counts the calls per variant. */
typedef struct fake_timing {
  double times[8];
  int measured[8];
} fake_timing;

static double fake_measure(void *arg, int32_t v) {
  fake_timing *t = arg;
  t->measured[v]++;
  return t->times[v];
}

Test(kit_cache, tune_times_once_then_takes_the_cache) {
  tck_test_host *th = tck_test_host_new(cache_dir, "autotune");
  const tc_host_api *h = tck_test_host_api(th);
  fake_timing t = {.times = {3e-6, 1e-6, 2e-6, 9e-6, 1e-7}};
  const int32_t variants[] = {0, 1, 2, 3, 4};
  const int64_t syms[] = {64, 7};
  tck_tune_request r = {.who = "test", .what = "g / k", .key = "kernel text", .key_len = 11, .n_syms = 2,
                        .syms = syms, .variants = variants, .n = 5, .stop_when_slower = true,
                        .measure = fake_measure, .arg = &t};
  bool from_cache = true;
  /* 3 is more than twice the best (1): 4 is never timed, though it would have won */
  cr_assert_eq(tck_tune_choose(h, &r, &from_cache), 1);
  cr_assert_not(from_cache);
  cr_assert_eq(t.measured[3], 1);
  cr_assert_eq(t.measured[4], 0);
  cr_assert(strstr(tck_test_host_log(th), "g / k (s0=64, s1=7): variant 1 chosen"), "%s", tck_test_host_log(th));
  /* the same key and sizes: from the cache, nothing timed */
  memset(t.measured, 0, sizeof t.measured);
  cr_assert_eq(tck_tune_choose(h, &r, &from_cache), 1);
  cr_assert(from_cache);
  for (int v = 0; v < 5; v++) cr_assert_eq(t.measured[v], 0);
  /* other sizes: timed again */
  const int64_t other[] = {128, 7};
  r.syms = other;
  cr_assert_eq(tck_tune_choose(h, &r, &from_cache), 1);
  cr_assert_not(from_cache);
  cr_assert_eq(t.measured[0], 1);
  /* a memo: hit only for the values it was made for */
  tck_tune_memo m = {0};
  cr_assert_not(tck_tune_memo_hit(&m, syms, 2));
  cr_assert(tck_tune_memo_keep(&m, syms, 2, 1));
  cr_assert(tck_tune_memo_hit(&m, syms, 2));
  cr_assert_not(tck_tune_memo_hit(&m, other, 2));
  cr_assert_eq(m.variant, 1);
  tck_tune_memo_free(&m);
  tck_test_host_free(th);
}
