/* options.c — plugin options, "key=value" comma-separated ("cpu.threads=2,vulkan.device=0").
 * This thread's options (backend_set_thread_options, set by the core from
 * tc_compile_options.options for the calls that follow) are read first, then $TC_OPTIONS. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

/* Options strings are short; a longer one is cut at the last whole item that fits. */
static _Thread_local char thread_options[4096];

void backend_set_thread_options(const char *options) {
  thread_options[0] = 0;
  if (!options) return;
  size_t n = strlen(options);
  if (n >= sizeof thread_options) {
    n = sizeof thread_options - 1;
    while (n > 0 && options[n] != ',')
      n--;
  }
  memcpy(thread_options, options, n);
  thread_options[n] = 0;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Finds `key` in spec; the last occurrence wins, so later settings override earlier ones.
 * Writes the value into val (trimmed) and returns true when found. */
static bool options_find(const char *spec, const char *key, char *val, size_t cap) {
  bool found = false;
  size_t klen = strlen(key);
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && is_space(*a))
      a++;
    while (b > a && is_space(b[-1]))
      b--;
    const char *eq = memchr(a, '=', (size_t)(b - a));
    if (eq) {
      const char *ke = eq;
      while (ke > a && is_space(ke[-1]))
        ke--;
      if ((size_t)(ke - a) == klen && !memcmp(a, key, klen)) {
        const char *v = eq + 1;
        while (v < b && is_space(*v))
          v++;
        size_t vlen = (size_t)(b - v);
        if (vlen >= cap) vlen = cap - 1;
        memcpy(val, v, vlen);
        val[vlen] = 0;
        found = true;
      }
    }
    p = *end ? end + 1 : end;
  }
  return found;
}

/* Interned values: the host table promises strings valid for the life of the plugin context,
 * while thread options and the environment change underneath. Distinct values are few. */
typedef struct interned {
  struct interned *next;
  char text[];
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static interned *intern_head;

static const char *options_intern(const char *s) {
  pthread_mutex_lock(&intern_lock);
  const char *r = NULL;
  for (interned *i = intern_head; i; i = i->next)
    if (!strcmp(i->text, s)) {
      r = i->text;
      break;
    }
  if (!r) {
    size_t n = strlen(s) + 1;
    interned *i = malloc(sizeof *i + n);
    if (i) {
      memcpy(i->text, s, n);
      i->next = intern_head;
      intern_head = i;
      r = i->text;
    }
  }
  pthread_mutex_unlock(&intern_lock);
  return r;
}

const char *options_get(const char *key) {
  if (!key || !key[0]) return NULL;
  char val[1024];
  if (options_find(thread_options, key, val, sizeof val)) return options_intern(val);
  const char *env = getenv("TC_OPTIONS");
  if (env && options_find(env, key, val, sizeof val)) return options_intern(val);
  return NULL;
}
