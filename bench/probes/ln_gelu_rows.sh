#!/usr/bin/env bash
# On the GPU machine: builds ln_gelu_rows.cu with nvcc for sm_90 and runs it: ln_gelu row-kernel
# shapes against cudaMemcpy and a copy kernel at 8192 x 4096.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
nvcc -O3 -arch=sm_90 -Xptxas -warn-spills bench/probes/ln_gelu_rows.cu -o $W/p  || exit 1
$W/p
rm -rf $W
