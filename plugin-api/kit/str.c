/* str.c — a growable string for code generation and messages; allocation failure is sticky. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_kit.h"

static bool str_reserve(tck_str *s, size_t extra) {
  if (s->oom) return false;
  if (extra > SIZE_MAX / 2 - s->len) {
    s->oom = true;
    return false;
  }
  if (s->len + extra + 1 <= s->cap) return true;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < s->len + extra + 1) cap *= 2;
  char *d = realloc(s->data, cap);
  if (!d) {
    s->oom = true;
    return false;
  }
  s->data = d;
  s->cap = cap;
  return true;
}

void tck_str_vprintf(tck_str *s, const char *fmt, va_list ap) {
  if (s->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  if (n >= 0 && str_reserve(s, (size_t)n)) {
    if ((size_t)n < sizeof tmp) memcpy(s->data + s->len, tmp, (size_t)n + 1);
    else vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap2);
    s->len += (size_t)n;
  }
  va_end(ap2);
}

void tck_str_printf(tck_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tck_str_vprintf(s, fmt, ap);
  va_end(ap);
}

void tck_str_putn(tck_str *s, const char *text, size_t n) {
  if (!str_reserve(s, n)) return;
  if (n) memcpy(s->data + s->len, text, n);
  s->len += n;
  s->data[s->len] = 0;
}

void tck_str_puts(tck_str *s, const char *text) { tck_str_putn(s, text, strlen(text)); }

void tck_str_indent(tck_str *s, int depth) {
  for (int i = 0; i < depth; i++) tck_str_putn(s, "  ", 2);
}

char *tck_str_take(tck_str *s) {
  char *d = s->data;
  if (s->oom) {
    free(d);
    d = NULL;
  } else if (!d) {
    d = calloc(1, 1);
  }
  *s = (tck_str){0};
  return d;
}

void tck_str_free(tck_str *s) {
  free(s->data);
  *s = (tck_str){0};
}

char *tck_strdup(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s ? s : "", n);
  return d;
}
