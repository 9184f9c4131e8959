#!/usr/bin/env bash
# On the GPU machine: builds gemm_tf32x3.cu with nvcc for sm_90 and runs it: cuBLAS SGEMM against
# 3xTF32 tensor-core GEMM variants at attn_block's and mlp's shapes (time, TF/s, worst error
# against a double product), and the special-value check.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
nvcc -O3 -arch=sm_90 -Xptxas -warn-spills bench/probes/gemm_tf32x3.cu -o $W/p -lcublas || exit 1
$W/p
rm -rf $W
