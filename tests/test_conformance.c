/* test_conformance.c — the conformance suite under Criterion: one test per backend, plain
 * eager mode first, then every backend tc_backend_list reports available. A failing test
 * lists the failing cases with their messages. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "tc/tc.h"

static bool backend_available(const char *name, char *why, size_t cap) {
  tc_backend_info infos[64];
  int n = tc_backend_list(infos, 64);
  for (int i = 0; i < n && i < 64; i++)
    if (!strcmp(infos[i].name, name)) {
      snprintf(why, cap, "%s", infos[i].reason ? infos[i].reason : "");
      return infos[i].available;
    }
  snprintf(why, cap, "not found");
  return false;
}

static void run_backend(const char *name) {
  char why[512];
  if (strcmp(name, "eager") && !backend_available(name, why, sizeof why))
    cr_skip_test("backend %s is not available: %s", name, why);
  char *text = NULL;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  cr_assert(log, "open_memstream failed");
  conf_result r = conf_run_all(name, NULL, false, log);
  fclose(log);
  cr_expect(r.passed > 0, "%s: no case ran (%d registered)", name, conf_case_count());
  cr_expect_eq(r.failed, 0, "conformance on %s: %d of %d cases failed:\n%s", name, r.failed, r.passed + r.failed,
               text);
  free(text);
}

Test(conformance, eager) { run_backend("eager"); }
Test(conformance, debug_eager) { run_backend("debug-eager"); }
Test(conformance, inductor_cpu) { run_backend("inductor-cpu"); }
Test(conformance, vulkan) { run_backend("vulkan"); }

/* Runs the cases matching each filter on inductor-cpu with options, writing their results'
 * digests to a new string (the caller frees it). */
static char *digest_of(const char *options, const char *const *filters, size_t n_filters, int min_cases) {
  char *digest = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&digest, &len);
  cr_assert(f);
  conf_set_options(options);
  conf_set_digest(f);
  int ran = 0;
  for (size_t i = 0; i < n_filters; i++) {
    char *text = NULL;
    size_t text_len = 0;
    FILE *log = open_memstream(&text, &text_len);
    cr_assert(log);
    conf_result r = conf_run_all("inductor-cpu", filters[i], false, log);
    fclose(log);
    cr_expect_eq(r.failed, 0, "%s, %s: %d cases failed:\n%s", options, filters[i], r.failed, text);
    free(text);
    ran += r.passed + r.failed + r.known;
  }
  conf_set_digest(NULL);
  conf_set_options(NULL);
  fclose(f);
  cr_assert(ran >= min_cases, "%s: %d cases ran", options, ran);
  return digest;
}

/* inductor-cpu's fast build (what a cold compile's first calls run) and its -O3 build (swapped
 * in later, plugins/inductor-cpu/tiered.c) compute the same bits. The cases where the compiler's
 * vector code decides the bits (reductions and their order, libmvec's transcendental functions,
 * Philox inside a vector loop, rows of every length), under cpu.tier=fast and cpu.tier=full,
 * compared byte for byte; and the matmul cases again with the generated GEMM (cpu.blas).
 * (-O1 as the fast build differs in two of them.) */
Test(conformance, inductor_cpu_tiers_agree_bit_for_bit, .timeout = 600) {
  char why[512];
  if (!backend_available("inductor-cpu", why, sizeof why)) cr_skip_test("inductor-cpu is not available: %s", why);
  static const char *const filters[] = {"ops.nn_",      "ops.reduce",      "ops.attention", "ops.create_rand",
                                        "ops.unary_float", "ops.binary_pow", "prims.reduce", "prims.random",
                                        "prims.exp",    "prims.log",       "prims.tanh",    "prims.sin",
                                        "prims.cos",    "prims.erf",       "prims.pow"};
  static const char *const gemm_filters[] = {"ops.nn_linear", "ops.nn_matmul", "ops.attention", "prims.matmul"};
  /* blas named in both: auto takes the generated GEMM on AVX-512 hosts and OpenBLAS elsewhere */
  static const char *const runs[][2] = {{"cpu.tier=fast,cpu.blas=openblas", "cpu.tier=full,cpu.blas=openblas"},
                                        {"cpu.tier=fast,cpu.blas=generated", "cpu.tier=full,cpu.blas=generated"}};
  for (int k = 0; k < 2; k++) {
    const char *const *f = k == 0 ? filters : gemm_filters;
    const size_t n = k == 0 ? sizeof filters / sizeof filters[0] : sizeof gemm_filters / sizeof gemm_filters[0];
    char *digest[2];
    for (int t = 0; t < 2; t++) digest[t] = digest_of(runs[k][t], f, n, k == 0 ? 30 : 8);
    const char *a = digest[0], *b = digest[1];
    while (*a && *a == *b) a++, b++;
    if (*a || *b) {
      while (a > digest[0] && a[-1] != '\n') a--, b--;
      cr_assert_fail("the tiers differ (%s):\n  fast: %.*s\n  full: %.*s", runs[k][1], (int)strcspn(a, "\n"), a,
                     (int)strcspn(b, "\n"), b);
    }
    free(digest[0]);
    free(digest[1]);
  }
}
