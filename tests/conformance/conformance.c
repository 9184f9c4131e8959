/* conformance.c — the conformance framework: the case registry, running a model on the
 * backend under test (eager or tc_compile'd), checking results against hand-computed values,
 * and the run-everything driver shared by `tc conformance` and the Criterion suite.
 *
 * Cases run in-process, one after another, each inside its own tc scope (so its tensors are
 * released when it ends). A case records its first failure and stops checking. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

struct conf_ctx {
  const char *backend;
  const char *suite, *name;
  const void *arg;
  bool failed;
  const char *known; /* a known difference's reason: a failure is listed, not counted */
  char message[1536];
};

typedef struct conf_case {
  const char *suite, *name;
  conf_case_fn fn;
  const void *arg;
} conf_case;

/* Filled by constructors before main, read afterwards: no locking needed. */
static conf_case *cases;
static int n_cases, cap_cases;

void conf_register(const char *suite, const char *name, conf_case_fn fn) { conf_register_with(suite, name, fn, NULL); }

void conf_register_with(const char *suite, const char *name, conf_case_fn fn, const void *arg) {
  if (n_cases == cap_cases) {
    int cap = cap_cases ? 2 * cap_cases : 256;
    conf_case *grown = realloc(cases, sizeof *cases * (size_t)cap);
    if (!grown) return; /* out of memory before main: the case is simply missing from the count */
    cases = grown;
    cap_cases = cap;
  }
  cases[n_cases++] = (conf_case){suite, name, fn, arg};
}

int conf_case_count(void) { return n_cases; }

const char *conf_backend(const conf_ctx *c) { return c->backend; }

const void *conf_arg(const conf_ctx *c) { return c->arg; }

void conf_known_difference(conf_ctx *c, const char *reason) { c->known = reason; }

void conf_fail(conf_ctx *c, const char *fmt, ...) {
  if (c->failed) return; /* the first failure is the informative one */
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->message, sizeof c->message, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------- running a model */
typedef tc_tensor *(*fn0)(void);
typedef tc_tensor *(*fn1)(tc_tensor *);
typedef tc_tensor *(*fn2)(tc_tensor *, tc_tensor *);
typedef tc_tensor *(*fn3)(tc_tensor *, tc_tensor *, tc_tensor *);
typedef tc_tensor *(*fn4)(tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *);

/* Eager mode: the model is called directly, with its natural signature. */
static tc_tensor *call_eager(conf_ctx *c, tc_model_fn fn, int n, tc_tensor *const *in) {
  switch (n) {
  case 0: return ((fn0)fn)();
  case 1: return ((fn1)fn)(in[0]);
  case 2: return ((fn2)fn)(in[0], in[1]);
  case 3: return ((fn3)fn)(in[0], in[1], in[2]);
  case 4: return ((fn4)fn)(in[0], in[1], in[2], in[3]);
  default: conf_fail(c, "conf_run: %d inputs (eager supports 0..4)", n); return NULL;
  }
}

static int32_t conf_mode = TC_MODE_DEFAULT;
static const char *conf_options;
static FILE *conf_digest;

void conf_set_mode(int32_t mode) { conf_mode = mode; }
void conf_set_options(const char *options) {
  conf_options = options;
}
const char *conf_get_options(void) { return conf_options; }
void conf_set_digest(FILE *f) {
  conf_digest = f;
}

/* fn wrapped for the backend under test; "eager": a disabled wrapper (called eagerly, any
 * number of inputs). NULL with tc_last_error() set. */
static tc_compiled *compile_for(const conf_ctx *c, tc_model_fn fn, int n) {
  tc_compile_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  bool eager = !strcmp(c->backend, "eager");
  opts.backend = eager ? "debug-eager" : c->backend; /* eager: never compiled, any backend will do */
  opts.disable = eager;
  opts.fullgraph = true; /* a graph break would hide the prim from the backend under test */
  opts.name = c->name;
  opts.mode = conf_mode;
  opts.options = conf_options;
  return tc_compile(fn, n, &opts);
}

static tc_tensor *call_in_mode(tc_compiled *compiled, tc_tensor *const *in) {
  tc_tensor *out = tc_call(compiled, in);
  if (out && conf_mode != TC_MODE_DEFAULT) { /* the second call replays what the first recorded */
    tc_release(out);
    out = tc_call(compiled, in);
  }
  return out;
}

tc_compiled *conf_compile(conf_ctx *c, tc_model_fn fn, int n_inputs) {
  tc_compiled *compiled = compile_for(c, fn, n_inputs);
  if (!compiled) conf_fail(c, "%s: tc_compile: %s", c->backend, tc_last_error());
  return compiled;
}

tc_tensor *conf_call(conf_ctx *c, tc_compiled *compiled, tc_tensor *const *inputs) {
  tc_tensor *out = call_in_mode(compiled, inputs);
  if (!out) conf_fail(c, "%s: %s", c->backend, tc_last_error()[0] ? tc_last_error() : "model returned NULL");
  return out;
}

static tc_tensor *call_compiled(conf_ctx *c, tc_model_fn fn, int n, tc_tensor *const *in) {
  tc_compiled *compiled = compile_for(c, fn, n);
  if (!compiled) return NULL;
  tc_tensor *out = call_in_mode(compiled, in);
  tc_compiled_free(compiled);
  return out;
}

tc_tensor *conf_run(conf_ctx *c, tc_model_fn fn, int n_inputs, tc_tensor *const *inputs) {
  if (c->failed) return NULL;
  for (int i = 0; i < n_inputs; i++)
    if (!inputs[i]) {
      conf_fail(c, "input %d could not be created: %s", i, tc_last_error());
      return NULL;
    }
  tc_error_clear();
  tc_tensor *out = !strcmp(c->backend, "eager") ? call_eager(c, fn, n_inputs, inputs)
                                                : call_compiled(c, fn, n_inputs, inputs);
  if (!out) conf_fail(c, "%s: %s", c->backend, tc_last_error()[0] ? tc_last_error() : "model returned NULL");
  return out;
}

bool conf_expect_error(conf_ctx *c, tc_model_fn fn, int n_inputs, tc_tensor *const *inputs, const char *needle) {
  if (c->failed) return false;
  tc_error_clear();
  tc_tensor *out = !strcmp(c->backend, "eager") ? call_eager(c, fn, n_inputs, inputs)
                                                : call_compiled(c, fn, n_inputs, inputs);
  if (out) {
    /* A device backend reports what its kernels found (an out-of-range index) when the host
     * next waits for it, as a read of the result would. */
    tc_release(out);
    if (tc_synchronize(c->backend) == TC_OK) {
      conf_fail(c, "%s: expected an error containing \"%s\", got a result", c->backend, needle);
      return false;
    }
  }
  if (!strstr(tc_last_error(), needle)) {
    conf_fail(c, "%s: expected an error containing \"%s\", got \"%s\"", c->backend, needle, tc_last_error());
    return false;
  }
  tc_error_clear();
  return true;
}

/* ---------------------------------------------------------------- checking */
void conf_shape_text(char *buf, size_t cap, int rank, const int64_t *sizes) {
  size_t n = 0;
  buf[0] = 0;
  if (rank == 0) snprintf(buf, cap, "[]");
  for (int d = 0; d < rank && n < cap; d++) n += (size_t)snprintf(buf + n, cap - n, d ? "x%lld" : "%lld", (long long)sizes[d]);
}

double conf_element_as_double(tc_dtype dt, const unsigned char *p) {
  switch (dt) {
  case TC_F32: { float v; memcpy(&v, p, sizeof v); return v; }
  case TC_F64: { double v; memcpy(&v, p, sizeof v); return v; }
  case TC_I32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
  case TC_I64: { int64_t v; memcpy(&v, p, sizeof v); return (double)v; }
  case TC_BOOL: return *p ? 1.0 : 0.0;
  default: return NAN;
  }
}

static bool element_matches(double got, double want, double rtol, double atol) {
  if (isnan(want)) return isnan(got);
  if (isnan(got)) return false;
  if (isinf(want)) return got == want;
  if (rtol == 0 && atol == 0) return got == want && (want != 0 || signbit(got) == signbit(want));
  return fabs(got - want) <= atol + rtol * fabs(want);
}

bool conf_check(conf_ctx *c, const tc_tensor *out, int rank, const int64_t *sizes, const double *want, double rtol,
                double atol) {
  if (c->failed) return false;
  if (!out) {
    conf_fail(c, "no result");
    return false;
  }
  int64_t got_sizes[TC_MAX_RANK];
  int got_rank = tc_rank(out);
  bool same = got_rank == rank;
  for (int d = 0; d < got_rank && d < TC_MAX_RANK; d++) got_sizes[d] = tc_size(out, d);
  for (int d = 0; same && d < rank; d++) same = got_sizes[d] == sizes[d];
  if (!same) {
    char a[160], b[160];
    conf_shape_text(a, sizeof a, got_rank, got_sizes);
    conf_shape_text(b, sizeof b, rank, sizes);
    conf_fail(c, "shape: got %s, want %s", a, b);
    return false;
  }
  tc_dtype dt = tc_dtype_of(out);
  int64_t n = tc_numel(out);
  size_t item = tc_dtype_size(dt);
  size_t bytes = (size_t)n * item;
  unsigned char *host = malloc(bytes ? bytes : 1);
  if (!host) {
    conf_fail(c, "out of memory reading %lld elements", (long long)n);
    return false;
  }
  if (tc_to_host(out, host, bytes) != TC_OK) {
    conf_fail(c, "tc_to_host: %s", tc_last_error());
    free(host);
    return false;
  }
  bool ok = true;
  if (conf_digest) { /* FNV-1a of the bytes: equal digests, equal bits (as far as anyone will meet) */
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
      h = (h ^ host[i]) * 1099511628211ull;
    fprintf(conf_digest, "%s.%s %s %lld %016llx\n", c->suite, c->name, tc_dtype_name(dt), (long long)n, h);
  }
  for (int64_t i = 0; ok && i < n; i++) {
    double got = conf_element_as_double(dt, host + (size_t)i * item);
    if (!element_matches(got, want[i], rtol, atol)) {
      conf_fail(c, "element %lld of %lld (%s): got %.9g, want %.9g (rtol %g, atol %g)", (long long)i, (long long)n,
                tc_dtype_name(dt), got, want[i], rtol, atol);
      ok = false;
    }
  }
  free(host);
  return ok;
}

/* splitmix64 feeding Box-Muller: a fixed, portable stream for host-side reference inputs. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void conf_randn(unsigned long long seed, double *buf, long n) {
  uint64_t state = seed;
  for (long i = 0; i < n; i += 2) {
    double u1 = ((double)(splitmix64(&state) >> 11) + 1.0) * 0x1p-53; /* (0, 1]: log stays finite */
    double u2 = (double)(splitmix64(&state) >> 11) * 0x1p-53;
    double r = sqrt(-2.0 * log(u1));
    buf[i] = r * cos(2 * M_PI * u2);
    if (i + 1 < n) buf[i + 1] = r * sin(2 * M_PI * u2);
  }
}

/* ---------------------------------------------------------------- the driver */
conf_result conf_run_all(const char *backend, const char *filter, bool verbose, FILE *log) {
  conf_result r = {0, 0, 0, 0};
  for (int i = 0; i < n_cases; i++) {
    char full[256];
    snprintf(full, sizeof full, "%s.%s", cases[i].suite, cases[i].name);
    if (filter && !strstr(full, filter)) continue;
    conf_ctx c = {backend, cases[i].suite, cases[i].name, cases[i].arg, false, NULL, {0}};
    tc_error_clear();
    tc_scope *scope = tc_scope_open();
    cases[i].fn(&c);
    tc_scope_close(scope);
    if (c.failed && c.known) {
      r.known++;
      fprintf(log, "KNOWN %s [%s]: %s (%s)\n", full, backend, c.known, c.message);
    } else if (c.failed) {
      r.failed++;
      fprintf(log, "FAIL %s [%s]: %s\n", full, backend, c.message);
    } else {
      r.passed++;
      if (verbose) fprintf(log, "ok   %s [%s]\n", full, backend);
    }
    fflush(log);
  }
  if (r.known) fprintf(log, "%d passed, %d failed, %d known differences (KNOWN above)\n", r.passed, r.failed, r.known);
  else fprintf(log, "%d passed, %d failed\n", r.passed, r.failed);
  return r;
}
