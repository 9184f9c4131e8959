/* models.c — the table of bundled models. dyn_attn is attn_block driven by the bench with 40 sequence lengths
 * (`tc bench --models dyn_attn`), so it has no entry of its own. */
#include <pthread.h>
#include <string.h>

#include "models_internal.h"

static const tc_model *const models_table[] = {
    &model_ln_gelu, &model_softmax, &model_mlp, &model_attn_block, &model_tiny_mlp_b1, &model_digits,
    &model_train_digits, &model_train_mlp,
};

static const int models_count = (int)(sizeof models_table / sizeof models_table[0]);

/* The entries are separate objects (one per model file); callers index one array, filled once. */
static tc_model models_all[sizeof models_table / sizeof models_table[0]];
static pthread_once_t models_all_once = PTHREAD_ONCE_INIT;

static void models_all_fill(void) {
  for (int i = 0; i < models_count; i++) models_all[i] = *models_table[i];
}

const tc_model *tc_models_all(int *n) {
  pthread_once(&models_all_once, models_all_fill);
  if (n) *n = models_count;
  return models_all;
}

const tc_model *tc_model_find(const char *name) {
  int n;
  const tc_model *all = tc_models_all(&n);
  for (int i = 0; name && i < n; i++)
    if (!strcmp(all[i].name, name)) return &all[i];
  return NULL;
}
