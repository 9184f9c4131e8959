set -u
OUT=${OUT:-/tmp/tc-out}
. scripts/gpu-vulkan-env.sh >/dev/null 2>&1
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache
$B/bin/tc list-backends 2>&1 | grep -E 'NAME|cuda|vulkan' | cut -c1-200
echo "=== conformance inductor-cuda"
timeout 200 $B/bin/tc conformance inductor-cuda -v > $OUT/conf_cuda.txt 2>&1
grep -v '^ok ' $OUT/conf_cuda.txt | head -60
tail -1 $OUT/conf_cuda.txt
echo "=== run"
for m in ln_gelu softmax mlp; do TC_LOGS=cache,init timeout 60 $B/bin/tc run $m --backend inductor-cuda --size gpu 2>&1 | tail -6; done
echo "=== bench"
timeout 240 $B/bin/tc bench --backend inductor-cuda --size gpu --models ln_gelu,softmax,mlp --no-eager 2>&1 | tail -6
