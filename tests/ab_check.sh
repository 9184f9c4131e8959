#!/usr/bin/env bash
# `tc ab` end to end, a step of scripts/test.sh: mlp on every available backend (one table row
# each), --json that parses with one result per backend, --bisect naming the kernel a
# deliberately wrong backend (test-wrong-exp: exp off by a relative 1e-3) gets wrong, a user's
# model from a shared object (--model-lib), and the
# --html page of every bundled model rendered in headless Chromium: the screenshot must show a
# drawn page (tests/png_nonblank.py), so a broken page fails CI. Without Chromium (scripts/deps.sh
# could not install it) the rendering is skipped, saying so.
#   tests/ab_check.sh [BUILD_DIR]   (default build)
set -u
cd "$(dirname "$0")/.."
dir=${1:-build}
tc=$dir/bin/tc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "ab_check: FAIL: $*"; fail=1; }

backends=$("$tc" list-backends --json |
  python3 -c 'import json,sys; print(",".join(b["name"] for b in json.load(sys.stdin) if b.get("available")))')
echo "ab_check: backends $backends"

# 1. The table: one row per backend, each passing.
"$tc" ab mlp --backends "$backends" --iters 5 >"$work/table.txt" 2>&1 || bad "tc ab mlp exited $? ($(tail -1 "$work/table.txt"))"
cat "$work/table.txt"
for b in ${backends//,/ }; do
  grep -qE "^$b +(ref|pass) " "$work/table.txt" || bad "no passing row for $b in the table"
done

# 2. --json parses, one result per backend; with --cold, inductor-cpu's first compile is not a
#    disk cache hit and its second one is.
"$tc" ab mlp --backends "$backends" --iters 5 --cold --json >"$work/ab.json" || bad "tc ab mlp --json exited $?"
python3 - "$work/ab.json" "$backends" <<'PY' || bad "the JSON report does not hold one passing result per backend"
import json, sys
d = json.load(open(sys.argv[1]))
names = [r["backend"] for r in d["models"][0]["results"]]
assert names == sys.argv[2].split(","), names
assert all(r["result"] in ("ref", "pass") and r["median_s"] > 0 for r in d["models"][0]["results"])
for r in d["models"][0]["results"]:
    if r["backend"] == "inductor-cpu":
        assert not r["cold_cache_hit"] and r["warm_cache_hit"], r
print("ab_check: JSON parses:", ", ".join(f'{r["backend"]} {r["result"]}' for r in d["models"][0]["results"]))
PY

# 3. --bisect names the softmax kernel of attn_block on the backend whose exp is wrong.
TC_PLUGIN_PATH=$PWD/$dir/test-plugins-ab "$tc" ab attn_block --backends test-wrong-exp --bisect --iters 2 \
  >"$work/bisect.txt" 2>&1
rc=$?
grep -E '^(test-wrong-exp|bisect)' "$work/bisect.txt"
[ $rc -eq 1 ] || bad "tc ab with a wrong backend exited $rc (expected 1: a disagreement)"
grep -qE '^bisect test-wrong-exp against debug-eager: kernel [0-9]+ of [0-9]+, softmax, diverges' "$work/bisect.txt" ||
  bad "--bisect did not name the softmax kernel"

# 4. A user's model from a shared object (--model-lib), built here against the public header.
cat >"$work/user_model.c" <<'C'
#include "tc/tc.h"
tc_tensor *user_model(tc_tensor *x, tc_tensor *w) { return tc_silu(tc_matmul(x, w)); }
C
if cc -shared -fPIC -Icore/include -Iplugin-api "$work/user_model.c" -o "$work/libuser_model.so" -L"$dir/lib" -ltc; then
  "$tc" ab --model-lib "$work/libuser_model.so" --fn user_model --shapes 16x32,32x8 --backends "$backends" --iters 3 \
    >"$work/lib.txt" 2>&1 || bad "tc ab --model-lib exited $? ($(tail -1 "$work/lib.txt"))"
  grep -q '^tc ab user_model ' "$work/lib.txt" || bad "tc ab --model-lib printed no table"
else
  bad "could not build the shared object for --model-lib"
fi

# 5. The HTML page of every bundled model, rendered.
"$tc" ab all --backends "$backends" --iters 3 --kernel-sources --html "$work/report.html" >/dev/null 2>&1 || bad "tc ab all --html exited $?"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "ab_check: SKIP rendering: chromium is not installed (scripts/deps.sh could not install it); the page was written but not looked at"
elif [ -s "$work/report.html" ]; then
  # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1600 \
    --screenshot="$work/report.png" "file://$work/report.html" >"$work/chrome.log" 2>&1
  if [ -s "$work/report.png" ]; then
    python3 tests/png_nonblank.py "$work/report.png" || bad "the report rendered blank"
  else
    tail -5 "$work/chrome.log"
    bad "chromium took no screenshot"
  fi
fi
[ $fail -eq 0 ] && echo "ab_check: ok"
exit $fail
