#!/usr/bin/env bash
# Builds and runs erf_vec_host.c with a unit's flags (-O3 -funroll-loops -march=native, 512-bit
# vectors where the CPU has them), on one core (TC_HOST_CORE, default 0). Usage:
# bench/probes/erf_vec_host.sh
set -eu
cd "$(dirname "$0")/../.."
gcc -O3 -funroll-loops -march=native -mprefer-vector-width=512 -ffp-contract=off -fno-trapping-math -fno-math-errno \
  -fopenmp-simd -Iplugin-api bench/probes/erf_vec_host.c -o /tmp/erf_vec_host -lm
taskset -c "${TC_HOST_CORE:-0}" /tmp/erf_vec_host
