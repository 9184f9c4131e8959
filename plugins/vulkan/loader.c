/* loader.c — dlopen's the Vulkan loader and resolves entry points, so the plugin itself links
 * nothing of Vulkan and loads (reporting why it is unavailable) where no loader is installed. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "vk_internal.h"

bool vk_loader_open(vk_fns *fn, char *why, size_t why_size) {
  memset(fn, 0, sizeof *fn);
  /* libvulkan.so.1 is the loader's ABI name; a carried copy next to the plugin also works
   * through $LD_LIBRARY_PATH. */
  const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
  const char *last = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !fn->lib; i++) {
    fn->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!fn->lib) last = dlerror();
  }
  if (!fn->lib) {
    snprintf(why, why_size, "no Vulkan loader: cannot dlopen libvulkan.so.1 (%s)", last ? last : "?");
    return false;
  }
  /* POSIX guarantees dlsym's object pointer converts to a function pointer; ISO C does not,
   * so copy the bits. */
  void *sym = dlsym(fn->lib, "vkGetInstanceProcAddr");
  memcpy(&fn->vkGetInstanceProcAddr, &sym, sizeof sym);
  if (!fn->vkGetInstanceProcAddr) {
    snprintf(why, why_size, "libvulkan.so.1 has no vkGetInstanceProcAddr");
    vk_loader_close(fn);
    return false;
  }
#define VK_LOAD_GLOBAL(name)                                                                                 \
  fn->name = (PFN_##name)fn->vkGetInstanceProcAddr(VK_NULL_HANDLE, #name);                                   \
  if (!fn->name) {                                                                                           \
    snprintf(why, why_size, "the Vulkan loader lacks %s", #name);                                            \
    vk_loader_close(fn);                                                                                     \
    return false;                                                                                            \
  }
  VK_GLOBAL_FNS(VK_LOAD_GLOBAL)
#undef VK_LOAD_GLOBAL
  return true;
}

bool vk_loader_instance(vk_fns *fn, VkInstance inst, char *why, size_t why_size) {
#define VK_LOAD_INSTANCE(name)                                                                               \
  fn->name = (PFN_##name)fn->vkGetInstanceProcAddr(inst, #name);                                             \
  if (!fn->name) {                                                                                           \
    snprintf(why, why_size, "the Vulkan instance lacks %s", #name);                                          \
    return false;                                                                                            \
  }
  VK_INSTANCE_FNS(VK_LOAD_INSTANCE)
#undef VK_LOAD_INSTANCE
  return true;
}

bool vk_loader_device(vk_fns *fn, VkDevice dev, char *why, size_t why_size) {
#define VK_LOAD_DEVICE(name)                                                                                 \
  fn->name = (PFN_##name)fn->vkGetDeviceProcAddr(dev, #name);                                                \
  if (!fn->name) {                                                                                           \
    snprintf(why, why_size, "the Vulkan device lacks %s", #name);                                            \
    return false;                                                                                            \
  }
  VK_DEVICE_FNS(VK_LOAD_DEVICE)
#undef VK_LOAD_DEVICE
  return true;
}

void vk_loader_close(vk_fns *fn) {
  if (fn->lib) dlclose(fn->lib);
  memset(fn, 0, sizeof *fn);
}

const char *vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_NOT_READY: return "VK_NOT_READY";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_INCOMPLETE: return "VK_INCOMPLETE";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
  case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  default: return "VkResult(unknown)";
  }
}
