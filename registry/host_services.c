/* host_services.c — the tc_host_api every plugin receives: errors into the core's per-thread
 * message, logs into TC_LOGS, the plugin's cache directory and option lookup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry_internal.h"

static void host_set_error(void *host_ctx, const char *message) {
  (void)host_ctx;
  /* The plugin returns the status; the message is what the core's caller reports with it. */
  tc_error(TC_ERR_INTERNAL, "%s", message ? message : "(no message)");
}

static const char *host_level_prefix(tc_log_level level) {
  switch (level) {
  case TC_LOG_WARN: return "warning: ";
  case TC_LOG_ERROR: return "error: ";
  default: return "";
  }
}

static void host_log(void *host_ctx, tc_log_level level, const char *category, const char *message) {
  const reg_backend *e = host_ctx;
  if (!category || !message) return;
  const char *who = e && e->be.name[0] ? e->be.name : "plugin";
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

static const char *host_get_option(void *host_ctx, const char *key) {
  (void)host_ctx;
  return options_get(key);
}

void host_services_fill(reg_backend *e) {
  tc_host_api *h = &e->be.host;
  memset(h, 0, sizeof *h);
  h->struct_size = sizeof *h;
  h->abi_major = TC_ABI_MAJOR;
  h->abi_minor = TC_ABI_MINOR;
  h->host_ctx = e;
  h->set_error = host_set_error;
  h->log = host_log;
  h->log_enabled = host_log_enabled;
  h->cache_dir = NULL;
  h->get_option = host_get_option;
}

/* mkdir -p: creates every missing component of path. */
static bool host_mkdir_p(const char *path) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return false;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) && access(buf, W_OK | X_OK) == 0;
}

/* $TC_CACHE_DIR, else $XDG_CACHE_HOME/tc, else $HOME/.cache/tc; "" when caching is off or no
 * base is known. */
static void host_cache_base(char *out, size_t cap) {
  const char *dir = getenv("TC_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  out[0] = 0;
  if (dir && dir[0]) {
    if (strcmp(dir, "off") != 0) snprintf(out, cap, "%s", dir);
  } else if (xdg && xdg[0]) {
    snprintf(out, cap, "%s/tc", xdg);
  } else if (home && home[0]) {
    snprintf(out, cap, "%s/.cache/tc", home);
  }
}

void host_cache_dir_prepare(reg_backend *e) {
  char base[768];
  e->be.host.cache_dir = NULL;
  host_cache_base(base, sizeof base);
  if (!base[0]) {
    tc_logs("cache", "%s: caching is off (TC_CACHE_DIR=off or no cache base)", e->be.name);
    return;
  }
  snprintf(e->cache_dir, sizeof e->cache_dir, "%s/%s", base, e->be.name);
  if (!host_mkdir_p(e->cache_dir)) {
    tc_logs("cache", "%s: cannot create cache directory %s (%s); caching is off", e->be.name, e->cache_dir,
            strerror(errno));
    return;
  }
  e->be.host.cache_dir = e->cache_dir;
}
