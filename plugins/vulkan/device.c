/* device.c — the Vulkan instance, the physical-device list in preference order, the
 * capabilities the code generators need (subgroups, f64, i64, 8-bit storage) and the logical
 * device with its compute queue and command pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

VkResult vk_instance_create(vk_fns *fn, int validation, const tc_host_api *host, VkInstance *out) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "tc",
                           .pEngineName = "tc-vulkan",
                           .apiVersion = VK_API_VERSION_1_2};
  vk_validation_setup v;
  bool layer = vk_validation_instance_setup(fn, validation, host, &v);
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = layer ? &v.features : NULL,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = layer ? 1 : 0,
                             .ppEnabledLayerNames = layer ? &v.layer : NULL,
                             .enabledExtensionCount = layer ? 1 : 0,
                             .ppEnabledExtensionNames = layer ? &v.extension : NULL};
  return fn->vkCreateInstance(&ci, NULL, out);
}

static int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
  default: return 4;
  }
}

static bool has_compute_queue(vk_fns *fn, VkPhysicalDevice d, uint32_t *family) {
  uint32_t n = 0;
  fn->vkGetPhysicalDeviceQueueFamilyProperties(d, &n, NULL);
  VkQueueFamilyProperties q[32];
  if (n > 32) n = 32;
  fn->vkGetPhysicalDeviceQueueFamilyProperties(d, &n, q);
  /* Prefer a compute queue without graphics (async compute), else any with compute. */
  int best = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0) continue;
    if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = (int)i;
  }
  if (best < 0) return false;
  if (family) *family = (uint32_t)best;
  return true;
}

VkResult vk_devices_list(vk_fns *fn, VkInstance inst, VkPhysicalDevice *devs, uint32_t *n) {
  uint32_t cap = *n, all_n = 0;
  *n = 0;
  VkResult r = fn->vkEnumeratePhysicalDevices(inst, &all_n, NULL);
  if (r != VK_SUCCESS) return r;
  if (all_n == 0) return VK_SUCCESS;
  VkPhysicalDevice *all = calloc(all_n, sizeof *all);
  if (!all) return VK_ERROR_OUT_OF_HOST_MEMORY;
  r = fn->vkEnumeratePhysicalDevices(inst, &all_n, all);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(all);
    return r;
  }
  /* Stable order: by type rank, then enumeration order. */
  for (int rank = 0; rank <= 4; rank++)
    for (uint32_t i = 0; i < all_n && *n < cap; i++) {
      VkPhysicalDeviceProperties p;
      fn->vkGetPhysicalDeviceProperties(all[i], &p);
      if (type_rank(p.deviceType) == rank && p.apiVersion >= VK_API_VERSION_1_1 && has_compute_queue(fn, all[i], NULL))
        devs[(*n)++] = all[i];
    }
  free(all);
  return VK_SUCCESS;
}

int32_t vk_device_type_tc(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return TC_DEVICE_DISCRETE_GPU;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return TC_DEVICE_INTEGRATED_GPU;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return TC_DEVICE_VIRTUAL_GPU;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return TC_DEVICE_CPU;
  default: return TC_DEVICE_OTHER;
  }
}

void vk_device_caps_query(vk_fns *fn, VkPhysicalDevice phys, vk_device_caps *caps) {
  memset(caps, 0, sizeof *caps);
  VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
  fn->vkGetPhysicalDeviceProperties2(phys, &p2);
  const VkPhysicalDeviceProperties *p = &p2.properties;
  if (p->apiVersion >= VK_API_VERSION_1_2) { /* float controls, core in 1.2 */
    VkPhysicalDeviceVulkan12Properties p12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 q2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &p12};
    fn->vkGetPhysicalDeviceProperties2(phys, &q2);
    caps->denorm_preserve[0] = p12.shaderDenormPreserveFloat32;
    caps->denorm_preserve[1] = p12.shaderDenormPreserveFloat64;
    caps->signed_zero_inf_nan_preserve[0] = p12.shaderSignedZeroInfNanPreserveFloat32;
    caps->signed_zero_inf_nan_preserve[1] = p12.shaderSignedZeroInfNanPreserveFloat64;
    caps->denorm_flush_to_zero[0] = p12.shaderDenormFlushToZeroFloat32;
    caps->denorm_flush_to_zero[1] = p12.shaderDenormFlushToZeroFloat64;
  }
  snprintf(caps->name, sizeof caps->name, "%s", p->deviceName);
  caps->vendor_id = p->vendorID;
  caps->device_id = p->deviceID;
  caps->driver_version = p->driverVersion;
  caps->api_version = p->apiVersion;
  caps->type = p->deviceType;
  caps->subgroup_size = sg.subgroupSize;
  caps->subgroup_shuffle = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                           (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                           (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) && sg.subgroupSize >= 4 &&
                           (sg.subgroupSize & (sg.subgroupSize - 1)) == 0;
  caps->max_wg_invocations = p->limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; i++) caps->max_wg_count[i] = p->limits.maxComputeWorkGroupCount[i];
  caps->max_shared_bytes = p->limits.maxComputeSharedMemorySize;
  caps->max_push_bytes = p->limits.maxPushConstantsSize;
  caps->max_storage_range = p->limits.maxStorageBufferRange;
  caps->min_storage_align = p->limits.minStorageBufferOffsetAlignment;

  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (p->apiVersion >= VK_API_VERSION_1_2) f2.pNext = &f12;
  fn->vkGetPhysicalDeviceFeatures2(phys, &f2);
  caps->f64 = f2.features.shaderFloat64;
  caps->i64 = f2.features.shaderInt64;
  caps->storage8 = p->apiVersion >= VK_API_VERSION_1_2 && f12.storageBuffer8BitAccess;

  VkPhysicalDeviceMemoryProperties mp;
  fn->vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
    if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mp.memoryHeaps[i].size > caps->memory_bytes)
      caps->memory_bytes = mp.memoryHeaps[i].size;
}

tc_status vk_device_open(tc_plugin_ctx *ctx, int32_t index) {
  vk_fns *fn = &ctx->fn;
  char why[256];
  VkResult r = vk_instance_create(fn, ctx->validation, ctx->host, &ctx->instance);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: vkCreateInstance failed (%s)", vk_result_name(r));
  if (!vk_loader_instance(fn, ctx->instance, why, sizeof why)) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: %s", why);
  if (ctx->validation) vk_validation_messenger_open(ctx);
  VkPhysicalDevice devs[VK_MAX_DEVICES];
  uint32_t n = VK_MAX_DEVICES;
  r = vk_devices_list(fn, ctx->instance, devs, &n);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: listing devices failed (%s)", vk_result_name(r));
  if (index < 0 || (uint32_t)index >= n)
    return vk_err(ctx, TC_ERR_INVALID_ARGUMENT, "vulkan init: device %d out of range (%u devices with a compute queue)",
                  (int)index, n);
  ctx->phys = devs[index];
  vk_device_caps_query(fn, ctx->phys, &ctx->caps);
  fn->vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->mem_props);
  has_compute_queue(fn, ctx->phys, &ctx->queue_family);
  { /* timestamps on that queue (TC_LOGS=profile) */
    uint32_t nq = 0;
    VkQueueFamilyProperties q[32];
    fn->vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, NULL);
    if (nq > 32) nq = 32;
    fn->vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, q);
    VkPhysicalDeviceProperties p;
    fn->vkGetPhysicalDeviceProperties(ctx->phys, &p);
    uint32_t bits = ctx->queue_family < nq ? q[ctx->queue_family].timestampValidBits : 0;
    ctx->caps.timestamp_period = bits > 0 ? p.limits.timestampPeriod : 0;
    ctx->caps.timestamp_mask = bits >= 64 ? UINT64_MAX : bits > 0 ? (UINT64_C(1) << bits) - 1 : 0;
  }

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = ctx->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .storageBuffer8BitAccess = ctx->caps.storage8};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.features.shaderFloat64 = ctx->caps.f64;
  f2.features.shaderInt64 = ctx->caps.i64;
  if (ctx->caps.api_version >= VK_API_VERSION_1_2) f2.pNext = &f12;
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  r = fn->vkCreateDevice(ctx->phys, &dci, NULL, &ctx->device);
  if (r != VK_SUCCESS)
    return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: vkCreateDevice on '%s' failed (%s)", ctx->caps.name,
                  vk_result_name(r));
  if (!vk_loader_device(fn, ctx->device, why, sizeof why)) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: %s", why);
  fn->vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);

  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = ctx->queue_family};
  r = fn->vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->cmd_pool);
  if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: vkCreateCommandPool failed (%s)", vk_result_name(r));
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = ctx->cmd_pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  for (int32_t i = 0; i < VK_BATCH_SLOTS; i++) {
    r = fn->vkAllocateCommandBuffers(ctx->device, &cai, &ctx->batches[i].cmd);
    if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: command buffer (%s)", vk_result_name(r));
    r = fn->vkCreateFence(ctx->device, &fci, NULL, &ctx->batches[i].fence);
    if (r != VK_SUCCESS) return vk_err(ctx, TC_ERR_UNAVAILABLE, "vulkan init: fence (%s)", vk_result_name(r));
  }
  /* Freed buffers kept for reuse: a quarter of the device's memory at most. */
  ctx->free_limit = ctx->caps.memory_bytes ? ctx->caps.memory_bytes / 4 : (VkDeviceSize)1 << 30;

  /* The cache key of everything compiled for this device: name, ids and driver version (the
   * host's cache hashes it with the rest of each key). */
  snprintf(ctx->device_key, sizeof ctx->device_key, "%s|%08x|%08x|%08x|%08x|sg%u", ctx->caps.name, ctx->caps.vendor_id,
           ctx->caps.device_id, ctx->caps.driver_version, ctx->caps.api_version, ctx->caps.subgroup_size);
  return TC_OK;
}

void vk_device_close(tc_plugin_ctx *ctx) {
  vk_fns *fn = &ctx->fn;
  if (ctx->device) {
    fn->vkDeviceWaitIdle(ctx->device);
    for (int32_t i = 0; i < VK_BATCH_SLOTS; i++)
      if (ctx->batches[i].fence) fn->vkDestroyFence(ctx->device, ctx->batches[i].fence, NULL);
    if (ctx->cmd_pool) fn->vkDestroyCommandPool(ctx->device, ctx->cmd_pool, NULL);
    fn->vkDestroyDevice(ctx->device, NULL);
  }
  if (ctx->instance) vk_validation_messenger_close(ctx);
  if (ctx->instance && fn->vkDestroyInstance) fn->vkDestroyInstance(ctx->instance, NULL);
  ctx->device = VK_NULL_HANDLE;
  ctx->instance = VK_NULL_HANDLE;
}
