/* version.c — which library this is and which plugin ABI it speaks. */
#include "tc/tc.h"
#include "tc_plugin.h" /* TC_ABI_MAJOR, TC_ABI_MINOR */

#ifndef TC_VERSION_STRING
#error "TC_VERSION_STRING comes from the CMake project version (CMakeLists.txt)"
#endif

const char *tc_version(void) { return TC_VERSION_STRING; }

void tc_abi_version(int *major, int *minor) {
  if (major) *major = TC_ABI_MAJOR;
  if (minor) *minor = TC_ABI_MINOR;
}
