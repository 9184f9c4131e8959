/* test_host.c — a host for plugin unit tests: every tc_host_api service, in process, without
 * libtc. Errors are real objects; log lines and asynchronous errors are collected for the test
 * to read; the disk cache is the kit's (namespace "test": this host does not know which plugin
 * calls). Services are thread-safe (one mutex); the readers (tck_test_host_log, ...) are not
 * meant to race with plugin threads. */
#include <dlfcn.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_kit.h"

struct tc_error {
  tc_status code;
  char *message;
};

struct tc_cache_entry {
  tck_cache_hit hit;
};

struct tck_test_host {
  tc_host_api api;
  pthread_mutex_t lock;
  char *cache_dir;
  char *log_categories; /* ",cache,profile," */
  tck_str log, async;
  char *log_text, *async_text; /* what the readers last returned */
  char *taken;                 /* the last message tck_test_host_take returned */
  char *scratch;
};

static char *dup_or_null(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static tc_error *th_error_new(void *hc, tc_status code, const char *message) {
  (void)hc;
  tc_error *e = malloc(sizeof *e);
  if (!e) return NULL;
  e->code = code;
  e->message = dup_or_null(message ? message : "");
  if (!e->message) {
    free(e);
    return NULL;
  }
  return e;
}

static void th_error_free(void *hc, tc_error *e) {
  (void)hc;
  if (!e) return;
  free(e->message);
  free(e);
}

static tc_status th_error_code(void *hc, const tc_error *e) { return e ? e->code : TC_OK; }
static const char *th_error_message(void *hc, const tc_error *e) { return e ? e->message : ""; }

static void th_report_async_error(void *hc, uint64_t call_id, tc_error *err) {
  tck_test_host *h = hc;
  pthread_mutex_lock(&h->lock);
  tck_str_printf(&h->async, "call %llu: %s\n", (unsigned long long)call_id, err ? err->message : "(no error)");
  pthread_mutex_unlock(&h->lock);
  th_error_free(hc, err);
}

static bool th_log_enabled(void *hc, const char *category) {
  tck_test_host *h = hc;
  if (!category || !category[0]) return false;
  pthread_mutex_lock(&h->lock);
  bool on = false;
  if (h->log_categories) {
    size_t n = strlen(category);
    for (const char *p = h->log_categories; (p = strstr(p, category)) != NULL; p++)
      if (p[-1] == ',' && p[n] == ',') {
        on = true;
        break;
      }
  }
  pthread_mutex_unlock(&h->lock);
  return on;
}

static void th_log(void *hc, tc_log_level level, const char *category, const char *message) {
  tck_test_host *h = hc;
  if (level < TC_LOG_WARN && !th_log_enabled(hc, category)) return;
  pthread_mutex_lock(&h->lock);
  tck_str_printf(&h->log, "[%s] %s\n", category ? category : "", message ? message : "");
  pthread_mutex_unlock(&h->lock);
}

static tc_error *th_cache_get(void *hc, tc_cache_get_args *a) {
  tck_test_host *h = hc;
  a->entry = NULL;
  a->data = NULL;
  a->size = 0;
  a->path = NULL;
  if (!h->cache_dir) return NULL;
  tc_cache_entry *e = calloc(1, sizeof *e);
  if (!e) return th_error_new(hc, TC_ERR_OUT_OF_MEMORY, "cache_get: out of memory");
  bool found = false;
  char err[512];
  tc_status s = tck_cache_get(h->cache_dir, "test", a->key, a->key_len, a->kind, &e->hit, &found, err, sizeof err);
  if (s != TC_OK) {
    free(e);
    return th_error_new(hc, s, err);
  }
  if (err[0]) th_log(hc, TC_LOG_INFO, "cache", err);
  if (!found) {
    free(e);
    return NULL;
  }
  a->entry = e;
  a->data = e->hit.data;
  a->size = e->hit.size;
  a->path = e->hit.path;
  return NULL;
}

static tc_error *th_cache_put(void *hc, const tc_cache_put_args *a) {
  tck_test_host *h = hc;
  if (!h->cache_dir) return NULL;
  char err[512];
  tc_status s = tck_cache_put(h->cache_dir, "test", a->key, a->key_len, a->kind, a->data, a->size, a->from_path, err,
                              sizeof err);
  return s == TC_OK ? NULL : th_error_new(hc, s, err);
}

static void th_cache_release(void *hc, tc_cache_entry *e) {
  (void)hc;
  if (!e) return;
  tck_cache_hit_free(&e->hit);
  free(e);
}

static const char *th_scratch_dir(void *hc) {
  tck_test_host *h = hc;
  pthread_mutex_lock(&h->lock);
  if (!h->scratch) {
    char tmpl[] = "/tmp/tc-test-scratch-XXXXXX";
    if (mkdtemp(tmpl)) h->scratch = dup_or_null(tmpl);
  }
  pthread_mutex_unlock(&h->lock);
  return h->scratch;
}

static char *categories_of(const char *list) {
  if (!list) return NULL;
  size_t n = strlen(list);
  char *c = malloc(n + 3);
  if (!c) return NULL;
  snprintf(c, n + 3, ",%s,", list);
  return c;
}

tck_test_host *tck_test_host_new(const char *cache_dir, const char *log_categories) {
  tck_test_host *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  pthread_mutex_init(&h->lock, NULL);
  h->cache_dir = dup_or_null(cache_dir);
  h->log_categories = categories_of(log_categories);
  if ((cache_dir && !h->cache_dir) || (log_categories && !h->log_categories)) {
    tck_test_host_free(h);
    return NULL;
  }
  tc_host_api *a = &h->api;
  a->struct_size = sizeof *a;
  a->abi_major = TC_ABI_MAJOR;
  a->abi_minor = TC_ABI_MINOR;
  a->host_ctx = h;
  a->error_new = th_error_new;
  a->error_free = th_error_free;
  a->error_code = th_error_code;
  a->error_message = th_error_message;
  a->report_async_error = th_report_async_error;
  a->log = th_log;
  a->log_enabled = th_log_enabled;
  a->cache_get = th_cache_get;
  a->cache_put = th_cache_put;
  a->cache_release = th_cache_release;
  a->scratch_dir = th_scratch_dir;
  return h;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void tck_test_host_free(tck_test_host *h) {
  if (!h) return;
  if (h->scratch) nftw(h->scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  free(h->scratch);
  free(h->cache_dir);
  free(h->log_categories);
  tck_str_free(&h->log);
  tck_str_free(&h->async);
  free(h->log_text);
  free(h->async_text);
  free(h->taken);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

const tc_host_api *tck_test_host_api(tck_test_host *h) { return h ? &h->api : NULL; }

void tck_test_host_set_logs(tck_test_host *h, const char *log_categories) {
  char *c = categories_of(log_categories);
  pthread_mutex_lock(&h->lock);
  free(h->log_categories);
  h->log_categories = c;
  pthread_mutex_unlock(&h->lock);
}

/* A stable copy of a collected text (the tck_str may move as plugin threads append). */
static const char *snapshot(tck_test_host *h, const tck_str *s, char **slot) {
  pthread_mutex_lock(&h->lock);
  free(*slot);
  *slot = dup_or_null(s->data ? s->data : "");
  pthread_mutex_unlock(&h->lock);
  return *slot ? *slot : "";
}

const char *tck_test_host_log(tck_test_host *h) { return snapshot(h, &h->log, &h->log_text); }

void tck_test_host_log_clear(tck_test_host *h) {
  pthread_mutex_lock(&h->lock);
  tck_str_free(&h->log);
  pthread_mutex_unlock(&h->lock);
}

const char *tck_test_host_async_errors(tck_test_host *h) { return snapshot(h, &h->async, &h->async_text); }

tc_status tck_test_host_take(tck_test_host *h, tc_error *err, const char **message) {
  free(h->taken);
  h->taken = NULL;
  if (!err) {
    if (message) *message = "";
    return TC_OK;
  }
  tc_status code = err->code;
  h->taken = err->message; /* keep the message, free the rest */
  free(err);
  if (message) *message = h->taken ? h->taken : "";
  return code;
}

/* What a 1.x plugin says through the legacy set_error of tc_query_args (tc_plugin.h). */
typedef struct legacy_refusal {
  bool refused;
  char message[256];
} legacy_refusal;

static void legacy_set_error(void *ctx, const char *message) {
  legacy_refusal *r = ctx;
  r->refused = true;
  snprintf(r->message, sizeof r->message, "%s", message ? message : "");
}

bool tck_test_plugin_open(tck_test_host *h, const char *path, tc_plugin_api *table, void **dl, char *err,
                          size_t cap) {
  if (dl) *dl = NULL;
  if (!h || !path || !table) {
    snprintf(err, cap, "tck_test_plugin_open: NULL argument");
    return false;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(err, cap, "cannot load %s: %s", path, e ? e : "unknown error");
    return false;
  }
  tc_plugin_query_fn query;
  void *sym = dlsym(lib, TC_PLUGIN_ENTRY_SYMBOL);
  memcpy(&query, &sym, sizeof query); /* object pointer to function pointer, pedantic-clean */
  if (!sym) {
    snprintf(err, cap, "%s: no symbol %s", path, TC_PLUGIN_ENTRY_SYMBOL);
    dlclose(lib);
    return false;
  }
  memset(table, 0, sizeof *table);
  legacy_refusal legacy = {0};
  tc_query_args qa = {.struct_size = sizeof qa,
                      .abi_major = h->api.abi_major,
                      .abi_minor = h->api.abi_minor,
                      .legacy_ctx = &legacy,
                      .legacy_set_error = legacy_set_error,
                      .host = &h->api,
                      .table = table,
                      .table_size = sizeof *table};
  tc_error *e = query(&qa);
  if (legacy.refused) {
    /* A 1.x plugin refused the host's major; its return value is a 1.x status, not an error. */
    snprintf(err, cap, "%s: built for ABI 1: %s", path, legacy.message);
    dlclose(lib);
    return false;
  }
  const char *msg;
  tc_status s = tck_test_host_take(h, e, &msg);
  if (s != TC_OK) {
    snprintf(err, cap, "%s: query failed (%s): %s", path, tck_status_name(s), msg);
    dlclose(lib);
    return false;
  }
  if (table->struct_size < TC_STRUCT_SIZE(tc_plugin_api, abi_minor) || table->abi_major != TC_ABI_MAJOR) {
    snprintf(err, cap, "%s: the plugin speaks ABI %u.%u, this host %d.%d", path, table->abi_major, table->abi_minor,
             TC_ABI_MAJOR, TC_ABI_MINOR);
    dlclose(lib);
    return false;
  }
  if (table->struct_size < sizeof *table)
    memset((char *)table + table->struct_size, 0, sizeof *table - table->struct_size);
  if (dl) *dl = lib; /* without dl the plugin stays loaded: its table points into it */
  return true;
}
