/* models_internal.h — what the bundled model files share, private to examples/models: the
 * input makers (model_inputs.c) and the table entries each model file defines. */
#ifndef TC_MODELS_INTERNAL_H
#define TC_MODELS_INTERNAL_H

#include "tc_models.h"

/* A seeded N(mean, std^2) tensor: the benchmarks never feed zeros. */
tc_tensor *model_normal(uint64_t seed, double mean, double std, int rank, const int64_t *sizes);
/* A weight (fan_in, fan_out), laid out for x·W as BENCHMARKS.md writes it, scaled by
 * 1/sqrt(fan_in) so activations keep unit scale through the layers. */
tc_tensor *model_weight(uint64_t seed, int64_t fan_in, int64_t fan_out);
/* A bias of n elements, scaled like the weight it follows. */
tc_tensor *model_bias(uint64_t seed, int64_t fan_in, int64_t n);
/* The seed of input number `index` of a model called with `seed`: distinct streams per input. */
uint64_t model_seed(uint64_t seed, int index);
/* Finishes a make_inputs: when any of inputs[0..n-1] is NULL, releases the others, clears the
 * array and returns an error (tc_last_error() keeps the failing op's message); else TC_OK. */
tc_status model_inputs_check(tc_tensor **inputs, int n);
/* Ends a model function's scope: keeps y (may be NULL) for the caller and closes s. */
tc_tensor *model_return(tc_scope *s, tc_tensor *y);

/* The UCI digits (digits_data.c): DIGITS_ROWS images of DIGITS_PIXELS values in [0, 1]
 * (pixel / 16) and their labels 0..9, from examples/data/digits.csv.gz or $TC_DATA_DIR; false,
 * with the reason on stderr, when the file cannot be read. */
enum { DIGITS_PIXELS = 64, DIGITS_CLASSES = 10, DIGITS_ROWS = 1797 };
bool digits_load(float *pixels /* out: DIGITS_ROWS x DIGITS_PIXELS */, int64_t *labels /* out: DIGITS_ROWS */);
/* train_digits.c's loop (the model's `train`). */
tc_status tc_train_digits(const char *backend, const char *options, int epochs, FILE *log, tc_train_result *out);

/* The mlp's sizes (mlp.c), which train_mlp shares: x is m x d, the hidden layer h wide. */
typedef struct mlp_dims {
  int64_t m, d, h;
} mlp_dims;
mlp_dims mlp_shape(tc_size_class size);

extern const tc_model model_ln_gelu;
extern const tc_model model_softmax;
extern const tc_model model_mlp;
extern const tc_model model_attn_block;
extern const tc_model model_tiny_mlp_b1;
extern const tc_model model_digits;
extern const tc_model model_train_digits;
extern const tc_model model_train_mlp;

#endif
