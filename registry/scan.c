/* scan.c — where plugins are looked for: each directory of TC_PLUGIN_PATH, then the install's
 * plugin directory next to libtc. Every regular *.so there is a candidate, handed to the loader
 * in lookup order; deciding which of two same-named candidates wins is the registry's job. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "registry_internal.h"

/* Any object inside libtc: dladdr on it names the library file itself. */
static const char scan_anchor = 0;

/* The install's plugin directory: <dir of libtc>/tc/plugins, so a build tree (lib/libtc.so +
 * lib/tc/plugins) and an install (prefix/lib/...) both work. $TC_PLUGIN_DEFAULT_DIR replaces
 * it; "" or "off" leaves it out. */
static bool scan_default_dir(char *out, size_t cap) {
  const char *env = getenv("TC_PLUGIN_DEFAULT_DIR");
  if (env) {
    if (!env[0] || !strcmp(env, "off")) return false;
    snprintf(out, cap, "%s", env);
    return true;
  }
  Dl_info info;
  if (!dladdr(&scan_anchor, &info) || !info.dli_fname || !info.dli_fname[0]) return false;
  char lib[PATH_MAX];
  if (!realpath(info.dli_fname, lib)) snprintf(lib, sizeof lib, "%s", info.dli_fname);
  char *slash = strrchr(lib, '/');
  if (!slash) return false;
  *slash = 0;
  return snprintf(out, cap, "%s/tc/plugins", lib) < (int)cap;
}

static int scan_name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool scan_is_candidate(const char *name) {
  size_t n = strlen(name);
  return name[0] != '.' && n > 3 && !strcmp(name + n - 3, ".so");
}

static tc_status scan_list_push(reg_plugin ***list, int32_t *n, reg_plugin *e) {
  reg_plugin **grown = realloc(*list, (size_t)(*n + 1) * sizeof **list);
  if (!grown) {
    loader_free(e);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_rescan: out of memory listing plugins");
  }
  *list = grown;
  grown[(*n)++] = e;
  return TC_OK;
}

/* Opens every *.so in dir, in name order (readdir's order is arbitrary). One that is not a
 * regular file (a directory, a FIFO, a dangling link) is listed too, as unavailable with the
 * reason (the file check in loader.c), never opened as a plugin. */
static tc_status scan_dir(const char *dir, reg_plugin ***list, int32_t *n) {
  DIR *d = opendir(dir);
  if (!d) {
    tc_logs("plugins", "skipping %s: %s", dir, strerror(errno));
    return TC_OK;
  }
  char **names = NULL;
  size_t n_names = 0;
  tc_status s = TC_OK;
  for (struct dirent *ent; (ent = readdir(d));) {
    if (!scan_is_candidate(ent->d_name)) continue;
    char **grown = realloc(names, (n_names + 1) * sizeof *names);
    char *copy = strdup(ent->d_name);
    if (!grown || !copy) {
      free(copy);
      if (grown) names = grown;
      s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_rescan: out of memory listing %s", dir);
      break;
    }
    names = grown;
    names[n_names++] = copy;
  }
  closedir(d);
  if (n_names) qsort(names, n_names, sizeof *names, scan_name_cmp);
  for (size_t i = 0; i < n_names; i++) {
    char path[1024];
    if (s == TC_OK && snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path) {
      reg_plugin *e = loader_open_file(path);
      s = e ? scan_list_push(list, n, e) : core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_rescan: out of memory");
    }
    free(names[i]);
  }
  free(names);
  return s;
}

tc_status scan_plugins(reg_plugin ***list, int32_t *n) {
  enum { MAX_DIRS = 64 };
  /* dirs[i] as named; real[i] resolved, to skip a directory named twice (or through a link),
   * which would otherwise shadow each of its files by itself. */
  typedef char dir_path[PATH_MAX];
  dir_path *dirs = calloc(2 * MAX_DIRS, sizeof *dirs);
  if (!dirs) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_backend_rescan: out of memory");
  dir_path *real = dirs + MAX_DIRS;
  int n_dirs = 0;
  const char *env = getenv("TC_PLUGIN_PATH");
  for (const char *p = env ? env : ""; *p && n_dirs < MAX_DIRS;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 0 && len < PATH_MAX) {
      memcpy(dirs[n_dirs], p, len);
      dirs[n_dirs++][len] = 0;
    }
    p += len + (end ? 1 : 0);
  }
  if (n_dirs < MAX_DIRS && scan_default_dir(dirs[n_dirs], PATH_MAX)) n_dirs++;

  tc_status s = TC_OK;
  for (int i = 0; i < n_dirs && s == TC_OK; i++) {
    /* memcpy, not snprintf: the compiler cannot see that the two halves never overlap. */
    if (!realpath(dirs[i], real[i])) memcpy(real[i], dirs[i], PATH_MAX);
    bool seen = false;
    for (int j = 0; j < i && !seen; j++)
      seen = !strcmp(real[i], real[j]);
    if (seen) continue;
    tc_logs("plugins", "looking for plugins in %s", dirs[i]);
    s = scan_dir(dirs[i], list, n);
  }
  free(dirs);
  return s;
}
