#!/usr/bin/env bash
# Builds and times row_kernel_host.c over ln_gelu's and softmax's generated inductor-cpu units
# (CPU shapes, 2 threads) in variants: as generated; 256-bit vectors; no streaming stores; no
# software prefetch; threads bound to cores (OMP_PROC_BIND); for ln_gelu, its block's loops fused
# (ln_gelu_fuse.py: erf with the combine, and all three). Needs a built tc (TC_BUILD, default
# .dev/gpu-build, else build). Usage: bench/probes/row_kernel_host.sh [threads]
set -u
cd "$(dirname "$0")/../.."
B=${TC_BUILD:-.dev/gpu-build}; [ -x $B/bin/tc ] || B=build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
T=${1:-2}
W=$(mktemp -d)
base="-O3 -march=native -ffp-contract=off -fno-trapping-math -fno-math-errno -fopenmp"
for model in ln_gelu softmax; do
  TC_CACHE_DIR=$W/cache TC_LOGS=output_code $B/bin/tc run $model --backend inductor-cpu --size cpu --iters 1 2>&1 |
    sed -n '2,$p' | sed '/^model /,$d' >$W/$model.c
  launch=$(grep -o 'void k_[a-z_0-9]*_launch' $W/$model.c | head -1 | cut -d' ' -f2)
  params=0; [ $model = ln_gelu ] && params=1
  if [ $model = ln_gelu ]; then m=4096; else m=8192; fi
  sed 's/const int stream_out0 = .*;/const int stream_out0 = 0;/' $W/$model.c >$W/${model}_nostream.c
  sed 's/__builtin_prefetch(p + q)/(void)p/' $W/$model.c >$W/${model}_noprefetch.c
  fused=()
  if [ $model = ln_gelu ]; then
    for f in erf-combine all; do
      python3 bench/probes/ln_gelu_fuse.py $W/$model.c $f $W/${model}_fuse-$f.c && fused+=("fuse-$f|-mprefer-vector-width=512|${model}_fuse-$f")
    done
  fi
  for v in "as-generated||$model" "vec256|-mprefer-vector-width=256|$model" "vec512|-mprefer-vector-width=512|$model" \
           "no-streaming-stores|-mprefer-vector-width=512|${model}_nostream" "no-prefetch|-mprefer-vector-width=512|${model}_noprefetch" "${fused[@]}"; do
    IFS='|' read -r name flags src <<<"$v"
    cc $base $flags -DKERNEL_LAUNCH=$launch bench/probes/row_kernel_host.c $W/$src.c -o $W/p -lmvec -lm 2>$W/err || { echo "$model $name: build failed"; head -5 $W/err; continue; }
    echo "$model $name: $($W/p $m 1024 $T $params)"
    [ $name = vec512 ] && echo "$model vec512 bound to cores: $(OMP_PROC_BIND=close OMP_PLACES=cores $W/p $m 1024 $T $params)"
  done
done
rm -rf $W
