/* bench/probes/ln_gelu_tc_module.cu: inductor-cuda's module for tests/test_inductor_cuda.c's layer_norm_gelu_rows
 * list (rows of 4096, as ln_gelu's), dumped with TC_TEST_DUMP_CUDA=1 on 2026-12-02 after session 11's changes
 * (alignment test outside the row loop, reductions' components in pairs); ln_gelu_tc.sh makes variants of it.
 * The module before them: bench/results/gpu-2026-12-02-s11-call4-ln_gelu_tc.txt has its figures. The kernel
 * only: rows_tc_lib.sh puts the tree's prelude in front of it, as codegen_module.c does. */
/* layer_norm_gelu: loop over (s0), 3 inner loops */
/* one block of 256 threads per row (grid-stride over rows); the row in registers across inner loops when aligned, else scalar */
#define TC_BLOCK 256
#define TC_WARPS 8
#define TC_RT 256
extern "C" __global__ void __launch_bounds__(256) k_layer_norm_gelu(const tc_cu_args a) {
  tc_after_previous_kernel();
  const float *__restrict__ in_x = (const float *)a.buf[0];
  const float *__restrict__ in_g = (const float *)a.buf[1];
  const float *__restrict__ in_b = (const float *)a.buf[2];
  float *__restrict__ out_y = (float *)a.buf[3];
  const long long s0 = a.s[0];
  const long long n0 = s0;
  const long long rows = 1 * n0;
  const long long N = 4096LL; /* the inner (reduction) extent */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rt = tid; /* this thread's place in its row's block */
  __shared__ float red1[TC_WARPS];
  __shared__ float red7[TC_WARPS];
  const bool vec_ok = true
      && (unsigned long long)in_x % 16 == 0 && (4096LL) % 4 == 0
      && (unsigned long long)in_x % 16 == 0 && (4096LL) % 4 == 0
      && (unsigned long long)in_x % 16 == 0 && (4096LL) % 4 == 0
      && (unsigned long long)in_b % 16 == 0
      && (unsigned long long)in_g % 16 == 0
      && (unsigned long long)out_y % 16 == 0 && (4096LL) % 4 == 0;
  if (vec_ok) { /* every row in registers, float4 accesses */
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
      long long rem = row;
      const long long i0 = rem;
      float4 c0[4]; /* op 0's float4s, kept for later inner loops */
      /* inner loop 0 */
      float v1 = 0.0f;
      const long long a0 = i0*4096LL;
      #pragma unroll
      for (int it = 0; it < 4; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t0 = *(const float4 *)&in_x[a0 + r];
        c0[it] = t0;
        v1 = v1 + ((t0.x + t0.y) + (t0.z + t0.w));
      }
      { /* the row's reduce_sum: warp butterfly, then the warps' partials in order */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v1 = v1 + tc_shfl_xor(v1, o);
        if (lane == 0) red1[warp] = v1;
        __syncthreads();
        v1 = red1[0];
        for (int w = 1; w < TC_WARPS; w++) v1 = v1 + red1[w];
        __syncthreads(); /* red is reused by the next row */
      }
      const float v2 = 4096.0f;
      const float v3 = v1 / v2;
      /* inner loop 1 */
      float v7 = 0.0f;
      #pragma unroll
      for (int it = 0; it < 4; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t4 = c0[it]; /* loaded in inner loop 0: from registers */
        const float v5_0 = t4.x - v3;
        const float v6_0 = v5_0 * v5_0;
        const float v5_1 = t4.y - v3;
        const float v6_1 = v5_1 * v5_1;
        const float v5_2 = t4.z - v3;
        const float v6_2 = v5_2 * v5_2;
        const float v5_3 = t4.w - v3;
        const float v6_3 = v5_3 * v5_3;
        v7 = v7 + ((v6_0 + v6_1) + (v6_2 + v6_3));
      }
      { /* the row's reduce_sum: warp butterfly, then the warps' partials in order */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v7 = v7 + tc_shfl_xor(v7, o);
        if (lane == 0) red7[warp] = v7;
        __syncthreads();
        v7 = red7[0];
        for (int w = 1; w < TC_WARPS; w++) v7 = v7 + red7[w];
        __syncthreads(); /* red is reused by the next row */
      }
      const float v8 = 1e-05f;
      const float v9 = 4096.0f;
      const float v10 = v7 / v9;
      const float v11 = v10 + v8;
      const float v12 = (float)1 / sqrtf(v11);
      /* inner loop 2 */
      const long long a14 = 0;
      const long long a15 = 0;
      const long long a28 = i0*4096LL;
      #pragma unroll
      for (int it = 0; it < 4; it++) { /* the slots of this thread: the same in every loop */
        const long long r = 4 * (rt + (long long)it * TC_RT);
        const float4 t13 = c0[it]; /* loaded in inner loop 0: from registers */
        const float4 t14 = *(const float4 *)&in_b[a14 + r];
        const float4 t15 = *(const float4 *)&in_g[a15 + r];
        const float v16_0 = t13.x - v3;
        const float v17_0 = v16_0 * v12;
        const float v18_0 = v17_0 * t15.x;
        const float v19_0 = v18_0 + t14.x;
        const float v20_0 = 0.707106781f;
        const float v21_0 = v19_0 * v20_0;
        const float v22_0 = tc_erf_f32(v21_0);
        const float v23_0 = 0.5f;
        const float v24_0 = 1.0f;
        const float v25_0 = v22_0 + v24_0;
        const float v26_0 = v19_0 * v25_0;
        const float v27_0 = v26_0 * v23_0;
        const float v16_1 = t13.y - v3;
        const float v17_1 = v16_1 * v12;
        const float v18_1 = v17_1 * t15.y;
        const float v19_1 = v18_1 + t14.y;
        const float v20_1 = 0.707106781f;
        const float v21_1 = v19_1 * v20_1;
        const float v22_1 = tc_erf_f32(v21_1);
        const float v23_1 = 0.5f;
        const float v24_1 = 1.0f;
        const float v25_1 = v22_1 + v24_1;
        const float v26_1 = v19_1 * v25_1;
        const float v27_1 = v26_1 * v23_1;
        const float v16_2 = t13.z - v3;
        const float v17_2 = v16_2 * v12;
        const float v18_2 = v17_2 * t15.z;
        const float v19_2 = v18_2 + t14.z;
        const float v20_2 = 0.707106781f;
        const float v21_2 = v19_2 * v20_2;
        const float v22_2 = tc_erf_f32(v21_2);
        const float v23_2 = 0.5f;
        const float v24_2 = 1.0f;
        const float v25_2 = v22_2 + v24_2;
        const float v26_2 = v19_2 * v25_2;
        const float v27_2 = v26_2 * v23_2;
        const float v16_3 = t13.w - v3;
        const float v17_3 = v16_3 * v12;
        const float v18_3 = v17_3 * t15.w;
        const float v19_3 = v18_3 + t14.w;
        const float v20_3 = 0.707106781f;
        const float v21_3 = v19_3 * v20_3;
        const float v22_3 = tc_erf_f32(v21_3);
        const float v23_3 = 0.5f;
        const float v24_3 = 1.0f;
        const float v25_3 = v22_3 + v24_3;
        const float v26_3 = v19_3 * v25_3;
        const float v27_3 = v26_3 * v23_3;
        const float4 w28 = make_float4(v27_0, v27_1, v27_2, v27_3);
        *(float4 *)&out_y[a28 + r] = w28;
      }
    }
  } else { /* scalar: unaligned views */
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
      long long rem = row;
      const long long i0 = rem;
      /* inner loop 0 */
      float v1 = 0.0f;
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j0 = i0*4096LL + r;
        const float v0 = in_x[j0];
        v1 += v0;
      }
      { /* the row's reduce_sum: warp butterfly, then the warps' partials in order */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v1 = v1 + tc_shfl_xor(v1, o);
        if (lane == 0) red1[warp] = v1;
        __syncthreads();
        v1 = red1[0];
        for (int w = 1; w < TC_WARPS; w++) v1 = v1 + red1[w];
        __syncthreads(); /* red is reused by the next row */
      }
      const float v2 = 4096.0f;
      const float v3 = v1 / v2;
      /* inner loop 1 */
      float v7 = 0.0f;
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j4 = i0*4096LL + r;
        const float v4 = in_x[j4];
        const float v5 = v4 - v3;
        const float v6 = v5 * v5;
        v7 += v6;
      }
      { /* the row's reduce_sum: warp butterfly, then the warps' partials in order */
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v7 = v7 + tc_shfl_xor(v7, o);
        if (lane == 0) red7[warp] = v7;
        __syncthreads();
        v7 = red7[0];
        for (int w = 1; w < TC_WARPS; w++) v7 = v7 + red7[w];
        __syncthreads(); /* red is reused by the next row */
      }
      const float v8 = 1e-05f;
      const float v9 = 4096.0f;
      const float v10 = v7 / v9;
      const float v11 = v10 + v8;
      const float v12 = (float)1 / sqrtf(v11);
      /* inner loop 2 */
      for (long long r = rt; r < N; r += TC_RT) {
        const long long j13 = i0*4096LL + r;
        const float v13 = in_x[j13];
        const long long j14 = r;
        const float v14 = in_b[j14];
        const long long j15 = r;
        const float v15 = in_g[j15];
        const float v16 = v13 - v3;
        const float v17 = v16 * v12;
        const float v18 = v17 * v15;
        const float v19 = v18 + v14;
        const float v20 = 0.707106781f;
        const float v21 = v19 * v20;
        const float v22 = tc_erf_f32(v21);
        const float v23 = 0.5f;
        const float v24 = 1.0f;
        const float v25 = v22 + v24;
        const float v26 = v19 * v25;
        const float v27 = v26 * v23;
        const long long j28 = i0*4096LL + r;
        out_y[j28] = (float)v27;
      }
    }
  }
}
#undef TC_BLOCK
#undef TC_WARPS
#undef TC_RT
