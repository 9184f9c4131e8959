/* gemm_choice.c — cpu.blas: whether f32 matmuls run as the generated GEMM (codegen_gemm.c) or
 * through OpenBLAS (codegen_matmul.c). auto is OpenBLAS for now: the generated GEMM is level with
 * it on the development VM (below) but adds about 0.4 s of cc -O3 to every unit with a matmul,
 * which doubles a cold first call (attn_block 0.66-0.83 s -> 1.2-1.5 s; the first call is the
 * complaint tc exists for). It becomes auto's choice once its code is compiled apart and cached
 * (or at a lower tier first) and it wins on the GPU machine's host. The generated micro-kernel
 * is written for vector FMA (AVX-512, else AVX2 + FMA, as -march=native compiles the unit).
 *
 * The evidence, on the 2-core AVX-512 development VM (Zen 4; OpenBLAS run with its SkylakeX
 * kernels): the same process CPU time per call for mlp, attn_block and tiny_mlp_b1 either way
 * (mlp 45-51 ms, attn_block 86-99 ms, tiny_mlp_b1 6-8 us, under other jobs' load), and bare
 * GEMMs within a few per cent of OpenBLAS on one thread; the generated one also fuses the
 * epilogue, gives the same bits on every thread count, and needs no BLAS. Against it: about
 * 0.4 s more of cc per unit with a matmul. On the GPU machine's Xeon, where Debian's OpenBLAS
 * runs older cores' kernels (issue 15: mlp at 0.187 TF/s), it is the choice to measure. */
#include <string.h>

#include "icpu.h"

icpu_blas gemm_choose(const char *value, const char **why) {
  if (value && !strcmp(value, "generated")) return *why = "cpu.blas=generated", ICPU_BLAS_GENERATED;
  if (value && !strcmp(value, "openblas")) return *why = "cpu.blas=openblas", ICPU_BLAS_OPENBLAS;
  /* auto (the host has checked the value against the declared ones): see above */
  return *why = "cpu.blas=auto: OpenBLAS (the generated GEMM costs 0.4 s more of cc per unit, at the same speed)",
         ICPU_BLAS_OPENBLAS;
}
