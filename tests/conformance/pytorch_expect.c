/* pytorch_expect.c — reads the embedded expectations (the format is documented at the top of
 * tests/pytorch/gen_expected.py) and compares tc's results with them. */
#include "pytorch_expect.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/pytorch/data/expected.txt, one string per line (tc_kit_embed_text). */
extern const char *const tc_pytorch_expected_lines[];
extern const size_t tc_pytorch_expected_n_lines;

/* ---------------------------------------------------------------- parsing */
bool pt_dtype_parse(const char *s, tc_dtype *out) {
  static const struct {
    const char *name;
    tc_dtype dtype;
  } names[] = {{"f32", TC_F32}, {"f64", TC_F64}, {"i32", TC_I32}, {"i64", TC_I64}, {"bool", TC_BOOL}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(s, names[i].name)) return *out = names[i].dtype, true;
  return false;
}

static int b64_value(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Appends the bytes of one base64 line to t (which knows how many it expects). */
static bool b64_append(pt_tensor *t, size_t *filled, const char *text) {
  unsigned acc = 0;
  int bits = 0;
  for (const char *p = text; *p && *p != '\n'; p++) {
    if (*p == '=') break;
    int v = b64_value(*p);
    if (v < 0) return false;
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (*filled >= t->bytes) return false;
      t->data[(*filled)++] = (unsigned char)(acc >> bits);
    }
  }
  return true;
}

static bool tensor_header(pt_tensor *t, char *rest) {
  char *save = NULL, *tok = strtok_r(rest, " \n", &save);
  if (!tok || !pt_dtype_parse(tok, &t->dtype)) return false;
  tok = strtok_r(NULL, " \n", &save);
  t->rank = tok ? atoi(tok) : -1;
  if (t->rank < 0 || t->rank > TC_MAX_RANK) return false;
  int64_t numel = 1;
  for (int d = 0; d < t->rank; d++) {
    tok = strtok_r(NULL, " \n", &save);
    if (!tok) return false;
    t->sizes[d] = strtoll(tok, NULL, 10);
    numel *= t->sizes[d];
  }
  t->bytes = (size_t)numel * tc_dtype_size(t->dtype);
  t->data = calloc(t->bytes ? t->bytes : 1, 1);
  return t->data != NULL;
}

static bool attr_parse(pt_attr *a, char *rest) {
  char *save = NULL, *tok = strtok_r(rest, " \n", &save);
  if (!tok) return false;
  snprintf(a->key, sizeof a->key, "%s", tok);
  while ((tok = strtok_r(NULL, " \n", &save)) && a->n < PT_MAX_ATTR_VALUES) {
    if (!a->n) snprintf(a->text, sizeof a->text, "%s", tok);
    a->values[a->n++] = strtod(tok, NULL);
  }
  return true;
}

static bool tol_parse(pt_tol *t, const char *rest) {
  char kind[16];
  t->a = t->b = 0;
  if (sscanf(rest, "%15s %lf %lf", kind, &t->a, &t->b) < 1) return false;
  if (!strcmp(kind, "exact"))
    t->kind = PT_TOL_EXACT;
  else if (!strcmp(kind, "ulp"))
    t->kind = PT_TOL_ULP;
  else if (!strcmp(kind, "close"))
    t->kind = PT_TOL_CLOSE;
  else
    return false;
  return true;
}

static pt_case *parsed;
static int n_parsed, cap_parsed;

/* One line of a case; *pending is the tensor whose base64 lines are still coming. */
static bool line_parse(char *line, pt_case **cur, pt_tensor **pending, size_t *filled) {
  line[strcspn(line, "\n")] = 0;
  char *space = strchr(line, ' ');
  char *rest = space ? space + 1 : line + strlen(line);
  if (space) *space = 0;
  if (!strcmp(line, "b64")) return *pending && b64_append(*pending, filled, rest);
  if (*pending && *filled != (*pending)->bytes) return false; /* the last tensor came short */
  *pending = NULL;
  if (!strcmp(line, "case")) {
    if (n_parsed == cap_parsed) {
      int cap = cap_parsed ? 2 * cap_parsed : 256;
      pt_case *grown = realloc(parsed, sizeof *parsed * (size_t)cap);
      if (!grown) return false;
      parsed = grown;
      cap_parsed = cap;
    }
    *cur = memset(&parsed[n_parsed++], 0, sizeof *parsed);
    return sscanf(rest, "%79s %39s", (*cur)->name, (*cur)->op) == 2;
  }
  pt_case *pc = *cur;
  if (!pc) return !strcmp(line, "tcpt") && atoi(rest) == 1;
  if (!strcmp(line, "end")) return *cur = NULL, true;
  if (!strcmp(line, "attr")) return pc->n_attrs < PT_MAX_ATTRS && attr_parse(&pc->attrs[pc->n_attrs++], rest);
  if (!strcmp(line, "tol")) return tol_parse(&pc->tol, rest);
  pt_tensor *t = !strcmp(line, "in") && pc->n_in < PT_MAX_TENSORS       ? &pc->in[pc->n_in++]
                 : !strcmp(line, "out") && pc->n_out < PT_MAX_TENSORS   ? &pc->out[pc->n_out++]
                 : !strcmp(line, "grad") && pc->n_grad < PT_MAX_TENSORS ? &pc->grad[pc->n_grad++]
                                                                        : NULL;
  if (!t || !tensor_header(t, rest)) return false;
  *pending = t;
  *filled = 0;
  return true;
}

static void parse_all(void) {
  pt_case *cur = NULL;
  pt_tensor *pending = NULL;
  size_t filled = 0;
  for (size_t i = 0; i < tc_pytorch_expected_n_lines; i++) {
    char *line = strdup(tc_pytorch_expected_lines[i]);
    bool ok = line && line_parse(line, &cur, &pending, &filled);
    free(line);
    if (!ok) {
      fprintf(stderr, "tc conformance: tests/pytorch/data/expected.txt line %zu is malformed; no PyTorch case runs\n",
              i + 1);
      n_parsed = 0; /* the parsed cases' buffers stay: they live as long as the process anyway */
      return;
    }
  }
}

static pthread_once_t parse_once = PTHREAD_ONCE_INIT;

const pt_case *pt_cases(int *n) {
  pthread_once(&parse_once, parse_all);
  *n = n_parsed;
  return parsed;
}

const pt_attr *pt_attr_find(const pt_case *pc, const char *key) {
  for (int i = 0; i < pc->n_attrs; i++)
    if (!strcmp(pc->attrs[i].key, key)) return &pc->attrs[i];
  return NULL;
}

tc_tensor *pt_tensor_make(const pt_tensor *t) {
  return tc_from_host(t->data, t->dtype, t->rank, t->sizes);
}

/* ---------------------------------------------------------------- checking */
/* The spacing of floats of dtype dt at |w| (the smallest one for zero and subnormals). */
static double ulp_of(tc_dtype dt, double w) {
  int mant = dt == TC_F32 ? 23 : 52, min_exp = dt == TC_F32 ? -126 : -1022;
  int e = w == 0 ? min_exp : ilogb(w);
  return ldexp(1.0, (e < min_exp ? min_exp : e) - mant);
}

static bool element_ok(tc_dtype dt, const unsigned char *g_raw, const unsigned char *w_raw, pt_tol tol, double scale) {
  size_t size = tc_dtype_size(dt);
  double g = conf_element_as_double(dt, g_raw), w = conf_element_as_double(dt, w_raw);
  if (dt != TC_F32 && dt != TC_F64) return !memcmp(g_raw, w_raw, size); /* ints and bools: exactly */
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (tol.kind == PT_TOL_EXACT) return !memcmp(g_raw, w_raw, size); /* keeps -0 and denormals apart */
  if (isinf(w) || isinf(g)) return g == w;
  double err = fabs(g - w);
  if (tol.kind == PT_TOL_ULP) return err <= tol.a * ulp_of(dt, w) || err <= tol.b;
  return err <= tol.b * scale + tol.a * fabs(w);
}

static bool same_type(conf_ctx *c, const char *what, const tc_tensor *got, const pt_tensor *want) {
  int64_t sizes[TC_MAX_RANK];
  int rank = tc_rank(got);
  bool same = rank == want->rank && tc_dtype_of(got) == want->dtype;
  for (int d = 0; d < rank && d < TC_MAX_RANK; d++) {
    sizes[d] = tc_size(got, d);
    same = same && d < want->rank && sizes[d] == want->sizes[d];
  }
  if (!same) {
    char a[128], b[128];
    conf_shape_text(a, sizeof a, rank, sizes);
    conf_shape_text(b, sizeof b, want->rank, want->sizes);
    conf_fail(c, "%s: got %s %s, PyTorch %s %s", what, tc_dtype_name(tc_dtype_of(got)), a, tc_dtype_name(want->dtype),
              b);
  }
  return same;
}

static bool f32_subnormal(const unsigned char *raw) {
  float f;
  memcpy(&f, raw, sizeof f);
  return f != 0 && fpclassify(f) == FP_SUBNORMAL;
}

/* Whether element i of the output reads an f32 subnormal, or is one in PyTorch's result. */
static bool reads_subnormal(const pt_case *pc, const pt_tensor *want, size_t i) {
  if (want->dtype == TC_F32 && f32_subnormal(want->data + i * 4)) return true;
  size_t n_out = tc_dtype_size(want->dtype) ? want->bytes / tc_dtype_size(want->dtype) : 0;
  for (int k = 0; k < pc->n_in; k++) {
    const pt_tensor *t = &pc->in[k];
    if (t->dtype != TC_F32) continue;
    size_t n = t->bytes / 4;
    if (n == n_out) {
      if (f32_subnormal(t->data + i * 4)) return true;
    } else {
      for (size_t j = 0; j < n; j++)
        if (f32_subnormal(t->data + j * 4)) return true;
    }
  }
  return false;
}

static bool check(conf_ctx *c, const char *what, const tc_tensor *got, const pt_case *pc, const pt_tensor *want,
                  pt_tol tol, bool flushes);

bool pt_check(conf_ctx *c, const char *what, const tc_tensor *got, const pt_tensor *want, pt_tol tol) {
  return check(c, what, got, NULL, want, tol, false);
}

bool pt_check_flushing(conf_ctx *c, const char *what, const tc_tensor *got, const pt_case *pc, const pt_tensor *want,
                       bool flushes) {
  return check(c, what, got, pc, want, pc->tol, flushes);
}

static tc_tensor *add2(tc_tensor *a, tc_tensor *b) { return tc_add(a, b); }

/* The probe compiles with the run's own options: with vulkan.f32_subnormals=emulate (or auto
 * choosing it) the backend keeps subnormals on a flushing device, and nothing is excused. */
bool pt_backend_flushes_subnormals(const char *backend) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char names[8][256];
  static bool answers[8];
  static int n;
  if (!backend || !strcmp(backend, "eager")) return false;
  const char *options = conf_get_options();
  char key[256];
  snprintf(key, sizeof key, "%s %s", backend, options ? options : "");
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], key)) {
      bool a = answers[i];
      pthread_mutex_unlock(&lock);
      return a;
    }
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = "subnormal_probe", .options = options};
  tc_compiled *f = tc_compile(TC_FN(add2), 2, &o);
  float x = 1e-40f, zero = 0.0f, r = -1.0f;
  int64_t one = 1;
  tc_tensor *a = tc_from_host(&x, TC_F32, 1, &one), *b = tc_from_host(&zero, TC_F32, 1, &one);
  tc_tensor *y = f && a && b ? tc_call(f, (tc_tensor *[]){a, b}) : NULL;
  bool flushes = y && tc_to_host(y, &r, sizeof r) == TC_OK && r == 0.0f;
  tc_release(y);
  tc_release(a);
  tc_release(b);
  tc_compiled_free(f);
  tc_error_clear();
  if (n < 8) {
    snprintf(names[n], sizeof names[n], "%s", key);
    answers[n++] = flushes;
  }
  pthread_mutex_unlock(&lock);
  return flushes;
}

static bool check(conf_ctx *c, const char *what, const tc_tensor *got, const pt_case *pc, const pt_tensor *want,
                  pt_tol tol, bool flushes) {
  if (!got) {
    conf_fail(c, "%s: no result", what);
    return false;
  }
  if (!same_type(c, what, got, want)) return false;
  unsigned char *host = malloc(want->bytes ? want->bytes : 1);
  if (!host || tc_to_host(got, host, want->bytes) != TC_OK) {
    conf_fail(c, "%s: reading the result: %s", what, host ? tc_last_error() : "out of memory");
    free(host);
    return false;
  }
  size_t size = tc_dtype_size(want->dtype);
  size_t n = size ? want->bytes / size : 0;
  double scale = 1.0; /* close: atol is relative to the result's largest finite magnitude */
  for (size_t i = 0; i < n; i++) {
    double w = fabs(conf_element_as_double(want->dtype, want->data + i * size));
    if (isfinite(w) && w > scale) scale = w;
  }
  bool ok = true;
  size_t flushed = 0, first_flushed = 0;
  for (size_t i = 0; ok && i < n; i++)
    if (!element_ok(want->dtype, host + i * size, want->data + i * size, tol, scale)) {
      if (flushes && pc && reads_subnormal(pc, want, i)) {
        if (!flushed++) first_flushed = i;
        continue;
      }
      static const char *const kinds[] = {"exact", "ulp", "close"};
      int digits = want->dtype == TC_F64 ? 17 : 9; /* enough to tell neighbouring values apart */
      conf_fail(c, "%s: element %zu of %zu: got %.*g, PyTorch %.*g (%s %g %g)", what, i, n, digits,
                conf_element_as_double(want->dtype, host + i * size), digits,
                conf_element_as_double(want->dtype, want->data + i * size), kinds[tol.kind], tol.a, tol.b);
      ok = false;
    }
  if (ok && flushed) {
    int digits = want->dtype == TC_F64 ? 17 : 9;
    conf_known_difference(c, "this device flushes f32 subnormals to zero (its driver cannot preserve them: Vulkan's "
                             "shaderDenormPreserveFloat32 is false) and this run keeps f32 native "
                             "(vulkan.f32_subnormals); only elements that read or make a subnormal differ");
    conf_fail(c, "%s: %zu of %zu elements differ, each reading or making a subnormal; the first, %zu: got %.*g, PyTorch %.*g",
              what, flushed, n, first_flushed, digits, conf_element_as_double(want->dtype, host + first_flushed * size),
              digits, conf_element_as_double(want->dtype, want->data + first_flushed * size));
    ok = false;
  }
  free(host);
  return ok;
}
