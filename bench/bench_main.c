/* bench_main.c — `tc bench`: parses the command line, measures each model (bench_model.c,
 * bench_dyn_attn.c) and reports (bench_report.c). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_driver.h"

enum { MAIN_MAX_MODELS = 32 };

static const char *const main_default_models[] = {"ln_gelu", "softmax", "mlp", "attn_block", "tiny_mlp_b1"};

bool bench_parse_size(const char *s, tc_size_class *out) {
  if (!strcmp(s, "cpu")) *out = TC_SIZE_CPU;
  else if (!strcmp(s, "gpu")) *out = TC_SIZE_GPU;
  else if (!strcmp(s, "test")) *out = TC_SIZE_TEST;
  else return false;
  return true;
}

const char *bench_size_name(tc_size_class s) { return s == TC_SIZE_GPU ? "gpu" : s == TC_SIZE_TEST ? "test" : "cpu"; }

double bench_figure(const tc_model *m, tc_size_class size, double seconds) {
  double work = m->work ? m->work(size) : 0.0;
  if (!(seconds > 0)) return 0.0;
  if (!strcmp(m->unit, "GB/s")) return work / seconds / 1e9;
  if (!strcmp(m->unit, "TF/s")) return work / seconds / 1e12;
  if (!strcmp(m->unit, "us")) return seconds * 1e6;
  return seconds * 1e3; /* ms */
}

tc_size_class bench_default_size(const char *backend) {
  tc_backend_info infos[32];
  int n = tc_backend_list(infos, 32);
  for (int i = 0; i < n && i < 32; i++)
    if (!strcmp(infos[i].name, backend) && infos[i].n_devices > 0) {
      int type = infos[i].devices[0].type;
      if (type == TC_DEVICE_DISCRETE_GPU || type == TC_DEVICE_INTEGRATED_GPU) return TC_SIZE_GPU;
    }
  return TC_SIZE_CPU;
}

static int main_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

static void main_usage(FILE *f) {
  fprintf(f,
          "usage: tc bench [--backend NAME] [--size cpu|gpu|test] [--models a,b,...] [--json]\n"
          "                [--threads N] [--iters N] [--warmup N] [--budget SECONDS] [--no-eager]\n"
          "                [--eager-limit SECONDS] [--dynamic auto|on|off] [--mode MODE]\n"
          "Models: the bundled ones (tc models) and dyn_attn. Default: ln_gelu, softmax, mlp, attn_block,\n"
          "tiny_mlp_b1, and dyn_attn with --size gpu. Eager runs on the eager backend ($TC_EAGER_BACKEND,\n"
          "default debug-eager, the reference interpreter) in a child process stopped after --eager-limit\n"
          "seconds (default 30). --dynamic, --mode: tc_compile's options for every compile\n"
          "(default auto, default).\n");
}

typedef struct main_args {
  const char *backend, *size, *models, *child;
  bench_config cfg;
} main_args;

static int main_parse(int argc, char **argv, main_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = true;
    if (!strcmp(k, "--json")) a->cfg.json = true, takes = false;
    else if (!strcmp(k, "--no-eager")) a->cfg.eager = false, takes = false;
    else if (!strcmp(k, "-h") || !strcmp(k, "--help")) return main_usage(stdout), 0;
    else if (!v) return fprintf(stderr, "tc bench: %s needs a value\n", k), 2;
    else if (!strcmp(k, "--backend")) a->backend = v;
    else if (!strcmp(k, "--size")) a->size = v;
    else if (!strcmp(k, "--models")) a->models = v;
    else if (!strcmp(k, "--child")) a->child = v;
    else if (!strcmp(k, "--threads")) a->cfg.threads = atoi(v);
    else if (!strcmp(k, "--iters")) a->cfg.timing.iters = atoi(v);
    else if (!strcmp(k, "--warmup")) a->cfg.timing.warmup = atoi(v);
    else if (!strcmp(k, "--budget")) a->cfg.timing.budget_s = atof(v);
    else if (!strcmp(k, "--eager-limit")) a->cfg.eager_limit_s = atof(v);
    else if (!strcmp(k, "--dynamic")) {
      if (!bench_parse_dynamic(v, &a->cfg.dynamic))
        return fprintf(stderr, "tc bench: --dynamic %s: expected auto, on or off\n", v), 2;
      bench_set_dynamic(a->cfg.dynamic);
    } else if (!strcmp(k, "--mode")) {
      if (!bench_parse_mode(v, &a->cfg.mode))
        return fprintf(stderr, "tc bench: --mode %s: expected default, reduce-overhead, max-autotune or "
                               "max-autotune-no-cudagraphs\n", v), 2;
      bench_set_mode(a->cfg.mode);
    } else return fprintf(stderr, "tc bench: unknown option '%s'\n", k), main_usage(stderr), 2;
    if (takes) i++;
  }
  if (a->cfg.timing.iters < 1) a->cfg.timing.iters = 1;
  if (a->cfg.timing.warmup < 0) a->cfg.timing.warmup = 0;
  return -1;
}

/* Splits the --models list; names are checked against the bundled models and dyn_attn. */
static int main_models(const char *list, const char **names, int cap) {
  int n = 0;
  if (!list) {
    for (size_t i = 0; i < sizeof main_default_models / sizeof *main_default_models; i++)
      names[n++] = main_default_models[i];
    return n;
  }
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "dyn_attn") && !tc_model_find(t)) {
      fprintf(stderr, "tc bench: unknown model '%s' (see tc models; dyn_attn is also known)\n", t);
      return -1;
    }
    names[n++] = t;
  }
  return n;
}

int bench_main(int argc, char **argv) {
  main_args a = {.cfg = {.eager = true,
                         .eager_limit_s = 30,
                         .timing = {.warmup = 3, .iters = 50, .min_iters = 5, .budget_s = 2.0, .group_s = BENCH_GROUP_S},
                         .eager_timing = {.warmup = 0, .iters = 5, .min_iters = 1, .budget_s = 3.0}}};
  int rc = main_parse(argc, argv, &a);
  if (rc >= 0) return rc;
  if (a.cfg.threads <= 0) a.cfg.threads = bench_default_threads();
  tc_size_class size = TC_SIZE_CPU;
  if (a.size && !bench_parse_size(a.size, &size)) {
    fprintf(stderr, "tc bench: --size must be cpu, gpu or test (not '%s')\n", a.size);
    return 2;
  }
  a.cfg.size = size;
  if (!a.child) bench_env_prepare(argc, argv, a.cfg.threads);
  if (a.child) return bench_child_main(a.child, a.models ? a.models : "", a.backend ? a.backend : "auto", &a.cfg);

  /* Everything this run compiles goes under one temp folder, removed at the end: the
   * parent's own cache and one fresh cache per model for the cold / warm child processes. Set
   * before anything loads a plugin, which reads TC_CACHE_DIR once. */
  const char *tmp = getenv("TMPDIR");
  char root[4096], parent_cache[4200];
  snprintf(root, sizeof root, "%s/tc-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    perror("tc bench: cannot create a temp folder");
    return 1;
  }
  snprintf(parent_cache, sizeof parent_cache, "%s/parent", root);
  mkdir(parent_cache, 0700);
  setenv("TC_CACHE_DIR", parent_cache, 1);
  a.cfg.tmp_root = root;

  const char *backend = a.backend && strcmp(a.backend, "auto") ? a.backend : tc_backend_auto();
  rc = 0;
  if (!backend) {
    fprintf(stderr, "tc bench: no backend available: %s\n", tc_last_error());
    rc = 1;
  } else if (!strcmp(backend, "eager")) {
    fprintf(stderr, "tc bench: measures a compiled backend (eager is its baseline); name one, or omit --backend\n");
    rc = 2;
  }
  const char *names[MAIN_MAX_MODELS];
  int n = rc ? 0 : main_models(a.models, names, MAIN_MAX_MODELS);
  if (n < 0) rc = 2;
  if (!rc) {
    a.cfg.backend = backend;
    a.cfg.size = a.size ? size : bench_default_size(backend);
    if (!a.models && a.cfg.size == TC_SIZE_GPU) names[n++] = "dyn_attn";
    char opt_buf[64];
    a.cfg.options = bench_thread_options(a.cfg.threads, opt_buf, sizeof opt_buf);
    bench_set_threads(a.cfg.threads);
    static bench_result results[MAIN_MAX_MODELS];
    for (int i = 0; i < n; i++) {
      /* Progress goes to stderr in every mode, so a run cut short by a time limit still says how
       * far it got and how long each model took. */
      double t0 = bench_now();
      fprintf(stderr, "tc bench: %s ...\n", names[i]);
      if (!strcmp(names[i], "dyn_attn")) bench_dyn_attn_measure(&a.cfg, &results[i]);
      else bench_model_measure(&a.cfg, tc_model_find(names[i]), &results[i]);
      fprintf(stderr, "tc bench: %s done in %.1f s%s%s\n", names[i], bench_now() - t0,
              results[i].error[0] ? ": " : "", results[i].error);
      if (results[i].error[0]) rc = 1;
    }
    bench_report(&a.cfg, results, n);
  }
  nftw(root, main_rm, 16, FTW_DEPTH | FTW_PHYS);
  return rc;
}
