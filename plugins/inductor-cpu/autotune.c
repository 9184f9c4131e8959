/* autotune.c — max-autotune on inductor-cpu: each kernel's thread count. The unit's parallel
 * regions take their team size from tc_nthreads (tc_module_init sets it), so a kernel can run
 * with any count up to cpu.threads without recompiling. At a kernel's first launch with given
 * symbol values the candidates (cpu.threads, then 1, 2, 4, ... below it) are timed on the
 * launch's own buffers (a kernel whose runs may repeat: no INOUT buffer, no accumulator) and the
 * fastest is kept, in the kernel and in the disk cache (the kit's tck_tune_choose), so a second
 * process takes it without timing. Memory-bound kernels often run best on fewer threads than
 * the cores, and small ones on one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icpu.h"

typedef struct tune_run {
  icpu_exe *exe;
  icpu_kernel *k;
  void **bufs;
  const int64_t *syms;
} tune_run;

static void set_threads(icpu_exe *exe, int32_t threads) {
  if (exe->cur_threads == threads || !exe->module_init) return;
  exe->module_init(threads);
  exe->cur_threads = threads;
}

/* The best of a few runs (after one to warm caches and the team), at least 3, up to 20 ms. */
static double measure(void *arg, int32_t threads) {
  tune_run *r = arg;
  set_threads(r->exe, threads);
  r->k->launch(r->bufs, r->syms);
  double best = -1, spent = 0;
  for (int i = 0; i < 50 && (i < 3 || spent < 0.02); i++) {
    double t0 = tck_now_s();
    r->k->launch(r->bufs, r->syms);
    double t = tck_now_s() - t0;
    spent += t;
    if (best < 0 || t < best) best = t;
  }
  return best;
}

static bool same_syms(const icpu_exe *exe, const icpu_kernel *k, const int64_t *syms) {
  return k->tuned && (exe->n_syms == 0 || !memcmp(k->tuned_syms, syms, (size_t)exe->n_syms * sizeof *syms));
}

void icpu_autotune_apply(icpu_ctx *ctx, icpu_exe *exe, icpu_kernel *k, void **bufs, const int64_t *syms) {
  if (!k->pure) return;
  if (!same_syms(exe, k, syms)) {
    int32_t variants[16], n = 0;
    variants[n++] = ctx->threads;
    for (int32_t t = 1; t < ctx->threads && n < 16; t *= 2) variants[n++] = t;
    tck_str key = {0}, what = {0};
    tck_str_printf(&key, "inductor-cpu autotune\nthreads %d\ncompiler %s\nkernel %s\nsyms", (int)ctx->threads,
                   cc_identity(ctx), k->name);
    tck_str_printf(&what, "%s / %s (variant n: n threads", exe->graph, k->name);
    for (int32_t s = 0; s < exe->n_syms; s++) {
      tck_str_printf(&key, " %lld", (long long)syms[s]);
      tck_str_printf(&what, "; s%d=%lld", (int)s, (long long)syms[s]);
    }
    tck_str_puts(&what, ")");
    tck_str_puts(&key, "\n");
    tck_str_puts(&key, exe->source ? exe->source : "");
    tune_run run = {.exe = exe, .k = k, .bufs = bufs, .syms = syms};
    bool from_cache = false;
    int32_t chosen = ctx->threads;
    if (!key.oom && !what.oom) {
      tck_tune_request req = {.who = "inductor-cpu", .what = what.data, .key = key.data, .key_len = key.len,
                              .variants = variants, .n = n, .measure = measure, .arg = &run};
      chosen = tck_tune_choose(ctx->host, &req, &from_cache);
    }
    tck_str_free(&key);
    tck_str_free(&what);
    int64_t *kept = exe->n_syms ? realloc(k->tuned_syms, (size_t)exe->n_syms * sizeof *kept) : NULL;
    if (exe->n_syms && !kept) return; /* out of memory: this launch as it is, tuned again next time */
    if (exe->n_syms) memcpy(kept, syms, (size_t)exe->n_syms * sizeof *syms);
    k->tuned_syms = kept;
    k->threads = chosen;
    k->tuned = true;
  }
  set_threads(exe, k->threads);
}
