/* test_smoke.c — the library loads and reports errors as values. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tc/tc.h"
#include "tc_plugin.h"

Test(smoke, version) {
  int a, b, c;
  char rest;
  cr_assert_eq(sscanf(tc_version(), "%d.%d.%d%c", &a, &b, &c, &rest), 3, "tc_version() = \"%s\"", tc_version());
  int major = -1, minor = -1;
  tc_abi_version(&major, &minor);
  cr_assert_eq(major, TC_ABI_MAJOR);
  cr_assert_eq(minor, TC_ABI_MINOR);
  tc_abi_version(NULL, NULL); /* either may be NULL */
}

Test(smoke, status_names) {
  cr_assert_str_eq(tc_status_name(TC_OK), "ok");
  cr_assert_str_eq(tc_dtype_name(TC_F32), "f32");
}
