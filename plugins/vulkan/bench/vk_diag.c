/* vk_diag.c — GPU-only kernel times on a Vulkan device, with timestamp queries: the memory
 * types, vkCmdCopyBuffer as a ceiling, a sweep of hand-written copy kernels (workgroup size,
 * elements per thread, vec4 or scalar, grid-stride or one pass), and the plugin's own
 * generated kernels (copy, ln_gelu, softmax; GLSL from executable_info of tc-vulkan.so,
 * argv[1], loaded into the kit's test host, ABI 2.0) launched as the plugin launches them, with
 * the threads-per-row swept for row kernels. Built with the project where the Vulkan loader
 * and static shaderc are installed: BUILD/bin/tc-vulkan-diag PLUGIN.so */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shaderc/shaderc.h>
#include <vulkan/vulkan.h>

#include "tc_plugin.h"
#include "tool_kit.h"

#define VKC(x)                                                                 \
  do {                                                                         \
    VkResult r_ = (x);                                                         \
    if (r_ != VK_SUCCESS) {                                                    \
      fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, (int)r_);   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static VkDevice dev;
static VkPhysicalDevice phys;
static VkQueue queue;
static VkCommandPool pool;
static VkQueryPool qpool;
static double ts_period;
static VkPhysicalDeviceMemoryProperties mp;
static shaderc_compiler_t shc;

typedef struct buf { VkBuffer b; VkDeviceMemory m; VkDeviceSize size; } buf;

static int pick_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) {
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want && !(mp.memoryTypes[i].propertyFlags & avoid))
      return (int)i;
  return -1;
}

static buf mkbuf(VkDeviceSize size, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, int *type_out) {
  buf b = {.size = size};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VKC(vkCreateBuffer(dev, &bci, NULL, &b.b));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b.b, &req);
  int t = pick_type(req.memoryTypeBits, want, avoid);
  if (t < 0) t = pick_type(req.memoryTypeBits, want, 0);
  if (type_out) *type_out = t;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = (uint32_t)t};
  VKC(vkAllocateMemory(dev, &mai, NULL, &b.m));
  VKC(vkBindBufferMemory(dev, b.b, b.m, 0));
  return b;
}

typedef struct kern { VkShaderModule mod; VkDescriptorSetLayout dsl; VkPipelineLayout pl; VkPipeline pipe; VkDescriptorPool dp; VkDescriptorSet set; int nb; uint32_t push_bytes; } kern;

static kern mkkern(const char *name, const char *glsl, int nb, buf *bufs, uint32_t push_bytes, int spec_wg, int spec_tpr, int spec_mode) {
  kern k = {.nb = nb, .push_bytes = push_bytes};
  shaderc_compile_options_t o = shaderc_compile_options_initialize();
  shaderc_compile_options_set_target_env(o, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_target_spirv(o, shaderc_spirv_version_1_5);
  shaderc_compile_options_set_optimization_level(o, shaderc_optimization_level_performance);
  shaderc_compilation_result_t res = shaderc_compile_into_spv(shc, glsl, strlen(glsl), shaderc_glsl_compute_shader, name, "main", o);
  if (shaderc_result_get_compilation_status(res) != shaderc_compilation_status_success) {
    fprintf(stderr, "%s: %s\n%s\n", name, shaderc_result_get_error_message(res), glsl);
    exit(1);
  }
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = shaderc_result_get_length(res),
                                   .pCode = (const uint32_t *)shaderc_result_get_bytes(res)};
  VKC(vkCreateShaderModule(dev, &smci, NULL, &k.mod));
  shaderc_result_release(res);
  shaderc_compile_options_release(o);
  VkDescriptorSetLayoutBinding b[16];
  for (int i = 0; i < nb; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = (uint32_t)nb, .pBindings = b};
  VKC(vkCreateDescriptorSetLayout(dev, &dci, NULL, &k.dsl));
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = push_bytes ? push_bytes : 4};
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1, .pSetLayouts = &k.dsl,
                                     .pushConstantRangeCount = 1, .pPushConstantRanges = &pcr};
  VKC(vkCreatePipelineLayout(dev, &plci, NULL, &k.pl));
  uint32_t spec[3] = {(uint32_t)spec_wg, (uint32_t)spec_tpr, (uint32_t)spec_mode};
  VkSpecializationMapEntry ent[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
  VkSpecializationInfo si = {.mapEntryCount = 3, .pMapEntries = ent, .dataSize = 12, .pData = spec};
  VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                    .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                              .module = k.mod, .pName = "main", .pSpecializationInfo = spec_wg ? &si : NULL},
                                    .layout = k.pl};
  VKC(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &k.pipe));
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = (uint32_t)nb};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1, .poolSizeCount = 1, .pPoolSizes = &ps};
  VKC(vkCreateDescriptorPool(dev, &dpci, NULL, &k.dp));
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = k.dp, .descriptorSetCount = 1, .pSetLayouts = &k.dsl};
  VKC(vkAllocateDescriptorSets(dev, &ai, &k.set));
  VkDescriptorBufferInfo bi[16];
  VkWriteDescriptorSet w[16];
  for (int i = 0; i < nb; i++) {
    bi[i] = (VkDescriptorBufferInfo){bufs[i].b, 0, VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = k.set, .dstBinding = (uint32_t)i, .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &bi[i]};
  }
  vkUpdateDescriptorSets(dev, (uint32_t)nb, w, 0, NULL);
  return k;
}

static void kfree(kern *k) {
  vkDestroyPipeline(dev, k->pipe, NULL);
  vkDestroyPipelineLayout(dev, k->pl, NULL);
  vkDestroyDescriptorSetLayout(dev, k->dsl, NULL);
  vkDestroyDescriptorPool(dev, k->dp, NULL);
  vkDestroyShaderModule(dev, k->mod, NULL);
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static void barrier(VkCommandBuffer c) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

#define REPS 20
/* Median GPU seconds of one dispatch (k) or one vkCmdCopyBuffer (k NULL: src -> dst), REPS
 * timed after 3 untimed; *host: wall seconds per dispatch of the whole submit + wait. */
static double gpu_time(kern *k, uint32_t gx, buf *src, buf *dst, double *host) {
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkCommandBuffer c;
  VKC(vkAllocateCommandBuffers(dev, &cai, &c));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VKC(vkBeginCommandBuffer(c, &bi));
  vkCmdResetQueryPool(c, qpool, 0, 2 * REPS);
  uint32_t pc[64] = {0};
  if (k) {
    vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipe);
    vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, k->pl, 0, 1, &k->set, 0, NULL);
    vkCmdPushConstants(c, k->pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes ? k->push_bytes : 4, pc);
  }
  for (int r = -3; r < REPS; r++) {
    if (r >= 0) vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qpool, 2 * (uint32_t)r);
    if (k) vkCmdDispatch(c, gx, 1, 1);
    else {
      VkBufferCopy region = {0, 0, src->size};
      vkCmdCopyBuffer(c, src->b, dst->b, 1, &region);
    }
    if (r >= 0) vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool, 2 * (uint32_t)r + 1);
    barrier(c);
  }
  VKC(vkEndCommandBuffer(c));
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence f;
  VKC(vkCreateFence(dev, &fci, NULL, &f));
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c};
  double t0 = now();
  VKC(vkQueueSubmit(queue, 1, &si, f));
  VKC(vkWaitForFences(dev, 1, &f, VK_TRUE, UINT64_MAX));
  *host = (now() - t0) / (REPS + 3);
  uint64_t q[2 * REPS];
  VKC(vkGetQueryPoolResults(dev, qpool, 0, 2 * REPS, sizeof q, q, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  double t[REPS];
  for (int r = 0; r < REPS; r++) t[r] = (double)(q[2 * r + 1] - q[2 * r]) * ts_period * 1e-9;
  qsort(t, REPS, sizeof t[0], cmpd);
  vkDestroyFence(dev, f, NULL);
  vkFreeCommandBuffers(dev, pool, 1, &c);
  return t[REPS / 2];
}

/* ---- hand-written copy variants ---- */
static char *copy_glsl(int wg, int ept, int vec, int stride_loop) {
  static char s[4096];
  const char *T = vec ? "vec4" : "float";
  if (stride_loop)
    snprintf(s, sizeof s,
             "#version 450\nlayout(local_size_x = %d) in;\n"
             "layout(std430, binding = 0) readonly buffer A { %s x[]; };\n"
             "layout(std430, binding = 1) writeonly buffer B { %s y[]; };\n"
             "layout(push_constant) uniform P { int n; } p;\n"
             "void main() {\n  int n = %d / %d;\n"
             "  for (int i = int(gl_GlobalInvocationID.x); i < n; i += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) y[i] = x[i];\n}\n",
             wg, T, T, 32 << 20, vec ? 4 : 1);
  else
    snprintf(s, sizeof s,
             "#version 450\n#extension GL_EXT_control_flow_attributes : require\nlayout(local_size_x = %d) in;\n"
             "layout(std430, binding = 0) readonly buffer A { %s x[]; };\n"
             "layout(std430, binding = 1) writeonly buffer B { %s y[]; };\n"
             "layout(push_constant) uniform P { int n; } p;\n"
             "void main() {\n  int n = %d / %d;\n  int base = int(gl_WorkGroupID.x) * %d * %d + int(gl_LocalInvocationID.x);\n"
             "  %s v[%d];\n"
             "  [[unroll]] for (int e = 0; e < %d; e++) { int i = base + e * %d; if (i < n) v[e] = x[i]; }\n"
             "  [[unroll]] for (int e = 0; e < %d; e++) { int i = base + e * %d; if (i < n) y[i] = v[e]; }\n}\n",
             wg, T, T, 32 << 20, vec ? 4 : 1, wg, ept, T, ept, ept, wg, ept, wg);
  return s;
}

/* ---- the plugin's kernels ---- */
static const char *source(kb *b, tc_kernel_desc *k) {
  tc_executable *e = kit_compile(b, k);
  const char *s = kit_source(e);
  const char *v = strstr(s, "#version");
  return strdup(v ? v : s);
}
/* A copy of s with every `from` replaced by `to` (longer or shorter), or NULL when s has none.
 * A fresh allocation: editing in place overran strdup's buffer when `to` is longer. */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t lf = strlen(from), lt = strlen(to), n = 0;
  for (const char *at = strstr(s, from); at; at = strstr(at + lf, from)) n++;
  if (n == 0) return NULL;
  char *out = malloc(strlen(s) + n * lt + 1), *w = out;
  if (!out) return NULL;
  for (const char *at; (at = strstr(s, from)); s = at + lf) {
    memcpy(w, s, (size_t)(at - s));
    w += at - s;
    memcpy(w, to, lt);
    w += lt;
  }
  strcpy(w, s);
  return out;
}
static const char *src_copy(int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_copy(&b, n);
  return source(&b, &k);
}
static const char *src_ln_gelu(int64_t m, int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_ln_gelu(&b, m, n);
  return source(&b, &k);
}
static const char *src_softmax(int64_t m, int64_t n) {
  kb b = {0};
  tc_kernel_desc k = desc_softmax(&b, m, n);
  return source(&b, &k);
}

static void fill(buf *b, float scale) {
  /* through a host-visible staging buffer */
  buf s = mkbuf(b->size, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, NULL);
  float *h;
  VKC(vkMapMemory(dev, s.m, 0, VK_WHOLE_SIZE, 0, (void **)&h));
  unsigned x = 12345;
  for (size_t i = 0; i < b->size / 4; i++) { x = x * 1664525u + 1013904223u; h[i] = ((float)((x >> 8) & 0xffff) / 32768.0f - 1.0f) * scale; }
  vkUnmapMemory(dev, s.m);
  double host;
  gpu_time(NULL, 0, &s, b, &host);
  vkDestroyBuffer(dev, s.b, NULL);
  vkFreeMemory(dev, s.m, NULL);
}

int main(int argc, char **argv) {
  const char *plugin = argc > 1 ? argv[1] : "tc-vulkan.so";
  setvbuf(stdout, NULL, _IOLBF, 0); /* a line per variant as it finishes, even when piped and killed */
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst;
  VKC(vkCreateInstance(&ici, NULL, &inst));
  uint32_t nd = 8;
  VkPhysicalDevice pds[8];
  VKC(vkEnumeratePhysicalDevices(inst, &nd, pds));
  phys = pds[0];
  for (uint32_t i = 0; i < nd; i++) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pds[i], &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { phys = pds[i]; break; }
  }
  VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
  vkGetPhysicalDeviceProperties2(phys, &p2);
  VkPhysicalDeviceProperties *pp = &p2.properties;
  ts_period = pp->limits.timestampPeriod;
  printf("device: %s (driver %u.%u, api %u.%u.%u) subgroup %u, timestampPeriod %.3f ns, maxComputeWorkGroupCount %u, maxInvocations %u\n",
         pp->deviceName, pp->driverVersion >> 22, (pp->driverVersion >> 14) & 0xff, VK_VERSION_MAJOR(pp->apiVersion),
         VK_VERSION_MINOR(pp->apiVersion), VK_VERSION_PATCH(pp->apiVersion), sg.subgroupSize, ts_period,
         pp->limits.maxComputeWorkGroupCount[0], pp->limits.maxComputeWorkGroupInvocations);
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
    printf("heap %u: %.1f GiB flags 0x%x%s\n", i, mp.memoryHeaps[i].size / 1073741824.0, mp.memoryHeaps[i].flags,
           (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? " DEVICE_LOCAL" : "");
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    printf("type %u: heap %u flags 0x%x%s%s%s%s\n", i, mp.memoryTypes[i].heapIndex, f, (f & 1) ? " DEVICE_LOCAL" : "",
           (f & 2) ? " HOST_VISIBLE" : "", (f & 4) ? " HOST_COHERENT" : "", (f & 8) ? " HOST_CACHED" : "");
  }
  uint32_t nq = 16;
  VkQueueFamilyProperties qf[16];
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
  int fam = -1;
  for (uint32_t i = 0; i < nq; i++) {
    printf("queue family %u: flags 0x%x count %u timestampValidBits %u\n", i, qf[i].queueFlags, qf[i].queueCount, qf[i].timestampValidBits);
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && (fam < 0 || !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))) fam = (int)i;
  }
  printf("using queue family %d (the plugin's rule: compute without graphics first)\n", fam);
  float prio = 1;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)fam, .queueCount = 1, .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
  VkPhysicalDeviceFeatures feat = {0};
  VkPhysicalDeviceFeatures have;
  vkGetPhysicalDeviceFeatures(phys, &have);
  feat.shaderInt64 = have.shaderInt64;
  dci.pEnabledFeatures = &feat;
  VKC(vkCreateDevice(phys, &dci, NULL, &dev));
  vkGetDeviceQueue(dev, (uint32_t)fam, 0, &queue);
  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = (uint32_t)fam,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
  VKC(vkCreateCommandPool(dev, &cpci, NULL, &pool));
  VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * REPS};
  VKC(vkCreateQueryPool(dev, &qpci, NULL, &qpool));
  shc = shaderc_compiler_initialize();

  const int64_t NC = 32 << 20; /* copy: 32M floats, 128 MiB each way */
  int t_plain, t_nohv;
  buf cx = mkbuf(NC * 4, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &t_plain); /* the plugin's choice: first DEVICE_LOCAL type */
  buf cy = mkbuf(NC * 4, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, NULL);
  buf dx = mkbuf(NC * 4, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, &t_nohv);
  buf dy = mkbuf(NC * 4, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, NULL);
  printf("buffers: plugin rule -> type %d (flags 0x%x); device-local without host-visible -> type %d (flags 0x%x)\n", t_plain,
         mp.memoryTypes[t_plain].propertyFlags, t_nohv, mp.memoryTypes[t_nohv].propertyFlags);
  fill(&cx, 1); fill(&dx, 1);
  double bytes = 2.0 * NC * 4, host, g;
  /* clocks up first: half a second of copies */
  for (double w0 = now(); now() - w0 < 0.5;) gpu_time(NULL, 0, &cx, &cy, &host);
  printf("\n%-44s %10s %9s %12s\n", "variant", "gpu ms", "GB/s", "host ms/disp");
  g = gpu_time(NULL, 0, &cx, &cy, &host);
  printf("%-44s %10.4f %9.0f %12.4f\n", "vkCmdCopyBuffer (plugin memory type)", g * 1e3, bytes / g / 1e9, host * 1e3);
  g = gpu_time(NULL, 0, &dx, &dy, &host);
  printf("%-44s %10.4f %9.0f %12.4f\n", "vkCmdCopyBuffer (non-host-visible type)", g * 1e3, bytes / g / 1e9, host * 1e3);
  int wgs[5] = {64, 128, 256, 512, 1024}, epts[4] = {1, 4, 8, 16};
  for (int vec = getenv("VK_DIAG_SKIPCOPY") ? -1 : 1; vec >= 0; vec--)
    for (int wi = 0; wi < 5; wi++)
      for (int ei = 0; ei < 4; ei++) {
        int wg = wgs[wi], ept = epts[ei], per = wg * ept * (vec ? 4 : 1);
        if (!vec && ept == 8) continue;
        buf bb[2] = {cx, cy};
        kern k = mkkern("copy", copy_glsl(wg, ept, vec, 0), 2, bb, 4, 0, 0, 0);
        g = gpu_time(&k, (uint32_t)((NC + per - 1) / per), NULL, NULL, &host);
        char nm[64];
        snprintf(nm, sizeof nm, "copy %s wg %d x %d per thread, one pass", vec ? "vec4" : "f32", wg, ept);
        printf("%-44s %10.4f %9.0f %12.4f\n", nm, g * 1e3, bytes / g / 1e9, host * 1e3);
        kfree(&k);
      }
  int grids[4] = {132, 132 * 4, 132 * 16, 132 * 64};
  for (int vec = getenv("VK_DIAG_SKIPCOPY") ? -1 : 1; vec >= 0; vec--)
    for (int gi = 0; gi < 4; gi++)
      for (int wi = 2; wi < 5; wi += 2) {
        buf bb[2] = {cx, cy};
        kern k = mkkern("copy", copy_glsl(wgs[wi], 1, vec, 1), 2, bb, 4, 0, 0, 0);
        g = gpu_time(&k, (uint32_t)grids[gi], NULL, NULL, &host);
        char nm[64];
        snprintf(nm, sizeof nm, "copy %s wg %d grid-stride, %d groups", vec ? "vec4" : "f32", wgs[wi], grids[gi]);
        printf("%-44s %10.4f %9.0f %12.4f\n", nm, g * 1e3, bytes / g / 1e9, host * 1e3);
        kfree(&k);
      }

  /* the plugin's generated kernels, as the plugin launches them */
  tc_probe_args info = kit_open(plugin, NULL);
  if (!info.available) { fprintf(stderr, "%s: not available: %s\n", plugin, info.reason ? info.reason : ""); return 1; }
  kit_init(0);
  const char *s_copy = src_copy(NC), *s_ln = src_ln_gelu(8192, 4096), *s_sm = src_softmax(32768, 1024);
  {
    buf bb[2] = {cx, cy};
    kern k = mkkern("plugin_copy", s_copy, 2, bb, 8, 0, 0, 0);
    int gxs[4] = {(int)((NC + 1023) / 1024), 132 * 4, 132 * 16, 132 * 64};
    for (int gi = 0; gi < 4; gi++) {
      g = gpu_time(&k, (uint32_t)gxs[gi], NULL, NULL, &host);
      char nm[80];
      snprintf(nm, sizeof nm, "plugin copy (wg 256, vec4) %d groups%s", gxs[gi], gi == 0 ? " (as launched)" : "");
      printf("%-44s %10.4f %9.0f %12.4f\n", nm, g * 1e3, bytes / g / 1e9, host * 1e3);
    }
    kfree(&k);
  }
  buf lg = mkbuf(4096 * 4, 1, 0, NULL), lb = mkbuf(4096 * 4, 1, 0, NULL);
  fill(&lg, 1); fill(&lb, 0.1f);
  struct { const char *name; const char *src; int64_t m, n; int nb; buf b[4]; } rk[2] = {
      {"plugin ln_gelu 8192x4096", s_ln, 8192, 4096, 4, {cx, lg, lb, cy}},
      {"plugin softmax 32768x1024", s_sm, 32768, 1024, 2, {cx, cy}}};
  /* variants by text edits of the generated GLSL: only the fast path, or the transcendental
   * calls dropped (timing only: is the kernel bound by its math?) */
  const char *edits[4][2] = {{NULL, NULL},
                             {"const int mode = MODE;", "const int mode = 1; // forced"},
                             {" = tc_erf_f32(", " = ("},
                             {" = tc_exp_f32(", " = exp("}};
  const char *edit_name[4] = {"", " MODE 1 (no register cache)", " no-erf", " builtin-exp"};
  for (int r = 0; r < 2; r++) {
    double rb = 2.0 * rk[r].m * rk[r].n * 4;
    for (int e = 0; e < 4; e++) {
      char *src = edits[e][0] ? replace_all(rk[r].src, edits[e][0], edits[e][1]) : strdup(rk[r].src);
      if (!src) continue; /* the text to edit is not there */
      for (int tpr = 32; tpr <= (getenv("VK_DIAG_SMALL") ? 64 : 1024); tpr *= 2) {
        if (e > 0 && tpr != 64 && tpr != 256 && tpr != 1024) continue;
        int wg = tpr < 128 ? 128 : tpr, rpw = wg / tpr;
        /* the plugin's rule: the row in registers when it fits in TPR * 4 * R floats (R = VK_ROW_CACHE, 8) */
        int mode = rk[r].n / 4 <= tpr * 8 ? 2 : 1;
        kern k = mkkern(rk[r].name, src, rk[r].nb, rk[r].b, (uint32_t)(4 * rk[r].nb), wg, tpr, mode);
        g = gpu_time(&k, (uint32_t)((rk[r].m + rpw - 1) / rpw), NULL, NULL, &host);
        char nm[96];
        snprintf(nm, sizeof nm, "%s TPR %d%s", rk[r].name, tpr, edit_name[e]);
        printf("%-44s %10.4f %9.0f %12.4f\n", nm, g * 1e3, rb / g / 1e9, host * 1e3);
        kfree(&k);
      }
      free(src);
    }
  }
  if (getenv("VK_DIAG_SOURCE")) printf("\n%s\n%s\n", s_ln, s_sm);
  free((char *)s_copy);
  free((char *)s_ln);
  free((char *)s_sm);
  kit_release();
  return 0;
}
