/* tune.c — max-autotune's choice of a kernel variant (tc_kit.h): looked up in the host's disk
 * cache, else timed and stored there. Each plugin says what its variants are and how to time
 * one; the lookup, the logging and the storing are the same for every backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_kit.h"

/* A choice as stored: "variant <n>\n". */
static bool parse_choice(const char *data, size_t n, int32_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, data, n);
  buf[n] = 0;
  return sscanf(buf, "variant %d", out) == 1;
}

int32_t tck_tune_choose(const tc_host_api *h, const tck_tune_request *r, bool *from_cache) {
  *from_cache = false;
  if (r->n <= 0) return 0;
  size_t n = 0;
  char *data = tck_host_cache_load(h, r->who, r->key, r->key_len, "tune", &n);
  int32_t cached;
  bool hit = data && parse_choice(data, n, &cached);
  free(data);
  if (hit)
    for (int32_t i = 0; i < r->n; i++)
      if (r->variants[i] == cached) {
        tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d from the disk cache, nothing timed", r->who,
                r->what, (int)cached);
        *from_cache = true;
        return cached;
      }
  int32_t best = r->variants[0];
  double best_s = -1;
  for (int32_t i = 0; i < r->n; i++) {
    double s = r->measure(r->arg, r->variants[i]);
    tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d: %s%.2f us", r->who, r->what, (int)r->variants[i],
            s < 0 ? "cannot run, " : "", s < 0 ? 0.0 : s * 1e6);
    if (s >= 0 && (best_s < 0 || s < best_s)) best_s = s, best = r->variants[i];
    if (r->stop_when_slower && s >= 0 && s > 2 * best_s && i + 1 < r->n) {
      tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: twice the best; the %d variants after it are not timed",
              r->who, r->what, (int)(r->n - i - 1));
      break;
    }
  }
  if (best_s < 0) return best;
  tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d chosen (%.2f us)", r->who, r->what, (int)best,
          best_s * 1e6);
  char out[32];
  int len = snprintf(out, sizeof out, "variant %d\n", (int)best);
  tck_host_cache_store(h, r->who, r->key, r->key_len, "tune", out, (size_t)len);
  return best;
}
