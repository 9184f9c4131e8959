#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's row-kernel variants (ln_gelu, softmax), each kernel's
# device time from TC_LOGS=profile (the minimum over the calls of one `tc run`, events around
# each launch: variants compare kernel against kernel, free of the wait `tc run` makes after
# every call; GB/s from the bytes read and written). The flash kernel's variants:
# scripts/gpu-cuda-attention.sh.
#   TC_ROWS_VARIANTS  "name:options ..." (options as TC_OPTIONS takes them; "-" for none)
set -u
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache-rows
rows=${TC_ROWS_VARIANTS:-"default:- rt128:cuda.row_threads=128 rt256:cuda.row_threads=256 rt512:cuda.row_threads=512"}
bytes_ln=$((2 * 8192 * 4096 * 4)) bytes_sm=$((2 * 32768 * 1024 * 4))
for v in $rows; do
  name=${v%%:*} opts=${v#*:}
  [ "$opts" = "-" ] && opts=
  for m in ln_gelu softmax; do
    line=$(TC_LOGS=profile TC_OPTIONS=$opts timeout 60 $B/bin/tc run $m --backend inductor-cuda --size gpu --iters 60 2>&1 |
      grep -m1 "on the device")
    us=$(sed -E 's/.*min ([0-9.]+) us.*/\1/' <<<"$line")
    bytes=$bytes_ln; [ $m = softmax ] && bytes=$bytes_sm
    gbs=$(python3 -c "print(f'{$bytes / ($us * 1e-6) / 1e9:.0f}')" 2>/dev/null || echo "?")
    echo "rows $name $m: ${us} us = ${gbs} GB/s | $line"
  done
done
