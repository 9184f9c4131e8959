#!/usr/bin/env bash
# The main job: installs what is missing, builds tc into build/, then runs every bundled model
# on every available backend with `tc run` and prints a table of first-call times, median
# call times and output checksums (the checksums of one model should agree across backends);
# it ends with `tc ab`, which compares every backend's output with the reference interpreter's
# element by element, times them, and writes the HTML report (build/ab-report.html).
#
#   scripts/main.sh [--size test|cpu|gpu] [--iters N]
#
# Sizes: test (tiny shapes: a minute in all; the default), cpu (BENCHMARKS.md's CPU shapes; the
# reference interpreter, debug-eager, then takes minutes per model), gpu. Without --iters each
# run times up to 20 calls within about 2 s. TC_BUILD_DIR picks another build folder than build/.
set -u
cd "$(dirname "$0")/.."

size=test
iters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=${2:?--size needs a value}; shift 2 ;;
    --iters) iters=(--iters "${2:?--iters needs a value}"); shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "main.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

scripts/deps.sh || { echo "main.sh: installing dependencies failed" >&2; exit 1; }
dir=${TC_BUILD_DIR:-build}
scripts/build.sh "$dir" || { echo "main.sh: the build failed" >&2; exit 1; }
tc=$dir/bin/tc

# Names from the JSON listings: one object per line, its own "name" first.
json_names() { sed -n 's/^[^"]*"name": "\([^"]*\)".*/\1/p'; }
backends=$("$tc" list-backends --json | grep '"available": true' | json_names)
models=$("$tc" models --json | json_names)
if [ -z "$backends" ]; then
  echo "main.sh: no backend is available:" >&2
  "$tc" list-backends >&2
  exit 1
fi

echo
echo "tc run, size $size (backends: $(echo $backends))"
printf '%-12s %-14s %12s %12s %14s  %s\n' model backend "first call" median figure "checksum (sum, abs)"
status=0
for m in $models; do
  for b in $backends; do
    out=$("$tc" run "$m" --backend "$b" --size "$size" "${iters[@]}" 2>&1)
    if [ $? -ne 0 ]; then
      printf '%-12s %-14s FAILED: %s\n' "$m" "$b" "$(echo "$out" | tail -n 1)"
      status=1
      continue
    fi
    first=$(echo "$out" | sed -n 's/^first call *\([0-9.]* [a-z]*\).*/\1/p')
    median=$(echo "$out" | sed -n 's/^median *\([0-9.]* [a-z]*\).*/\1/p')
    figure=$(echo "$out" | sed -n 's/^figure *//p')
    checksum=$(echo "$out" | sed -n 's/^checksum *sum \([^ ]*\) *abs \([^ ]*\).*/\1, \2/p')
    printf '%-12s %-14s %12s %12s %14s  %s\n' "$m" "$b" "$first" "$median" "${figure:--}" "$checksum"
  done
done

echo
echo "tc ab, size $size: every bundled model on every available backend against debug-eager"
"$tc" ab all --backends "$(echo $backends | tr ' ' ',')" --size "$size" "${iters[@]}" --cold --kernel-sources \
  --html "$dir/ab-report.html" ||
  status=1
exit $status
