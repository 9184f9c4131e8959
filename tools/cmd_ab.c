/* cmd_ab.c — `tc ab`: one model on several backends with the same inputs (tc_ab_compare):
 * a table of errors against the reference and timings, --json, --html, and --bisect to name
 * the first kernel where a disagreeing backend departs from the reference. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab_report.h"
#include "bench.h"
#include "tc_cli.h"

enum { AB_MAX_BACKENDS = 16, AB_MAX_MODELS = 32 };

static void ab_usage(FILE *f) {
  fprintf(f, "usage: tc ab MODEL[,MODEL...]|all [--backends NAME,NAME,...] [options]\n"
             "       tc ab --model-lib FILE --fn NAME --shapes 64x256,256x256 [--backends ...] [options]\n"
             "Runs the model on each backend with the same inputs, compares every output with the reference\n"
             "backend's and times compiles and calls. --backends defaults to every available backend.\n"
             "  --reference NAME    the backend outputs are compared with (default debug-eager)\n"
             "  --size test|cpu|gpu the bundled models' shapes (default test: the reference interpreter is slow)\n"
             "  --inputs random|special  special mixes NaN, +-Inf, -0 and denormals into the first input\n"
             "  --seed N            inputs' seed (default 1)\n"
             "  --iters N, --warmup N, --budget S   steady calls per backend (default 20, 3, within 2 s)\n"
             "  --rtol X, --atol X  the tolerance, over the per-dtype default (f32: 1e-4, 1e-5 of max|ref|)\n"
             "  --options K=V,...   backend options for every compile (tc options BACKEND lists them)\n"
             "  --bisect            for a backend that disagrees, run the plan kernel by kernel on it and on the\n"
             "                      reference and name the first kernel whose outputs diverge\n"
             "  --kernel-sources    also compile each kernel of the plan alone on each backend, for its\n"
             "                      generated source per kernel (in --json and --html)\n"
             "  --cold              compile with an empty disk cache of this run's own (removed afterwards), so\n"
             "                      the cold compile is cold and the warm one is the cache's hit\n"
             "  --json              the report as JSON on stdout, instead of the table\n"
             "  --html FILE         also write the report as one self-contained HTML page\n"
             "Exit status: 0 when every backend ran and agrees with the reference, 1 otherwise, 2 on bad usage.\n");
}

typedef struct ab_args {
  const char *models, *backends, *reference, *size, *inputs, *html, *options;
  const char *lib, *fn, *shapes;
  bool json, bisect, kernel_sources, cold;
  int iters, warmup;
  double budget, rtol, atol;
  uint64_t seed;
} ab_args;

static bool parse_double(const char *k, const char *v, double *out) {
  char *end;
  *out = strtod(v, &end);
  if (end == v || *end || !(*out >= 0)) {
    fprintf(stderr, "tc ab: %s takes a number >= 0 (not '%s')\n", k, v);
    return false;
  }
  return true;
}

static bool parse_int(const char *k, const char *v, int *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (end == v || *end || x < 0 || x > 1000000) {
    fprintf(stderr, "tc ab: %s takes an integer from 0 to 1000000 (not '%s')\n", k, v);
    return false;
  }
  *out = (int)x;
  return true;
}

static bool parse_seed(const char *v, uint64_t *out) {
  char *end;
  *out = strtoull(v, &end, 10);
  if (end == v || *end || v[0] == '-') {
    fprintf(stderr, "tc ab: --seed takes a non-negative integer (not '%s')\n", v);
    return false;
  }
  return true;
}

static int ab_parse(int argc, char **argv, ab_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(k, "-h") || !strcmp(k, "--help")) return ab_usage(stdout), 0;
    if (k[0] != '-') {
      if (a->models) return fprintf(stderr, "tc ab: models go in one list ('%s,%s')\n", a->models, k), 2;
      a->models = k;
      continue;
    }
    if (!strcmp(k, "--json")) {
      a->json = true;
      continue;
    }
    if (!strcmp(k, "--bisect")) {
      a->bisect = true;
      continue;
    }
    if (!strcmp(k, "--cold")) {
      a->cold = true;
      continue;
    }
    if (!strcmp(k, "--kernel-sources")) {
      a->kernel_sources = true;
      continue;
    }
    if (!v) return fprintf(stderr, "tc ab: %s needs a value\n", k), 2;
    bool ok = true;
    if (!strcmp(k, "--backends"))
      a->backends = v;
    else if (!strcmp(k, "--reference"))
      a->reference = v;
    else if (!strcmp(k, "--size"))
      a->size = v;
    else if (!strcmp(k, "--inputs"))
      a->inputs = v;
    else if (!strcmp(k, "--html"))
      a->html = v;
    else if (!strcmp(k, "--options"))
      a->options = v;
    else if (!strcmp(k, "--model-lib"))
      a->lib = v;
    else if (!strcmp(k, "--fn"))
      a->fn = v;
    else if (!strcmp(k, "--shapes"))
      a->shapes = v;
    else if (!strcmp(k, "--seed"))
      ok = parse_seed(v, &a->seed);
    else if (!strcmp(k, "--iters"))
      ok = parse_int(k, v, &a->iters);
    else if (!strcmp(k, "--warmup"))
      ok = parse_int(k, v, &a->warmup), a->warmup = a->warmup ? a->warmup : -1;
    else if (!strcmp(k, "--budget"))
      ok = parse_double(k, v, &a->budget);
    else if (!strcmp(k, "--rtol"))
      ok = parse_double(k, v, &a->rtol);
    else if (!strcmp(k, "--atol"))
      ok = parse_double(k, v, &a->atol);
    else
      return fprintf(stderr, "tc ab: unknown option '%s'\n", k), ab_usage(stderr), 2;
    if (!ok) return 2;
    i++;
  }
  if (a->lib || a->fn || a->shapes) {
    if (!a->lib || !a->fn || !a->shapes)
      return fprintf(
                 stderr,
                 "tc ab: --model-lib, --fn and --shapes go together (the file, the function, its inputs' shapes)\n"),
             2;
    if (a->models) return fprintf(stderr, "tc ab: give a bundled model or --model-lib, not both\n"), 2;
  } else if (!a->models) {
    return ab_usage(stderr), 2;
  }
  if (strcmp(a->inputs, "random") && strcmp(a->inputs, "special"))
    return fprintf(stderr, "tc ab: --inputs must be random or special (not '%s')\n", a->inputs), 2;
  return -1;
}

/* Splits a comma-separated list in place into at most max names. */
static int split_list(char *s, char **out, int max, const char *what) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (n == max) {
      fprintf(stderr, "tc ab: more than %d %s\n", max, what);
      return -1;
    }
    out[n++] = tok;
  }
  if (n == 0) fprintf(stderr, "tc ab: no %s given\n", what);
  return n ? n : -1;
}

/* Every available backend, the reference first. */
static int available_backends(const char *reference, char **out, char *store, size_t cap) {
  tc_backend_info infos[AB_MAX_BACKENDS];
  int n = tc_backend_list(infos, AB_MAX_BACKENDS), k = 0;
  size_t used = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n && i < AB_MAX_BACKENDS; i++) {
      bool is_ref = !strcmp(infos[i].name, reference);
      if (!infos[i].available || is_ref != (pass == 0) || used + strlen(infos[i].name) + 1 > cap) continue;
      out[k++] = strcpy(store + used, infos[i].name);
      used += strlen(infos[i].name) + 1;
    }
  return k;
}

/* The function and its inputs: a bundled model, or a function of a user's shared object. */
typedef struct ab_subject {
  const char *name;
  tc_model_fn fn;
  int n_inputs;
  tc_tensor *inputs[16];
} ab_subject;

static bool subject_bundled(const char *name, const ab_args *a, tc_size_class size, ab_subject *s) {
  const tc_model *m = tc_model_find(name);
  if (!m) {
    int n;
    const tc_model *all = tc_models_all(&n);
    fprintf(stderr, "tc ab: unknown model '%s' (bundled:", name);
    for (int i = 0; i < n; i++)
      fprintf(stderr, " %s", all[i].name);
    fprintf(stderr, ", or all)\n");
    return false;
  }
  s->name = m->name;
  s->fn = m->fn;
  s->n_inputs = m->n_inputs;
  if (m->n_inputs > 16 || m->make_inputs(size, a->seed, s->inputs) != TC_OK) {
    fprintf(stderr, "tc ab: making the inputs of %s: %s\n", name, tc_last_error());
    return false;
  }
  return true;
}

static bool subject_library(const ab_args *a, ab_subject *s) {
  /* The user's own code, loaded as they asked; RTLD_LOCAL keeps its symbols to itself. It stays
   * loaded: compiled functions call into it until the process ends. */
  void *h = dlopen(a->lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "tc ab: --model-lib %s: %s\n", a->lib, dlerror());
    return false;
  }
  void *sym = dlsym(h, a->fn);
  if (!sym) {
    fprintf(stderr, "tc ab: --fn %s: no such function in %s\n", a->fn, a->lib);
    return false;
  }
  s->name = a->fn;
  memcpy(&s->fn, &sym, sizeof sym); /* object pointer to function pointer, as POSIX allows */
  return ab_inputs_from_shapes(a->shapes, a->seed, s->inputs, 16, &s->n_inputs);
}

static void subject_free(ab_subject *s) {
  for (int i = 0; i < 16; i++)
    tc_release(s->inputs[i]);
  memset(s, 0, sizeof *s);
}

/* Every model on every backend, printed and written as asked; the exit status. */
static int ab_models(ab_args a, tc_size_class size) {
  int rc;
  char backend_store[1024], model_store[1024];
  char *backends[AB_MAX_BACKENDS], *models[AB_MAX_MODELS];
  int nb;
  if (!a.backends || !strcmp(a.backends, "all")) {
    nb = available_backends(a.reference, backends, backend_store, sizeof backend_store);
    if (nb == 0) return fprintf(stderr, "tc ab: no backend is available (tc list-backends says why)\n"), 1;
  } else {
    snprintf(backend_store, sizeof backend_store, "%s", a.backends);
    if ((nb = split_list(backend_store, backends, AB_MAX_BACKENDS, "backends")) < 0) return 2;
  }
  int nm = 1;
  if (a.models && !strcmp(a.models, "all")) {
    const tc_model *all = tc_models_all(&nm);
    nm = nm < AB_MAX_MODELS ? nm : AB_MAX_MODELS;
    for (int i = 0; i < nm; i++)
      models[i] = (char *)all[i].name;
  } else if (a.models) {
    snprintf(model_store, sizeof model_store, "%s", a.models);
    if ((nm = split_list(model_store, models, AB_MAX_MODELS, "models")) < 0) return 2;
  }
  tc_ab_options o = {.struct_size = sizeof o,
                     .reference = a.reference,
                     .options = a.options,
                     .warmup = a.warmup,
                     .iters = a.iters,
                     .budget_s = a.budget,
                     .rtol = a.rtol,
                     .atol = a.atol,
                     .bisect = a.bisect,
                     .kernel_sources = a.kernel_sources};
  tc_ab_report *reports[AB_MAX_MODELS] = {0};
  ab_context cxs[AB_MAX_MODELS];
  int n_reports = 0;
  rc = 0;
  for (int i = 0; i < nm && rc != 2; i++) {
    ab_subject s = {0};
    bool ok = a.lib ? subject_library(&a, &s) : subject_bundled(models[i], &a, size, &s);
    if (ok && !strcmp(a.inputs, "special") && ab_inputs_special(s.inputs, s.n_inputs, a.seed) != TC_OK) {
      fprintf(stderr, "tc ab: special inputs for %s: %s\n", s.name, tc_last_error());
      ok = false;
    }
    if (!ok) {
      subject_free(&s);
      rc = 2;
      break;
    }
    o.name = s.name;
    tc_ab_report *r = NULL;
    if (tc_ab_compare(s.fn, s.n_inputs, s.inputs, (const char *const *)backends, nb, &o, &r) != TC_OK) {
      fprintf(stderr, "tc ab: %s\n", tc_last_error());
      rc = tc_last_status() == TC_ERR_INVALID_ARGUMENT ? 2 : 1;
      subject_free(&s);
      continue;
    }
    cxs[n_reports] = (ab_context){.model = s.name,
                                  .source = a.lib ? a.lib : "bundled model",
                                  .size = a.lib ? NULL : bench_size_name(size),
                                  .inputs = a.inputs,
                                  .seed = a.seed};
    reports[n_reports++] = r;
    for (int32_t k = 0; k < r->n_results; k++)
      rc |= r->results[k].status != TC_OK || !r->results[k].pass;
    if (!a.json) {
      ab_print_table(stdout, r, &cxs[n_reports - 1]);
      ab_print_divergences(stdout, r);
      printf("\n");
      fflush(stdout);
    }
    subject_free(&s);
  }
  if (a.json && n_reports) {
    printf("{\"models\": [\n");
    for (int i = 0; i < n_reports; i++) {
      if (i) printf(",\n");
      ab_write_json(stdout, reports[i], &cxs[i]);
    }
    printf("]}\n");
  }
  if (a.html && n_reports) {
    if (ab_write_html(a.html, (const tc_ab_report *const *)reports, cxs, n_reports)) {
      if (!a.json) printf("wrote %s\n", a.html);
    } else {
      rc = 1;
    }
  }
  for (int i = 0; i < n_reports; i++)
    tc_ab_report_free(reports[i]);
  return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path) == 0 ? 0 : -1;
}

int cmd_ab(int argc, char **argv) {
  ab_args a = {.reference = "debug-eager", .size = "test", .inputs = "random", .seed = 1};
  int rc = ab_parse(argc, argv, &a);
  if (rc >= 0) return rc;
  tc_size_class size;
  if (!bench_parse_size(a.size, &size)) {
    fprintf(stderr, "tc ab: --size must be cpu, gpu or test (not '%s')\n", a.size);
    return 2;
  }
  if (!a.cold) return ab_models(a, size);
  /* --cold: a disk cache of our own, empty, set before any backend is loaded (backends read
   * TC_CACHE_DIR when they start), and removed afterwards: it only ever holds what we wrote. */
  char dir[] = "/tmp/tc-ab-cold-XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "tc ab: --cold: cannot make a temporary cache directory: %s\n", strerror(errno));
    return 1;
  }
  setenv("TC_CACHE_DIR", dir, 1);
  rc = ab_models(a, size);
  if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "tc ab: --cold: could not remove %s: %s\n", dir, strerror(errno));
  return rc;
}
