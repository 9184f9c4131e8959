#!/usr/bin/env bash
# On the GPU machine: builds cublaslt_configs.cu with nvcc for sm_90 and runs it: at attn_block's
# four linear layers, cuBLASLt's heuristic candidates and then every configuration it accepts
# (algorithm x tile x split-K x CTA swizzle x stages), each timed; the heuristic's first against
# the best of all.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
nvcc -O2 -arch=sm_90 bench/probes/cublaslt_configs.cu -o $W/p -lcublasLt || exit 1
$W/p
rm -rf $W
