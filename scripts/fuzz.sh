#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) into build-fuzz and runs each
# for RUNS executions (default 1000000), seeded from tests/fuzz/corpus/<target> plus, for the
# plugin file check, the real plugins of the build. Ends with "N passed, N failed"; a crash
# leaves its input as build-fuzz/crash-* and fails that target. Not part of .ci/run (about
# eight minutes on two cores); its counts are in docs/reliability.md.
set -u
cd "$(dirname "$0")/.."
runs=${1:-1000000}
command -v clang >/dev/null || { scripts/deps.sh && apt-get install -y -qq clang >/dev/null; }
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_FUZZ=ON -DTC_BUILD_TESTS=OFF >/dev/null &&
  cmake --build build-fuzz -j"$(nproc)" >/dev/null || { echo "fuzz build failed"; echo "0 passed, 1 failed"; exit 1; }
passed=0 failed=0
for t in ${FUZZ_TARGETS:-fuzz_options fuzz_plugin_file fuzz_cache_entry fuzz_graph_compile}; do
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  cp tests/fuzz/corpus/$t/* "$work"/
  [ "$t" = fuzz_plugin_file ] && cp build-fuzz/lib/tc/plugins/*.so "$work"/ 2>/dev/null
  start=$(date +%s)
  # fuzz_graph_compile's process grows past libFuzzer's default 2 GB under ASan (its quarantine and
  # allocator caches over hundreds of thousands of compiles); the same programs without ASan hold
  # a flat resident size (20,000 of them: 3 MB), so the limit is raised rather than the runs cut.
  rss=2048
  [ "$t" = fuzz_graph_compile ] && rss=6144
  if (cd build-fuzz && ./bin/$t -runs="$runs" -max_len=65536 -rss_limit_mb=$rss "corpus/$t" >"$t.log" 2>&1); then
    echo "$t: $(grep -o 'Done [0-9]* runs' build-fuzz/$t.log) in $(($(date +%s) - start)) s, no crash or sanitizer report"
    passed=$((passed + 1))
  else
    echo "$t: FAILED (build-fuzz/$t.log):"
    grep -E 'ERROR|SUMMARY|Test unit written' build-fuzz/$t.log | head -5
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
