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

/* The lookup itself, on the full key and the full description (sizes included). */
static int32_t choose(const tc_host_api *h, const tck_tune_request *r, const char *key, size_t key_len,
                      const char *what, bool *from_cache) {
  size_t n = 0;
  char *data = tck_host_cache_load(h, r->who, key, key_len, "tune", &n);
  int32_t cached;
  bool hit = data && parse_choice(data, n, &cached);
  free(data);
  if (hit)
    for (int32_t i = 0; i < r->n; i++)
      if (r->variants[i] == cached) {
        tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d from the disk cache, nothing timed", r->who,
                what, (int)cached);
        *from_cache = true;
        return cached;
      }
  int32_t best = r->variants[0];
  double best_s = -1;
  for (int32_t i = 0; i < r->n; i++) {
    double s = r->measure(r->arg, r->variants[i]);
    tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d: %s%.2f us", r->who, what, (int)r->variants[i],
            s < 0 ? "cannot run, " : "", s < 0 ? 0.0 : s * 1e6);
    if (s >= 0 && (best_s < 0 || s < best_s)) best_s = s, best = r->variants[i];
    if (r->stop_when_slower && s >= 0 && s > 2 * best_s && i + 1 < r->n) {
      tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: twice the best; the %d variants after it are not timed",
              r->who, what, (int)(r->n - i - 1));
      break;
    }
  }
  if (best_s < 0) return best;
  tck_log(h, TC_LOG_INFO, "autotune", "%s autotune: %s: variant %d chosen (%.2f us)", r->who, what, (int)best,
          best_s * 1e6);
  char out[32];
  int len = snprintf(out, sizeof out, "variant %d\n", (int)best);
  tck_host_cache_store(h, r->who, key, key_len, "tune", out, (size_t)len);
  return best;
}

int32_t tck_tune_choose(const tc_host_api *h, const tck_tune_request *r, bool *from_cache) {
  *from_cache = false;
  if (r->n <= 0) return 0;
  tck_str key = {0}, what = {0};
  tck_str_printf(&key, "%.*s\nsyms", (int)r->key_len, r->key);
  tck_str_printf(&what, "%s (", r->what);
  for (int32_t s = 0; s < r->n_syms; s++) {
    tck_str_printf(&key, " %lld", (long long)r->syms[s]);
    tck_str_printf(&what, "%ss%d=%lld", s ? ", " : "", (int)s, (long long)r->syms[s]);
  }
  tck_str_puts(&what, r->n_syms ? ")" : "static sizes)");
  int32_t v = key.oom || what.oom ? r->variants[0] : choose(h, r, key.data, key.len, what.data, from_cache);
  tck_str_free(&key);
  tck_str_free(&what);
  return v;
}

bool tck_tune_memo_hit(const tck_tune_memo *m, const int64_t *syms, int32_t n_syms) {
  return m->tuned && m->n_syms == n_syms && (n_syms == 0 || !memcmp(m->syms, syms, (size_t)n_syms * sizeof *syms));
}

bool tck_tune_memo_keep(tck_tune_memo *m, const int64_t *syms, int32_t n_syms, int32_t variant) {
  int64_t *kept = n_syms > 0 ? realloc(m->syms, (size_t)n_syms * sizeof *kept) : m->syms;
  if (n_syms > 0 && !kept) {
    tck_tune_memo_free(m);
    return false;
  }
  if (n_syms > 0) memcpy(kept, syms, (size_t)n_syms * sizeof *syms);
  m->syms = kept;
  m->n_syms = n_syms;
  m->variant = variant;
  m->tuned = true;
  return true;
}

void tck_tune_memo_free(tck_tune_memo *m) {
  free(m->syms);
  *m = (tck_tune_memo){0};
}
