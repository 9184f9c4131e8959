/* error.c — per-thread error messages. Library code reports, never aborts. */
#include <stdio.h>
#include <string.h>

#include "base/base.h"

static _Thread_local char err_msg[2048];
static _Thread_local tc_status err_status;

static void set_v(tc_status s, const char *fmt, va_list ap) {
  err_status = s;
  vsnprintf(err_msg, sizeof err_msg, fmt, ap);
  if (tc_logs_on("errors")) tc_logs("errors", "%s: %s", tc_status_name(s), err_msg);
}

tc_status tc_error(tc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_v(s, fmt, ap);
  va_end(ap);
  return s;
}

void *tc_error_null(tc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_v(s, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *tc_last_error(void) { return err_msg; }
tc_status tc_last_status(void) { return err_status; }

void tc_clear_error(void) {
  err_msg[0] = 0;
  err_status = TC_OK;
}

const char *tc_status_name(tc_status s) {
  switch (s) {
  case TC_OK: return "ok";
  case TC_ERR_INVALID_ARGUMENT: return "invalid argument";
  case TC_ERR_UNSUPPORTED: return "unsupported";
  case TC_ERR_UNAVAILABLE: return "unavailable";
  case TC_ERR_OUT_OF_MEMORY: return "out of memory";
  case TC_ERR_COMPILE: return "compile error";
  case TC_ERR_VERSION: return "version mismatch";
  case TC_ERR_INTERNAL: return "internal error";
  case TC_ERR_GUARD: return "guard failed";
  case TC_ERR_GRAPH_BREAK: return "graph break";
  }
  return "unknown status";
}

const char *tc_dtype_name(tc_dtype d) {
  switch (d) {
  case TC_F32: return "f32";
  case TC_F64: return "f64";
  case TC_I32: return "i32";
  case TC_I64: return "i64";
  case TC_BOOL: return "bool";
  case TC_F16: return "f16";
  case TC_BF16: return "bf16";
  default: return "?";
  }
}
