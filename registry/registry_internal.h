/* registry_internal.h — shared between the registry's files: the registry's record of a plugin
 * and the functions the loader, the host services, the options and the list hand each other.
 * Nothing outside registry/ includes this; the core sees backend.h. */
#ifndef TC_REGISTRY_INTERNAL_H
#define TC_REGISTRY_INTERNAL_H

#include "backend/backend.h"

#define REGISTRY_IN_PROCESS_PATH "(in-process)"

/* A device as the probe listed it (copied out of the plugin's memory). */
typedef struct reg_device {
  char name[128];
  int32_t type; /* tc_device_type */
  uint64_t memory_bytes;
} reg_device;

/* An asynchronous failure waiting for the call that checks (backend_take_async_error). */
typedef struct reg_async_error {
  struct reg_async_error *next;
  uint64_t call_id;
  tc_status code;
  char message[];
} reg_async_error;

#define REG_CALL_RING 64

/* One plugin: the loaded table, its probe, its contexts. Entries never move in memory: plugins
 * keep the host table's address (it lives inside) while loaded. */
typedef struct reg_plugin {
  char name[64];
  char version[32];
  char description[160];
  char path[1024]; /* the shared object, or "(in-process)" */
  bool available;
  char reason[512]; /* why unavailable (or a note) */
  int32_t score;
  int32_t n_devices;
  reg_device *devices; /* n_devices */
  tc_device *listed;   /* n_devices, the public view of devices (tc_backend_list) */
  tc_plugin_api api;   /* zero past what the plugin filled: optional entries read as NULL */
  tc_host_api host;
  void *dl;              /* dlopen handle; NULL when registered in-process */
  bool loaded;           /* query succeeded and the table passed every check */
  bool shadowed;         /* an earlier entry has the same name */
  bool in_process;       /* registered with tc_backend_register */
  tc_status load_status; /* why loaded is false: TC_ERR_VERSION, TC_ERR_UNAVAILABLE, ... */
  char cache_dir[1024];  /* "" when caching is off */
  /* Contexts, one per distinct set of context-scope options (registry lock). */
  tc_backend **contexts;
  int32_t n_contexts;
  /* Asynchronous failures and the calls they may name (async_lock). */
  pthread_mutex_t async_lock;
  reg_async_error *async_errors;
  uint64_t next_call_id;
  struct {
    uint64_t id;
    char what[96];
  } calls[REG_CALL_RING];
} reg_plugin;

/* ---------------------------------------------------------------- loader.c */
/* Opens the shared object at `path`, negotiates its table. Always returns an entry (NULL only
 * when out of memory); a file that is not a usable plugin comes back with loaded == false and
 * reason saying why. */
reg_plugin *loader_open_file(const char *path);
/* Negotiates the table of an in-process query function. Same contract as loader_open_file. */
reg_plugin *loader_open_query(tc_plugin_query_fn query);
/* Runs the plugin's probe and sets available / reason / devices from it. */
void loader_probe(reg_plugin *p);
/* Creates a context with the given context-scope options (key: their printable form). An init
 * failure with default options makes the plugin unavailable; with user options it is the
 * caller's error. NULL with an error set. */
tc_backend *loader_init(reg_plugin *p, const tc_options *opts, const char *key);
/* Frees an entry that has no context (dlclose included). */
void loader_free(reg_plugin *p);

/* ---------------------------------------------------------------- file_check.c */
/* Whether the file at path can be handed to dlopen without risking the host: a regular file, a
 * 64-bit little-endian ELF shared object for this machine whose program headers and loaded
 * segments lie inside the file. false with the reason in why. */
bool plugin_file_check(const char *path, char *why, size_t cap);

/* ---------------------------------------------------------------- probe_child.c */
/* Loads, queries and probes the plugin file in a child process first (once per file identity,
 * remembered in the cache directory): false with the reason when that child crashed, exited or
 * timed out. True when it passed, or when there is no helper to run it with. */
bool probe_child_vet(const char *path, char *why, size_t cap);

/* ---------------------------------------------------------------- scan.c */
/* Appends every plugin candidate found in the lookup order (TC_PLUGIN_PATH, then the
 * install's plugin directory) to *list (realloc'd), opened with loader_open_file. */
tc_status scan_plugins(reg_plugin ***list, int32_t *n);

/* ---------------------------------------------------------------- host_services.c */
/* Fills p->host: version, services, host_ctx = p. */
void host_services_fill(reg_plugin *p);
/* Computes and creates p's cache directory (cache_dir "" when caching is off). */
void host_cache_dir_prepare(reg_plugin *p);
/* The core's error from a plugin's: sets this thread's message ("<prefix>: <message>") and
 * returns the code; frees err. TC_OK for NULL. */
tc_status host_error_take(tc_error *err, const char *prefix);
/* Reading and freeing an error a plugin returned, without reporting it. */
tc_status host_error_status(const tc_error *err);
const char *host_error_text(const tc_error *err);
void host_error_drop(tc_error *err);

/* ---------------------------------------------------------------- options.c */
/* The context-scope options of p that opts sets, normalized, in declaration order
 * ("vulkan.device=1"): the key of the context they get. "" for the defaults. */
void options_context_key(const tc_options *opts, const reg_plugin *p, char *buf, size_t cap);

/* ---------------------------------------------------------------- registry.c */
/* Every loaded plugin (for option validation); with the registry lock held by the caller of
 * options_validate (it takes it itself). */
typedef void (*registry_plugin_fn)(const reg_plugin *p, void *user);
void registry_each_plugin(registry_plugin_fn fn, void *user);

#endif
