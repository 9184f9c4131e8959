#!/usr/bin/env bash
# On the GPU machine: builds cublaslt_split.cu with nvcc for sm_90 and runs it: attn_block's four
# linear layers whole, and split in two (by columns, by rows) on two streams side by side.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
nvcc -O2 -arch=sm_90 bench/probes/cublaslt_split.cu -o $W/p -lcublasLt || exit 1
$W/p
rm -rf $W
