/* test_smoke.c — the library loads and reports errors as values. */
#include <criterion/criterion.h>

#include "tc/tc.h"

Test(smoke, status_names) {
  cr_assert_str_eq(tc_status_name(TC_OK), "ok");
  cr_assert_str_eq(tc_dtype_name(TC_F32), "f32");
}
