/* registry.c — placeholder until the registry lands. */
#include "backend.h"

tc_backend *backend_find(const char *name) { return tc_error_null(TC_ERR_UNAVAILABLE, "no backend '%s': registry not built yet", name); }
tc_backend *backend_eager(void) { return backend_find("debug-eager"); }
void backend_set_thread_options(const char *options) { (void)options; }
int tc_list_backends(tc_backend_info *out, int max) { (void)out; (void)max; return 0; }
tc_status tc_backend_register(tc_plugin_query_fn query) { (void)query; return tc_error(TC_ERR_INTERNAL, "registry not built yet"); }
tc_status tc_backend_rescan(void) { return TC_OK; }
const char *tc_backend_auto(void) { return "debug-eager"; }
