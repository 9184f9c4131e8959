#!/usr/bin/env bash
# On the GPU machine: inductor-cuda's generated softmax row kernel (a warp per row, rows of 1024)
# of session 10 (softmax_tc_module_s10.cu) and of session 11 (softmax_tc_module.cu: the alignment
# test outside the row loop, each float4's 4 components combined in pairs before the max and sum
# accumulators), and variants, each compiled as the plugin compiles, timed by rows_tc_main.cu:
#   s10            session 10's kernel
#   s10_pairs      session 10's with the components in pairs (the max and the sum)
#   s10_maxpairs   session 10's with the max's components in pairs only
#   s11            session 11's kernel
#   s11_cs         session 11's with x loaded by __ldcs and y stored by __stcs
#   s11_chains     session 11's with the components one chain again (the alignment test hoisted only)
# Session 11 (bench/results/gpu-2026-12-02-s11-call6-softmax_tc.txt), cudaMemcpy 4091 / 4073 GB/s:
# s10 3905 / 3890, s10_pairs 3894 / 3889, s10_maxpairs 3890 / 3886, s11 3879 / 3868,
# s11_cs 3536 / 3544, s11_chains 3892 / 3905: so a warp per row keeps one chain (codegen_rows.c),
# and no streaming hints. softmax_tc_module.cu is session 11's first version (pairs), as measured.
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
old=bench/probes/softmax_tc_module_s10.cu new=bench/probes/softmax_tc_module.cu
maxpairs='/v1 = tc_max_f32(v1, t0.x);/c\        v1 = tc_max_f32(v1, tc_max_f32(tc_max_f32(t0.x, t0.y), tc_max_f32(t0.z, t0.w)));
/v1 = tc_max_f32(v1, t0.[yzw]);/d'
sumpairs='/v6 += v4_[012];/d; /v6 += v4_3;/c\        v6 = v6 + ((v4_0 + v4_1) + (v4_2 + v4_3));'
cs='s/\*(const float4 \*)&in_x\[a0 + r\]/__ldcs((const float4 *)\&in_x[a0 + r])/; s/\*(float4 \*)&out_y\[a9 + r\] = w9;/__stcs((float4 *)\&out_y[a9 + r], w9);/'
chains='s/v1 = tc_max_f32(v1, (tc_max_f32((tc_max_f32(t0.x, t0.y)), (tc_max_f32(t0.z, t0.w)))));/v1 = tc_max_f32(v1, t0.x); v1 = tc_max_f32(v1, t0.y); v1 = tc_max_f32(v1, t0.z); v1 = tc_max_f32(v1, t0.w);/; s/v6 = v6 + ((v4_0 + v4_1) + (v4_2 + v4_3));/v6 += v4_0; v6 += v4_1; v6 += v4_2; v6 += v4_3;/'
. bench/probes/rows_tc_lib.sh
rows_tc_mk s10 $old k_softmax ''
rows_tc_mk s10_pairs $old k_softmax "$maxpairs
$sumpairs"
rows_tc_mk s10_maxpairs $old k_softmax "$maxpairs"
rows_tc_mk s11 $new k_softmax ''
rows_tc_mk s11_cs $new k_softmax "$cs"
rows_tc_mk s11_chains $new k_softmax "$chains"
for v in s10_pairs s10_maxpairs s11_cs s11_chains; do
  cmp -s <(sed "s/$v(/K(/" $W/$v.cu) <(sed "s/${v%_*}(/K(/" $W/${v%_*}.cu) && echo "$v: the edit did not apply"
done
rows_tc_run SOFTMAX s10 s10_pairs s10_maxpairs s11 s11_cs s11_chains
rm -rf $W
