#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's row-kernel variants (ln_gelu, softmax) and the flash
# kernel, each kernel's device time from TC_LOGS=profile (the minimum over the calls of one
# `tc run`, events around each launch: variants compare kernel against kernel, free of the
# wait `tc run` makes after every call), then one tc bench of both with the default settings for
# the ratio to the copy ceiling of the same run.
#   TC_ROWS_VARIANTS  "name:options ..." (options as TC_OPTIONS takes them; "-" for none)
#   TC_ATTN_VARIANTS  "q,k,t ..." flash tiles as scripts/gpu-cuda-attention.sh takes them
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
attn=${TC_ATTN_VARIANTS:-"64,32,4 64,32,8"}
for v in $attn; do
  IFS=, read -r q k t <<<"$v"
  opts="cuda.attention_queries=$q,cuda.attention_keys=$k,cuda.attention_thread_queries=$t"
  conf=$(TC_OPTIONS=$opts timeout 120 $B/bin/tc conformance inductor-cuda --filter attention 2>&1 | tail -1)
  run=$(TC_OPTIONS=$opts timeout 90 $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 100 2>&1 |
    grep -E '^median' | tr -s ' ')
  prof=$(TC_LOGS=profile TC_OPTIONS=$opts timeout 90 $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 30 2>&1 |
    grep -E 'causal_attention' | sed 's/.*launches, //')
  echo "attention $q x $k, $t a thread: $run | $prof | conformance attention: $conf"
done
