/* build_tree_env.c — where tc_tests finds the built plugins. The registry looks beside the
 * file that holds the core (registry/scan.c, through dladdr): for a program linked with libtc
 * that is lib/, but tc_tests links the core's objects, so it would look in bin/tc/plugins.
 * Before main (and so before Criterion forks its workers), point it at lib/tc/plugins unless
 * the environment already says where. Tests that need another directory set their own. */
#include <stdlib.h>

__attribute__((constructor)) static void build_tree_env(void) {
  setenv("TC_PLUGIN_DEFAULT_DIR", TC_BUILD_PLUGIN_DIR, 0);
  /* The probe helper sits beside the plugins' folder (lib/tc), found the same way. */
  setenv("TC_PLUGIN_PROBE", TC_BUILD_PLUGIN_DIR "/../tc-plugin-probe", 0);
}
