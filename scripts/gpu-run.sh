#!/usr/bin/env bash
# On the GPU machine (through the device tool), from the repo root, with .gl and
# .dev/gpu-build carried (scripts/gpu-prepare.sh makes them here):
#   - unpacks the Vulkan loader, lists backends,
#   - runs the conformance suite on each GPU backend,
#   - runs the bench on each GPU backend at the GPU shapes, and PyTorch (eager, torch.compile)
#     on the same shapes in the same call,
#   - prints a short table last. Logs go to $OUT/log.txt (one file: the device tool brings back
#     at most 8), JSON to $OUT/bench_<backend>.json and $OUT/torch.json.
# The bench runs without the eager column (--no-eager): eager runs on debug-eager, the CPU
# reference interpreter, which at GPU shapes spends its 30-second limit per model for nothing.
# vulkan's f32 path follows vulkan.f32_subnormals (auto: emulated in f64 where the driver
# flushes f32 subnormals) in the conformance suite; its bench runs native unless
# TC_OPTIONS=vulkan.f32_subnormals=... says otherwise (then for every run here).
set -u
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
. scripts/gpu-vulkan-env.sh
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
$B/bin/tc list-backends 2>&1
# what the Vulkan driver promises about subnormals and signed zeros (float controls), and the
# f32 path vulkan.f32_subnormals takes on it (native, or emulated in f64)
echo "vulkan float-controls:"
TC_LOGS=init,vulkan timeout 30 $B/bin/tc run ln_gelu --backend vulkan --size test --iters 1 2>&1 |
  grep -m2 -E "preserves|: f32 (native|emulated)" || true

# TC_GPU_QUICK=1 fits one 10-minute call: the three single-kernel workloads only.
# Every GPU backend that is available there (inductor-cuda, vulkan), unless named.
if [ -z "${TC_GPU_BACKENDS:-}" ]; then
  TC_GPU_BACKENDS=$($B/bin/tc list-backends --json 2>/dev/null | python3 -c '
import json, sys
print(" ".join(b["name"] for b in json.load(sys.stdin) if b.get("available") and b["name"] in ("inductor-cuda", "vulkan")))')
fi
gpu_backends=${TC_GPU_BACKENDS:-vulkan}
LOG=$OUT/log.txt
t_conf=240 t_bench=300 t_torch=300 bench_models="--no-eager" torch_args=()
if [ -n "${TC_GPU_QUICK:-}" ]; then
  t_conf=100 t_bench=300 t_torch=150
  bench_models="--models ln_gelu,softmax,mlp --no-eager"
  torch_args=(--models ln_gelu,softmax,mlp)
  [ -n "${TC_GPU_MODELS:-}" ] && bench_models="--models $TC_GPU_MODELS --no-eager" && torch_args=(--models "$TC_GPU_MODELS")
fi
# TC_GPU_T_CONF=S: the conformance time limit per backend and mode; TC_GPU_NO_BENCH=1 and
# TC_GPU_NO_TORCH=1 skip the bench and PyTorch (a correctness-only call); TC_GPU_EARLY_AB=1 benches
# ln_gelu and softmax again with ordinary launches (cuda.early_launch=0); TC_GPU_NO_RO_CONF,
# TC_GPU_NO_GEMM_CONF, TC_GPU_NO_GEMM_CMP, TC_GPU_NO_DYN, TC_GPU_NO_AUTOTUNE and TC_GPU_NO_AB skip parts of the
# inductor-cuda section below (to fit a call in the device time left).
t_conf=${TC_GPU_T_CONF:-$t_conf}
for b in $gpu_backends; do
  # A second process must take every kernel from the disk cache (shaderc / nvrtc skipped).
  echo "=== [${SECONDS}s] warm start $b (TC_LOGS=cache, fresh cache, two processes)"
  rm -rf /tmp/tc-cache-warm
  for pass in cold warm; do
    TC_CACHE_DIR=/tmp/tc-cache-warm TC_LOGS=cache timeout 60 $B/bin/tc run ln_gelu --backend "$b" --size test \
      >/tmp/cache_${b}_$pass.txt 2>&1
    rc=$? # a crash at exit (session 8: a segfault with a warm cache) shows here, not in the counts
    [ $rc -ne 0 ] && echo "warm start $b: the $pass process exited with status $rc"
  done
  # attn_block at the GPU size, warm, exiting at once: on inductor-cuda the process exits while
  # cuBLASLt's start-up runs on a thread (session 10: a crash at exit until exit_wait.c)
  for pass in cold warm warm warm; do
    TC_CACHE_DIR=/tmp/tc-cache-warm timeout 60 $B/bin/tc run attn_block --backend "$b" --size gpu --iters 1 >/dev/null 2>&1
    rc=$?
    [ $rc -ne 0 ] && echo "warm start $b: an attn_block $pass process exited with status $rc"
  done
  echo "cold: $(grep -c 'cache store\|cache miss' /tmp/cache_${b}_cold.txt) compiled; warm: $(grep -c 'cache hit' /tmp/cache_${b}_warm.txt) hits, $(grep -c 'cache store\|cache miss' /tmp/cache_${b}_warm.txt) compiled"
  grep -m2 'cache hit' /tmp/cache_${b}_warm.txt
  cat /tmp/cache_${b}_*.txt >>"$LOG"
  echo "=== [${SECONDS}s] conformance $b"
  timeout $t_conf $B/bin/tc conformance "$b" -v >/tmp/conformance_$b.txt 2>&1
  tail -3 /tmp/conformance_$b.txt
  # the cases excused because the device flushed f32 subnormals (0 when vulkan emulates them)
  echo "$b: $(grep -c '^KNOWN .*flushes f32 subnormals' /tmp/conformance_$b.txt) KNOWN subnormal-flushing cases"
  { echo "=== conformance $b"; cat /tmp/conformance_$b.txt; } >>"$LOG"
  [ -n "${TC_GPU_NO_BENCH:-}" ] && continue
  # TC_GPU_BENCH_BACKENDS="a b": bench only these (the others get conformance only)
  [ -n "${TC_GPU_BENCH_BACKENDS:-}" ] && [[ " $TC_GPU_BENCH_BACKENDS " != *" $b "* ]] && continue
  echo "=== [${SECONDS}s] bench $b"
  # vulkan's bench keeps f32 native unless TC_OPTIONS says otherwise: auto's f64 emulation on the
  # H200 (correct subnormals) runs ln_gelu 45x slower, and the bench is about the f32 speed
  bench_opts=${TC_OPTIONS:-}
  [ "$b" = vulkan ] && [ -z "$bench_opts" ] && bench_opts=vulkan.f32_subnormals=native
  TC_OPTIONS=$bench_opts timeout $t_bench $B/bin/tc bench --backend "$b" --size gpu $bench_models --json \
    >"$OUT/bench_$b.json" 2>/tmp/bench_$b.log
  tail -5 /tmp/bench_$b.log
  { echo "=== bench $b"; cat /tmp/bench_$b.log; } >>"$LOG"
  # TC_GPU_EARLY_AB=1: the row workloads again with ordinary launches (cuda.early_launch=0), to
  # compare with the early launches of the run above in the same call
  if [ "$b" = inductor-cuda ] && [ -n "${TC_GPU_EARLY_AB:-}" ]; then
    echo "=== [${SECONDS}s] bench inductor-cuda ln_gelu,softmax with cuda.early_launch=0"
    TC_OPTIONS=cuda.early_launch=0 timeout 120 $B/bin/tc bench --backend inductor-cuda --size gpu --models ln_gelu,softmax \
      --no-eager 2>&1 | grep -E "^(ln_gelu|softmax) " | tee -a "$LOG"
  fi
done
# inductor-cuda beyond the default mode (skip with TC_GPU_NO_MODES=1): the conformance suite in
# reduce-overhead (each case called twice: the second replays the CUDA graph the first recorded)
# and with cuda.gemm=generated (every matmul on the generated GEMM, none on cuBLASLt), the
# generated GEMM's speed against cuBLASLt's on attn_block and mlp, tiny_mlp_b1 in
# reduce-overhead, dyn_attn with dynamic=on (one symbolic graph), attn_block's first call in a
# new process with a cold and with a warm cache, and tc ab on both GPU backends.
if [ -z "${TC_GPU_NO_MODES:-}" ] && [[ " $gpu_backends " == *" inductor-cuda "* ]]; then
  if [ -z "${TC_GPU_NO_RO_CONF:-}" ]; then # TC_GPU_NO_RO_CONF=1 skips it (a short call)
    echo "=== [${SECONDS}s] conformance inductor-cuda --mode reduce-overhead"
    timeout $t_conf $B/bin/tc conformance inductor-cuda --mode reduce-overhead -v >/tmp/conf_ro.txt 2>&1
    grep -v '^ok ' /tmp/conf_ro.txt | tail -8
    { echo "=== conformance inductor-cuda reduce-overhead"; cat /tmp/conf_ro.txt; } >>"$LOG"
  fi
  if [ -z "${TC_GPU_NO_GEMM_CONF:-}" ]; then # TC_GPU_NO_GEMM_CONF=1 skips it (a short call)
    echo "=== [${SECONDS}s] conformance inductor-cuda with cuda.gemm=generated"
    TC_OPTIONS=cuda.gemm=generated timeout $t_conf $B/bin/tc conformance inductor-cuda -v >/tmp/conf_gemm.txt 2>&1
    grep -v '^ok ' /tmp/conf_gemm.txt | tail -8
    { echo "=== conformance inductor-cuda cuda.gemm=generated"; cat /tmp/conf_gemm.txt; } >>"$LOG"
  fi
  if [ -z "${TC_GPU_NO_GEMM_CMP:-}" ]; then # TC_GPU_NO_GEMM_CMP=1 skips it (a short call)
    echo "=== [${SECONDS}s] the generated GEMM against cuBLASLt (tc run, median; the profile: each kernel's device time)"
    for m in attn_block mlp; do
      for g in cublaslt generated; do
        TC_OPTIONS=cuda.gemm=$g timeout 90 $B/bin/tc run $m --backend inductor-cuda --size gpu --iters 100 2>&1 |
          grep -E "^(median|figure|checksum)" | sed "s/^/$m cuda.gemm=$g: /" | tee -a "$LOG"
      done
      TC_LOGS=profile TC_OPTIONS=cuda.gemm=generated timeout 90 $B/bin/tc run $m --backend inductor-cuda --size gpu \
        --iters 30 2>&1 | grep -E "profile" >>"$LOG"
    done
  fi
  echo "=== [${SECONDS}s] bench inductor-cuda tiny_mlp_b1 --mode reduce-overhead, dyn_attn --dynamic on"
  timeout 120 $B/bin/tc bench --backend inductor-cuda --size gpu --models tiny_mlp_b1 --no-eager --mode reduce-overhead \
    --json >"$OUT/bench_cuda_ro.json" 2>/tmp/bench_ro.log
  # TC_GPU_NO_DYN=1 skips dyn_attn (about 100 s)
  [ -z "${TC_GPU_NO_DYN:-}" ] && timeout 150 $B/bin/tc bench --backend inductor-cuda --size gpu --models dyn_attn --no-eager --dynamic on \
    --json >"$OUT/bench_cuda_dyn.json" 2>/tmp/bench_dyn.log
  python3 - "$OUT" <<'PY'
import json, sys
for f in ("bench_cuda_ro.json", "bench_cuda_dyn.json"):
    try:
        d = json.load(open(f"{sys.argv[1]}/{f}"))
    except Exception as e:
        print(f, "unreadable:", e); continue
    for m in d.get("models", []):
        cold, warm = m.get("cold") or {}, m.get("warm") or {}
        print(f"{m['name']} (mode {d.get('mode')}, dynamic {d.get('dynamic')}): figure {m.get('figure')} {m.get('unit')}, "
              f"first call cold {cold.get('first_call_s')} s warm {warm.get('first_call_s')} s, "
              f"total cold {cold.get('total_s')} s warm {warm.get('total_s')} s, graphs {cold.get('graphs')}, "
              f"error {m.get('error') or '-'}")
PY
  cat /tmp/bench_ro.log /tmp/bench_dyn.log >>"$LOG"
  # max-autotune (TC_GPU_NO_AUTOTUNE=1 skips it): attn_block and mlp with each cuBLASLt matmul's
  # configuration timed at the first call (the heuristic's candidates, then every configuration
  # cuBLASLt accepts), then replayed as CUDA graphs; the choices as TC_LOGS=autotune logs them
  if [ -z "${TC_GPU_NO_AUTOTUNE:-}" ]; then
    echo "=== [${SECONDS}s] bench inductor-cuda attn_block,mlp --mode max-autotune"
    rm -rf /tmp/tc-cache-autotune
    TC_CACHE_DIR=/tmp/tc-cache-autotune TC_LOGS=autotune timeout 240 $B/bin/tc bench --backend inductor-cuda --size gpu \
      --models attn_block,mlp --no-eager --mode max-autotune --json >"$OUT/bench_cuda_at.json" 2>/tmp/bench_at.log
    grep -E "autotune: .* chosen" /tmp/bench_at.log | sed 's/^.*autotune: matmul/matmul/' | sort -u | head -12
    grep -E "^(attn_block|mlp) " /tmp/bench_at.log
    cat /tmp/bench_at.log >>"$LOG"
  fi
  echo "=== [${SECONDS}s] attn_block first call, new processes: cold cache, then warm"
  rm -rf /tmp/tc-cache-first
  # TC_LOGS=init: where a warm first call's time goes (libraries, cuBLASLt's handle and heuristic
  # on the preload thread, modules, the matmuls that ran on the generated GEMM while cuBLASLt
  # started; the cold pass's GEMMs compiled in the background); then the same with
  # cuda.gemm=cublaslt, every first matmul waiting for cuBLASLt (the behaviour before cuda.gemm;
  # its programs are auto's without the GEMMs', so its cold pass starts from an empty cache again)
  for pass in cold warm warm cublaslt-cold cublaslt-warm; do
    opts=; [[ $pass == cublaslt-* ]] && opts=cuda.gemm=cublaslt
    [ $pass = cublaslt-cold ] && rm -rf /tmp/tc-cache-first
    TC_OPTIONS=$opts TC_LOGS=init,cache TC_CACHE_DIR=/tmp/tc-cache-first timeout 60 $B/bin/tc run attn_block --backend inductor-cuda \
      --size gpu --iters 3 2>&1 | grep -E "^first call|cuBLASLt|modules loaded|first launch|generated GEMM|cache (hit|miss)" | sed "s/^/$pass: /"
  done
  if [[ " $gpu_backends " == *" vulkan "* ]] && [ -z "${TC_GPU_NO_AB:-}" ]; then # TC_GPU_NO_AB=1: neither this nor tc ab
    echo "=== [${SECONDS}s] attn_block first call on vulkan, new processes: cold cache, then warm"
    rm -rf /tmp/tc-cache-first-vk
    # cold and warm as a user runs it (auto: f32 emulated in f64 on the H200), then cold with f32 native
    for pass in cold warm native-cold; do
      [ $pass = native-cold ] && rm -rf /tmp/tc-cache-first-vk
      opts=; [ $pass = native-cold ] && opts=vulkan.f32_subnormals=native
      TC_OPTIONS=$opts TC_LOGS=cache TC_CACHE_DIR=/tmp/tc-cache-first-vk timeout 60 $B/bin/tc run attn_block --backend vulkan --size gpu --iters 3 2>&1 |
        grep -E "^first call|pipelines created|created at its launch|kernels, [0-9]+ from the SPIR-V cache" | sed "s/^/$pass: /"
    done
  fi
  if [ -z "${TC_GPU_NO_AB:-}" ] && { [[ " $gpu_backends " == *" vulkan "* ]] || $B/bin/tc list-backends 2>/dev/null | grep -q "^vulkan .* yes"; }; then
    echo "=== [${SECONDS}s] tc ab attn_block --backends vulkan,inductor-cuda"
    timeout 120 $B/bin/tc ab attn_block --backends vulkan,inductor-cuda --size test 2>&1 | tail -8
  fi
fi
# TC_GPU_DIAG=1: GPU-only (timestamp) times of the vulkan plugin's row kernels per threads-per-row
# (plugins/vulkan/bench/vk_diag.c; the copy-kernel sweeps are skipped).
if [ -n "${TC_GPU_DIAG:-}" ] && [ -x $B/bin/tc-vulkan-diag ]; then
  echo "=== [${SECONDS}s] vulkan row-kernel diagnostic"
  VK_DIAG_SKIPCOPY=1 timeout 120 $B/bin/tc-vulkan-diag $B/lib/tc/plugins/tc-vulkan.so >/tmp/vk_diag.txt 2>&1
  grep -E "TPR|plugin copy" /tmp/vk_diag.txt | head -40
  cat /tmp/vk_diag.txt >>"$LOG"
fi
# TC_GPU_PROFILE=1: each GPU backend's kernels with their device times (TC_LOGS=profile) for the
# GEMM-heavy models. tc run waits after every call, so clocks drop: read the minima.
if [ -n "${TC_GPU_PROFILE:-}" ]; then
  for b in $gpu_backends; do
    for m in ${TC_GPU_PROFILE_MODELS:-attn_block mlp softmax ln_gelu tiny_mlp_b1}; do
      echo "=== [${SECONDS}s] profile $b $m"
      TC_LOGS=profile timeout 60 $B/bin/tc run "$m" --backend "$b" --size gpu --iters 30 2>&1 | grep -E "profile|median" |
        tee -a "$LOG"
    done
  done
fi
if [ -n "${TC_GPU_NO_TORCH:-}" ]; then exit 0; fi
echo "=== [${SECONDS}s] torch"
PYTHONUNBUFFERED=1 timeout $t_torch python3 bench/torch_compare.py --size gpu "${torch_args[@]}" --json >"$OUT/torch.json" 2>/tmp/torch.log
tail -3 /tmp/torch.log
{ echo "=== torch"; cat /tmp/torch.log; } >>"$LOG"
python3 scripts/gpu_table.py "$OUT" $gpu_backends
