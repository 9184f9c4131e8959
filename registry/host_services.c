/* host_services.c — the tc_host_api every plugin receives: error objects, logs into TC_LOGS,
 * asynchronous failures, the disk cache (the kit's, one per plugin directory) and a scratch
 * directory. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry_internal.h"
#include "kit/tc_kit.h"

/* ---------------------------------------------------------------- errors */
struct tc_error {
  tc_status code;
  char *message;
};

/* What error_new returns when it cannot allocate: never NULL (a NULL return reads as success),
 * never freed. */
static tc_error host_oom_error = {TC_ERR_OUT_OF_MEMORY, "out of memory (while reporting an error)"};

static tc_error *host_error_new(void *host_ctx, tc_status code, const char *message) {
  (void)host_ctx;
  if (!message) message = "(no message)";
  size_t n = strlen(message) + 1;
  tc_error *e = malloc(sizeof *e + n);
  if (!e) return &host_oom_error;
  e->code = code == TC_OK ? TC_ERR_INTERNAL : code;
  e->message = (char *)(e + 1);
  memcpy(e->message, message, n);
  return e;
}

void host_error_drop(tc_error *err) {
  if (err != &host_oom_error) free(err);
}

static void host_error_free(void *host_ctx, tc_error *err) {
  (void)host_ctx;
  host_error_drop(err);
}

static tc_status host_error_code(void *host_ctx, const tc_error *err) {
  (void)host_ctx;
  return err ? err->code : TC_OK;
}

static const char *host_error_message(void *host_ctx, const tc_error *err) {
  (void)host_ctx;
  return err ? err->message : "";
}

tc_status host_error_status(const tc_error *err) { return err ? err->code : TC_OK; }
const char *host_error_text(const tc_error *err) { return err ? err->message : ""; }

tc_status host_error_take(tc_error *err, const char *prefix) {
  if (!err) return TC_OK;
  tc_status code = err->code;
  /* Plugins name themselves in their messages; do not say the name twice. */
  size_t pl = prefix ? strlen(prefix) : 0;
  bool named = pl && !strncmp(err->message, prefix, pl) && err->message[pl] == ':';
  if (prefix && !named)
    core_error(code, "%s: %s", prefix, err->message);
  else
    core_error(code, "%s", err->message);
  host_error_drop(err);
  return code;
}

static void host_report_async_error(void *host_ctx, uint64_t call_id, tc_error *err) {
  reg_plugin *p = host_ctx;
  if (!err) return;
  if (!p) {
    host_error_drop(err);
    return;
  }
  size_t n = strlen(err->message) + 1;
  reg_async_error *a = malloc(sizeof *a + n);
  if (a) {
    a->call_id = call_id;
    a->code = err->code;
    memcpy(a->message, err->message, n);
    pthread_mutex_lock(&p->async_lock);
    reg_async_error **tail = &p->async_errors;
    while (*tail)
      tail = &(*tail)->next;
    a->next = NULL;
    *tail = a;
    pthread_mutex_unlock(&p->async_lock);
  }
  /* Shown at once too: the failing call may never be waited on. */
  fprintf(stderr, "[tc:errors] %s: call %llu failed on the device: %s\n", p->name, (unsigned long long)call_id,
          err->message);
  host_error_drop(err);
}

/* ---------------------------------------------------------------- logs */
static const char *host_level_prefix(tc_log_level level) {
  switch (level) {
  case TC_LOG_WARN: return "warning: ";
  case TC_LOG_ERROR: return "error: ";
  default: return "";
  }
}

static void host_log(void *host_ctx, tc_log_level level, const char *category, const char *message) {
  const reg_plugin *p = host_ctx;
  if (!category || !message) return;
  const char *who = p && p->name[0] ? p->name : "plugin";
  if (!tc_logs_on(category)) {
    /* A plugin's warnings and errors are shown whatever TC_LOGS says (a validation layer's
     * findings, a cache it cannot write); its info and debug lines only when asked for. */
    if (level >= TC_LOG_WARN) fprintf(stderr, "[tc:%s] %s: %s%s\n", category, who, host_level_prefix(level), message);
    return;
  }
  const char *nl = strchr(message, '\n');
  if (!nl) {
    tc_logs(category, "%s: %s%s", who, host_level_prefix(level), message);
    return;
  }
  /* Multi-line messages (generated source) go out whole: the first line becomes the header. */
  char header[512];
  int len = (int)(nl - message) < 400 ? (int)(nl - message) : 400;
  snprintf(header, sizeof header, "%s: %s%.*s", who, host_level_prefix(level), len, message);
  tc_logs_text(category, header, nl + 1);
}

static bool host_log_enabled(void *host_ctx, const char *category) {
  (void)host_ctx;
  return category && tc_logs_on(category);
}

/* ---------------------------------------------------------------- the disk cache */
struct tc_cache_entry {
  tck_cache_hit hit;
};

/* The namespace of a plugin's entries: its name and version, so a new build never reads an
 * older one's output. */
static void host_cache_ns(const reg_plugin *p, char *out, size_t cap) {
  snprintf(out, cap, "%s %s abi %d", p->name, p->version, TC_ABI_MAJOR);
}

static tc_error *host_cache_get(void *host_ctx, tc_cache_get_args *a) {
  reg_plugin *p = host_ctx;
  if (!a) return host_error_new(host_ctx, TC_ERR_INVALID_ARGUMENT, "cache_get: no arguments");
  a->entry = NULL;
  a->data = NULL;
  a->size = 0;
  a->path = NULL;
  if (!p || !p->cache_dir[0] || !a->key || !a->kind) return NULL;
  char ns[256], err[512] = "";
  host_cache_ns(p, ns, sizeof ns);
  tc_cache_entry *e = calloc(1, sizeof *e);
  if (!e) return host_error_new(host_ctx, TC_ERR_OUT_OF_MEMORY, "cache_get: out of memory");
  bool found = false;
  tc_status s = tck_cache_get(p->cache_dir, ns, a->key, a->key_len, a->kind, &e->hit, &found, err, sizeof err);
  if (err[0]) tc_logs("cache", "%s: %s", p->name, err);
  if (s != TC_OK || !found) {
    free(e);
    return NULL; /* a cache that cannot be read is a miss, never a failure */
  }
  a->entry = e;
  a->data = e->hit.data;
  a->size = e->hit.size;
  a->path = e->hit.path[0] ? e->hit.path : NULL;
  return NULL;
}

static tc_error *host_cache_put(void *host_ctx, const tc_cache_put_args *a) {
  reg_plugin *p = host_ctx;
  if (!a) return host_error_new(host_ctx, TC_ERR_INVALID_ARGUMENT, "cache_put: no arguments");
  if (!p || !p->cache_dir[0] || !a->key || !a->kind) return NULL;
  char ns[256], err[512] = "";
  host_cache_ns(p, ns, sizeof ns);
  tc_status s =
      tck_cache_put(p->cache_dir, ns, a->key, a->key_len, a->kind, a->data, a->size, a->from_path, err, sizeof err);
  /* Not storing costs a later compile, nothing else: a warning, not an error. */
  if (s != TC_OK) fprintf(stderr, "[tc:cache] %s: warning: could not store a cache entry: %s\n", p->name, err);
  return NULL;
}

static void host_cache_release(void *host_ctx, tc_cache_entry *e) {
  (void)host_ctx;
  if (!e) return;
  tck_cache_hit_free(&e->hit);
  free(e);
}

/* ---------------------------------------------------------------- scratch directory */
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static char scratch_path[256];

static int scratch_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

static void scratch_remove(void) {
  /* Only in the process that made it: a forked child's exit must not pull it away. */
  if (scratch_path[0]) nftw(scratch_path, scratch_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static pid_t scratch_owner;

static void scratch_remove_at_exit(void) {
  if (getpid() == scratch_owner) scratch_remove();
}

static const char *host_scratch_dir(void *host_ctx) {
  (void)host_ctx;
  pthread_mutex_lock(&scratch_lock);
  if (!scratch_path[0]) {
    const char *tmp = getenv("TMPDIR");
    char templ[256];
    snprintf(templ, sizeof templ, "%s/tc-scratch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(templ)) {
      snprintf(scratch_path, sizeof scratch_path, "%s", templ);
      scratch_owner = getpid();
      atexit(scratch_remove_at_exit);
    }
  }
  const char *r = scratch_path[0] ? scratch_path : NULL;
  pthread_mutex_unlock(&scratch_lock);
  return r;
}

/* ---------------------------------------------------------------- the table */
void host_services_fill(reg_plugin *p) {
  tc_host_api *h = &p->host;
  memset(h, 0, sizeof *h);
  h->struct_size = sizeof *h;
  h->abi_major = TC_ABI_MAJOR;
  h->abi_minor = TC_ABI_MINOR;
  h->host_ctx = p;
  h->error_new = host_error_new;
  h->error_free = host_error_free;
  h->error_code = host_error_code;
  h->error_message = host_error_message;
  h->report_async_error = host_report_async_error;
  h->log = host_log;
  h->log_enabled = host_log_enabled;
  h->cache_get = host_cache_get;
  h->cache_put = host_cache_put;
  h->cache_release = host_cache_release;
  h->scratch_dir = host_scratch_dir;
}

void host_cache_dir_prepare(reg_plugin *p) {
  char base[768], err[512] = "";
  p->cache_dir[0] = 0;
  tck_cache_base(base, sizeof base);
  if (!base[0]) {
    tc_logs("cache", "%s: caching is off (TC_CACHE_DIR=off or no cache base)", p->name);
    return;
  }
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", base, p->name);
  if (tck_cache_dir_prepare(dir, err, sizeof err) != TC_OK) {
    /* Said once per plugin, whatever TC_LOGS is: running uncached is slower, not wrong. */
    fprintf(stderr, "[tc:cache] %s: warning: caching is off: %s\n", p->name, err);
    return;
  }
  snprintf(p->cache_dir, sizeof p->cache_dir, "%s", dir);
}
