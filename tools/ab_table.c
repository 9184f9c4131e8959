/* ab_table.c — `tc ab` on the terminal: one row per backend (errors against the reference and
 * times), then what the bisector found. */
#include <math.h>
#include <string.h>

#include "ab_report.h"
#include "tc_cli.h"

const char *ab_verdict(const tc_ab_report *r, const tc_ab_result *x) {
  if (x->status != TC_OK) return "error";
  if (!strcmp(x->backend, r->reference)) return "ref";
  return x->pass ? "pass" : "FAIL";
}

void ab_print_table(FILE *f, const tc_ab_report *r, const ab_context *cx) {
  fprintf(f, "tc ab %s (%s%s%s, %s inputs, seed %llu): output %s, reference %s, %d kernel%s in the plan\n", cx->model,
          cx->source, cx->size ? ", size " : "", cx->size ? cx->size : "", cx->inputs, (unsigned long long)cx->seed,
          r->output, r->reference, (int)r->n_kernels, r->n_kernels == 1 ? "" : "s");
  fprintf(f, "%-14s %-6s %10s %10s %9s %7s %12s %12s %12s %11s %11s %11s %5s\n", "backend", "result", "max abs",
          "max rel", "max ULP", "NaN/Inf", "cold compile", "warm compile", "first call", "median", "min", "max",
          "calls");
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    if (x->status != TC_OK) {
      fprintf(f, "%-14s %-6s %s\n", x->backend, ab_verdict(r, x), x->error ? x->error : "failed");
      continue;
    }
    char cold[24], warm[24], first[24], med[24], mn[24], mx[24], nanf[24];
    snprintf(nanf, sizeof nanf, "%lld/%lld", (long long)x->nan_mismatches, (long long)x->inf_mismatches);
    fprintf(f, "%-14s %-6s %10.3g %10.3g %9lld %7s %10s%s %10s%s %12s %11s %11s %11s %5d\n", x->backend,
            ab_verdict(r, x), x->max_abs_err, x->max_rel_err, (long long)x->max_ulp, nanf,
            cli_time_str(x->cold_compile_s, cold, sizeof cold), x->cold_cache_hit ? " c" : "  ",
            cli_time_str(x->warm_compile_s, warm, sizeof warm), x->warm_cache_hit ? " c" : "  ",
            cli_time_str(x->first_call_s, first, sizeof first), cli_time_str(x->median_s, med, sizeof med),
            cli_time_str(x->min_s, mn, sizeof mn), cli_time_str(x->max_s, mx, sizeof mx), (int)x->n_calls);
  }
  const tc_ab_result *any = NULL;
  for (int32_t i = 0; i < r->n_results && !any; i++)
    if (r->results[i].status == TC_OK) any = &r->results[i];
  if (any)
    fprintf(f,
            "pass: |out - ref| <= %g * max|ref| + %g * |ref| everywhere, NaN/Inf in the same places; "
            "c: the compile was served by the backend's disk cache; times are device-synchronized\n",
            any->atol, any->rtol);
}

/* Each line of text, after prefix. */
static void print_lines(FILE *f, const char *prefix, const char *text) {
  for (const char *p = text ? text : ""; *p;) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    fprintf(f, "%s%.*s\n", prefix, len, p);
    p += len + (nl ? 1 : 0);
  }
}

static void print_source(FILE *f, const char *label, const char *backend, const char *src) {
  fprintf(f, "  %s source (%s):%s\n", label, backend, src ? "" : " none exposed");
  print_lines(f, "    | ", src);
}

void ab_print_divergences(FILE *f, const tc_ab_report *r) {
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    const tc_ab_divergence *d = x->divergence;
    if (!d) continue;
    fprintf(f, "\nbisect %s against %s: %s\n", x->backend, r->reference, d->note ? d->note : "");
    if (d->kernel < 0 || d->kernel >= r->n_kernels) continue;
    const tc_ab_kernel *k = &r->kernels[d->kernel];
    fprintf(f, "  kernel %s: prims %s\n  reads %s; writes %s\n  max abs err %.3g, max rel err %.3g\n", k->name,
            k->prims, k->reads[0] ? k->reads : "nothing", k->output, d->max_abs_err, d->max_rel_err);
    fprintf(f, "  inputs (the same on both backends):\n");
    print_lines(f, "    ", d->inputs_text);
    print_source(f, "reference", r->reference, d->ref_source);
    print_source(f, "diverging", x->backend, d->source);
  }
}
