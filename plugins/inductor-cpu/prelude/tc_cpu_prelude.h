/*
 * tc_cpu_prelude.h — the C runtime helpers at the top of every unit inductor-cpu generates
 * (integer size arithmetic, exp/erf, NaN-exact max/min, Philox, streaming row stores, GEMM).
 *
 * Not included by anything: the build embeds this file (plugin-api/kit/embed_text.cmake) and
 * the code generator pastes its sections into each unit. A line "//@section NAME" starts a
 * section; "common" goes into every unit, followed by the kit's shared scalar helpers
 * (plugin-api/kit/prelude/tc_scalar.h, which "common" parameterizes with TC_FN and friends),
 * then "cpu"; "stream" goes into units that write rows with streaming stores, "blas" into units
 * with a matmul through OpenBLAS, "vec" (vector types and FMA) then "gemm" into units with a
 * generated f32 GEMM, "vec" then "attention" into units with fused attention. Everything before the first marker (this comment) and the marker lines
 * themselves are left out. To check it as C, paste the two files as prelude.c does.
 *
 * Why "stream" exists: a row kernel whose output is far bigger than the caches writes each row
 * with non-temporal stores, which skip the read-for-ownership a cached store makes (3 units of
 * memory traffic per element become 2, as in memcpy). GCC ignores `omp simd nontemporal`, so
 * the row is computed into a scratch row and copied out by tc_row_store_f32. Compiler builtins
 * rather than <immintrin.h>, whose parsing alone costs ~0.2 s of every compile.
 */
//@section common
#include <stddef.h>
#include <stdint.h>
#include <omp.h>

/* The C library's names the units use, declared here rather than through <math.h>, <stdlib.h>
 * and <string.h>: those headers were ~8% of the compiler's time on attn_block's unit (558 ->
 * 514 ms of CPU, session 10, 2-core VM), paid again by every part of a split build, and the
 * assembly comes out the same (GCC knows these as built-ins by name; the macros are what
 * glibc's <math.h> defines them as under GCC). */
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define signbit(x) __builtin_signbit(x)
void *malloc(size_t);
void *aligned_alloc(size_t, size_t);
void free(void *);
void *memcpy(void *restrict, const void *restrict, size_t);
void *memset(void *, int, size_t);
float fabsf(float);
double fabs(double);
float copysignf(float, float);
double copysign(double, double);
float fmodf(float, float);
double fmod(double, double);
float fmaf(float, float, float);
double fma(double, double, double);
float sqrtf(float);
double sqrt(double);
float floorf(float);
double floor(double);
float ceilf(float);
double ceil(double);
float nearbyintf(float);
double nearbyint(double);
double sin(double);
double cos(double);
double pow(double, double);

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
/* The max of a row taken over plain keys (tc_key_f32) beside its min key: a positive NaN's key
 * is above +inf's, so the max key is that NaN already; a negative NaN's key is below -inf's, so
 * the min key tells (codegen_loop.c's emit_keyed_step). */
static inline float tc_unkey_max_f32(int32_t max_key, int32_t min_key) {
  return min_key < tc_key_f32(-INFINITY) ? NAN : tc_unkey_f32(max_key);
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
/* tc_row_store_f32 of a row whose last pass only divides it by a value fixed over the row
 * (softmax's normalization, emitted as x * recip * scale): dst = src * a * b, multiplied in
 * that order, so the bits are those of the pass it replaces, which read and wrote the whole
 * scratch row once more before the copy (5% of softmax's time on an AVX2 Zen 3). with_b: the
 * second multiply; without it (b == 1, tc_recip_scale's value unless the divisor is tiny or
 * huge) x * a is x * a * b exactly. Always inlined, so each caller's with_b is a constant. */
#define TC_ROW_SCALE(v) (with_b ? (v) * a * b : (v) * a)
__attribute__((always_inline)) static inline void tc_row_store_scaled_as_f32(float *restrict dst, const float *restrict src,
                                                                           int64_t n, int stream, float a, float b,
                                                                           const int with_b) {
  int64_t i = 0;
  if (stream) {
    for (; i < n && ((uintptr_t)(dst + i) & 63) != 0; i++) dst[i] = TC_ROW_SCALE(src[i]);
#if defined(__clang__) && defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) { const tc_v16sf_a v = TC_ROW_SCALE(*(const tc_v16sf *)(src + i)); __builtin_nontemporal_store(v, (tc_v16sf_a *)(dst + i)); }
#elif defined(__clang__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) { const tc_v8sf_a v = TC_ROW_SCALE(*(const tc_v8sf *)(src + i)); __builtin_nontemporal_store(v, (tc_v8sf_a *)(dst + i)); }
#elif defined(__GNUC__) && defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) __builtin_ia32_movntps512(dst + i, TC_ROW_SCALE(*(const tc_v16sf *)(src + i)));
#elif defined(__GNUC__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) __builtin_ia32_movntps256(dst + i, TC_ROW_SCALE(*(const tc_v8sf *)(src + i)));
#endif
  }
  for (; i < n; i++) dst[i] = TC_ROW_SCALE(src[i]);
}
#undef TC_ROW_SCALE
/* One multiply per element where b == 1 (the common case): softmax's unit 2.44 -> 2.24 ms on
 * the AVX2 Zen 3 (bench/probes/row_kernel_host.c, 5 alternating runs). */
static inline void tc_row_store_scaled_f32(float *restrict dst, const float *restrict src, int64_t n, int stream,
                                           float a, float b) {
  if (b == 1.0f) tc_row_store_scaled_as_f32(dst, src, n, stream, a, b, 0);
  else tc_row_store_scaled_as_f32(dst, src, n, stream, a, b, 1);
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
//@section vec

/* The vectors of the generated GEMM and of fused attention (sections gemm, attention): GCC vector
 * extensions rather than <immintrin.h>, whose parsing alone costs ~0.2 s a unit. */
#if defined(__AVX512F__)
#define TC_VL 16 /* floats per vector */
#elif defined(__AVX2__) && defined(__FMA__)
#define TC_VL 8
#else
#define TC_VL 4 /* no vector FMA: fmaf per lane, correct and slow */
#endif
typedef float tc_gv __attribute__((vector_size(TC_VL * 4)));
typedef float tc_gvu __attribute__((vector_size(TC_VL * 4), aligned(4), may_alias)); /* unaligned */

/* a*b + c rounded once: units compile with -ffp-contract=off, so the FMA is asked for by name. */
#if defined(__clang__) && defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_fma)
#define TC_GEMM_ELEMENTWISE_FMA 1 /* newer clang: its x86 FMA builtins are gone */
#endif
#endif
static inline tc_gv tc_gemm_fma(tc_gv a, tc_gv b, tc_gv c) {
#if defined(TC_GEMM_ELEMENTWISE_FMA)
  return __builtin_elementwise_fma(a, b, c);
#elif defined(__AVX512F__)
  return __builtin_ia32_vfmaddps512_mask(a, b, c, (unsigned short)-1, 4 /* the current rounding */);
#elif defined(__AVX2__) && defined(__FMA__)
  return __builtin_ia32_vfmaddps256(a, b, c);
#else
  for (int l = 0; l < TC_VL; l++) c[l] = fmaf(a[l], b[l], c[l]);
  return c;
#endif
}

/* x in every lane: x - 0 is x for every x (-0 and NaN too), so this folds into one broadcast. */
static inline tc_gv tc_gemm_bcast(float x) { return x - (tc_gv){0}; }
//@section gemm

/* The generated GEMM of f32 matmuls: codegen_gemm.c writes each kernel's loops, with its
 * epilogue inside them, into the unit; the pieces they call (packing, micro-kernel, tiles) are
 * the plugin's runtime/gemm_runtime.c, compiled against this section and "vec", reached through
 * the table at the end of this section. C = A·B blocked as BLIS blocks it, vectors along N.
 *  - A in blocks of mc x kc (at most TC_GEMM_MC x TC_GEMM_KC), packed once each into micro-panels
 *    of TC_GEMM_MR rows, column after column, zero past the edge (tc_gemm_block_a), or, its rows
 *    contiguous, whole micro-panels read in place;
 *  - B in blocks of kc x nc (nc at most TC_GEMM_NC: the block lives in L2), packed into panels
 *    of TC_GEMM_NR columns, row after row, zero past the edge (tc_gemm_block_b);
 *  - the micro-kernel (tc_gemm_tile_f32) keeps an MR x NR tile of sums in vector registers over
 *    the kc of a block, reading its micro-panel of A (in L1 while the tiles of its rows walk
 *    along the block of B) and a panel of B. Between blocks of K the partial sums wait in C;
 *    after the last block the tile goes to the thread's tile t (in L1) for the epilogue, or to C.
 * A block of one to TC_GEMM_DIRECT_ROWS rows reads rows of B in place instead (the block would
 * cost more to pack than to multiply).
 * Every element of C is one chain of fused multiply-adds in the order of k from 0 (a partial sum
 * stored and reloaded is exact), so a result does not depend on the blocks, the thread count,
 * the vector width or the path that made its tile: runs are reproducible bit for bit.
 * The vectors and their FMA come from section vec. */
#define TC_GEMM_VL TC_VL /* floats per vector (section vec) */
/* The tile: MR rows of A (broadcast) by NV vectors of B. With AVX-512, 6 x 4: 24 sums, 4 of B
 * and 1 of A in 29 of 32 registers, 10 loads per 24 FMAs (12 x 2 needs 14); on the GPU machine's
 * Xeon it ran mlp at 0.846 of the peak FMA rate on quiet cores and 0.720 on busy ones, against
 * 0.838 and 0.640 for 12 x 2 with the K loop rolled and blocks of 256 x 512
 * (bench/probes/gemm_host.sh, bench/results/gpu-2026-12-02-s12-call4-host-gemm.txt). */
#if TC_VL == 16
#define TC_GEMM_MR 6
#define TC_GEMM_NV 4
#elif TC_VL == 8
#define TC_GEMM_MR 6 /* 6 x 2 sums, 2 of B, 1 of A: 15 of 16 registers */
#define TC_GEMM_NV 2
#else
#define TC_GEMM_MR 4 /* no vector FMA: fmaf per lane, correct and slow (cpu.blas=auto takes OpenBLAS) */
#define TC_GEMM_NV 2
#endif
#define TC_GEMM_NR (TC_GEMM_NV * TC_GEMM_VL) /* tile columns */
#define TC_GEMM_KC 512  /* the longest block of K: a micro-panel of A of 12 KB (6 rows) */
#define TC_GEMM_NC 256  /* the widest block of B: 512 KB with the longest K, half a Xeon L2 */
#define TC_GEMM_MC 1536 /* the most rows of a block of A: 3 MB with the longest K, streamed a panel at a time */
#define TC_GEMM_DIRECT_ROWS 4

/* The work items of a matmul: batch entries x row blocks x column blocks (whole tiles). Entries
 * go to threads whole when they split evenly or are plenty; else every entry is split, in rows
 * first, so that each thread has work. No item waits for another (no barriers: a thread the OS
 * takes away holds up nobody), and each packs its own blocks. */
typedef struct tc_gemm_split {
  int64_t row_blocks, col_blocks, items;
} tc_gemm_split;
static inline tc_gemm_split tc_gemm_split_f32(int64_t nb, int64_t m, int64_t n, int64_t threads) {
  tc_gemm_split s = {1, 1, 0};
  const int64_t mt = (m + TC_GEMM_MR - 1) / TC_GEMM_MR, nt = (n + TC_GEMM_NR - 1) / TC_GEMM_NR;
  if (nb > 0 && threads > 1 && nb % threads != 0 && nb < 4 * threads) {
    const int64_t want = nb >= threads ? threads : (threads + nb - 1) / nb;
    s.row_blocks = want < mt ? want : mt > 1 ? mt : 1;
    if (s.row_blocks < want) {
      const int64_t cols = (want + s.row_blocks - 1) / s.row_blocks;
      s.col_blocks = cols < nt ? cols : nt > 1 ? nt : 1;
    }
  }
  s.items = nb > 0 ? nb * s.row_blocks * s.col_blocks : 0;
  return s;
}
/* Part p of `parts` of [0, extent) in whole steps (the last may be short): [*lo, *hi). */
static inline void tc_gemm_part(int64_t extent, int64_t step, int64_t parts, int64_t p, int64_t *lo, int64_t *hi) {
  const int64_t steps = (extent + step - 1) / step, a = steps * p / parts * step, b = steps * (p + 1) / parts * step;
  *lo = a < extent ? a : extent;
  *hi = b < extent ? b : extent;
}

/* A thread's workspace: the packed blocks of A and B in one heap block sized for the shape (when
 * the heap says no, blocks of one micro-panel and one panel on the stack), the epilogue's tile.
 * The current block of B is packed in pb, or read in place (direct: b, row stride sbk); the
 * current block of A likewise (its rows contiguous: a, row stride sam, only partial micro-panels
 * packed). */
typedef struct tc_gemm_ws {
  float *pa, *pb, *heap;
  int64_t mc_max, kc_max, nc_max; /* block sizes */
  int64_t kc;                     /* the current block's */
  const float *b;
  int64_t sbk;
  int direct;
  const float *a; /* the current block of A, read in place for whole micro-panels when a_direct */
  int64_t sam;
  int a_direct;
  float t[TC_GEMM_MR * TC_GEMM_NR] __attribute__((aligned(64))); /* the last tile, rows of NR */
  float spare_a[TC_GEMM_KC * TC_GEMM_MR] __attribute__((aligned(64)));
  float spare_b[TC_GEMM_KC * TC_GEMM_NR] __attribute__((aligned(64)));
} tc_gemm_ws;

/* Whether a block of `rows` rows reads B in place: few rows, and B's rows contiguous. */
static inline int tc_gemm_direct(int64_t rows, int64_t sbn) { return rows <= TC_GEMM_DIRECT_ROWS && sbn == 1; }

/* Columns a single row's tile takes at a time: a row of B read in place gives a tile the width of
 * all of t (its FMAs side by side, tc_gemm_row_f32), else NR. */
static inline int64_t tc_gemm_tile_cols(const tc_gemm_ws *g, int64_t mc) {
  return g->direct && mc == 1 ? TC_GEMM_MR * TC_GEMM_NR : TC_GEMM_NR;
}

/* The calls a unit makes into the GEMM's runtime (plugins/inductor-cpu/runtime/gemm_runtime.c:
 * packing, the micro-kernel and the tiles, built into the plugin once per vector width instead
 * of compiled into every unit, where they cost 0.4-0.5 s of cc -O3). The plugin hands a unit
 * the table for the width the unit was compiled for through tc_gemm_attach (codegen_unit.c). */
typedef struct tc_gemm_fns {
  void (*ws_init)(tc_gemm_ws *g, int64_t m, int64_t n, int64_t k);
  void (*ws_free)(tc_gemm_ws *g);
  void (*block_a)(tc_gemm_ws *g, const float *a, int64_t sam, int64_t sak, int64_t mc, int64_t kc);
  void (*block_b)(tc_gemm_ws *g, const float *b, int64_t sbk, int64_t sbn, int64_t nc, int direct);
  void (*tile)(tc_gemm_ws *g, int64_t i, int64_t j, int64_t mr, int64_t nr, float *c, int64_t scm, int64_t scn, int first,
               int to_t);
} tc_gemm_fns;
#ifndef TC_GEMM_RUNTIME_BUILD
static const tc_gemm_fns *tc_gemm_rt;
/* Called by the plugin once after loading: the runtime for this unit's vector width and
 * workspace layout (find returns NULL for none). Returns whether there was one. */
int tc_gemm_attach(const void *(*find)(int vl, size_t ws_size)) {
  tc_gemm_rt = (const tc_gemm_fns *)find(TC_VL, sizeof(tc_gemm_ws));
  return tc_gemm_rt != NULL;
}
static inline void tc_gemm_ws_init(tc_gemm_ws *g, int64_t m, int64_t n, int64_t k) { tc_gemm_rt->ws_init(g, m, n, k); }
static inline void tc_gemm_ws_free(tc_gemm_ws *g) { tc_gemm_rt->ws_free(g); }
static inline void tc_gemm_block_a(tc_gemm_ws *g, const float *a, int64_t sam, int64_t sak, int64_t mc, int64_t kc) {
  tc_gemm_rt->block_a(g, a, sam, sak, mc, kc);
}
static inline void tc_gemm_block_b(tc_gemm_ws *g, const float *b, int64_t sbk, int64_t sbn, int64_t nc, int direct) {
  tc_gemm_rt->block_b(g, b, sbk, sbn, nc, direct);
}
static inline void tc_gemm_tile_f32(tc_gemm_ws *g, int64_t i, int64_t j, int64_t mr, int64_t nr, float *c, int64_t scm,
                                    int64_t scn, int first, int to_t) {
  tc_gemm_rt->tile(g, i, j, mr, nr, c, scm, scn, first, to_t);
}
#endif
//@section attention

/* Fused attention (codegen_attention.c): O = softmax(mask(q·kᵀ·scale))·v of one head, a block of
 * TC_ATTN_R queries at a time over tiles of TC_ATTN_BK keys, so a tile's scores live in
 * registers and L1 and never in memory. Per query: a running max m, running sums l (one per
 * lane) and the output row acc, rescaled by exp(m_old - m_new) when the max grows (the online
 * softmax). Every sum is a chain in a fixed order (q·k over e from 0, p·v over keys from 0, l
 * lane by lane over tiles, then its lanes in order), and blocks start at multiples of
 * TC_ATTN_R, so a result depends on neither the thread count nor how work is split: runs
 * agree bit for bit. A key tile wholly masked for a block is not visited; one masked for some
 * of a query's keys weighs them exactly 0 (and a tile masked for all of a query's keys leaves
 * its state as it was: alpha 1, p 0). */
#if TC_VL == 16
#define TC_ATTN_R 12 /* queries a block: 12 x 2 vectors of sums + 2 of k (or v) + 1 broadcast: 27 of 32 registers */
#elif TC_VL == 8
#define TC_ATTN_R 6 /* 6 x 2 + 2 + 1: 15 of 16 registers */
#else
#define TC_ATTN_R 4
#endif
#define TC_ATTN_BK (2 * TC_VL) /* keys a tile: two vectors */
#define TC_ATTN_MAX_D 256      /* head sizes the descriptor allows (q·k and v) */
#define TC_ATTN_INLINE static inline __attribute__((always_inline))
/* One out-of-line copy of the block: inlined with the head sizes as constants it ran no faster
 * (the same bits) and cost 0.1 s more of cc -O3; the loops over a block's queries that are not
 * the register-blocked products stay rolled for the same reason. */
#if defined(__clang__)
#define TC_ATTN_ONCE static __attribute__((noinline))
#else
#define TC_ATTN_ONCE static __attribute__((noinline, noclone))
#endif

typedef int32_t tc_gvi __attribute__((vector_size(TC_VL * 4)));

/* lanes of a where keep is set (-1), else lanes of b: C has no ?: on vectors */
TC_ATTN_INLINE tc_gv tc_attn_select(tc_gvi keep, tc_gv a, tc_gv b) {
  return (tc_gv)(((tc_gvi)a & keep) | ((tc_gvi)b & ~keep));
}

/* The max keys of the lanes of x (tc_maxkey_f32: ordered like the floats, NaN the largest), and
 * the lanewise max of keys: a max over vectors without a branch per lane. */
TC_ATTN_INLINE tc_gvi tc_attn_key(tc_gv x) {
  const tc_gvi b = (tc_gvi)x, nan = x != x;
  return ((b ^ ((b >> 31) & INT32_MAX)) & ~nan) | (((tc_gvi){0} + INT32_MAX) & nan);
}
TC_ATTN_INLINE tc_gvi tc_attn_imax(tc_gvi a, tc_gvi b) {
  const tc_gvi gt = a > b;
  return (a & gt) | (b & ~gt);
}

/* How many keys query i sees: those before tk, and under a causal mask those with j - i < off. */
TC_ATTN_INLINE int64_t tc_attn_keys(int64_t i, int64_t tk, int causal, int64_t off) {
  if (!causal) return tk;
  const int64_t lim = i + off;
  return lim < 0 ? 0 : lim < tk ? lim : tk;
}

/* Work items: a head and a run of its query blocks. Heads go whole while they are plenty (four
 * per thread); else each head is cut into runs so every thread has several. */
static inline int64_t tc_attn_runs(int64_t heads, int64_t blocks, int threads) {
  if (threads <= 1 || heads <= 0 || heads >= 4 * (int64_t)threads) return 1;
  const int64_t want = (4 * (int64_t)threads + heads - 1) / heads;
  return want < blocks ? want : blocks > 1 ? blocks : 1;
}

/* A thread's packed keys and values of one head, grown as needed, freed with its region. */
typedef struct tc_attn_ws {
  float *buf;
  size_t cap; /* floats */
} tc_attn_ws;
static inline float *tc_attn_ws_get(tc_attn_ws *w, size_t floats) {
  if (floats > w->cap) {
    free(w->buf);
    w->buf = (float *)aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    w->cap = w->buf ? floats : 0;
  }
  return w->buf;
}

/* Keys [0, n) of a head (element (j, e) at k[j*kst + e*ksd]) transposed into kt (d rows of kp
 * floats: a tile's keys are two vectors of a row), values (v[j*vst + f*vsd]) into vs (kp rows of
 * dvp floats); zeros past n and past dv. */
TC_ATTN_INLINE void tc_attn_pack(float *restrict kt, float *restrict vs, const float *k, int64_t kst, int64_t ksd,
                                 const float *v, int64_t vst, int64_t vsd, int64_t n, int64_t kp, int d, int dv, int dvp) {
  for (int64_t j0 = 0; j0 < n; j0 += 16) { /* 16 keys at a time, so their rows stay in L1 */
    const int64_t j1 = j0 + 16 < n ? j0 + 16 : n;
    for (int e = 0; e < d; e++)
      for (int64_t j = j0; j < j1; j++) kt[(size_t)e * (size_t)kp + j] = k[j * kst + e * ksd];
  }
  for (int e = 0; e < d; e++)
    for (int64_t j = n; j < kp; j++) kt[(size_t)e * (size_t)kp + j] = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    float *row = vs + (size_t)j * (size_t)dvp;
    for (int f = 0; f < dv; f++) row[f] = v[j * vst + f * vsd];
    for (int f = dv; f < dvp; f++) row[f] = 0.0f;
  }
  for (int64_t j = n; j < kp; j++)
    for (int f = 0; f < dvp; f++) vs[(size_t)j * (size_t)dvp + f] = 0.0f;
}

/* Queries [i0, i0 + nq) of a head (nq <= TC_ATTN_R; element (i, e) at q[i*qst + e*qsd]) against
 * keys [0, kend) of the packed kt and vs, into o (o[i*ost + f*osd]). PyTorch's results: a query
 * that sees no key is NaN when tk > 0 (softmax of all -inf), 0 when tk = 0 (an empty sum); NaN
 * in a score reaches its query's max, sums and output. */
TC_ATTN_ONCE void tc_attn_block(const float *q, int64_t qst, int64_t qsd, float *o, int64_t ost, int64_t osd,
                                  const float *restrict kt, const float *restrict vs, int64_t kp, int64_t i0, int nq,
                                  int64_t kend, int64_t tk, int causal, int64_t off, float scale, int d, int dv,
                                  int dvp) {
  enum { R = TC_ATTN_R, BK = TC_ATTN_BK, VL = TC_VL };
  float qb[R * TC_ATTN_MAX_D] __attribute__((aligned(64)));   /* the block's queries, zeros past nq */
  float acc[R * TC_ATTN_MAX_D] __attribute__((aligned(64)));  /* its output rows, dvp floats each */
  float p[R][BK] __attribute__((aligned(64)));                /* a tile's scores, then weights */
  float m[R], alpha[R];
  tc_gv l[R];
  tc_gvi iota;
  for (int t = 0; t < VL; t++) iota[t] = t;
#pragma GCC unroll 1
  for (int r = 0; r < R; r++) {
    for (int e = 0; e < d; e++) qb[r * d + e] = r < nq ? q[(i0 + r) * qst + e * qsd] : 0.0f;
    for (int f = 0; f < dvp; f++) acc[r * dvp + f] = 0.0f;
    m[r] = -INFINITY;
    l[r] = (tc_gv){0};
  }
  for (int64_t k0 = 0; k0 < kend; k0 += BK) {
    /* scores: R queries x BK keys, each a chain of FMAs over e */
    tc_gv s[R][2];
    for (int r = 0; r < R; r++) s[r][0] = s[r][1] = (tc_gv){0};
    for (int e = 0; e < d; e++) {
      const tc_gv k0v = *(const tc_gv *)(kt + (size_t)e * (size_t)kp + k0);
      const tc_gv k1v = *(const tc_gv *)(kt + (size_t)e * (size_t)kp + k0 + VL);
      for (int r = 0; r < R; r++) {
        const tc_gv qv = tc_gemm_bcast(qb[r * d + e]);
        s[r][0] = tc_gemm_fma(qv, k0v, s[r][0]);
        s[r][1] = tc_gemm_fma(qv, k1v, s[r][1]);
      }
    }
    /* scale and mask (-inf), the new max, weights exp(s - max), the sums */
    const tc_gv ninf = tc_gemm_bcast(-INFINITY), vscale = tc_gemm_bcast(scale);
#pragma GCC unroll 1
    for (int r = 0; r < R; r++) {
      const int64_t lim = tc_attn_keys(i0 + r, tk, causal, off) - k0; /* keys of the tile it sees */
      tc_gvi km = (tc_gvi){0} + INT32_MIN; /* the tile's max as integer keys (NaN wins) */
      for (int h = 0; h < 2; h++) {
        const int64_t rel = lim - h * VL;
        const tc_gvi keep = iota < (tc_gvi){0} + (int32_t)(rel < 0 ? 0 : rel > VL ? VL : rel);
        const tc_gv sc = tc_attn_select(keep, s[r][h] * vscale, ninf);
        *(tc_gv *)&p[r][h * VL] = sc;
        km = tc_attn_imax(km, tc_attn_key(sc));
      }
      int32_t kt_max = km[0]; /* across the lanes: integer compares, exact in any order */
      for (int t = 1; t < VL; t++) kt_max = km[t] > kt_max ? km[t] : kt_max;
      const float mt = tc_unkey_f32(kt_max);
      const float mn = tc_max_f32(m[r], mt);
      if (mn == -INFINITY) { /* every key so far masked: nothing weighs, nothing to rescale */
        alpha[r] = 1.0f;
        for (int j = 0; j < BK; j++) p[r][j] = 0.0f;
        continue;
      }
      alpha[r] = tc_exp_nonpos_f32(m[r] - mn); /* mn >= m[r], mn >= p[r][j]: arguments <= 0 */
      m[r] = mn;
#pragma omp simd
      for (int j = 0; j < BK; j++) p[r][j] = tc_exp_nonpos_f32(p[r][j] - mn);
      l[r] = l[r] * tc_gemm_bcast(alpha[r]) + (*(const tc_gv *)&p[r][0] + *(const tc_gv *)&p[r][VL]);
    }
    /* acc = acc * alpha + p·v over the tile's keys below kend, two vectors of dvp at a time */
    const int nk = kend - k0 < BK ? (int)(kend - k0) : BK;
    for (int f0 = 0; f0 < dvp; f0 += 2 * VL) {
      tc_gv a[R][2];
      for (int r = 0; r < R; r++) {
        const tc_gv al = tc_gemm_bcast(alpha[r]);
        a[r][0] = *(const tc_gv *)(acc + r * dvp + f0) * al;
        a[r][1] = *(const tc_gv *)(acc + r * dvp + f0 + VL) * al;
      }
      for (int j = 0; j < nk; j++) {
        const tc_gv v0 = *(const tc_gv *)(vs + (size_t)(k0 + j) * (size_t)dvp + f0);
        const tc_gv v1 = *(const tc_gv *)(vs + (size_t)(k0 + j) * (size_t)dvp + f0 + VL);
        for (int r = 0; r < R; r++) {
          const tc_gv pv = tc_gemm_bcast(p[r][j]);
          a[r][0] = tc_gemm_fma(pv, v0, a[r][0]);
          a[r][1] = tc_gemm_fma(pv, v1, a[r][1]);
        }
      }
      for (int r = 0; r < R; r++) {
        *(tc_gv *)(acc + r * dvp + f0) = a[r][0];
        *(tc_gv *)(acc + r * dvp + f0 + VL) = a[r][1];
      }
    }
  }
#pragma GCC unroll 1
  for (int r = 0; r < nq; r++) {
    float sum = l[r][0];
    for (int t = 1; t < VL; t++) sum += l[r][t];
    const float none = tk > 0 ? NAN : 0.0f; /* no key seen: all masked, or none at all */
    for (int f = 0; f < dv; f++) o[(i0 + r) * ost + f * osd] = m[r] == -INFINITY ? none : acc[r * dvp + f] / sum;
  }
}
