/* text.c — a growable string for the core's readable output (graphs, guards, explain). */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"

void tc_text_printf(tc_text *t, const char *fmt, ...) {
  if (t->oom) return;
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n >= 0 && t->len + (size_t)n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) t->oom = true;
    else t->p = p, t->cap = cap;
  }
  if (n >= 0 && !t->oom) {
    vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap2);
    t->len += (size_t)n;
  }
  va_end(ap2);
}

char *tc_text_take(tc_text *t) {
  if (!t->oom && !t->p) tc_text_printf(t, "%s", "");
  if (t->oom) {
    free(t->p);
    t->p = NULL;
  }
  char *p = t->p;
  *t = (tc_text){0};
  return p;
}
