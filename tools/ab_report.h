/* ab_report.h — how `tc ab` shows a tc_ab_report: a table on the terminal (ab_table.c), JSON
 * (ab_json.c) and one self-contained HTML page (ab_html.c); and the inputs it makes
 * (ab_inputs.c). */
#ifndef TC_AB_REPORT_H
#define TC_AB_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "tc/tc.h"

/* What the report does not say itself: where the function and its inputs came from. */
typedef struct ab_context {
  const char *model;  /* "mlp", or the function's name in --model-lib */
  const char *source; /* "bundled model", or the shared object's path */
  const char *size;   /* "test", "cpu", "gpu", or NULL (--model-lib) */
  const char *inputs; /* "random" or "special" */
  uint64_t seed;
} ab_context;

/* The verdict of one row: "ref", "pass", "FAIL" or "error". */
const char *ab_verdict(const tc_ab_report *r, const tc_ab_result *x);

/* ab_table.c: one row per backend, then each divergence the bisector found. */
void ab_print_table(FILE *f, const tc_ab_report *r, const ab_context *cx);
void ab_print_divergences(FILE *f, const tc_ab_report *r);
/* ab_json.c */
void ab_write_json(FILE *f, const tc_ab_report *r, const ab_context *cx);
/* ab_html.c: one page for n reports (a section each); false with a message on stderr when
 * the file cannot be written. */
bool ab_write_html(const char *path, const tc_ab_report *const *r, const ab_context *cx, int n);

/* ab_inputs.c */
/* Seeded normal f32 inputs of the given shapes ("64x256,256x256"); false with a message naming
 * the bad shape. */
bool ab_inputs_from_shapes(const char *shapes, uint64_t seed, tc_tensor **inputs, int max, int *n);
/* Mixes NaN, +-Inf, -0 and denormals into the first input when it is f32 (seeded; sparse
 * enough that most of the output stays finite). Replaces inputs[0] with a new tensor. */
tc_status ab_inputs_special(tc_tensor **inputs, int n, uint64_t seed);

#endif
