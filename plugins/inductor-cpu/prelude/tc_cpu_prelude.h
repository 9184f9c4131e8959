/*
 * tc_cpu_prelude.h — the C runtime helpers at the top of every unit inductor-cpu generates
 * (integer size arithmetic, exp/erf, NaN-exact max/min, Philox, streaming row stores, GEMM).
 *
 * Not included by anything: the build embeds this file (embed_prelude.cmake) and the code
 * generator pastes its sections into each unit. A line "//@section NAME" starts a section;
 * "common" goes into every unit, "stream" into units that write rows with streaming stores,
 * "blas" into units with a matmul. Everything before the first marker (this comment) and the
 * marker lines themselves are left out. The whole file compiles as C, so it can be checked
 * and edited as such (cc -fopenmp -fsyntax-only -x c tc_cpu_prelude.h).
 *
 * Why "stream" exists: a row kernel whose output is far bigger than the caches writes each row
 * with non-temporal stores, which skip the read-for-ownership a cached store makes (3 units of
 * memory traffic per element become 2, as in memcpy). GCC ignores `omp simd nontemporal`, so
 * the row is computed into a scratch row and copied out by tc_row_store_f32. Compiler builtins
 * rather than <immintrin.h>, whose parsing alone costs ~0.2 s of every compile.
 */
//@section common
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

/* glibc's libmvec has SIMD versions of these (max error 4 ulp): declaring them `declare simd`
 * lets the vectorizer call them from `omp simd` loops instead of one scalar call per element. */
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
float cosf(float);
#pragma omp declare simd notinbranch
float powf(float, float);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
double log(double);
#pragma omp declare simd notinbranch
double erf(double);
#pragma omp declare simd notinbranch
double tanh(double);

/* exp for f32, inline so it vectorizes in any loop (libmvec's SIMD clones only serve loops
 * whose lanes are all 32-bit; an iota or a mask makes 64-bit lanes). Cephes' polynomial on
 * r = x - n*ln2 (n = x/ln2 rounded, read from the bits of x/ln2 + 1.5*2^23), scaled by 2^n in
 * two steps so subnormal results round once: < 1 ulp (2 without FMA). No clamp at the start:
 * out-of-range lanes compute garbage that the final selects replace, and NaN flows through
 * the arithmetic (compares with NaN are false). */
#ifdef __FMA__
#define TC_FMAF(a, b, c) fmaf(a, b, c)
#else
#define TC_FMAF(a, b, c) ((a) * (b) + (c))
#endif
static inline float tc_exp_f32(float x) {
  const union { float f; int32_t i; } big = {.f = TC_FMAF(x, 1.44269504088896341f, 12582912.0f)};
  const float n = big.f - 12582912.0f;
  const int32_t ni = big.i - 0x4B400000; /* n as an integer */
  float r = TC_FMAF(n, -0.693359375f, x);
  r = TC_FMAF(n, 2.12194440e-4f, r);
  float y = TC_FMAF(1.9875691500e-4f, r, 1.3981999507e-3f);
  y = TC_FMAF(y, r, 8.3334519073e-3f);
  y = TC_FMAF(y, r, 4.1665795894e-2f);
  y = TC_FMAF(y, r, 1.6666665459e-1f);
  y = TC_FMAF(y, r, 5.0000001201e-1f);
  y = TC_FMAF(y, r * r, r) + 1.0f;
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const union { int32_t i; float f; } s1 = {.i = (n1 + 127) << 23}, s2 = {.i = (n2 + 127) << 23};
  const float e = y * s1.f * s2.f;
  return x > 88.7228394f ? INFINITY : x < -103.972084f ? 0.0f : e;
}

/* erf for f32, inline: libmvec's erff costs several times the memory traffic of a GELU or
 * layer_norm+GELU row. The rational form x*P(x^2)/Q(x^2) of Eigen and XLA for |x| < 4, +-1
 * beyond; measured against double erf over every 61st float: relative error <= 4e-7 for normal
 * results (2.7 ulp near 0, up to 7 ulp just below 1 where erf(x) > 0.99999), 0 at +-0, +-1 at
 * +-inf, NaN stays NaN (|NaN| >= 4 is false). The select comes last, so the polynomials do not
 * wait for a clamp (large |x| computes garbage that the select drops). x*(P/Q), not x*P/Q, so
 * tiny x does not underflow. */
static inline float tc_erf_f32(float x) {
  const float t = x * x;
  float p = TC_FMAF(t, -2.72614225801306e-10f, 2.77068142495902e-08f);
  p = TC_FMAF(p, t, -2.10102402082508e-06f);
  p = TC_FMAF(p, t, -5.69250639462346e-05f);
  p = TC_FMAF(p, t, -7.34990630326855e-04f);
  p = TC_FMAF(p, t, -2.95459980854025e-03f);
  p = TC_FMAF(p, t, -1.60960333262415e-02f);
  float q = TC_FMAF(t, -1.45660718464996e-05f, -2.13374055278905e-04f);
  q = TC_FMAF(q, t, -1.68282697438203e-03f);
  q = TC_FMAF(q, t, -7.37332916720468e-03f);
  q = TC_FMAF(q, t, -1.42647390514189e-02f);
  const float r = x * (p / q);
  return fabsf(x) >= 4.0f ? copysignf(1.0f, x) : r;
}

/* Float max/min reductions run on integer keys: the bits of x with the magnitude flipped for
 * negatives order like the floats (and -0 < +0), NaN takes the extreme key so it wins. A plain
 * integer max vectorizes into one instruction per vector, where tc_max_f32 takes a dozen. */
static inline int32_t tc_key_f32(float x) { const union { float f; int32_t i; } u = {.f = x}; return u.i ^ ((u.i >> 31) & INT32_MAX); }
static inline int32_t tc_maxkey_f32(float x) { return x != x ? INT32_MAX : tc_key_f32(x); }
static inline int32_t tc_minkey_f32(float x) { return x != x ? INT32_MIN : tc_key_f32(x); }
static inline float tc_unkey_f32(int32_t k) {
  const union { int32_t i; float f; } u = {.i = k ^ ((k >> 31) & INT32_MAX)};
  return k == INT32_MAX || k == INT32_MIN ? NAN : u.f;
}
static inline int64_t tc_key_f64(double x) { const union { double f; int64_t i; } u = {.f = x}; return u.i ^ ((u.i >> 63) & INT64_MAX); }
static inline int64_t tc_maxkey_f64(double x) { return x != x ? INT64_MAX : tc_key_f64(x); }
static inline int64_t tc_minkey_f64(double x) { return x != x ? INT64_MIN : tc_key_f64(x); }
static inline double tc_unkey_f64(int64_t k) {
  const union { int64_t i; double f; } u = {.i = k ^ ((k >> 63) & INT64_MAX)};
  return k == INT64_MAX || k == INT64_MIN ? (double)NAN : u.f;
}

/* x / d for a d fixed over a loop, as x * tc_recip(d) * tc_recip_scale(d): one division per
 * loop instead of one per element (within 2 ulp of the quotient). Where 1/d would leave the
 * normal range, d is scaled by 2^64 first and the scale multiplied back after. */
#define TC_RECIP(S, T, TINY, HUGE)                                                               \
  static inline T tc_recip_##S(T d) {                                                            \
    const T a = d < 0 ? -d : d;                                                                  \
    return a > (T)(HUGE) && a < (T)INFINITY ? (T)1 / (d * (T)0x1p-64) : a > 0 && a < (T)(TINY) ? (T)1 / (d * (T)0x1p64) : (T)1 / d; \
  }                                                                                              \
  static inline T tc_recip_scale_##S(T d) {                                                      \
    const T a = d < 0 ? -d : d;                                                                  \
    return a > (T)(HUGE) && a < (T)INFINITY ? (T)0x1p-64 : a > 0 && a < (T)(TINY) ? (T)0x1p64 : (T)1; \
  }
TC_RECIP(f32, float, 0x1p-125, 0x1p125)
TC_RECIP(f64, double, 0x1p-1021, 0x1p1021)

/* Threads for every parallel region; set once by tc_module_init. */
static int tc_nthreads = 1;

static inline int64_t tc_floordiv(int64_t a, int64_t b) { return b ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : 0; }
static inline int64_t tc_mod(int64_t a, int64_t b) { int64_t r = b ? a % b : 0; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static inline int64_t tc_imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t tc_imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* max/min as docs/primitives.md defines them: NaN propagates, +0 > -0. The reductions use the
 * same functions to combine SIMD lanes and threads, so no order can change a result. */
#define TC_MINMAX(S, T)                                                                       \
  static inline T tc_max_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b; } \
  static inline T tc_min_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b; }
TC_MINMAX(f32, float)
TC_MINMAX(f64, double)
#pragma omp declare reduction(tc_max_f32 : float : omp_out = tc_max_f32(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tc_min_f32 : float : omp_out = tc_min_f32(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#pragma omp declare reduction(tc_max_f64 : double : omp_out = tc_max_f64(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tc_min_f64 : double : omp_out = tc_min_f64(omp_out, omp_in)) initializer(omp_priv = INFINITY)

/* Integer arithmetic wraps (two's complement) instead of being undefined on overflow. */
#define TC_INT_OPS(S, T, U)                                                                 \
  static inline T tc_add_##S(T a, T b) { return (T)((U)a + (U)b); }                          \
  static inline T tc_sub_##S(T a, T b) { return (T)((U)a - (U)b); }                          \
  static inline T tc_mul_##S(T a, T b) { return (T)((U)a * (U)b); }                          \
  static inline T tc_div_##S(T a, T b) { return b == 0 ? 0 : b == -1 ? (T)(0 - (U)a) : a / b; } \
  static inline T tc_rem_##S(T a, T b) {                                                    \
    if (b == 0 || b == -1) return 0;                                                        \
    T r = a % b;                                                                            \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                                    \
  }
TC_INT_OPS(i32, int32_t, uint32_t)
TC_INT_OPS(i64, int64_t, uint64_t)
static inline float tc_rem_f32(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static inline double tc_rem_f64(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }

/* Float -> int truncates toward zero; NaN gives 0 and out-of-range values saturate. */
#define TC_F2I(S, F, D, T, LO, HI) \
  static inline T tc_##S##_to_##D(F x) { return x != x ? 0 : x <= (F)(LO) ? (T)(LO) : x >= (F)(HI) ? (T)(HI) : (T)x; }
TC_F2I(f32, float, i32, int32_t, INT32_MIN, INT32_MAX)
TC_F2I(f32, float, i64, int64_t, INT64_MIN, INT64_MAX)
TC_F2I(f64, double, i32, int32_t, INT32_MIN, INT32_MAX)
TC_F2I(f64, double, i64, int64_t, INT64_MIN, INT64_MAX)

/* Philox4x32-10, word 0, as docs/primitives.md defines RANDOM: uniform [0,1) from the top
 * 24 bits, identical for f32 and f64. */
static inline double tc_philox_uniform(uint64_t seed, uint64_t counter) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int i = 0; i < 10; i++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return (double)(c0 >> 8) * (1.0 / 16777216.0);
}
//@section stream

/* Writes n floats of a scratch row to dst: with non-temporal stores when stream (the output
 * will not be read again while still in cache), else memcpy. The head up to dst's first
 * 64-byte boundary and the tail are plain stores. */
typedef float tc_v16sf __attribute__((vector_size(64), aligned(4), may_alias));      /* a load from the row */
typedef float tc_v8sf __attribute__((vector_size(32), aligned(4), may_alias));
typedef float tc_v16sf_a __attribute__((vector_size(64), may_alias)); /* aligned: a store to dst */
typedef float tc_v8sf_a __attribute__((vector_size(32), may_alias));
static inline void tc_row_store_f32(float *restrict dst, const float *restrict src, int64_t n, int stream) {
  int64_t i = 0;
  if (stream) {
    for (; i < n && ((uintptr_t)(dst + i) & 63) != 0; i++) dst[i] = src[i];
#if defined(__clang__) && defined(__AVX512F__)
    /* clang takes the store's alignment from the value's type: an aligned vector value. */
    for (; i + 16 <= n; i += 16) { const tc_v16sf_a v = *(const tc_v16sf *)(src + i); __builtin_nontemporal_store(v, (tc_v16sf_a *)(dst + i)); }
#elif defined(__clang__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) { const tc_v8sf_a v = *(const tc_v8sf *)(src + i); __builtin_nontemporal_store(v, (tc_v8sf_a *)(dst + i)); }
#elif defined(__GNUC__) && defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) __builtin_ia32_movntps512(dst + i, *(const tc_v16sf *)(src + i));
#elif defined(__GNUC__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) __builtin_ia32_movntps256(dst + i, *(const tc_v8sf *)(src + i));
#endif
  }
  memcpy(dst + i, src + i, (size_t)(n - i) * sizeof(float));
}
/* Streaming stores are weakly ordered: each thread fences its own before the parallel
 * region's closing barrier, so every store is visible when the kernel returns. */
static inline void tc_stream_fence(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_sfence();
#endif
}
//@section blas

/* OpenBLAS, declared here so the unit needs no BLAS headers. */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);
void openblas_set_num_threads(int n);
enum { TC_ROW_MAJOR = 101, TC_NO_TRANS = 111, TC_TRANS = 112 };

/* C[rows x n] = A[rows x k] * B[k x n] for strided operands: BLAS takes a transposed or plain
 * layout with a leading dimension; anything else is packed into a contiguous copy first. */
#define TC_GEMM(S, T, BLAS)                                                                    \
  static void tc_gemm_##S(int64_t m, int64_t n, int64_t k, const T *a, int64_t sam, int64_t sak, \
                          const T *b, int64_t sbk, int64_t sbn, T *c, int64_t scm, int64_t scn) { \
    if (m <= 0 || n <= 0) return;                                                             \
    T *pa = NULL, *pb = NULL, *pc = NULL;                                                     \
    int ta = TC_NO_TRANS, tb = TC_NO_TRANS;                                                   \
    int64_t lda, ldb, ldc;                                                                    \
    if (k <= 0) {                                                                             \
      for (int64_t i = 0; i < m; i++)                                                         \
        for (int64_t j = 0; j < n; j++) c[i * scm + j * scn] = 0;                             \
      return;                                                                                 \
    }                                                                                         \
    if ((sak == 1 || k == 1) && (sam >= k || m == 1)) lda = m == 1 ? k : sam;                 \
    else if ((sam == 1 || m == 1) && (sak >= m || k == 1)) { ta = TC_TRANS; lda = k == 1 ? m : sak; } \
    else {                                                                                    \
      pa = malloc(sizeof(T) * (size_t)(m * k));                                               \
      if (!pa) return;                                                                        \
      for (int64_t i = 0; i < m; i++)                                                         \
        for (int64_t j = 0; j < k; j++) pa[i * k + j] = a[i * sam + j * sak];                 \
      a = pa; lda = k;                                                                        \
    }                                                                                         \
    if ((sbn == 1 || n == 1) && (sbk >= n || k == 1)) ldb = k == 1 ? n : sbk;                 \
    else if ((sbk == 1 || k == 1) && (sbn >= k || n == 1)) { tb = TC_TRANS; ldb = n == 1 ? k : sbn; } \
    else {                                                                                    \
      pb = malloc(sizeof(T) * (size_t)(k * n));                                               \
      if (!pb) { free(pa); return; }                                                          \
      for (int64_t i = 0; i < k; i++)                                                         \
        for (int64_t j = 0; j < n; j++) pb[i * n + j] = b[i * sbk + j * sbn];                 \
      b = pb; ldb = n;                                                                        \
    }                                                                                         \
    T *out = c;                                                                               \
    if ((scn == 1 || n == 1) && (scm >= n || m == 1)) ldc = m == 1 ? n : scm;                 \
    else {                                                                                    \
      pc = malloc(sizeof(T) * (size_t)(m * n));                                               \
      if (!pc) { free(pa); free(pb); return; }                                                \
      out = pc; ldc = n;                                                                      \
    }                                                                                         \
    BLAS(TC_ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, 0, out, (int)ldc); \
    if (pc)                                                                                   \
      for (int64_t i = 0; i < m; i++)                                                         \
        for (int64_t j = 0; j < n; j++) c[i * scm + j * scn] = pc[i * n + j];                 \
    free(pa); free(pb); free(pc);                                                             \
  }
TC_GEMM(f32, float, cblas_sgemm)
TC_GEMM(f64, double, cblas_dgemm)
