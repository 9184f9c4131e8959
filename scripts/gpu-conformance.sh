#!/usr/bin/env bash
# On the GPU machine (device tool, .gl and .dev/gpu-build carried): the conformance suite and a
# warm start on every available GPU backend, in about two minutes. scripts/gpu-run.sh adds the
# bench and PyTorch.
set -u
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
. scripts/gpu-vulkan-env.sh >/dev/null 2>&1
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
for b in inductor-cuda vulkan; do
  echo "=== $b"
  timeout 200 $B/bin/tc conformance "$b" >"$OUT/conformance_$b.txt" 2>&1
  grep -v '^ok ' "$OUT/conformance_$b.txt" | tail -5
  echo "$b: $(grep -c '^KNOWN .*flushes f32 subnormals' "$OUT/conformance_$b.txt") KNOWN subnormal-flushing cases"
  rm -rf /tmp/tc-cache-warm
  for pass in cold warm; do
    TC_CACHE_DIR=/tmp/tc-cache-warm TC_LOGS=cache timeout 60 $B/bin/tc run ln_gelu --backend "$b" --size gpu 2>&1 |
      grep -E 'cache hit|first call|figure' | head -3 | sed "s/^/$pass: /"
  done
done
