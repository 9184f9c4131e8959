/* subnormals.c — vulkan.f32_subnormals: PyTorch keeps f32 subnormals (CPU and CUDA); a Vulkan
 * device may not. One that cannot preserve them (shaderDenormPreserveFloat32 false: NVIDIA's
 * driver on the H200 flushes them in every f32 operation, comparisons included) runs its f32
 * arithmetic emulated in f64 instead (glsl/f32_bits.glsl, f32_ops.glsl; docs/architecture.md).
 *
 *   auto     emulate when the device lacks DenormPreserveFloat32, has shaderFloat64 and
 *            shaderInt64, and is a GPU (or declares DenormPreserveFloat64); native otherwise.
 *            The device type tells a driver that flushes from one that declares no float
 *            controls at all but keeps subnormals: lavapipe declares neither preserve flag and
 *            keeps them (it is a CPU), and so did NVIDIA's driver on the H200 (neither flag,
 *            session 8), which flushes f32 subnormals in every operation. The emulation itself
 *            never makes a subnormal double.
 *   emulate  always (an error on a device without shaderFloat64 and shaderInt64);
 *   native   never: f32 runs as f32, subnormals as the driver treats them. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

void vk_simulate_ftz_setup(tc_plugin_ctx *ctx) {
  const char *e = getenv("TC_VULKAN_SIMULATE_FTZ");
  if (!e || !*e || !strcmp(e, "0")) return;
  ctx->simulate_ftz = true;
  ctx->caps.denorm_preserve[0] = false; /* no DenormPreserve declared for f32 either */
  tck_log(ctx->host, TC_LOG_WARN, "vulkan",
          "vulkan: TC_VULKAN_SIMULATE_FTZ: acting as a driver that flushes f32 subnormals (native f32 code flushes "
          "subnormal loads and results)");
}

bool vk_gen_simulates_ftz(const vk_gen *g) {
  return g->ctx->simulate_ftz && !g->f32_emulate;
}

tc_status vk_f32_subnormals_choose(tc_plugin_ctx *ctx, const char *option, bool *emulate, const char **why) {
  const vk_device_caps *c = &ctx->caps;
  bool can = c->f64 && c->i64;
  if (option && !strcmp(option, "native")) {
    *emulate = false;
    *why = "vulkan.f32_subnormals=native";
    return TC_OK;
  }
  if (option && !strcmp(option, "emulate")) {
    if (!can)
      return vk_err(ctx, TC_ERR_UNSUPPORTED,
                    "vulkan.f32_subnormals=emulate: '%s' lacks shaderFloat64 or shaderInt64, which the emulation "
                    "needs",
                    c->name);
    *emulate = true;
    *why = "vulkan.f32_subnormals=emulate";
    return TC_OK;
  }
  if (c->denorm_preserve[0]) {
    *emulate = false;
    *why = "auto: the device preserves f32 subnormals (DenormPreserveFloat32)";
  } else if (can && (c->denorm_preserve[1] || ctx->simulate_ftz || c->type != VK_PHYSICAL_DEVICE_TYPE_CPU)) {
    *emulate = true;
    *why = "auto: the device cannot preserve f32 subnormals (a GPU without DenormPreserveFloat32): f32 emulated in f64";
  } else {
    *emulate = false;
    *why =
        can ? "auto: a CPU device that declares no subnormal support (lavapipe: it keeps them anyway)"
            : "auto: the device cannot preserve f32 subnormals and lacks shaderFloat64 / shaderInt64 to emulate them";
  }
  return TC_OK;
}
