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

tc_status core_error(tc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_v(s, fmt, ap);
  va_end(ap);
  return s;
}

void *core_error_null(tc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_v(s, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *tc_last_error(void) { return err_msg; }
tc_status tc_last_status(void) { return err_status; }

void tc_error_clear(void) {
  err_msg[0] = 0;
  err_status = TC_OK;
}

/* The names come from the kit, the one table plugins and the core share. */
const char *tc_status_name(tc_status s) { return tck_status_name(s); }
const char *tc_dtype_name(tc_dtype d) { return tck_dtype_name(d); }
size_t tc_dtype_size(tc_dtype d) { return tck_dtype_size(d); }
