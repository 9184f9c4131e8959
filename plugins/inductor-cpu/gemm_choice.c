/* gemm_choice.c — cpu.blas: whether f32 matmuls run as the generated GEMM (codegen_gemm.c, its
 * packing and micro-kernel in runtime/gemm_runtime.c) or through OpenBLAS (codegen_matmul.c).
 *
 * auto: the generated GEMM where the CPU has AVX-512 (and the plugin a runtime for it), else
 * OpenBLAS. The evidence:
 *  - the GPU machine's Xeon (AVX-512, 2 threads, tc bench; bench/results/gpu-2026-12-02-s12-call5
 *    and -call6): against the bare OpenBLAS GEMMs timed in the same rounds (Debian's OpenBLAS
 *    runs Cooper Lake kernels there), mlp at 1.10 and 1.02 through the generated GEMM against
 *    0.96 and 0.98 through OpenBLAS (0.78 and 0.72 of the peak FMA rate against 0.60 and 0.60),
 *    attn_block at 1.09 and 1.29 against 0.94 and 0.99. The host's speed moves between runs
 *    (attn_block's medians 29.6/35.3 ms generated, 51.8/32.2 ms OpenBLAS), so only those
 *    same-round ratios compare;
 *  - the 2-core AVX2 development VM: mlp 1.15x and attn_block 1.13x OpenBLAS's GEMMs under load,
 *    but each unit with a matmul compiles about 0.3 s longer (attn_block's unit 0.64 against
 *    0.34 s of cc -O3, 0.53 against 0.29 s for the fast tier; 1.0 s before the runtime moved
 *    into the plugin), which would take attn_block's cold first call past 0.3 s there. So AVX2
 *    keeps OpenBLAS by default and `cpu.blas=generated` asks for the other.
 * Both give each element as one chain of FMAs in some order; the generated GEMM's order is fixed
 * (the same bits on any thread count), OpenBLAS's is its own. */
#include <string.h>

#include "icpu.h"

icpu_blas gemm_choose(const char *value, const char **why) {
  if (value && !strcmp(value, "generated")) return *why = "cpu.blas=generated", ICPU_BLAS_GENERATED;
  if (value && !strcmp(value, "openblas")) return *why = "cpu.blas=openblas", ICPU_BLAS_OPENBLAS;
  /* auto (the host has checked the value against the declared ones): see above */
  if (gemm_host_width() == 16 && gemm_runtime_for_host())
    return *why = "cpu.blas=auto: the generated GEMM (AVX-512)", ICPU_BLAS_GENERATED;
  return *why = "cpu.blas=auto: OpenBLAS (no AVX-512: the generated GEMM would cost 0.3 s more of cc per unit)",
         ICPU_BLAS_OPENBLAS;
}
