/* build.c — one unit of an executable's source: its cache key, the disk cache's copy, or a
 * build (cc in a private directory, load, offer to the cache). Building reads nothing of a
 * context or a kernel list, so the background FULL build (tiered.c) runs it after compile has
 * returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icpu.h"

/* Takes a host service's error: logs it under "cache" (a cache failure only costs a compile). */
static void cache_trouble(const tc_host_api *h, tc_error *e, const char *what) {
  if (tck_log_on(h, "cache"))
    tck_log(h, TC_LOG_INFO, "cache", "inductor-cpu: %s: %s", what, h->error_message(h->host_ctx, e));
  h->error_free(h->host_ctx, e);
}

char *build_key(icpu_ctx *ctx, const icpu_exe *exe, icpu_tier tier, bool blas, size_t *len_out) {
  /* Everything the object depends on: the source, the compiler, its flags (the tier's -O). */
  tck_str key = {0};
  tck_str_puts(&key, exe->source);
  tck_str_printf(&key, "\n/* compiler */\n%s\n/* flags */\n%s\n", cc_identity(ctx), cc_flags(tier, blas));
  if (key.oom) {
    tck_str_free(&key);
    return NULL;
  }
  *len_out = key.len;
  return tck_str_take(&key);
}

bool build_load_cached(icpu_ctx *ctx, const icpu_exe *exe, icpu_tier tier, const char *key, size_t key_len,
                       icpu_unit **out) {
  const tc_host_api *h = ctx->host;
  *out = NULL;
  if (!icpu_host_has_cache(h)) return false;
  tc_cache_get_args get = {.struct_size = sizeof get, .key = key, .key_len = key_len, .kind = "so"};
  tc_error *e = h->cache_get(h->host_ctx, &get);
  if (e) {
    cache_trouble(h, e, "disk cache read failed");
    return false;
  }
  if (!get.entry) return false;
  if (get.path && get.path[0]) {
    /* The path opens exactly the verified bytes; once mapped, the entry can go. */
    char err[1024];
    const char *paths[1] = {get.path};
    if (unit_load(exe, ctx->threads, tier, paths, 1, NULL, out, err, sizeof err) != TC_OK)
      icpu_log(ctx, "cache", "inductor-cpu: a cached object of %s does not load (%s), rebuilding", exe->graph, err);
  }
  h->cache_release(h->host_ctx, get.entry);
  return *out != NULL;
}

/* A unit whose kernels' text is smaller than this many bytes is built in one part: each part
 * costs a parse of the prelude and a link of its own, worth it only around a big enough share
 * (attn_block's kernels are 1.3-4.5 KB each, 24 KB in all). */
#define ICPU_PART_MIN_BYTES 4096

/* Splits exe's kernels into at most max_parts parts of about equal text (the compiler's time
 * follows it): the largest first, each to the lightest part so far. part_of[k]; the count. */
static int32_t parts_plan(const icpu_exe *exe, int32_t max_parts, int32_t *part_of) {
  const size_t *at = exe->kernel_at;
  const size_t total = at[exe->n_kernels] - at[0];
  int64_t n = max_parts < exe->n_kernels ? max_parts : exe->n_kernels;
  if (n > (int64_t)(total / ICPU_PART_MIN_BYTES)) n = (int64_t)(total / ICPU_PART_MIN_BYTES);
  for (int32_t k = 0; k < exe->n_kernels; k++)
    part_of[k] = 0;
  size_t *load = n > 1 ? calloc((size_t)n, sizeof *load) : NULL;
  bool *placed = n > 1 ? calloc((size_t)exe->n_kernels, sizeof *placed) : NULL;
  if (!load || !placed) {
    free(load);
    free(placed);
    return 1;
  }
  for (int32_t done = 0; done < exe->n_kernels; done++) {
    int32_t big = -1;
    for (int32_t k = 0; k < exe->n_kernels; k++)
      if (!placed[k] && (big < 0 || at[k + 1] - at[k] > at[big + 1] - at[big])) big = k;
    int32_t light = 0;
    for (int32_t p = 1; p < n; p++)
      if (load[p] < load[light]) light = p;
    placed[big] = true;
    part_of[big] = light;
    load[light] += at[big + 1] - at[big];
  }
  free(load);
  free(placed);
  return (int32_t)n; /* n <= kernels: the first n kernels placed went to n empty parts */
}

/* Part p's translation unit: the prelude, its kernels in the unit's order, tc_module_init. */
static char *part_source(const icpu_exe *exe, const int32_t *part_of, int32_t p) {
  const size_t *at = exe->kernel_at;
  tck_str s = {0};
  tck_str_putn(&s, exe->source, at[0]);
  for (int32_t k = 0; k < exe->n_kernels; k++)
    if (part_of[k] == p) tck_str_putn(&s, exe->source + at[k], at[k + 1] - at[k]);
  tck_str_puts(&s, exe->source + at[exe->n_kernels]);
  return tck_str_take(&s);
}

/* Compiles the parts at once, each into dir/part<i>.so (paths[i]). */
static tc_status build_parts(const icpu_build_job *job, const icpu_exe *exe, const char *dir, int32_t n,
                             const int32_t *part_of, bool link_blas, char (*paths)[4200], char *err, size_t cap) {
  icpu_cc_run *runs = calloc((size_t)n, sizeof *runs);
  if (!runs) {
    snprintf(err, cap, "out of memory");
    return TC_ERR_OUT_OF_MEMORY;
  }
  tc_status st = TC_OK;
  int32_t started = 0;
  for (; started < n; started++) {
    snprintf(paths[started], sizeof paths[0], "%s/part%d.so", dir, (int)started);
    char *src = part_source(exe, part_of, started);
    if (!src) {
      snprintf(err, cap, "out of memory");
      st = TC_ERR_OUT_OF_MEMORY;
      break;
    }
    st = cc_start(job->cc, src, job->tier, link_blas, paths[started], &runs[started], err, cap);
    free(src);
    if (st != TC_OK) break; /* nothing of this one left behind */
  }
  /* every compiler started is waited for, whatever failed (the first failure is the message) */
  for (int32_t i = 0; i < started; i++) {
    char why[4096];
    tc_status r = cc_finish(&runs[i], why, sizeof why);
    if (r != TC_OK && st == TC_OK) {
      st = r;
      snprintf(err, cap, "%s", why);
    }
  }
  free(runs);
  return st;
}

tc_status build_unit(const icpu_build_job *job, const icpu_exe *exe, icpu_unit **out, char *err, size_t cap) {
  const tc_host_api *h = job->host;
  *out = NULL;
  const char *scratch =
      h && TC_HAS_FIELD(h, tc_host_api, scratch_dir) && h->scratch_dir ? h->scratch_dir(h->host_ctx) : NULL;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tc-icpu-XXXXXX", scratch && scratch[0] ? scratch : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(err, cap, "cannot create a directory like %s", dir);
    return TC_ERR_COMPILE;
  }
  /* A stored unit is one object (one cache entry); a build for this process only may be cut
   * into parts compiled at once. */
  int32_t *part_of = calloc((size_t)(exe->n_kernels > 0 ? exe->n_kernels : 1), sizeof *part_of);
  int32_t n = part_of && !job->store && job->jobs > 1 ? parts_plan(exe, job->jobs, part_of) : 1;
  char(*paths)[4200] = part_of ? calloc((size_t)n, sizeof *paths) : NULL;
  /* A build for this process only needs no -lopenblas when the library is loaded global (a
   * stored one does: the next process loads it directly). */
  const bool link_blas = job->blas && (job->store || !unit_blas_global());
  tc_status st = TC_OK;
  if (!paths) {
    snprintf(err, cap, "out of memory");
    st = TC_ERR_OUT_OF_MEMORY;
  } else if (n == 1) {
    snprintf(paths[0], sizeof paths[0], "%s/unit.so", dir);
    st = cc_compile(job->cc, exe->source, job->tier, link_blas, paths[0], err, cap);
  } else {
    st = build_parts(job, exe, dir, n, part_of, link_blas, paths, err, cap);
  }
  const char **list = st == TC_OK ? calloc((size_t)n, sizeof *list) : NULL;
  for (int32_t i = 0; list && i < n; i++)
    list[i] = paths[i];
  if (st == TC_OK && !list) {
    snprintf(err, cap, "out of memory");
    st = TC_ERR_OUT_OF_MEMORY;
  }
  if (st == TC_OK) st = unit_load(exe, job->threads, job->tier, list, n, n > 1 ? part_of : NULL, out, err, cap);
  free(list);
  if (st == TC_OK && job->store && icpu_host_has_cache(h)) {
    tc_cache_put_args put = {
        .struct_size = sizeof put, .key = job->key, .key_len = job->key_len, .kind = "so", .from_path = paths[0]};
    tc_error *e = h->cache_put(h->host_ctx, &put);
    if (e) cache_trouble(h, e, "disk cache write failed");
  }
  for (int32_t i = 0; paths && i < n; i++)
    unlink(paths[i]);
  rmdir(dir);
  free(paths);
  free(part_of);
  return st;
}
