#!/usr/bin/env bash
# Checks that libtc exports exactly the functions core/include/tc/tc.h declares: fails naming
# every dynamic symbol that is not tc_* (an internal leaking out), every exported tc_* that
# tc.h does not declare (an internal helper with a public-looking name), and every function
# tc.h declares that is not exported (a declaration without TC_API).
#   scripts/check-exports.sh [LIB]   LIB defaults to build/lib/libtc.so
set -u
cd "$(dirname "$0")/.."
lib=${1:-build/lib/libtc.so}
header=core/include/tc/tc.h
[ -e "$lib" ] || { echo "check-exports: $lib not found (build first)"; exit 1; }

# Declarations start at the beginning of a line with a type; the name is the tc_* before "(".
declared=$(grep -E '^[A-Za-z_]' "$header" | grep -vE '^(typedef|#)' |
  grep -oE '\btc_[a-z0-9_]+\(' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)
[ -n "$declared" ] || { echo "check-exports: no declarations found in $header"; exit 1; }

bad=0
for s in $exported; do
  if [[ $s != tc_* ]]; then
    echo "check-exports: $lib exports '$s', which is not part of the public API (tc_*)"
    bad=1
  elif ! grep -qx "$s" <<<"$declared"; then
    echo "check-exports: $lib exports '$s', which $header does not declare"
    bad=1
  fi
done
for s in $declared; do
  if ! grep -qx "$s" <<<"$exported"; then
    echo "check-exports: $header declares '$s', which $lib does not export (TC_API missing?)"
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "check-exports: $lib exports the $(wc -l <<<"$declared") functions of $header, nothing else"
exit $bad
