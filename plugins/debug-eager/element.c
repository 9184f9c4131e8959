/* element.c — addressing strided tensors and reading/writing one element of any dtype. All
 * dtype conversions of the plugin go through here, so CONVERT's rules live in one place. */
#include <math.h>
#include <string.h>

#include "debug_eager.h"

int64_t de_numel(int32_t rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= sizes[d];
  return n;
}


void de_unravel(int64_t i, int32_t rank, const int64_t *sizes, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    idx[d] = sizes[d] ? i % sizes[d] : 0;
    i = sizes[d] ? i / sizes[d] : 0;
  }
}

char *de_at(const de_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < t->rank; d++) off += idx[d] * t->strides[d];
  return t->data + off * (int64_t)tck_dtype_size((int32_t)t->dtype);
}

char *de_at_linear(const de_tensor *t, int64_t i) {
  int64_t idx[TC_MAX_RANK];
  de_unravel(i, t->rank, t->sizes, idx);
  return de_at(t, idx);
}

double de_load_f(int32_t dtype, const char *p) {
  switch (dtype) {
  case TC_F32: { float v; memcpy(&v, p, sizeof v); return v; }
  case TC_F64: { double v; memcpy(&v, p, sizeof v); return v; }
  case TC_I32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
  case TC_I64: { int64_t v; memcpy(&v, p, sizeof v); return (double)v; }
  case TC_BOOL: return *p ? 1.0 : 0.0;
  default: return 0.0;
  }
}

/* float -> integer: truncate toward zero, NaN -> 0, saturate at the type's range (the range
 * test is on the truncated value, so it is exact: lo and hi are powers of two). */
static int64_t float_to_int(double v, double lo, double hi_excl, int64_t min, int64_t max) {
  if (isnan(v)) return 0;
  v = trunc(v);
  if (v < lo) return min;
  if (v >= hi_excl) return max;
  return (int64_t)v;
}

int64_t de_load_i(int32_t dtype, const char *p) {
  switch (dtype) {
  case TC_I32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
  case TC_I64: { int64_t v; memcpy(&v, p, sizeof v); return v; }
  case TC_BOOL: return *p ? 1 : 0;
  default: return float_to_int(de_load_f(dtype, p), -0x1p63, 0x1p63, INT64_MIN, INT64_MAX);
  }
}

void de_store_f(int32_t dtype, char *p, double v) {
  switch (dtype) {
  case TC_F32: { float f = (float)v; memcpy(p, &f, sizeof f); break; }
  case TC_F64: memcpy(p, &v, sizeof v); break;
  case TC_I32: {
    int32_t i = (int32_t)float_to_int(v, -0x1p31, 0x1p31, INT32_MIN, INT32_MAX);
    memcpy(p, &i, sizeof i);
    break;
  }
  case TC_I64: {
    int64_t i = float_to_int(v, -0x1p63, 0x1p63, INT64_MIN, INT64_MAX);
    memcpy(p, &i, sizeof i);
    break;
  }
  case TC_BOOL: *p = (char)(v != 0.0); break; /* NaN != 0: true */
  default: break;
  }
}

void de_store_i(int32_t dtype, char *p, int64_t v) {
  switch (dtype) {
  case TC_F32: { float f = (float)v; memcpy(p, &f, sizeof f); break; }
  case TC_F64: { double f = (double)v; memcpy(p, &f, sizeof f); break; }
  case TC_I32: { int32_t i = (int32_t)(uint32_t)(uint64_t)v; memcpy(p, &i, sizeof i); break; } /* wraps */
  case TC_I64: memcpy(p, &v, sizeof v); break;
  case TC_BOOL: *p = (char)(v != 0); break;
  default: break;
  }
}

double de_float_max(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

double de_float_min(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
