/* dynlib.c — loading the CUDA libraries (driver, NVRTC, cuBLASLt) at run time: the plugin links
 * none of them, so a machine without them lists the backend as unavailable with the reason
 * instead of failing to load it. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "icuda.h"

void *icuda_dlopen_first(const char *const *names, size_t n, char *why, size_t cap) {
  char first_err[256] = "";
  for (size_t i = 0; i < n; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    if (i == 0) { /* the versioned name is the one that should exist: its error is the one to show */
      const char *e = dlerror();
      size_t nl = strlen(names[i]); /* dlerror repeats the name: "libx.so: cannot open ..." */
      if (e && !strncmp(e, names[i], nl) && e[nl] == ':' && e[nl + 1] == ' ') e += nl + 2;
      snprintf(first_err, sizeof first_err, "%s", e ? e : "not found");
    }
  }
  snprintf(why, cap, "%s: %s", n ? names[0] : "?", first_err);
  return NULL;
}

void icuda_dlsym(void *lib, const char *symbol, void *fn_ptr, size_t size, const char **missing) {
  void *p = dlsym(lib, symbol);
  if (!p && !*missing) *missing = symbol;
  memcpy(fn_ptr, &p, size); /* object -> function pointer, without the cast ISO C frowns on */
}
