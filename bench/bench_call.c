/* bench_call.c — calling a model (eagerly or compiled), waiting for its result, checksums,
 * input placement and thread counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef TC_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"

typedef tc_tensor *T;

/* A model function has its natural signature: cast it back by arity. */
tc_tensor *bench_call_eager(const tc_model *m, tc_tensor *const *a) {
  tc_model_fn f = m->fn;
  switch (m->n_inputs) {
  case 0: return ((T(*)(void))f)();
  case 1: return ((T(*)(T))f)(a[0]);
  case 2: return ((T(*)(T, T))f)(a[0], a[1]);
  case 3: return ((T(*)(T, T, T))f)(a[0], a[1], a[2]);
  case 4: return ((T(*)(T, T, T, T))f)(a[0], a[1], a[2], a[3]);
  case 5: return ((T(*)(T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4]);
  case 6: return ((T(*)(T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5]);
  case 7: return ((T(*)(T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  case 8: return ((T(*)(T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  case 9: return ((T(*)(T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
  case 10:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
  case 11:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                                                       a[10]);
  case 12:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                                                          a[10], a[11]);
  case 13:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                                             a[9], a[10], a[11], a[12]);
  case 14:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                                                a[9], a[10], a[11], a[12], a[13]);
  case 15:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                                                   a[8], a[9], a[10], a[11], a[12], a[13], a[14]);
  case 16:
    return ((T(*)(T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                                                      a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                                                                      a[15]);
  default: return NULL;
  }
}

static int32_t g_dynamic = TC_DYNAMIC_AUTO, g_mode = TC_MODE_DEFAULT;
static bool g_compile_async;

void bench_set_dynamic(int32_t dynamic) { g_dynamic = dynamic; }
void bench_set_compile_async(bool on) { g_compile_async = on; }
void bench_set_mode(int32_t mode) { g_mode = mode; }

static const char *const bench_modes[] = {"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"};

bool bench_parse_mode(const char *s, int32_t *out) {
  for (int32_t m = 0; m < (int32_t)(sizeof bench_modes / sizeof *bench_modes); m++)
    if (!strcmp(s, bench_modes[m])) return *out = m, true;
  return false;
}

const char *bench_mode_name(int32_t mode) {
  return mode >= 0 && mode < (int32_t)(sizeof bench_modes / sizeof *bench_modes) ? bench_modes[mode] : "default";
}

bool bench_parse_dynamic(const char *s, int32_t *out) {
  if (!strcmp(s, "auto")) *out = TC_DYNAMIC_AUTO;
  else if (!strcmp(s, "on")) *out = TC_DYNAMIC_ON;
  else if (!strcmp(s, "off")) *out = TC_DYNAMIC_OFF;
  else return false;
  return true;
}

const char *bench_dynamic_name(int32_t dynamic) {
  return dynamic == TC_DYNAMIC_ON ? "on" : dynamic == TC_DYNAMIC_OFF ? "off" : "auto";
}

tc_status bench_runner_init(bench_runner *r, const tc_model *m, const char *backend, const char *options) {
  r->model = m;
  r->compiled = NULL;
  if (!backend || !strcmp(backend, "eager")) return TC_OK;
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = m->name, .options = options,
                          .dynamic = g_dynamic, .mode = g_mode, .compile_async = g_compile_async};
  r->compiled = tc_compile(m->fn, m->n_inputs, &o);
  return r->compiled ? TC_OK : TC_ERR_INVALID_ARGUMENT;
}

void bench_runner_free(bench_runner *r) {
  tc_compiled_free(r->compiled);
  r->compiled = NULL;
}

tc_tensor *bench_runner_call(bench_runner *r, tc_tensor *const *inputs) {
  tc_tensor *out = r->compiled ? tc_call(r->compiled, inputs) : bench_call_eager(r->model, inputs);
  if (out && bench_wait(out) != TC_OK) {
    tc_release(out);
    return NULL;
  }
  return out;
}

tc_status bench_wait(const tc_tensor *out) {
  int64_t n = tc_numel(out);
  if (n <= 0) return TC_OK;
  /* One element, through a view: the read is ordered after every launch that wrote it. */
  tc_scope *s = tc_scope_open();
  int64_t all = -1;
  tc_tensor *flat = tc_reshape((tc_tensor *)out, 1, &all);
  tc_tensor *one = tc_contiguous(tc_slice(flat, 0, n - 1, n, 1));
  unsigned char bytes[16];
  tc_status st = one ? tc_to_host(one, bytes, tc_dtype_size(tc_dtype_of(one))) : TC_ERR_INVALID_ARGUMENT;
  tc_scope_close(s);
  return st;
}

tc_status bench_checksum(const tc_tensor *out, double *sum, double *abs_sum) {
  int64_t n = tc_numel(out);
  tc_dtype dt = tc_dtype_of(out);
  *sum = *abs_sum = 0.0;
  if (n <= 0) return TC_OK;
  tc_scope *s = tc_scope_open();
  tc_tensor *f = dt == TC_F64 ? (tc_tensor *)out : tc_to_dtype((tc_tensor *)out, TC_F64);
  double *host = malloc((size_t)n * sizeof(double));
  tc_status st = host && f ? tc_to_host(f, host, (size_t)n * sizeof(double)) : TC_ERR_OUT_OF_MEMORY;
  if (st == TC_OK)
    for (int64_t i = 0; i < n; i++) {
      *sum += host[i];
      *abs_sum += fabs(host[i]);
    }
  free(host);
  tc_scope_close(s);
  return st;
}

tc_status bench_place_inputs(tc_tensor **inputs, int n, const char *backend, bool *on_device) {
  *on_device = false;
  if (!backend || !strcmp(backend, "eager") || n == 0) return TC_OK;
  /* Probe with the first input: a host-memory backend hands back host tensors. */
  tc_tensor *first = tc_to_device(inputs[0], backend);
  if (!first) return TC_ERR_UNAVAILABLE;
  if (!strcmp(tc_device_of(first), "host")) {
    tc_release(first);
    return TC_OK;
  }
  *on_device = true;
  tc_release(inputs[0]);
  inputs[0] = first;
  for (int i = 1; i < n; i++) {
    tc_tensor *d = tc_to_device(inputs[i], backend);
    if (!d) return TC_ERR_UNAVAILABLE;
    tc_release(inputs[i]);
    inputs[i] = d;
  }
  return TC_OK;
}

double bench_bytes(tc_tensor *const *inputs, int n) {
  double b = 0;
  for (int i = 0; i < n; i++) b += (double)tc_numel(inputs[i]) * (double)tc_dtype_size(tc_dtype_of(inputs[i]));
  return b;
}

const char *bench_thread_options(int threads, char *buf, int cap) {
  if (threads <= 0) return NULL;
  snprintf(buf, (size_t)cap, "cpu.threads=%d", threads);
  return buf;
}

void bench_set_threads(int threads) {
  if (threads <= 0) return;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
#ifdef TC_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
#endif
}

int bench_default_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
