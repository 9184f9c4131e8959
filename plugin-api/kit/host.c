/* host.c — errors, logs and the query handshake through the host's services. Every wrapper
 * tolerates a NULL host or a host whose table lacks the service (struct_size too small). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_kit.h"

#define HAS(h, field) ((h) && TC_HAS_FIELD(h, tc_host_api, field) && (h)->field)

tc_error *tck_verror(const tc_host_api *h, tc_status code, const char *fmt, va_list ap) {
  if (!HAS(h, error_new)) return NULL;
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  tc_error *err;
  if (n >= 0 && (size_t)n >= sizeof small) {
    char *big = malloc((size_t)n + 1);
    if (big) vsnprintf(big, (size_t)n + 1, fmt, ap2);
    err = h->error_new(h->host_ctx, code, big ? big : small); /* truncated if out of memory */
    free(big);
  } else {
    err = h->error_new(h->host_ctx, code, n >= 0 ? small : fmt);
  }
  va_end(ap2);
  return err;
}

tc_error *tck_error(const tc_host_api *h, tc_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_error *err = tck_verror(h, code, fmt, ap);
  va_end(ap);
  return err;
}

bool tck_log_on(const tc_host_api *h, const char *category) {
  return HAS(h, log_enabled) && h->log_enabled(h->host_ctx, category);
}

void tck_log(const tc_host_api *h, tc_log_level level, const char *category, const char *fmt, ...) {
  if (!HAS(h, log)) return;
  /* Warnings and errors always print; below that, skip the formatting when nobody listens. */
  if (level < TC_LOG_WARN && HAS(h, log_enabled) && !h->log_enabled(h->host_ctx, category)) return;
  tck_str s = {0};
  va_list ap;
  va_start(ap, fmt);
  tck_str_vprintf(&s, fmt, ap);
  va_end(ap);
  char *msg = tck_str_take(&s);
  if (msg) h->log(h->host_ctx, level, category, msg);
  free(msg);
}

tc_error *tck_query_answer(tc_query_args *args, const tc_plugin_api *table) {
  if (!args || !table) return NULL; /* nothing to answer into, nobody to tell */
  const tc_host_api *h = args->struct_size >= TC_STRUCT_SIZE(tc_query_args, host) ? args->host : NULL;
  const char *name = table->name ? table->name : "plugin";
  if (!h) return NULL;
  if (args->abi_major != TC_ABI_MAJOR)
    return tck_error(h, TC_ERR_VERSION, "%s: built for tc ABI %d.x, host speaks %u.%u", name, TC_ABI_MAJOR,
                     args->abi_major, args->abi_minor);
  if (args->struct_size < TC_STRUCT_SIZE(tc_query_args, table_size) || !args->table)
    return tck_error(h, TC_ERR_VERSION, "%s: tc_query_args too small or without a table", name);
  if (args->table_size < TC_STRUCT_SIZE(tc_plugin_api, buffer_read))
    return tck_error(h, TC_ERR_VERSION, "%s: the host's tc_plugin_api (%zu bytes) has no room for the required entries",
                     name, args->table_size);
  size_t n = table->struct_size < sizeof *table ? table->struct_size : sizeof *table;
  if (n > args->table_size) n = args->table_size;
  memcpy(args->table, table, n);
  args->table->struct_size = n;
  return NULL;
}

bool tck_host_cache_on(const tc_host_api *h) { return HAS(h, cache_get) && HAS(h, cache_put) && HAS(h, cache_release); }

void *tck_host_cache_load(const tc_host_api *h, const char *who, const char *key, size_t key_len, const char *kind,
                          size_t *size) {
  if (!tck_host_cache_on(h)) return NULL;
  tc_cache_get_args a = {.struct_size = sizeof a, .key = key, .key_len = key_len, .kind = kind};
  tc_error *e = h->cache_get(h->host_ctx, &a);
  if (e) {
    tck_log(h, TC_LOG_WARN, "cache", "%s cache: %s", who, h->error_message(h->host_ctx, e));
    h->error_free(h->host_ctx, e);
    return NULL;
  }
  if (!a.entry) return NULL;
  void *data = malloc(a.size ? a.size : 1);
  if (data) {
    memcpy(data, a.data, a.size);
    *size = a.size;
  }
  h->cache_release(h->host_ctx, a.entry);
  return data;
}

bool tck_host_cache_store(const tc_host_api *h, const char *who, const char *key, size_t key_len, const char *kind,
                          const void *data, size_t size) {
  if (!tck_host_cache_on(h)) return false;
  tc_cache_put_args a = {.struct_size = sizeof a, .key = key, .key_len = key_len, .kind = kind, .data = data, .size = size};
  tc_error *e = h->cache_put(h->host_ctx, &a);
  if (!e) return true;
  tck_log(h, TC_LOG_WARN, "cache", "%s cache: %s", who, h->error_message(h->host_ctx, e));
  h->error_free(h->host_ctx, e);
  return false;
}

void tck_executable_info_fill(tc_executable_info_args *a, const char *source, bool from_cache, double compile_seconds) {
  if (TC_HAS_FIELD(a, tc_executable_info_args, source_len)) {
    a->source = source;
    a->source_len = source ? strlen(source) : 0;
  }
  if (TC_HAS_FIELD(a, tc_executable_info_args, from_cache)) a->from_cache = from_cache;
  if (TC_HAS_FIELD(a, tc_executable_info_args, compile_seconds)) a->compile_seconds = compile_seconds;
}
