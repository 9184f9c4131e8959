/*
 * tc_cpu_prelude.h — the C runtime helpers at the top of every unit inductor-cpu generates
 * (integer size arithmetic, exp/erf, NaN-exact max/min, Philox, streaming row stores, GEMM).
 *
 * Not included by anything: the build embeds this file (plugin-api/kit/embed_text.cmake) and
 * the code generator pastes its sections into each unit. A line "//@section NAME" starts a
 * section; "common" goes into every unit, followed by the kit's shared scalar helpers
 * (plugin-api/kit/prelude/tc_scalar.h, which "common" parameterizes with TC_FN and friends),
 * then "cpu"; "stream" goes into units that write rows with streaming stores, "blas" into units
 * with a matmul. Everything before the first marker (this comment) and the marker lines
 * themselves are left out. To check it as C, paste the two files as prelude.c does.
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

/* The kit's scalar helpers (plugin-api/kit/prelude/tc_scalar.h: exp/erf for f32, size
 * arithmetic, NaN-exact max/min, wrapping integer ops, remainder, float->int, Philox) follow
 * this section, written with these: */
#ifdef __FMA__
#define TC_FMAF(a, b, c) fmaf(a, b, c)
#else
#define TC_FMAF(a, b, c) ((a) * (b) + (c))
#endif
#define TC_FN static inline
static inline int32_t tc_f32_bits(float x) { const union { float f; int32_t i; } u = {.f = x}; return u.i; }
static inline float tc_bits_f32(int32_t i) { const union { int32_t i; float f; } u = {.i = i}; return u.f; }
#define TC_F32_BITS(x) tc_f32_bits(x)
#define TC_BITS_F32(i) tc_bits_f32(i)
//@section cpu

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

/* ABI 2.3's index checks (TC_KOP_INDEX_CHECK): the record of a call's first out-of-range index,
 * {flag, site, value, bound} (tc_index_error), claimed by a compare-and-swap on the flag so that
 * of racing threads exactly one writes it. Cold and out of line: the in-range path is one
 * compare and a branch predicted not taken.
 * On x86-64 the whole record is written by one asm statement that takes its address in a
 * register and declares no memory access. Declared writes (the __atomic builtin, or even a
 * precise "m" operand) made GCC assume the call may change what the loop reads (OpenMP's
 * outlined bodies lose `restrict`), so a loop that merely contained the call reloaded its
 * invariant loads and lost its memcpy form: an embedding ran 2-3x slower. Nothing in a kernel
 * reads the record (the host reads it after the call returns), so hiding the writes is safe;
 * `volatile` keeps the statement. Elsewhere the builtin (correct, maybe slower there). */
#define TC_UNLIKELY(x) __builtin_expect(!!(x), 0)
__attribute__((cold, noinline, unused)) static void tc_index_error(int64_t *rec, int64_t site, int64_t value,
                                                                   int64_t bound) {
  int64_t none = 0;
#if defined(__x86_64__)
  __asm__ volatile("lock cmpxchgq %[one], (%[rec])\n\t" /* flag 0 -> 1, or ZF = 0: someone was first */
                   "jne 1f\n\t"
                   "movq %[site], 8(%[rec])\n\t"
                   "movq %[value], 16(%[rec])\n\t"
                   "movq %[bound], 24(%[rec])\n"
                   "1:"
                   : "+a"(none)
                   : [one] "r"((int64_t)1), [rec] "r"(rec), [site] "r"(site), [value] "r"(value), [bound] "r"(bound)
                   : "cc");
#else
  if (__atomic_compare_exchange_n(&rec[0], &none, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    rec[1] = site;
    rec[2] = value;
    rec[3] = bound;
  }
#endif
}

/* Threads for every parallel region; set once by tc_module_init. */
static int tc_nthreads = 1;


/* OpenMP reductions over the kit's NaN-exact max/min. */
#pragma omp declare reduction(tc_max_f32 : float : omp_out = tc_max_f32(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tc_min_f32 : float : omp_out = tc_min_f32(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#pragma omp declare reduction(tc_max_f64 : double : omp_out = tc_max_f64(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tc_min_f64 : double : omp_out = tc_min_f64(omp_out, omp_in)) initializer(omp_priv = INFINITY)

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
