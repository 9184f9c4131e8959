#!/usr/bin/env bash
# On the GPU machine (through the device tool), from the repo root, with .gl and the build
# folder carried (default .dev/gpu-build, made by scripts/gpu-prepare.sh; or name one):
# GPU-only times (timestamp queries) of copy-kernel variants and the plugin's row kernels
# (tc-vulkan-diag), then the plugin end to end (tc-vulkan-bench). Logs under $OUT.
set -u
B=${1:-.dev/gpu-build}
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
. scripts/gpu-vulkan-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
P=$(ls $B/lib/tc/plugins/tc-vulkan.so $B/tc-vulkan.so 2>/dev/null | head -1)
D=$(ls $B/bin/tc-vulkan-diag $B/tc-vulkan-diag 2>/dev/null | head -1)
V=$(ls $B/bin/tc-vulkan-bench $B/tc-vulkan-bench 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
timeout 150 "$D" "$P" >"$OUT/vk_diag.txt" 2>&1
echo "tc-vulkan-diag rc $?"
TC_CACHE_DIR=/tmp/tc-cache timeout 90 "$V" "$P" >"$OUT/vk_bench.txt" 2>&1
echo "tc-vulkan-bench rc $?"
cat "$OUT/vk_diag.txt" "$OUT/vk_bench.txt"
