/* registry.c — the list of backends: in-process registrations first, then what the loader
 * found on disk, in lookup order. The one piece of global state in tc, behind one mutex.
 * The first use scans and probes (lazily); a backend's context is created on its first
 * backend_find. Entries that have a context are never freed (the core keeps tc_backend
 * pointers in tensors and compiled plans); a rescan retires them instead. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

typedef struct entry_list {
  reg_backend **items;
  int32_t n;
} entry_list;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static bool registry_scanned;
static entry_list registry_in_process; /* tc_backend_register, in registration order */
static entry_list registry_disk;       /* scan_plugins, in lookup order */
static entry_list registry_retired;    /* replaced or rescanned away while in use */

static int32_t registry_count(void) {
  return registry_in_process.n + registry_disk.n;
}

/* Entry i of the combined list: in-process first, then disk. */
static reg_backend *registry_at(int32_t i) {
  return i < registry_in_process.n ? registry_in_process.items[i] : registry_disk.items[i - registry_in_process.n];
}

/* Drops an entry from the live list: freed when nothing can point at it, else retired. */
static void registry_drop(reg_backend *e) {
  if (!e->be.ctx) {
    loader_free(e);
    return;
  }
  reg_backend **grown = realloc(registry_retired.items, (size_t)(registry_retired.n + 1) * sizeof *grown);
  if (grown) {
    registry_retired.items = grown;
    grown[registry_retired.n++] = e;
  }
  /* Out of memory: the entry leaks rather than dangles. */
}

/* First wins: a later entry with a name already listed is shadowed and never probed. */
static void registry_resolve_shadows(void) {
  int32_t n = registry_count();
  for (int32_t i = 0; i < n; i++) {
    reg_backend *e = registry_at(i);
    if (e->shadowed) continue;
    for (int32_t j = 0; j < i; j++) {
      const reg_backend *first = registry_at(j);
      if (first->shadowed || strcmp(first->be.name, e->be.name) != 0) continue;
      e->shadowed = true;
      e->be.available = false;
      snprintf(e->be.reason, sizeof e->be.reason, "shadowed by %.480s", first->be.path);
      tc_logs("plugins", "%s (%s): shadowed by %s", e->be.name, e->be.path, first->be.path);
      break;
    }
  }
}

/* Scans the disk and probes what it found. Called with the lock held. */
static tc_status registry_scan_locked(void) {
  for (int32_t i = 0; i < registry_disk.n; i++)
    registry_drop(registry_disk.items[i]);
  free(registry_disk.items);
  registry_disk.items = NULL;
  registry_disk.n = 0;
  registry_scanned = true;
  tc_status s = scan_plugins(&registry_disk.items, &registry_disk.n);
  registry_resolve_shadows();
  for (int32_t i = 0; i < registry_disk.n; i++)
    loader_probe(registry_disk.items[i]);
  return s;
}

/* Plugin calls during a scan report through this thread's error message; a caller that only
 * lists backends should not find it changed. */
typedef struct saved_error {
  tc_status status;
  char message[512];
} saved_error;

static void saved_error_take(saved_error *se) {
  se->status = tc_last_status();
  snprintf(se->message, sizeof se->message, "%s", tc_last_error());
}

static void saved_error_restore(const saved_error *se) {
  if (se->status == TC_OK)
    tc_clear_error();
  else
    tc_error(se->status, "%s", se->message);
}

static tc_status registry_ensure_scanned_locked(void) {
  if (registry_scanned) return TC_OK;
  saved_error se;
  saved_error_take(&se);
  tc_status s = registry_scan_locked();
  if (s == TC_OK) saved_error_restore(&se);
  return s;
}

static reg_backend *registry_named_locked(const char *name) {
  for (int32_t i = 0; i < registry_count(); i++) {
    reg_backend *e = registry_at(i);
    if (!e->shadowed && !strcmp(e->be.name, name)) return e;
  }
  return NULL;
}

static reg_backend *registry_best_locked(void) {
  reg_backend *best = NULL;
  for (int32_t i = 0; i < registry_count(); i++) {
    reg_backend *e = registry_at(i);
    if (e->be.available && !e->shadowed && (!best || e->be.probe.score > best->be.probe.score)) best = e;
  }
  return best;
}

/* "a, b (unavailable), c": every name a lookup could match. */
static void registry_names_locked(char *out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int32_t i = 0; i < registry_count() && used < cap; i++) {
    const reg_backend *e = registry_at(i);
    if (e->shadowed) continue;
    int w = snprintf(out + used, cap - used, "%s%s%s", used ? ", " : "", e->be.name,
                     e->be.available ? "" : " (unavailable)");
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!out[0]) snprintf(out, cap, "none found: set TC_PLUGIN_PATH or install plugins next to libtc");
}

static tc_backend *registry_find_locked(const char *name) {
  char names[1024];
  if (!name || !strcmp(name, "auto")) {
    /* A backend whose init fails drops out; the next best gets its turn. */
    for (reg_backend *e; (e = registry_best_locked());) {
      if (loader_init(e) == TC_OK) return &e->be;
      if (e->be.available) return NULL; /* a bad option, not a bad backend: report it */
    }
    registry_names_locked(names, sizeof names);
    return tc_error_null(TC_ERR_UNAVAILABLE, "backend 'auto': no backend is available (known: %s)", names);
  }
  reg_backend *e = registry_named_locked(name);
  if (!e) {
    registry_names_locked(names, sizeof names);
    return tc_error_null(TC_ERR_INVALID_ARGUMENT, "unknown backend '%s' (known: %s)", name, names);
  }
  if (!e->be.available)
    return tc_error_null(TC_ERR_UNAVAILABLE, "backend '%s' is unavailable: %s", e->be.name, e->be.reason);
  if (loader_init(e) != TC_OK) return NULL;
  return &e->be;
}

tc_backend *backend_find(const char *name) {
  pthread_mutex_lock(&registry_lock);
  tc_backend *be = registry_ensure_scanned_locked() == TC_OK ? registry_find_locked(name) : NULL;
  pthread_mutex_unlock(&registry_lock);
  return be;
}

tc_backend *backend_eager(void) {
  const char *name = getenv("TC_EAGER_BACKEND");
  return backend_find(name && name[0] ? name : "debug-eager");
}

int tc_list_backends(tc_backend_info *out, int max) {
  pthread_mutex_lock(&registry_lock);
  int n = -1;
  if (registry_ensure_scanned_locked() == TC_OK) {
    n = (int)registry_count();
    for (int i = 0; out && i < n && i < max; i++) {
      const tc_backend *be = &registry_at(i)->be;
      tc_backend_info *o = &out[i];
      memset(o, 0, sizeof *o);
      o->struct_size = sizeof *o;
      o->name = be->name;
      o->version = be->version;
      o->description = be->description;
      o->path = be->path;
      o->available = be->available;
      o->reason = be->reason;
      o->score = be->available ? be->probe.score : 0;
      o->n_devices = be->probe.n_devices; /* what the probe saw, even when unusable */
      o->devices = be->probe.devices;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return n < 0 ? 0 : n;
}

tc_status tc_backend_register(tc_plugin_query_fn query) {
  if (!query) return tc_error(TC_ERR_INVALID_ARGUMENT, "tc_backend_register: query is NULL");
  pthread_mutex_lock(&registry_lock);
  tc_status s = registry_ensure_scanned_locked();
  reg_backend *e = s == TC_OK ? loader_open_query(query) : NULL;
  if (s == TC_OK && !e) s = tc_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_register: out of memory");
  if (s == TC_OK && !e->loaded) {
    s = tc_error(e->load_status, "tc_backend_register: %s", e->be.reason);
    loader_free(e);
    e = NULL;
  }
  if (e) {
    int32_t slot = registry_in_process.n;
    for (int32_t i = 0; i < registry_in_process.n; i++)
      if (!strcmp(registry_in_process.items[i]->be.name, e->be.name)) slot = i;
    if (slot == registry_in_process.n) {
      reg_backend **grown = realloc(registry_in_process.items, (size_t)(registry_in_process.n + 1) * sizeof *grown);
      if (!grown) {
        loader_free(e);
        e = NULL;
        s = tc_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_register: out of memory");
      } else {
        registry_in_process.items = grown;
        registry_in_process.n++;
      }
    } else {
      registry_drop(registry_in_process.items[slot]);
    }
    if (e) {
      registry_in_process.items[slot] = e;
      /* An in-process backend comes first: it shadows a plugin of the same name. */
      registry_resolve_shadows();
      loader_probe(e);
      tc_logs("plugins", "%s: registered in process (%s)", e->be.name, e->be.available ? "available" : e->be.reason);
      tc_clear_error();
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return s;
}

tc_status tc_backend_rescan(void) {
  pthread_mutex_lock(&registry_lock);
  saved_error se;
  saved_error_take(&se);
  tc_status s = registry_scan_locked();
  if (s == TC_OK) saved_error_restore(&se);
  pthread_mutex_unlock(&registry_lock);
  return s;
}

/* Resolves exactly as backend_find("auto") does, context included: a backend whose init
 * fails is never the answer. */
const char *tc_backend_auto(void) {
  pthread_mutex_lock(&registry_lock);
  const tc_backend *be = registry_ensure_scanned_locked() == TC_OK ? registry_find_locked("auto") : NULL;
  pthread_mutex_unlock(&registry_lock);
  return be ? be->name : NULL;
}
