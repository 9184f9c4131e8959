/*
 * tc_cuda_prelude.cuh — the top of every module inductor-cuda generates, before the kit's
 * scalar helpers (plugin-api/kit/prelude/tc_scalar.h) and the kernels. NVRTC compiles the
 * module without any header: what C's headers would give is defined here (fixed-width types,
 * limits, INFINITY/NAN), plus what CUDA kernels need beyond the scalar helpers (atomics for
 * STORE_ADD, warp shuffles for row reductions, the kernels' argument block).
 *
 * Not included by anything: the build embeds it (plugin-api/kit/embed_text.cmake) and the code
 * generator pastes section "common", then the kit's "scalar" section, then "device". Everything
 * before the first marker (this comment) and the marker lines are left out.
 */
//@section common
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define INT64_C(x) x##LL
#define UINT64_C(x) x##ULL
/* glibc's bit patterns, so a NaN constant is the same NaN on every backend */
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)

/* What the kit's scalar helpers are written with (tc_scalar.h). No fast math anywhere: the
 * module is compiled with --fmad=false, and the polynomials fuse where they say so. */
#define TC_FN static __device__ __forceinline__
#define TC_FMAF(a, b, c) fmaf(a, b, c)
#define TC_F32_BITS(x) __float_as_int(x)
#define TC_BITS_F32(i) __int_as_float(i)

/* max/min as docs/primitives.md defines them (NaN propagates, a's first; +0 > -0), the kit's
 * results without its branches: nvcc compiled the kit's chain of conditionals (signbit on
 * equal operands) into branches, a quarter of a softmax row's instructions. Equal operands
 * differ only for zeros: the AND of their bits is +0 when either is +0 (max), the OR -0 (min). */
#define TC_PRELUDE_MINMAX_F32 1
TC_FN float tc_max_f32(float a, float b) {
  const float zeros = __int_as_float(__float_as_int(a) & __float_as_int(b)), larger = fmaxf(a, b);
  const float m = a == b ? zeros : larger; /* both made first: a select, not a branch */
  return a != a ? a : b != b ? b : m;
}
TC_FN float tc_min_f32(float a, float b) {
  const float zeros = __int_as_float(__float_as_int(a) | __float_as_int(b)), smaller = fminf(a, b);
  const float m = a == b ? zeros : smaller;
  return a != a ? a : b != b ? b : m;
}
//@section device

/* The one parameter of every kernel (icuda.h's icuda_args): a device pointer per buffer (byte
 * offset applied, in the kernel's buffer order) and the values of the size symbols. */
typedef struct tc_cu_args {
  void *buf[32];
  long long s[32];
} tc_cu_args;

/* The first statement of every kernel. Launched early (the plugin's launch.c: programmatic
 * dependent launch, sm_90+), a kernel starts while the one before it on the stream may still
 * be running: griddepcontrol.wait returns once that kernel has completed and its writes are
 * visible (at once when the launch was an ordinary one), so nothing is read or written before.
 * launch_dependents then lets the next kernel be scheduled as soon as every block of this one
 * has started, to fill the SMs this one's last blocks leave idle. */
TC_FN void tc_after_previous_kernel(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* STORE_ADD where outer points may race (scatter_add): atomics per dtype. i64 through the
 * unsigned 64-bit atomic (two's complement: the same bits); bool sets the byte when v != 0
 * (an OR on the 32-bit word holding it). */
/* f32: a compare-and-swap loop, not atomicAdd: PTX's atom.add.f32 flushes subnormal operands
 * and results to zero, and tc keeps them (PyTorch's CPU scatter_add does). */
TC_FN void tc_atomic_add(float *p, float v) {
  unsigned int *word = (unsigned int *)p, seen = *word, was;
  do {
    was = seen;
    seen = atomicCAS(word, was, __float_as_uint(__uint_as_float(was) + v));
  } while (seen != was);
}
TC_FN void tc_atomic_add(double *p, double v) { atomicAdd(p, v); }
TC_FN void tc_atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
TC_FN void tc_atomic_add(int64_t *p, int64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
TC_FN void tc_atomic_add(uint8_t *p, uint8_t v) {
  if (!v) return;
  const unsigned long long addr = (unsigned long long)p;
  atomicOr((unsigned int *)(addr & ~3ull), 1u << (8 * (unsigned)(addr & 3ull)));
}

/* ABI 2.3's index checks (TC_KOP_INDEX_CHECK): the record of a call's first out-of-range index,
 * {flag, site, value, bound} (tc_index_error), claimed by atomicCAS on the flag so that of the
 * racing threads exactly one writes it. Out of line: the in-range path is one compare and a
 * branch predicted not taken. */
#define TC_UNLIKELY(x) __builtin_expect(!!(x), 0)
static __device__ __noinline__ void tc_index_error(int64_t *rec, long long site, long long value, long long bound) {
  if (atomicCAS((unsigned long long *)rec, 0ull, 1ull) == 0ull) {
    rec[1] = site;
    rec[2] = value;
    rec[3] = bound;
  }
}

/* Asynchronous 4-byte copies global -> shared (sm_80+: cp.async, in flight while the block
 * computes; zeros when !valid, src then only has to be a valid address), committed as groups and
 * waited for with all but the newest (wait1) or none (wait0) outstanding. Older devices copy
 * synchronously. */
TC_FN void tc_cp_async4(float *dst, const float *src, bool valid) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 4 : 0));
#else
  *dst = valid ? *src : 0.0f;
#endif
}
/* The same for 16 aligned bytes (dst and src 16-byte aligned). */
TC_FN void tc_cp_async16(float *dst, const float *src, bool valid) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 16 : 0));
#else
  *(float4 *)dst = valid ? *(const float4 *)src : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
}
TC_FN void tc_cp_async_commit(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
TC_FN void tc_cp_async_wait1(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 1;\n" ::);
#endif
}
TC_FN void tc_cp_async_wait0(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;\n" ::);
#endif
}

/* The generated GEMM's (codegen_gemm.c) 4 neighbours as one access, per dtype: a float4, or
 * two double2 (16-byte accesses: a double4 would need 32-byte alignment); p aligned to 16
 * bytes. And its multiply-add, one rounding, for either dtype. */
TC_FN void tc_load4(const float *p, float *v) {
  const float4 w = *(const float4 *)p;
  v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
}
TC_FN void tc_load4(const double *p, double *v) {
  const double2 w0 = *(const double2 *)p, w1 = *(const double2 *)(p + 2);
  v[0] = w0.x, v[1] = w0.y, v[2] = w1.x, v[3] = w1.y;
}
TC_FN void tc_store4(float *p, const float *v) { *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]); }
TC_FN void tc_store4(double *p, const double *v) {
  *(double2 *)p = make_double2(v[0], v[1]);
  *(double2 *)(p + 2) = make_double2(v[2], v[3]);
}
TC_FN float tc_fma(float a, float b, float c) { return fmaf(a, b, c); }
TC_FN double tc_fma(double a, double b, double c) { return fma(a, b, c); }

/* A lane's partner value in a butterfly over the warp (float, double, int, long long). */
#define tc_shfl_xor(v, o) __shfl_xor_sync(0xffffffffu, (v), (o))

/* argmax/argmin partials (value, index) of a row's threads: true when (b, ib) beats (a, ia),
 * NaN counting as the extreme and the first index winning ties. */
#define TC_BETTER(S, T)                                                                       \
  TC_FN bool tc_better_max_##S(T a, long long ia, T b, long long ib) {                        \
    if (b != b) return a == a || ib < ia;                                                     \
    if (a != a) return false;                                                                 \
    return b > a || (b == a && ib < ia);                                                      \
  }                                                                                           \
  TC_FN bool tc_better_min_##S(T a, long long ia, T b, long long ib) {                        \
    if (b != b) return a == a || ib < ia;                                                     \
    if (a != a) return false;                                                                 \
    return b < a || (b == a && ib < ia);                                                      \
  }
TC_BETTER(f32, float)
TC_BETTER(f64, double)
TC_BETTER(i32, int32_t)
TC_BETTER(i64, int64_t)
