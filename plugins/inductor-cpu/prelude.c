/* prelude.c — the sections of prelude/tc_cpu_prelude.h (embedded at build time as
 * icpu_prelude_lines) that a unit needs, pasted at its top. */
#include <string.h>

#include "icpu.h"

extern const char *const icpu_prelude_lines[];
extern const size_t icpu_prelude_n_lines;

#define SECTION_MARK "//@section "

void prelude_emit(tck_str *s, bool with_blas, bool with_stream) {
  /* Sections in the header's order: common, stream, blas. */
  static const char *const order[] = {"common", "stream", "blas"};
  const bool want[] = {true, with_stream, with_blas};
  for (size_t w = 0; w < sizeof order / sizeof order[0]; w++) {
    if (!want[w]) continue;
    bool in = false;
    for (size_t i = 0; i < icpu_prelude_n_lines; i++) {
      const char *line = icpu_prelude_lines[i];
      if (strncmp(line, SECTION_MARK, strlen(SECTION_MARK)) == 0) {
        const char *name = line + strlen(SECTION_MARK);
        size_t n = strcspn(name, "\n");
        in = n == strlen(order[w]) && strncmp(name, order[w], n) == 0;
        continue;
      }
      if (in) tck_str_puts(s, line);
    }
  }
}
