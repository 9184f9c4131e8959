/* loader.c — from a file (or an in-process query function) to a registry entry: dlopen, the
 * one entry symbol, version negotiation and struct_size handling, the table's checks, probe
 * and init. Every failure becomes a reason on the entry; nothing here aborts the host. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

/* Room the host gives a plugin's query beyond its own table: a newer plugin that ignores the
 * size it was given and writes its whole larger table still lands in host memory. */
#define LOADER_QUERY_SLACK 4096

static reg_plugin *loader_entry_new(const char *path, const char *fallback_name) {
  reg_plugin *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->path, sizeof p->path, "%s", path);
  snprintf(p->name, sizeof p->name, "%s", fallback_name);
  p->load_status = TC_ERR_UNAVAILABLE;
  pthread_mutex_init(&p->async_lock, NULL);
  host_services_fill(p);
  return p;
}

static void loader_fail(reg_plugin *p, const char *fmt, ...) TC_PRINTF(2, 3);
static void loader_fail(reg_plugin *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->reason, sizeof p->reason, fmt, ap);
  va_end(ap);
  p->available = false;
  tc_logs("plugins", "%s (%s): unavailable: %s", p->name, p->path, p->reason);
}

/* The message of an error a plugin returned (freed), or a placeholder. */
static void loader_take_message(tc_error *err, char *out, size_t cap) {
  const char *m = err && host_error_text(err)[0] ? host_error_text(err) : "(the plugin gave no message)";
  snprintf(out, cap, "%s", m);
  host_error_drop(err);
}

/* Names become cache directories and lookup keys: keep them to a safe alphabet. */
static bool loader_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= sizeof(((reg_plugin *)0)->name) || name[0] == '.' || !strcmp(name, "auto") ||
      !strcmp(name, "eager") || !strcmp(name, "host"))
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

/* Entries a plugin cannot work without. NULL when the table is complete, else what is missing. */
static const char *loader_missing_entry(const tc_plugin_api *a) {
  if (!a->probe) return "probe";
  if (!a->init) return "init";
  if (!a->release) return "release";
  if (!a->compile) return "compile";
  if (!a->executable_free) return "executable_free";
  if (!a->synchronize) return "synchronize";
  if ((a->handoff & TC_HANDOFF_KERNELS) && !a->launch) return "launch";
  if ((a->handoff & TC_HANDOFF_GRAPH) && !a->run_graph) return "run_graph";
  if (a->memory == TC_MEMORY_DEVICE) {
    if (!a->buffer_alloc) return "buffer_alloc";
    if (!a->buffer_free) return "buffer_free";
    if (!a->buffer_write) return "buffer_write";
    if (!a->buffer_read) return "buffer_read";
  }
  return NULL;
}

/* The declared options must be usable: named under the plugin's prefix, known types. */
static bool loader_options_ok(reg_plugin *p) {
  const tc_plugin_api *a = &p->api;
  if (a->n_options < 0 || (a->n_options > 0 && (!a->options || a->option_size < TC_STRUCT_SIZE(tc_option_decl, meaning)))) {
    loader_fail(p, "plugin declares %d options with an unusable table (option_size %zu)", (int)a->n_options,
                a->option_size);
    return false;
  }
  size_t pl = a->option_prefix ? strlen(a->option_prefix) : 0;
  for (int32_t i = 0; i < a->n_options; i++) {
    const tc_option_decl *d = TC_ELEM(tc_option_decl, a->options, a->option_size, i);
    if (!d->name || !pl || strncmp(d->name, a->option_prefix, pl) || d->name[pl] != '.' || !d->name[pl + 1]) {
      loader_fail(p, "option %d (%s) is not named <option_prefix>.<name> (option_prefix %s)", (int)i,
                  d->name ? d->name : "NULL", a->option_prefix ? a->option_prefix : "NULL");
      return false;
    }
    if (d->type < TC_OPTION_BOOL || d->type > TC_OPTION_ENUM || (d->scope != TC_OPTION_CONTEXT && d->scope != TC_OPTION_COMPILE)) {
      loader_fail(p, "option %s declares an unknown type %d or scope %d", d->name, (int)d->type, (int)d->scope);
      return false;
    }
  }
  return true;
}

/* A 1.x plugin takes tc_query_args for its tc_host_api and refuses the host's major through
 * what it thinks is set_error (tc_plugin.h): this records that it did, and why. */
typedef struct legacy_refusal {
  bool refused;
  char message[300];
} legacy_refusal;

static void loader_legacy_set_error(void *ctx, const char *message) {
  legacy_refusal *r = ctx;
  r->refused = true;
  snprintf(r->message, sizeof r->message, "%s", message ? message : "(no message)");
}

/* Calls the query and takes the table: min(host size, plugin size) bytes are copied, the rest
 * of p->api stays zero, so optional entries an older plugin never filled read as NULL. */
static void loader_negotiate(reg_plugin *p, tc_plugin_query_fn query) {
  union {
    tc_plugin_api api;
    unsigned char bytes[sizeof(tc_plugin_api) + LOADER_QUERY_SLACK];
  } buf;
  memset(&buf, 0, sizeof buf);
  legacy_refusal legacy = {0};
  tc_query_args q = {.struct_size = sizeof q,
                     .abi_major = TC_ABI_MAJOR,
                     .abi_minor = TC_ABI_MINOR,
                     .legacy_ctx = &legacy,
                     .legacy_set_error = loader_legacy_set_error,
                     .host = &p->host,
                     .table = &buf.api,
                     .table_size = sizeof(tc_plugin_api)};
  tc_error *err = query(&q);
  if (legacy.refused) {
    /* What it returned was a 1.x tc_status, not an error object: never look at it. */
    p->load_status = TC_ERR_VERSION;
    loader_fail(p, "ABI major mismatch: the plugin is built for ABI 1 (host ABI %d.%d): %s", TC_ABI_MAJOR, TC_ABI_MINOR,
                legacy.message);
    return;
  }
  if (err) {
    tc_status s = host_error_status(err);
    char msg[400];
    loader_take_message(err, msg, sizeof msg);
    p->load_status = s;
    if (s == TC_ERR_VERSION)
      loader_fail(p, "ABI major mismatch: the plugin cannot serve host ABI %d.%d: %s", TC_ABI_MAJOR, TC_ABI_MINOR, msg);
    else
      loader_fail(p, "%s failed (%s): %s", TC_PLUGIN_ENTRY_SYMBOL, tc_status_name(s), msg);
    return;
  }
  /* From here on every failure is a table this host cannot use. */
  p->load_status = TC_ERR_VERSION;
  size_t filled = buf.api.struct_size;
  const size_t need_version = TC_STRUCT_SIZE(tc_plugin_api, abi_minor);
  const size_t need_required = TC_STRUCT_SIZE(tc_plugin_api, buffer_read);
  if (filled < need_version) {
    loader_fail(p, "plugin table too small: struct_size %zu does not even hold the ABI version (%zu bytes)", filled,
                need_version);
    return;
  }
  if (buf.api.abi_major != TC_ABI_MAJOR) {
    loader_fail(p, "ABI major mismatch: plugin ABI %u.%u, host ABI %d.%d", (unsigned)buf.api.abi_major,
                (unsigned)buf.api.abi_minor, TC_ABI_MAJOR, TC_ABI_MINOR);
    return;
  }
  if (filled < need_required) {
    loader_fail(p, "plugin table too small: struct_size %zu, the required entries need %zu bytes (ABI %d.%d)", filled,
                need_required, TC_ABI_MAJOR, TC_ABI_MINOR);
    return;
  }
  size_t take = filled < sizeof(tc_plugin_api) ? filled : sizeof(tc_plugin_api);
  memset(&p->api, 0, sizeof p->api);
  memcpy(&p->api, &buf.api, take);
  p->api.struct_size = take;
  p->load_status = TC_ERR_INVALID_ARGUMENT; /* a table of the right version, filled wrongly */

  const tc_plugin_api *a = &p->api;
  if (!a->name || !loader_name_ok(a->name)) {
    loader_fail(p, "plugin name %s%s%s is not usable (1..63 characters of [A-Za-z0-9._-], not auto, eager or host)",
                a->name ? "\"" : "", a->name ? a->name : "NULL", a->name ? "\"" : "");
    return;
  }
  snprintf(p->name, sizeof p->name, "%s", a->name);
  snprintf(p->version, sizeof p->version, "%s", a->version ? a->version : "");
  snprintf(p->description, sizeof p->description, "%s", a->description ? a->description : "");
  if (!(a->handoff & (TC_HANDOFF_KERNELS | TC_HANDOFF_GRAPH))) {
    loader_fail(p, "plugin declares no hand-off level (handoff = 0x%x)", (unsigned)a->handoff);
    return;
  }
  if (a->memory != TC_MEMORY_HOST && a->memory != TC_MEMORY_DEVICE) {
    loader_fail(p, "plugin declares an unknown memory kind %d", (int)a->memory);
    return;
  }
  const char *missing = loader_missing_entry(a);
  if (missing) {
    loader_fail(p, "required entry '%s' is NULL", missing);
    return;
  }
  if (!loader_options_ok(p)) return;
  p->loaded = true;
  p->load_status = TC_OK;
  p->available = true;
  if (filled != sizeof(tc_plugin_api))
    tc_logs("plugins", "%s: plugin ABI %u.%u fills %zu bytes of the table, host %d.%d has %zu; using %zu", p->name,
            (unsigned)a->abi_major, (unsigned)a->abi_minor, filled, TC_ABI_MAJOR, TC_ABI_MINOR, sizeof(tc_plugin_api),
            take);
}

/* "tc-vulkan.so" -> "vulkan": the name listed for a file that never told us its own. */
static void loader_file_stem(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!strncmp(base, "tc-", 3) && base[3]) base += 3;
  size_t n = strlen(base);
  if (n > 3 && !strcmp(base + n - 3, ".so")) n -= 3;
  if (n >= cap) n = cap - 1;
  memcpy(out, base, n);
  out[n] = 0;
}

reg_plugin *loader_open_file(const char *path) {
  char stem[64];
  loader_file_stem(path, stem, sizeof stem);
  reg_plugin *p = loader_entry_new(path, stem);
  if (!p) return NULL;
  char why[400];
  if (!plugin_file_check(path, why, sizeof why)) {
    loader_fail(p, "not loaded: %s", why);
    return p;
  }
  if (!probe_child_vet(path, why, sizeof why)) {
    loader_fail(p, "%s", why);
    return p;
  }
  dlerror();
  /* RTLD_NODELETE: a plugin may leave threads or atexit handlers behind (OpenMP, Vulkan
   * loaders); unmapping it on rescan would pull the code from under them. */
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    const char *err = dlerror();
    loader_fail(p, "dlopen failed: %s", err ? err : "unknown error");
    return p;
  }
  p->dl = dl;
  dlerror();
  void *sym = dlsym(dl, TC_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    const char *err = dlerror();
    loader_fail(p, "not a tc plugin: no symbol %s (%s)", TC_PLUGIN_ENTRY_SYMBOL, err ? err : "NULL");
    return p;
  }
  tc_plugin_query_fn query;
  /* POSIX's way from a data pointer to a function pointer without a pedantic warning. */
  memcpy(&query, &sym, sizeof query);
  loader_negotiate(p, query);
  return p;
}

reg_plugin *loader_open_query(tc_plugin_query_fn query) {
  reg_plugin *p = loader_entry_new(REGISTRY_IN_PROCESS_PATH, "(in-process)");
  if (!p) return NULL;
  p->in_process = true;
  loader_negotiate(p, query);
  return p;
}

void loader_free(reg_plugin *p) {
  if (!p) return;
  if (p->dl) dlclose(p->dl);
  free(p->devices);
  free(p->listed);
  for (reg_async_error *a = p->async_errors, *next; a; a = next) {
    next = a->next;
    free(a);
  }
  pthread_mutex_destroy(&p->async_lock);
  free(p);
}

void loader_probe(reg_plugin *p) {
  if (!p->loaded || p->shadowed) return;
  tc_probe_args a = {.struct_size = sizeof a, .host = &p->host};
  tc_error *err = p->api.probe(&a);
  free(p->devices);
  free(p->listed);
  p->devices = NULL;
  p->listed = NULL;
  p->n_devices = 0;
  /* Whatever the plugin wrote, the counts stay in range and the strings are copied out. */
  int32_t n = a.n_devices < 0 ? 0 : a.n_devices > 64 ? 64 : a.n_devices;
  if (n && a.devices && a.device_size >= TC_STRUCT_SIZE(tc_device_desc, memory_bytes)) {
    p->devices = calloc((size_t)n, sizeof *p->devices);
    for (int32_t i = 0; p->devices && i < n; i++) {
      const tc_device_desc *d = TC_ELEM(tc_device_desc, a.devices, a.device_size, i);
      snprintf(p->devices[i].name, sizeof p->devices[i].name, "%s", d->name ? d->name : "");
      p->devices[i].type = d->type;
      p->devices[i].memory_bytes = d->memory_bytes;
    }
    p->listed = p->devices ? calloc((size_t)n, sizeof *p->listed) : NULL;
    for (int32_t i = 0; p->listed && i < n; i++)
      p->listed[i] = (tc_device){.struct_size = sizeof(tc_device), .name = p->devices[i].name,
                                 .type = p->devices[i].type, .memory_bytes = p->devices[i].memory_bytes};
    if (p->listed) p->n_devices = n;
  }
  p->score = a.score < 0 ? 0 : a.score > 100 ? 100 : a.score;
  char reason[400];
  snprintf(reason, sizeof reason, "%s", a.reason ? a.reason : "");
  if (err) {
    tc_status s = host_error_status(err);
    char msg[400];
    loader_take_message(err, msg, sizeof msg);
    loader_fail(p, "probe failed (%s): %s", tc_status_name(s), reason[0] ? reason : msg);
    return;
  }
  if (!a.available) {
    loader_fail(p, "probe: %s", reason[0] ? reason : "the plugin reports no usable device");
    return;
  }
  p->available = true;
  snprintf(p->reason, sizeof p->reason, "%s", reason);
  tc_logs("plugins", "%s %s (%s): available, score %d, %d device(s)", p->name, p->version, p->path, (int)p->score,
          (int)p->n_devices);
}

tc_backend *loader_init(reg_plugin *p, const tc_options *opts, const char *key) {
  if (!p->cache_dir[0]) host_cache_dir_prepare(p);
  tc_option *o = NULL;
  int32_t n = 0;
  if (options_for_scope(opts, p, TC_OPTION_CONTEXT, &o, &n) != TC_OK) return NULL;
  tc_init_args a = {.struct_size = sizeof a,
                    .host = &p->host,
                    .device = -1,
                    .n_options = n,
                    .options = o,
                    .option_size = sizeof(tc_option)};
  tc_error *err = p->api.init(&a);
  free(o);
  if (err || !a.ctx) {
    char msg[400];
    tc_status s = err ? host_error_status(err) : TC_ERR_INTERNAL;
    if (err)
      loader_take_message(err, msg, sizeof msg);
    else
      snprintf(msg, sizeof msg, "init returned no context");
    if (!key[0]) {
      /* With its defaults the backend cannot start here: list it as unavailable. */
      loader_fail(p, "init failed (%s): %s", tc_status_name(s), msg);
      return core_error_null(TC_ERR_UNAVAILABLE, "backend '%s' is unavailable: %s", p->name, p->reason);
    }
    return core_error_null(s == TC_ERR_INTERNAL ? TC_ERR_INVALID_ARGUMENT : s, "backend '%s' with %s: %s", p->name, key,
                         msg);
  }
  tc_backend *be = calloc(1, sizeof *be);
  char *k = be ? strdup(key) : NULL;
  if (!be || !k) {
    free(be);
    tc_release_args r = {.struct_size = sizeof r, .ctx = a.ctx};
    p->api.release(&r);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "backend '%s': out of memory", p->name);
  }
  be->name = p->name;
  be->api = &p->api;
  be->ctx = a.ctx;
  be->host_memory = p->api.memory == TC_MEMORY_HOST;
  be->context_options = k;
  be->plugin = p;
  be->serialize = !(p->api.flags & TC_PLUGIN_THREAD_SAFE);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  /* Recursive: a plugin call never calls back into tc, but the core may nest a read in a write
   * path of the same context (zeroing an accumulator while launching). */
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&be->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  tc_logs("plugins", "%s: context created%s%s%s%s", p->name, key[0] ? " with " : "", key,
          p->cache_dir[0] ? ", cache " : "", p->cache_dir);
  return be;
}
