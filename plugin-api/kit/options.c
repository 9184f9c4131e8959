/* options.c — reading the options the host hands over, and checking one value against its
 * declaration (the host's check; plugins may reuse it for their own defaults). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tc_kit.h"

const char *tck_option_get(const tc_option *opts, int32_t n, size_t elem_size, const char *name) {
  if (!opts || !name) return NULL;
  for (int32_t i = 0; i < n; i++) {
    const tc_option *o = TC_ELEM(tc_option, opts, elem_size, i);
    if (o->name && strcmp(o->name, name) == 0) return o->value;
  }
  return NULL;
}

static bool parse_int(const char *v, int64_t *out) {
  if (!v || !*v) return false;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end) return false;
  *out = x;
  return true;
}

static int parse_bool(const char *v) { /* 1, 0, or -1 when not a boolean */
  static const char *const yes[] = {"1", "true", "on", "yes"}, *const no[] = {"0", "false", "off", "no"};
  if (!v) return -1;
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) return 1;
    if (strcasecmp(v, no[i]) == 0) return 0;
  }
  return -1;
}

int64_t tck_option_int(const tc_option *opts, int32_t n, size_t elem_size, const char *name, int64_t fallback) {
  int64_t x;
  return parse_int(tck_option_get(opts, n, elem_size, name), &x) ? x : fallback;
}

bool tck_option_bool(const tc_option *opts, int32_t n, size_t elem_size, const char *name, bool fallback) {
  int b = parse_bool(tck_option_get(opts, n, elem_size, name));
  return b < 0 ? fallback : b == 1;
}

/* True when v is one of the '|'-separated values. */
static bool enum_has(const char *values, const char *v) {
  size_t len = strlen(v);
  for (const char *p = values; p && *p;) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && strncmp(p, v, n) == 0) return true;
    p = bar ? bar + 1 : NULL;
  }
  return false;
}

static bool fail(char *err, size_t cap, const char *fmt, ...) TCK_PRINTF(3, 4);
static bool fail(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return false;
}

bool tck_option_check(const tc_option_decl *d, const char *value, char *norm, size_t norm_cap, char *err,
                      size_t cap) {
  if (err && cap) err[0] = 0;
  if (!d || !d->name) return fail(err, cap, "option declaration without a name");
  const char *key = d->name;
  if (!value) return fail(err, cap, "option %s: no value", key);
  const char *out = value;
  switch (d->type) {
  case TC_OPTION_BOOL: {
    int b = parse_bool(value);
    if (b < 0) return fail(err, cap, "option %s: '%s' is not a boolean (0|1|true|false|on|off)", key, value);
    out = b ? "1" : "0";
    break;
  }
  case TC_OPTION_INT: {
    int64_t x;
    if (!parse_int(value, &x)) return fail(err, cap, "option %s: '%s' is not an integer", key, value);
    if (x < d->min || x > d->max)
      return fail(err, cap, "option %s: %lld is out of range [%lld, %lld]", key, (long long)x, (long long)d->min,
                  (long long)d->max);
    break;
  }
  case TC_OPTION_FLOAT: {
    char *end;
    errno = 0;
    (void)strtod(value, &end);
    if (!*value || *end || errno) return fail(err, cap, "option %s: '%s' is not a number", key, value);
    break;
  }
  case TC_OPTION_STRING:
    if (strchr(value, ',')) return fail(err, cap, "option %s: '%s' must not contain ','", key, value);
    break;
  case TC_OPTION_ENUM:
    if (!enum_has(d->values, value))
      return fail(err, cap, "option %s: '%s' is not one of %s", key, value, d->values ? d->values : "(none)");
    break;
  default: return fail(err, cap, "option %s: unknown option type %d", key, d->type);
  }
  if (norm && norm_cap) {
    if (strlen(out) >= norm_cap) return fail(err, cap, "option %s: value '%s' is too long", key, value);
    memcpy(norm, out, strlen(out) + 1);
  }
  return true;
}

const tc_option_decl *tck_option_decl_find(const tc_option_decl *decls, int32_t n, size_t elem_size,
                                           const char *name) {
  if (!decls || !name) return NULL;
  for (int32_t i = 0; i < n; i++) {
    const tc_option_decl *d = TC_ELEM(tc_option_decl, decls, elem_size, i);
    if (d->name && strcmp(d->name, name) == 0) return d;
  }
  return NULL;
}
