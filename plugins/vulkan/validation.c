/* validation.c — the Khronos validation layer, when the option vulkan.validation asks for it:
 * the layer and VK_EXT_debug_utils at instance creation (with vulkan.validation=sync also the
 * layer's synchronization validation, which reports missing barriers between dispatches), and
 * a messenger that hands every warning and error to the host's log under the category
 * "vulkan", prefixed "validation:", so a user sees them and a test can count them. Without a
 * messenger the layer's messages go nowhere useful. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static const char *const k_layer = "VK_LAYER_KHRONOS_validation";

int vk_validation_mode(const char *option) {
  if (!option || !option[0] || strcmp(option, "0") == 0 || strcmp(option, "off") == 0 || strcmp(option, "false") == 0)
    return VK_VALIDATION_OFF;
  return strcmp(option, "sync") == 0 ? VK_VALIDATION_SYNC : VK_VALIDATION_ON;
}

static bool layer_present(vk_fns *fn) {
  uint32_t n = 0;
  if (fn->vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
  VkLayerProperties *props = calloc(n, sizeof *props);
  if (!props) return false;
  bool found = false;
  if (fn->vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) found |= strcmp(props[i].layerName, k_layer) == 0;
  free(props);
  return found;
}

bool vk_validation_instance_setup(vk_fns *fn, int mode, const tc_host_api *host, vk_validation_setup *s) {
  memset(s, 0, sizeof *s);
  if (mode == VK_VALIDATION_OFF) return false;
  if (!layer_present(fn)) {
    tck_log(host, TC_LOG_WARN, "vulkan",
            "vulkan.validation is set but VK_LAYER_KHRONOS_validation is not installed; running without it");
    return false;
  }
  s->layer = k_layer;
  s->extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME; /* the layer provides it */
  s->sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  s->features = (VkValidationFeaturesEXT){.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                          .enabledValidationFeatureCount = mode == VK_VALIDATION_SYNC ? 1 : 0,
                                          .pEnabledValidationFeatures = &s->sync};
  return true;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  tc_plugin_ctx *ctx = user;
  bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  /* from any thread that calls the driver: the submitter, compile's jobs */
  __atomic_fetch_add(&ctx->validation_messages, 1, __ATOMIC_RELAXED);
  tck_log(ctx->host, error ? TC_LOG_ERROR : TC_LOG_WARN, "vulkan", "validation: %s: %s", data->pMessageIdName ? data->pMessageIdName : "-",
         data->pMessage ? data->pMessage : "");
  return VK_FALSE; /* never abort the call that triggered it */
}

void vk_validation_messenger_open(tc_plugin_ctx *ctx) {
  PFN_vkCreateDebugUtilsMessengerEXT create =
      (PFN_vkCreateDebugUtilsMessengerEXT)ctx->fn.vkGetInstanceProcAddr(ctx->instance, "vkCreateDebugUtilsMessengerEXT");
  if (!create) return;
  VkDebugUtilsMessengerCreateInfoEXT ci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = ctx};
  if (create(ctx->instance, &ci, NULL, &ctx->messenger) != VK_SUCCESS) ctx->messenger = VK_NULL_HANDLE;
}

void vk_validation_messenger_close(tc_plugin_ctx *ctx) {
  if (!ctx->messenger) return;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy =
      (PFN_vkDestroyDebugUtilsMessengerEXT)ctx->fn.vkGetInstanceProcAddr(ctx->instance, "vkDestroyDebugUtilsMessengerEXT");
  if (destroy) destroy(ctx->instance, ctx->messenger, NULL);
  ctx->messenger = VK_NULL_HANDLE;
}
