#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's generated ln_gelu row kernel (ln_gelu_tc_module.cu) and
# variants, each compiled as the plugin compiles (--fmad=false), timed by rows_tc_main.cu:
#   v_generated  as generated
#   v_cs         x loaded with __ldcs and y stored with __stcs (streaming: evict first)
#   v_nowait     without griddepcontrol.wait at the start (no programmatic launch here anyway)
#   v_pairs      a thread's 4 elements of a float4 summed in pairs, not one chain (the module
#                does so since session 11: then the same as v_generated)
#   v_novec      without the scalar fallback (the vec_ok branch only)
#   v_cs_pairs   v_cs and v_pairs;  v_all  all of them
# Session 11, on the module before its changes (bench/results/gpu-2026-12-02-s11-call4-ln_gelu_tc.txt):
# generated 3600 GB/s, cs 3687, nowait 3632, pairs 3700, novec 3816, cs_pairs 3824, all 3865;
# cudaMemcpy 4086.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
src=bench/probes/ln_gelu_tc_module.cu
cs='s/\*(const float4 \*)&in_x\[a0 + r\]/__ldcs((const float4 *)\&in_x[a0 + r])/; s/\*(float4 \*)&out_y\[a28 + r\] = w28;/__stcs((float4 *)\&out_y[a28 + r], w28);/'
nowait='s/^  tc_after_previous_kernel();//'
pairs='/v1 += t0.x;/c\        v1 += (t0.x + t0.y) + (t0.z + t0.w);
/v1 += t0.[yzw];/d
/v7 += v6_0;/d; /v7 += v6_1;/d; /v7 += v6_2;/d; /v7 += v6_3;/c\        v7 += (v6_0 + v6_1) + (v6_2 + v6_3);'
novec='s/if (vec_ok) {/if (true) {/'
. bench/probes/rows_tc_lib.sh
mk() { rows_tc_mk $1 $src k_layer_norm_gelu "$2"; }
mk v_generated ''
mk v_cs "$cs"
mk v_nowait "$nowait"
mk v_pairs "$pairs"
mk v_novec "$novec"
mk v_cs_pairs "$cs
$pairs"
mk v_all "$cs
$pairs
$nowait
$novec"
rows_tc_run LN_GELU v_generated v_cs v_nowait v_pairs v_novec v_cs_pairs v_all
rm -rf $W
