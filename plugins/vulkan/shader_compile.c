/* shader_compile.c — GLSL to SPIR-V with shaderc, linked into the plugin (statically where
 * the static libraries exist, so a GPU machine needs no shaderc runtime). Called only on a
 * disk-cache miss: a warm start never compiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shaderc/shaderc.h>

#include "vk_internal.h"

tc_status vk_shader_compile(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *name, const char *glsl,
                            uint32_t **spirv, size_t *n_words, vk_fail *f) {
  *spirv = NULL;
  *n_words = 0;
  /* One compiler per context, made on the first miss under the lock (a process's first compile
   * takes 70-100 ms, glslang's set-up, once). Compiles run unlocked, one per kernel on
   * compile's threads: shaderc_compile_into_spv takes the compiler const and "may be safely
   * called from multiple threads without explicit synchronization" (shaderc.h). */
  pthread_mutex_lock(&ctx->lock);
  if (!ctx->shaderc_compiler) ctx->shaderc_compiler = shaderc_compiler_initialize();
  shaderc_compiler_t compiler = ctx->shaderc_compiler;
  pthread_mutex_unlock(&ctx->lock);
  if (!compiler) return vk_fail_set(f, TC_ERR_UNAVAILABLE, "vulkan compile '%s': shaderc_compiler_initialize failed", name);
  shaderc_compile_options_t opts = shaderc_compile_options_initialize();
  if (!opts) return vk_fail_set(f, TC_ERR_OUT_OF_MEMORY, "vulkan compile '%s': shaderc_compile_options_initialize failed", name);
  bool v12 = ctx->caps.api_version >= VK_API_VERSION_1_2;
  shaderc_compile_options_set_target_env(opts, shaderc_target_env_vulkan,
                                         v12 ? shaderc_env_version_vulkan_1_2 : shaderc_env_version_vulkan_1_1);
  shaderc_compile_options_set_target_spirv(opts, v12 ? shaderc_spirv_version_1_5 : shaderc_spirv_version_1_3);
  /* spirv-opt off by default: the driver optimizes the SPIR-V itself, and spirv-opt's own pass
   * over an unrolled GEMM took seconds (mlp's first call: 1.3-5.9 s with it, 0.12 s without on
   * the H200, at the same TF/s). vulkan.spirv_opt=1 turns it on for drivers that need it. */
  shaderc_compile_options_set_optimization_level(opts, o->spirv_opt ? shaderc_optimization_level_performance
                                                                      : shaderc_optimization_level_zero);
  shaderc_compilation_result_t res = shaderc_compile_into_spv(compiler, glsl, strlen(glsl),
                                                              shaderc_glsl_compute_shader, name, "main", opts);
  shaderc_compile_options_release(opts);
  tc_status st = TC_OK;
  if (!res || shaderc_result_get_compilation_status(res) != shaderc_compilation_status_success) {
    st = vk_fail_set(f, TC_ERR_COMPILE, "vulkan compile '%s': shaderc failed: %s", name,
                     res ? shaderc_result_get_error_message(res) : "no result");
  } else {
    size_t n = shaderc_result_get_length(res);
    *spirv = malloc(n ? n : 4);
    if (!*spirv) {
      st = vk_fail_set(f, TC_ERR_OUT_OF_MEMORY, "vulkan compile '%s': out of memory", name);
    } else {
      memcpy(*spirv, shaderc_result_get_bytes(res), n);
      *n_words = n / 4;
    }
  }
  if (res) shaderc_result_release(res);
  return st;
}

void vk_shader_compiler_release(tc_plugin_ctx *ctx) {
  if (ctx->shaderc_compiler) shaderc_compiler_release(ctx->shaderc_compiler);
  ctx->shaderc_compiler = NULL;
}
