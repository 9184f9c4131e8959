/* pipeline.c — per kernel: the shader module, a descriptor set layout (one storage buffer per
 * kernel buffer), a pipeline layout whose push constants carry the symbols and the buffers'
 * element offsets (so one pipeline serves every size), compute pipelines (one per
 * specialization: threads per row and row body for row kernels, tile height for matmuls; those
 * a first call needs made at compile by prepare.c, any other on first use, all through the
 * VkPipelineCache), and descriptor sets, allocated once per executable and buffer binding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VK_SETS_PER_POOL 64

tc_status vk_kernel_pipeline_layout(tc_plugin_ctx *ctx, vk_kernel *k, const uint32_t *spirv, size_t n_words, vk_fail *f) {
  vk_fns *fn = &ctx->fn;
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n_words * 4, .pCode = spirv};
  VkResult r = fn->vkCreateShaderModule(ctx->device, &smci, NULL, &k->module);
  if (r != VK_SUCCESS) return vk_fail_set(f, TC_ERR_COMPILE, "vulkan compile '%s': vkCreateShaderModule failed (%s)", k->name, vk_result_name(r));
  VkDescriptorSetLayoutBinding *b = calloc((size_t)k->n_buffers + 1, sizeof *b);
  if (!b) return vk_fail_set(f, TC_ERR_OUT_OF_MEMORY, "vulkan compile '%s': out of memory", k->name);
  for (int32_t i = 0; i < k->n_buffers; i++) {
    b[i].binding = (uint32_t)i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = (uint32_t)k->n_buffers,
                                         .pBindings = b};
  r = fn->vkCreateDescriptorSetLayout(ctx->device, &dci, NULL, &k->set_layout);
  free(b);
  if (r != VK_SUCCESS) return vk_fail_set(f, TC_ERR_INTERNAL, "vulkan compile '%s': descriptor set layout (%s)", k->name, vk_result_name(r));
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = k->push_bytes};
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &k->set_layout,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pcr};
  r = fn->vkCreatePipelineLayout(ctx->device, &plci, NULL, &k->layout);
  if (r != VK_SUCCESS) return vk_fail_set(f, TC_ERR_INTERNAL, "vulkan compile '%s': pipeline layout (%s)", k->name, vk_result_name(r));
  return TC_OK;
}

VkResult vk_pipeline_make(tc_plugin_ctx *ctx, const vk_kernel *k, int32_t variant, int32_t mode, VkPipeline *out) {
  uint32_t spec[3];
  VkSpecializationMapEntry entries[3] = {{.constantID = 0, .offset = 0, .size = 4},
                                         {.constantID = 1, .offset = 4, .size = 4},
                                         {.constantID = 2, .offset = 8, .size = 4}};
  VkSpecializationInfo si = {.mapEntryCount = 3, .pMapEntries = entries, .dataSize = sizeof spec, .pData = spec};
  if (k->shape == VK_SHAPE_ROWS) {
    uint32_t tpr = 32u << variant;
    uint32_t wg = tpr < VK_ROWS_MIN_WG ? VK_ROWS_MIN_WG : tpr;
    spec[0] = wg;
    spec[1] = tpr;
    spec[2] = (uint32_t)mode;
  } else if (k->shape == VK_SHAPE_MATMUL) {
    spec[0] = variant == 1 ? 1 : 2; /* MT: 64-row halves per tile */
    si.mapEntryCount = 1;
    si.dataSize = 4;
  }
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module,
                .pName = "main",
                .pSpecializationInfo = k->shape == VK_SHAPE_ROWS || k->shape == VK_SHAPE_MATMUL ? &si : NULL},
      .layout = k->layout};
  /* one pipeline per call: compile makes several on threads of its own, each through the
   * cache, which vk_pipeline_cache_open creates without EXTERNALLY_SYNCHRONIZED */
  VkResult r = ctx->fn.vkCreateComputePipelines(ctx->device, ctx->pipeline_cache, 1, &ci, NULL, out);
  if (r != VK_SUCCESS) *out = VK_NULL_HANDLE;
  return r;
}

void vk_variant_text(const vk_kernel *k, int32_t variant, int32_t mode, char *out, size_t n) {
  if (k->shape == VK_SHAPE_ROWS)
    snprintf(out, n, "%u threads per row, %s body", 32u << variant, mode == 2 ? "vec4 in registers" : mode == 1 ? "vec4" : "scalar");
  else if (k->shape == VK_SHAPE_MATMUL)
    snprintf(out, n, "%d-row tiles", variant == 1 ? VK_MM_BM / 2 : VK_MM_BM);
  else
    snprintf(out, n, "pointwise");
}

tc_status vk_kernel_pipeline(tc_plugin_ctx *ctx, vk_kernel *k, int32_t variant, int32_t mode, VkPipeline *out) {
  if (variant < 0 || variant >= VK_TPR_VARIANTS) variant = 0;
  if (mode < 0 || mode > 2) mode = 0;
  VkPipeline *slot = &k->pipelines[variant][mode];
  if (*slot) {
    *out = *slot;
    return TC_OK;
  }
  double t0 = tck_now_s();
  VkResult r = vk_pipeline_make(ctx, k, variant, mode, slot);
  char what[96];
  vk_variant_text(k, variant, mode, what, sizeof what);
  if (r != VK_SUCCESS)
    return vk_err(ctx, TC_ERR_COMPILE, "vulkan: creating the pipeline of kernel '%s' (%s) failed (%s)", k->name, what,
                  vk_result_name(r));
  ctx->pipeline_cache_dirty = true;
  tck_log(ctx->host, TC_LOG_INFO, "cache", "vulkan: kernel '%s': pipeline (%s) created at its launch in %.1f ms", k->name,
          what, (tck_now_s() - t0) * 1e3);
  *out = *slot;
  return TC_OK;
}

void vk_kernel_destroy(tc_plugin_ctx *ctx, vk_kernel *k) {
  vk_fns *fn = &ctx->fn;
  for (int v = 0; v < VK_TPR_VARIANTS; v++)
    for (int m = 0; m < 3; m++)
      if (k->pipelines[v][m]) fn->vkDestroyPipeline(ctx->device, k->pipelines[v][m], NULL);
  if (k->layout) fn->vkDestroyPipelineLayout(ctx->device, k->layout, NULL);
  if (k->set_layout) fn->vkDestroyDescriptorSetLayout(ctx->device, k->set_layout, NULL);
  if (k->module) fn->vkDestroyShaderModule(ctx->device, k->module, NULL);
  tck_tune_memo_free(&k->tune);
  for (int32_t i = 0; i < k->n_sets; i++) free(k->sets[i].key);
  free(k->sets);
  free(k->name);
  free(k->glsl);
  free(k->numel);
  free(k->elem_size);
  free(k->access);
  free(k->vec_bufs);
  free(k->vec_exprs);
  memset(k, 0, sizeof *k);
}

static tc_status pool_grow(tc_plugin_ctx *ctx, tc_executable *exe, int32_t n_buffers) {
  VkDescriptorPool *pools = realloc(exe->pools, sizeof *pools * ((size_t)exe->n_pools + 1));
  if (!pools) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan: out of memory");
  exe->pools = pools;
  int32_t max_b = 1;
  for (int32_t i = 0; i < exe->n_kernels; i++)
    if (exe->kernels[i].n_buffers > max_b) max_b = exe->kernels[i].n_buffers;
  if (n_buffers > max_b) max_b = n_buffers;
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = (uint32_t)(VK_SETS_PER_POOL * max_b)};
  VkDescriptorPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                   .maxSets = VK_SETS_PER_POOL,
                                   .poolSizeCount = 1,
                                   .pPoolSizes = &ps};
  VkResult r = ctx->fn.vkCreateDescriptorPool(ctx->device, &ci, NULL, &exe->pools[exe->n_pools]);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan: descriptor pool (%s)", vk_result_name(r));
  exe->n_pools++;
  exe->pool_left = VK_SETS_PER_POOL;
  return TC_OK;
}

void vk_executable_sets_drop(tc_plugin_ctx *ctx, tc_executable *exe) {
  vk_replays_free(ctx, exe); /* recorded calls bind these sets */
  for (int32_t i = 0; i < exe->n_pools; i++) ctx->fn.vkDestroyDescriptorPool(ctx->device, exe->pools[i], NULL);
  exe->n_pools = 0;
  exe->pool_left = 0;
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    vk_kernel *k = &exe->kernels[i];
    for (int32_t s = 0; s < k->n_sets; s++) free(k->sets[s].key);
    k->n_sets = 0;
  }
}

tc_status vk_kernel_descriptor_set(tc_plugin_ctx *ctx, tc_executable *exe, vk_kernel *k, const tc_buffer_arg *args,
                                   VkDescriptorSet *out, uint32_t *elem_offsets) {
  int32_t nb = k->n_buffers;
  uint64_t stack_key[64], *key = nb * 2 <= 64 ? stack_key : malloc(sizeof(uint64_t) * 2 * (size_t)nb);
  if (!key) return vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
  uint64_t align = ctx->caps.min_storage_align ? ctx->caps.min_storage_align : 256;
  tc_status st = TC_OK;
  for (int32_t i = 0; i < nb; i++) {
    const tc_buffer_arg *a = (&args[i]);
    if (!a->buffer) {
      st = vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': buffer %d is NULL", k->name, (int)i);
      break;
    }
    if (a->byte_offset > a->buffer->size) {
      st = vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': buffer %d byte offset %zu past its end (%llu bytes)",
                  k->name, (int)i, a->byte_offset, (unsigned long long)a->buffer->size);
      break;
    }
    /* Bind at the offset rounded down to the device's alignment; the rest goes in o<i>. */
    uint64_t bound = (a->byte_offset / align) * align, rest = a->byte_offset - bound;
    int32_t es = k->elem_size[i];
    if (rest % (uint64_t)es != 0) {
      st = vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan launch '%s': buffer %d byte offset %zu is not a multiple of %d",
                  k->name, (int)i, a->byte_offset, (int)es);
      break;
    }
    elem_offsets[i] = (uint32_t)(rest / (uint64_t)es);
    key[2 * i] = a->buffer->serial;
    key[2 * i + 1] = bound;
  }
  if (st == TC_OK) {
    for (int32_t s = 0; s < k->n_sets; s++)
      if (memcmp(k->sets[s].key, key, sizeof(uint64_t) * 2 * (size_t)nb) == 0) {
        *out = k->sets[s].set;
        if (key != stack_key) free(key);
        return TC_OK;
      }
    if (exe->pool_left == 0) st = pool_grow(ctx, exe, nb);
  }
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (st == TC_OK) {
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = exe->pools[exe->n_pools - 1],
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &k->set_layout};
    VkResult r = ctx->fn.vkAllocateDescriptorSets(ctx->device, &ai, &set);
    if (r != VK_SUCCESS) st = vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: descriptor set (%s)", vk_result_name(r));
    exe->pool_left--;
  }
  if (st == TC_OK) {
    VkDescriptorBufferInfo *bi = calloc((size_t)nb + 1, sizeof *bi);
    VkWriteDescriptorSet *w = calloc((size_t)nb + 1, sizeof *w);
    vk_set_entry *sets = k->n_sets == k->cap_sets ? realloc(k->sets, sizeof *sets * (size_t)(k->cap_sets * 2 + 4)) : k->sets;
    uint64_t *kcopy = malloc(sizeof(uint64_t) * 2 * (size_t)nb + 1);
    if (!bi || !w || !sets || !kcopy) {
      st = vk_err(ctx, TC_ERR_OUT_OF_MEMORY, "vulkan launch: out of memory");
      free(kcopy);
    } else {
      if (k->n_sets == k->cap_sets) k->cap_sets = k->cap_sets * 2 + 4;
      k->sets = sets;
      for (int32_t i = 0; i < nb; i++) {
        const tc_buffer_arg *a = (&args[i]);
        uint64_t bound = key[2 * i + 1], range = a->buffer->size - bound;
        if (range > ctx->caps.max_storage_range) range = ctx->caps.max_storage_range & ~(uint64_t)15;
        bi[i] = (VkDescriptorBufferInfo){.buffer = a->buffer->buf, .offset = bound, .range = range};
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .dstBinding = (uint32_t)i,
                                      .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &bi[i]};
      }
      ctx->fn.vkUpdateDescriptorSets(ctx->device, (uint32_t)nb, w, 0, NULL);
      memcpy(kcopy, key, sizeof(uint64_t) * 2 * (size_t)nb);
      k->sets[k->n_sets].key = kcopy;
      k->sets[k->n_sets].set = set;
      k->n_sets++;
      *out = set;
    }
    free(bi);
    free(w);
  }
  if (key != stack_key) free(key);
  return st;
}
