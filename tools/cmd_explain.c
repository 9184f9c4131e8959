/* cmd_explain.c — `tc explain MODEL`: compiles a bundled model, calls it once, and reports what
 * tc_compile did: graphs, graph breaks with their reasons, ops, kernels, guards, compile times
 * (text, --json, or --dot for Graphviz: the prims coloured by the kernel that computes them;
 * --svg FILE renders that with Graphviz's dot when it is installed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_cli.h"
#include "tc_models.h"

static void explain_usage(FILE *f) {
  fprintf(f, "usage: tc explain MODEL [--backend NAME] [--size test|cpu|gpu] [--dynamic auto|on|off]\n"
             "                     [--fullgraph] [--json | --dot | --svg FILE]\n");
}

typedef struct explain_args {
  const char *model, *backend, *size, *dynamic, *svg;
  bool json, dot, fullgraph;
} explain_args;

static int explain_parse(int argc, char **argv, explain_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(k, "-h") || !strcmp(k, "--help")) return explain_usage(stdout), 0;
    if (k[0] != '-') {
      if (a->model) return fprintf(stderr, "tc explain: one model at a time ('%s' and '%s')\n", a->model, k), 2;
      a->model = k;
      continue;
    }
    if (!strcmp(k, "--json")) { a->json = true; continue; }
    if (!strcmp(k, "--dot")) { a->dot = true; continue; }
    if (!strcmp(k, "--fullgraph")) { a->fullgraph = true; continue; }
    if (!v) return fprintf(stderr, "tc explain: %s needs a value\n", k), 2;
    if (!strcmp(k, "--backend")) a->backend = v;
    else if (!strcmp(k, "--size")) a->size = v;
    else if (!strcmp(k, "--dynamic")) a->dynamic = v;
    else if (!strcmp(k, "--svg")) a->svg = v, a->dot = true;
    else return fprintf(stderr, "tc explain: unknown option '%s'\n", k), explain_usage(stderr), 2;
    i++;
  }
  if (!a->model) return explain_usage(stderr), 2;
  if (a->json && a->dot) return fprintf(stderr, "tc explain: --json and --dot are exclusive\n"), 2;
  return -1;
}

/* Renders DOT text to an SVG file with Graphviz's dot. */
static int explain_svg(const char *dot_text, const char *path) {
  if (system("command -v dot >/dev/null 2>&1") != 0) {
    fprintf(stderr, "tc explain: --svg needs Graphviz's dot (Debian: apt-get install graphviz); --dot prints the "
                    "DOT text instead\n");
    return 1;
  }
  char cmd[4200];
  if (strchr(path, '\'')) return fprintf(stderr, "tc explain: --svg %s: a quote in the path\n", path), 1;
  snprintf(cmd, sizeof cmd, "dot -Tsvg -o '%s'", path);
  FILE *p = popen(cmd, "w");
  if (!p) return fprintf(stderr, "tc explain: cannot run dot\n"), 1;
  fputs(dot_text, p);
  int st = pclose(p);
  if (st != 0) return fprintf(stderr, "tc explain: dot failed writing %s\n", path), 1;
  fprintf(stderr, "tc explain: wrote %s\n", path);
  return 0;
}

static void explain_list_models(void) {
  int n = 0;
  const tc_model *all = tc_models_all(&n);
  fprintf(stderr, "known models:");
  for (int i = 0; i < n; i++) fprintf(stderr, " %s", all[i].name);
  fprintf(stderr, "\n");
}

int cmd_explain(int argc, char **argv) {
  explain_args a = {.backend = "auto", .size = "test", .dynamic = "auto"};
  int rc = explain_parse(argc, argv, &a);
  if (rc >= 0) return rc;
  const tc_model *m = tc_model_find(a.model);
  if (!m) {
    fprintf(stderr, "tc explain: unknown model '%s'\n", a.model);
    explain_list_models();
    return 2;
  }
  tc_size_class size;
  if (!strcmp(a.size, "test")) size = TC_SIZE_TEST;
  else if (!strcmp(a.size, "cpu")) size = TC_SIZE_CPU;
  else if (!strcmp(a.size, "gpu")) size = TC_SIZE_GPU;
  else return fprintf(stderr, "tc explain: --size is test, cpu or gpu (got '%s')\n", a.size), 2;
  int32_t dynamic;
  if (!strcmp(a.dynamic, "auto")) dynamic = TC_DYNAMIC_AUTO;
  else if (!strcmp(a.dynamic, "on")) dynamic = TC_DYNAMIC_ON;
  else if (!strcmp(a.dynamic, "off")) dynamic = TC_DYNAMIC_OFF;
  else return fprintf(stderr, "tc explain: --dynamic is auto, on or off (got '%s')\n", a.dynamic), 2;

  tc_tensor *inputs[16] = {0};
  if (m->n_inputs > 16 || m->make_inputs(size, 1, inputs) != TC_OK) {
    fprintf(stderr, "tc explain: making the inputs of %s failed: %s\n", m->name, tc_last_error());
    return 1;
  }
  tc_compile_options opts = {.struct_size = sizeof opts, .backend = a.backend, .fullgraph = a.fullgraph,
                             .dynamic = dynamic, .name = m->name};
  tc_compiled *c = tc_compile(m->fn, m->n_inputs, &opts);
  int status = 0;
  if (!c) {
    fprintf(stderr, "tc explain: %s\n", tc_last_error());
    status = 1;
  } else {
    tc_tensor *out = tc_call(c, inputs);
    if (!out) {
      /* Still explain what was compiled before the failure. */
      fprintf(stderr, "tc explain: calling %s failed: %s\n", m->name, tc_last_error());
      status = 1;
    }
    tc_release(out);
    char *text = a.dot ? tc_compiled_dot(c) : tc_compiled_explain(c, a.json);
    if (!text) {
      fprintf(stderr, "tc explain: %s\n", tc_last_error());
      status = 1;
    } else if (a.svg) {
      if (explain_svg(text, a.svg) != 0) status = 1;
      free(text);
    } else {
      fputs(text, stdout);
      free(text);
    }
    tc_compiled_free(c);
  }
  for (int i = 0; i < m->n_inputs; i++) tc_release(inputs[i]);
  return status;
}
