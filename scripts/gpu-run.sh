#!/usr/bin/env bash
# On the GPU machine (through the device tool), from the repo root, with .gl and
# .dev/gpu-build carried (scripts/gpu-prepare.sh makes them here):
#   - unpacks the Vulkan loader, lists backends,
#   - runs the conformance suite on each GPU backend,
#   - runs the bench on each GPU backend at the GPU shapes, and PyTorch (eager, torch.compile)
#     on the same shapes in the same call,
#   - prints a short table last. Full logs and JSON go to $OUT.
set -u
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
$B/bin/tc list-backends 2>&1 | tee "$OUT/backends.txt"

gpu_backends=${TC_GPU_BACKENDS:-vulkan}
for b in $gpu_backends; do
  echo "=== conformance $b"
  timeout 240 $B/bin/tc conformance "$b" >"$OUT/conformance_$b.txt" 2>&1
  tail -3 "$OUT/conformance_$b.txt"
  echo "=== bench $b"
  timeout 240 $B/bin/tc bench --backend "$b" --size gpu --json >"$OUT/bench_$b.json" 2>"$OUT/bench_$b.log"
  tail -5 "$OUT/bench_$b.log"
done
echo "=== torch"
PYTHONUNBUFFERED=1 timeout 300 python3 bench/torch_compare.py --size gpu --json >"$OUT/torch.json" 2>"$OUT/torch.log"
tail -3 "$OUT/torch.log"
python3 scripts/gpu_table.py "$OUT" $gpu_backends
