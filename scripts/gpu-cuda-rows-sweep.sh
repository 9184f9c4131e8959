#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's row kernels (ln_gelu, softmax) at each cuda.row_threads, and
# a copy through torch for scale. `tc run` times single calls with a wait each: compare variants
# with each other, not with tc bench's grouped figures.
set -u
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache-sweep
for m in softmax ln_gelu; do
  for t in 0 32 64 128 256 512 1024; do
    r=$(TC_OPTIONS=cuda.row_threads=$t timeout 60 $B/bin/tc run $m --backend inductor-cuda --size gpu --iters 200 2>&1 |
      grep -E '^(median|figure)' | tr -s ' ' | tr '\n' ' ')
    echo "$m row_threads=$t: $r"
  done
done
