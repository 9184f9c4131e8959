/* ab_json.c — `tc ab --json`: the whole report as one JSON object (times in seconds; NaN,
 * for times never taken, as null). */
#include "ab_report.h"
#include "tc_cli.h"

static void key(FILE *f, const char *k, bool first) {
  fputs(first ? "" : ", ", f);
  cli_json_str(f, k);
  fputs(": ", f);
}

static void kv_str(FILE *f, const char *k, const char *v) {
  key(f, k, false);
  cli_json_str(f, v);
}

static void kv_num(FILE *f, const char *k, double v) {
  key(f, k, false);
  cli_json_num(f, v);
}

static void kv_int(FILE *f, const char *k, long long v) {
  key(f, k, false);
  fprintf(f, "%lld", v);
}

static void kv_bool(FILE *f, const char *k, bool v) {
  key(f, k, false);
  fputs(v ? "true" : "false", f);
}

static void divergence(FILE *f, const tc_ab_report *r, const tc_ab_divergence *d) {
  key(f, "divergence", false);
  if (!d) {
    fputs("null", f);
    return;
  }
  fputs("{", f);
  key(f, "kernel", true);
  fprintf(f, "%d", (int)d->kernel);
  kv_str(f, "kernel_name", d->kernel >= 0 && d->kernel < r->n_kernels ? r->kernels[d->kernel].name : NULL);
  kv_str(f, "note", d->note);
  kv_num(f, "max_abs_err", d->max_abs_err);
  kv_num(f, "max_rel_err", d->max_rel_err);
  kv_int(f, "element", d->element);
  kv_num(f, "ref_value", d->ref_value);
  kv_num(f, "value", d->value);
  kv_str(f, "inputs", d->inputs_text);
  kv_str(f, "ref_source", d->ref_source);
  kv_str(f, "source", d->source);
  fputs("}", f);
}

void ab_write_json(FILE *f, const tc_ab_report *r, const ab_context *cx) {
  fputs("{", f);
  key(f, "model", true);
  cli_json_str(f, cx->model);
  kv_str(f, "source", cx->source);
  kv_str(f, "size", cx->size);
  kv_str(f, "inputs", cx->inputs);
  kv_int(f, "seed", (long long)cx->seed);
  kv_str(f, "reference", r->reference);
  kv_str(f, "output", r->output);
  key(f, "results", false);
  fputs("[", f);
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    fputs(i ? ",\n  {" : "\n  {", f);
    key(f, "backend", true);
    cli_json_str(f, x->backend);
    kv_str(f, "result", ab_verdict(r, x));
    kv_str(f, "status", tc_status_name(x->status));
    kv_str(f, "error", x->error);
    if (x->status == TC_OK) {
      kv_bool(f, "pass", x->pass);
      kv_num(f, "rtol", x->rtol);
      kv_num(f, "atol", x->atol);
      kv_int(f, "n_elements", x->n_elements);
      kv_int(f, "n_failed", x->n_failed);
      kv_num(f, "max_abs_err", x->max_abs_err);
      kv_num(f, "max_rel_err", x->max_rel_err);
      kv_int(f, "max_ulp", x->max_ulp);
      kv_int(f, "nan_mismatches", x->nan_mismatches);
      kv_int(f, "inf_mismatches", x->inf_mismatches);
      kv_int(f, "n_nonfinite", x->n_nonfinite);
      kv_num(f, "cold_compile_s", x->cold_compile_s);
      kv_bool(f, "cold_cache_hit", x->cold_cache_hit);
      kv_num(f, "warm_compile_s", x->warm_compile_s);
      kv_bool(f, "warm_cache_hit", x->warm_cache_hit);
      kv_num(f, "first_call_s", x->first_call_s);
      kv_num(f, "median_s", x->median_s);
      kv_num(f, "min_s", x->min_s);
      kv_num(f, "max_s", x->max_s);
      kv_int(f, "n_calls", x->n_calls);
      kv_int(f, "n_graphs", x->n_graphs);
      kv_int(f, "n_kernels", x->n_kernels);
      kv_str(f, "generated_source", x->source);
      divergence(f, r, x->divergence);
      key(f, "kernel_sources", false);
      fputs("[", f);
      for (int32_t k = 0; k < x->n_kernel_sources; k++) {
        fputs(k ? ", " : "", f);
        cli_json_str(f, x->kernel_sources[k]);
      }
      fputs("]", f);
    }
    fputs("}", f);
  }
  fputs("],\n", f);
  cli_json_str(f, "kernels");
  fputs(": [", f);
  for (int32_t k = 0; k < r->n_kernels; k++) {
    const tc_ab_kernel *kk = &r->kernels[k];
    fputs(k ? ",\n  {" : "\n  {", f);
    key(f, "name", true);
    cli_json_str(f, kk->name);
    kv_str(f, "prims", kk->prims);
    kv_str(f, "reads", kk->reads);
    kv_str(f, "output", kk->output);
    fputs("}", f);
  }
  fputs("]}\n", f);
}
