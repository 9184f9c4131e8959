/* strbuf.c — a growable string for code generation; allocation failure is sticky (oom). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icpu.h"

void str_init(icpu_str *s) { memset(s, 0, sizeof *s); }
void str_free(icpu_str *s) { free(s->data); str_init(s); }

static bool str_reserve(icpu_str *s, size_t extra) {
  if (s->oom) return false;
  if (s->len + extra + 1 <= s->cap) return true;
  size_t cap = s->cap ? s->cap : 4096;
  while (cap < s->len + extra + 1) cap *= 2;
  char *d = realloc(s->data, cap);
  if (!d) { s->oom = true; return false; }
  s->data = d;
  s->cap = cap;
  return true;
}

void str_printf(icpu_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (!str_reserve(s, (size_t)n)) return;
  if ((size_t)n < sizeof tmp) {
    memcpy(s->data + s->len, tmp, (size_t)n + 1);
  } else {
    va_start(ap, fmt);
    vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  s->len += (size_t)n;
}

void str_puts(icpu_str *s, const char *text) {
  size_t n = strlen(text);
  if (!str_reserve(s, n)) return;
  memcpy(s->data + s->len, text, n + 1);
  s->len += n;
}

void str_indent(icpu_str *s, int depth) {
  for (int i = 0; i < depth; i++) str_puts(s, "  ");
}

char *str_take(icpu_str *s) {
  char *d = s->oom ? NULL : s->data;
  if (s->oom) free(s->data);
  if (d == NULL && !s->oom) d = calloc(1, 1);
  str_init(s);
  return d;
}
