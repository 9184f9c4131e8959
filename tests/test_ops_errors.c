/* test_ops_errors.c — the messages of the common mistakes with the public ops: each names the
 * op, the argument, and the shapes or dtypes involved. A NULL operand gives NULL and leaves
 * the previous error alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tc/tc.h"

static tc_scope *scope;
static void setup(void) {
  tc_error_clear();
  scope = tc_scope_open();
}
static void teardown(void) { tc_scope_close(scope); }
TestSuite(ops_errors, .init = setup, .fini = teardown);

static tc_tensor *zeros(tc_dtype d, int rank, const int64_t *sizes) {
  tc_tensor *t = tc_zeros(d, rank, sizes);
  cr_assert(t, "tc_zeros: %s", tc_last_error());
  return t;
}
#define Z(d, ...) zeros((d), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__})

/* The op failed (NULL) with exactly this message. */
#define EXPECT_ERROR(call, msg)                                                                    \
  do {                                                                                             \
    tc_error_clear();                                                                              \
    tc_tensor *r_ = (call);                                                                        \
    cr_assert_null(r_, "%s should fail", #call);                                                   \
    cr_assert_str_eq(tc_last_error(), (msg));                                                      \
  } while (0)

/* The op failed with a message containing each of the fragments. */
#define EXPECT_ERROR_HAS(call, ...)                                                                \
  do {                                                                                             \
    tc_error_clear();                                                                              \
    tc_tensor *r_ = (call);                                                                        \
    cr_assert_null(r_, "%s should fail", #call);                                                   \
    const char *frags_[] = {__VA_ARGS__};                                                          \
    for (size_t i_ = 0; i_ < sizeof frags_ / sizeof *frags_; i_++)                                 \
      cr_assert(strstr(tc_last_error(), frags_[i_]), "'%s' lacks '%s'", tc_last_error(), frags_[i_]); \
  } while (0)

Test(ops_errors, add_shape_mismatch) {
  EXPECT_ERROR(tc_add(Z(TC_F32, 2, 3), Z(TC_F32, 3, 2)),
               "tc_add: shapes cannot be broadcast (a: 2x3, b: 3x2): sizes 2 and 3 at dim 0");
  EXPECT_ERROR_HAS(tc_mul(Z(TC_F32, 4, 5), Z(TC_F32, 4)), "tc_mul", "a: 4x5", "b: 4", "sizes 5 and 4 at dim 1");
  EXPECT_ERROR_HAS(tc_where(Z(TC_BOOL, 3), Z(TC_F32, 2, 3), Z(TC_F32, 4)), "tc_where", "2x3", "4");
}

Test(ops_errors, matmul_inner_sizes) {
  EXPECT_ERROR(tc_matmul(Z(TC_F32, 8, 64), Z(TC_F32, 32, 16)), "tc_matmul: inner sizes differ (a: 8x64, b: 32x16)");
  EXPECT_ERROR(tc_matmul(Z(TC_F32, 2, 8, 64), Z(TC_F32, 32)), "tc_matmul: inner sizes differ (a: 2x8x64, b: 32)");
  EXPECT_ERROR_HAS(tc_matmul(Z(TC_F32, 2, 3, 4), Z(TC_F32, 5, 4, 6)), "tc_matmul: batch dims", "a: 2x3x4",
                   "b: 5x4x6");
  EXPECT_ERROR_HAS(tc_matmul(Z(TC_I64, 2, 2), Z(TC_I64, 2, 2)), "tc_matmul", "floating", "i64");
  EXPECT_ERROR_HAS(tc_linear(Z(TC_F32, 4, 16), Z(TC_F32, 8, 32), NULL), "tc_linear", "x: 4x16", "w: 8x32");
}

Test(ops_errors, bad_dim) {
  EXPECT_ERROR(tc_sum(Z(TC_F32, 2, 3), 1, (const int[]){2}, false),
               "tc_sum: dim 2 is out of range for a rank-2 tensor (x: 2x3; expected -2..1)");
  EXPECT_ERROR_HAS(tc_softmax(Z(TC_F32, 2, 3), -3), "tc_softmax", "dim -3", "2x3");
  EXPECT_ERROR_HAS(tc_sum(Z(TC_F32, 2, 3), 2, (const int[]){1, -1}, false), "tc_sum", "dim 1", "more than once");
  EXPECT_ERROR_HAS(tc_transpose(Z(TC_F32, 2, 3), 0, 2), "tc_transpose", "dim1 2");
  EXPECT_ERROR_HAS(tc_permute(Z(TC_F32, 2, 3), (const int[]){0, 0}), "tc_permute", "dim 0", "more than once");
  EXPECT_ERROR_HAS(tc_cat(2, (tc_tensor *const[]){Z(TC_F32, 2), Z(TC_F32, 2)}, 1), "tc_cat", "dim 1");
}

Test(ops_errors, dtype) {
  EXPECT_ERROR(tc_exp(Z(TC_I64, 4)), "tc_exp: x must be a floating tensor (f32 or f64), got i64 (x: 4)");
  EXPECT_ERROR_HAS(tc_mean(Z(TC_I32, 2, 2), 0, NULL, false), "tc_mean", "floating", "i32");
  EXPECT_ERROR_HAS(tc_where(Z(TC_F32, 2), Z(TC_F32, 2), Z(TC_F32, 2)), "tc_where: cond must be a bool tensor", "f32");
  EXPECT_ERROR_HAS(tc_cross_entropy(Z(TC_F32, 4, 3), Z(TC_F32, 4)), "tc_cross_entropy", "target", "i32 or i64");
  EXPECT_ERROR_HAS(tc_rand(1, TC_I32, 1, (const int64_t[]){3}), "tc_rand", "f32 or f64", "i32");
  EXPECT_ERROR_HAS(tc_sub(Z(TC_BOOL, 2), Z(TC_BOOL, 2)), "tc_sub", "bool");
}

Test(ops_errors, reshape_numel) {
  EXPECT_ERROR(tc_reshape(Z(TC_F32, 2, 3), 2, (const int64_t[]){4, 4}),
               "tc_reshape: shape (4, 4) is invalid for 6 elements (x: 2x3)");
  EXPECT_ERROR_HAS(tc_reshape(Z(TC_F32, 2, 3), 2, (const int64_t[]){-1, 4}), "tc_reshape", "(-1, 4)", "6 elements");
  EXPECT_ERROR_HAS(tc_reshape(Z(TC_F32, 2, 3), 2, (const int64_t[]){-1, -1}), "tc_reshape", "only one -1");
  EXPECT_ERROR_HAS(tc_unflatten(Z(TC_F32, 2, 6), 1, 2, (const int64_t[]){4, -1}), "tc_unflatten", "(4, -1)",
                   "6 elements");
  EXPECT_ERROR_HAS(tc_expand(Z(TC_F32, 3, 2), 2, (const int64_t[]){3, 4}), "tc_expand", "x: 3x2", "(3, 4)");
  EXPECT_ERROR_HAS(tc_slice(Z(TC_F32, 5), 0, 0, 5, 0), "tc_slice", "step must be positive");
}

Test(ops_errors, cat_rank_mismatch) {
  EXPECT_ERROR(tc_cat(2, (tc_tensor *const[]){Z(TC_F32, 2, 3), Z(TC_F32, 3)}, 0),
               "tc_cat: rank mismatch (xs[0]: 2x3, xs[1]: 3)");
  EXPECT_ERROR(tc_cat(3, (tc_tensor *const[]){Z(TC_F32, 2, 3), Z(TC_F32, 2, 3), Z(TC_F32, 3, 4)}, 0),
               "tc_cat: sizes differ at dim 1 (xs[0]: 2x3, xs[2]: 3x4); only dim 0 may differ");
  EXPECT_ERROR_HAS(tc_cat(0, NULL, 0), "tc_cat", "at least one");
}

Test(ops_errors, gather_index_dtype) {
  EXPECT_ERROR(tc_gather(Z(TC_F32, 2, 3), 1, Z(TC_F32, 2, 2)),
               "tc_gather: index must be an i32 or i64 tensor, got f32 (index: 2x2)");
  EXPECT_ERROR_HAS(tc_gather(Z(TC_F32, 2, 3), 1, Z(TC_I64, 2)), "tc_gather", "rank", "index: 2", "x: 2x3");
  EXPECT_ERROR_HAS(tc_gather(Z(TC_F32, 2, 3), 1, Z(TC_I64, 4, 3)), "tc_gather", "larger than x at dim 0");
  EXPECT_ERROR_HAS(tc_embedding(Z(TC_F32, 10, 4), Z(TC_F32, 3)), "tc_embedding", "indices", "f32");
  EXPECT_ERROR_HAS(tc_scatter_add(Z(TC_F32, 3), 0, Z(TC_I64, 2), Z(TC_F64, 2)), "tc_scatter_add", "src", "f64");
}

Test(ops_errors, norms) {
  EXPECT_ERROR_HAS(tc_layer_norm(Z(TC_F32, 2, 8), 1, Z(TC_F32, 4), NULL, 1e-5), "tc_layer_norm", "weight", "x: 2x8",
                   "weight: 4");
  EXPECT_ERROR_HAS(tc_rms_norm(Z(TC_F32, 2, 8), 3, NULL, 1e-5), "tc_rms_norm", "n_norm 3");
  EXPECT_ERROR_HAS(tc_dropout(Z(TC_F32, 2), 1.5, 0, true), "tc_dropout", "p must be in [0, 1]");
}

Test(ops_errors, null_operand_keeps_error) {
  tc_tensor *x = Z(TC_F32, 2);
  cr_assert_null(tc_exp(Z(TC_I32, 2)));
  char before[512];
  snprintf(before, sizeof before, "%s", tc_last_error());
  cr_assert(before[0]);
  cr_assert_null(tc_add(NULL, x));
  cr_assert_null(tc_matmul(x, NULL));
  cr_assert_null(tc_sum(NULL, 0, NULL, false));
  cr_assert_null(tc_softmax(NULL, 0));
  cr_assert_null(tc_reshape(NULL, 1, (const int64_t[]){2}));
  cr_assert_null(tc_cat(2, (tc_tensor *const[]){x, NULL}, 0));
  cr_assert_null(tc_where(NULL, x, x));
  cr_assert_null(tc_layer_norm(NULL, 1, NULL, NULL, 1e-5));
  cr_assert_null(tc_gather(x, 0, NULL));
  cr_assert_str_eq(tc_last_error(), before);
}

/* The ops that reach REMAINDER, REVERSE, PAD, integer DIV and bitwise AND/OR. */
Test(ops_errors, flip_pad_bitwise_div_trunc) {
  tc_tensor *x = Z(TC_F32, 2, 3), *i = Z(TC_I32, 2, 3);
  EXPECT_ERROR(tc_flip(x, 2, (int[]){1, -1}), "tc_flip: dim -1 is listed twice (x: 2x3)");
  EXPECT_ERROR_HAS(tc_flip(x, 3, (int[]){0, 1, 0}), "tc_flip", "3 dims", "rank 2");
  EXPECT_ERROR_HAS(tc_pad(x, 3, (int64_t[]){1, 1, 1}, 0), "tc_pad", "3 pads", "rank 2");
  EXPECT_ERROR(tc_pad(x, 2, (int64_t[]){1, -1}, 0), "tc_pad: pads must be >= 0, got (1, -1) for dim 1 (x: 2x3)");
  EXPECT_ERROR_HAS(tc_bitwise_and(x, i), "tc_bitwise_and", "integer or bool", "f32");
  EXPECT_ERROR_HAS(tc_remainder(tc_ones(TC_BOOL, 1, (int64_t[]){2}), tc_ones(TC_BOOL, 1, (int64_t[]){2})),
                   "tc_remainder", "bool");
  /* Values: trunc rounds toward zero and keeps -0. */
  float a[4] = {-7, 7, -0.5f, 1}, b[4] = {2, 2, 1, 0}, y[4];
  tc_tensor *q = tc_div_trunc(tc_from_f32(a, 1, (int64_t[]){4}), tc_from_f32(b, 1, (int64_t[]){4}));
  cr_assert_not_null(q, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(q, y, sizeof y), TC_OK);
  cr_assert_eq(y[0], -3.0f);
  cr_assert_eq(y[1], 3.0f);
  cr_assert(y[2] == 0.0f && signbit(y[2]), "-0.5 truncates to -0");
  cr_assert(isinf(y[3]));
  int64_t p[2] = {2, 1}, flipped[3];
  tc_tensor *v = tc_flip(tc_arange(0, 3, 1, TC_I64), 1, (int[]){0});
  cr_assert_eq(tc_to_host(v, flipped, sizeof flipped), TC_OK);
  cr_assert(flipped[0] == 2 && flipped[1] == 1 && flipped[2] == 0);
  tc_tensor *padded = tc_pad(tc_arange(0, 3, 1, TC_I64), 2, p, 9);
  cr_assert_eq(tc_numel(padded), 6);
}

/* Sizes whose product overflows are an error, not a wrapped numel; extreme slice bounds clamp. */
Test(ops_errors, size_overflow_and_extreme_slices) {
  tc_tensor *x = Z(TC_F32, 1, 1);
  const int64_t big = (int64_t)1 << 40;
  EXPECT_ERROR_HAS(tc_expand(x, 2, (int64_t[]){big, big}), "shape", "more elements than memory can address");
  tc_tensor *y = Z(TC_F32, 5, 3);
  tc_tensor *s = tc_slice(y, 0, INT64_MIN, INT64_MAX, INT64_MAX);
  cr_assert_not_null(s, "%s", tc_last_error());
  cr_assert_eq(tc_size(s, 0), 1, "one row: the first");
  s = tc_slice(y, 0, INT64_MAX, INT64_MIN, 1);
  cr_assert_not_null(s, "%s", tc_last_error());
  cr_assert_eq(tc_size(s, 0), 0);
  s = tc_slice(y, 1, -INT64_MAX, 2, 1);
  cr_assert_not_null(s, "%s", tc_last_error());
  cr_assert_eq(tc_size(s, 1), 2);
}

/* The status behind the message is public, so a caller can branch without parsing text. */
Test(ops_errors, last_status_names_the_kind_of_failure) {
  tc_error_clear();
  cr_assert_eq(tc_last_status(), TC_OK);
  tc_tensor *x = tc_zeros(TC_F32, 1, (int64_t[]){3});
  cr_assert_null(tc_gather(x, 5, x));
  cr_assert_eq(tc_last_status(), TC_ERR_INVALID_ARGUMENT, "status %s: %s", tc_status_name(tc_last_status()),
               tc_last_error());
  tc_error_clear();
  cr_assert_eq(tc_last_status(), TC_OK);
  tc_release(x);
}
