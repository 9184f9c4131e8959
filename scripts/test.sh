#!/usr/bin/env bash
# Builds tc and runs the whole test suite:
#   0. the layering check of the core's stages (scripts/check-layers.sh) and its self-test,
#   1. the exported symbols of libtc: tc.h's functions and nothing else (scripts/check-exports.sh),
#      then the Criterion suites (unit tests, capture, registry, schedule, backends, conformance),
#   2. the same suites built with AddressSanitizer + UndefinedBehaviorSanitizer,
#   3. the many-threads scenario built with ThreadSanitizer (tc_threads_check),
#   4. `tc conformance BACKEND` for every available backend (the plugin authors' command), and
#      on inductor-cpu and vulkan in every mode besides default, and on vulkan with f32 emulated
#      in f64 (vulkan.f32_subnormals=emulate),
#   5. `tc ab` end to end (tests/ab_check.sh): the table, --json, --bisect on a deliberately
#      wrong backend, and the --html page rendered in headless Chromium.
# Installs missing Debian packages first. Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
note() { printf '\n=== %s\n' "$*"; }

# Criterion prints "[====] Synthesis: Tested: T | Passing: P | Failing: F | Crashing: C".
run_criterion() {
  local label=$1 bin=$2 log
  log=$(mktemp)
  note "$label"
  "$bin" -j2 2>&1 | tee "$log" | tail -60
  local line p f c
  line=$(grep -a 'Synthesis:' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "$label: no summary (the test binary crashed?)"
    failed=$((failed + 1))
  else
    p=$(sed -E 's/.*Passing: ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*Failing: ([0-9]+).*/\1/' <<<"$line")
    c=$(sed -E 's/.*Crashing: ([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + p))
    failed=$((failed + f + c))
  fi
  rm -f "$log"
}

# Each counts as one step, passed or failed.
step() {
  local label=$1
  shift
  note "$label"
  if "$@"; then passed=$((passed + 1)); else echo "$label failed"; failed=$((failed + 1)); fi
}
step "layering check (core/LAYERS)" scripts/check-layers.sh
step "layering check self-test" scripts/check-layers.sh --self-test

note "build (release with debug info)"
if scripts/build.sh build; then
  step "exported symbols of libtc (tc.h only)" scripts/check-exports.sh build/lib/libtc.so
  run_criterion "Criterion suites" build/bin/tc_tests
else
  echo "build failed"
  failed=$((failed + 1))
fi

note "build (ASan + UBSan)"
if scripts/build.sh build-asan -DTC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; then
  # Plugins are dlopen'd into an ASan host; leak checks stay on, dlclose'd frames are kept.
  # No Vulkan ICD here: lavapipe's queue thread never signals its fence inside an ASan process
  # forked by Criterion (seen with Mesa 22.3), so the vulkan tests skip themselves in this run;
  # they run in the normal build above and in `tc conformance vulkan` below.
  VK_DRIVER_FILES=/nonexistent.json VK_ICD_FILENAMES=/nonexistent.json \
    ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1 \
    run_criterion "Criterion suites under ASan+UBSan (vulkan skipped)" build-asan/bin/tc_tests
else
  echo "sanitizer build failed"
  failed=$((failed + 1))
fi

# Four threads calling one compiled function, under ThreadSanitizer: any race report fails it
# (TSan exits 66). Criterion cannot start under TSan, so this is a plain program.
tsan_check() {
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_SANITIZE_THREAD=ON >/dev/null &&
    cmake --build build-tsan --target tc_threads_check debug-eager inductor-cpu -j"$(nproc)" >/dev/null || return 1
  local log
  log=$(mktemp)
  TSAN_OPTIONS=halt_on_error=0 build-tsan/bin/tc_threads_check >"$log" 2>&1
  local rc=$?
  grep -E '^(ok|FAIL|skip)|ThreadSanitizer|passed' "$log" | head -20
  rm -f "$log"
  return $rc
}
step "threads under ThreadSanitizer" tsan_check

# `tc conformance BACKEND [--mode MODE]`, its cases counted.
conformance() {
  note "tc conformance $*"
  # Not `tee /dev/stderr`: when stderr is a file, reopening it truncates the log.
  local clog line
  clog=$(mktemp)
  build/bin/tc conformance "$@" >"$clog" 2>&1
  grep -v '^ok ' "$clog" | tail -20
  line=$(tail -1 "$clog")
  rm -f "$clog"
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    echo "tc conformance $*: no summary line"
    failed=$((failed + 1))
  fi
}

if [ -x build/bin/tc ]; then
  backends=$(build/bin/tc list-backends --json 2>/dev/null |
    python3 -c 'import json,sys; print(" ".join(b["name"] for b in json.load(sys.stdin) if b.get("available")))' 2>/dev/null)
  for b in eager $backends; do conformance "$b"; done
  # The modes that change what inductor-cpu and vulkan run (README's mode table); each case is
  # called twice there, so the second call replays what the first recorded.
  for b in inductor-cpu vulkan; do
    [[ " $backends " == *" $b "* ]] || continue
    for m in reduce-overhead max-autotune max-autotune-no-cudagraphs; do conformance "$b" --mode "$m"; done
  done
  # vulkan's f32 emulated in f64 (what auto chooses on a driver that flushes f32 subnormals, as
  # NVIDIA's): lavapipe keeps them natively, so both paths must pass the same cases (~1.5 min)
  [[ " $backends " == *" vulkan "* ]] && conformance vulkan -o vulkan.f32_subnormals=emulate
  # inductor-cpu's fused attention kernel (cpu.attention=fused; unfused is the default)
  [[ " $backends " == *" inductor-cpu "* ]] && conformance inductor-cpu -o cpu.attention=fused
  # inductor-cpu's f32 matmuls the other way than auto takes them here (auto: the generated GEMM
  # on AVX-512 hosts, OpenBLAS elsewhere; TC_LOGS=init says which)
  if [[ " $backends " == *" inductor-cpu "* ]]; then
    if TC_LOGS=init build/bin/tc run mlp --backend inductor-cpu --size test --iters 1 2>&1 | grep -q 'as the generated GEMM'; then
      conformance inductor-cpu -o cpu.blas=openblas
    else
      conformance inductor-cpu -o cpu.blas=generated
    fi
  fi
fi

if [ -x build/bin/tc ]; then
  step "tc ab: table, --json, --bisect, --html rendered in Chromium" tests/ab_check.sh build
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
