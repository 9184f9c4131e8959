/* ab_run.c — tc_ab_compare: one function on several backends with the same inputs, each
 * output compared with the reference backend's, each backend timed (compiles, first call,
 * steady calls), and the report that holds it all. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"

/* One backend's run, kept until the report is done: the bisector needs its compiled function. */
typedef struct ab_row {
  tc_ab_result *r;
  tc_compiled *c;
  tc_tensor **ins; /* the inputs, copied to its memory */
  tc_tensor *out;  /* the first call's output */
} ab_row;

typedef struct ab_run {
  tc_model_fn fn;
  int n_inputs;
  tc_tensor *const *inputs;
  tc_ab_options o;
} ab_run;

static tc_status row_fail(tc_ab_result *r, const char *what) {
  char msg[1280];
  r->status = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  snprintf(msg, sizeof msg, "%s: %s", what, tc_last_error());
  free((char *)r->error);
  r->error = strdup(msg);
  return r->status;
}

static tc_compiled *compile_for(const ab_run *run, const char *backend) {
  tc_compile_options co = {
      .struct_size = sizeof co, .backend = backend, .name = run->o.name, .options = run->o.options};
  return tc_compile(run->fn, run->n_inputs, &co);
}

/* A call that has finished on the device when it returns, as timings need. */
static tc_tensor *call_synced(tc_compiled *c, tc_tensor *const *ins) {
  tc_tensor *y = tc_call(c, ins);
  if (y && backend_synchronize(c->backend) != TC_OK) {
    tc_release(y);
    return NULL;
  }
  return y;
}

static const cap_entry *newest_entry(const tc_compiled *c) {
  return c->n_entries > 0 ? c->entries[c->n_entries - 1] : NULL;
}

/* Whether the plugin's disk cache served every graph of the newest entry. */
static bool entry_cache_hit(const tc_compiled *c) {
  const cap_entry *e = newest_entry(c);
  bool hit = e && e->n_segments > 0;
  for (int32_t s = 0; e && s < e->n_segments; s++)
    for (int32_t v = 0; v < e->segments[s].n_variants; v++)
      hit &= e->segments[s].variants[v]->cache_hit;
  return hit;
}

/* The generated source of every graph of the newest entry, headed by its name; NULL when the
 * backend exposes none. */
static char *entry_source(const tc_compiled *c) {
  const cap_entry *e = newest_entry(c);
  tck_str b = {0};
  bool any = false;
  for (int32_t s = 0; e && s < e->n_segments; s++)
    for (int32_t v = 0; v < e->segments[s].n_variants; v++) {
      const cap_variant *cv = e->segments[s].variants[v];
      const char *src = cv->lowered ? lowered_source(cv->lowered) : NULL;
      if (!src) continue;
      any = true;
      tck_str_printf(&b, "// graph %s\n%s\n", cv->graph.name, src);
    }
  char *text = tck_str_take(&b);
  if (!any) {
    free(text);
    return NULL;
  }
  return text;
}

/* Steady calls: warm-up, then timed calls until iters or the budget, one at least. */
static tc_status time_steady(const ab_run *run, ab_row *row) {
  const int warmup = run->o.warmup == 0 ? 3 : run->o.warmup < 0 ? 0 : run->o.warmup;
  const int iters = run->o.iters > 0 ? run->o.iters : 20;
  const double budget = run->o.budget_s > 0 ? run->o.budget_s : 2.0;
  double *t = malloc((size_t)iters * sizeof *t);
  if (!t) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  const double start = tc_now_seconds();
  int n = 0;
  tc_status s = TC_OK;
  for (int w = 0; w < warmup && tc_now_seconds() - start < budget / 2 && s == TC_OK; w++) {
    tc_tensor *y = call_synced(row->c, row->ins);
    s = y ? TC_OK : tc_last_status();
    tc_release(y);
  }
  while (s == TC_OK && n < iters && (n == 0 || tc_now_seconds() - start < budget)) {
    double t0 = tc_now_seconds();
    tc_tensor *y = call_synced(row->c, row->ins);
    t[n++] = tc_now_seconds() - t0;
    s = y ? TC_OK : tc_last_status();
    tc_release(y);
  }
  if (s == TC_OK) {
    row->r->median_s = tck_median(t, n); /* sorts t */
    row->r->n_calls = n;
    row->r->min_s = t[0];
    row->r->max_s = t[n - 1];
  }
  free(t);
  return s;
}

/* A second compile of the same function, in a compiled function of its own: what the caches
 * (the plugin's disk cache, the driver's) make of a compile seen before. */
static tc_status time_warm_compile(const ab_run *run, ab_row *row) {
  tc_compiled *c2 = compile_for(run, row->r->backend);
  tc_tensor *y = c2 ? call_synced(c2, row->ins) : NULL;
  tc_compile_stats st = {.struct_size = sizeof st};
  tc_status s = y ? tc_compiled_stats(c2, &st) : tc_last_status();
  if (s == TC_OK) {
    row->r->warm_compile_s = st.last_compile_seconds;
    row->r->warm_cache_hit = entry_cache_hit(c2);
  }
  tc_release(y);
  tc_compiled_free(c2);
  return s;
}

/* Runs the function on one backend: inputs copied there, compiled, first call, and (timed)
 * the steady calls and a warm compile. A failure is recorded in the row's result. */
static void run_row(const ab_run *run, const char *backend, bool timed, ab_row *row) {
  tc_ab_result *r = row->r;
  r->struct_size = sizeof *r;
  r->backend = strdup(backend);
  r->median_s = r->min_s = r->max_s = NAN;
  row->ins = calloc((size_t)run->n_inputs + 1, sizeof *row->ins);
  if (!r->backend || !row->ins) {
    core_error(TC_ERR_OUT_OF_MEMORY, "out of memory");
    row_fail(r, backend);
    return;
  }
  for (int i = 0; i < run->n_inputs; i++)
    if (!(row->ins[i] = tc_to_device(run->inputs[i], backend))) {
      char what[96];
      snprintf(what, sizeof what, "copying input %d to %s", i, backend);
      row_fail(r, what);
      return;
    }
  if (!(row->c = compile_for(run, backend))) {
    row_fail(r, "tc_compile");
    return;
  }
  double t0 = tc_now_seconds();
  row->out = call_synced(row->c, row->ins);
  r->first_call_s = tc_now_seconds() - t0;
  if (!row->out) {
    row_fail(r, "first call");
    return;
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  if (tc_compiled_stats(row->c, &st) == TC_OK) {
    r->cold_compile_s = st.last_compile_seconds;
    r->n_graphs = st.n_graphs;
    r->n_kernels = st.n_kernels;
  }
  r->cold_cache_hit = entry_cache_hit(row->c);
  r->source = entry_source(row->c);
  if (!timed) return;
  if (time_steady(run, row) != TC_OK)
    row_fail(r, "steady calls");
  else if (time_warm_compile(run, row) != TC_OK)
    row_fail(r, "warm compile");
}

static void row_compare(const ab_run *run, const ab_row *ref, ab_row *row) {
  tc_ab_result *r = row->r;
  if (r->status != TC_OK) return;
  double rtol, atol;
  ab_tolerance(tc_dtype_of(ref->out), &run->o, &rtol, &atol);
  ab_diff d;
  if (ab_diff_tensors(ref->out, row->out, rtol, atol, &d) != TC_OK) {
    row_fail(r, "comparing with the reference");
    return;
  }
  r->pass = d.pass;
  r->rtol = d.rtol;
  r->atol = d.atol;
  r->n_elements = d.n;
  r->n_failed = d.n_failed;
  r->max_abs_err = d.max_abs;
  r->max_rel_err = d.max_rel;
  r->max_ulp = d.max_ulp;
  r->nan_mismatches = d.nan_mismatches;
  r->inf_mismatches = d.inf_mismatches;
  r->n_nonfinite = d.n_nonfinite;
}

static void row_free(ab_row *row, int n_inputs) {
  tc_release(row->out);
  for (int i = 0; row->ins && i < n_inputs; i++)
    tc_release(row->ins[i]);
  free(row->ins);
  tc_compiled_free(row->c);
}

/* Each kernel of the plan compiled alone on the row's backend, for its source. A kernel that
 * does not compile alone gets a comment saying why instead. */
static void kernel_sources(const ab_plan *p, ab_row *row) {
  const int32_t nk = p->s->n_kernels;
  char **src = calloc((size_t)nk + 1, sizeof *src);
  if (!src) return;
  for (int32_t k = 0; k < nk; k++) {
    if (ab_plan_kernel_source(p, k, row->c, &src[k]) == TC_OK) continue;
    char msg[1280];
    snprintf(msg, sizeof msg, "// this kernel did not compile alone: %s\n", tc_last_error());
    src[k] = strdup(msg);
  }
  row->r->kernel_sources = (const char *const *)src;
  row->r->n_kernel_sources = nk;
}

/* A divergence that only carries a note (the bisector could not run). */
static tc_ab_divergence *divergence_note(const char *what) {
  tc_ab_divergence *d = calloc(1, sizeof *d);
  char msg[1280];
  snprintf(msg, sizeof msg, "%s: %s", what, tc_last_error());
  if (d) {
    d->struct_size = sizeof *d;
    d->kernel = -1;
    d->note = strdup(msg);
  }
  return d;
}

void tc_ab_report_free(tc_ab_report *rep) {
  if (!rep) return;
  for (int32_t i = 0; i < rep->n_results; i++) {
    tc_ab_result *r = (tc_ab_result *)&rep->results[i];
    free((char *)r->backend);
    free((char *)r->error);
    free((char *)r->source);
    ab_divergence_free((tc_ab_divergence *)r->divergence);
    for (int32_t k = 0; k < r->n_kernel_sources; k++)
      free((char *)r->kernel_sources[k]);
    free((void *)r->kernel_sources);
  }
  free((void *)rep->results);
  ab_kernels_free((tc_ab_kernel *)rep->kernels, rep->n_kernels);
  free((char *)rep->name);
  free((char *)rep->reference);
  free((char *)rep->output);
  free(rep);
}

/* Every bad argument is named; backends are checked by name before anything runs (an unknown
 * one lists the known ones; an unavailable one gets a row saying why). */
static tc_status check_args(tc_model_fn fn, int n_inputs, tc_tensor *const *inputs, const char *const *backends, int n,
                            const ab_run *run, tc_ab_report **report) {
  if (!report) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: report is NULL");
  if (!fn) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: fn is NULL");
  if (n_inputs < 0 || n_inputs > CAP_MAX_PARAMS)
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "tc_ab_compare: n_inputs is %d; functions of 0..%d tensors are supported", n_inputs,
                      CAP_MAX_PARAMS);
  if (n_inputs > 0 && !inputs) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: inputs is NULL");
  for (int i = 0; i < n_inputs; i++)
    if (!inputs[i]) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: input %d is NULL", i);
  if (!backends || n < 1)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: no backends to compare (n is %d)", backends ? n : 0);
  if (run->o.warmup > 1000000 || run->o.iters < 0 || run->o.iters > 1000000 || !(run->o.budget_s >= 0) ||
      !(run->o.rtol >= 0) || !(run->o.atol >= 0))
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "tc_ab_compare: options out of range (warmup %d, iters %d, budget_s %g, rtol %g, atol %g)",
                      (int)run->o.warmup, (int)run->o.iters, run->o.budget_s, run->o.rtol, run->o.atol);
  tc_options *parsed = options_parse(run->o.options);
  tc_status s = parsed ? options_validate(parsed, NULL) : tc_last_status();
  options_free(parsed);
  if (s != TC_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    return core_error(s, "tc_ab_compare: options: %s", msg);
  }
  for (int i = -1; i < n; i++) {
    const char *name = i < 0 ? run->o.reference : backends[i];
    if (!name) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: backend %d is NULL", i);
    if (backend_find(name, NULL) || (i >= 0 && tc_last_status() == TC_ERR_UNAVAILABLE)) continue;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    return core_error(tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INVALID_ARGUMENT, "tc_ab_compare: %s%s",
                      i < 0 ? "the reference: " : "", msg);
  }
  return TC_OK;
}

tc_status tc_ab_compare(tc_model_fn fn, int n_inputs, tc_tensor *const *inputs, const char *const *backends, int n,
                        const tc_ab_options *opts, tc_ab_report **report) {
  ab_run run = {.fn = fn, .n_inputs = n_inputs, .inputs = inputs, .o = {.struct_size = sizeof run.o}};
  if (opts) {
    /* An older caller's smaller struct leaves the newer fields at their defaults. */
    size_t have = opts->struct_size && opts->struct_size < sizeof run.o ? opts->struct_size : sizeof run.o;
    memcpy(&run.o, opts, have);
    run.o.struct_size = sizeof run.o;
  }
  if (!run.o.reference) run.o.reference = "debug-eager";
  if (!run.o.name || !run.o.name[0]) run.o.name = "fn";
  TC_RETURN_IF_ERROR(check_args(fn, n_inputs, inputs, backends, n, &run, report));
  *report = NULL;
  tc_ab_report *rep = calloc(1, sizeof *rep);
  tc_ab_result *results = calloc((size_t)n + 1, sizeof *results); /* + 1: the reference, when not listed */
  ab_row *rows = calloc((size_t)n + 1, sizeof *rows);
  if (!rep || !results || !rows) {
    free(rep);
    free(results);
    free(rows);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  }
  rep->struct_size = sizeof *rep;
  rep->name = strdup(run.o.name);
  rep->reference = strdup(run.o.reference);
  rep->results = results;
  rep->n_results = n;
  for (int i = 0; i <= n; i++)
    rows[i].r = &results[i];
  /* The reference runs first: its row when it is listed, else an untimed row of its own. */
  int ref = n;
  for (int i = 0; i < n && ref == n; i++)
    if (!strcmp(backends[i], run.o.reference)) ref = i;
  run_row(&run, run.o.reference, ref < n, &rows[ref]);
  tc_status s = TC_OK;
  if (results[ref].status != TC_OK)
    s = core_error(results[ref].status, "tc_ab_compare(%s): the reference, %s: %s", run.o.name, run.o.reference,
                   results[ref].error ? results[ref].error : "failed");
  for (int i = 0; i < n && s == TC_OK; i++) {
    if (i != ref) run_row(&run, backends[i], true, &rows[i]);
    row_compare(&run, &rows[ref], &rows[i]);
  }
  char out_str[128];
  if (s == TC_OK && !(rep->output = strdup(ab_tensor_str(rows[ref].out, out_str, sizeof out_str))))
    s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  /* The fused groups, and for each backend that disagrees (with bisect) where it diverges. */
  ab_plan plan;
  bool have_plan = s == TC_OK && ab_plan_open(rows[ref].c, &plan) == TC_OK;
  if (have_plan) {
    tc_ab_kernel *ks = NULL;
    int32_t nk = 0;
    if (ab_plan_describe(&plan, &ks, &nk) == TC_OK) rep->kernels = ks, rep->n_kernels = nk;
  }
  const char *plan_error = have_plan ? NULL : tc_last_error();
  char plan_msg[1024];
  snprintf(plan_msg, sizeof plan_msg, "%s", plan_error ? plan_error : "");
  for (int i = 0; i < n && s == TC_OK && run.o.bisect; i++) {
    if (results[i].status != TC_OK || results[i].pass) continue;
    tc_ab_divergence *d = NULL;
    if (!have_plan) {
      core_error(TC_ERR_UNSUPPORTED, "%s", plan_msg);
      d = divergence_note("bisect: no plan to run kernel by kernel");
    } else if (ab_bisect(&plan, rows[ref].c, rows[i].c, inputs, &run.o, &d) != TC_OK) {
      d = divergence_note("bisect failed");
    }
    results[i].divergence = d;
  }
  for (int i = 0; i < n && s == TC_OK && have_plan && run.o.kernel_sources; i++)
    if (results[i].status == TC_OK) kernel_sources(&plan, &rows[i]);
  if (have_plan) ab_plan_close(&plan);
  for (int i = 0; i <= n; i++)
    row_free(&rows[i], n_inputs);
  /* The unlisted reference's row is not reported. */
  free((char *)results[n].backend);
  free((char *)results[n].error);
  free((char *)results[n].source);
  free(rows);
  if (s != TC_OK) {
    tc_ab_report_free(rep);
    return s;
  }
  tc_error_clear(); /* failures of single backends live in their rows */
  *report = rep;
  return TC_OK;
}
