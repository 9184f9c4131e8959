/* registry_internal.h — shared between the registry's files: the registry's own record of a
 * backend and the functions the loader, the host services and the list hand each other.
 * Nothing outside registry/ includes this; the core sees backend.h. */
#ifndef TC_REGISTRY_INTERNAL_H
#define TC_REGISTRY_INTERNAL_H

#include "backend/backend.h"

#define REGISTRY_IN_PROCESS_PATH "(in-process)"

/* A tc_backend plus what only the registry needs. `be` comes first so a tc_backend* handed to
 * the core converts back. Entries never move in memory: plugins keep the host table's address
 * (it lives inside) for the life of their context. */
typedef struct reg_backend {
  tc_backend be;
  bool loaded;           /* query succeeded and the table passed every check */
  bool shadowed;         /* an earlier entry has the same name */
  bool in_process;       /* registered with tc_backend_register */
  tc_status load_status; /* why loaded is false: TC_ERR_VERSION, TC_ERR_UNAVAILABLE, ... */
  char cache_dir[1024];
} reg_backend;

/* ---------------------------------------------------------------- loader.c */
/* Opens the shared object at `path`, negotiates its table. Always returns an entry (NULL only
 * when out of memory); a file that is not a usable plugin comes back with loaded == false and
 * be.reason saying why. */
reg_backend *loader_open_file(const char *path);
/* Negotiates the table of an in-process query function. Same contract as loader_open_file. */
reg_backend *loader_open_query(tc_plugin_query_fn query);
/* Runs the plugin's probe and sets available / reason / probe from it. */
void loader_probe(reg_backend *e);
/* Creates the entry's context on the device named by option "<name>.device" (default 0).
 * An init failure makes the entry unavailable. Returns TC_OK or an error (message set). */
tc_status loader_init(reg_backend *e);
/* Frees an entry that has no context (dlclose included). */
void loader_free(reg_backend *e);

/* ---------------------------------------------------------------- scan.c */
/* Appends every plugin candidate found in the lookup order (TC_PLUGIN_PATH, then the
 * install's plugin directory) to *list (realloc'd), opened with loader_open_file. */
tc_status scan_plugins(reg_backend ***list, int32_t *n);

/* ---------------------------------------------------------------- host_services.c */
/* Fills e->be.host: version, callbacks, host_ctx = e, cache_dir NULL (set by
 * host_cache_dir_prepare just before init). */
void host_services_fill(reg_backend *e);
/* Computes, creates (mkdir -p) and publishes e's cache directory in e->be.host.cache_dir;
 * leaves it NULL when caching is off or the directory cannot be created. */
void host_cache_dir_prepare(reg_backend *e);

/* ---------------------------------------------------------------- options.c */
/* The value of option `key`: this thread's options (backend_set_thread_options) first, then
 * $TC_OPTIONS. The string is interned: valid for the life of the process. NULL when unset. */
const char *options_get(const char *key);

#endif
