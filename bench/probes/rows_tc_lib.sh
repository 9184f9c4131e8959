# Sourced by ln_gelu_tc.sh and softmax_tc.sh (on the GPU machine): variants of a generated
# inductor-cuda module compiled as the plugin compiles them (--fmad=false), one object each, then
# rows_tc_main.cu linked with them and run. Needs W (a scratch directory).
# nvcc's implicit cuda_runtime.h brings <stdint.h> and <math.h>: the module's own definitions of
# their names (NVRTC has no headers) go.
rows_tc_std='/^typedef .*int[0-9]*_t;$/d; /^#define \(U\?INT[0-9]*_\(MIN\|MAX\|C\)\|INFINITY\|NAN\)[ (]/d'
# The module's head as codegen_module.c writes it: the plugin prelude's section common, the
# kit's section scalar, the plugin prelude's section device (marker lines left out).
rows_tc_head() {
  local cuda=plugins/inductor-cuda/prelude/tc_cuda_prelude.cuh kit=plugin-api/kit/prelude/tc_scalar.h
  sed -n '/^\/\/@section common/,/^\/\/@section/p' $cuda | grep -v '^//@section'
  sed -n '/^\/\/@section scalar/,$p' $kit | grep -v '^//@section'
  sed -n '/^\/\/@section device/,$p' $cuda | grep -v '^//@section'
}
# rows_tc_mk VARIANT KERNELS KERNEL SED: the module (head, then the kernel text of the file
# KERNELS) with SED applied, KERNEL renamed VARIANT
rows_tc_mk() {
  { echo "#include <stdint.h>"; rows_tc_head; cat "$2"; } | sed -e "$rows_tc_std" -e "$4" -e "s/$3/$1/" >$W/$1.cu
  nvcc -O3 -arch=sm_90 --fmad=false -c $W/$1.cu -o $W/$1.o 2>$W/$1.log || { cat $W/$1.log; exit 1; }
}
# rows_tc_run MODEL VARIANT...: MODEL is LN_GELU or SOFTMAX (rows_tc_main.cu)
rows_tc_run() {
  local model=$1
  shift
  printf '#define %s 1\n#define VARIANTS(X)%s\n' $model "$(printf ' X(%s)' "$@")" >$W/variants.h
  nvcc -O3 -arch=sm_90 -I$W bench/probes/rows_tc_main.cu $(printf "$W/%s.o " "$@") -o $W/p || exit 1
  $W/p
}
