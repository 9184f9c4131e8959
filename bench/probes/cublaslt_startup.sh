#!/usr/bin/env bash
# On the GPU machine: builds cublaslt_startup.c against the toolkit's headers and runs it: the
# phases of a new process's first cuBLASLt GEMMs without and then with the algorithms cached in a
# file (three processes each), and the exit status of 10 short processes per thread start-up
# (139: SIGSEGV at exit).
set -u
cd "$(dirname "$0")/../.."
inc=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../include
W=$(mktemp -d)
cc -O2 -I"$inc" bench/probes/cublaslt_startup.c -o $W/p -ldl -lpthread || exit 1
for i in 1 2 3; do
  rm -f $W/algos
  echo "-- heuristic (no file), process $i"; $W/p timing $W/algos
done
for i in 1 2 3; do echo "-- algorithms from the file, process $i"; $W/p timing $W/algos; done
for m in exit-thread exit-after-create; do
  echo -n "$m exit statuses: "
  for i in $(seq 10); do timeout 30 $W/p $m >/dev/null 2>&1; echo -n "$? "; done
  echo
done
rm -rf $W
