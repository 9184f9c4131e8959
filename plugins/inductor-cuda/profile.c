/* profile.c — TC_LOGS=profile: how long each kernel runs on the device.
 *
 * One pair of events brackets each launch (cuBLASLt's product and the epilogue kernel of a
 * MATMUL kernel count as one), and the host waits for the second: the queue loses its
 * asynchrony while profiling, which is the price of per-kernel figures without CUPTI. The
 * figures are logged in the kit's one line format when the executable is freed. */
#include <stdio.h>

#include "icuda.h"

void icuda_profile_open(tc_plugin_ctx *ctx) {
  if (!tck_log_on(ctx->host, "profile")) return;
  const icuda_driver *cu = ctx->cu;
  if (!cu->cuEventCreate) {
    tck_log(ctx->host, TC_LOG_WARN, "profile", "inductor-cuda: TC_LOGS=profile: the driver lacks events");
    return;
  }
  if (cu->cuEventCreate(&ctx->prof_begin, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return;
  if (cu->cuEventCreate(&ctx->prof_end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    cu->cuEventDestroy(ctx->prof_begin);
    return;
  }
  ctx->profiling = true;
}

void icuda_profile_close(tc_plugin_ctx *ctx) {
  if (!ctx->profiling) return;
  ctx->cu->cuEventDestroy(ctx->prof_begin);
  ctx->cu->cuEventDestroy(ctx->prof_end);
  ctx->profiling = false;
}

bool icuda_profile_begin(tc_plugin_ctx *ctx) {
  return ctx->profiling && !ctx->held && ctx->cu->cuEventRecord(ctx->prof_begin, ctx->stream) == CUDA_SUCCESS;
}

void icuda_profile_end(tc_plugin_ctx *ctx, icuda_kernel *k) {
  const icuda_driver *cu = ctx->cu;
  float ms = 0.0f;
  if (cu->cuEventRecord(ctx->prof_end, ctx->stream) != CUDA_SUCCESS) return;
  if (cu->cuEventSynchronize(ctx->prof_end) != CUDA_SUCCESS) return;
  if (cu->cuEventElapsedTime(&ms, ctx->prof_begin, ctx->prof_end) != CUDA_SUCCESS) return;
  tck_launch_stats_add(&k->profile, 1e-3 * (double)ms);
}

void icuda_profile_report(tc_plugin_ctx *ctx, const tc_executable *exe) {
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    const icuda_kernel *k = &exe->kernels[i];
    char suffix[160];
    snprintf(suffix, sizeof suffix, " on the device (%s)", k->plan.name);
    tck_launch_stats_log(ctx->host, exe->name, k->name, &k->profile, suffix);
  }
}
