/* ab_inputs.c — the inputs `tc ab` feeds every backend: seeded normal data for a shared
 * object's function (by shape), and the special values of --inputs special. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab_report.h"

bool ab_inputs_from_shapes(const char *shapes, uint64_t seed, tc_tensor **inputs, int max, int *n) {
  *n = 0;
  const char *p = shapes;
  while (*p) {
    int64_t sizes[TC_MAX_RANK];
    int rank = 0;
    const char *start = p;
    for (;;) {
      char *end;
      long long v = strtoll(p, &end, 10);
      if (end == p || v <= 0 || rank == TC_MAX_RANK) {
        fprintf(stderr,
                "tc ab: --shapes: bad shape at '%s' (sizes are positive integers joined by x, at most %d; "
                "shapes are separated by commas: 64x256,256)\n",
                start, TC_MAX_RANK);
        return false;
      }
      sizes[rank++] = v;
      p = end;
      if (*p != 'x') break;
      p++;
    }
    if (*p && *p != ',') {
      fprintf(stderr, "tc ab: --shapes: unexpected '%c' in '%s'\n", *p, start);
      return false;
    }
    if (*n == max) {
      fprintf(stderr, "tc ab: --shapes: more than %d inputs\n", max);
      return false;
    }
    /* Normal data scaled by 1/sqrt(last dim), as the bundled models' weights: sums stay O(1). */
    tc_scope *s = tc_scope_open();
    tc_tensor *t =
        tc_mul_scalar(tc_randn(seed + (uint64_t)*n * 7919u, TC_F32, rank, sizes), 1.0 / sqrt((double)sizes[rank - 1]));
    if (t) tc_scope_keep(s, t);
    tc_scope_close(s);
    if (!t) {
      fprintf(stderr, "tc ab: making input %d: %s\n", *n, tc_last_error());
      return false;
    }
    inputs[(*n)++] = t;
    if (*p == ',') p++;
  }
  return true;
}

/* splitmix64: a seeded stream for choosing positions. */
static uint64_t next_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

tc_status ab_inputs_special(tc_tensor **inputs, int n, uint64_t seed) {
  /* Only the first input (the data): a NaN in a weight reaches every output element through
   * the matmuls, and then nothing is left to compare. Every eighth row of its leading dim (from a
   * seeded offset) gets a special value in every eighth element; the other rows stay finite, so
   * errors there are still measured (unless the model mixes rows, as attention does). */
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, -3e-42f, 1.4e-45f};
  const int n_specials = (int)(sizeof specials / sizeof specials[0]);
  uint64_t state = seed ^ 0x5ec1a1ull;
  for (int i = 0; i < n && i < 1; i++) {
    if (tc_dtype_of(inputs[i]) != TC_F32 || tc_numel(inputs[i]) == 0) continue;
    const int64_t numel = tc_numel(inputs[i]);
    const int64_t rows = tc_rank(inputs[i]) > 0 ? tc_size(inputs[i], 0) : 1, row_len = numel / (rows ? rows : 1);
    float *h = malloc((size_t)numel * sizeof *h);
    if (!h) return TC_ERR_OUT_OF_MEMORY;
    tc_status s = tc_to_host(inputs[i], h, (size_t)numel * sizeof *h);
    int k = 0;
    const int64_t first_row = (int64_t)(next_rand(&state) % 8);
    for (int64_t r = rows > 1 ? first_row % rows : 0; s == TC_OK && r < rows; r += 8) {
      const int64_t first = (int64_t)(next_rand(&state) % 8);
      for (int64_t j = first % row_len; j < row_len; j += 8)
        h[r * row_len + j] = specials[k++ % n_specials];
    }
    int rank = tc_rank(inputs[i]);
    int64_t sizes[TC_MAX_RANK];
    for (int d = 0; d < rank; d++)
      sizes[d] = tc_size(inputs[i], d);
    tc_tensor *t = s == TC_OK ? tc_from_f32(h, rank, sizes) : NULL;
    free(h);
    if (!t) return s != TC_OK ? s : tc_last_status();
    tc_release(inputs[i]);
    inputs[i] = t;
  }
  return TC_OK;
}
