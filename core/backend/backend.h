/* backend/backend.h — the backend stage: the core's view of a backend, a loaded plugin (or an
 * in-process registration) with its probe result and, once used, its context. Implemented by
 * registry/, which sits at this level. May use: base. */
#ifndef TC_BACKEND_H
#define TC_BACKEND_H

#include "base/base.h"

typedef struct tc_backend {
  char name[64];
  char version[32];
  char description[160];
  char path[1024];     /* the shared object, or "(in-process)" */
  bool available;
  char reason[512];    /* why unavailable (or a note) */
  tc_probe_info probe;
  tc_plugin_api api;   /* zero past what the plugin filled: optional entries read as NULL */
  tc_host_api host;
  void *dl;            /* dlopen handle; NULL when registered in-process */
  tc_plugin_ctx *ctx;  /* created on first use, device 0 (or "<name>.device") */
} tc_backend;

/* The backend named `name` ("auto": the best available), with its context initialized.
 * NULL with an error that says why (unknown: lists the known names; unavailable: the reason). */
tc_backend *backend_find(const char *name);
/* The backend eager ops run on: $TC_EAGER_BACKEND, else "debug-eager". */
tc_backend *backend_eager(void);

/* Plugin options for the calls that follow on this thread ("cpu.threads=2,..."); the host's
 * get_option reads these first, then $TC_OPTIONS. NULL clears. */
void backend_set_thread_options(const char *options);

#endif
