/* log.c — TC_LOGS categories, in the spirit of TORCH_LOGS: TC_LOGS=graph,guards,recompiles
 * (or "all"). Lines go to stderr prefixed with their category. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"

static pthread_once_t logs_once = PTHREAD_ONCE_INIT;
static char logs_spec[512];

/* The categories tc itself logs under; plugins add their own (queue, profile, ...). perf_hints:
 * what costs speed and what the user can do about it (graph breaks, recompiles over changing
 * sizes, nodes a backend declined), as torch's TORCH_LOGS=perf_hints. */
static const char *const logs_known[] = {"graph",    "guards", "recompiles", "graph_breaks", "fusion",
                                         "schedule", "output_code", "cache",  "errors",       "fallback",
                                         "init",     "plugins", "queue",      "profile",      "aot",
                                         "autotune", "perf_hints", "all"};

static bool logs_is_known(const char *name, size_t n) {
  for (size_t i = 0; i < sizeof logs_known / sizeof logs_known[0]; i++)
    if (strlen(logs_known[i]) == n && !strncmp(logs_known[i], name, n)) return true;
  return false;
}

static void logs_init(void) {
  const char *env = getenv("TC_LOGS");
  if (!env) return;
  snprintf(logs_spec, sizeof logs_spec, ",%s,", env);
  /* A misspelt category would silently show nothing: say so once, with the valid names (plugins
   * may log categories of their own, so it is a warning, not an error); TC_LOGS=help lists them. */
  char valid[512] = "";
  for (size_t i = 0; i < sizeof logs_known / sizeof logs_known[0]; i++)
    snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "", logs_known[i]);
  bool help = false;
  for (const char *p = env; *p;) {
    size_t n = strcspn(p, ",");
    if (n == 4 && !strncmp(p, "help", 4))
      help = true;
    else if (n && !logs_is_known(p, n))
      fprintf(stderr, "[tc] TC_LOGS: '%.*s' is not a category tc logs under (valid: %s, help; a plugin may add its own, "
                      "so it is kept)\n",
              (int)n, p, valid);
    p += n + (p[n] == ',');
  }
  if (help) fprintf(stderr, "[tc] TC_LOGS categories (comma-separated): %s; a plugin may add its own\n", valid);
}

void tc_logs_init(void) { pthread_once(&logs_once, logs_init); }

bool tc_logs_on(const char *category) {
  tc_logs_init();
  if (!logs_spec[0]) return false;
  if (strstr(logs_spec, ",all,")) return true;
  char key[96];
  snprintf(key, sizeof key, ",%s,", category);
  return strstr(logs_spec, key) != NULL;
}

void tc_logs(const char *category, const char *fmt, ...) {
  if (!tc_logs_on(category)) return;
  char line[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* Multi-line messages (graphs, generated code) keep the prefix on the first line only. */
  flockfile(stderr);
  fprintf(stderr, "[tc:%s] %s\n", category, line);
  funlockfile(stderr);
}

char *tc_shape_str(char *buf, size_t cap, int rank, const int64_t *sizes) {
  if (rank == 0) {
    snprintf(buf, cap, "[]");
    return buf;
  }
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < rank && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, i ? "x%lld" : "%lld", (long long)sizes[i]);
  return buf;
}

void tc_logs_text(const char *category, const char *header, const char *text) {
  if (!tc_logs_on(category)) return;
  flockfile(stderr);
  fprintf(stderr, "[tc:%s] %s\n%s", category, header, text ? text : "");
  if (text && text[0] && text[strlen(text) - 1] != '\n') fputc('\n', stderr);
  funlockfile(stderr);
}

double tc_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
