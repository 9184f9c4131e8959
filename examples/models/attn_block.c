/* attn_block.c — a GPT-2 block, exactly as BENCHMARKS.md writes it (pre-LN, biases everywhere,
 * 12 heads, causal mask):
 *   h = LN1(x); q,k,v = split(h·Wqkv + bqkv); per head a = softmax(mask(q·kᵀ/√d)) with a causal
 *   mask; y = merge_heads(a·v); x = x + y·Wo + bo; h = LN2(x); out = x + gelu(h·W1 + b1)·W2 + b2.
 * The sequence length T is never read with tc_size: heads are split and merged with
 * unflatten/flatten and the mask is built from the scores' own shape, so T stays symbolic under
 * dynamic shapes (the dyn_attn benchmark calls this with 40 different T). */
#include <math.h>

#include "models_internal.h"

enum { ATTN_HEADS = 12 };

typedef struct attn_dims {
  int64_t b, t, c;
} attn_dims;

/* The test size keeps the structure (12 heads, 4C hidden), shrunk: head dim 4. */
static attn_dims attn_shape(tc_size_class size) {
  static const attn_dims dims[3] = {
      [TC_SIZE_CPU] = {2, 256, 768}, [TC_SIZE_GPU] = {8, 512, 768}, [TC_SIZE_TEST] = {1, 8, 48}};
  return dims[size];
}

/* scores (B, H, T, T) with every key after its query set to -inf. The mask is triu(1) of a
 * (1, 1, T, T) boolean tensor shaped like one head's scores, so no size is read and T stays
 * symbolic under dynamic shapes. */
static tc_tensor *attn_causal_mask(tc_tensor *scores) {
  tc_tensor *one_head = tc_slice(tc_slice(scores, 0, 0, 1, 1), 1, 0, 1, 1);
  tc_tensor *above = tc_triu(tc_full_like(one_head, 1.0, TC_BOOL), 1);
  return tc_masked_fill(scores, above, -INFINITY);
}

/* (B, T, 3C) -> q, k, v, each (B, H, T, C/H). */
static void attn_split_heads(tc_tensor *qkv, int64_t head_dim, tc_tensor **q, tc_tensor **k, tc_tensor **v) {
  static const int perm[5] = {2, 0, 3, 1, 4}; /* (B, T, 3, H, d) -> (3, B, H, T, d) */
  const int64_t split[3] = {3, ATTN_HEADS, head_dim};
  tc_tensor *heads = tc_permute(tc_unflatten(qkv, -1, 3, split), perm);
  *q = tc_squeeze(tc_slice(heads, 0, 0, 1, 1), 0);
  *k = tc_squeeze(tc_slice(heads, 0, 1, 2, 1), 0);
  *v = tc_squeeze(tc_slice(heads, 0, 2, 3, 1), 0);
}

/* (B, H, T, d) -> (B, T, H*d). */
static tc_tensor *attn_merge_heads(tc_tensor *y) {
  static const int perm[4] = {0, 2, 1, 3};
  return tc_flatten(tc_contiguous(tc_permute(y, perm)), 2, 3);
}

static tc_tensor *attn_block(tc_tensor *x, tc_tensor *ln1_w, tc_tensor *ln1_b, tc_tensor *w_qkv, tc_tensor *b_qkv,
                             tc_tensor *w_o, tc_tensor *b_o, tc_tensor *ln2_w, tc_tensor *ln2_b, tc_tensor *w_1,
                             tc_tensor *b_1, tc_tensor *w_2, tc_tensor *b_2) {
  tc_scope *s = tc_scope_open();
  /* C is a weight dimension: static, so reading it pins nothing that varies. */
  int64_t head_dim = tc_size(w_o, 0) / ATTN_HEADS;
  tc_tensor *h = tc_layer_norm(x, 1, ln1_w, ln1_b, 1e-5);
  tc_tensor *q, *k, *v;
  attn_split_heads(tc_add(tc_matmul(h, w_qkv), b_qkv), head_dim, &q, &k, &v);
  tc_tensor *scores = tc_mul_scalar(tc_matmul(q, tc_transpose(k, -2, -1)), 1.0 / sqrt((double)head_dim));
  tc_tensor *a = tc_softmax(attn_causal_mask(scores), -1);
  tc_tensor *y = attn_merge_heads(tc_matmul(a, v));
  x = tc_add(x, tc_add(tc_matmul(y, w_o), b_o));
  h = tc_layer_norm(x, 1, ln2_w, ln2_b, 1e-5);
  tc_tensor *m = tc_add(tc_matmul(tc_gelu(tc_add(tc_matmul(h, w_1), b_1)), w_2), b_2);
  return model_return(s, tc_add(x, m));
}

static tc_status attn_block_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  attn_dims d = attn_shape(size);
  int64_t c = d.c, xs[3] = {d.b, d.t, d.c};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 3, xs);
  in[1] = model_normal(model_seed(seed, 1), 1.0, 0.1, 1, &c);
  in[2] = model_normal(model_seed(seed, 2), 0.0, 0.1, 1, &c);
  in[3] = model_weight(model_seed(seed, 3), c, 3 * c);
  in[4] = model_bias(model_seed(seed, 4), c, 3 * c);
  in[5] = model_weight(model_seed(seed, 5), c, c);
  in[6] = model_bias(model_seed(seed, 6), c, c);
  in[7] = model_normal(model_seed(seed, 7), 1.0, 0.1, 1, &c);
  in[8] = model_normal(model_seed(seed, 8), 0.0, 0.1, 1, &c);
  in[9] = model_weight(model_seed(seed, 9), c, 4 * c);
  in[10] = model_bias(model_seed(seed, 10), c, 4 * c);
  in[11] = model_weight(model_seed(seed, 11), 4 * c, c);
  in[12] = model_bias(model_seed(seed, 12), 4 * c, c);
  return model_inputs_check(in, 13);
}

static double attn_block_work(tc_size_class size) {
  (void)size;
  return 0.0; /* reported in ms */
}

const tc_model model_attn_block = {
    .name = "attn_block",
    .description = "GPT-2 block: pre-LN causal attention (12 heads) + 4C MLP; B 2 T 256 C 768 (cpu), B 8 T 512 (gpu)",
    .n_inputs = 13,
    .fn = TC_FN(attn_block),
    .make_inputs = attn_block_inputs,
    .unit = "ms",
    .work = attn_block_work,
};
