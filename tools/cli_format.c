/* cli_format.c — how the subcommands print values: JSON scalars (one escaper for every
 * --json) and times with their unit. */
#include <math.h>
#include <stdio.h>

#include "tc_cli.h"

void cli_json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f);
    }
  }
  fputc('"', f);
}

void cli_json_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.9g", v);
  else
    fputs("null", f); /* JSON has no NaN or infinity */
}

const char *cli_time_str(double s, char *buf, size_t cap) {
  if (!isfinite(s))
    snprintf(buf, cap, "-");
  else if (s >= 1.0)
    snprintf(buf, cap, "%.3f s", s);
  else if (s >= 1e-3)
    snprintf(buf, cap, "%.3f ms", s * 1e3);
  else
    snprintf(buf, cap, "%.2f us", s * 1e6);
  return buf;
}
