/* vk_internal.h — what the vulkan plugin's files share: the dlopen'd Vulkan entry points, the
 * context, buffers, compiled kernels and executables, and each file's functions.
 *
 * Vulkan is never linked: libvulkan.so.1 is dlopen'd at probe/init time (loader.c), so the
 * plugin loads on machines without a loader and says why it is unavailable. */
#ifndef TC_VK_INTERNAL_H
#define TC_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_kit.h"
#include "tc_plugin.h"

/* ---- Vulkan entry points, loaded through vkGetInstanceProcAddr / vkGetDeviceProcAddr ---- */
#define VK_GLOBAL_FNS(X)                                                                                     \
  X(vkCreateInstance)                                                                                        \
  X(vkEnumerateInstanceExtensionProperties)                                                                  \
  X(vkEnumerateInstanceLayerProperties)
#define VK_INSTANCE_FNS(X)                                                                                   \
  X(vkDestroyInstance)                                                                                       \
  X(vkEnumeratePhysicalDevices)                                                                              \
  X(vkGetPhysicalDeviceProperties)                                                                           \
  X(vkGetPhysicalDeviceProperties2)                                                                          \
  X(vkGetPhysicalDeviceFeatures2)                                                                            \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                                \
  X(vkGetPhysicalDeviceMemoryProperties)                                                                     \
  X(vkCreateDevice)                                                                                          \
  X(vkGetDeviceProcAddr)
#define VK_DEVICE_FNS(X)                                                                                     \
  X(vkDestroyDevice)                                                                                         \
  X(vkGetDeviceQueue)                                                                                        \
  X(vkCreateCommandPool)                                                                                     \
  X(vkDestroyCommandPool)                                                                                    \
  X(vkAllocateCommandBuffers)                                                                                \
  X(vkFreeCommandBuffers)                                                                                    \
  X(vkBeginCommandBuffer)                                                                                    \
  X(vkEndCommandBuffer)                                                                                      \
  X(vkResetCommandBuffer)                                                                                    \
  X(vkQueueSubmit)                                                                                           \
  X(vkDeviceWaitIdle)                                                                                        \
  X(vkCreateFence)                                                                                           \
  X(vkDestroyFence)                                                                                          \
  X(vkGetFenceStatus)                                                                                        \
  X(vkWaitForFences)                                                                                         \
  X(vkResetFences)                                                                                           \
  X(vkCreateBuffer)                                                                                          \
  X(vkDestroyBuffer)                                                                                         \
  X(vkGetBufferMemoryRequirements)                                                                           \
  X(vkAllocateMemory)                                                                                        \
  X(vkFreeMemory)                                                                                            \
  X(vkBindBufferMemory)                                                                                      \
  X(vkMapMemory)                                                                                             \
  X(vkUnmapMemory)                                                                                           \
  X(vkInvalidateMappedMemoryRanges)                                                                          \
  X(vkFlushMappedMemoryRanges)                                                                               \
  X(vkCmdCopyBuffer)                                                                                         \
  X(vkCmdPipelineBarrier)                                                                                    \
  X(vkCmdBindPipeline)                                                                                       \
  X(vkCmdBindDescriptorSets)                                                                                 \
  X(vkCmdPushConstants)                                                                                      \
  X(vkCmdDispatch)                                                                                           \
  X(vkCmdExecuteCommands)                                                                                    \
  X(vkCreateQueryPool)                                                                                       \
  X(vkDestroyQueryPool)                                                                                      \
  X(vkCmdResetQueryPool)                                                                                     \
  X(vkCmdWriteTimestamp)                                                                                     \
  X(vkGetQueryPoolResults)                                                                                   \
  X(vkCreateShaderModule)                                                                                    \
  X(vkDestroyShaderModule)                                                                                   \
  X(vkCreateDescriptorSetLayout)                                                                             \
  X(vkDestroyDescriptorSetLayout)                                                                            \
  X(vkCreatePipelineLayout)                                                                                  \
  X(vkDestroyPipelineLayout)                                                                                 \
  X(vkCreateComputePipelines)                                                                                \
  X(vkDestroyPipeline)                                                                                       \
  X(vkCreatePipelineCache)                                                                                   \
  X(vkDestroyPipelineCache)                                                                                  \
  X(vkGetPipelineCacheData)                                                                                  \
  X(vkCreateDescriptorPool)                                                                                  \
  X(vkDestroyDescriptorPool)                                                                                 \
  X(vkAllocateDescriptorSets)                                                                                \
  X(vkUpdateDescriptorSets)

typedef struct vk_fns {
  void *lib; /* dlopen handle of libvulkan */
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define VK_FN_FIELD(name) PFN_##name name;
  VK_GLOBAL_FNS(VK_FN_FIELD)
  VK_INSTANCE_FNS(VK_FN_FIELD)
  VK_DEVICE_FNS(VK_FN_FIELD)
#undef VK_FN_FIELD
} vk_fns;

/* loader.c: dlopen the loader and fill the global entries. Returns false with why[] filled. */
bool vk_loader_open(vk_fns *fn, char *why, size_t why_size);
bool vk_loader_instance(vk_fns *fn, VkInstance inst, char *why, size_t why_size);
bool vk_loader_device(vk_fns *fn, VkDevice dev, char *why, size_t why_size);
void vk_loader_close(vk_fns *fn);
const char *vk_result_name(VkResult r);

#define VK_MAX_DEVICES 16 /* physical devices considered */

/* ---- device capabilities the code generators and the runtime consult ---- */
typedef struct vk_device_caps {
  char name[256];
  uint32_t vendor_id, device_id, driver_version, api_version;
  VkPhysicalDeviceType type;
  bool f64, i64, storage8;   /* shaderFloat64, shaderInt64, storageBuffer8BitAccess */
  bool subgroup_shuffle;     /* subgroup shuffle ops usable in compute shaders */
  /* float controls (Vulkan 1.2): shaders may keep subnormals, and +-0, inf and NaN through
   * every op, for 32- and 64-bit floats ([0]: f32, [1]: f64) */
  bool denorm_preserve[2], signed_zero_inf_nan_preserve[2];
  bool denorm_flush_to_zero[2]; /* shaderDenormFlushToZeroFloat32/64: can be told to flush */
  uint32_t subgroup_size;
  uint32_t max_wg_invocations, max_wg_count[3], max_shared_bytes, max_push_bytes;
  uint64_t max_storage_range, min_storage_align;
  uint64_t memory_bytes; /* largest device-local heap */
  float timestamp_period;  /* nanoseconds per timestamp tick on the compute queue (0: none) */
  uint64_t timestamp_mask; /* its valid bits */
} vk_device_caps;

/* ---- buffers (memory.c) ---- */
struct tc_buffer {
  VkBuffer buf;
  VkDeviceMemory mem;
  VkDeviceSize size;
  uint64_t serial; /* unique per allocation: descriptor-set caches key on it, never on the pointer */
};

/* ---- compiled kernels and executables ---- */
typedef enum vk_kernel_shape {
  VK_SHAPE_POINTWISE = 0, /* flat grid-stride over the outer domain */
  VK_SHAPE_ROWS = 1,      /* a group of threads per outer point, inner loops and reductions */
  VK_SHAPE_MATMUL = 2     /* tiled GEMM with the fused epilogue */
} vk_kernel_shape;

#define VK_TPR_VARIANTS 6 /* threads per row: 32 << v, v = 0..5 (32..1024) */
#define VK_POINTWISE_WG 256
#define VK_ROWS_MIN_WG 128
#define VK_MM_BM 128
#define VK_MM_BN 128
/* Below this many 128x128 tiles a GEMM runs 64x128 tiles (twice as many, half the registers
 * each): attention's projection and fc2 at N=768 are 192 tiles of 128x128 for the H200's 132
 * SMs. Measured there: attn_block 3.05 -> 2.97-3.01 ms (tc run, 200 calls, twice each).
 * vulkan.matmul_tile=64|128 forces one. */
#define VK_MM_HALF_BELOW 512
#define VK_ROW_CACHE 8 /* R: vec4s per thread per value kept in registers between inner loops (32 regs) */
/* R with f32 emulated in f64: the row-in-registers body is unrolled R times, and every f32
 * result there is emulated (a division alone is a few dozen instructions): at 8, NVIDIA's
 * driver took seconds to make one row kernel's pipeline. At 2 the body is a quarter of the
 * code, and longer rows take the streaming body, which costs emulation little more. */
#define VK_ROW_CACHE_EMULATED 2
/* R of a kernel generated with or without f32 emulation */
static inline int32_t vk_row_cache(bool f32_emulate) { return f32_emulate ? VK_ROW_CACHE_EMULATED : VK_ROW_CACHE; }
/* Threads per row are chosen for about this many vec4s per thread: a 1024-float row is one
 * subgroup of 32 (reductions are shuffles, no barriers), 4096 is 128 threads; with R equal to
 * it every row up to 1024 * 4 * R floats keeps in registers (MODE 2). */
#define VK_ROW_TARGET 8

enum { VK_ACCESS_R = 1, VK_ACCESS_W = 2 };

typedef struct vk_set_entry {
  uint64_t *key; /* (serial, bound offset) per buffer */
  VkDescriptorSet set;
} vk_set_entry;

typedef struct vk_kernel {
  char *name;
  char *glsl;
  int32_t shape;   /* vk_kernel_shape */
  int32_t n_buffers;
  int32_t *numel;  /* expr id per buffer */
  int32_t *elem_size;
  uint8_t *access; /* per buffer: VK_ACCESS_R | VK_ACCESS_W, from its role (barriers by hazard) */
  int32_t n_outer;
  int32_t outer[TC_MAX_RANK];
  int32_t inner;
  int32_t mm_batch, mm_m, mm_n; /* MATMUL: expr ids */
  int32_t mm_batch2;             /* MATMUL with two batch levels: expr id of the outer one, else -1 */
  int32_t vec_width; /* POINTWISE: elements per invocation when vectorized (4) or 1 */
  uint32_t push_bytes;
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipelines[VK_TPR_VARIANTS][3]; /* [threads-per-row variant][row body]; POINTWISE/MATMUL use [0][0] */
  /* max-autotune (autotune.c): runs may repeat (no buffer both read and written, no atomic
   * accumulation); the variant chosen (ROWS: threads per row, MATMUL: tile height) and the
   * symbol values it was chosen for */
  bool pure;
  tck_tune_memo tune;
  /* ROWS: the vec4 bodies' alignment conditions (see vk_gen); rows_vec false: scalar only */
  bool rows_vec;
  int32_t row_cache; /* ROWS: the R its GLSL was generated with (vk_row_cache) */
  int32_t n_vec_bufs, n_vec_exprs;
  int32_t *vec_bufs, *vec_exprs;
  vk_set_entry *sets;
  int32_t n_sets, cap_sets;
  bool cache_hit;
  /* TC_LOGS=profile: device time of its dispatches (profile.c) */
  uint64_t prof_launches;
  double prof_ns, prof_min_ns, prof_max_ns;
} vk_kernel;

typedef struct vk_replay vk_replay; /* replay.c: one recorded call */
typedef struct vk_held vk_held;     /* replay.c: the launches of the call being held */

struct tc_executable {
  char *name;
  int32_t n_kernels;
  vk_kernel *kernels;
  int32_t n_exprs, n_syms;
  tc_size_expr *exprs;
  char *source; /* every kernel's GLSL, for executable_source */
  bool from_cache;        /* every kernel's SPIR-V came from the disk cache (shaderc skipped) */
  double compile_seconds; /* compile_kernels' own time */
  VkDescriptorPool *pools;
  int32_t n_pools;
  int32_t pool_left;
  /* reduce-overhead, max-autotune: calls replayed from recorded command buffers (replay.c) */
  bool replay, replay_off;
  bool autotune; /* max-autotune(-no-cudagraphs): each kernel's variant timed (autotune.c) */
  vk_replay *replays;
  uint64_t replay_clock, replay_hits, replay_misses;
};


/* ---- the context ---- */
#define VK_BATCH_SLOTS 4
/* flush keeps the batch open while this many are running on the device (batch.c) */
#define VK_DEFER_DEPTH 2
#define VK_DEFER_MAX_LAUNCHES 256 /* a deferred batch is submitted when it holds this many */
#define VK_HAZARD_CAP 64          /* buffers remembered per hazard set */
#define VK_PROFILE_DISPATCHES 512 /* timed dispatches per batch (TC_LOGS=profile) */
typedef struct vk_batch {
  VkCommandBuffer cmd;
  VkFence fence;
  bool in_flight; /* submitted, fence not yet waited for */
  /* the host calls whose launches it holds: the newest call_id and how many calls (an
   * asynchronous failure of the batch is reported against the newest, naming the count) */
  uint64_t last_call;
  int32_t n_calls;
} vk_batch;

struct tc_plugin_ctx {
  const tc_host_api *host;
  vk_fns fn;
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool cmd_pool;
  VkPhysicalDeviceMemoryProperties mem_props;
  vk_device_caps caps;
  char device_key[384]; /* device + driver, in every cache key */
  VkPipelineCache pipeline_cache;
  bool pipeline_cache_dirty;
  /* staging: a host-visible buffer for buffer_write/read, grown on demand */
  tc_buffer staging;
  void *staging_map;
  /* the batches: launches are recorded into the current slot's command buffer and submitted
   * by flush (end of every call) without waiting; the host waits only when a slot comes round
   * again while still running, and on reads, writes and synchronize */
  vk_batch batches[VK_BATCH_SLOTS];
  int32_t batch_cur;
  bool batch_open;
  bool batch_deferred; /* flushed, kept open while VK_DEFER_DEPTH batches run; the submitter submits it */
  int32_t batch_launches;
  /* queue_lock: held by every entry point that touches the queue, the slots or the fences,
   * and by the submitter thread (batch.c) */
  pthread_mutex_t queue_lock;
  pthread_cond_t queue_cond;
  pthread_t submitter;
  bool submitter_running, submitter_stop;
  /* the submitter's last failure: already reported to the host (report_async_error) against
   * the batch's newest call; the next entry that waits on the queue returns an error too */
  VkResult deferred_failure;
  uint64_t deferred_failure_call;
  /* buffers read / written by dispatches since the last barrier (batch.c) */
  VkBuffer hz_read[VK_HAZARD_CAP], hz_written[VK_HAZARD_CAP];
  int32_t n_hz_read, n_hz_written;
  /* since the last wait, for TC_LOGS=queue: dispatches into batches, barriers placed in front
   * of them, submissions of batches */
  uint64_t n_dispatches, n_barriers, n_submits;
  uint64_t n_replayed, n_recorded; /* calls replayed from a recorded command buffer, recordings */
  vk_held *held; /* replay.c: a reduce-overhead call's launches, until its flush */
  /* TC_LOGS=profile (profile.c): a timestamp pair around each dispatch of a batch, one query
   * pool per slot, read when the slot's fence has been waited for */
  bool profiling;
  VkQueryPool prof_pools[VK_BATCH_SLOTS];
  vk_kernel *prof_kernels[VK_BATCH_SLOTS][VK_PROFILE_DISPATCHES];
  int32_t prof_used[VK_BATCH_SLOTS];
  /* freed device buffers kept for reuse (see memory.c): every use of a buffer is ordered on
   * the one queue, so a freed buffer is handed out again without waiting for the device */
  tc_buffer **free_bufs;
  int32_t n_free, cap_free;
  VkDeviceSize free_bytes, free_limit;
  uint64_t next_serial;
  void *shaderc_compiler; /* shaderc_compiler_t, made on the first cache miss */
  pthread_mutex_t lock; /* guards shaderc_compiler's creation: compile's jobs run on several threads */
  int mm_tile;    /* vulkan.matmul_tile: 64 or 128 rows per GEMM tile; 0: by the tile count */
  bool simulate_ftz; /* $TC_VULKAN_SIMULATE_FTZ (tests): act as a driver that flushes f32 subnormals */
  int validation; /* vk_validation_mode */
  VkDebugUtilsMessengerEXT messenger;
  uint64_t validation_messages; /* warnings and errors the layer reported */
  /* the message of the last failed internal call (vk_err), turned into the entry point's
   * tc_error by vk_error_take; entries on one context are serialized by the host */
  char err[1024];
};

/* Options read at compile (COMPILE scope), for one compile call. */
typedef struct vk_compile_opts {
  bool spirv_opt;       /* vulkan.spirv_opt=1: shaderc runs spirv-opt (performance level) */
  const char *dump_dir; /* vulkan.dump_spirv: every module written there, or NULL */
  bool f32_emulate;     /* vulkan.f32_subnormals resolved for the device: f32 emulated in f64 */
} vk_compile_opts;

/* ---- subnormals.c: vulkan.f32_subnormals=auto|emulate|native ---- */
/* Whether this device's f32 arithmetic runs emulated in f64 (glsl/f32_bits.glsl, f32_ops.glsl), for the
 * option's value (NULL: auto); *why says why, for logs. TC_ERR_UNSUPPORTED (in ctx->err) when
 * emulation is asked for on a device without shaderFloat64 and shaderInt64. */
tc_status vk_f32_subnormals_choose(tc_plugin_ctx *ctx, const char *option, bool *emulate, const char **why);
/* TC_VULKAN_SIMULATE_FTZ=1 (for tests, on a device that keeps subnormals, as lavapipe, which
 * cannot be told to flush): the context acts as NVIDIA's (f32 subnormals flushed, f64 ones
 * kept: auto emulates) and native f32 code flushes subnormal loads and results (tc_ftz);
 * emulated code is left alone. Called once the device's caps are known. */
void vk_simulate_ftz_setup(tc_plugin_ctx *ctx);


/* ---- errors (plugin.c) ---- */
/* Internal calls return a tc_status and leave the message in ctx->err; the entry point turns it
 * into its tc_error with vk_error_take (NULL for TC_OK). */
tc_status vk_err(tc_plugin_ctx *ctx, tc_status st, const char *fmt, ...) TCK_PRINTF(3, 4);
tc_error *vk_error_take(tc_plugin_ctx *ctx, tc_status st);
/* A failure on a worker thread (compile's parallel jobs): ctx->err is one per context, so each
 * job keeps its own and the calling thread hands the first on with vk_err. Returns st. */
typedef struct vk_fail {
  tc_status st;
  char msg[1024];
} vk_fail;
tc_status vk_fail_set(vk_fail *f, tc_status st, const char *fmt, ...) TCK_PRINTF(3, 4);

/* ---- device.c ---- */
/* Creates an instance (validation layer when asked and installed: vk_validation_mode). */
VkResult vk_instance_create(vk_fns *fn, int validation, const tc_host_api *host, VkInstance *out);

/* ---- validation.c: the Khronos validation layer and its messages in the host's log ---- */
enum { VK_VALIDATION_OFF = 0, VK_VALIDATION_ON = 1, VK_VALIDATION_SYNC = 2 };
int vk_validation_mode(const char *option); /* "1"/"on": ON, "sync": SYNC, unset/"0": OFF */
typedef struct vk_validation_setup {
  const char *layer, *extension;
  VkValidationFeatureEnableEXT sync;
  VkValidationFeaturesEXT features; /* chain into VkInstanceCreateInfo */
} vk_validation_setup;
/* Fills s for instance creation; false (and a warning) when the layer is missing or mode OFF. */
bool vk_validation_instance_setup(vk_fns *fn, int mode, const tc_host_api *host, vk_validation_setup *s);
void vk_validation_messenger_open(tc_plugin_ctx *ctx);
void vk_validation_messenger_close(tc_plugin_ctx *ctx);
/* Physical devices with a compute queue, in preference order (discrete > integrated > virtual >
 * CPU). n in: capacity; out: count. */
VkResult vk_devices_list(vk_fns *fn, VkInstance inst, VkPhysicalDevice *devs, uint32_t *n);
void vk_device_caps_query(vk_fns *fn, VkPhysicalDevice phys, vk_device_caps *caps);
int32_t vk_device_type_tc(VkPhysicalDeviceType t);
tc_status vk_device_open(tc_plugin_ctx *ctx, int32_t index);
void vk_device_close(tc_plugin_ctx *ctx);

/* ---- memory.c ---- */
tc_status vk_buffer_create(tc_plugin_ctx *ctx, VkDeviceSize bytes, bool host_visible, tc_buffer *out);
void vk_buffer_destroy(tc_plugin_ctx *ctx, tc_buffer *b);
tc_status vk_buffer_alloc(tc_plugin_ctx *ctx, size_t bytes, tc_buffer **buf);
void vk_buffer_free(tc_plugin_ctx *ctx, tc_buffer *buf);
tc_status vk_buffer_write(tc_plugin_ctx *ctx, tc_buffer *dst, size_t offset, const void *src, size_t bytes);
tc_status vk_buffer_read(tc_plugin_ctx *ctx, tc_buffer *src, size_t offset, void *dst, size_t bytes);
void vk_staging_release(tc_plugin_ctx *ctx);
/* Destroys the cached free buffers (after waiting for the device). */
void vk_buffer_cache_release(tc_plugin_ctx *ctx);

/* ---- code generation ---- */
/* codegen_ops.c: the pieces every shader shares. */
typedef struct vk_gen {
  tc_plugin_ctx *ctx;
  const tc_kernel_list *list;
  const tc_kernel_desc *k;
  tck_str *t;
  tck_exprs x; /* the list's size expressions in GLSL syntax; marks what the shader uses */
  const bool *percomp; /* per op: its value varies per vector component in the current emission */
  bool uses_f64, uses_i64, uses_u8, uses_subgroups, uses_atomic, uses_unroll;
  /* f32 values are doubles holding them exactly, f32 buffers raw bits (vulkan.f32_subnormals;
   * set only for kernels that touch f32) */
  bool f32_emulate;
  bool uses_index_error; /* TC_KOP_INDEX_CHECK ops (ABI 2.3): their record buffers get a helper */
  bool index_local;      /* checks note a bad index in registers (vk_gen_index_locals), else call the helper */
  /* ROWS: what must be a multiple of 4 for the vec4 bodies (the launch checks it and picks
   * the body through a specialization constant): buffers' element offsets, size expressions */
  bool rows_vec;
  int32_t n_vec_bufs, n_vec_exprs;
  int32_t vec_bufs[64], vec_exprs[192];
  char err[256];
} vk_gen;
const char *vk_glsl_type(int32_t dtype);
/* Whether the kernel flushes like a flushing driver: native f32 under TC_VULKAN_SIMULATE_FTZ
 * (subnormals.c). */
bool vk_gen_simulates_ftz(const vk_gen *g);
/* The dtype whose GLSL type holds a value of dtype in this kernel: f64 for an emulated f32. */
int32_t vk_value_dtype(const vk_gen *g, int32_t dtype);
/* The GLSL type of a value of dtype ("double" for an emulated f32). */
const char *vk_value_type(const vk_gen *g, int32_t dtype);
/* The 4-wide GLSL type a vec4 access of a dtype buffer reads ("uvec4": an emulated f32's bits). */
const char *vk_vec4_type(const vk_gen *g, int32_t dtype);
/* Into t: the value of a dtype element whose stored form is the expression `raw` (a buffer
 * element or vector component), and the stored form of value expression `val`. */
void vk_gen_from_storage(const vk_gen *g, tck_str *t, int32_t dtype, const char *raw);
void vk_gen_to_storage(const vk_gen *g, tck_str *t, int32_t dtype, const char *val);
/* An expression id as GLSL: a literal for constants, "eN" otherwise (marks it used). */
void vk_gen_expr_ref(vk_gen *g, tck_str *t, int32_t id);
/* Declares every used expression (and their children), children first. */
void vk_gen_exprs_declare(vk_gen *g, tck_str *t, int indent);
/* Validates a kernel's ops against the device: dtypes and prims the generators accept. */
bool vk_gen_check_kernel(vk_gen *g);
/* The shader prologue: version, extensions, buffer bindings and the push-constant block. */
/* A GLSL identifier for kernel buffer i: its name (suffixed by the index) when that is a safe
 * identifier, else buf<i>. Every generator names buffers through this. */
void vk_buffer_ident(const tc_kernel_desc *k, int32_t i, char *out, size_t n);
void vk_gen_prologue(vk_gen *g, tck_str *head, const tck_str *body);
/* Emits op `i` as a statement defining v<i><suffix>. vars: GLSL expressions for the n_outer + 1
 * loop variables (NULL entries: variable not in scope). comp: component suffix ("" or "_2").
 * vec_load: a GLSL expression already holding this op's value (vector component), or NULL. */
void vk_gen_op(vk_gen *g, tck_str *t, int indent, int32_t i, const char *const *vars, const char *suffix,
               const char *value_override);
/* ABI 2.3's index checks in pointwise and row kernels: an out-of-range index is noted in
 * registers (declared by vk_gen_index_locals at the top of main) and recorded once, by
 * vk_gen_index_flush before main returns: with the record's atomic inside the loop lavapipe ran
 * an embedding 2x slower, never taken as it was. Both write nothing for a kernel without
 * checks; other kernels (matmul epilogues) call the record's helper at the check. */
void vk_gen_index_locals(vk_gen *g, tck_str *t);
void vk_gen_index_flush(vk_gen *g, tck_str *t, int indent);
/* The element index of op i's tc_index over vars, as GLSL (without the buffer's element offset). */
void vk_gen_index(vk_gen *g, tck_str *t, const tc_index *ix, const char *const *vars, const char *suffix);
/* Scalar literal for a constant op. */
void vk_gen_const(tck_str *t, int32_t dtype, double f, int64_t i);
/* True when the expression is the constant c. */
bool vk_expr_is_const(const vk_gen *g, int32_t id, int64_t c);

/* The GLSL library's files (the .glsl files under glsl/), embedded by CMake (glsl/embed.cmake). */
#define VK_GLSL_FILES(X)                                                                                      \
  X(sizes) X(minmax_f32) X(minmax_64) X(rem_f32) X(rem_64) X(ftoi_f32) X(ftoi_64) X(exp_f32) X(div_f32) X(div_f64) \
  X(recip_f32) X(log_f32) X(trig_f32) X(tanh_f32) X(erf_f32) X(pow_f32) X(exp_f64) X(log_f64) X(trig_f64)       \
  X(tanh_f64) X(erf_f64) X(erf_f32_emulated) X(pow_f64) X(philox) X(atomic_add_f32) X(atomic_add_f64)     \
  X(f32_bits) X(f32_ops) X(atomic_add_f32_emulated) X(round_f64)
#define VK_GLSL_DECL(name) extern const char vk_glsl_##name[];
VK_GLSL_FILES(VK_GLSL_DECL)
#undef VK_GLSL_DECL

/* codegen_math.c: the GLSL library (the .glsl files under plugins/vulkan/glsl/, embedded as vk_glsl_<file>)
 * a shader needs: what GLSL lacks (erf, accurate exp/log/sin/cos/tanh, Philox, ...). */
void vk_gen_math_helpers(vk_gen *g, tck_str *t, const char *body);
void vk_gen_atomic_helpers(vk_gen *g, tck_str *t);

/* codegen_loop.c / codegen_matmul.c: one GLSL compute shader per kernel. */
tc_status vk_gen_loop(vk_gen *g, int32_t *shape /* out */);
tc_status vk_gen_matmul(vk_gen *g);

/* ---- shader_compile.c: GLSL -> SPIR-V with shaderc ---- */
/* Thread-safe: compile runs one per kernel on several threads (a failure goes to *f). */
tc_status vk_shader_compile(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *name, const char *glsl,
                            uint32_t **spirv, size_t *n_words, vk_fail *f);
void vk_shader_compiler_release(tc_plugin_ctx *ctx);

/* ---- cache.c: SPIR-V and the VkPipelineCache blob through the host's disk cache ---- */
/* Looks up SPIR-V for glsl on this device. true and *spirv (malloc'd) on a verified hit. */
bool vk_cache_spirv_load(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *glsl, uint32_t **spirv,
                         size_t *n_words);
void vk_cache_spirv_store(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *glsl, const uint32_t *spirv,
                          size_t n_words);
void vk_pipeline_cache_open(tc_plugin_ctx *ctx);
void vk_pipeline_cache_save(tc_plugin_ctx *ctx);
void vk_spirv_dump(tc_plugin_ctx *ctx, const vk_compile_opts *o, const char *name, const uint32_t *spirv,
                   size_t n_words);

/* ---- pipeline.c ---- */
/* k's shader module and layouts. Thread-safe for distinct kernels (a failure goes to *f). */
tc_status vk_kernel_pipeline_layout(tc_plugin_ctx *ctx, vk_kernel *k, const uint32_t *spirv, size_t n_words, vk_fail *f);
/* Creates k's pipeline for variant v (threads-per-row index for ROWS, tile variant for MATMUL)
 * and row body `mode` (ROWS: 0 scalar, 1 vec4, 2 vec4 + registers; 0 otherwise) into *out,
 * through the context's VkPipelineCache (internally synchronized). Thread-safe: it touches
 * nothing of the context but the driver; the caller marks the pipeline cache dirty. */
VkResult vk_pipeline_make(tc_plugin_ctx *ctx, const vk_kernel *k, int32_t variant, int32_t mode, VkPipeline *out);
/* What (variant, mode) means for k, for messages: "256 threads per row, vec4 body". */
void vk_variant_text(const vk_kernel *k, int32_t variant, int32_t mode, char *out, size_t n);
/* The pipeline for (variant, mode): made at compile (prepare.c), else created here on first
 * use (logged under "cache": a variant compile did not foresee). */
tc_status vk_kernel_pipeline(tc_plugin_ctx *ctx, vk_kernel *k, int32_t variant, int32_t mode, VkPipeline *out);
void vk_kernel_destroy(tc_plugin_ctx *ctx, vk_kernel *k);
/* An executable's descriptor sets are cached per buffer identity; a program that keeps making
 * new buffers would grow that cache without end, so past this many pools of 64 sets the
 * launch waits for the device and drops them all (vk_executable_sets_drop). */
#define VK_POOLS_MAX 16
void vk_executable_sets_drop(tc_plugin_ctx *ctx, tc_executable *exe);
/* A descriptor set binding args (one per buffer), cached per executable by buffer identity. */
tc_status vk_kernel_descriptor_set(tc_plugin_ctx *ctx, tc_executable *exe, vk_kernel *k, const tc_buffer_arg *args,
                                   VkDescriptorSet *out, uint32_t *elem_offsets /* out, per buffer */);

/* ---- parallel.c ---- */
/* At most this many threads per compile: the H200 machine's 16 cores; the cap keeps a many-core
 * host from running dozens of driver compilers at once, each with its own working memory. */
#define VK_PARALLEL_MAX 16
/* Runs job(arg, i) for i in 0..n-1 on min(n, online cores, VK_PARALLEL_MAX) threads, the
 * calling one included; returns once all are done and joined, with the number of threads that
 * ran. Jobs must be independent and thread-safe; each reports its failure in its own item. */
int32_t vk_parallel_run(int32_t n, void (*job)(void *arg, int32_t i), void *arg);

/* ---- prepare.c ---- */
/* Makes, on vk_parallel_run's threads, the pipelines exe's first call will bind (each kernel's
 * variant for the list's constant sizes; see the file). A failure names its kernel. */
tc_status vk_executable_prepare(tc_plugin_ctx *ctx, tc_executable *exe);

/* ---- executable.c ---- */
tc_status vk_compile_kernels(tc_plugin_ctx *ctx, const vk_compile_opts *o, const tc_kernel_list *list,
                             tc_executable **exe);
void vk_executable_free(tc_plugin_ctx *ctx, tc_executable *exe);

/* ---- batch.c: slots, submission, barriers, the submitter thread ---- */
tc_status vk_cmd_begin(tc_plugin_ctx *ctx, VkCommandBuffer cmd, VkCommandBufferUsageFlags flags, bool lead);
void vk_barrier_after_dispatch(tc_plugin_ctx *ctx, VkCommandBuffer cmd);
void vk_barrier_all(tc_plugin_ctx *ctx, VkCommandBuffer cmd);
/* Records a barrier in front of kernel k's dispatch when it conflicts with a dispatch since
 * the last barrier, then notes what it reads and writes. */
void vk_hazard_barrier(tc_plugin_ctx *ctx, VkCommandBuffer cmd, const vk_kernel *k, const tc_buffer_arg *args);
/* After a barrier that orders everything recorded or submitted before it. */
void vk_hazards_clear(tc_plugin_ctx *ctx);
/* The open batch's command buffer, opening one (waiting for its slot) when none is open. */
tc_status vk_batch_cmd(tc_plugin_ctx *ctx, VkCommandBuffer *cmd);
/* The open batch holds a launch of host call call_id (for asynchronous failures). */
void vk_batch_note_call(tc_plugin_ctx *ctx, uint64_t call_id);
/* Submits the open batch (if any) without waiting. */
tc_status vk_flush(tc_plugin_ctx *ctx);
/* The ABI's flush: vk_flush, or the batch stays open for the submitter while the device is busy. */
tc_status vk_flush_call(tc_plugin_ctx *ctx);
/* Submits the open batch (if any) and waits for all submitted work. */
tc_status vk_flush_wait(tc_plugin_ctx *ctx);
tc_status vk_synchronize(tc_plugin_ctx *ctx);
/* One-shot command buffer helpers for transfers: submitted and waited for. */
tc_status vk_oneshot_begin(tc_plugin_ctx *ctx, VkCommandBuffer *cmd);
tc_status vk_oneshot_end(tc_plugin_ctx *ctx, VkCommandBuffer cmd);
void vk_submitter_start(tc_plugin_ctx *ctx);
void vk_submitter_stop(tc_plugin_ctx *ctx);

/* ---- profile.c: TC_LOGS=profile, device time per kernel from timestamp queries ---- */
void vk_profile_open(tc_plugin_ctx *ctx);
void vk_profile_close(tc_plugin_ctx *ctx);
/* A batch opens in slot `slot`: its queries are reset. */
void vk_profile_batch_begin(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd);
/* Around a dispatch of k into slot's batch; false from before when the slot is full (untimed). */
bool vk_profile_before(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd, vk_kernel *k);
void vk_profile_after(tc_plugin_ctx *ctx, int32_t slot, VkCommandBuffer cmd);
/* The slot's fence has been waited for: its times go to their kernels. */
void vk_profile_collect(tc_plugin_ctx *ctx, int32_t slot);
/* One log line per timed kernel of exe. */
void vk_profile_report(tc_plugin_ctx *ctx, const tc_executable *exe);

/* ---- launch.c ---- */
/* The launch's choices, shared with prepare.c so that what compile makes ahead is what the
 * launch binds. ROWS: the threads-per-row variant (32 << v) for rows of n elements (force: a
 * variant to take when the device allows it, else -1), and the row body (0 scalar, 1 vec4,
 * 2 vec4 kept in registers; aligned: every vec4 condition of the kernel holds). MATMUL: the
 * tile variant (1: 64-row tiles, 0: 128) for nb batches of m x n. */
int32_t vk_rows_variant(const tc_plugin_ctx *ctx, int64_t n, int32_t force);
int32_t vk_rows_mode(const vk_kernel *k, int64_t n, int32_t variant, bool aligned);
int32_t vk_matmul_variant(const tc_plugin_ctx *ctx, int64_t nb, int64_t m, int64_t n, int32_t force);
/* Records kernel `kernel` of exe into the open batch; args: one per kernel buffer. call_id:
 * the host call it belongs to (an asynchronous failure of its batch is reported against it). */
tc_status vk_launch(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                    const int64_t *syms, uint64_t call_id);
/* Records kernel `kernel`'s dispatch into cmd (any command buffer), with a barrier in front
 * where it conflicts with dispatches in the context's hazard sets. */
tc_status vk_launch_record(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                           const int64_t *syms, VkCommandBuffer cmd);

/* Records kernel `kernel`'s dispatch into cmd with variant `variant` (ROWS: threads per row
 * 32 << variant; MATMUL: 1 = half-height tiles); -1: the launch's own choice. */
tc_status vk_launch_record_variant(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                                   const int64_t *syms, VkCommandBuffer cmd, int32_t variant);

/* ---- autotune.c: max-autotune's variant per kernel ---- */
/* Chooses kernel `kernel`'s variant for these symbol values when exe autotunes and none is
 * chosen yet (disk cache, else timed on args: waits for the device). Call with no batch command
 * buffer in hand: timing submits and waits. */
tc_status vk_autotune_kernel(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                             const int64_t *syms);

/* ---- replay.c: reduce-overhead's recorded command buffers ---- */
/* True when exe's launches are held for replay (its mode asks for it, profiling is off). */
bool vk_replay_wanted(const tc_plugin_ctx *ctx, const tc_executable *exe);
/* Holds one launch of a call (args: n_args, copied). */
tc_status vk_replay_hold(tc_plugin_ctx *ctx, tc_executable *exe, int32_t kernel, const tc_buffer_arg *args,
                         int32_t n_args, const int64_t *syms, uint64_t call_id);
/* The end of a call: a whole held call is replayed (recorded first on a miss); else released. */
tc_status vk_replay_flush(tc_plugin_ctx *ctx);
/* Records what is held into the batch as the default mode would (before any other entry). */
tc_status vk_replay_release(tc_plugin_ctx *ctx);
/* Frees exe's recorded calls; none may be pending on the device. */
void vk_replays_free(tc_plugin_ctx *ctx, tc_executable *exe);
void vk_replay_held_free(tc_plugin_ctx *ctx);

#endif
