/* driver.c — the CUDA driver API, dlopen'd: libcuda.so.1 (the name the driver package
 * installs), then libcuda.so. No link-time dependency, so the plugin loads on any machine and
 * says why it is unavailable.
 *
 * Lookup: plain dlsym of the exact symbol cuda.h maps each API name to (cuMemAlloc ->
 * cuMemAlloc_v2, cuCtxPushCurrent -> cuCtxPushCurrent_v2, ...: the names below), not
 * cuGetProcAddress: the versioned names are stable exports of every driver since CUDA 11.2
 * (cuMemAllocAsync's first release), and a missing one names itself in the error. The default
 * (legacy) stream variants are taken, not the _ptsz ones: the plugin passes its own stream to
 * every call, so the per-thread default stream never matters.
 *
 * Loaded once per process (pthread_once), never unloaded: the driver does not support being
 * unloaded while contexts exist, and the plugin itself may be dlclosed and dlopened again. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "icuda.h"

static icuda_driver g_drv;
static bool g_ok;
static char g_why[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void driver_load_once(void) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
  char why[300];
  void *lib = icuda_dlopen_first(names, 2, why, sizeof why);
  if (!lib) {
    snprintf(g_why, sizeof g_why, "no CUDA driver (%s)", why);
    return;
  }
  icuda_driver d = {.lib = lib};
  const char *missing = NULL;
#define SYM(field, symbol) icuda_dlsym(lib, symbol, &d.field, sizeof d.field, &missing)
  SYM(cuInit, "cuInit");
  SYM(cuDriverGetVersion, "cuDriverGetVersion");
  SYM(cuGetErrorName, "cuGetErrorName");
  SYM(cuGetErrorString, "cuGetErrorString");
  SYM(cuDeviceGetCount, "cuDeviceGetCount");
  SYM(cuDeviceGet, "cuDeviceGet");
  SYM(cuDeviceGetName, "cuDeviceGetName");
  SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  SYM(cuCtxGetCurrent, "cuCtxGetCurrent");
  SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  SYM(cuStreamCreate, "cuStreamCreate");
  SYM(cuStreamDestroy, "cuStreamDestroy_v2");
  SYM(cuStreamSynchronize, "cuStreamSynchronize");
  SYM(cuStreamQuery, "cuStreamQuery");
  SYM(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
  SYM(cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  SYM(cuMemAllocAsync, "cuMemAllocAsync");
  SYM(cuMemFreeAsync, "cuMemFreeAsync");
  SYM(cuMemAlloc, "cuMemAlloc_v2");
  SYM(cuMemFree, "cuMemFree_v2");
  SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  SYM(cuMemsetD8Async, "cuMemsetD8Async");
  SYM(cuPointerGetAttribute, "cuPointerGetAttribute");
  SYM(cuModuleLoadData, "cuModuleLoadData");
  SYM(cuModuleUnload, "cuModuleUnload");
  SYM(cuModuleGetFunction, "cuModuleGetFunction");
  SYM(cuFuncSetAttribute, "cuFuncSetAttribute");
  SYM(cuLaunchKernel, "cuLaunchKernel");
#undef SYM
  /* optional: graphs (CUDA 11.4+); a driver without them runs reduce-overhead uncaptured */
  const char *no_graphs = NULL;
#define OPT(field, symbol) icuda_dlsym(lib, symbol, &d.field, sizeof d.field, &no_graphs)
  OPT(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  OPT(cuStreamEndCapture, "cuStreamEndCapture");
  OPT(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  OPT(cuGraphLaunch, "cuGraphLaunch");
  OPT(cuGraphExecDestroy, "cuGraphExecDestroy");
  OPT(cuGraphDestroy, "cuGraphDestroy");
#undef OPT
  if (no_graphs) d.cuStreamBeginCapture = NULL;
  const char *no_events = NULL;
#define OPT(field, symbol) icuda_dlsym(lib, symbol, &d.field, sizeof d.field, &no_events)
  OPT(cuEventCreate, "cuEventCreate");
  OPT(cuEventRecord, "cuEventRecord");
  OPT(cuEventSynchronize, "cuEventSynchronize");
  OPT(cuEventDestroy, "cuEventDestroy_v2");
  const char *no_v2 = NULL; /* CUDA 12.8 added _v2 (the same signature); 13 maps the name to it */
  icuda_dlsym(lib, "cuEventElapsedTime_v2", &d.cuEventElapsedTime, sizeof d.cuEventElapsedTime, &no_v2);
  if (no_v2) OPT(cuEventElapsedTime, "cuEventElapsedTime");
#undef OPT
  if (no_events) d.cuEventCreate = NULL;
  const char *no_ex = NULL; /* optional: without it every launch is an ordinary one */
  icuda_dlsym(lib, "cuLaunchKernelEx", &d.cuLaunchKernelEx, sizeof d.cuLaunchKernelEx, &no_ex);
  if (no_ex) d.cuLaunchKernelEx = NULL;
  if (missing) {
    snprintf(g_why, sizeof g_why, "the CUDA driver lacks %s (a driver for CUDA 11.2 or newer is needed)", missing);
    dlclose(lib);
    return;
  }
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    char nb[48];
    const char *s = NULL;
    if (d.cuGetErrorString(r, &s) != CUDA_SUCCESS) s = NULL;
    snprintf(g_why, sizeof g_why, "cuInit failed: %s%s%s%s", icuda_cu_name(&d, r, nb, sizeof nb), s ? " (" : "",
             s ? s : "", s ? ")" : "");
    /* keep the library loaded: cuInit may have started threads */
    return;
  }
  if (d.cuDriverGetVersion(&d.version) != CUDA_SUCCESS) d.version = 0;
  g_drv = d;
  g_ok = true;
}

const icuda_driver *icuda_driver_load(char *err, size_t cap) {
  pthread_once(&g_once, driver_load_once);
  if (g_ok) return &g_drv;
  if (err && cap) snprintf(err, cap, "%s", g_why);
  return NULL;
}

const char *icuda_cu_name(const icuda_driver *d, CUresult r, char *buf, size_t cap) {
  const char *s = NULL;
  if (d && d->cuGetErrorName && d->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  /* the codes a driver that cannot name them (the toolkit's stub libcuda) gives at cuInit */
  switch (r) {
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
  default: break;
  }
  snprintf(buf, cap, "CUresult %d", (int)r);
  return buf;
}

bool icuda_device_query(const icuda_driver *d, int i, icuda_device_facts *f, char *err, size_t cap) {
  memset(f, 0, sizeof *f);
  char nb[48];
  CUdevice dev;
  CUresult r = d->cuDeviceGet(&dev, i);
  const char *call = "cuDeviceGet";
  if (r == CUDA_SUCCESS) {
    call = "cuDeviceGetName";
    r = d->cuDeviceGetName(f->name, (int)sizeof f->name, dev);
  }
  size_t mem = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuDeviceTotalMem_v2";
    r = d->cuDeviceTotalMem(&mem, dev);
  }
  int major = 0, minor = 0, sms = 0, integrated = 0, pools = 0, optin = 0;
  struct {
    CUdevice_attribute attr;
    int *out;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, &integrated},
      {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, &pools},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &optin},
  };
  for (size_t a = 0; a < sizeof attrs / sizeof attrs[0] && r == CUDA_SUCCESS; a++) {
    call = "cuDeviceGetAttribute";
    r = d->cuDeviceGetAttribute(attrs[a].out, attrs[a].attr, dev);
  }
  if (r != CUDA_SUCCESS) {
    snprintf(err, cap, "device %d: %s failed: %s", i, call, icuda_cu_name(d, r, nb, sizeof nb));
    return false;
  }
  f->name[sizeof f->name - 1] = '\0';
  f->memory_bytes = mem;
  f->sm = major * 10 + minor;
  f->n_sms = sms;
  f->integrated = integrated != 0;
  f->mempools = pools != 0;
  f->smem_optin = optin;
  return true;
}
