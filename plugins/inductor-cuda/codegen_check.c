/* codegen_check.c — the ICUDA_EXT_CODEGEN_CHECK vendor extension: generate a kernel list's
 * module and compile it with NVRTC for sm_<sm>, as a compile would, on any host (no GPU, no
 * driver): CI runs it over every conformance graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icuda.h"

static tc_error *check_options(const tc_host_api *host, const tc_kernel_list *list, const icuda_codegen_options *opts,
                               char **source_out) {
  int32_t sm = opts->sm;
  if (source_out) *source_out = NULL;
  char err[8192] = "";
  const icuda_nvrtc *nv = icuda_nvrtc_load(err, sizeof err);
  if (!nv) return tck_error(host, TC_ERR_UNAVAILABLE, "inductor-cuda: %s", err);
  if (!list) return tck_error(host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda: no kernel list");
  int32_t n = list->n_kernels > 0 ? list->n_kernels : 1;
  icuda_kernel_plan *plans = calloc((size_t)n, sizeof *plans);
  if (!plans) return tck_error(host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda: out of memory");
  char *source = NULL;
  tc_status st = icuda_codegen(list, opts, &source, plans, err, sizeof err);
  free(plans);
  if (st != TC_OK)
    return tck_error(host, st, "inductor-cuda: graph %s: %s", list->name ? list->name : "?", err);
  void *cubin = NULL;
  size_t size = 0;
  st = icuda_nvrtc_compile(nv, source, list->name, sm, &cubin, &size, err, sizeof err);
  free(cubin);
  if (st != TC_OK) {
    tc_error *e = tck_error(host, st, "inductor-cuda: graph %s does not compile: %s", list->name ? list->name : "?", err);
    if (source_out) *source_out = source;
    else free(source);
    return e;
  }
  if (source_out) *source_out = source;
  else free(source);
  return NULL;
}

static tc_error *check_row_threads(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t row_threads,
                                   char **source_out) {
  const icuda_codegen_options o = {.sm = sm, .row_threads = row_threads};
  return check_options(host, list, &o, source_out);
}

static tc_error *check_attention_tiles(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                       int32_t keys, char **source_out) {
  const icuda_codegen_options o = {.sm = sm, .attn_queries = queries, .attn_keys = keys};
  return check_options(host, list, &o, source_out);
}

static tc_error *check_attention_variant(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                         int32_t keys, int32_t thread_queries, char **source_out) {
  const icuda_codegen_options o = {.sm = sm, .attn_queries = queries, .attn_keys = keys, .attn_thread_queries = thread_queries};
  return check_options(host, list, &o, source_out);
}

static tc_error *check_gemm(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm, int32_t tile,
                            char **source_out) {
  const icuda_codegen_options o = {.sm = sm, .gemm = gemm, .gemm_tile = tile};
  return check_options(host, list, &o, source_out);
}

static tc_error *check_attention_tiled(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t tile_m,
                                       int32_t tile_n, char **source_out) {
  const icuda_codegen_options o = {
      .sm = sm, .attn_kernel = ICUDA_ATTN_TILED, .attn_tile_m = tile_m, .attn_tile_n = tile_n};
  return check_options(host, list, &o, source_out);
}

/* Each program of the module compiled on its own, as modules.c does; keys compared pairwise
 * (a graph has tens of programs at most). */
static tc_error *check_programs(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm,
                                int32_t *n_kernels, int32_t *n_gemms) {
  if (n_kernels) *n_kernels = 0;
  if (n_gemms) *n_gemms = 0;
  char err[8192] = "";
  const icuda_nvrtc *nv = icuda_nvrtc_load(err, sizeof err);
  if (!nv) return tck_error(host, TC_ERR_UNAVAILABLE, "inductor-cuda: %s", err);
  if (!list) return tck_error(host, TC_ERR_INVALID_ARGUMENT, "inductor-cuda: no kernel list");
  const char *graph = list->name ? list->name : "?";
  const icuda_codegen_options o = {.sm = sm, .gemm = gemm};
  int32_t n = list->n_kernels > 0 ? list->n_kernels : 1;
  icuda_kernel_plan *plans = calloc((size_t)n, sizeof *plans);
  char **keys = calloc(2 * (size_t)n, sizeof *keys);
  size_t *key_lens = calloc(2 * (size_t)n, sizeof *key_lens);
  char *source = NULL;
  tc_error *e = NULL;
  if (!plans || !keys || !key_lens) e = tck_error(host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda: out of memory");
  tc_status st = e ? TC_OK : icuda_codegen(list, &o, &source, plans, err, sizeof err);
  if (st != TC_OK) e = tck_error(host, st, "inductor-cuda: graph %s: %s", graph, err);
  int32_t n_keys = 0;
  for (int32_t i = 0; !e && i < list->n_kernels * 2; i++) {
    const bool is_gemm = i % 2 == 1;
    bool oom = false;
    char *prog = icuda_program_source(source, plans, list->n_kernels, i / 2, is_gemm, &oom);
    if (!prog) {
      if (oom) e = tck_error(host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda: out of memory");
      continue;
    }
    void *cubin = NULL;
    size_t size = 0;
    st = icuda_nvrtc_compile(nv, prog, graph, sm, &cubin, &size, err, sizeof err);
    free(cubin);
    if (st != TC_OK)
      e = tck_error(host, st, "inductor-cuda: graph %s: the %s program of kernel %d does not compile on its own: %s", graph,
                    is_gemm ? "generated GEMM's" : "kernel's", (int)(i / 2), err);
    keys[n_keys] = icuda_cubin_key(sm, icuda_nvrtc_version(nv), prog, &key_lens[n_keys]);
    free(prog);
    if (!keys[n_keys]) {
      if (!e) e = tck_error(host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda: out of memory");
      continue;
    }
    for (int32_t j = 0; !e && j < n_keys; j++)
      if (key_lens[j] == key_lens[n_keys] && !memcmp(keys[j], keys[n_keys], key_lens[j]))
        e = tck_error(host, TC_ERR_INTERNAL, "inductor-cuda: graph %s: two programs have one cache key", graph);
    n_keys++;
    if (!e && is_gemm && n_gemms) (*n_gemms)++;
    if (!e && !is_gemm && n_kernels) (*n_kernels)++;
  }
  for (int32_t j = 0; j < n_keys; j++) free(keys[j]);
  free(keys);
  free(key_lens);
  free(plans);
  free(source);
  return e;
}

static tc_error *check(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, char **source_out) {
  return check_row_threads(host, list, sm, 0, source_out);
}

const icuda_codegen_check_ext icuda_codegen_check = {
    .base = {sizeof(icuda_codegen_check_ext), ICUDA_EXT_CODEGEN_CHECK, NULL},
    .check = check,
    .check_row_threads = check_row_threads,
    .check_attention_tiles = check_attention_tiles,
    .check_attention_variant = check_attention_variant,
    .check_gemm = check_gemm,
    .check_attention_tiled = check_attention_tiled,
    .check_programs = check_programs,
};
