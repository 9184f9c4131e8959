#!/usr/bin/env bash
# Builds mlp's generated inductor-cpu unit (cpu.blas=generated, CPU shapes) in variants of the
# prelude's GEMM as shared objects and times them side by side in one process (gemm_host.c,
# which says why) on 2 threads. Variants: NAME|sed program over the unit; set GEMM_VARIANTS to
# choose (default below). Needs a built tc (TC_BUILD, default .dev/gpu-build, else build).
# Usage: bench/probes/gemm_host.sh [threads [rounds]]
set -u
cd "$(dirname "$0")/../.."
B=${TC_BUILD:-.dev/gpu-build}; [ -x $B/bin/tc ] || B=build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
T=${1:-2}; R=${2:-15}
W=$(mktemp -d)
lscpu | grep -E 'Model name|Thread\(s\) per core|L1d|L2|L3'
base="-O3 -march=native -mprefer-vector-width=512 -ffp-contract=off -fno-trapping-math -fno-math-errno -fopenmp"
TC_OPTIONS=cpu.blas=generated TC_CACHE_DIR=$W/cache TC_LOGS=output_code $B/bin/tc run mlp --backend inductor-cpu \
  --size cpu --iters 1 2>&1 | sed -n '2,$p' | sed '/^model /,$d' >$W/mlp.c
grep -q k_matmul_add_gelu_launch $W/mlp.c || { echo "no mlp unit"; head -5 $W/mlp.c; exit 1; }
k_loop='^  for (int64_t k = 0; k < kc; k++) {$'
kc() { echo "s/#define TC_GEMM_KC [0-9]* /#define TC_GEMM_KC $1 /"; }
nc() { echo "s/#define TC_GEMM_NC [0-9]* /#define TC_GEMM_NC $1 /"; }
tile() { echo "s/#define TC_GEMM_MR 12 /#define TC_GEMM_MR $1 /;s/#define TC_GEMM_NV 2 /#define TC_GEMM_NV $2 /"; }
mc() { echo "s/#define TC_GEMM_MC [0-9]* /#define TC_GEMM_MC $1 /"; }
u4="/$k_loop/i #pragma GCC unroll 4" # sed's i takes the rest of the line: last
default_variants=(
  "generated|"
  "u4|$u4"
  "u4-kc512|$(kc 512);$u4"
  "u4-kc512-nc256|$(kc 512);$(nc 256);$u4"
  "u4-kc512-nc128|$(kc 512);$(nc 128);$u4"
  "u4-nc256|$(nc 256);$u4"
  "u4-kc512-mc192|$(kc 512);$(mc 192);$u4"
  "u4-kc512-nc256-mc192|$(kc 512);$(nc 256);$(mc 192);$u4"
  "u4-nc256-mc96|$(nc 256);$(mc 96);$u4"
  "u4-8x3-kc512-nc192|$(tile 8 3);$(kc 512);$(nc 192);$u4"
  "u4-6x4-kc512-nc256|$(tile 6 4);$(kc 512);$(nc 256);$u4"
  "u4-kc512-nc256-pfb|$(kc 512);$(nc 256);s|^    tc_gv bv\\[TC_GEMM_NV\\];$|& __builtin_prefetch(pb + (k + 8) * ldb); __builtin_prefetch(pb + (k + 8) * ldb + 16);|;$u4"
)
# Earlier rounds (bench/results/gpu-2026-12-02-s12-call2/3) also ran "no-erf" (s/= tc_erf_f32(v6);/= v6;/)
# and "no-pack-b"/"no-pack-a" (packing skipped: wrong sums, timing only): each moved mlp by 0-5%.
if [ -n "${GEMM_VARIANTS:-}" ]; then mapfile -t variants <<<"$GEMM_VARIANTS"; else variants=("${default_variants[@]}"); fi
args=()
for v in "${variants[@]}"; do
  name=${v%%|*}; edit=${v#*|}
  sed "$edit" $W/mlp.c >$W/$name.c
  cc $base -shared -fPIC -DUNIT="\"$W/$name.c\"" bench/probes/gemm_host_ukr.c -o $W/$name.so -lmvec -lm 2>$W/err || { echo "$name: build failed"; head -5 $W/err; continue; }
  args+=("$name=$W/$name.so")
done
cc $base bench/probes/gemm_host.c -o $W/gemm_host -ldl || exit 1
$W/gemm_host $T $R "${args[@]}"
echo "bound to cores (OMP_PROC_BIND=spread OMP_PLACES=cores):"
OMP_PROC_BIND=spread OMP_PLACES=cores $W/gemm_host $T $R "${args[@]}"
rm -rf $W
