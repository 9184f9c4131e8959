/* options.c — backend options as data. Users write "key=value" items, comma-separated, in
 * tc_compile_options.options or $TC_OPTIONS; they are parsed once into a tc_options, checked
 * against the table each plugin declares (name, type, default, range, meaning), and handed to
 * the plugin explicitly: context-scope options to init (contexts are keyed by them),
 * compile-scope options to compile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"
#include "kit/tc_kit.h"

typedef struct option_item {
  char *key;
  char *value;
  bool from_env; /* $TC_OPTIONS rather than the call's own text */
} option_item;

struct tc_options {
  option_item *items;
  int32_t n;
};

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static char *dup_trimmed(const char *a, const char *b) {
  while (a < b && is_space(*a))
    a++;
  while (b > a && is_space(b[-1]))
    b--;
  size_t n = (size_t)(b - a);
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, a, n);
    s[n] = 0;
  }
  return s;
}

/* Sets key=value; a later setting of a key replaces the earlier one. Takes key and value. */
static bool options_set(tc_options *o, char *key, char *value, bool from_env) {
  for (int32_t i = 0; i < o->n; i++)
    if (!strcmp(o->items[i].key, key)) {
      free(o->items[i].value);
      free(key);
      o->items[i].value = value;
      o->items[i].from_env = from_env;
      return true;
    }
  option_item *grown = realloc(o->items, (size_t)(o->n + 1) * sizeof *grown);
  if (!grown) {
    free(key);
    free(value);
    return false;
  }
  o->items = grown;
  o->items[o->n++] = (option_item){key, value, from_env};
  return true;
}

static tc_status options_add_text(tc_options *o, const char *text, bool from_env) {
  const char *where = from_env ? "TC_OPTIONS" : "tc_compile_options.options";
  for (const char *p = text; p && *p;) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    char *item = dup_trimmed(p, end);
    if (!item) return core_error(TC_ERR_OUT_OF_MEMORY, "options: out of memory");
    if (item[0]) {
      if (!eq) {
        tc_status s = core_error(TC_ERR_INVALID_ARGUMENT, "%s: item '%s' is not key=value", where, item);
        free(item);
        return s;
      }
      char *key = dup_trimmed(p, eq), *value = dup_trimmed(eq + 1, end);
      if (!key || !value || !key[0]) {
        tc_status s = key && value ? core_error(TC_ERR_INVALID_ARGUMENT, "%s: item '%s' has no key", where, item)
                                   : core_error(TC_ERR_OUT_OF_MEMORY, "options: out of memory");
        free(key);
        free(value);
        free(item);
        return s;
      }
      if (!options_set(o, key, value, from_env)) {
        free(item);
        return core_error(TC_ERR_OUT_OF_MEMORY, "options: out of memory");
      }
    }
    free(item);
    p = *end ? end + 1 : end;
  }
  return TC_OK;
}

tc_options *options_parse(const char *text) {
  tc_options *o = calloc(1, sizeof *o);
  if (!o) return core_error_null(TC_ERR_OUT_OF_MEMORY, "options: out of memory");
  if (options_add_text(o, getenv("TC_OPTIONS"), true) != TC_OK || options_add_text(o, text, false) != TC_OK) {
    options_free(o);
    return NULL;
  }
  return o;
}

void options_free(tc_options *o) {
  if (!o) return;
  for (int32_t i = 0; i < o->n; i++) {
    free(o->items[i].key);
    free(o->items[i].value);
  }
  free(o->items);
  free(o);
}

static const option_item *options_find(const tc_options *o, const char *key) {
  for (int32_t i = 0; o && i < o->n; i++)
    if (!strcmp(o->items[i].key, key)) return &o->items[i];
  return NULL;
}

static const tc_option_decl *decl_at(const reg_plugin *p, int32_t i) {
  return TC_ELEM(tc_option_decl, p->api.options, p->api.option_size, i);
}

static const tc_option_decl *decl_named(const reg_plugin *p, const char *key) {
  for (int32_t i = 0; i < p->api.n_options; i++)
    if (decl_at(p, i)->name && !strcmp(decl_at(p, i)->name, key)) return decl_at(p, i);
  return NULL;
}

/* "cpu.threads, cpu.cc" */
static void decl_names(const reg_plugin *p, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = 0;
  for (int32_t i = 0; i < p->api.n_options && used < cap; i++) {
    int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", decl_at(p, i)->name);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!buf[0]) snprintf(buf, cap, "none: it declares no options");
}

/* ---------------------------------------------------------------- validation */
typedef struct prefix_search {
  const char *prefix;
  size_t len;
  const reg_plugin *found;
  char known[512];
} prefix_search;

static void prefix_visit(const reg_plugin *p, void *user) {
  prefix_search *s = user;
  const char *pre = p->api.option_prefix;
  if (!pre || !pre[0]) return;
  if (!s->found && strlen(pre) == s->len && !strncmp(pre, s->prefix, s->len)) s->found = p;
  size_t used = strlen(s->known);
  if (!strstr(s->known, pre) && used < sizeof s->known)
    snprintf(s->known + used, sizeof s->known - used, "%s%s (%s)", used ? ", " : "", pre, p->name);
}

tc_status options_validate(const tc_options *opts, const tc_backend *be) {
  for (int32_t i = 0; opts && i < opts->n; i++) {
    const option_item *it = &opts->items[i];
    const char *where = it->from_env ? "TC_OPTIONS" : "option";
    const char *dot = strchr(it->key, '.');
    if (!dot || dot == it->key || !dot[1])
      return core_error(TC_ERR_INVALID_ARGUMENT, "%s '%s': keys are <backend prefix>.<name>, e.g. cpu.threads", where,
                      it->key);
    prefix_search s = {.prefix = it->key, .len = (size_t)(dot - it->key)};
    if (be && be->plugin && be->plugin->api.option_prefix && strlen(be->plugin->api.option_prefix) == s.len &&
        !strncmp(be->plugin->api.option_prefix, it->key, s.len))
      s.found = be->plugin;
    else
      registry_each_plugin(prefix_visit, &s);
    if (!s.found) {
      /* The environment may name backends this machine lacks; the call's own text may not. */
      if (it->from_env) continue;
      if (!s.known[0]) registry_each_plugin(prefix_visit, &s);
      return core_error(TC_ERR_INVALID_ARGUMENT, "option '%s': no backend takes options with prefix '%.*s' (prefixes: %s)",
                      it->key, (int)s.len, it->key, s.known[0] ? s.known : "none");
    }
    /* $TC_OPTIONS serves every backend: its keys are checked by the backend they belong to. */
    if (it->from_env && (!be || s.found != be->plugin)) continue;
    const tc_option_decl *d = decl_named(s.found, it->key);
    if (!d) {
      char names[512];
      decl_names(s.found, names, sizeof names);
      return core_error(TC_ERR_INVALID_ARGUMENT, "%s '%s': backend '%s' has no such option (valid keys: %s)", where,
                      it->key, s.found->name, names);
    }
    char norm[256], err[512];
    if (!tck_option_check(d, it->value, norm, sizeof norm, err, sizeof err)) {
      char names[512];
      decl_names(s.found, names, sizeof names);
      return core_error(TC_ERR_INVALID_ARGUMENT, "%s %s=%s: backend '%s': %s (valid keys: %s)", where, it->key, it->value,
                      s.found->name, err, names);
    }
  }
  return TC_OK;
}

/* ---------------------------------------------------------------- handing options over */
/* The value option d takes from opts: the user's, else the declared default, normalized into
 * norm when it checks out. NULL when neither is set. */
static const char *option_value(const tc_options *opts, const tc_option_decl *d, char *norm, size_t cap, bool *set) {
  char err[512];
  const option_item *it = options_find(opts, d->name);
  *set = it != NULL;
  const char *v = it ? it->value : d->default_value;
  return v && tck_option_check(d, v, norm, cap, err, sizeof err) ? norm : v;
}

tc_status options_for_scope(const tc_options *opts, const reg_plugin *p, int32_t scope, tc_option **out, int32_t *n) {
  *out = NULL;
  *n = 0;
  int32_t count = 0;
  size_t strings = 0;
  char norm[256];
  bool set;
  /* Two passes over the table: sizes first, then one block holding the array and its strings. */
  for (int32_t i = 0; i < p->api.n_options; i++) {
    const tc_option_decl *d = decl_at(p, i);
    if (d->scope != scope || !d->name) continue;
    const char *v = option_value(opts, d, norm, sizeof norm, &set);
    strings += strlen(d->name) + 1 + (v ? strlen(v) + 1 : 0);
    count++;
  }
  if (!count) return TC_OK;
  tc_option *o = malloc((size_t)count * sizeof *o + strings);
  if (!o) return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory for its options", p->name);
  char *text = (char *)(o + count);
  int32_t k = 0;
  for (int32_t i = 0; i < p->api.n_options; i++) {
    const tc_option_decl *d = decl_at(p, i);
    if (d->scope != scope || !d->name) continue;
    const char *v = option_value(opts, d, norm, sizeof norm, &set);
    o[k] = (tc_option){.struct_size = sizeof(tc_option), .name = text, .value = NULL, .set = set};
    size_t len = strlen(d->name) + 1;
    memcpy(text, d->name, len);
    text += len;
    if (v) {
      len = strlen(v) + 1;
      memcpy(text, v, len);
      o[k].value = text;
      text += len;
    }
    k++;
  }
  *out = o;
  *n = count;
  return TC_OK;
}

void options_describe(const tc_options *opts, const char *prefix, char *buf, size_t cap) {
  size_t used = 0, pl = prefix ? strlen(prefix) : 0;
  buf[0] = 0;
  for (int32_t i = 0; opts && i < opts->n && used < cap; i++) {
    const option_item *it = &opts->items[i];
    if (pl && (strncmp(it->key, prefix, pl) || it->key[pl] != '.')) continue;
    int w = snprintf(buf + used, cap - used, "%s%s=%s", used ? "," : "", it->key, it->value);
    if (w < 0) break;
    used += (size_t)w;
  }
}

void options_context_key(const tc_options *opts, const reg_plugin *p, char *buf, size_t cap) {
  size_t used = 0;
  char norm[256], err[512];
  buf[0] = 0;
  for (int32_t i = 0; i < p->api.n_options && used < cap; i++) {
    const tc_option_decl *d = decl_at(p, i);
    if (d->scope != TC_OPTION_CONTEXT || !d->name) continue;
    const option_item *it = options_find(opts, d->name);
    if (!it) continue;
    const char *v = tck_option_check(d, it->value, norm, sizeof norm, err, sizeof err) ? norm : it->value;
    /* The default, spelled out, is the default's context. */
    char dnorm[256];
    if (d->default_value && tck_option_check(d, d->default_value, dnorm, sizeof dnorm, err, sizeof err) &&
        !strcmp(dnorm, v))
      continue;
    int w = snprintf(buf + used, cap - used, "%s%s=%s", used ? "," : "", d->name, v);
    if (w < 0) break;
    used += (size_t)w;
  }
}
