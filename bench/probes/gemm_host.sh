#!/usr/bin/env bash
# Builds mlp's generated inductor-cpu unit (cpu.blas=generated, CPU shapes) with its GEMM runtime
# in variants and times them side by side in one process (gemm_host.c, which says why) on 2
# threads. A variant is NAME|sed program, applied to the prelude (its "gemm" section: tile and
# block sizes), to the plugin's runtime/gemm_runtime.c (packing, micro-kernel) and to the unit's
# text (which carries the same section, and the epilogue); set GEMM_VARIANTS (one a line) to
# choose. Needs a built tc (TC_BUILD, default .dev/gpu-build, else build).
# Usage: bench/probes/gemm_host.sh [threads [rounds]]
set -u
cd "$(dirname "$0")/../.."
B=${TC_BUILD:-.dev/gpu-build}; [ -x $B/bin/tc ] || B=build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
T=${1:-2}; R=${2:-15}
W=$(mktemp -d)
P=plugins/inductor-cpu
lscpu | grep -E 'Model name|Thread\(s\) per core|L1d|L2|L3'
base="-O3 -march=native -mprefer-vector-width=512 -ffp-contract=off -fno-trapping-math -fno-math-errno -fopenmp"
TC_OPTIONS=cpu.blas=generated TC_CACHE_DIR=$W/cache TC_LOGS=output_code $B/bin/tc run mlp --backend inductor-cpu \
  --size cpu --iters 1 2>&1 | sed -n '2,$p' | sed '/^model /,$d' >$W/mlp.c
grep -q tc_gemm_attach $W/mlp.c || { echo "no mlp unit with the GEMM runtime's attach"; head -5 $W/mlp.c; exit 1; }
tile() { echo "s/^#define TC_GEMM_MR 6$/#define TC_GEMM_MR $1/;s/^#define TC_GEMM_NV 4$/#define TC_GEMM_NV $2/"; }
kc() { echo "s/#define TC_GEMM_KC [0-9]* /#define TC_GEMM_KC $1 /"; }
nc() { echo "s/#define TC_GEMM_NC [0-9]* /#define TC_GEMM_NC $1 /"; }
default_variants=(
  "as-built|"
  "a-packed|s/g->a_direct = sak == 1;/g->a_direct = 0;/"
  "12x2|$(tile 12 2)"
  "8x3|$(tile 8 3)"
  "kc256|$(kc 256)"
  "nc512|$(nc 512)"
  "no-erf|s/= tc_erf_f32(v6);/= v6;/"
)
# Session 12's rounds (bench/results/gpu-2026-12-02-s12-call2..4-host-gemm.txt) also tried the K
# loop rolled, prefetches of B, 14x2 and 6x4 tiles, other block sizes, and packing skipped
# (wrong sums, timing only): what is built now is what won there.
if [ -n "${GEMM_VARIANTS:-}" ]; then mapfile -t variants <<<"$GEMM_VARIANTS"; else variants=("${default_variants[@]}"); fi
args=()
for v in "${variants[@]}"; do
  name=${v%%|*}; edit=${v#*|}
  d=$W/$name; mkdir -p $d
  sed "$edit" $P/prelude/tc_cpu_prelude.h >$d/prelude.h
  sed "$edit" $P/runtime/gemm_runtime.c >$d/gemm_runtime.c
  sed "$edit" $W/mlp.c >$d/unit.c
  # sections vec and gemm, as runtime/sections.cmake extracts them for the build (the GPU
  # machine has no cmake)
  awk '/^\/\/@section /{on = ($2 == "vec" || $2 == "gemm"); next} on' $d/prelude.h >$d/tc_cpu_gemm_sections.h
  cc $base -fPIC -c -I$d -DRUNTIME="\"$d/gemm_runtime.c\"" -DTC_GEMM_RUNTIME_NAME=probe_gemm_runtime \
    bench/probes/gemm_host_runtime.c -o $d/runtime.o 2>$d/err &&
    cc $base -shared -fPIC -DUNIT="\"$d/unit.c\"" bench/probes/gemm_host_unit.c $d/runtime.o -o $d/v.so -lmvec -lm 2>>$d/err ||
    { echo "$name: build failed"; head -5 $d/err; continue; }
  args+=("$name=$d/v.so")
done
cc $base -Ibench -Icore/include -Iplugin-api -Iexamples/include bench/probes/gemm_host.c bench/probes/probe_bench_stubs.c bench/bench_peak.c -o $W/gemm_host -ldl -lm || exit 1
$W/gemm_host $T $R "${args[@]}"
echo "bound to cores (OMP_PROC_BIND=spread OMP_PLACES=cores):"
OMP_PROC_BIND=spread OMP_PLACES=cores $W/gemm_host $T $R "${args[@]}"
rm -rf $W
