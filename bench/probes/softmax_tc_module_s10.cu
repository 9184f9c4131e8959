/* bench/probes/softmax_tc_module_s10.cu: inductor-cuda's module for tests/test_inductor_cuda.c's softmax_row_kernel list
 * (rows of 1024, as softmax's: a warp per row), dumped with TC_TEST_DUMP_CUDA=1 on 2026-12-02 from the tree of session 10
 * (alignment test inside the row loop, reductions one chain a thread); softmax_tc.sh makes variants of it. The kernel
 * only: rows_tc_lib.sh puts the tree's prelude in front of it, as codegen_module.c does. */
/* softmax: loop over (s0), 3 inner loops */
/* warp per row: a block of 4 warps on 4 rows at a time (grid-stride over row groups), reductions by warp shuffles only; the row in registers when aligned, else scalar */
#define TC_BLOCK 128
#define TC_WARPS 4
#define TC_RT 32
extern "C" __global__ void __launch_bounds__(128) k_softmax(const tc_cu_args a) {
  tc_after_previous_kernel();
  const float *__restrict__ in_x = (const float *)a.buf[0];
  float *__restrict__ out_y = (float *)a.buf[1];
  const long long s0 = a.s[0];
  const long long n0 = s0;
  const long long rows = 1 * n0;
  const long long N = 1024LL; /* the inner (reduction) extent */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rt = lane; /* this thread's place in its row's warp */
  (void)lane; (void)warp;
  const bool vec_ok = true
      && (unsigned long long)in_x % 16 == 0 && (1024LL) % 4 == 0
      && (unsigned long long)in_x % 16 == 0 && (1024LL) % 4 == 0
      && (unsigned long long)out_y % 16 == 0 && (1024LL) % 4 == 0
      && (unsigned long long)out_y % 16 == 0 && (1024LL) % 4 == 0
      && (unsigned long long)out_y % 16 == 0 && (1024LL) % 4 == 0;
  for (long long row = (long long)blockIdx.x * TC_WARPS + warp; row < rows; row += (long long)gridDim.x * TC_WARPS) {
    long long rem = row;
    const long long i0 = rem;
    if (vec_ok) { /* the row in registers, float4 accesses */
      float4 c0[8]; /* op 0's float4s, kept for later inner loops */
      float4 c5[8]; /* op 5's float4s, kept for later inner loops */
      /* inner loop 0 */
      float v1 = -INFINITY;
      const long long a0 = i0*1024LL;
      #pragma unroll
      for (int it = 0; it < 8; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t0 = *(const float4 *)&in_x[a0 + r];
        c0[it] = t0;
        v1 = tc_max_f32(v1, t0.x);
        v1 = tc_max_f32(v1, t0.y);
        v1 = tc_max_f32(v1, t0.z);
        v1 = tc_max_f32(v1, t0.w);
      }
      { /* the row's reduce_max: warp butterfly (one warp per row), lane 0's to every lane */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v1 = tc_max_f32(v1, tc_shfl_xor(v1, o));
        v1 = __shfl_sync(0xffffffffu, v1, 0);
      }
      /* inner loop 1 */
      float v6 = 0.0f;
      #pragma unroll
      for (int it = 0; it < 8; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t2 = c0[it]; /* loaded in inner loop 0: from registers */
        const float v3_0 = t2.x - v1;
        const float v4_0 = tc_exp_f32(v3_0);
        v6 += v4_0;
        const float v3_1 = t2.y - v1;
        const float v4_1 = tc_exp_f32(v3_1);
        v6 += v4_1;
        const float v3_2 = t2.z - v1;
        const float v4_2 = tc_exp_f32(v3_2);
        v6 += v4_2;
        const float v3_3 = t2.w - v1;
        const float v4_3 = tc_exp_f32(v3_3);
        v6 += v4_3;
        const float4 w5 = make_float4(v4_0, v4_1, v4_2, v4_3);
        c5[it] = w5;
        /* out_y: not stored, a later inner loop overwrites it */
      }
      { /* the row's reduce_sum: warp butterfly (one warp per row), lane 0's to every lane */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v6 = v6 + tc_shfl_xor(v6, o);
        v6 = __shfl_sync(0xffffffffu, v6, 0);
      }
      /* inner loop 2 */
      const long long a9 = i0*1024LL;
      #pragma unroll
      for (int it = 0; it < 8; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t7 = c5[it]; /* stored in inner loop 1: from registers */
        const float v8_0 = t7.x / v6;
        const float v8_1 = t7.y / v6;
        const float v8_2 = t7.z / v6;
        const float v8_3 = t7.w / v6;
        const float4 w9 = make_float4(v8_0, v8_1, v8_2, v8_3);
        *(float4 *)&out_y[a9 + r] = w9;
      }
    } else { /* scalar: unaligned views */
      /* inner loop 0 */
      float v1 = -INFINITY;
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j0 = i0*1024LL + r;
        const float v0 = in_x[j0];
        v1 = tc_max_f32(v1, v0);
      }
      { /* the row's reduce_max: warp butterfly (one warp per row), lane 0's to every lane */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v1 = tc_max_f32(v1, tc_shfl_xor(v1, o));
        v1 = __shfl_sync(0xffffffffu, v1, 0);
      }
      /* inner loop 1 */
      float v6 = 0.0f;
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j2 = i0*1024LL + r;
        const float v2 = in_x[j2];
        const float v3 = v2 - v1;
        const float v4 = tc_exp_f32(v3);
        const long long j5 = i0*1024LL + r;
        out_y[j5] = (float)v4;
        v6 += v4;
      }
      { /* the row's reduce_sum: warp butterfly (one warp per row), lane 0's to every lane */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v6 = v6 + tc_shfl_xor(v6, o);
        v6 = __shfl_sync(0xffffffffu, v6, 0);
      }
      __syncwarp(); /* later ops read what this loop stored (this warp's row) */
      /* inner loop 2 */
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j7 = i0*1024LL + r;
        const float v7 = out_y[j7];
        const float v8 = v7 / v6;
        const long long j9 = i0*1024LL + r;
        out_y[j9] = (float)v8;
      }
    }
  }
}
#undef TC_BLOCK
#undef TC_WARPS
#undef TC_RT
