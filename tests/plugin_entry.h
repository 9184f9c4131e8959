/* plugin_entry.h — the entry point of a plugin file of the build tree, for tests that register
 * a wrapped copy of a real plugin in this process (tc_backend_register with a query that calls
 * the plugin's own and then changes its table). */
#ifndef TC_TEST_PLUGIN_ENTRY_H
#define TC_TEST_PLUGIN_ENTRY_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tc_plugin.h"

/* Opens TC_BUILD_PLUGIN_DIR/file (kept open for the process): false, with why (the path and
 * dlerror), when it does not load; else *query is its entry point, NULL when it lacks one. */
static inline bool test_plugin_entry(const char *file, tc_plugin_query_fn *query, char *why, size_t cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", TC_BUILD_PLUGIN_DIR, file);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  *query = NULL;
  if (!dl) {
    snprintf(why, cap, "%s: %s", path, dlerror());
    return false;
  }
  /* dlsym returns an object pointer; copying it is the ISO-C-clean way to get the function */
  void *sym = dlsym(dl, TC_PLUGIN_ENTRY_SYMBOL);
  memcpy(query, &sym, sizeof *query);
  return true;
}

#endif
