/* test_support.h — helpers several test files share: stderr captured while a test body runs (to
 * check what TC_LOGS printed) and whether a backend is available here. Public API only. */
#ifndef TC_TEST_SUPPORT_H
#define TC_TEST_SUPPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc/tc.h"

/* A Criterion suite whose every test runs inside a tc_scope of its own (what a test makes is
 * freed when it ends), with the thread's last error cleared first. Include criterion first. */
#define TC_SCOPED_TEST_SUITE(name)                                                                \
  static tc_scope *name##_scope;                                                                \
  static void name##_setup(void) {                                                              \
    tc_error_clear();                                                                           \
    name##_scope = tc_scope_open();                                                             \
  }                                                                                             \
  static void name##_teardown(void) { tc_scope_close(name##_scope); }                           \
  TestSuite(name, .init = name##_setup, .fini = name##_teardown)

typedef struct stderr_capture {
  int saved;
  FILE *tmp;
} stderr_capture;

static inline stderr_capture stderr_begin(void) {
  fflush(stderr);
  stderr_capture c = {dup(STDERR_FILENO), tmpfile()};
  dup2(fileno(c.tmp), STDERR_FILENO);
  return c;
}

/* What was printed since stderr_begin (caller frees); stderr is restored. */
static inline char *stderr_end(stderr_capture c) {
  fflush(stderr);
  dup2(c.saved, STDERR_FILENO);
  close(c.saved);
  long n = ftell(c.tmp);
  rewind(c.tmp);
  char *text = calloc((size_t)n + 1, 1);
  size_t got = fread(text, 1, (size_t)n, c.tmp);
  text[got] = 0;
  fclose(c.tmp);
  return text;
}

static inline bool test_backend_available(const char *name) {
  tc_backend_info infos[32];
  int n = tc_backend_list(infos, 32);
  for (int i = 0; i < n && i < 32; i++)
    if (!strcmp(infos[i].name, name)) return infos[i].available;
  return false;
}

#endif
