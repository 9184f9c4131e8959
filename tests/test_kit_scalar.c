/* test_kit_scalar.c — the kit's scalar prelude (plugin-api/kit/prelude/tc_scalar.h), compiled
 * here as the C generators paste it into their units, checked where one of its functions stands
 * in for another: tc_exp_normal_f32 (softmax's exp where every result is a normal number, its
 * 2^n added into the exponent field) must give tc_exp_f32's bits over all of [TC_EXP_NORMAL_MIN,
 * 0], both within an ulp of exp, and tc_exp_normal_row_f32 must send a row to it only then. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TC_FN static inline __attribute__((unused))
#define TC_FMAF(a, b, c) fmaf(a, b, c)
static inline int32_t test_f32_bits(float x) {
  int32_t i;
  memcpy(&i, &x, sizeof i);
  return i;
}
static inline float test_bits_f32(int32_t i) {
  float f;
  memcpy(&f, &i, sizeof f);
  return f;
}
#define TC_F32_BITS(x) test_f32_bits(x)
#define TC_BITS_F32(i) test_bits_f32(i)
#include "../plugin-api/kit/prelude/tc_scalar.h"

/* Every 251st float from -0 down to TC_EXP_NORMAL_MIN, and the ends. */
Test(kit_scalar, exp_normal_gives_exp_bits_over_its_range) {
  const uint32_t first = 0x80000000u, last = (uint32_t)test_f32_bits(TC_EXP_NORMAL_MIN);
  int checked = 0;
  for (uint64_t b = first; b <= last; b += 251) {
    const float x = test_bits_f32((int32_t)(uint32_t)b);
    const float fast = tc_exp_normal_f32(x), full = tc_exp_f32(x);
    cr_assert_eq(test_f32_bits(fast), test_f32_bits(full), "x = %a: tc_exp_normal_f32 %a, tc_exp_f32 %a", x, fast, full);
    const double want = exp((double)x);
    cr_assert(fabs(fast - want) <= 0x1p-23 * want, "x = %a: %a against exp's %a", x, fast, want);
    checked++;
  }
  const float ends[] = {0.0f, -0.0f, TC_EXP_NORMAL_MIN, -86.49999f, -1e-30f, -0x1p-149f};
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
    cr_assert_eq(test_f32_bits(tc_exp_normal_f32(ends[i])), test_f32_bits(tc_exp_f32(ends[i])), "x = %a", ends[i]);
  cr_assert_gt(checked, 4000000);
}

/* A row's check: true exactly where min - max >= TC_EXP_NORMAL_MIN; never for NaN or an infinity
 * in the row (its min or max), whose x - max is NaN or -inf. */
Test(kit_scalar, exp_normal_row_only_where_every_exp_is_normal) {
  cr_assert(tc_exp_normal_row_f32(-3.0f, 2.0f));
  cr_assert(tc_exp_normal_row_f32(2.0f, 2.0f));
  cr_assert(tc_exp_normal_row_f32(1.0f + TC_EXP_NORMAL_MIN, 1.0f));
  cr_assert(!tc_exp_normal_row_f32(nextafterf(1.0f + TC_EXP_NORMAL_MIN, -INFINITY), 1.0f));
  cr_assert(!tc_exp_normal_row_f32(-100.0f, 0.0f));
  cr_assert(!tc_exp_normal_row_f32(-INFINITY, 1.0f));
  cr_assert(!tc_exp_normal_row_f32(1.0f, INFINITY));
  cr_assert(!tc_exp_normal_row_f32(INFINITY, INFINITY));
  cr_assert(!tc_exp_normal_row_f32(NAN, 1.0f));
  cr_assert(!tc_exp_normal_row_f32(1.0f, NAN));
}
