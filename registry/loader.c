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

static reg_backend *loader_entry_new(const char *path, const char *fallback_name) {
  reg_backend *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  snprintf(e->be.path, sizeof e->be.path, "%s", path);
  snprintf(e->be.name, sizeof e->be.name, "%s", fallback_name);
  e->load_status = TC_ERR_UNAVAILABLE;
  host_services_fill(e);
  return e;
}

static void loader_fail(reg_backend *e, const char *fmt, ...) TC_PRINTF(2, 3);
static void loader_fail(reg_backend *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->be.reason, sizeof e->be.reason, fmt, ap);
  va_end(ap);
  e->be.available = false;
  tc_logs("plugins", "%s (%s): unavailable: %s", e->be.name, e->be.path, e->be.reason);
}

/* The message the plugin left with host->set_error during the last call, or a placeholder. */
static const char *loader_plugin_message(void) {
  const char *m = tc_last_error();
  return m && m[0] ? m : "(the plugin gave no message)";
}

/* Names become cache directories and lookup keys: keep them to a safe alphabet. */
static bool loader_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= sizeof(((tc_backend *)0)->name) || name[0] == '.' || !strcmp(name, "auto")) return false;
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
  if (!a->synchronize) return "synchronize";
  if (!a->executable_free) return "executable_free";
  if ((a->handoff & TC_HANDOFF_KERNELS) && !a->compile_kernels) return "compile_kernels";
  if ((a->handoff & TC_HANDOFF_KERNELS) && !a->launch) return "launch";
  if ((a->handoff & TC_HANDOFF_GRAPH) && !a->compile_graph) return "compile_graph";
  if ((a->handoff & TC_HANDOFF_GRAPH) && !a->run_graph) return "run_graph";
  if (a->memory == TC_MEMORY_DEVICE) {
    if (!a->buffer_alloc) return "buffer_alloc";
    if (!a->buffer_free) return "buffer_free";
    if (!a->buffer_write) return "buffer_write";
    if (!a->buffer_read) return "buffer_read";
  }
  return NULL;
}

/* Calls the query and takes the table: min(host size, plugin size) bytes are copied, the rest
 * of e->be.api stays zero, so optional entries an older plugin never filled read as NULL. */
static void loader_negotiate(reg_backend *e, tc_plugin_query_fn query) {
  union {
    tc_plugin_api api;
    unsigned char bytes[sizeof(tc_plugin_api) + LOADER_QUERY_SLACK];
  } buf;
  memset(&buf, 0, sizeof buf);
  buf.api.struct_size = sizeof(tc_plugin_api);
  tc_clear_error();
  tc_status s = query(&e->be.host, &buf.api);
  if (s == TC_ERR_VERSION) {
    e->load_status = TC_ERR_VERSION;
    loader_fail(e, "ABI major mismatch: the plugin cannot serve host ABI %d.%d: %s", TC_ABI_MAJOR, TC_ABI_MINOR,
                loader_plugin_message());
    return;
  }
  if (s != TC_OK) {
    e->load_status = s;
    loader_fail(e, "%s failed (%s): %s", TC_PLUGIN_ENTRY_SYMBOL, tc_status_name(s), loader_plugin_message());
    return;
  }
  /* From here on every failure is a table this host cannot use. */
  e->load_status = TC_ERR_VERSION;
  size_t filled = buf.api.struct_size;
  const size_t need_version = TC_STRUCT_SIZE(tc_plugin_api, abi_minor);
  const size_t need_required = TC_STRUCT_SIZE(tc_plugin_api, executable_free);
  if (filled < need_version) {
    loader_fail(e, "plugin table too small: struct_size %zu does not even hold the ABI version (%zu bytes)", filled,
                need_version);
    return;
  }
  if (buf.api.abi_major != TC_ABI_MAJOR) {
    loader_fail(e, "ABI major mismatch: plugin ABI %u.%u, host ABI %d.%d", (unsigned)buf.api.abi_major,
                (unsigned)buf.api.abi_minor, TC_ABI_MAJOR, TC_ABI_MINOR);
    return;
  }
  if (filled < need_required) {
    loader_fail(e, "plugin table too small: struct_size %zu, the required entries need %zu bytes (ABI %d.%d)", filled,
                need_required, TC_ABI_MAJOR, TC_ABI_MINOR);
    return;
  }
  size_t take = filled < sizeof(tc_plugin_api) ? filled : sizeof(tc_plugin_api);
  memset(&e->be.api, 0, sizeof e->be.api);
  memcpy(&e->be.api, &buf.api, take);
  e->be.api.struct_size = take;
  e->load_status = TC_ERR_INVALID_ARGUMENT; /* a table of the right version, filled wrongly */

  const tc_plugin_api *a = &e->be.api;
  if (!a->name || !loader_name_ok(a->name)) {
    loader_fail(e, "plugin name %s%s%s is not usable (1..63 characters of [A-Za-z0-9._-], not \"auto\")",
                a->name ? "\"" : "", a->name ? a->name : "NULL", a->name ? "\"" : "");
    return;
  }
  snprintf(e->be.name, sizeof e->be.name, "%s", a->name);
  snprintf(e->be.version, sizeof e->be.version, "%s", a->version ? a->version : "");
  snprintf(e->be.description, sizeof e->be.description, "%s", a->description ? a->description : "");
  if (!(a->handoff & (TC_HANDOFF_KERNELS | TC_HANDOFF_GRAPH))) {
    loader_fail(e, "plugin declares no hand-off level (handoff = 0x%x)", (unsigned)a->handoff);
    return;
  }
  if (a->memory != TC_MEMORY_HOST && a->memory != TC_MEMORY_DEVICE) {
    loader_fail(e, "plugin declares an unknown memory kind %d", (int)a->memory);
    return;
  }
  const char *missing = loader_missing_entry(a);
  if (missing) {
    loader_fail(e, "required entry '%s' is NULL", missing);
    return;
  }
  e->loaded = true;
  e->load_status = TC_OK;
  e->be.available = true;
  if (filled != sizeof(tc_plugin_api))
    tc_logs("plugins", "%s: plugin ABI %u.%u fills %zu bytes of the table, host %d.%d has %zu; using %zu", e->be.name,
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

reg_backend *loader_open_file(const char *path) {
  char stem[64];
  loader_file_stem(path, stem, sizeof stem);
  reg_backend *e = loader_entry_new(path, stem);
  if (!e) return NULL;
  dlerror();
  /* RTLD_NODELETE: a plugin may leave threads or atexit handlers behind (OpenMP, Vulkan
   * loaders); unmapping it on rescan would pull the code from under them. */
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    const char *err = dlerror();
    loader_fail(e, "dlopen failed: %s", err ? err : "unknown error");
    return e;
  }
  e->be.dl = dl;
  dlerror();
  void *sym = dlsym(dl, TC_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    const char *err = dlerror();
    loader_fail(e, "not a tc plugin: no symbol %s (%s)", TC_PLUGIN_ENTRY_SYMBOL, err ? err : "NULL");
    return e;
  }
  tc_plugin_query_fn query;
  /* POSIX's way from a data pointer to a function pointer without a pedantic warning. */
  memcpy(&query, &sym, sizeof query);
  loader_negotiate(e, query);
  return e;
}

reg_backend *loader_open_query(tc_plugin_query_fn query) {
  reg_backend *e = loader_entry_new(REGISTRY_IN_PROCESS_PATH, "(in-process)");
  if (!e) return NULL;
  e->in_process = true;
  loader_negotiate(e, query);
  return e;
}

void loader_free(reg_backend *e) {
  if (!e) return;
  if (e->be.dl) dlclose(e->be.dl);
  free(e);
}

void loader_probe(reg_backend *e) {
  if (!e->loaded || e->shadowed) return;
  tc_probe_info *info = &e->be.probe;
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  for (int i = 0; i < TC_PROBE_MAX_DEVICES; i++)
    info->devices[i].struct_size = sizeof info->devices[i];
  tc_clear_error();
  tc_status s = e->be.api.probe(&e->be.host, info);
  /* Whatever the plugin wrote, the strings end and the counts stay in range. */
  info->reason[sizeof info->reason - 1] = 0;
  if (info->n_devices < 0) info->n_devices = 0;
  if (info->n_devices > TC_PROBE_MAX_DEVICES) info->n_devices = TC_PROBE_MAX_DEVICES;
  for (int i = 0; i < TC_PROBE_MAX_DEVICES; i++) {
    /* A fixed array inside the host's struct: its stride is the host's, whatever was written. */
    info->devices[i].struct_size = sizeof info->devices[i];
    info->devices[i].name[sizeof info->devices[i].name - 1] = 0;
  }
  if (info->score < 0) info->score = 0;
  if (info->score > 100) info->score = 100;
  if (s != TC_OK) {
    loader_fail(e, "probe failed (%s): %s", tc_status_name(s),
                info->reason[0] ? info->reason : loader_plugin_message());
    return;
  }
  if (info->struct_size < TC_STRUCT_SIZE(tc_probe_info, reason)) {
    loader_fail(e, "probe filled too little (struct_size %zu)", info->struct_size);
    return;
  }
  if (!info->available) {
    loader_fail(e, "probe: %s", info->reason[0] ? info->reason : "the plugin reports no usable device");
    return;
  }
  e->be.available = true;
  snprintf(e->be.reason, sizeof e->be.reason, "%s", info->reason);
  tc_logs("plugins", "%s %s (%s): available, score %d, %d device(s)", e->be.name, e->be.version, e->be.path,
          (int)info->score, (int)info->n_devices);
}

/* The device index from option "<name>.device"; -1 with an error when the value is bad. */
static int32_t loader_device_index(const reg_backend *e) {
  char key[96];
  snprintf(key, sizeof key, "%s.device", e->be.name);
  const char *v = options_get(key);
  if (!v || !v[0]) return 0;
  char *end = NULL;
  errno = 0;
  long d = strtol(v, &end, 10);
  if (errno || *end || d < 0 || d > INT32_MAX) {
    tc_error(TC_ERR_INVALID_ARGUMENT, "backend '%s': option %s=%s is not a device index", e->be.name, key, v);
    return -1;
  }
  if (e->be.probe.n_devices > 0 && d >= e->be.probe.n_devices) {
    tc_error(TC_ERR_INVALID_ARGUMENT, "backend '%s': option %s=%ld is out of range (%d device(s))", e->be.name, key, d,
             (int)e->be.probe.n_devices);
    return -1;
  }
  return (int32_t)d;
}

tc_status loader_init(reg_backend *e) {
  if (e->be.ctx) return TC_OK;
  int32_t device = loader_device_index(e);
  if (device < 0) return tc_last_status();
  host_cache_dir_prepare(e);
  tc_plugin_ctx *ctx = NULL;
  tc_clear_error();
  tc_status s = e->be.api.init(&e->be.host, device, &ctx);
  if (s != TC_OK || !ctx) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s", s != TC_OK ? loader_plugin_message() : "init returned no context");
    loader_fail(e, "init failed on device %d (%s): %s", (int)device, tc_status_name(s != TC_OK ? s : TC_ERR_INTERNAL),
                msg);
    return tc_error(TC_ERR_UNAVAILABLE, "backend '%s' is unavailable: %s", e->be.name, e->be.reason);
  }
  e->be.ctx = ctx;
  tc_logs("plugins", "%s: context created on device %d%s%s", e->be.name, (int)device,
          e->be.host.cache_dir ? ", cache " : "", e->be.host.cache_dir ? e->be.host.cache_dir : "");
  return TC_OK;
}
