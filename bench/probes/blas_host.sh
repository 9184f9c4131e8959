#!/usr/bin/env bash
# Builds blas_host.c and times OpenBLAS (the system's), BLIS and oneDNN side by side on the sgemms
# of mlp and attn_block (CPU shapes), THREADS threads, ROUNDS rounds, on the two fastest cores
# (bench/probes/core_speed.c; TC_HOST_CORES=a,b chooses, none leaves them unpinned). BLIS and
# oneDNN from Debian 12's libblis4-openmp 0.9.0 and libdnnl2 2.6.3 (with ocl-icd-libopencl1, which
# libdnnl needs loaded): by default the .so files in BLAS_DIR (.dev/blas), extracted from the
# .debs with `apt-get download` and `dpkg-deb -x`, so they travel to the GPU machine, which has
# no apt; else the installed ones. `blas_host.sh --fetch` makes .dev/blas here (apt-get download,
# no install; carry .dev/blas to the GPU machine). Usage: bench/probes/blas_host.sh [threads [rounds]]
set -u
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --fetch ]; then
  set -e
  w=$(mktemp -d); mkdir -p .dev/blas
  (cd "$w" && apt-get download libblis4-openmp libdnnl2 ocl-icd-libopencl1 && for d in *.deb; do dpkg-deb -x "$d" x; done)
  l=$w/x/usr/lib/x86_64-linux-gnu
  cp -L "$l/blis-openmp/libblis.so.4" "$l/libdnnl.so.2" "$l/libOpenCL.so.1" .dev/blas/
  rm -rf "$w"; du -sh .dev/blas; exit 0
fi
T=${1:-2}; R=${2:-15}
D=${BLAS_DIR:-$PWD/.dev/blas}
export LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}
inc="-Ibench -Ibench/probes -Icore/include -Iplugin-api -Iexamples/include"
cc -O2 -fopenmp $inc bench/probes/blas_host.c bench/probes/probe_bench_stubs.c bench/bench_peak.c -o /tmp/blas_host -ldl -lm || exit 1
cores=${TC_HOST_CORES:-}
if [ -z "$cores" ]; then
  cc -O2 -fopenmp $inc bench/probes/core_speed.c bench/probes/probe_bench_stubs.c bench/bench_peak.c -o /tmp/core_speed -lm &&
    /tmp/core_speed "$T" >/tmp/core_speed.txt && cores=$(sed -n 's/^fastest: //p' /tmp/core_speed.txt)
fi
pin=(); [ -n "$cores" ] && [ "$cores" != none ] && pin=(taskset -c "$cores")
lscpu | grep -E "Model name"; echo "cores ${cores:-unpinned}"
blis=$D/libblis.so.4; [ -f "$blis" ] || blis=/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4
dnnl=$D/libdnnl.so.2; [ -f "$dnnl" ] || dnnl=libdnnl.so.2
OMP_PROC_BIND=false "${pin[@]}" /tmp/blas_host "$T" "$R" openblas=cblas:libopenblas.so.0 ob-rows=cblas-rows:libopenblas.so.0 blis=cblas:"$blis" onednn=dnnl:"$dnnl"
