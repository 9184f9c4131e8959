/* prelude.c — the sections of prelude/tc_cpu_prelude.h (embedded at build time as
 * icpu_prelude_lines) and the kit's scalar helpers (plugin-api/kit/prelude/tc_scalar.h,
 * tck_scalar_prelude_lines) that a unit needs, pasted at its top. */
#include <string.h>

#include "icpu.h"

extern const char *const icpu_prelude_lines[];
extern const size_t icpu_prelude_n_lines;
extern const char *const tck_scalar_prelude_lines[];
extern const size_t tck_scalar_prelude_n_lines;

void prelude_emit(tck_str *s, bool with_blas, bool with_stream, bool with_gemm, bool with_attention) {
  /* common (includes, and what the scalar text is written with), the kit's scalar helpers,
   * cpu (what only OpenMP C needs), then stream, blas, the vectors (vec) of gemm and attention,
   * gemm and attention where wanted. */
  tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "common");
  tck_text_section(s, tck_scalar_prelude_lines, tck_scalar_prelude_n_lines, "scalar");
  tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "cpu");
  if (with_stream) tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "stream");
  if (with_blas) tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "blas");
  if (with_gemm || with_attention) tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "vec");
  if (with_gemm) tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "gemm");
  if (with_attention) tck_text_section(s, icpu_prelude_lines, icpu_prelude_n_lines, "attention");
}
