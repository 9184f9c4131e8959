/* registry.c — the list of backends: in-process registrations first, then what the loader
 * found on disk, in lookup order. The one piece of global state in tc, behind one mutex.
 * The first use scans and probes (lazily); a plugin's contexts are created on first use, one
 * per distinct set of context-scope options. Entries that have a context are never freed (the
 * core keeps tc_backend pointers in tensors and compiled plans); a rescan retires them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

typedef struct entry_list {
  reg_plugin **items;
  int32_t n;
} entry_list;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static bool registry_scanned;
static entry_list registry_in_process; /* tc_backend_register, in registration order */
static entry_list registry_disk;       /* scan_plugins, in lookup order */
static entry_list registry_retired;    /* replaced or rescanned away while in use */
/* True while this thread holds registry_lock inside backend_find (options_validate calls back). */
static _Thread_local bool registry_lock_held;
/* Bumped by every scan and registration: cached lookups older than it are stale. */
static uint64_t registry_generation = 1;

static int32_t registry_count(void) {
  return registry_in_process.n + registry_disk.n;
}

/* Entry i of the combined list: in-process first, then disk. */
static reg_plugin *registry_at(int32_t i) {
  return i < registry_in_process.n ? registry_in_process.items[i] : registry_disk.items[i - registry_in_process.n];
}

/* Drops an entry from the live list: freed when nothing can point at it, else retired. */
static void registry_drop(reg_plugin *e) {
  if (!e->n_contexts) {
    loader_free(e);
    return;
  }
  reg_plugin **grown = realloc(registry_retired.items, (size_t)(registry_retired.n + 1) * sizeof *grown);
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
    reg_plugin *e = registry_at(i);
    if (e->shadowed) continue;
    for (int32_t j = 0; j < i; j++) {
      const reg_plugin *first = registry_at(j);
      if (first->shadowed || strcmp(first->name, e->name) != 0) continue;
      e->shadowed = true;
      e->available = false;
      snprintf(e->reason, sizeof e->reason, "shadowed by %.480s", first->path);
      tc_logs("plugins", "%s (%s): shadowed by %s", e->name, e->path, first->path);
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
  __atomic_add_fetch(&registry_generation, 1, __ATOMIC_ACQ_REL);
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
    tc_error_clear();
  else
    core_error(se->status, "%s", se->message);
}

static tc_status registry_ensure_scanned_locked(void) {
  if (registry_scanned) return TC_OK;
  tc_logs_init(); /* the first thing any use of tc does: a misspelt TC_LOGS category is reported here */
  saved_error se;
  saved_error_take(&se);
  tc_status s = registry_scan_locked();
  if (s == TC_OK) saved_error_restore(&se);
  return s;
}

static reg_plugin *registry_named_locked(const char *name) {
  for (int32_t i = 0; i < registry_count(); i++) {
    reg_plugin *e = registry_at(i);
    if (!e->shadowed && !strcmp(e->name, name)) return e;
  }
  return NULL;
}

static reg_plugin *registry_best_locked(void) {
  reg_plugin *best = NULL;
  for (int32_t i = 0; i < registry_count(); i++) {
    reg_plugin *e = registry_at(i);
    if (e->available && !e->shadowed && (!best || e->score > best->score)) best = e;
  }
  return best;
}

/* "a, b (unavailable), c": every name a lookup could match. */
static void registry_names_locked(char *out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int32_t i = 0; i < registry_count() && used < cap; i++) {
    const reg_plugin *e = registry_at(i);
    if (e->shadowed) continue;
    int w = snprintf(out + used, cap - used, "%s%s%s", used ? ", " : "", e->name,
                     e->available ? "" : " (unavailable)");
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!out[0]) snprintf(out, cap, "none found: set TC_PLUGIN_PATH or install plugins next to libtc");
}

/* p's context for the context-scope options among opts, created on first use. */
static tc_backend *registry_context_locked(reg_plugin *p, const tc_options *opts) {
  char key[512];
  options_context_key(opts, p, key, sizeof key);
  for (int32_t i = 0; i < p->n_contexts; i++)
    if (!strcmp(p->contexts[i]->context_options, key)) return p->contexts[i];
  tc_backend **grown = realloc(p->contexts, (size_t)(p->n_contexts + 1) * sizeof *grown);
  if (!grown) return core_error_null(TC_ERR_OUT_OF_MEMORY, "backend '%s': out of memory", p->name);
  p->contexts = grown;
  tc_backend *be = loader_init(p, opts, key);
  if (!be) return NULL;
  p->contexts[p->n_contexts++] = be;
  return be;
}

static tc_backend *registry_find_locked(const char *name, const tc_options *opts) {
  char names[1024];
  if (name && !strcmp(name, "eager")) {
    const char *eager = getenv("TC_EAGER_BACKEND");
    name = eager && eager[0] ? eager : "debug-eager";
  }
  if (!name || !strcmp(name, "auto")) {
    /* A backend whose init fails drops out; the next best gets its turn. */
    for (reg_plugin *e; (e = registry_best_locked());) {
      tc_backend *be = registry_context_locked(e, opts);
      if (be) return be;
      if (e->available) return NULL; /* a bad option, not a bad backend: report it */
    }
    registry_names_locked(names, sizeof names);
    return core_error_null(TC_ERR_UNAVAILABLE, "backend 'auto': no backend is available (known: %s)", names);
  }
  reg_plugin *e = registry_named_locked(name);
  if (!e) {
    registry_names_locked(names, sizeof names);
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "unknown backend '%s' (known: %s, and auto, eager)", name, names);
  }
  if (!e->available) return core_error_null(TC_ERR_UNAVAILABLE, "backend '%s' is unavailable: %s", e->name, e->reason);
  return registry_context_locked(e, opts);
}

tc_backend *backend_find(const char *name, const tc_options *opts) {
  tc_options *own = NULL;
  if (!opts) {
    own = options_parse(NULL);
    if (!own) return NULL;
    opts = own;
  }
  pthread_mutex_lock(&registry_lock);
  tc_backend *be = NULL;
  if (registry_ensure_scanned_locked() == TC_OK) {
    /* Validate against the backend asked for (its keys must be known), and every other key
     * against whichever plugin owns its prefix. */
    reg_plugin *named = name && strcmp(name, "auto") && strcmp(name, "eager") ? registry_named_locked(name) : NULL;
    tc_backend probe_view = {0};
    if (named) probe_view.plugin = named;
    registry_lock_held = true;
    tc_status s = options_validate(opts, named ? &probe_view : NULL);
    registry_lock_held = false;
    if (s == TC_OK) be = registry_find_locked(name, opts);
  }
  pthread_mutex_unlock(&registry_lock);
  options_free(own);
  return be;
}

tc_backend *backend_eager(void) {
  /* The eager backend is used on every eager op: look it up once per options environment. */
  static _Thread_local tc_backend *cached;
  static _Thread_local uint64_t cached_gen;
  static _Thread_local char cached_name[64];
  const char *env = getenv("TC_EAGER_BACKEND");
  const char *name = env && env[0] ? env : "debug-eager";
  if (cached && cached_gen == __atomic_load_n(&registry_generation, __ATOMIC_ACQUIRE) && !strcmp(cached_name, name))
    return cached;
  tc_backend *be = backend_find(name, NULL);
  if (be) {
    cached = be;
    cached_gen = __atomic_load_n(&registry_generation, __ATOMIC_ACQUIRE);
    snprintf(cached_name, sizeof cached_name, "%s", name);
  }
  return be;
}

void registry_each_plugin(registry_plugin_fn fn, void *user) {
  /* Called from options_validate inside backend_find (lock held) or alone. */
  bool locked = !registry_lock_held;
  if (locked) pthread_mutex_lock(&registry_lock);
  for (int32_t i = 0; i < registry_count(); i++) {
    const reg_plugin *p = registry_at(i);
    if (p->loaded && !p->shadowed) fn(p, user);
  }
  if (locked) pthread_mutex_unlock(&registry_lock);
}

int tc_backend_list(tc_backend_info *out, int max) {
  pthread_mutex_lock(&registry_lock);
  int n = -1;
  if (registry_ensure_scanned_locked() == TC_OK) {
    n = (int)registry_count();
    for (int i = 0; out && i < n && i < max; i++) {
      const reg_plugin *be = registry_at(i);
      tc_backend_info *o = &out[i];
      memset(o, 0, sizeof *o);
      o->struct_size = sizeof *o;
      o->name = be->name;
      o->version = be->version;
      o->description = be->description;
      o->path = be->path;
      o->available = be->available;
      o->reason = be->reason;
      o->score = be->available ? be->score : 0;
      o->n_devices = be->n_devices; /* what the probe saw, even when unusable */
      o->devices = be->listed;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return n < 0 ? 0 : n;
}

tc_status tc_backend_register(tc_plugin_query_fn query) {
  if (!query) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_backend_register: query is NULL");
  pthread_mutex_lock(&registry_lock);
  tc_status s = registry_ensure_scanned_locked();
  reg_plugin *e = s == TC_OK ? loader_open_query(query) : NULL;
  if (s == TC_OK && !e) s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_register: out of memory");
  if (s == TC_OK && !e->loaded) {
    s = core_error(e->load_status, "tc_backend_register: %s", e->reason);
    loader_free(e);
    e = NULL;
  }
  if (e) {
    int32_t slot = registry_in_process.n;
    for (int32_t i = 0; i < registry_in_process.n; i++)
      if (!strcmp(registry_in_process.items[i]->name, e->name)) slot = i;
    if (slot == registry_in_process.n) {
      reg_plugin **grown = realloc(registry_in_process.items, (size_t)(registry_in_process.n + 1) * sizeof *grown);
      if (!grown) {
        loader_free(e);
        e = NULL;
        s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_register: out of memory");
      } else {
        registry_in_process.items = grown;
        registry_in_process.n++;
      }
    } else {
      registry_drop(registry_in_process.items[slot]);
    }
    if (e) {
      registry_in_process.items[slot] = e;
      __atomic_add_fetch(&registry_generation, 1, __ATOMIC_ACQ_REL);
      /* An in-process backend comes first: it shadows a plugin of the same name. */
      registry_resolve_shadows();
      loader_probe(e);
      tc_logs("plugins", "%s: registered in process (%s)", e->name, e->available ? "available" : e->reason);
      tc_error_clear();
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
  const tc_backend *be = registry_ensure_scanned_locked() == TC_OK ? registry_find_locked("auto", NULL) : NULL;
  pthread_mutex_unlock(&registry_lock);
  return be ? be->name : NULL;
}

tc_status tc_backend_open(const char *name) {
  if (!name) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_backend_open: name is NULL");
  if (!strcmp(name, "host") || !strcmp(name, "eager")) return TC_OK;
  return backend_find(name, NULL) ? TC_OK : tc_last_status();
}

int tc_backend_options(const char *name, tc_option_info *out, int max) {
  static const char *const types[] = {"bool", "int", "float", "string", "enum"};
  if (!name) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_backend_options: name is NULL"), -1;
  pthread_mutex_lock(&registry_lock);
  int n = -1;
  if (registry_ensure_scanned_locked() == TC_OK) {
    const reg_plugin *p = registry_named_locked(name);
    if (!p || !p->loaded) {
      char names[1024];
      registry_names_locked(names, sizeof names);
      core_error(TC_ERR_INVALID_ARGUMENT, "tc_backend_options: %s backend '%s' (known: %s)",
                 p ? "cannot read the options of" : "unknown", name, names);
    } else {
      n = p->api.n_options;
      for (int i = 0; out && i < n && i < max; i++) {
        const tc_option_decl *d = TC_ELEM(tc_option_decl, p->api.options, p->api.option_size, i);
        out[i] = (tc_option_info){.struct_size = sizeof(tc_option_info),
                                  .name = d->name,
                                  .type = d->type >= 0 && d->type <= TC_OPTION_ENUM ? types[d->type] : "?",
                                  .scope = d->scope == TC_OPTION_CONTEXT ? "context" : "compile",
                                  .default_value = d->default_value,
                                  .min = d->min,
                                  .max = d->max,
                                  .values = d->values,
                                  .meaning = d->meaning};
      }
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return n;
}
