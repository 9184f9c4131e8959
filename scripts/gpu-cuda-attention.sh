#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's flash-attention variants and max-autotune on attn_block.
#   1. the attention conformance cases (and the PyTorch attn_block cases) in every variant,
#   2. attn_block's median per variant, `tc run` (a wait per call: compare variants with each
#      other, not with tc bench's grouped figures), then the flash kernel's device time alone.
#      A variant is q,k,t (cuda.attention_queries, cuda.attention_keys,
#      cuda.attention_thread_queries of the v1 kernel) or tiled:MxN (cuda.attention_kernel=tiled,
#      cuda.attention_tile=MxN: 4x4, 4x8, 8x4 or 8x8), e.g.
#      TC_ATTN_VARIANTS="64,32,4 tiled:8x8 tiled:4x8 tiled:8x4 tiled:4x4"
#   3. attn_block through tc bench in max-autotune (cuBLASLt's algorithms timed, TC_LOGS=autotune;
#      TC_ATTN_NO_AUTOTUNE=1 skips it).
set -u
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache-attn
variants=${TC_ATTN_VARIANTS:-"64,32,4 64,32,8 128,32,4 64,64,4"}
for v in $variants; do
  if [[ $v == tiled:* ]]; then
    opts="cuda.attention_kernel=tiled,cuda.attention_tile=${v#tiled:}"
    label="tiled ${v#tiled:} (queries x keys a thread)"
  else
    IFS=, read -r q k t <<<"$v"
    opts="cuda.attention_queries=$q,cuda.attention_keys=$k,cuda.attention_thread_queries=$t"
    label="v1 $q x $k, $t a thread"
  fi
  conf=$(TC_OPTIONS=$opts timeout 120 $B/bin/tc conformance inductor-cuda --filter attn 2>&1 | tail -1)
  conf2=$(TC_OPTIONS=$opts timeout 120 $B/bin/tc conformance inductor-cuda --filter attention 2>&1 | tail -1)
  run=$(TC_OPTIONS=$opts timeout 90 $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 100 2>&1 |
    grep -E '^median' | tr -s ' ')
  prof=$(TC_LOGS=profile TC_OPTIONS=$opts timeout 90 $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 30 2>&1 |
    grep -E 'causal_attention' | sed 's/.*launches, //')
  echo "attention $label: $run | $prof | conformance attn: $conf; attention: $conf2"
done
[ -n "${TC_ATTN_NO_AUTOTUNE:-}" ] && exit 0 # TC_ATTN_NO_AUTOTUNE=1: the variants only
echo "=== attn_block, max-autotune (cuBLASLt's algorithms timed)"
TC_LOGS=autotune timeout 240 $B/bin/tc bench --backend inductor-cuda --size gpu --models attn_block,mlp --no-eager \
  --mode max-autotune 2>&1 | grep -E "chosen|autotune:.*variant [0-9]+: |attn_block|mlp" | tail -30
