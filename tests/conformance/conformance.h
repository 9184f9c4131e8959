/* conformance.h — the conformance suite: prim and op cases written once, run on any backend
 * and compared with hand-computed values or a double-precision reference. Driven by
 * `tc conformance BACKEND` and by the Criterion suite (tests/test_conformance.c).
 *
 * A case calls conf_run() to evaluate a model function on the backend under test: compiled
 * with tc_compile on that backend, or called directly (eager) when the backend is "eager".
 * Cases register themselves with CONF_CASE; the library is linked as an object library so
 * every case is kept. */
#ifndef TC_CONFORMANCE_H
#define TC_CONFORMANCE_H

#include <stdbool.h>
#include <stdio.h>

#include "tc/tc.h"

typedef struct conf_ctx conf_ctx;
typedef void (*conf_case_fn)(conf_ctx *c);

void conf_register(const char *suite, const char *name, conf_case_fn fn);
/* Registers a case made from data (the PyTorch expectations): the case reads arg with conf_arg.
 * Before main or before conf_run_all; arg and the strings must outlive the run. */
void conf_register_with(const char *suite, const char *name, conf_case_fn fn, const void *arg);

#define CONF_CASE(suite, name)                                                                     \
  static void conf_case_##suite##_##name(conf_ctx *c);                                             \
  __attribute__((constructor)) static void conf_reg_##suite##_##name(void) {                       \
    conf_register(#suite, #name, conf_case_##suite##_##name);                                      \
  }                                                                                                \
  static void conf_case_##suite##_##name(conf_ctx *c)

/* The backend under test ("eager" for plain eager mode). */
const char *conf_backend(const conf_ctx *c);
/* The arg of a case registered with conf_register_with (NULL otherwise). */
const void *conf_arg(const conf_ctx *c);
/* Marks the case as a known difference (reason: one line): if it fails, the driver lists it as
 * KNOWN with the reason and its first mismatch and counts it apart, instead of failing. */
void conf_known_difference(conf_ctx *c, const char *reason);
/* fn compiled for the backend under test, with the suite's mode and fullgraph; for "eager",
 * wrapped but disabled (called eagerly, for any number of inputs). NULL: the case has failed. */
tc_compiled *conf_compile(conf_ctx *c, tc_model_fn fn, int n_inputs);
/* One call of a conf_compile'd function (two in a mode other than default, the second result
 * returned). NULL: the case has failed with tc_last_error(). */
tc_tensor *conf_call(conf_ctx *c, tc_compiled *compiled, tc_tensor *const *inputs);
/* Evaluates fn(inputs) on the backend under test (n_inputs tensors). New reference or NULL;
 * on NULL the case has already been failed with tc_last_error(). */
tc_tensor *conf_run(conf_ctx *c, tc_model_fn fn, int n_inputs, tc_tensor *const *inputs);
/* Evaluates fn(inputs) expecting it to fail with an error whose text contains needle; fails
 * the case (and returns false) on a result or another error. A compiled call that returns a
 * result passes when the backend's next wait (tc_synchronize) gives the error: a device
 * backend reports what its kernels found there. */
bool conf_expect_error(conf_ctx *c, tc_model_fn fn, int n_inputs, tc_tensor *const *inputs, const char *needle);
/* Fails the case with a message (printf-style). */
void conf_fail(conf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Compares out (any real dtype; converted to double) with want[numel] (row-major) and the
 * expected shape. NaN must meet NaN, infinities must match exactly, and where want is an
 * exact zero with rtol == 0 and atol == 0 the sign of zero must match too. Fails the case
 * with the first mismatch (index, got, want) and returns false. */
bool conf_check(conf_ctx *c, const tc_tensor *out, int rank, const int64_t *sizes, const double *want, double rtol,
                double atol);
/* "2x3" ("[]" for rank 0) into buf. */
void conf_shape_text(char *buf, size_t cap, int rank, const int64_t *sizes);
/* The element at p of dtype dt (any real dtype, bool as 0 or 1) as a double. */
double conf_element_as_double(tc_dtype dt, const unsigned char *p);
/* Fills buf with n seeded normal values (host-side reference inputs). */
void conf_randn(unsigned long long seed, double *buf, long n);

typedef struct conf_result {
  int passed, failed, skipped;
  int known; /* known differences that showed (conf_known_difference): listed, not failed */
} conf_result;
/* Runs every case whose "suite.name" contains filter (NULL: all) on backend, printing one
 * line per failure and known difference (and per case when verbose) to log. Ends with
 * "N passed, N failed" (and ", N known differences" when some showed). */
conf_result conf_run_all(const char *backend, const char *filter, bool verbose, FILE *log);
/* The compile mode of every case (tc_mode; default TC_MODE_DEFAULT). In another mode each case's
 * compiled function is called twice and the second result checked: a backend that records the
 * first call (CUDA graphs) replays it in the second. */
void conf_set_mode(int32_t mode);
/* Backend options for every case's compile (tc_compile_options.options; NULL: none). The text
 * must outlive the runs. */
void conf_set_options(const char *options);
/* The options conf_set_options gave (NULL: none). */
const char *conf_get_options(void);
/* Every conf_check also writes "suite.name dtype numel digest" (of the result's bytes) to f,
 * so two runs can be compared bit for bit; NULL: off. */
void conf_set_digest(FILE *f);
int conf_case_count(void);

#endif
