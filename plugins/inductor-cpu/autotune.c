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
  icpu_unit *u;
  icpu_launch_fn launch;
  void **bufs;
  const int64_t *syms;
} tune_run;

static void set_threads(icpu_unit *u, int32_t threads) {
  if (u->cur_threads != threads) unit_set_threads(u, threads);
}

/* The best of a few runs (after one to warm caches and the team), at least 3, up to 20 ms. */
static double measure(void *arg, int32_t threads) {
  tune_run *r = arg;
  set_threads(r->u, threads);
  r->launch(r->bufs, r->syms);
  double best = -1, spent = 0;
  for (int i = 0; i < 50 && (i < 3 || spent < 0.02); i++) {
    double t0 = tck_now_s();
    r->launch(r->bufs, r->syms);
    double t = tck_now_s() - t0;
    spent += t;
    if (best < 0 || t < best) best = t;
  }
  return best;
}

void icpu_autotune_apply(icpu_ctx *ctx, icpu_exe *exe, icpu_unit *u, int32_t kernel, void **bufs, const int64_t *syms) {
  icpu_kernel *k = &exe->kernels[kernel];
  if (!k->pure) return;
  if (!tck_tune_memo_hit(&k->tune, syms, exe->n_syms)) {
    int32_t variants[16], n = 0;
    variants[n++] = ctx->threads;
    for (int32_t t = 1; t < ctx->threads && n < 16; t *= 2) variants[n++] = t;
    char what[256];
    snprintf(what, sizeof what, "%s / %s, variant n: n threads", exe->graph, k->name);
    tck_str key = {0};
    tck_str_printf(&key, "inductor-cpu autotune\nthreads %d\ncompiler %s\nkernel %s\n", (int)ctx->threads,
                   cc_identity(ctx), k->name);
    tck_str_puts(&key, exe->source ? exe->source : "");
    tune_run run = {.u = u, .launch = u->launch[kernel], .bufs = bufs, .syms = syms};
    bool from_cache = false;
    tck_tune_request req = {.who = "inductor-cpu", .what = what, .key = key.data ? key.data : "", .key_len = key.len,
                            .n_syms = exe->n_syms, .syms = syms, .variants = variants, .n = n, .measure = measure,
                            .arg = &run};
    int32_t chosen = key.oom ? ctx->threads : tck_tune_choose(ctx->host, &req, &from_cache);
    tck_str_free(&key);
    /* out of memory: this launch with the choice, tuned again next time */
    if (!tck_tune_memo_keep(&k->tune, syms, exe->n_syms, chosen)) {
      set_threads(u, chosen);
      return;
    }
  }
  set_threads(u, k->tune.variant);
}
