/* ab/ab.h — the top stage: A/B comparison of backends on one function (tc_ab_compare,
 * ab_run.c), the numerical comparison of two outputs (ab_diff.c), the plan every kernel-level
 * backend compiles, read kernel by kernel (ab_plan.c), and the bisector that runs it kernel by
 * kernel on two backends (ab_bisect.c). May use every stage. */
#ifndef TC_AB_H
#define TC_AB_H

#include "compile/compile.h"

/* ---------------------------------------------------------------- comparing outputs (ab_diff.c) */
typedef struct ab_diff {
  double rtol, atol;
  int64_t n, n_failed;
  double max_abs, max_rel;
  int64_t max_ulp;
  int64_t nan_mismatches, inf_mismatches;
  int64_t n_nonfinite; /* NaN or infinite in both, alike */
  int64_t worst;       /* the failing element with the largest error (the first NaN/Inf mismatch when
                          only those fail); -1 when none fails */
  double worst_ref, worst_out;
  bool pass;
} ab_diff;

/* The tolerance for outputs of dtype dt: the options' rtol/atol where > 0, else the dtype's
 * default (f32: 1e-4 / 1e-5, f64: 1e-10 / 1e-12, integers and bool: exact). */
void ab_tolerance(tc_dtype dt, const tc_ab_options *o, double *rtol, double *atol);
/* Compares out with ref element by element (any device: read back to the host). Shapes and
 * dtypes must agree, else an error naming both. */
tc_status ab_diff_tensors(const tc_tensor *ref, const tc_tensor *out, double rtol, double atol, ab_diff *d /* out */);
/* "64x256 f32" into buf; returns buf. */
char *ab_tensor_str(const tc_tensor *t, char *buf, size_t cap);

/* ---------------------------------------------------------------- the plan (ab_plan.c) */
/* The graph a compiled function compiled on its first call, and the scheduler's plan of it:
 * the kernels (fused groups) every kernel-level backend was handed. */
typedef struct ab_plan {
  const tc_compiled *c;
  const cap_variant *v; /* the graph and its captured tensors */
  tc_schedule *s;
} ab_plan;

/* The plan of c's newest entry; an error when it has graph breaks (several graphs). */
tc_status ab_plan_open(const tc_compiled *c, ab_plan *p /* out */);
void ab_plan_close(ab_plan *p);
/* Kernel k alone as a graph computing its result (the kernel's root value) from the values it
 * reads: sub (free with graph_free) and those values' ids in p's graph (caller frees). */
tc_status ab_plan_kernel_graph(const ab_plan *p, int32_t k, tc_graph *sub /* out */, int32_t **in_values /* out */,
                               int32_t *n_in /* out */);
/* The graph sub (a kernel alone, from ab_plan_kernel_graph) lowered on the compiled function c's
 * backend with c's options; *l borrows sub (lowered_free it first). */
tc_status ab_kernel_lower(const tc_compiled *c, const tc_graph *sub, tc_lowered **l /* out */);
/* The generated source of kernel k compiled alone on c's backend: malloc'd, or NULL when the
 * backend exposes none. */
tc_status ab_plan_kernel_source(const ab_plan *p, int32_t k, const tc_compiled *c, char **source /* out */);
/* What value v of p's graph is, for people: "input 0 (x)", "captured 5", "k2_softmax". */
void ab_plan_value_name(const ab_plan *p, int32_t v, char *buf, size_t cap);
/* The kernels as the report lists them (strings malloc'd; ab_kernels_free frees). */
tc_status ab_plan_describe(const ab_plan *p, tc_ab_kernel **out /* out */, int32_t *n /* out */);
void ab_kernels_free(tc_ab_kernel *k, int32_t n);

/* ---------------------------------------------------------------- the bisector (ab_bisect.c) */
/* Runs p's kernels in order on ref's backend and on other's, each fed the reference's values of
 * its inputs (inputs: the call's), and fills *out with the first kernel whose outputs differ
 * beyond the tolerance of o (-1 when none does). *out is malloc'd; ab_divergence_free. */
tc_status ab_bisect(const ab_plan *p, const tc_compiled *ref, const tc_compiled *other, tc_tensor *const *inputs,
                    const tc_ab_options *o, tc_ab_divergence **out /* out */);
void ab_divergence_free(tc_ab_divergence *d);

#endif
