/* nvrtc.c — NVRTC, dlopen'd (libnvrtc.so.13, then libnvrtc.so): CUDA C to a cubin for one
 * sm, without a GPU. <nvrtc.h> gives the types only; every function comes from dlsym, so the
 * plugin has no link-time dependency on the toolkit. Loaded once (pthread_once); the handle is
 * kept for the life of the process. */
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

struct icuda_nvrtc {
  void *dl;
  char version[32];
  const char *(*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int *, int *);
  nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *);
  nvrtcResult (*DestroyProgram)(nvrtcProgram *);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct icuda_nvrtc lib;
static bool lib_ok;
static char lib_err[512];
static double load_seconds;

#define SYM(field, name) icuda_dlsym(lib.dl, name, &lib.field, sizeof lib.field, &missing)

static void load_timed(void);
static void load(void) {
  double t0 = tck_now_s();
  load_timed();
  load_seconds = tck_now_s() - t0;
}

static void load_timed(void) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so"};
  char why[300];
  lib.dl = icuda_dlopen_first(names, 2, why, sizeof why);
  if (!lib.dl) {
    snprintf(lib_err, sizeof lib_err, "NVRTC could not be loaded (%s)", why);
    return;
  }
  const char *missing = NULL;
  SYM(GetErrorString, "nvrtcGetErrorString");
  SYM(Version, "nvrtcVersion");
  SYM(CreateProgram, "nvrtcCreateProgram");
  SYM(DestroyProgram, "nvrtcDestroyProgram");
  SYM(CompileProgram, "nvrtcCompileProgram");
  SYM(GetCUBINSize, "nvrtcGetCUBINSize");
  SYM(GetCUBIN, "nvrtcGetCUBIN");
  SYM(GetProgramLogSize, "nvrtcGetProgramLogSize");
  SYM(GetProgramLog, "nvrtcGetProgramLog");
  if (missing) {
    snprintf(lib_err, sizeof lib_err, "NVRTC: %s not found in the library", missing);
    dlclose(lib.dl);
    lib.dl = NULL;
    return;
  }
  int major = 0, minor = 0;
  if (lib.Version(&major, &minor) != NVRTC_SUCCESS) {
    snprintf(lib_err, sizeof lib_err, "NVRTC: nvrtcVersion failed");
    return;
  }
  snprintf(lib.version, sizeof lib.version, "%d.%d", major, minor);
  lib_ok = true;
}

const icuda_nvrtc *icuda_nvrtc_load(char *err, size_t cap) {
  pthread_once(&load_once, load);
  if (!lib_ok) {
    if (err && cap) snprintf(err, cap, "%s", lib_err);
    return NULL;
  }
  return &lib;
}

double icuda_nvrtc_load_seconds(void) {
  pthread_once(&load_once, load);
  return load_seconds;
}

const char *icuda_nvrtc_version(const icuda_nvrtc *n) { return n ? n->version : "none"; }

/* No --use_fast_math: IEEE division and square root (-prec-div, -prec-sqrt default to true),
 * denormals kept. --fmad=false: a*b+c rounds twice, as the other backends' C does, so pointwise
 * results match them bit for bit (the prelude's polynomials fuse explicitly, with fmaf). */
#define FLAGS_FMT "--gpu-architecture=sm_%d --fmad=false -default-device -std=c++17"

const char *icuda_nvrtc_flags(int32_t sm) {
  /* one static string per sm seen; a small table so the pointer stays valid */
  static _Thread_local char text[8][96];
  static _Thread_local int next;
  char *t = text[next++ & 7];
  snprintf(t, sizeof text[0], FLAGS_FMT, (int)sm);
  return t;
}

char *icuda_cubin_key(int32_t sm, const char *nvrtc_version, const char *source, size_t *len) {
  tck_str key = {0};
  tck_str_printf(&key, "inductor-cuda cubin\nsm_%d\nnvrtc %s\nflags %s\n", (int)sm, nvrtc_version,
                 icuda_nvrtc_flags(sm));
  tck_str_puts(&key, source);
  *len = key.len;
  return tck_str_take(&key);
}

tc_status icuda_nvrtc_compile(const icuda_nvrtc *n, const char *source, const char *name, int32_t sm, void **cubin,
                              size_t *size, char *err, size_t cap) {
  *cubin = NULL;
  *size = 0;
  if (!n) {
    snprintf(err, cap, "NVRTC is not loaded");
    return TC_ERR_UNAVAILABLE;
  }
  nvrtcProgram prog = NULL;
  nvrtcResult r = n->CreateProgram(&prog, source, name ? name : "tc_module.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    snprintf(err, cap, "nvrtcCreateProgram: %s", n->GetErrorString(r));
    return TC_ERR_INTERNAL;
  }
  char arch[48];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", (int)sm);
  const char *opts[] = {arch, "--fmad=false", "-default-device", "-std=c++17"};
  r = n->CompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    char *log = NULL;
    if (n->GetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0 && (log = malloc(log_size + 1))) {
      if (n->GetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
      log[log_size] = 0;
    }
    snprintf(err, cap, "NVRTC (%s, sm_%d): %s\n%s", n->GetErrorString(r), (int)sm, name ? name : "", log ? log : "");
    free(log);
    n->DestroyProgram(&prog);
    return TC_ERR_COMPILE;
  }
  size_t sz = 0;
  r = n->GetCUBINSize(prog, &sz);
  void *buf = r == NVRTC_SUCCESS && sz ? malloc(sz) : NULL;
  if (!buf || n->GetCUBIN(prog, buf) != NVRTC_SUCCESS) {
    snprintf(err, cap, "NVRTC: no cubin for sm_%d (%s)", (int)sm, n->GetErrorString(r));
    free(buf);
    n->DestroyProgram(&prog);
    return buf ? TC_ERR_INTERNAL : TC_ERR_OUT_OF_MEMORY;
  }
  n->DestroyProgram(&prog);
  *cubin = buf;
  *size = sz;
  return TC_OK;
}
