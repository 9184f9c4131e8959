/* pytorch_expect.h — PyTorch's expectations (tests/pytorch/data/expected.txt, written by
 * tests/pytorch/gen_expected.py, embedded at build time): the cases, parsed once, and the check
 * of a tc result against PyTorch's, under each case's tolerance. */
#ifndef TC_PYTORCH_EXPECT_H
#define TC_PYTORCH_EXPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "conformance.h"

enum { PT_MAX_ATTRS = 8, PT_MAX_ATTR_VALUES = 8, PT_MAX_TENSORS = 16 };

typedef struct pt_tensor {
  tc_dtype dtype;
  int rank;
  int64_t sizes[TC_MAX_RANK];
  unsigned char *data; /* numel * dtype size bytes, little-endian */
  size_t bytes;
} pt_tensor;

typedef struct pt_attr {
  char key[24];
  int n;
  double values[PT_MAX_ATTR_VALUES];
  char text[16]; /* the first value as written (for `attr dtype f64`) */
} pt_attr;

typedef enum pt_tol_kind { PT_TOL_EXACT, PT_TOL_ULP, PT_TOL_CLOSE } pt_tol_kind;

typedef struct pt_tol {
  pt_tol_kind kind;
  double a, b; /* ulp: ulps and atol; close: rtol and atol (atol scaled by max(1, max |want|)) */
} pt_tol;

typedef struct pt_case {
  char name[80];
  char op[40]; /* a tc op name (tc_<op>), or "model:<name>" */
  pt_attr attrs[PT_MAX_ATTRS];
  int n_attrs;
  pt_tol tol;
  pt_tensor in[PT_MAX_TENSORS], out[PT_MAX_TENSORS], grad[PT_MAX_TENSORS];
  int n_in, n_out, n_grad;
} pt_case;

/* Every case of the embedded data, parsed at the first call (NULL with *n == 0 and a message
 * on stderr when the data is malformed: the build embedded a file the generator did not write). */
const pt_case *pt_cases(int *n /* out */);
/* "f32", "f64", "i32", "i64", "bool" as the dtype; false for another name. */
bool pt_dtype_parse(const char *name, tc_dtype *out /* out */);
/* The attribute key of a case, or NULL. */
const pt_attr *pt_attr_find(const pt_case *pc, const char *key);
/* A new tc tensor holding t's values. */
tc_tensor *pt_tensor_make(const pt_tensor *t);
/* Checks got against want under tol (PyTorch's dtype and shape; NaN where NaN, infinities and,
 * for exact tolerance, every bit but NaN payloads: +-0 and denormals as PyTorch has them).
 * Fails the case with `what`, the first mismatching index, got and want; returns false. */
bool pt_check(conf_ctx *c, const char *what, const tc_tensor *got, const pt_tensor *want, pt_tol tol);
/* pt_check for a backend that flushes f32 subnormals (pt_backend_flushes_subnormals): an element
 * that differs where PyTorch's result or an input the element reads (the same element of an
 * input of the output's size, any element of another) is an f32 subnormal is the flush, not a
 * failure; when only such elements differ the case is a known difference saying so. */
bool pt_check_flushing(conf_ctx *c, const char *what, const tc_tensor *got, const pt_case *pc, const pt_tensor *want,
                       bool flushes);
/* Whether `backend` flushes f32 subnormals to zero: 1e-40 + 0 computed there (a compiled add,
 * once per backend and process). A driver may: NVIDIA's Vulkan driver does not offer
 * shaderDenormPreserveFloat32, and flushes. "eager" never does. */
bool pt_backend_flushes_subnormals(const char *backend);

#endif
