#!/usr/bin/env bash
# On the GPU machine (.gl and .dev/gpu-build carried): what a new process sees, in one call.
#   1. exit status of short processes: 10 warm `tc run ln_gelu` and 5 cold `tc run attn_block`
#      (test size), then 10 warm `tc run attn_block` at the GPU size (its matmuls on cuBLASLt:
#      the process exits while cuBLASLt's start-up thread runs) on inductor-cuda, every status
#      printed (a crash at exit shows as 139),
#   2. attn_block's first call on inductor-cuda, cold then warm (TC_LOGS=init,cache lines),
#   3. dyn_attn with dynamic on, cold cache (total seconds, graphs),
#   4. attn_block's first call on vulkan, cold and warm (auto: f32 emulated in f64 on the H200),
#      then cold with f32 native; ln_gelu's speed emulated,
#   5. the conformance suite on vulkan (auto),
#   6. bench/probes/row_kernel_host.sh on the host CPU (TC_STARTUP_NO_PROBE=1 skips it).
set -u
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
ldconfig 2>/dev/null
. scripts/gpu-vulkan-env.sh >/dev/null 2>&1
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
echo "== [${SECONDS}s] exit status: 10 warm ln_gelu, then 5 cold attn_block (test size)"
rm -rf /tmp/ec
for i in $(seq 10); do
  TC_CACHE_DIR=/tmp/ec timeout 60 $B/bin/tc run ln_gelu --backend inductor-cuda --size test --iters 1 >/dev/null 2>&1
  echo -n "$? "
done
for i in $(seq 5); do
  rm -rf /tmp/ec2
  TC_CACHE_DIR=/tmp/ec2 timeout 60 $B/bin/tc run attn_block --backend inductor-cuda --size test --iters 1 >/dev/null 2>&1
  echo -n "cold:$? "
done
for i in $(seq 10); do
  TC_CACHE_DIR=/tmp/ec2 timeout 60 $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 1 >/dev/null 2>&1
  echo -n "gpu:$? "
done
echo
echo "== [${SECONDS}s] attn_block first calls, inductor-cuda"
rm -rf /tmp/fc
for p in cold warm warm warm; do
  TC_LOGS=init,cache TC_CACHE_DIR=/tmp/fc timeout 60 stdbuf -oL $B/bin/tc run attn_block --backend inductor-cuda --size gpu --iters 3 \
    >/tmp/fc.txt 2>&1
  rc=$?
  grep -E "^first call|generated GEMM|cuBLASLt 1|start-up|background" /tmp/fc.txt | sed "s/^/$p: /"
  echo "$p: exit status $rc"
done
echo "== [${SECONDS}s] dyn_attn, dynamic on, cold cache"
rm -rf /tmp/dy
TC_CACHE_DIR=/tmp/dy timeout 70 $B/bin/tc bench --backend inductor-cuda --size gpu --models dyn_attn --no-eager --dynamic on \
  2>&1 | grep -E "^dyn_attn|error" | head -3
echo "== [${SECONDS}s] attn_block first calls, vulkan"
rm -rf /tmp/vf
for p in cold warm native-cold; do
  o=
  [ $p = native-cold ] && rm -rf /tmp/vf && o=vulkan.f32_subnormals=native
  TC_OPTIONS=$o TC_LOGS=cache TC_CACHE_DIR=/tmp/vf timeout 60 $B/bin/tc run attn_block --backend vulkan --size gpu --iters 3 2>&1 |
    grep -E "^first call|pipelines created|^median" | sed "s/^/$p: /"
done
TC_OPTIONS=vulkan.f32_subnormals=emulate timeout 60 $B/bin/tc run ln_gelu --backend vulkan --size gpu --iters 20 2>&1 |
  grep -E "^median" | sed "s/^/ln_gelu, f32 emulated: /"
echo "== [${SECONDS}s] conformance vulkan (auto)"
timeout ${TC_STARTUP_T_CONF:-170} $B/bin/tc conformance vulkan >/tmp/cv.txt 2>&1
grep -E "^FAIL" /tmp/cv.txt | head -5
tail -1 /tmp/cv.txt
[ -n "${TC_STARTUP_NO_PROBE:-}" ] && exit 0
echo "== [${SECONDS}s] host row-kernel probe"
timeout 90 bash bench/probes/row_kernel_host.sh 2 2>&1 | tail -12
